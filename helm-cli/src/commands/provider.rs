//! `1helm provider …`.

use std::collections::BTreeMap;

use anyhow::Result;
use helm_core::Error;
use helm_core::provider::{ApiKeyRef, ProviderConfig};

use super::Ctx;
use crate::cli::ProviderCommand;
use crate::exit;
use crate::output::table;

pub async fn run(ctx: &Ctx, cmd: ProviderCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        ProviderCommand::Add {
            name,
            kind,
            base_url,
            api_key_env,
            model,
            headers,
            default,
            replace,
        } => {
            let mut extra_headers = BTreeMap::new();
            for header in headers {
                let (k, v) = header.split_once('=').ok_or_else(|| {
                    Error::invalid("header", format!("{header:?} is not NAME=VALUE"))
                })?;
                extra_headers.insert(k.trim().to_string(), v.trim().to_string());
            }
            let config = ProviderConfig {
                name,
                kind: kind.parse()?,
                base_url: base_url.trim_end_matches('/').to_string(),
                api_key: api_key_env.map(|v| v.parse::<ApiKeyRef>()).transpose()?,
                default_model: model,
                extra_headers,
            };
            config.validate()?;
            let config = backend.add_provider(config, default, replace).await?;
            ctx.out.print(&config, || {
                let mut text = format!(
                    "Provider {} ({}) at {}",
                    config.name, config.kind, config.base_url
                );
                if let Some(m) = &config.default_model {
                    text.push_str(&format!(", default model {m}"));
                }
                if let Some(k) = &config.api_key {
                    text.push_str(&format!(", key from {k}"));
                }
                if default {
                    text.push_str(".\nIt is now the workspace's default model.");
                }
                text.push_str(&format!(
                    "\nCheck that it answers: 1helm provider check {}",
                    config.name
                ));
                text
            })?;
        }
        ProviderCommand::Check { name } => {
            let served = backend.provider_models(&name).await?;
            ctx.out.print(&served, || {
                if !served.listed {
                    return format!(
                        "{} answers, and keeps no list of models: a model is taken by the name \
                         given.",
                        served.provider
                    );
                }
                let ids: Vec<&str> = served.models.iter().map(|m| m.id.as_str()).collect();
                let mut text = format!(
                    "{} answers and serves {} model{}: {}",
                    served.provider,
                    ids.len(),
                    if ids.len() == 1 { "" } else { "s" },
                    ids.join(", ")
                );
                match (&served.default_model, served.default_served) {
                    (Some(model), Some(false)) => text.push_str(&format!(
                        "\nIts default model {model} is not among them: choose one it serves."
                    )),
                    (Some(model), _) => text.push_str(&format!("\nIts default model: {model}.")),
                    (None, _) => {}
                }
                text
            })?;
        }
        ProviderCommand::List => {
            let providers = backend.providers().await?;
            ctx.out.print(&providers, || {
                if providers.is_empty() {
                    return "No providers yet: add one with `1helm provider add NAME --kind openai \
                            --base-url URL --model MODEL --default`."
                        .to_string();
                }
                let rows: Vec<Vec<String>> = providers
                    .iter()
                    .map(|p| {
                        vec![
                            p.name.clone(),
                            p.kind.to_string(),
                            p.base_url.clone(),
                            p.default_model.clone().unwrap_or_else(|| "-".into()),
                            p.api_key
                                .as_ref()
                                .map(|k| k.to_string())
                                .unwrap_or_else(|| "-".into()),
                        ]
                    })
                    .collect();
                table(&["NAME", "KIND", "BASE URL", "MODEL", "KEY"], &rows)
            })?;
        }
    }
    Ok(exit::OK)
}

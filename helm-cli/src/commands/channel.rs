//! `1helm channel …`.

use anyhow::Result;
use helm_core::NewChannel;
use helm_core::model::{ChannelRef, ModelChoice, Visibility};
use helm_core::store::PolicyScope;
use helm_core::store::{ChannelFilter, ChannelRecord};
use serde_json::json;

use super::Ctx;
use crate::cli::ChannelCommand;
use crate::exit;
use crate::output::{clip, table};

pub async fn run(ctx: &Ctx, cmd: ChannelCommand) -> Result<i32> {
    let helm = ctx.open().await?;
    let actor = ctx.actor(&helm).await?;
    match cmd {
        ChannelCommand::Create {
            name,
            purpose,
            private,
        } => {
            let mut request = NewChannel::new(name, purpose);
            if private {
                request.visibility = Visibility::Private;
            }
            let record = helm.create_channel_with(&actor, request).await?;
            let dir = helm.data_root().world(record.channel.id).workspace();
            ctx.out.print(&with_dir(&record, &dir), || {
                format!(
                    "Created {} with its resident agent {} ({}), {}.\n\
                     Purpose:   {}\n\
                     Workspace: {}",
                    record.channel.name,
                    record.agent.handle,
                    record.agent.display_name,
                    record.agent.status,
                    record.channel.purpose,
                    dir.display()
                )
            })?;
        }
        ChannelCommand::List { all } => {
            let records = helm
                .channels(ChannelFilter {
                    include_archived: all,
                })
                .await?;
            ctx.out.print(&records, || {
                let rows: Vec<Vec<String>> = records
                    .iter()
                    .map(|r| {
                        vec![
                            r.channel.name.to_string(),
                            r.agent.handle.to_string(),
                            r.agent.status.to_string(),
                            r.channel.status.to_string(),
                            clip(&r.channel.purpose, 60),
                        ]
                    })
                    .collect();
                table(
                    &["CHANNEL", "AGENT", "AGENT STATUS", "STATUS", "PURPOSE"],
                    &rows,
                )
            })?;
        }
        ChannelCommand::Show { channel } => {
            let record = helm.channel(&channel.parse::<ChannelRef>()?).await?;
            let model = helm
                .resolve_model(&ChannelRef::Id(record.channel.id), None)
                .await?;
            let dir = helm.data_root().world(record.channel.id).workspace();
            let mut value = with_dir(&record, &dir);
            value["model"] = serde_json::to_value(&model)?;
            ctx.out.print(&value, || {
                let model = match &model {
                    Some(m) => format!(
                        "{}{} (from the {} setting)",
                        m.choice.provider,
                        m.choice
                            .model
                            .as_deref()
                            .map(|m| format!(" / {m}"))
                            .unwrap_or_default(),
                        m.level
                    ),
                    None => "none configured (add one with `1helm provider add`)".to_string(),
                };
                format!(
                    "{} ({}, {})\n\
                     Purpose:   {}\n\
                     Agent:     {} ({}, {})\n\
                     Model:     {model}\n\
                     Memory:    {}\n\
                     Workspace: {}\n\
                     Network:   {}",
                    record.channel.name,
                    record.channel.status,
                    record.channel.visibility,
                    record.channel.purpose,
                    record.agent.handle,
                    record.agent.display_name,
                    record.agent.status,
                    record.profile.memory_namespace,
                    dir.display(),
                    if record.profile.capability_policy.network {
                        "on"
                    } else {
                        "off"
                    },
                )
            })?;
        }
        ChannelCommand::Archive { channel } => {
            let record = helm
                .archive_channel(&actor, &channel.parse::<ChannelRef>()?)
                .await?;
            ctx.out.print(&record, || {
                format!(
                    "Archived {}; {} is paused. Everything is kept: `1helm channel restore {}` brings it back.",
                    record.channel.name,
                    record.agent.handle,
                    record.channel.name.as_str()
                )
            })?;
        }
        ChannelCommand::Restore { channel } => {
            let record = helm
                .restore_channel(&actor, &channel.parse::<ChannelRef>()?)
                .await?;
            ctx.out.print(&record, || {
                format!(
                    "Restored {} with {}, its workspace and memory.",
                    record.channel.name, record.agent.handle
                )
            })?;
        }
        ChannelCommand::SetModel {
            channel,
            provider,
            model,
            inherit,
        } => {
            let record = helm.channel(&channel.parse::<ChannelRef>()?).await?;
            let choice = match (inherit, provider) {
                (true, _) | (false, None) => None,
                (false, Some(p)) => {
                    // Refuse a provider that does not exist now rather than
                    // failing the channel's next turn.
                    if !helm.providers().await?.iter().any(|c| c.name == p) {
                        return Err(helm_core::Error::not_found("provider", &p).into());
                    }
                    Some(ModelChoice::new(p, model))
                }
            };
            helm.set_model_policy(&actor, PolicyScope::Channel(record.channel.id), choice)
                .await?;
            let resolved = helm
                .resolve_model(&ChannelRef::Id(record.channel.id), None)
                .await?;
            ctx.out.print(
                &json!({ "channel": record.channel, "model": resolved }),
                || match &resolved {
                    Some(m) => format!(
                        "{} is now served by {}{} ({} setting). Its agent {}, files, memory and \
                         history are unchanged.",
                        record.channel.name,
                        m.choice.provider,
                        m.choice
                            .model
                            .as_deref()
                            .map(|m| format!(" / {m}"))
                            .unwrap_or_default(),
                        m.level,
                        record.agent.handle
                    ),
                    None => format!("{} has no model configured.", record.channel.name),
                },
            )?;
        }
        ChannelCommand::Delete { channel, confirm } => {
            let target = channel.parse::<ChannelRef>()?;
            helm.delete_channel(&actor, &target, confirm.as_deref().unwrap_or(""))
                .await?;
            ctx.out.print(&json!({ "deleted": channel }), || {
                format!("Deleted {target} and its agent world for good.")
            })?;
        }
    }
    Ok(exit::OK)
}

fn with_dir(record: &ChannelRecord, dir: &std::path::Path) -> serde_json::Value {
    let mut value = serde_json::to_value(record).unwrap_or_default();
    value["workspace_dir"] = json!(dir.display().to_string());
    value
}

//! `1helm channel …`.

use anyhow::Result;
use helm_core::NewChannel;
use helm_core::model::{ModelChoice, Visibility};
use serde_json::json;

use super::Ctx;
use crate::backend::ChannelDetail;
use crate::cli::ChannelCommand;
use crate::exit;
use crate::output::{clip, table};

pub async fn run(ctx: &Ctx, cmd: ChannelCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        ChannelCommand::Create {
            name,
            purpose,
            private,
            computer,
        } => {
            let mut request = NewChannel::new(name, purpose);
            if private {
                request.visibility = Visibility::Private;
            }
            request.computer = computer;
            let detail = backend.create_channel(request).await?;
            let record = &detail.record;
            ctx.out.print(&with_dir(&detail), || {
                format!(
                    "Created {} with its resident agent {} ({}), {}.\n\
                     Purpose:   {}\n\
                     Workspace: {}",
                    record.channel.name,
                    record.agent.handle,
                    record.agent.display_name,
                    record.agent.status,
                    record.channel.purpose,
                    workspace(&detail)
                )
            })?;
        }
        ChannelCommand::List { all } => {
            let records = backend.channels(all).await?;
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
            let detail = backend.channel(&channel).await?;
            let (record, model) = (&detail.record, &detail.model);
            let mut value = with_dir(&detail);
            value["model"] = serde_json::to_value(model)?;
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
                    workspace(&detail),
                    if record.profile.capability_policy.network {
                        "on"
                    } else {
                        "off"
                    },
                )
            })?;
        }
        ChannelCommand::Archive { channel } => {
            let record = backend.archive(&channel).await?;
            ctx.out.print(&record, || {
                format!(
                    "Archived {}; {} is paused. Everything is kept: `1helm channel restore {}` brings it back.",
                    record.channel.name,
                    record.agent.handle,
                    record.channel.name.as_str()
                )
            })?;
        }
        ChannelCommand::Rename { channel, name } => {
            let record = backend.rename_channel(&channel, &name).await?;
            ctx.out.print(&record, || {
                format!(
                    "Renamed to {}; its agent is still {} with the same files, memory and history.",
                    record.channel.name, record.agent.handle
                )
            })?;
        }
        ChannelCommand::Restore { channel } => {
            let record = backend.restore(&channel).await?;
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
            let record = backend.channel(&channel).await?.record;
            let choice = match (inherit, provider) {
                (true, _) | (false, None) => None,
                (false, Some(p)) => Some(ModelChoice::new(p, model)),
            };
            let (resolved, check) = backend
                .set_channel_model(&record.channel.id.to_string(), choice)
                .await?;
            ctx.out.print(
                &json!({ "channel": record.channel, "model": resolved, "check": check }),
                || {
                    let checked = match &check {
                        Some(c) if c.verification == helm_core::Verification::Unverified => {
                            format!(
                                "\nUnverified: {}.",
                                c.note
                                    .as_deref()
                                    .unwrap_or("the provider did not confirm it")
                            )
                        }
                        _ => String::new(),
                    };
                    match &resolved {
                        Some(m) => format!(
                            "{} is now served by {}{} ({} setting). Its agent {}, files, memory \
                             and history are unchanged.{checked}",
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
                    }
                },
            )?;
        }
        ChannelCommand::Delete { channel, confirm } => {
            let target = channel.parse::<helm_core::model::ChannelRef>()?;
            backend
                .delete_channel(&channel, confirm.as_deref().unwrap_or(""))
                .await?;
            ctx.out.print(&json!({ "deleted": channel }), || {
                format!("Deleted {target} and its agent world for good.")
            })?;
        }
    }
    Ok(exit::OK)
}

fn with_dir(detail: &ChannelDetail) -> serde_json::Value {
    let mut value = serde_json::to_value(&detail.record).unwrap_or_default();
    if let Some(dir) = &detail.workspace_dir {
        value["workspace_dir"] = json!(dir);
    }
    value
}

fn workspace(detail: &ChannelDetail) -> String {
    if let Some(computer) = &detail.record.profile.capability_policy.computer {
        return format!("/workspace on the computer {computer}");
    }
    detail
        .workspace_dir
        .as_deref()
        .unwrap_or("on the server (shown to the Captain and admins)")
        .to_string()
}

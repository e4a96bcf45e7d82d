//! Skipper and a channel's lifecycle: `archive_channel {channel}` and
//! `delete_channel {channel, confirm}`, each one argument type and one
//! function, acting through the authority service for the person who asked:
//! archiving needs someone who manages the channel; deleting needs the
//! channel archived, its name repeated as `confirm`, and the Captain's (or
//! an admin's) approval given by hand (even to one of them asking) unless the
//! approval policy says deletions need none, and it is done as whoever
//! approved it. Neither acts
//! on the channel the call itself is in, since that would end the very turn
//! doing it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::target_to_act;
use crate::error::Result;
use crate::model::{Approval, ApprovalAction, ChannelName, ChannelStatus, User};
use crate::store::ChannelRecord;
use crate::tool::context::Decision;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ArchiveArgs {
    /// The channel to archive.
    channel: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    /// The archived channel to delete.
    channel: String,
    /// The channel's name, again, to confirm the deletion.
    confirm: String,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "archive_channel",
            "Archive a channel for the person asking (they must manage it): its agent pauses, \
             its queued and running work is cancelled, and everything is kept for a restore.",
            ApprovalClass::None,
            archive_channel,
        )),
        Arc::new(TypedTool::new(
            "delete_channel",
            "Delete an archived channel for good: its agent, workspace, memory and history. \
             `confirm` must repeat the channel's name. It waits for the Captain or an admin to \
             approve it by hand, even when they asked for it.",
            ApprovalClass::PerCall,
            delete_channel,
        )),
    ]
}

/// The channel a lifecycle tool may act on, with the person asking; or
/// the refusal to return.
async fn lifecycle_target(
    cx: &ToolContext<'_>,
    name: &str,
    verb: &str,
) -> Result<std::result::Result<(ChannelRecord, User), ToolOutput>> {
    let record = target_to_act(cx, Some(name)).await?;
    if record.channel.id == cx.channel_id() {
        return Ok(Err(ToolOutput::denied(format!(
            "this call is in {}; {verb} it from here would end this very turn. Ask for it from \
             #main, or a person can do it by hand",
            record.channel.name
        ))));
    }
    let Some(person) = cx.person() else {
        return Ok(Err(ToolOutput::denied(format!(
            "only a person can have a channel {verb}"
        ))));
    };
    Ok(Ok((record, person.clone())))
}

async fn archive_channel(cx: &ToolContext<'_>, args: ArchiveArgs) -> Result<ToolOutput> {
    let (record, person) = match lifecycle_target(cx, &args.channel, "archiving").await? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let archived = cx
        .authority()
        .archive_channel(cx.rt(), &person, &record)
        .await?;
    let done = format!(
        "archived {} for {}; {} is paused and everything is kept",
        archived.channel.name, person.name, archived.agent.handle
    );
    cx.note(format!("@skipper {done}.")).await?;
    Ok(ToolOutput::ok(done.clone(), done))
}

async fn delete_channel(cx: &ToolContext<'_>, args: DeleteArgs) -> Result<ToolOutput> {
    let (record, person) = match lifecycle_target(cx, &args.channel, "deleting").await? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let name = record.channel.name.as_str().to_string();
    let confirmed = ChannelName::parse(&args.confirm)
        .map(|c| c == record.channel.name)
        .unwrap_or(false);
    if !confirmed {
        return Ok(ToolOutput::error(format!(
            "deleting {} is for good; repeat its name to confirm: {{\"channel\": \"{name}\", \
             \"confirm\": \"{name}\"}}",
            record.channel.name
        )));
    }
    if record.channel.status != ChannelStatus::Archived {
        return Ok(ToolOutput::error(format!(
            "{} is active; archive it first (archive_channel), then delete it",
            record.channel.name
        )));
    }
    let summary = format!(
        "permanently delete {} with its agent {}, workspace, memory and history",
        record.channel.name, record.agent.handle
    );
    let reason = format!("{} asked for it in thread {}", person.name, cx.thread_id());
    let needed = cx
        .rt()
        .store
        .approval_required(record.channel.id, ApprovalAction::DeleteChannel)
        .await?;
    // A deletion is for good, and the model wrote `confirm` itself: unless a
    // rule says deletions need no approval, a person (the Captain or an
    // admin) approves it by hand, even when the one asking could approve
    // it. It is done as whoever approved it; without a rule asking for
    // approval, by the asker, whose own authority then decides.
    let actor = if needed {
        match cx
            .approval(ApprovalAction::DeleteChannel, summary, reason, true)
            .await?
        {
            Decision::Refused(refusal) => return Ok(refusal),
            Decision::Approved(Approval {
                decided_by: Some(id),
                ..
            }) if id != person.id => cx.authority().user(id).await?,
            Decision::Approved(_) => person.clone(),
        }
    } else {
        person.clone()
    };
    cx.authority()
        .delete_channel(cx.rt(), &actor, &record, &name)
        .await?;
    let done = format!(
        "deleted {} and its agent world for good, for {}",
        record.channel.name, person.name
    );
    cx.note(format!("@skipper {done}.")).await?;
    Ok(ToolOutput::ok(done.clone(), done))
}

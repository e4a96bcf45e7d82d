//! Skipper's tools for a channel's lifecycle: `archive_channel {channel}`
//! and `delete_channel {channel, confirm}`. Each is one argument type and one
//! function, acting through the facade with the authority of the person who
//! asked: archiving needs someone who manages the channel, deleting needs
//! the channel archived, its name repeated as `confirm`, and the Captain's
//! (or an admin's) approval unless the approval policy says otherwise or the
//! person asking is one. Neither acts on the channel the call itself is in,
//! since that would end the very turn doing it.

use serde::Deserialize;
use serde_json::json;

use super::skipper::{Gate, decide, facade, target};
use super::tools::{ToolContext, ToolOutcome, object, parse, spec};
use crate::error::Result;
use crate::model::{ApprovalAction, ChannelRef, ChannelStatus, User};
use crate::provider::{ToolCall, ToolSpec};
use crate::store::ChannelRecord;

/// `archive_channel`'s description for the model.
pub(super) fn archive_spec() -> ToolSpec {
    spec(
        "archive_channel",
        "Archive a channel for the person asking (they must manage it): its agent pauses, its \
         queued and running work is cancelled, and everything is kept for a restore.",
        object(json!({"channel": {"type": "string"}}), &["channel"]),
    )
}

/// `delete_channel`'s description for the model.
pub(super) fn delete_spec() -> ToolSpec {
    spec(
        "delete_channel",
        "Delete an archived channel for good: its agent, workspace, memory and history. \
         `confirm` must repeat the channel's name. Needs the Captain's approval unless the \
         person asking may give it.",
        object(
            json!({
                "channel": {"type": "string"},
                "confirm": {"type": "string", "description": "The channel's name, again."}
            }),
            &["channel", "confirm"],
        ),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArchiveArgs {
    channel: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    channel: String,
    confirm: String,
}

/// The channel a lifecycle tool may act on, or the refusal to return.
async fn lifecycle_target(
    ctx: &ToolContext,
    name: &str,
    verb: &str,
) -> Result<std::result::Result<(ChannelRecord, User), ToolOutcome>> {
    let record = target(ctx, Some(name)).await?;
    if record.channel.id == ctx.turn.channel_id {
        return Ok(Err(ToolOutcome::denied(format!(
            "this call is in {}; {verb} it from here would end this very turn. Ask for it from \
             #main, or a person can do it by hand",
            record.channel.name
        ))));
    }
    let Some(asker) = ctx.asker.clone() else {
        return Ok(Err(ToolOutcome::denied(format!(
            "only a person can have a channel {verb}"
        ))));
    };
    Ok(Ok((record, asker)))
}

/// Archives a channel for the person asking.
pub(super) async fn archive_channel(ctx: &ToolContext, call: &ToolCall) -> Result<ToolOutcome> {
    let args: ArchiveArgs = match parse(call, r#"{"channel": "launch"}"#) {
        Ok(a) => a,
        Err(e) => return Ok(e),
    };
    let (record, asker) = match lifecycle_target(ctx, &args.channel, "archiving").await? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let archived = facade(ctx)?
        .archive_channel(&asker, &ChannelRef::Id(record.channel.id))
        .await?;
    let done = format!(
        "archived {} for {}; {} is paused and everything is kept",
        archived.channel.name, asker.name, archived.agent.handle
    );
    ctx.rt
        .store
        .post_note(
            ctx.turn.channel_id,
            Some(ctx.turn.thread_id),
            format!("@skipper {done}."),
        )
        .await?;
    Ok(ToolOutcome::ok(done.clone(), done))
}

/// Deletes an archived channel for good, once confirmed by name and
/// approved.
pub(super) async fn delete_channel(ctx: &ToolContext, call: &ToolCall) -> Result<ToolOutcome> {
    let args: DeleteArgs = match parse(call, r#"{"channel": "launch", "confirm": "launch"}"#) {
        Ok(a) => a,
        Err(e) => return Ok(e),
    };
    let (record, asker) = match lifecycle_target(ctx, &args.channel, "deleting").await? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let name = record.channel.name.as_str().to_string();
    let confirmed = crate::model::ChannelName::parse(&args.confirm)
        .map(|c| c == record.channel.name)
        .unwrap_or(false);
    if !confirmed {
        return Ok(ToolOutcome::error(format!(
            "deleting {} is for good; repeat its name to confirm: {{\"channel\": \"{name}\", \
             \"confirm\": \"{name}\"}}",
            record.channel.name
        )));
    }
    if record.channel.status != ChannelStatus::Archived {
        return Ok(ToolOutcome::error(format!(
            "{} is active; archive it first (archive_channel), then delete it",
            record.channel.name
        )));
    }
    let summary = format!(
        "permanently delete {} with its agent {}, workspace, memory and history",
        record.channel.name, record.agent.handle
    );
    let reason = format!(
        "{} asked for it in thread {}",
        asker.name, ctx.turn.thread_id
    );
    let helm = facade(ctx)?;
    // The deletion is done by whoever approved it (the asker, when they
    // may approve it themselves); without a rule asking for approval, by
    // the asker, whose own authority then decides.
    let actor = match decide(ctx, &record, ApprovalAction::DeleteChannel, summary, reason).await? {
        Gate::Refused(refusal) => return Ok(refusal),
        Gate::NotNeeded | Gate::Approved { by: None } => asker.clone(),
        Gate::Approved { by: Some(id) } if id == asker.id => asker.clone(),
        Gate::Approved { by: Some(id) } => helm.store().user(id).await?,
    };
    helm.delete_channel(&actor, &ChannelRef::Id(record.channel.id), &name)
        .await?;
    let done = format!(
        "deleted {} and its agent world for good, for {}",
        record.channel.name, asker.name
    );
    ctx.rt
        .store
        .post_note(
            ctx.turn.channel_id,
            Some(ctx.turn.thread_id),
            format!("@skipper {done}."),
        )
        .await?;
    Ok(ToolOutcome::ok(done.clone(), done))
}

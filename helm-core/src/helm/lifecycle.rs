//! Archiving, restoring and deleting a channel: what the facade and
//! Skipper's authority both call, so the rules and the stopping of work are
//! stated once.
//!
//! Archiving stops the channel's agent: the store cancels its queued turns
//! in the archiving transaction (each with a note) and from then on starts
//! none; then the running turn is cancelled before its next step, its
//! running command killed, and this waits until it has ended, so that when
//! the archive answers nothing of the channel runs. Deleting does the same
//! for anything still live before its rows go.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::model::{Actor, ChannelKind, ChannelName, ChannelStatus, User};
use crate::runtime::Runtime;
use crate::store::{ChannelRecord, WorldHook};

use super::channels::may_manage;

/// How long archiving or deleting waits for the channel's running turn to
/// stop (its command killed) before it answers.
const CLOSE_WAIT: Duration = Duration::from_secs(15);

/// Archives or restores `record` for `actor`, who must manage it.
pub(crate) async fn change_status(
    rt: &Runtime,
    actor: &User,
    record: &ChannelRecord,
    status: ChannelStatus,
) -> Result<ChannelRecord> {
    may_manage(actor, record)?;
    let id = record.channel.id;
    rt.store
        .set_channel_status(id, status, Actor::user(actor))
        .await?;
    if status == ChannelStatus::Archived {
        let name = record.channel.name.to_string();
        rt.pause_channel(id, &name, Some(&actor.name)).await;
    }
    rt.mirror_profile(id).await
}

/// Permanently deletes an archived channel and its agent world (rows and
/// on-disk tree) for `actor`, the Captain or an admin. `confirm` must name
/// the channel.
pub(crate) async fn delete_channel(
    rt: &Runtime,
    actor: &User,
    record: &ChannelRecord,
    confirm: &str,
) -> Result<()> {
    if record.channel.kind == ChannelKind::Home {
        return Err(Error::Refused(format!(
            "{} is Skipper's home and cannot be deleted",
            record.channel.name
        )));
    }
    if !actor.role.is_admin() {
        return Err(Error::Forbidden(
            "only the Captain or an admin deletes a channel permanently".into(),
        ));
    }
    let confirmed = ChannelName::parse(confirm)
        .map(|c| c == record.channel.name)
        .unwrap_or(false);
    if !confirmed {
        return Err(Error::ConfirmationRequired {
            action: format!(
                "deleting {} removes its agent, workspace, memory and history for good",
                record.channel.name
            ),
            name: record.channel.name.as_str().to_string(),
        });
    }
    // Nothing of the channel may be running while its rows go.
    rt.close_channel(
        record.channel.id,
        &format!(
            "This turn was cancelled: {} was deleted.",
            record.channel.name
        ),
        CLOSE_WAIT,
    )
    .await;
    let root = rt.root.clone();
    let trashed = std::sync::Arc::new(std::sync::Mutex::new(None));
    let trashed_in_hook = trashed.clone();
    let world: WorldHook = Box::new(move |record| {
        let moved = root.trash(&root.world(record.channel.id))?;
        if let Ok(mut slot) = trashed_in_hook.lock() {
            *slot = moved;
        }
        Ok(())
    });
    let outcome = rt
        .store
        .delete_channel(record.channel.id, Actor::user(actor), world)
        .await;
    let moved = trashed.lock().ok().and_then(|mut slot| slot.take());
    if outcome.is_ok() {
        rt.embedder_tools.forget(record.channel.id);
        rt.mcp.close(record.channel.id, None).await;
    }
    match (outcome, moved) {
        (Ok(()), Some(path)) => {
            if let Err(e) = std::fs::remove_dir_all(&path) {
                // The rows are gone; the trash is swept at the next open.
                tracing::warn!(path = %path.display(), error = %e, "could not empty the trash");
            }
            Ok(())
        }
        (Ok(()), None) => Ok(()),
        (Err(e), Some(path)) => {
            // The transaction rolled back: put the world back where it was.
            let back = rt.root.world(record.channel.id);
            if let Err(undo) = std::fs::rename(&path, back.root()) {
                tracing::error!(from = %path.display(), error = %undo, "could not restore a world after a failed delete");
            }
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}

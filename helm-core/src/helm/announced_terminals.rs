//! Terminals opened by people, told to everyone in the channel: a
//! `terminal.opened` event when one opens and a `terminal.closed` event
//! when it ends (closed by someone, its shell exited, or the channel's
//! computer stopped), so other people's terminal views follow at once
//! instead of reading the list over and over.
//!
//! As with file changes, the terminal is what matters: an event that
//! could not be recorded is logged and the terminal stands.

use std::sync::{Arc, Weak};

use crate::events::EventBody;
use crate::exec::TerminalSession;
use crate::model::{ChannelId, User};
use crate::store::Store;

/// Records that `actor` opened `session` in `channel`, and, once its shell
/// ends, that it closed.
pub(super) async fn announce(
    store: &Arc<dyn Store>,
    channel: ChannelId,
    actor: &User,
    session: &Arc<TerminalSession>,
) {
    let by = match actor.display_name.trim() {
        "" => actor.name.clone(),
        name => name.to_string(),
    };
    let opened = EventBody::TerminalOpened {
        terminal_id: session.id(),
        user_id: actor.id,
        by,
    };
    record(store.as_ref(), channel, opened).await;
    // The watch holds the store weakly: a terminal left running must not
    // keep a closed workspace's store (and its data directory) alive.
    let store = Arc::downgrade(store);
    let session = session.clone();
    tokio::spawn(async move { announce_end(store, channel, session).await });
}

async fn announce_end(store: Weak<dyn Store>, channel: ChannelId, session: Arc<TerminalSession>) {
    let exit_code = session.ended().await;
    let Some(store) = store.upgrade() else {
        return;
    };
    let closed = EventBody::TerminalClosed {
        terminal_id: session.id(),
        exit_code,
        closed_by: session.closed_by(),
    };
    record(store.as_ref(), channel, closed).await;
}

async fn record(store: &dyn Store, channel: ChannelId, body: EventBody) {
    let kind = body.type_name();
    if let Err(e) = store.record_event(Some(channel), body).await {
        tracing::warn!(%channel, error = %e, "could not record {kind}");
    }
}

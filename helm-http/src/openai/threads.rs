//! Which thread a chat completion goes on in, and whether it asks again:
//! OpenAI's clients resend the whole chat and know nothing of threads, so
//! the thread is found from what they send.

use helm_core::model::{Author, ChannelRef, ThreadId, TurnState, User};

use super::{RequestMessage, text_of};
use crate::state::AppState;

/// The thread a resent chat continues: the one whose latest agent reply is
/// the history's last assistant message, among the caller's recent threads
/// of the channel.
pub(super) async fn continued_thread(
    state: &AppState,
    user: &User,
    channel: helm_core::model::ChannelId,
    messages: &[RequestMessage],
) -> Option<ThreadId> {
    let last_reply = messages.iter().rev().find(|m| m.role == "assistant")?;
    let wanted = text_of(&last_reply.content);
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return None;
    }
    let threads = state
        .helm
        .threads(&ChannelRef::Id(channel), 50)
        .await
        .ok()?;
    for thread in threads {
        let Ok(messages) = state.helm.thread_messages(thread.id).await else {
            continue;
        };
        let asked = messages
            .iter()
            .any(|m| matches!(&m.author, Author::Human { user_id, .. } if *user_id == user.id));
        let latest = messages
            .iter()
            .rev()
            .find(|m| matches!(m.author, Author::Agent { .. }) && !m.content.trim().is_empty());
        if asked && latest.is_some_and(|m| m.content.trim() == wanted) {
            return Some(thread.id);
        }
    }
    None
}

/// Whether sending `text` in `thread` asks again after its last turn failed
/// on this caller's latest message there, the same text: a client resending
/// (a person's "regenerate", or `X-Helm-Thread` with the same chat), once
/// or again after a retry that failed too. The failed turn is then run
/// again rather than the message posted a second time.
pub(super) async fn asks_again(
    state: &AppState,
    user: &User,
    thread: ThreadId,
    text: &str,
) -> bool {
    let Ok(turns) = state.helm.thread_turns(thread).await else {
        return false;
    };
    if turns.last().is_none_or(|t| t.state != TurnState::Failed) {
        return false;
    }
    let Ok(messages) = state.helm.thread_messages(thread).await else {
        return false;
    };
    let latest = messages
        .iter()
        .rev()
        .find(|m| matches!(m.author, Author::Human { .. }));
    // The message as posted may have gained the agent's @handle in front.
    latest.is_some_and(|m| {
        matches!(&m.author, Author::Human { user_id, .. } if *user_id == user.id)
            && m.content.trim().ends_with(text.trim())
    })
}

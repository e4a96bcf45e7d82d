//! Talking to a channel's agent and waiting for its answer: what Helm's MCP
//! server (`send_message`) and its OpenAI-compatible endpoint do. A message
//! is posted as the person, addressed to the channel's resident agent
//! (Skipper in `#main`), and the thread's turns are followed to their end,
//! passing on text as it streams. A turn that stops to wait for an approval
//! ends the conversation there, with a note that says what waits and where.
//! A conversation whose turn failed can be had again ([`Helm::converse_again`]):
//! the failed turn runs anew on the same message, which is not posted twice.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::events::Follower;
use crate::model::{Approval, ChannelRef, MessageId, ThreadId, TurnId, TurnState, User};
use crate::provider::Usage;
use crate::runtime::follow::{Follow, Followed};
use crate::runtime::wake::addressed;

use super::Helm;

/// What happened while waiting, as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConversationUpdate {
    /// The message was posted: the thread it is in.
    Started {
        /// The thread.
        thread: ThreadId,
        /// The posted message.
        message: MessageId,
    },
    /// More of an agent's reply.
    Text {
        /// The text to append.
        text: String,
    },
    /// An agent started a tool call.
    Tool {
        /// The tool's name.
        name: String,
        /// A short account of its input.
        summary: String,
    },
}

/// How a conversation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The thread it happened in (pass it to continue).
    pub thread: ThreadId,
    /// The message that was posted.
    pub message: MessageId,
    /// The agents' replies, in order (an agent, Skipper called in, the
    /// agent again…), joined; plus a note when something waits for a person.
    pub reply: String,
    /// How the last turn ended (`None`: still running when the wait ended).
    pub state: Option<TurnState>,
    /// Why the last turn failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Approvals the turn waits for, if it stopped for one.
    pub waiting_for: Vec<Approval>,
    /// The tokens the turns' model calls used, summed; `None` unless every
    /// turn has ended and its provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl Helm {
    /// Posts `text` in `channel` as `actor` (in `thread`, or a new one),
    /// addressed to the channel's agent, and waits up to `timeout` for the
    /// thread's turns to end, calling `on_update` with text as it streams.
    /// Returns early when a turn waits for an approval.
    pub async fn converse(
        &self,
        actor: &User,
        channel: &ChannelRef,
        text: &str,
        thread: Option<ThreadId>,
        timeout: Duration,
        mut on_update: impl FnMut(ConversationUpdate) + Send,
    ) -> Result<Conversation> {
        let record = self.visible_channel(actor, channel).await?;
        if let Some(id) = thread {
            let (found, _) = self.visible_thread(actor, id).await?;
            if found.channel_id != record.channel.id {
                return Err(Error::not_found("thread", id));
            }
        }
        let addressed = addressed(text, &record.agent.handle)?;
        // Follow the durable event log from here, so nothing the post sets
        // off is missed, however busy the process.
        let from = self.inner.store.event_head().await?;
        let feed = self.follow(from).await?;
        let posted = self
            .post_message(
                actor,
                &ChannelRef::Id(record.channel.id),
                &addressed,
                thread,
            )
            .await?;
        let thread = posted.thread.id;
        let since = posted.message.id;
        on_update(ConversationUpdate::Started {
            thread,
            message: since,
        });
        // The post can wake more than the resident: Skipper when it is
        // called, the resident again after Skipper settles the call.
        let mut follow = Follow::new(thread, record.agent.id, record.agent.handle.clone());
        if let Some(turn) = &posted.turn {
            follow.admit(turn);
        }
        let waiting_for = wait(feed, follow, timeout, &mut on_update).await?;
        self.conversation(thread, Since::Message(since), since, waiting_for)
            .await
    }

    /// Runs the failed (or interrupted) last turn of `thread` again as
    /// `actor` ([`Helm::retry_thread`]) and waits for it as [`Helm::converse`]
    /// does: what a client does after a conversation failed (its model was
    /// unreachable, say), without posting its message a second time.
    /// `Started` (and the answer's `message`) name Helm's note in the thread
    /// that asks the agent again.
    pub async fn converse_again(
        &self,
        actor: &User,
        thread: ThreadId,
        timeout: Duration,
        mut on_update: impl FnMut(ConversationUpdate) + Send,
    ) -> Result<Conversation> {
        let (_, record) = self.visible_thread(actor, thread).await?;
        let from = self.inner.store.event_head().await?;
        let feed = self.follow(from).await?;
        let turn = self.retry_thread(actor, thread).await?;
        on_update(ConversationUpdate::Started {
            thread,
            message: turn.trigger_message_id,
        });
        let mut follow = Follow::new(thread, record.agent.id, record.agent.handle.clone());
        follow.admit(&turn);
        let waiting_for = wait(feed, follow, timeout, &mut on_update).await?;
        self.conversation(
            thread,
            Since::Turn(turn.id),
            turn.trigger_message_id,
            waiting_for,
        )
        .await
    }

    /// The replies in `thread` to the turns from `since` on.
    async fn conversation(
        &self,
        thread: ThreadId,
        since: Since,
        message: MessageId,
        waiting_for: Vec<Approval>,
    ) -> Result<Conversation> {
        let turns = self.thread_turns(thread).await?;
        let ours: Vec<_> = turns
            .into_iter()
            .filter(|t| match since {
                Since::Message(id) => t.trigger_message_id >= id,
                Since::Turn(id) => t.id >= id,
            })
            .collect();
        let mut parts = Vec::new();
        for turn in &ours {
            let reply = self.inner.store.message(turn.reply_message_id).await?;
            if !reply.content.trim().is_empty() {
                parts.push(reply.content.trim().to_string());
            }
            if turn.state == TurnState::Failed {
                parts.push(format!(
                    "(The turn failed: {})",
                    turn.error.as_deref().unwrap_or("no reason given")
                ));
            }
        }
        for approval in &waiting_for {
            parts.push(format!(
                "This is waiting for the Captain's approval (request {id}): {summary}. It can be \
                 approved or denied in Helm (thread {thread}); the agent goes on once it is decided.",
                id = approval.id,
                summary = approval.summary,
            ));
        }
        let state = ours.last().map(|t| t.state).filter(|s| s.is_final());
        let usage = if ours.is_empty() {
            None
        } else {
            ours.iter().try_fold(Usage::default(), |sum, turn| {
                turn.usage.map(|u| Usage {
                    input_tokens: sum.input_tokens + u.input_tokens,
                    output_tokens: sum.output_tokens + u.output_tokens,
                })
            })
        };
        let error = ours
            .last()
            .filter(|t| t.state == TurnState::Failed)
            .map(|t| t.error.clone().unwrap_or_else(|| "no reason given".into()));
        if state.is_none() && waiting_for.is_empty() && !ours.is_empty() {
            parts.push(format!(
                "(Still working; the rest will be in thread {thread}.)"
            ));
        }
        Ok(Conversation {
            thread,
            message,
            reply: parts.join("\n\n"),
            state,
            error,
            waiting_for,
            usage,
        })
    }
}

/// Where a conversation's turns begin: those answering the posted message
/// and after, or (had again) the turn run anew and after.
#[derive(Clone, Copy)]
enum Since {
    Message(MessageId),
    Turn(TurnId),
}

/// Follows the conversation's turns until the last ends, one waits for an
/// approval, or `timeout` passes, passing on text and tool calls as they
/// come; returns the approvals waited for.
async fn wait(
    mut feed: Follower,
    mut follow: Follow,
    timeout: Duration,
    on_update: &mut (impl FnMut(ConversationUpdate) + Send),
) -> Result<Vec<Approval>> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut waiting_for = Vec::new();
    while follow.finished().is_none() && waiting_for.is_empty() {
        let Ok(event) = tokio::time::timeout_at(deadline, feed.next()).await else {
            break;
        };
        for step in follow.absorb(event?.body.clone()) {
            match step {
                Followed::Text { text, .. } => on_update(ConversationUpdate::Text { text }),
                Followed::ToolStarted(action) => on_update(ConversationUpdate::Tool {
                    name: action.tool,
                    summary: action.input_summary,
                }),
                Followed::ApprovalRequested(approval) => waiting_for.push(approval),
                _ => {}
            }
        }
    }
    Ok(waiting_for)
}

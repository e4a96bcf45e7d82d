//! One turn, followed from the post to its end: the engine behind
//! `channel.ask` (collect) and `channel.stream` (yield as it happens).
//!
//! The event feed is opened before the message is posted, so nothing the
//! post causes can be missed; core's follower (`helm_core::runtime::follow`)
//! keeps the turns the post led to, and this module shows its steps as the
//! Python event classes.

use std::sync::{Arc, Mutex};

use helm_core::ErrorKind;
use helm_core::model::{Thread, ThreadId};
use helm_core::provider::Usage;
use helm_core::runtime::follow::{Ended, Follow, Followed};
use helm_core::runtime::wake::addressed;

use crate::backend::SharedBackend;
use crate::errors::{Result, failure};
use crate::records::{Approval, Model, ToolAction};

/// What happens during a turn, as the Python event classes carry it.
#[derive(Clone)]
pub enum TurnEvent {
    /// More of an agent's reply.
    TextDelta {
        /// The text.
        text: String,
        /// The writing agent's handle.
        agent: String,
    },
    /// An agent started a tool call.
    ToolCall(ToolAction),
    /// A tool call finished.
    ToolResult(ToolAction),
    /// An action waits for the Captain's (or an admin's) approval.
    ApprovalRequested(Approval),
    /// Skipper was called into the thread.
    SkipperCalled {
        /// Why.
        reason: String,
        /// The escalation's id.
        escalation_id: i64,
    },
    /// A turn ended.
    TurnEnded(TurnOutcome),
}

/// How one turn ended.
#[derive(Clone)]
pub struct TurnOutcome {
    /// The turn.
    pub turn_id: i64,
    /// The agent's handle.
    pub agent: String,
    /// `completed`, `waiting`, `failed`, `stopped`, `cancelled`, `interrupted`.
    pub state: String,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Its reply's final text.
    pub text: String,
    /// The model that served it.
    pub model: Option<Model>,
}

/// The whole run, once it ended.
#[derive(Clone)]
pub struct RunResult {
    /// The last turn's reply.
    pub text: String,
    /// The thread, as it is now.
    pub thread: Thread,
    /// The model that served the last turn.
    pub model: Option<Model>,
    /// Every tool call of the run, in order.
    pub actions: Vec<ToolAction>,
    /// The last turn's end state.
    pub state: String,
    /// The last turn.
    pub turn_id: i64,
    /// Why the last turn failed, if it did.
    pub error: Option<String>,
    /// The approvals the run stopped at (`ask`), which someone who may
    /// decide them has to give before the agent goes on.
    pub waiting_for: Vec<i64>,
    /// The tokens of every turn of the run, summed; `None` when a turn did
    /// not end (the run stopped at an approval) or its provider reported none.
    pub usage: Option<Usage>,
}

/// How far a run is followed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// To the end of its last turn (a stream, whose reader sees approvals
    /// asked and may give them).
    End,
    /// To its end, or to the first approval asked (`ask`, which cannot give
    /// one while it waits): the agent waits for a person then, not for work.
    EndOrApproval,
}

/// The thread a run posted in, once known (to stop it on Ctrl-C).
pub type ThreadSlot = Arc<Mutex<Option<ThreadId>>>;

/// What sets a run off.
pub enum Start {
    /// A message for the resident agent (addressed to it if it does not
    /// name it).
    Ask(String),
    /// Running the thread's failed last turn again.
    Retry,
}

/// Posts a message in `channel` (in `thread`, or a new one), or runs
/// `thread`'s failed turn again, and follows the turns that sets off until
/// the last one ends, handing each event to `sink`.
pub async fn run(
    backend: SharedBackend,
    channel: String,
    start: Start,
    thread: Option<ThreadId>,
    slot: ThreadSlot,
    until: Until,
    mut sink: impl FnMut(TurnEvent) + Send,
) -> Result<RunResult> {
    let record = backend.channel(&channel).await?;
    let resident = record.agent.id;
    let handle = record.agent.handle.clone();
    backend.drive_turns().await?;
    let mut feed = backend.events().await?;
    let (thread_id, first, escalated) = match (start, thread) {
        (Start::Ask(text), _) => {
            let posted = backend
                .post(&channel, &addressed(&text, &handle)?, thread)
                .await?;
            (posted.thread.id, posted.turn, posted.escalation.is_some())
        }
        (Start::Retry, Some(thread)) => (thread, Some(backend.retry_thread(thread).await?), false),
        (Start::Retry, None) => {
            return Err(failure(
                ErrorKind::Internal,
                "internal",
                "a retry names its thread",
            ));
        }
    };
    if let Ok(mut s) = slot.lock() {
        *s = Some(thread_id);
    }
    let mut follow = Follow::new(thread_id, resident, handle.clone());
    if let Some(turn) = &first {
        follow.admit(turn);
    }
    if first.is_none() && !escalated {
        return Err(failure(
            ErrorKind::Refused,
            "not_woken",
            format!(
                "the message was posted in thread {thread_id}, but it woke no agent; \
                 mention {handle} to ask it something"
            ),
        ));
    }
    let mut actions = Vec::new();
    let mut waiting_for = Vec::new();
    let mut usage = Some(Usage::default());
    let last = loop {
        let event = feed.next().await?;
        let mut asked = None;
        for step in follow.absorb(event.body) {
            if let Followed::Ended(ended) = &step {
                usage = usage.zip(ended.turn.usage).map(|(sum, u)| Usage {
                    input_tokens: sum.input_tokens + u.input_tokens,
                    output_tokens: sum.output_tokens + u.output_tokens,
                });
            }
            if let Followed::ApprovalRequested(approval) = &step {
                asked = approval.turn_id.map(|turn| (approval.id, turn));
            }
            if let Some(out) = python_event(step, &mut actions) {
                sink(out);
            }
        }
        if let Some(last) = follow.finished() {
            break outcome(last.clone());
        }
        if until == Until::EndOrApproval
            && let Some((approval, turn)) = asked
        {
            waiting_for.push(approval);
            usage = None;
            break TurnOutcome {
                turn_id: turn.0,
                agent: follow
                    .agent_of(turn)
                    .map(|h| h.to_string())
                    .unwrap_or_default(),
                state: "waiting".into(),
                error: None,
                text: follow.text_so_far(turn),
                model: None,
            };
        }
    };
    let thread = backend.thread(thread_id).await?;
    Ok(RunResult {
        text: last.text,
        thread,
        model: last.model,
        actions,
        state: last.state,
        turn_id: last.turn_id,
        error: last.error,
        waiting_for,
        usage,
    })
}

/// A step of the core follower, in the Python classes' terms (`None` for
/// the steps Python does not show: a turn starting, Helm's notes).
fn python_event(step: Followed, actions: &mut Vec<ToolAction>) -> Option<TurnEvent> {
    Some(match step {
        Followed::Text { agent, text, .. } => TurnEvent::TextDelta {
            text,
            agent: agent.to_string(),
        },
        Followed::ToolStarted(action) => TurnEvent::ToolCall(action.into()),
        Followed::ToolFinished(action) => {
            let action: ToolAction = action.into();
            actions.push(action.clone());
            TurnEvent::ToolResult(action)
        }
        Followed::ApprovalRequested(approval) => TurnEvent::ApprovalRequested(approval.into()),
        Followed::SkipperCalled(escalation) => TurnEvent::SkipperCalled {
            reason: escalation.reason,
            escalation_id: escalation.id.0,
        },
        Followed::Ended(ended) => TurnEvent::TurnEnded(outcome(ended)),
        Followed::Started { .. } | Followed::Note(_) => return None,
    })
}

/// How a turn ended, as Python's `TurnEnded` carries it.
fn outcome(ended: Ended) -> TurnOutcome {
    TurnOutcome {
        turn_id: ended.turn.id.0,
        agent: ended.agent.to_string(),
        state: ended.turn.state.as_str().to_string(),
        error: ended.turn.error,
        text: ended.text,
        model: ended.turn.served_by.map(Model::served),
    }
}

//! One turn, followed from the post to its end: the engine behind
//! `channel.ask` (collect) and `channel.stream` (yield as it happens).
//!
//! The event feed is opened before the message is posted, so nothing the
//! post causes can be missed. The follower keeps the set of turns running or
//! queued in the thread: the one the post admitted, and any it leads to (a
//! call for Skipper queues Skipper's turn, whose resolution wakes the
//! resident again). The run ends when that set is empty.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use helm_core::ErrorKind;
use helm_core::events::EventBody;
use helm_core::model::{
    AgentId, ApprovalStatus, EscalationStatus, Handle, MessageId, Thread, ThreadId, Turn, TurnId,
    TurnState,
};
use helm_core::runtime::wake::mentions_handle;

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
}

/// The thread a run posted in, once known (to stop it on Ctrl-C).
pub type ThreadSlot = Arc<Mutex<Option<ThreadId>>>;

/// Addresses the resident agent unless the text names it or Skipper.
fn addressed(text: &str, resident: &Handle) -> String {
    if mentions_handle(text, resident) || mentions_handle(text, &Handle::skipper()) {
        text.to_string()
    } else {
        format!("{resident} {text}")
    }
}

/// Posts `text` in `channel` (in `thread`, or a new one) and follows the
/// turns it causes until the last one ends, handing each event to `sink`.
pub async fn run(
    backend: SharedBackend,
    channel: String,
    text: String,
    thread: Option<ThreadId>,
    slot: ThreadSlot,
    mut sink: impl FnMut(TurnEvent) + Send,
) -> Result<RunResult> {
    let record = backend.channel(&channel).await?;
    let resident = record.agent.id;
    let handle = record.agent.handle.clone();
    backend.drive_turns().await?;
    let mut feed = backend.events().await?;
    let posted = backend
        .post(&channel, &addressed(&text, &handle), thread)
        .await?;
    let thread_id = posted.thread.id;
    if let Ok(mut s) = slot.lock() {
        *s = Some(thread_id);
    }
    let mut follow = Follow::new(thread_id, resident, handle.to_string());
    if let Some(turn) = &posted.turn {
        follow.admit(turn);
    }
    if posted.turn.is_none() && posted.escalation.is_none() {
        return Err(failure(
            ErrorKind::Refused,
            "not_woken",
            format!(
                "the message was posted in thread {thread_id}, but it woke no agent; \
                 mention {handle} to ask it something"
            ),
        ));
    }
    let last = loop {
        let event = feed.next().await?;
        for out in follow.absorb(event.body) {
            sink(out);
        }
        if let Some(last) = follow.finished() {
            break last;
        }
    };
    let thread = backend.thread(thread_id).await?;
    Ok(RunResult {
        text: last.text,
        thread,
        model: last.model,
        actions: follow.actions,
        state: last.state,
        turn_id: last.turn_id,
        error: last.error,
    })
}

/// The follower's state: which turns are live, what their replies say.
struct Follow {
    thread: ThreadId,
    resident: AgentId,
    resident_handle: String,
    live: BTreeSet<TurnId>,
    replies: HashMap<MessageId, TurnId>,
    agents: HashMap<TurnId, AgentId>,
    texts: HashMap<MessageId, String>,
    seen_turn: bool,
    last: Option<TurnOutcome>,
    actions: Vec<ToolAction>,
}

impl Follow {
    fn new(thread: ThreadId, resident: AgentId, resident_handle: String) -> Self {
        Follow {
            thread,
            resident,
            resident_handle,
            live: BTreeSet::new(),
            replies: HashMap::new(),
            agents: HashMap::new(),
            texts: HashMap::new(),
            seen_turn: false,
            last: None,
            actions: Vec::new(),
        }
    }

    fn agent(&self, id: AgentId) -> String {
        if id == self.resident {
            self.resident_handle.clone()
        } else {
            // Only Skipper acts in a channel besides its resident.
            Handle::skipper().to_string()
        }
    }

    fn admit(&mut self, turn: &Turn) {
        if turn.thread_id == self.thread && !turn.state.is_final() {
            self.seen_turn = true;
            self.live.insert(turn.id);
            self.replies.insert(turn.reply_message_id, turn.id);
            self.agents.insert(turn.id, turn.agent_id);
        }
    }

    /// Whether a turn is one this run follows (a turn that was already
    /// running in the thread before the post is not).
    fn ours(&self, turn: Option<TurnId>) -> bool {
        turn.is_some_and(|t| self.agents.contains_key(&t))
    }

    /// The run's last outcome, once no turn of it is live.
    fn finished(&self) -> Option<TurnOutcome> {
        if self.seen_turn && self.live.is_empty() {
            self.last.clone()
        } else {
            None
        }
    }

    fn absorb(&mut self, body: EventBody) -> Vec<TurnEvent> {
        let mut out = Vec::new();
        match body {
            EventBody::TurnQueued { turn, .. } | EventBody::TurnStarted { turn } => {
                self.admit(&turn);
            }
            EventBody::MessageDelta {
                message_id, text, ..
            } => {
                if let Some(turn) = self.replies.get(&message_id)
                    && self.live.contains(turn)
                {
                    let agent = match self.agents.get(turn) {
                        Some(id) => self.agent(*id),
                        None => self.resident_handle.clone(),
                    };
                    self.texts.entry(message_id).or_default().push_str(&text);
                    out.push(TurnEvent::TextDelta { text, agent });
                }
            }
            EventBody::MessageCompleted { message } if self.replies.contains_key(&message.id) => {
                self.texts.insert(message.id, message.content);
            }
            EventBody::ToolActionStarted { action } if self.ours(action.turn_id) => {
                out.push(TurnEvent::ToolCall(action.into()));
            }
            EventBody::ToolActionFinished { action } if self.ours(action.turn_id) => {
                let action: ToolAction = action.into();
                self.actions.push(action.clone());
                out.push(TurnEvent::ToolResult(action));
            }
            EventBody::ApprovalChanged { approval }
                if self.ours(approval.turn_id) && approval.status == ApprovalStatus::Pending =>
            {
                out.push(TurnEvent::ApprovalRequested(approval.into()));
            }
            EventBody::EscalationChanged { escalation }
                if escalation.thread_id == self.thread
                    && escalation.status == EscalationStatus::Open =>
            {
                out.push(TurnEvent::SkipperCalled {
                    reason: escalation.reason,
                    escalation_id: escalation.id.0,
                });
            }
            EventBody::TurnCompleted { turn }
            | EventBody::TurnFailed { turn }
            | EventBody::TurnCancelled { turn }
                if self.live.remove(&turn.id) =>
            {
                let outcome = TurnOutcome {
                    turn_id: turn.id.0,
                    agent: self.agent(turn.agent_id),
                    state: turn.state.as_str().to_string(),
                    error: turn.error.clone(),
                    text: self
                        .texts
                        .get(&turn.reply_message_id)
                        .cloned()
                        .unwrap_or_default(),
                    model: turn.served_by.clone().map(Model::served),
                };
                if turn.state == TurnState::Failed && outcome.error.is_none() {
                    tracing::debug!(turn = %turn.id, "a turn failed without saying why");
                }
                self.last = Some(outcome.clone());
                out.push(TurnEvent::TurnEnded(outcome));
            }
            _ => {}
        }
        out
    }
}

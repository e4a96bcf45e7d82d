//! Following what one post sets off, over the event feed: the engine behind
//! `1helm say` and Python's `channel.ask` / `channel.stream`.
//!
//! A post can wake more than one turn in its thread: the resident's, and
//! Skipper's when it calls `@skipper` (or when the resident calls Skipper
//! from its turn); Skipper resolving the call wakes the resident again. The
//! follower keeps the set of live turns of the thread and reports what they
//! do, in a frontend's own words, until that set is empty. The caller opens
//! the feed before posting, so nothing the post causes can be missed.

use std::collections::{BTreeSet, HashMap};

use crate::events::EventBody;
use crate::model::{
    AgentId, Approval, ApprovalStatus, Author, Escalation, EscalationStatus, Handle, Message,
    MessageId, ThreadId, ToolAction, Turn, TurnId, TurnState,
};

/// What a followed run did, one step at a time.
#[derive(Debug, Clone)]
pub enum Followed {
    /// A turn started work.
    Started {
        /// The turn, with the model that serves it.
        turn: Turn,
        /// The working agent's handle.
        agent: Handle,
    },
    /// More of an agent's reply.
    Text {
        /// The turn writing it.
        turn: TurnId,
        /// The writing agent's handle.
        agent: Handle,
        /// The new text.
        text: String,
    },
    /// An agent started a tool call.
    ToolStarted(ToolAction),
    /// A tool call finished.
    ToolFinished(ToolAction),
    /// An action waits for the Captain's (or an admin's) approval.
    ApprovalRequested(Approval),
    /// Skipper was called into the thread (or a reason was added to its
    /// open call).
    SkipperCalled(Escalation),
    /// Helm wrote a note in the thread (a call for Skipper, an approval, an
    /// interrupted turn).
    Note(Message),
    /// A turn ended.
    Ended(Ended),
}

/// How one followed turn ended.
#[derive(Debug, Clone)]
pub struct Ended {
    /// The turn in its end state (`error` says why a failed one failed).
    pub turn: Turn,
    /// The agent's handle.
    pub agent: Handle,
    /// Its reply's final text.
    pub text: String,
}

/// The follower's state: the thread, its live turns and what their replies
/// say so far.
#[derive(Debug)]
pub struct Follow {
    thread: ThreadId,
    resident: AgentId,
    resident_handle: Handle,
    live: BTreeSet<TurnId>,
    replies: HashMap<MessageId, TurnId>,
    agents: HashMap<TurnId, AgentId>,
    texts: HashMap<MessageId, String>,
    seen_turn: bool,
    last: Option<Ended>,
}

impl Follow {
    /// Follows `thread` of a channel whose resident agent is `resident`.
    pub fn new(thread: ThreadId, resident: AgentId, resident_handle: Handle) -> Self {
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
        }
    }

    /// The thread followed.
    pub fn thread(&self) -> ThreadId {
        self.thread
    }

    /// Counts a turn of the thread that is not over yet as part of the run
    /// (the post's own turn, which its answer carries).
    pub fn admit(&mut self, turn: &Turn) {
        if turn.thread_id == self.thread && !turn.state.is_final() {
            self.seen_turn = true;
            self.live.insert(turn.id);
            self.replies.insert(turn.reply_message_id, turn.id);
            self.agents.insert(turn.id, turn.agent_id);
        }
    }

    /// The handle of the agent with this id.
    fn agent(&self, id: AgentId) -> Handle {
        if id == self.resident {
            self.resident_handle.clone()
        } else {
            // Only Skipper acts in a channel besides its resident.
            Handle::skipper()
        }
    }

    /// Whether a turn is one this run follows (a turn that was already
    /// running in the thread before the post is not).
    fn ours(&self, turn: Option<TurnId>) -> bool {
        turn.is_some_and(|t| self.agents.contains_key(&t))
    }

    /// The handle of the agent doing `turn`, if the run follows it.
    pub fn agent_of(&self, turn: TurnId) -> Option<Handle> {
        self.agents.get(&turn).map(|id| self.agent(*id))
    }

    /// What `turn`'s reply says so far.
    pub fn text_so_far(&self, turn: TurnId) -> String {
        self.replies
            .iter()
            .find(|(_, t)| **t == turn)
            .and_then(|(message, _)| self.texts.get(message))
            .cloned()
            .unwrap_or_default()
    }

    /// The run's last turn, once no turn of it is live.
    pub fn finished(&self) -> Option<&Ended> {
        if self.seen_turn && self.live.is_empty() {
            self.last.as_ref()
        } else {
            None
        }
    }

    /// Takes in one event of the feed; returns what it means for the run.
    pub fn absorb(&mut self, body: EventBody) -> Vec<Followed> {
        let mut out = Vec::new();
        match body {
            EventBody::TurnQueued { turn, .. } => self.admit(&turn),
            EventBody::TurnStarted { turn } => {
                self.admit(&turn);
                if self.live.contains(&turn.id) {
                    let agent = self.agent(turn.agent_id);
                    out.push(Followed::Started { turn, agent });
                }
            }
            EventBody::MessageDelta {
                message_id, text, ..
            } => {
                if let Some(&turn) = self.replies.get(&message_id)
                    && self.live.contains(&turn)
                {
                    let agent = self
                        .agent_of(turn)
                        .unwrap_or_else(|| self.resident_handle.clone());
                    self.texts.entry(message_id).or_default().push_str(&text);
                    out.push(Followed::Text { turn, agent, text });
                }
            }
            EventBody::MessageCompleted { message } if self.replies.contains_key(&message.id) => {
                self.texts.insert(message.id, message.content);
            }
            EventBody::MessageCreated { message }
                if message.author == Author::System && message.thread_id == Some(self.thread) =>
            {
                out.push(Followed::Note(message));
            }
            EventBody::ToolActionStarted { action } if self.ours(action.turn_id) => {
                out.push(Followed::ToolStarted(action));
            }
            EventBody::ToolActionFinished { action } if self.ours(action.turn_id) => {
                out.push(Followed::ToolFinished(action));
            }
            EventBody::ApprovalChanged { approval }
                if self.ours(approval.turn_id) && approval.status == ApprovalStatus::Pending =>
            {
                out.push(Followed::ApprovalRequested(approval));
            }
            EventBody::EscalationChanged { escalation }
                if escalation.thread_id == self.thread
                    && escalation.status == EscalationStatus::Open =>
            {
                out.push(Followed::SkipperCalled(escalation));
            }
            EventBody::TurnCompleted { turn }
            | EventBody::TurnFailed { turn }
            | EventBody::TurnCancelled { turn }
                if self.live.remove(&turn.id) =>
            {
                if turn.state == TurnState::Failed && turn.error.is_none() {
                    tracing::debug!(turn = %turn.id, "a turn failed without saying why");
                }
                let ended = Ended {
                    agent: self.agent(turn.agent_id),
                    text: self
                        .texts
                        .get(&turn.reply_message_id)
                        .cloned()
                        .unwrap_or_default(),
                    turn,
                };
                self.last = Some(ended.clone());
                out.push(Followed::Ended(ended));
            }
            _ => {}
        }
        out
    }
}

//! What a tool call works with: the turn's channel, thread, agent, the
//! person it runs for, the channel's computer, and [`ToolServices`], the
//! narrow handle on what tools may do. A tool never holds the facade: what
//! it can reach is what this module offers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::exec::{CommandResult, CommandSpec, Computer, ConfinedFs, Executor};
use crate::memory::recall::{RecallHit, RecallQuery};
use crate::model::{
    Agent, AgentKind, ApprovalAction, ApprovalStatus, ChannelId, ThreadId, Turn, User,
};
use crate::runtime::Runtime;
use crate::store::{ChannelRecord, NewApproval};

use super::authority::Authority;
use super::output::{ToolOutput, clip};

/// What tools may do beyond their own arguments, handed to every call. It
/// is deliberately small: the channel's computer, its memory, notes and
/// approvals in the thread. Skipper's wider powers are a separate, narrow
/// authority service that only Skipper's own tools reach.
pub struct ToolServices {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) executor: Arc<dyn Executor>,
}

impl ToolServices {
    pub(crate) fn new(rt: Arc<Runtime>, executor: Arc<dyn Executor>) -> Self {
        ToolServices { rt, executor }
    }

    /// Skipper's authority: cross-channel lookups, channel creation, model
    /// policy, for the person a turn runs for.
    pub(crate) fn authority(&self) -> &Authority {
        &self.rt.authority
    }
}

/// One tool call's world. Built by the turn engine; tools read it.
pub struct ToolContext<'a> {
    channel: &'a ChannelRecord,
    turn: &'a Turn,
    agent: &'a Agent,
    person: Option<&'a User>,
    computer: &'a Computer,
    services: &'a ToolServices,
}

impl<'a> ToolContext<'a> {
    pub(crate) fn new(
        channel: &'a ChannelRecord,
        turn: &'a Turn,
        agent: &'a Agent,
        person: Option<&'a User>,
        computer: &'a Computer,
        services: &'a ToolServices,
    ) -> Self {
        ToolContext {
            channel,
            turn,
            agent,
            person,
            computer,
            services,
        }
    }

    /// The channel the turn runs in, with its resident agent and policy.
    pub fn channel(&self) -> &ChannelRecord {
        self.channel
    }

    /// The channel's id.
    pub fn channel_id(&self) -> ChannelId {
        self.turn.channel_id
    }

    /// The thread (session) the call belongs to.
    pub fn thread_id(&self) -> ThreadId {
        self.turn.thread_id
    }

    /// The turn making the call.
    pub fn turn(&self) -> &Turn {
        self.turn
    }

    /// The agent calling: the channel's resident agent, or Skipper.
    pub fn agent(&self) -> &Agent {
        self.agent
    }

    /// The acting agent's handle, as `@launch-agent`.
    pub fn agent_handle(&self) -> String {
        self.agent.handle.to_string()
    }

    /// Whether the acting agent is Skipper.
    pub fn is_skipper(&self) -> bool {
        self.agent.kind == AgentKind::Skipper
    }

    /// The person whose message started this chain of work (the turn's
    /// audience): what the call reads or changes is what they may see.
    /// `None` when no person asked (a turn woken by an agent alone).
    pub fn person(&self) -> Option<&User> {
        self.person
    }

    /// The channel's computer: its `/workspace`, isolation and network.
    pub fn computer(&self) -> &Computer {
        self.computer
    }

    /// The file operations of the channel's workspace, confined to it.
    pub fn files(&self) -> ConfinedFs {
        ConfinedFs::new(self.computer)
    }

    /// Runs a command in the channel's computer.
    pub async fn run(&self, spec: CommandSpec) -> Result<CommandResult> {
        self.services.executor.run(self.computer, spec).await
    }

    /// Recalls from the channel's memory and history, with provenance.
    /// Records shared by a channel the person may not see are left out.
    pub async fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>> {
        let rt = &self.services.rt;
        let hits = rt.recall.recall(self.channel_id(), query).await?;
        let Some(person) = self.person else {
            return Ok(hits
                .into_iter()
                .filter(|h| h.channel_id == self.channel_id())
                .collect());
        };
        if person.role.is_admin() {
            return Ok(hits);
        }
        let visible = rt.store.visible_channel_ids(person.id).await?;
        Ok(hits
            .into_iter()
            .filter(|h| h.channel_id == self.channel_id() || visible.contains(&h.channel_id))
            .collect())
    }

    /// Posts a visible note in the thread (a system message).
    pub async fn note(&self, text: impl Into<String>) -> Result<()> {
        self.services
            .rt
            .store
            .post_note(self.channel_id(), Some(self.thread_id()), text.into())
            .await?;
        Ok(())
    }

    /// Asks for approval of one action in this thread and waits for the
    /// decision. When `explicit` is false and the person asking may approve
    /// it themselves (the Captain, an admin), it is approved at once, on the
    /// record. An undecided request is denied when it expires. Returns a
    /// refusal for the model when the action may not go ahead.
    pub async fn request_approval(
        &self,
        action: ApprovalAction,
        summary: impl Into<String>,
        reason: impl Into<String>,
        explicit: bool,
    ) -> Result<Option<ToolOutput>> {
        let rt = &self.services.rt;
        let self_approve = !explicit && self.person.is_some_and(|u| u.role.is_admin());
        let approval = rt
            .store
            .request_approval(NewApproval {
                channel_id: self.channel_id(),
                thread_id: Some(self.thread_id()),
                turn_id: Some(self.turn.id),
                agent_id: Some(self.turn.agent_id),
                agent_handle: Some(self.agent_handle()),
                asker_id: self.person.map(|u| u.id),
                action,
                summary: clip(&summary.into(), 500),
                reason: clip(&reason.into(), 1000),
                expires_in_ms: rt.options.approval_timeout.as_millis() as i64,
                approved_by: self_approve.then(|| self.person.map(|u| u.id)).flatten(),
            })
            .await?;
        let status = wait_for_decision(rt, approval.id).await?;
        Ok(match status {
            ApprovalStatus::Approved => None,
            ApprovalStatus::Denied => Some(ToolOutput::denied(format!(
                "approval {} was denied",
                approval.id
            ))),
            _ => Some(ToolOutput::denied(format!(
                "approval {} was not given in time, so it is denied",
                approval.id
            ))),
        })
    }

    /// Gets approval for `action` if `channel`'s approval policy asks for it
    /// (an `Other` action always asks). See [`ToolContext::request_approval`].
    pub async fn approval_by_policy(
        &self,
        channel: ChannelId,
        action: ApprovalAction,
        summary: impl Into<String>,
        reason: impl Into<String>,
    ) -> Result<Option<ToolOutput>> {
        if action != ApprovalAction::Other
            && !self
                .services
                .rt
                .store
                .approval_required(channel, action)
                .await?
        {
            return Ok(None);
        }
        self.request_approval(action, summary, reason, false).await
    }

    /// The runtime, for built-in tools.
    pub(crate) fn rt(&self) -> &Arc<Runtime> {
        &self.services.rt
    }

    /// The executor, for built-in tools that run in another computer.
    pub(crate) fn executor(&self) -> &Arc<dyn Executor> {
        &self.services.executor
    }

    /// Skipper's authority service.
    pub(crate) fn authority(&self) -> &Authority {
        self.services.authority()
    }

    /// The rails on agents waking agents: a refusal (also posted in the
    /// thread) when another agent-woken turn at `next_hop` would pass them.
    pub(crate) async fn rails(&self, next_hop: u32) -> Result<Option<ToolOutput>> {
        let rt = self.rt();
        let limit = rt.options.hop_limit;
        let burst = rt.options.agent_turns_without_human;
        let reason = if next_hop > limit {
            Some(format!(
                "This thread's chain of agents calling agents reached its limit of {limit} hops, \
                 so it stops here; a person needs to step in."
            ))
        } else if rt.store.agent_turns_since_human(self.thread_id()).await? >= burst {
            Some(format!(
                "Agents have taken {burst} turns in this thread since a person last wrote in it, \
                 so no more are started; a person needs to step in."
            ))
        } else {
            None
        };
        match reason {
            None => Ok(None),
            Some(text) => {
                self.note(text.clone()).await?;
                Ok(Some(ToolOutput::denied(text)))
            }
        }
    }
}

/// Waits for an approval's decision (made here or in another process),
/// expiring it at its deadline.
async fn wait_for_decision(rt: &Runtime, id: i64) -> Result<ApprovalStatus> {
    let started = Instant::now();
    loop {
        let approval = rt.store.approval(id).await?;
        if approval.status != ApprovalStatus::Pending {
            return Ok(approval.status);
        }
        if started.elapsed() >= rt.options.approval_timeout {
            return match rt
                .store
                .decide_approval(id, ApprovalStatus::Expired, None, None)
                .await
            {
                Ok(a) => Ok(a.status),
                // Decided in the meantime.
                Err(Error::Conflict(_)) => Ok(rt.store.approval(id).await?.status),
                Err(e) => Err(e),
            };
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

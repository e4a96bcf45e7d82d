//! What a tool call works with: the turn's channel, thread, agent, the
//! person it runs for, the channel's computer, and [`ToolServices`], the
//! narrow handle on what tools may do. A tool never holds the facade: what
//! it can reach is what this module offers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::exec::{CommandResult, CommandSpec, Computer, Executor, Files};
use crate::helm::Audience;
use crate::memory::recall::{RecallHit, RecallQuery};
use crate::model::{
    Agent, AgentKind, Approval, ApprovalAction, ApprovalStatus, ChannelId, ThreadId, Turn, User,
};
use crate::runtime::Runtime;
use crate::store::{ChannelRecord, NewApproval, Store};

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

/// What an approval request came to.
pub(crate) enum Decision {
    /// Approved: the decided record, naming who approved it (the one asking,
    /// when they may approve it themselves).
    Approved(Approval),
    /// Denied, expired, or the turn ended first: the refusal for the model.
    Refused(ToolOutput),
}

/// One tool call's world. Built by the turn engine; tools read it.
pub struct ToolContext<'a> {
    channel: &'a ChannelRecord,
    turn: &'a Turn,
    agent: &'a Agent,
    person: Option<&'a User>,
    audience: &'a Audience,
    computer: &'a Computer,
    services: &'a ToolServices,
    cancel: Option<&'a CancellationToken>,
}

impl<'a> ToolContext<'a> {
    pub(crate) fn new(
        channel: &'a ChannelRecord,
        turn: &'a Turn,
        agent: &'a Agent,
        person: Option<&'a User>,
        audience: &'a Audience,
        computer: &'a Computer,
        services: &'a ToolServices,
    ) -> Self {
        ToolContext {
            channel,
            turn,
            agent,
            person,
            audience,
            computer,
            services,
            cancel: None,
        }
    }

    /// The same context, for a turn that `cancel` stops: long tools (a
    /// command, a wait for approval) end early when it fires.
    pub(crate) fn cancelled_by(mut self, cancel: &'a CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Whether the turn is being stopped (by a person, a shutdown, or its
    /// channel being archived); a long tool should end.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.is_cancelled())
    }

    async fn cancelled(&self) {
        match self.cancel {
            Some(cancel) => cancel.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// What this turn may read beyond its thread: what the person it runs
    /// for and every reader of the channel may see
    /// ([`Audience::for_turn`]). Every memory read a tool makes goes
    /// through it (the recall engine requires one).
    pub fn audience(&self) -> &Audience {
        self.audience
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

    /// The executor that runs this channel's commands (and MCP servers'
    /// programs) in its computer.
    pub(crate) fn executor(&self) -> &Arc<dyn Executor> {
        &self.services.executor
    }

    /// The channel's computer: its `/workspace`, isolation and network.
    pub fn computer(&self) -> &Computer {
        self.computer
    }

    /// The file operations of the channel's workspace, confined to it,
    /// through the files port.
    pub fn files(&self) -> Result<Arc<dyn Files>> {
        self.services.rt.computers.files_of(self.computer, None)
    }

    /// Runs a command in the channel's computer. If the turn is cancelled
    /// meanwhile, the command is killed, and this returns once it is gone
    /// (its result says `killed`): nothing it would still do happens after
    /// the turn has ended.
    pub async fn run(&self, spec: CommandSpec) -> Result<CommandResult> {
        self.run_in(self.computer, spec).await
    }

    /// [`ToolContext::run`] in another computer (Skipper's reach).
    pub(crate) async fn run_in(
        &self,
        computer: &Computer,
        spec: CommandSpec,
    ) -> Result<CommandResult> {
        // Another channel's computer (Skipper's reach) may run elsewhere.
        let executor = if computer.channel == self.computer.channel {
            self.services.executor.clone()
        } else {
            self.services.rt.computers.executor_of(computer).await?
        };
        let running = executor.start(computer, spec).await?;
        tokio::select! {
            result = running.wait() => result,
            _ = self.cancelled() => running.kill().await,
        }
    }

    /// Recalls from the channel's memory and history, with provenance, for
    /// the turn's audience: records shared by a channel that the person, or
    /// anyone who reads this channel, may not see are left out.
    pub async fn recall(&self, query: &RecallQuery) -> Result<Vec<RecallHit>> {
        self.services
            .rt
            .recall
            .recall(self.audience, self.channel_id(), query)
            .await
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
        Ok(
            match self.approval(action, summary, reason, explicit).await? {
                Decision::Approved(_) => None,
                Decision::Refused(refusal) => Some(refusal),
            },
        )
    }

    /// [`ToolContext::request_approval`], saying who approved.
    pub(crate) async fn approval(
        &self,
        action: ApprovalAction,
        summary: impl Into<String>,
        reason: impl Into<String>,
        explicit: bool,
    ) -> Result<Decision> {
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
        let status = tokio::select! {
            status = wait_for_decision(rt, approval.id) => status?,
            // The turn is ending; the request stays on the record and
            // expires in its time.
            _ = self.cancelled() => ApprovalStatus::Pending,
        };
        Ok(match status {
            ApprovalStatus::Approved => Decision::Approved(rt.store.approval(approval.id).await?),
            ApprovalStatus::Denied => Decision::Refused(ToolOutput::denied(format!(
                "approval {} was denied",
                approval.id
            ))),
            ApprovalStatus::Pending => Decision::Refused(ToolOutput::denied(format!(
                "the turn was cancelled while approval {} was pending",
                approval.id
            ))),
            ApprovalStatus::Expired => Decision::Refused(ToolOutput::denied(format!(
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
        } else if agent_turns_since_human(rt.store.as_ref(), self.thread_id()).await? >= burst {
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

/// Turns an agent woke (hop > 0) in a thread since a person last wrote
/// there: the burst the rails limit, counted from the store's facts.
async fn agent_turns_since_human(store: &dyn Store, thread: ThreadId) -> Result<u32> {
    let since = store.last_human_post_at(thread).await?;
    let hops = store.turn_hops_since(thread, since).await?;
    Ok(u32::try_from(hops.iter().filter(|&&hop| hop > 0).count()).unwrap_or(u32::MAX))
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

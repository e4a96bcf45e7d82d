//! The [`ChannelStore`] port: channels and their agent worlds: provisioning,
//! lifecycle, the resident agent's binding, members and the model policy.

use async_trait::async_trait;

use crate::error::Result;
use crate::model::{
    Actor, Agent, AgentId, Binding, ChannelId, ChannelRef, ChannelStatus, Member, MemberRole,
    ModelChoice, ModelPolicy, ThreadId, UserId,
};
use crate::store::types::{
    ChannelFilter, ChannelPlan, ChannelRecord, ChannelUpdate, JournalEntry, NewAgent, PolicyScope,
    WorldHook,
};

/// Channels and their agent worlds: provisioning, lifecycle, the resident
/// agent's binding, members and the model policy.
#[async_trait]
pub trait ChannelStore: Send + Sync + 'static {
    /// Provisions a channel and its whole agent world in one transaction:
    /// channel, membership, agent (with a free handle derived from the plan),
    /// profile, binding, memory namespace, inherited model policy, journal
    /// record, ready announcement and events. `world` runs inside the
    /// transaction after the rows are written; if it fails, nothing is kept.
    async fn provision_channel(&self, plan: ChannelPlan, world: WorldHook)
    -> Result<ChannelRecord>;

    /// A channel with its agent and profile.
    async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord>;

    /// Channels, by name.
    async fn list_channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>>;

    /// Archives or restores a channel, pausing or waking its agent.
    /// Archiving also cancels the channel's queued turns, each with a
    /// visible note; from then on no turn of the channel starts.
    async fn set_channel_status(
        &self,
        channel: ChannelId,
        status: ChannelStatus,
        actor: Actor,
    ) -> Result<ChannelRecord>;

    /// Permanently removes a channel's rows and its agent. `world` runs inside
    /// the transaction (to move the on-disk tree aside); if it fails, nothing
    /// is removed.
    async fn delete_channel(
        &self,
        channel: ChannelId,
        actor: Actor,
        world: WorldHook,
    ) -> Result<()>;

    /// Changes a channel's purpose (and its agent's) or its agent's instructions.
    async fn update_channel(
        &self,
        channel: ChannelId,
        update: ChannelUpdate,
        actor: Actor,
    ) -> Result<ChannelRecord>;

    /// Adds an unbound agent. Provisioning does this itself; the method exists
    /// for repair tools and for proving the binding rules.
    async fn insert_agent(&self, agent: NewAgent) -> Result<Agent>;

    /// Binds a resident agent to a channel. The database refuses a second agent
    /// for a channel, a second channel for an agent, and any Skipper binding.
    async fn bind_agent(&self, agent: AgentId, channel: ChannelId) -> Result<Binding>;

    /// The stored model choices that apply to a turn in `channel` (and
    /// `thread`, if given); the fallback level is left empty for the caller.
    async fn model_policy(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy>;

    /// Sets (or with `None`, clears back to inherit) the choice at one level,
    /// with a journal record and a `model.changed` event.
    async fn set_model_policy(
        &self,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
        actor: Actor,
    ) -> Result<()>;

    /// The lifecycle journal, newest last; of one channel or of everything.
    async fn journal(&self, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>>;

    /// A channel's members, oldest first.
    async fn channel_members(&self, channel: ChannelId) -> Result<Vec<Member>>;

    /// Makes a person a member of a channel.
    async fn add_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        role: MemberRole,
        actor: Actor,
    ) -> Result<Member>;

    /// Removes a person from a channel.
    async fn remove_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        actor: Actor,
    ) -> Result<()>;

    /// The channels `user` belongs to, and every public one.
    async fn visible_channel_ids(&self, user: UserId) -> Result<Vec<ChannelId>>;

    /// The channels every one of `users` may see, in one read: every public
    /// channel, and the private ones all of them belong to (none when
    /// `users` is empty). What a turn may bring into a thread all of them
    /// read.
    async fn channels_all_see(&self, users: Vec<UserId>) -> Result<Vec<ChannelId>>;
}

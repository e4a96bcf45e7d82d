//! [`ChannelStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;

use super::super::{SqliteStore, channels, members, policy};
use crate::error::Result;
use crate::model::{
    Actor, Agent, AgentId, Binding, ChannelId, ChannelRef, ChannelStatus, Member, MemberRole,
    ModelChoice, ModelPolicy, ThreadId, UserId,
};
use crate::store::ChannelStore;
use crate::store::types::{
    ChannelFilter, ChannelPlan, ChannelRecord, ChannelUpdate, JournalEntry, NewAgent, PolicyScope,
    WorldHook,
};

#[async_trait]
impl ChannelStore for SqliteStore {
    async fn provision_channel(
        &self,
        plan: ChannelPlan,
        world: WorldHook,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| channels::provision(tx, plan, world))
            .await
    }

    async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord> {
        self.read_here(|c| channels::get(c, channel)).await
    }

    async fn list_channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
        self.read(move |c| channels::list(c, filter)).await
    }

    async fn set_channel_status(
        &self,
        channel: ChannelId,
        status: ChannelStatus,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| channels::set_status(tx, channel, status, &actor))
            .await
    }

    async fn delete_channel(
        &self,
        channel: ChannelId,
        actor: Actor,
        world: WorldHook,
    ) -> Result<()> {
        self.write_apart(move |tx| channels::delete(tx, channel, &actor, world))
            .await
    }

    async fn update_channel(
        &self,
        channel: ChannelId,
        update: ChannelUpdate,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        self.write(move |tx| members::update_channel(tx, channel, &update, &actor))
            .await
    }

    async fn insert_agent(&self, agent: NewAgent) -> Result<Agent> {
        self.write(move |tx| channels::insert_agent(tx.conn(), &agent))
            .await
    }

    async fn bind_agent(&self, agent: AgentId, channel: ChannelId) -> Result<Binding> {
        self.write(move |tx| channels::bind(tx.conn(), agent, channel))
            .await
    }

    async fn model_policy(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy> {
        self.read(move |c| policy::get(c, channel, thread)).await
    }

    async fn set_model_policy(
        &self,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
        actor: Actor,
    ) -> Result<()> {
        self.write(move |tx| policy::set(tx, scope, choice, &actor))
            .await
    }

    async fn journal(&self, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>> {
        self.read(move |c| channels::journal(c, channel)).await
    }

    async fn channel_members(&self, channel: ChannelId) -> Result<Vec<Member>> {
        self.read_here(|c| members::list(c, channel)).await
    }

    async fn add_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        role: MemberRole,
        actor: Actor,
    ) -> Result<Member> {
        self.write(move |tx| members::add(tx, channel, user, role, &actor))
            .await
    }

    async fn remove_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        actor: Actor,
    ) -> Result<()> {
        self.write(move |tx| members::remove(tx, channel, user, &actor))
            .await
    }

    async fn visible_channel_ids(&self, user: UserId) -> Result<Vec<ChannelId>> {
        self.read(move |c| members::visible_ids(c, user)).await
    }

    async fn channels_all_see(&self, users: Vec<UserId>) -> Result<Vec<ChannelId>> {
        self.read(move |c| members::ids_all_see(c, &users)).await
    }
}

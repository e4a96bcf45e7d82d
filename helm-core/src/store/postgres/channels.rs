//! [`ChannelStore`] for [`PostgresStore`]: each method one pooled
//! connection, and one transaction where it writes, with its events
//! appended in that transaction, as the SQLite store does.

mod lifecycle;
mod members;
mod policy;
mod provision;
pub(crate) mod record;

use async_trait::async_trait;

use super::PostgresStore;
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
impl ChannelStore for PostgresStore {
    async fn provision_channel(
        &self,
        plan: ChannelPlan,
        world: WorldHook,
    ) -> Result<ChannelRecord> {
        in_tx!(self, "provisioning a channel", |tx| provision::provision(
            tx, plan, world
        ))
    }

    async fn channel(&self, channel: &ChannelRef) -> Result<ChannelRecord> {
        let client = self.client().await?;
        record::get(&client, channel).await
    }

    async fn list_channels(&self, filter: ChannelFilter) -> Result<Vec<ChannelRecord>> {
        let client = self.client().await?;
        record::list(&client, filter).await
    }

    async fn set_channel_status(
        &self,
        channel: ChannelId,
        status: ChannelStatus,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        in_tx!(self, "changing a channel's status", |tx| {
            lifecycle::set_status(tx, channel, status, &actor)
        })
    }

    async fn delete_channel(
        &self,
        channel: ChannelId,
        actor: Actor,
        world: WorldHook,
    ) -> Result<()> {
        in_tx!(self, "deleting a channel", |tx| lifecycle::delete(
            tx, channel, &actor, world
        ))
    }

    async fn update_channel(
        &self,
        channel: ChannelId,
        update: ChannelUpdate,
        actor: Actor,
    ) -> Result<ChannelRecord> {
        in_tx!(self, "changing a channel", |tx| lifecycle::update(
            tx, channel, &update, &actor
        ))
    }

    async fn insert_agent(&self, agent: NewAgent) -> Result<Agent> {
        let client = self.client().await?;
        provision::insert_agent(&client, &agent).await
    }

    async fn bind_agent(&self, agent: AgentId, channel: ChannelId) -> Result<Binding> {
        let client = self.client().await?;
        provision::bind_alone(&client, agent, channel).await
    }

    async fn model_policy(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
    ) -> Result<ModelPolicy> {
        let client = self.client().await?;
        policy::get(&client, channel, thread).await
    }

    async fn set_model_policy(
        &self,
        scope: PolicyScope,
        choice: Option<ModelChoice>,
        actor: Actor,
    ) -> Result<()> {
        in_tx!(self, "setting the model policy", |tx| policy::set(
            tx, scope, choice, &actor
        ))
    }

    async fn journal(&self, channel: Option<ChannelId>) -> Result<Vec<JournalEntry>> {
        let client = self.client().await?;
        record::journal(&client, channel).await
    }

    async fn channel_members(&self, channel: ChannelId) -> Result<Vec<Member>> {
        let client = self.client().await?;
        members::list(&client, channel).await
    }

    async fn add_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        role: MemberRole,
        actor: Actor,
    ) -> Result<Member> {
        in_tx!(self, "adding a channel member", |tx| members::add(
            tx, channel, user, role, &actor
        ))
    }

    async fn remove_channel_member(
        &self,
        channel: ChannelId,
        user: UserId,
        actor: Actor,
    ) -> Result<()> {
        in_tx!(self, "removing a channel member", |tx| members::remove(
            tx, channel, user, &actor
        ))
    }

    async fn visible_channel_ids(&self, user: UserId) -> Result<Vec<ChannelId>> {
        let client = self.client().await?;
        members::visible_ids(&client, user).await
    }

    async fn channels_all_see(&self, users: Vec<UserId>) -> Result<Vec<ChannelId>> {
        let client = self.client().await?;
        members::ids_all_see(&client, &users).await
    }
}

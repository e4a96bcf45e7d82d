//! Reading a channel as a person: how far they have read (read markers and
//! unread counts, with mentions), the channel's feed of threads, pages that
//! run back from the newest message; and the workspace's name.

use crate::error::{Error, Result};
use crate::model::{
    ChannelRef, ChannelUnread, FeedItem, Message, MessageId, ReadMarker, ThreadId, User, Workspace,
};
use crate::store::ChannelFilter;

use super::Helm;

/// The longest workspace name accepted, in characters.
pub const MAX_WORKSPACE_NAME: usize = 64;

impl Helm {
    /// Marks `channel` read by `actor` up to `message` (a message of that
    /// channel). Markers only move forward; each move is a `channel.read`
    /// event that only `actor` receives.
    pub async fn mark_read(
        &self,
        actor: &User,
        channel: &ChannelRef,
        message: MessageId,
    ) -> Result<ReadMarker> {
        let record = self.visible_channel(actor, channel).await?;
        let found = match self.inner.store.message(message).await {
            Ok(found) => found,
            Err(Error::NotFound { .. }) => return Err(Error::not_found("message", message)),
            Err(e) => return Err(e),
        };
        if found.channel_id != record.channel.id {
            return Err(Error::not_found("message", message));
        }
        self.inner.store.mark_read(actor.id, message).await
    }

    /// What `actor` has not read, per channel they may see (archived ones
    /// included).
    pub async fn unread(&self, actor: &User) -> Result<Vec<ChannelUnread>> {
        let channels = self
            .visible_channels(
                actor,
                ChannelFilter {
                    include_archived: true,
                },
            )
            .await?
            .into_iter()
            .map(|r| r.channel.id)
            .collect();
        self.inner.store.unread(actor.clone(), channels).await
    }

    /// A page of a channel's feed, newest last: each thread's root message
    /// with the thread, its reply count and its newest reply, and the
    /// announcements made outside threads, before `before` (the newest page
    /// without it).
    pub async fn feed(
        &self,
        actor: &User,
        channel: &ChannelRef,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>> {
        let record = self.visible_channel(actor, channel).await?;
        self.inner
            .store
            .feed(record.channel.id, before, limit)
            .await
    }

    /// The `limit` messages of a channel (or of one of its threads) just
    /// before `before` (the newest ones without it), oldest first.
    pub async fn messages_before(
        &self,
        actor: &User,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let record = self.visible_channel(actor, channel).await?;
        self.inner
            .store
            .messages_before(record.channel.id, thread, before, limit)
            .await
    }

    /// Renames the workspace (the Captain and admins). Emits
    /// `workspace.updated`.
    pub async fn rename_workspace(&self, actor: &User, name: &str) -> Result<Workspace> {
        if !actor.role.is_admin() {
            return Err(Error::Forbidden(
                "only the Captain or an admin renames the workspace".into(),
            ));
        }
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_WORKSPACE_NAME {
            return Err(Error::invalid(
                "workspace name",
                format!("give it 1 to {MAX_WORKSPACE_NAME} characters"),
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(Error::invalid(
                "workspace name",
                "it may not hold control characters such as line breaks",
            ));
        }
        let workspace = self.inner.store.rename_workspace(name.to_string()).await?;
        if let Ok(mut cached) = self.inner.workspace.write() {
            *cached = workspace.clone();
        }
        Ok(workspace)
    }
}

//! [`ThreadStore`] for [`SqliteStore`]: each method one read or one write
//! transaction, delegated to the area module that holds its SQL.

use async_trait::async_trait;
use jiff::Timestamp;

use super::super::codec::opt_ts;
use super::super::{SqliteStore, authority, members, messages, reading, summaries, threads};
use crate::error::Result;
use crate::model::{
    Actor, ChannelId, ChannelUnread, FeedItem, MemoryId, Message, MessageId, ReadMarker, Thread,
    ThreadId, ThreadStatus, User, UserId,
};
use crate::store::ThreadStore;
use crate::store::types::{NewPost, NewThreadSummary, Posted, ThreadPage};

#[async_trait]
impl ThreadStore for SqliteStore {
    async fn post_message(&self, post: NewPost) -> Result<Posted> {
        self.write(move |tx| threads::post(tx, post)).await
    }

    async fn post_note(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<Message> {
        self.write(move |tx| authority::note(tx, channel, thread, &text))
            .await
    }

    async fn thread(&self, id: ThreadId) -> Result<Thread> {
        self.read_here(|c| threads::get(c, id)).await
    }

    async fn threads_in(&self, channel: ChannelId, ids: &[ThreadId]) -> Result<Vec<Thread>> {
        let ids = ids.to_vec();
        self.read(move |c| threads::among(c, channel, &ids)).await
    }

    async fn thread_page(&self, channel: ChannelId, page: ThreadPage) -> Result<Vec<Thread>> {
        self.read(move |c| threads::list(c, channel, &page)).await
    }

    async fn set_thread_status(
        &self,
        thread: ThreadId,
        status: ThreadStatus,
        actor: Actor,
    ) -> Result<Thread> {
        self.write(move |tx| threads::set_status(tx, thread, status, &actor))
            .await
    }

    async fn rename_thread(&self, thread: ThreadId, title: String, actor: Actor) -> Result<Thread> {
        self.write(move |tx| threads::rename(tx, thread, &title, &actor))
            .await
    }

    async fn thread_messages(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
    ) -> Result<Vec<Message>> {
        self.read(move |c| threads::messages(c, thread, up_to))
            .await
    }

    async fn thread_tail(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
        budget_tokens: usize,
    ) -> Result<crate::store::ThreadTail> {
        self.read(move |c| threads::tail(c, thread, up_to, budget_tokens))
            .await
    }

    async fn message(&self, id: MessageId) -> Result<Message> {
        self.read_here(|c| messages::get(c, id)).await
    }

    async fn messages_page(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.read(move |c| members::messages_page(c, channel, thread, after, limit))
            .await
    }

    async fn messages_before(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.read(move |c| reading::messages_before(c, channel, thread, before, limit))
            .await
    }

    async fn feed(
        &self,
        channel: ChannelId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>> {
        self.read(move |c| reading::feed(c, channel, before, limit))
            .await
    }

    async fn mark_read(&self, user: UserId, message: MessageId) -> Result<ReadMarker> {
        self.write(move |tx| reading::mark_read(tx, user, message))
            .await
    }

    async fn unread(&self, user: User, channels: Vec<ChannelId>) -> Result<Vec<ChannelUnread>> {
        self.read(move |c| reading::unread(c, &user, &channels))
            .await
    }

    async fn put_thread_summary(&self, summary: NewThreadSummary) -> Result<MemoryId> {
        self.write(move |tx| summaries::put(tx, summary)).await
    }

    async fn threads_due_for_summary(
        &self,
        idle_before: i64,
        limit: usize,
    ) -> Result<Vec<ThreadId>> {
        self.read(move |c| summaries::due(c, idle_before, limit))
            .await
    }

    async fn last_human_post_at(&self, thread: ThreadId) -> Result<Option<Timestamp>> {
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT max(created) FROM messages WHERE thread_id = ?1 AND author_kind = 'human'",
            )?
            .query_row([thread], |r| opt_ts(r, 0))?)
        })
        .await
    }
}

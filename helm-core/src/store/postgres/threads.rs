//! [`ThreadStore`] for [`PostgresStore`]: each method one pooled connection,
//! and one transaction where it writes, with its events in that same
//! transaction, as the SQLite store does.

pub(crate) mod post;
pub(crate) mod reading;
pub(crate) mod rows;
mod summaries;

use async_trait::async_trait;
use jiff::Timestamp;

use super::{PostgresStore, failed};
use crate::error::Result;
use crate::model::{
    Actor, ChannelId, ChannelUnread, FeedItem, MemoryId, Message, MessageId, ReadMarker, Thread,
    ThreadId, ThreadStatus, User, UserId,
};
use crate::store::ThreadStore;
use crate::store::types::{NewPost, NewThreadSummary, Posted, ThreadPage, ThreadTail};

#[async_trait]
impl ThreadStore for PostgresStore {
    async fn post_message(&self, post: NewPost) -> Result<Posted> {
        in_tx!(self, "a post", |tx| post::post(tx, post))
    }

    async fn post_note(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<Message> {
        in_tx!(self, "a note", |tx| rows::note(tx, channel, thread, &text))
    }

    async fn thread(&self, id: ThreadId) -> Result<Thread> {
        let client = self.client().await?;
        rows::thread(&client, id).await
    }

    async fn threads_in(&self, channel: ChannelId, ids: &[ThreadId]) -> Result<Vec<Thread>> {
        let client = self.client().await?;
        reading::among(&client, channel, ids).await
    }

    async fn thread_page(&self, channel: ChannelId, page: ThreadPage) -> Result<Vec<Thread>> {
        let client = self.client().await?;
        reading::threads(&client, channel, &page).await
    }

    async fn set_thread_status(
        &self,
        thread: ThreadId,
        status: ThreadStatus,
        actor: Actor,
    ) -> Result<Thread> {
        in_tx!(self, "a thread status change", |tx| post::set_status(
            tx, thread, status, &actor
        ))
    }

    async fn rename_thread(&self, thread: ThreadId, title: String, actor: Actor) -> Result<Thread> {
        in_tx!(self, "a thread rename", |tx| post::rename(
            tx, thread, &title, &actor
        ))
    }

    async fn thread_messages(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
    ) -> Result<Vec<Message>> {
        let client = self.client().await?;
        reading::thread_messages(&client, thread, up_to).await
    }

    async fn thread_tail(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
        budget_tokens: usize,
    ) -> Result<ThreadTail> {
        // One snapshot: the tail and the places it subtracts agree.
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(failed("starting to read a thread's tail"))?;
        let tail = reading::tail(&tx, thread, up_to, budget_tokens).await?;
        tx.commit()
            .await
            .map_err(failed("reading a thread's tail"))?;
        Ok(tail)
    }

    async fn message(&self, id: MessageId) -> Result<Message> {
        let client = self.client().await?;
        rows::message(&client, id).await
    }

    async fn messages_page(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let client = self.client().await?;
        reading::messages_page(&client, channel, thread, after, limit).await
    }

    async fn messages_before(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let client = self.client().await?;
        reading::messages_before(&client, channel, thread, before, limit).await
    }

    async fn feed(
        &self,
        channel: ChannelId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>> {
        let client = self.client().await?;
        reading::feed(&client, channel, before, limit).await
    }

    async fn mark_read(&self, user: UserId, message: MessageId) -> Result<ReadMarker> {
        in_tx!(self, "a read marker", |tx| reading::mark_read(
            tx, user, message
        ))
    }

    async fn unread(&self, user: User, channels: Vec<ChannelId>) -> Result<Vec<ChannelUnread>> {
        let client = self.client().await?;
        reading::unread(&client, &user, &channels).await
    }

    async fn put_thread_summary(&self, summary: NewThreadSummary) -> Result<MemoryId> {
        in_tx!(self, "a session summary", |tx| summaries::put(tx, summary))
    }

    async fn threads_due_for_summary(
        &self,
        idle_before: i64,
        limit: usize,
    ) -> Result<Vec<ThreadId>> {
        let client = self.client().await?;
        summaries::due(&client, idle_before, limit).await
    }

    async fn last_human_post_at(&self, thread: ThreadId) -> Result<Option<Timestamp>> {
        let client = self.client().await?;
        post::last_human_post_at(&client, thread).await
    }
}

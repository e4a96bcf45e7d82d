//! The [`ThreadStore`] port: threads and their messages: posting, reading back
//! (pages, tails, the feed), read markers and session summaries.

use async_trait::async_trait;
use jiff::Timestamp;

use crate::error::Result;
use crate::model::{
    Actor, ChannelId, ChannelUnread, FeedItem, MemoryId, Message, MessageId, ReadMarker, Thread,
    ThreadId, ThreadStatus, User, UserId,
};
use crate::store::types::{NewPost, NewThreadSummary, Posted, ThreadPage, ThreadTail};

/// Threads and their messages: posting, reading back (pages, tails, the feed),
/// read markers and session summaries.
#[async_trait]
pub trait ThreadStore: Send + Sync + 'static {
    /// Posts a human message: opens a thread or continues one (reopening it if
    /// resolved or failed) and, if the message wakes the resident agent,
    /// admits its turn with a pending reply, all in one transaction.
    async fn post_message(&self, post: NewPost) -> Result<Posted>;

    /// Posts a note from Helm in a channel (and thread).
    async fn post_note(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        text: String,
    ) -> Result<Message>;

    /// A thread.
    async fn thread(&self, id: ThreadId) -> Result<Thread>;

    /// Those of `ids` that are threads of `channel`, in one read, in the
    /// order asked; ids of other channels' threads, or of none, are left
    /// out.
    async fn threads_in(&self, channel: ChannelId, ids: &[ThreadId]) -> Result<Vec<Thread>>;

    /// A page of a channel's threads, most recently active first (by
    /// `updated_at`, then id, both descending).
    async fn thread_page(&self, channel: ChannelId, page: ThreadPage) -> Result<Vec<Thread>>;

    /// A channel's newest `limit` threads of any status, most recently
    /// active first.
    async fn threads(&self, channel: ChannelId, limit: usize) -> Result<Vec<Thread>> {
        self.thread_page(channel, ThreadPage::first(limit)).await
    }

    /// Resolves, reopens or archives a thread.
    async fn set_thread_status(
        &self,
        thread: ThreadId,
        status: ThreadStatus,
        actor: Actor,
    ) -> Result<Thread>;

    /// Gives a thread a new title (already checked: trimmed, one line, not
    /// empty), with its `thread.updated` event in the same transaction.
    /// Refused while its channel is archived; the same title again changes
    /// nothing and emits nothing.
    async fn rename_thread(&self, thread: ThreadId, title: String, actor: Actor) -> Result<Thread>;

    /// A thread's messages in server order, up to and including `up_to`.
    async fn thread_messages(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
    ) -> Result<Vec<Message>>;

    /// A thread's first message and its newest messages up to and
    /// including `up_to` whose [`message_tokens`](crate::store::message_tokens)
    /// fit `budget_tokens` (the first message's cost counted first), read
    /// newest first along the thread's index so the cost follows the budget,
    /// not the thread; with how many messages were left out between them and
    /// how many of those the thread's newest summary does not cover.
    async fn thread_tail(
        &self,
        thread: ThreadId,
        up_to: Option<MessageId>,
        budget_tokens: usize,
    ) -> Result<ThreadTail>;

    /// A message.
    async fn message(&self, id: MessageId) -> Result<Message>;

    /// A page of a channel's messages (or one thread's) after a message id,
    /// oldest first.
    async fn messages_page(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        after: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>>;

    /// The newest `limit` messages of a channel (or one thread) before
    /// `before` (or the newest of all), oldest first.
    async fn messages_before(
        &self,
        channel: ChannelId,
        thread: Option<ThreadId>,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>>;

    /// The newest `limit` entries of a channel's feed before `before`,
    /// oldest first.
    async fn feed(
        &self,
        channel: ChannelId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<Vec<FeedItem>>;

    /// Moves `user`'s read marker in the message's channel forward to it
    /// (never back); emits `channel.read` when it moved.
    async fn mark_read(&self, user: UserId, message: MessageId) -> Result<ReadMarker>;

    /// What `user` has not read in each of `channels`.
    async fn unread(&self, user: User, channels: Vec<ChannelId>) -> Result<Vec<ChannelUnread>>;

    /// Stores a session summary: its row, the thread's rolling summary, and
    /// a `summary` memory record (superseding the thread's previous one).
    async fn put_thread_summary(&self, summary: NewThreadSummary) -> Result<MemoryId>;

    /// Threads whose summary is due (resolved, or quiet since `idle_before`
    /// in Unix milliseconds), oldest first.
    async fn threads_due_for_summary(
        &self,
        idle_before: i64,
        limit: usize,
    ) -> Result<Vec<ThreadId>>;

    /// When a person last wrote in a thread (its newest human message).
    async fn last_human_post_at(&self, thread: ThreadId) -> Result<Option<Timestamp>>;
}

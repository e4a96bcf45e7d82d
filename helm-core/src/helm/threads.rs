//! Working in a channel: posting messages (which may wake the agent), the
//! threads they make, stopping work, and the tool journal.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{
    Actor, ChannelRef, ChannelStatus, Message, Thread, ThreadId, ThreadStatus, ToolAction,
    ToolActionId, Turn, TurnId, User,
};
use crate::runtime::wake::mentions_handle;
use crate::store::{ChannelRecord, NewPost, ThreadCursor, ThreadMatch, ThreadPage, search_threads};

use super::Helm;

/// The longest message accepted, in bytes.
pub const MAX_MESSAGE: usize = 256 * 1024;

/// The longest thread title accepted, in characters.
pub const MAX_THREAD_TITLE: usize = 200;

/// A thread title as stored: trimmed, one line, 1 to [`MAX_THREAD_TITLE`]
/// characters.
fn check_title(title: &str) -> Result<String> {
    let title = title.trim();
    if title.is_empty() {
        return Err(Error::invalid(
            "thread title",
            "it is empty; give the thread a few words that say what it is about",
        ));
    }
    if title.contains(['\n', '\r']) {
        return Err(Error::invalid(
            "thread title",
            "it spans several lines; write it on one line",
        ));
    }
    let chars = title.chars().count();
    if chars > MAX_THREAD_TITLE {
        return Err(Error::invalid(
            "thread title",
            format!(
                "{chars} characters is over the {MAX_THREAD_TITLE}-character limit; shorten it"
            ),
        ));
    }
    Ok(title.to_string())
}

/// What posting a message did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PostedMessage {
    /// The stored message.
    pub message: Message,
    /// Its thread.
    pub thread: Thread,
    /// Whether the message opened the thread.
    pub thread_created: bool,
    /// The turn it woke, if it woke the agent.
    pub turn: Option<Turn>,
    /// How many turns must end before that turn can start: earlier turns
    /// of its thread, or turns its agent is busy with in other threads.
    pub ahead: u32,
    /// The call for Skipper it opened (or added its reason to), if it
    /// mentioned @skipper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<crate::model::Escalation>,
}

/// Which of a channel's threads a listing shows ([`Helm::list_threads`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadFilter {
    /// `Some(true)`: only archived threads; `Some(false)`: all but archived
    /// ones; `None`: every thread.
    pub archived: Option<bool>,
    /// Only threads whose title, summary or messages hold these words.
    pub search: Option<String>,
    /// Only threads listed after this place: the page before, continued
    /// ([`ThreadList::next`], [`Helm::thread_cursor`]). A search has none.
    pub before: Option<ThreadCursor>,
}

/// One page of a channel's threads as a listing shows it
/// ([`Helm::list_threads`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadList {
    /// The threads, in the listing's order.
    pub threads: Vec<Thread>,
    /// Where the next page starts, when threads remain past this one. A
    /// search answers with one ranked page, so never for a search.
    pub next: Option<ThreadCursor>,
}

impl ThreadFilter {
    /// Whether the listing can be made: a search answers with one ranked
    /// page, so a search with a place to continue from is invalid input.
    pub fn check(&self) -> Result<()> {
        if self.search.is_some() && self.before.is_some() {
            return Err(Error::invalid(
                "page",
                "a search answers with one ranked page, best match first, so it has no page \
                 before; list without a search to page back",
            ));
        }
        Ok(())
    }
}

impl ThreadList {
    /// A page read with one thread more than `limit`: that one, when it
    /// came, says threads remain, and is left for the next page.
    pub fn from_probe(mut threads: Vec<Thread>, limit: usize) -> Self {
        let more = threads.len() > limit;
        threads.truncate(limit);
        let next = if more {
            threads.last().map(ThreadCursor::after)
        } else {
            None
        };
        ThreadList { threads, next }
    }
}

impl Helm {
    /// Posts a message as `actor`. A message without a thread starts one
    /// (a new session); with one, it continues it. The resident agent wakes
    /// when mentioned, or when the thread is a one-person session it already
    /// answered in; its turn is admitted durably before this returns.
    pub async fn post_message(
        &self,
        actor: &User,
        channel: &ChannelRef,
        text: &str,
        thread: Option<ThreadId>,
    ) -> Result<PostedMessage> {
        if text.trim().is_empty() {
            return Err(Error::invalid("message", "it is empty"));
        }
        if text.len() > MAX_MESSAGE {
            return Err(Error::invalid(
                "message",
                format!(
                    "{} bytes is over the {MAX_MESSAGE}-byte limit; attach a file instead",
                    text.len()
                ),
            ));
        }
        let record = self.visible_channel(actor, channel).await?;
        if record.channel.status == ChannelStatus::Archived {
            return Err(Error::Refused(format!(
                "{} is archived; restore it to work there",
                record.channel.name
            )));
        }
        let mentions_resident = mentions_handle(text, &record.agent.handle);
        let calls_skipper = record.channel.kind == crate::model::ChannelKind::Agent
            && mentions_handle(text, &crate::model::Handle::skipper());
        // The model of any turn this wakes is fixed now, before the message
        // is stored; a choice that cannot serve refuses the message (the
        // store decides whether it wakes anyone). A new thread without a
        // mention wakes nobody, so there is nothing to choose.
        let admission = if thread.is_some() || mentions_resident || calls_skipper {
            self.inner.runtime.admission(&record, thread).await?
        } else {
            crate::store::Admission {
                model: crate::store::AdmissionModel::Unavailable(
                    "a new thread without a mention wakes no agent".into(),
                ),
                capacity: 1,
            }
        };
        let posted = self
            .inner
            .store
            .post_message(NewPost {
                channel_id: record.channel.id,
                thread_id: thread,
                author: actor.clone(),
                content: text.to_string(),
                mentions_resident,
                calls_skipper,
                resident: record.agent,
                admission,
            })
            .await?;
        if posted.turn.is_some() || posted.escalation.is_some() {
            self.inner.runtime.wake();
        }
        Ok(PostedMessage {
            message: posted.message,
            thread: posted.thread,
            thread_created: posted.thread_created,
            turn: posted.turn,
            ahead: posted.ahead,
            escalation: posted.escalation,
        })
    }

    /// A thread, checked to belong to a channel that exists.
    pub async fn thread(&self, id: ThreadId) -> Result<Thread> {
        self.inner.store.thread(id).await
    }

    /// A channel's threads, most recently active first.
    pub async fn threads(&self, channel: &ChannelRef, limit: usize) -> Result<Vec<Thread>> {
        let record = self.channel(channel).await?;
        self.inner.store.threads(record.channel.id, limit).await
    }

    /// A channel's threads as a listing asks for them (`1helm thread
    /// list`, Python's `channel.threads`): with `filter.search`, those
    /// matching it best first (see [`Helm::search_threads`]), one page;
    /// else the most recently active first, after `filter.before`, with
    /// where the next page starts when more remain. At most `limit`.
    pub async fn list_threads(
        &self,
        channel: &ChannelRef,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<ThreadList> {
        let archived = filter.archived;
        match &filter.search {
            Some(text) => {
                filter.check()?;
                let found = self.search_threads(channel, text, archived, limit).await?;
                Ok(ThreadList {
                    threads: found.into_iter().map(|m| m.thread).collect(),
                    next: None,
                })
            }
            None => {
                let page = ThreadPage {
                    before: filter.before,
                    archived,
                    titled: Vec::new(),
                    limit: limit.saturating_add(1),
                };
                let threads = self.thread_page(channel, page).await?;
                Ok(ThreadList::from_probe(threads, limit))
            }
        }
    }

    /// Where a listing of `channel`'s threads resumes after thread `id`,
    /// as `actor` sees it: the threads last active before it, as it is now
    /// (one active since heads the list, so its page repeats the newer
    /// ones). A thread of another channel is invalid input.
    pub async fn thread_cursor(
        &self,
        actor: &User,
        channel: &ChannelRef,
        id: ThreadId,
    ) -> Result<ThreadCursor> {
        let record = self.visible_channel(actor, channel).await?;
        let (thread, _) = self.visible_thread(actor, id).await?;
        ThreadCursor::after_in(&thread, record.channel.id)
    }

    /// The threads of `channel` among `ids`, in the order asked: a view
    /// that names threads beyond the pages it loaded (Activity) reads them
    /// at once. An id of no thread, or of another channel's, is left out.
    pub async fn threads_among(
        &self,
        channel: &ChannelRef,
        ids: &[ThreadId],
    ) -> Result<Vec<Thread>> {
        let record = self.channel(channel).await?;
        self.inner.store.threads_in(record.channel.id, ids).await
    }

    /// A page of a channel's threads, most recently active first; see
    /// [`ThreadPage`] for the cursor and filters.
    pub async fn thread_page(&self, channel: &ChannelRef, page: ThreadPage) -> Result<Vec<Thread>> {
        let record = self.channel(channel).await?;
        self.inner.store.thread_page(record.channel.id, page).await
    }

    /// A channel's threads matching `text` in their title, summary or
    /// messages, best first (see [`search_threads`]); an empty `text` is
    /// invalid input.
    pub async fn search_threads(
        &self,
        channel: &ChannelRef,
        text: &str,
        archived: Option<bool>,
        limit: usize,
    ) -> Result<Vec<ThreadMatch>> {
        if text.trim().is_empty() {
            return Err(Error::invalid(
                "search",
                "the search is empty; give words to look for",
            ));
        }
        let record = self.channel(channel).await?;
        search_threads(
            self.inner.store.as_ref(),
            record.channel.id,
            text,
            archived,
            limit,
        )
        .await
    }

    /// A thread's messages in server order.
    pub async fn thread_messages(&self, id: ThreadId) -> Result<Vec<Message>> {
        self.inner.store.thread(id).await?;
        self.inner.store.thread_messages(id, None).await
    }

    /// A thread's turns, oldest first.
    pub async fn thread_turns(&self, id: ThreadId) -> Result<Vec<Turn>> {
        self.inner.store.thread(id).await?;
        self.inner.store.thread_turns(id).await
    }

    /// A turn.
    pub async fn turn(&self, id: TurnId) -> Result<Turn> {
        self.inner.store.turn(id).await
    }

    /// Marks a thread resolved, reopens it, or archives it, as `actor`:
    /// anyone who sees the thread, while its channel is not archived (an
    /// archived channel is kept as it was; restoring it comes first).
    pub async fn set_thread_status(
        &self,
        actor: &User,
        id: ThreadId,
        status: ThreadStatus,
    ) -> Result<Thread> {
        if !matches!(
            status,
            ThreadStatus::Resolved | ThreadStatus::Open | ThreadStatus::Archived
        ) {
            return Err(Error::invalid(
                "thread status",
                format!("a thread is resolved, reopened or archived by hand, not set to {status}"),
            ));
        }
        let (thread, record) = self.visible_thread(actor, id).await?;
        if record.channel.status == ChannelStatus::Archived {
            return Err(Error::Refused(format!(
                "{} is archived; restore it to resolve, reopen or archive its threads",
                record.channel.name
            )));
        }
        self.inner
            .store
            .set_thread_status(thread.id, status, Actor::user(actor))
            .await
    }

    /// Gives a thread a new title, as `actor`: anyone who sees the thread
    /// and may post in its channel (so not while the channel is archived).
    /// The title is trimmed and must be one line of 1 to
    /// [`MAX_THREAD_TITLE`] characters.
    pub async fn rename_thread(&self, actor: &User, id: ThreadId, title: &str) -> Result<Thread> {
        let title = check_title(title)?;
        let (thread, record) = self.visible_thread(actor, id).await?;
        if record.channel.status == ChannelStatus::Archived {
            return Err(Error::Refused(format!(
                "{} is archived; restore it to rename its threads",
                record.channel.name
            )));
        }
        self.inner
            .store
            .rename_thread(thread.id, title, Actor::user(actor))
            .await
    }

    /// Stops a thread's work: its running turn ends `stopped` (with what it
    /// had written) and its queued turns are withdrawn. Other threads go on.
    /// Stopping is only possible in a process that drives turns; when
    /// several nodes share a database, the node running the turn stops it
    /// within a second of being asked. Returns once the running turn has
    /// ended (at most a few seconds), so what is read next shows the thread
    /// stopped.
    pub async fn stop_thread(&self, actor: &User, id: ThreadId) -> Result<Vec<TurnId>> {
        self.inner.store.thread(id).await?;
        self.inner.runtime.stop_thread(id, &actor.name).await
    }

    /// Runs a thread's failed (or interrupted) last turn again on behalf of
    /// `actor`: the same agent answers the same message anew, with the model
    /// the policy chooses now; the failed reply stays in the thread as it
    /// was. Refused when the last turn did not fail, when the thread went
    /// on after it, or when the channel is archived. Returns the new turn,
    /// queued; a process that drives turns runs it.
    pub async fn retry_thread(&self, actor: &User, id: ThreadId) -> Result<Turn> {
        let (thread, record) = self.visible_thread(actor, id).await?;
        if record.channel.status == ChannelStatus::Archived {
            return Err(Error::Refused(format!(
                "{} is archived; restore it to work there",
                record.channel.name
            )));
        }
        let last = self
            .inner
            .store
            .thread_turns(thread.id)
            .await?
            .pop()
            .ok_or_else(|| {
                Error::Conflict(format!(
                    "thread {} has no turn to run again; mention the agent to ask it",
                    thread.id
                ))
            })?;
        let admission = self
            .inner
            .runtime
            .admission(&record, Some(thread.id))
            .await?;
        let turn = self
            .inner
            .store
            .retry_turn(last.id, actor.clone(), admission)
            .await?;
        self.inner.runtime.wake();
        Ok(turn)
    }

    /// The tool journal of a channel (or one of its threads): its `limit`
    /// newest actions, newest last.
    pub async fn activity(
        &self,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<(ChannelRecord, Vec<ToolAction>)> {
        self.activity_before(channel, thread, None, limit).await
    }

    /// A page of the tool journal: the `limit` newest actions older than
    /// `before` (the first action of the page after it; the newest without
    /// it), newest last. A page shorter than `limit` is the oldest.
    pub async fn activity_before(
        &self,
        channel: &ChannelRef,
        thread: Option<ThreadId>,
        before: Option<ToolActionId>,
        limit: usize,
    ) -> Result<(ChannelRecord, Vec<ToolAction>)> {
        let record = self.channel(channel).await?;
        let actions = self
            .inner
            .store
            .tool_actions(record.channel.id, thread, before, limit)
            .await?;
        Ok((record, actions))
    }

    /// What happened to a channel itself ([`LIFECYCLE_EVENTS`]), newest
    /// first, before the event `before` when given: durable, so a page
    /// opened later tells the same story as one that watched it live.
    ///
    /// [`LIFECYCLE_EVENTS`]: crate::events::LIFECYCLE_EVENTS
    pub async fn channel_lifecycle(
        &self,
        channel: &ChannelRef,
        before: Option<u64>,
        limit: usize,
    ) -> Result<(ChannelRecord, Vec<crate::events::Event>)> {
        let record = self.channel(channel).await?;
        let events = self
            .inner
            .store
            .channel_events(
                record.channel.id,
                crate::events::LIFECYCLE_EVENTS,
                before,
                limit,
            )
            .await?;
        Ok((record, events))
    }

    /// Makes this process the data directory's turn driver: it runs queued
    /// turns and marks turns a crashed driver left running as interrupted.
    /// Fails with [`Error::Busy`] if another process drives already.
    pub async fn start_runtime(&self) -> Result<()> {
        self.inner.runtime.start().await
    }

    /// Stops driving turns. With `drain`, running turns finish first (one
    /// waiting on an approval is stopped: it waits for a person, not for
    /// work); without, they end `cancelled` with a visible note.
    pub async fn shutdown_runtime(&self, drain: bool) {
        self.inner.runtime.shutdown(drain).await
    }

    /// Follows the event log after `after`: backlog, then live events.
    pub async fn follow(&self, after: u64) -> Result<crate::events::Follower> {
        crate::events::Follower::new(self.inner.store.clone(), after).await
    }

    /// Whether this process drives turns.
    pub fn is_driving(&self) -> bool {
        self.inner.runtime.is_driving()
    }
}

impl Helm {
    /// Writes a structured summary of a thread now, with the model that
    /// serves it. Without a configured model this fails with a provider
    /// `Unconfigured` error, and nothing is stored.
    pub async fn summarize_thread(
        &self,
        actor: &User,
        id: ThreadId,
    ) -> Result<crate::runtime::summary::WrittenSummary> {
        self.visible_thread(actor, id).await?;
        self.inner
            .runtime
            .summarize(id, crate::runtime::summary::SummaryTrigger::Request)
            .await
    }
}

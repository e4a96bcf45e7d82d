//! The store's one writer: a thread of its own that holds the write
//! connection and commits queued writes together (group commit).
//!
//! Why a thread and batches: SQLite has one writer anyway, and under load
//! writes queue behind it. Committed one by one, each write paid its own
//! commit (the WAL frames of every page it touched, the same hot pages
//! again and again) and its own word-index segment, and hopped to a
//! blocking thread and back. Here the writer takes every write waiting when
//! it is free (up to [`MAX_BATCH`]), runs each inside a savepoint of one
//! transaction, and commits once. A write that fails is rolled back to its
//! savepoint alone; the others commit. Nobody hears of their write before
//! the commit that holds it, and events are published after it in `seq`
//! order, so every guarantee of a write committed alone still holds.
//!
//! SQLite's own WAL checkpoints stay in the commit that crosses the WAL's
//! limit, on whichever thread commits it (below). Moving them to a thread
//! of their own (woken by a WAL hook) was measured and was slower under
//! 100 concurrent turns (784–880 against 847–969 turns/s): a checkpoint's
//! sync waits on the disk, not the CPU, and the writes queued meanwhile
//! simply join the next batch.
//!
//! A write made while the writer is free (nobody holds the connection and
//! no write is queued) runs on its caller's thread instead, alone in its
//! transaction: handing it to the writer's thread and back costs two
//! thread wake-ups, which on a 2-vCPU machine is most of a small write
//! (a plain post 0.20 -> 0.10 ms, a whole turn 3.1 -> 2.5 ms). So that a
//! caller's thread, a runtime worker, never waits long, such a write does
//! not wait for another process's write lock (it queues instead), and
//! writes that may take long ([`Writer::write_apart`]) always queue. Under
//! load the connection is rarely free, so writes batch as before. Either
//! way one connection commits one transaction at a time, and events are
//! published before it is let go, so they stay in commit order.
//!
//! Once no write has come for [`IDLE`], the writer does the store's idle
//! work (merging the word index's segments), a short step at a time while
//! nothing is queued, so a write never waits behind more than one step.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::broadcast;

use super::{BUSY_TIMEOUT, Tx};
use crate::error::{Error, Result};
use crate::events::Event;

/// The most writes one commit holds: enough to take a burst of concurrent
/// turns in one go, few enough that the first of them does not wait long
/// behind the rest.
const MAX_BATCH: usize = 64;

/// How long the writer waits for writes before it does idle work: longer
/// than the gap between the writes of a burst (a client posting one message
/// after another), so a burst does not wait behind it.
const IDLE: Duration = Duration::from_millis(50);

/// Work the writer does when idle, one short step per call, each a
/// transaction of its own; says whether it did any (so more may remain).
pub(super) type IdleWork = fn(&mut Connection) -> Result<bool>;

/// A queued write.
pub(super) trait Job: Send {
    /// Runs inside the batch's transaction; says whether it succeeded, and
    /// leaves a way to hand its result over once the batch's fate is known.
    fn run(self: Box<Self>, tx: &mut Tx<'_>) -> (bool, Deliver);
    /// Tells the write it never ran, and why.
    fn refuse(self: Box<Self>, why: &rusqlite::Error);
}

/// Hands a write its result: `None` when its batch committed, or the
/// reason the commit failed.
pub(super) type Deliver = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

/// A write as the store's callers queue it: the work and who waits for it.
struct Queued<F, T> {
    work: F,
    done: tokio::sync::oneshot::Sender<Result<T>>,
}

impl<F, T> Job for Queued<F, T>
where
    T: Send + 'static,
    F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
{
    fn run(self: Box<Self>, tx: &mut Tx<'_>) -> (bool, Deliver) {
        let Queued { work, done } = *self;
        let out = catch_unwind(AssertUnwindSafe(|| work(tx)))
            .unwrap_or_else(|_| Err(Error::Internal("a store write panicked".into())));
        let ok = out.is_ok();
        let deliver: Deliver = Box::new(move |commit| {
            let out = match (out, commit) {
                (Ok(_), Some(e)) => Err(not_committed(e)),
                (out, _) => out,
            };
            // The caller may have stopped waiting; the write stands.
            let _ = done.send(out);
        });
        (ok, deliver)
    }

    fn refuse(self: Box<Self>, why: &rusqlite::Error) {
        let _ = self.done.send(Err(not_committed(why)));
    }
}

/// The handle the store keeps: writes here when the writer is free, queues
/// otherwise, and on drop lets the thread finish what is queued and close
/// the connection before it returns.
pub(super) struct Writer {
    shared: Arc<Shared>,
    jobs: Option<mpsc::Sender<Wake>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the callers and the writer thread share.
struct Shared {
    /// The write connection, held by whoever commits: the thread for a
    /// queued batch or its idle work, or a caller writing on its own.
    pen: Mutex<Connection>,
    live: broadcast::Sender<Arc<Event>>,
    /// Writes sent to the thread and not yet taken by it: while any wait,
    /// a caller queues behind them rather than overtaking them. (A batch
    /// taken may be overtaken: it had not begun, and writes made at once
    /// are in no order.)
    queued: AtomicUsize,
    /// When a caller last wrote on its own thread, for the thread's idle
    /// wait; and whether the thread knows there is idle work to do.
    last_write: Mutex<Instant>,
    idle_armed: AtomicBool,
}

/// What wakes the thread: a write to run, or word that writes happened
/// elsewhere (so idle work is due once they pause).
enum Wake {
    Write(Box<dyn Job>),
    Wrote,
}

impl Writer {
    /// Starts the writer thread on `conn` (migrated already); committed
    /// events go to `live`, and `idle` is run when writes pause.
    pub(super) fn start(
        conn: Connection,
        live: broadcast::Sender<Arc<Event>>,
        idle: Option<IdleWork>,
    ) -> Result<Self> {
        let (jobs, queue) = mpsc::channel();
        let shared = Arc::new(Shared {
            pen: Mutex::new(conn),
            live,
            queued: AtomicUsize::new(0),
            last_write: Mutex::new(Instant::now()),
            // A store just opened may have idle work left from before (an
            // index grown by an older Helm, or by a process that never
            // paused).
            idle_armed: AtomicBool::new(idle.is_some()),
        });
        let thread = std::thread::Builder::new()
            .name("helm-store-writer".into())
            .spawn({
                let shared = shared.clone();
                move || run(&shared, &queue, idle)
            })
            .map_err(|e| Error::Internal(format!("cannot start the store's writer: {e}")))?;
        Ok(Writer {
            shared,
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Runs `f` in a transaction and returns its result once committed (or
    /// the reason it was not). When nobody is writing and no write waits,
    /// it runs here, on the caller's thread: handing it to the writer's
    /// thread and back costs two thread wake-ups, more than a small write,
    /// most of all after an idle moment. Otherwise it joins the thread's
    /// next batch.
    pub(super) async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        self.submit(f, true).await
    }

    /// [`write`](Self::write) for a write that may take long (an import,
    /// a batch of vectors, a channel's deletion): always on the writer's
    /// thread, so it never holds up the caller's (a runtime worker).
    pub(super) async fn write_apart<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        self.submit(f, false).await
    }

    async fn submit<T, F>(&self, f: F, here: bool) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        let (done, mut result) = tokio::sync::oneshot::channel();
        let mut job: Box<dyn Job> = Box::new(Queued { work: f, done });
        if here && self.shared.queued.load(Ordering::Acquire) == 0 {
            match self.shared.write_here(job) {
                Ok(()) => {
                    self.wrote();
                    return result.try_recv().map_err(|_| stopped())?;
                }
                Err(busy) => job = busy,
            }
        }
        self.shared.queued.fetch_add(1, Ordering::AcqRel);
        if self
            .jobs
            .as_ref()
            .and_then(|jobs| jobs.send(Wake::Write(job)).ok())
            .is_none()
        {
            self.shared.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(stopped());
        }
        result.await.map_err(|_| stopped())?
    }

    /// Notes a write made here, and tells the thread once that idle work
    /// is due when writes pause.
    fn wrote(&self) {
        if let Ok(mut at) = self.shared.last_write.lock() {
            *at = Instant::now();
        }
        if !self.shared.idle_armed.swap(true, Ordering::AcqRel)
            && let Some(jobs) = &self.jobs
        {
            let _ = jobs.send(Wake::Wrote);
        }
    }
}

impl Shared {
    /// Commits `job` alone on this thread if the connection is free and
    /// the write lock is to be had at once; otherwise hands it back.
    fn write_here(&self, job: Box<dyn Job>) -> std::result::Result<(), Box<dyn Job>> {
        let conn = match self.pen.try_lock() {
            Ok(conn) => conn,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(job),
        };
        // Another process holding the write lock would keep this thread
        // (a runtime worker, likely) waiting: that wait is the writer
        // thread's to do.
        if conn.busy_timeout(Duration::ZERO).is_err() {
            return Err(job);
        }
        // Unchecked only in that it borrows the connection shared; holding
        // the pen, nothing else uses it.
        let began =
            rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate).ok();
        let Some(tx) = began else {
            let _ = conn.busy_timeout(BUSY_TIMEOUT);
            return Err(job);
        };
        if tx.busy_timeout(BUSY_TIMEOUT).is_err() {
            return Err(job);
        }
        commit_in(tx, &mut VecDeque::from([job]), &self.live);
        Ok(())
    }

    /// How long since a caller last wrote on its own thread.
    fn since_last_write(&self) -> Duration {
        self.last_write.lock().map_or(IDLE, |at| at.elapsed())
    }

    fn pen(&self) -> MutexGuard<'_, Connection> {
        self.pen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has run what is queued;
        // joining it means the connection is closed (and the WAL
        // checkpointed) before a caller reopens or removes the database.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            // A write that held the last handle to the store ends it from
            // the writer's own thread, which must not wait for itself.
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

fn stopped() -> Error {
    Error::Internal("the store's writer has stopped".into())
}

fn not_committed(e: &rusqlite::Error) -> Error {
    Error::Store {
        message: format!("the write was not committed: {e}"),
        source: None,
    }
}

/// The writer thread: waits for a write, takes every other one queued by
/// then, and commits them together, until the store is dropped.
fn run(shared: &Shared, queue: &mpsc::Receiver<Wake>, idle: Option<IdleWork>) {
    while let Some(first) = next(shared, queue, idle) {
        let mut batch = VecDeque::from([first]);
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(Wake::Write(job)) => batch.push_back(job),
                Ok(Wake::Wrote) => {}
                Err(_) => break,
            }
        }
        shared.queued.fetch_sub(batch.len(), Ordering::AcqRel);
        let mut conn = shared.pen();
        while !batch.is_empty() {
            commit(&mut conn, &mut batch, &shared.live);
        }
        drop(conn);
        shared.idle_armed.store(idle.is_some(), Ordering::Release);
    }
}

/// The next write for the thread, or `None` once the store is dropped.
/// While there is idle work and no write comes for [`IDLE`] (neither
/// queued nor made by a caller on its own thread), it is done step by step
/// until none is left or a write arrives.
fn next(
    shared: &Shared,
    queue: &mpsc::Receiver<Wake>,
    idle: Option<IdleWork>,
) -> Option<Box<dyn Job>> {
    loop {
        let step = idle.filter(|_| shared.idle_armed.load(Ordering::Acquire));
        let Some(step) = step else {
            match queue.recv().ok()? {
                Wake::Write(job) => return Some(job),
                Wake::Wrote => continue,
            }
        };
        match queue.recv_timeout(IDLE) {
            Ok(Wake::Write(job)) => return Some(job),
            Ok(Wake::Wrote) => continue,
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if shared.since_last_write() < IDLE {
            continue;
        }
        loop {
            let began = Instant::now();
            let mut conn = shared.pen();
            let done = catch_unwind(AssertUnwindSafe(|| step(&mut conn)))
                .unwrap_or_else(|_| Err(Error::Internal("the store's idle work panicked".into())));
            drop(conn);
            let more = done.unwrap_or_else(|e| {
                // Idle work only tidies, and the next write arms it again:
                // a failure (another process holding the lock) waits till then.
                tracing::debug!(error = %e, "the store's idle work failed");
                false
            });
            if !more {
                // A write made here meanwhile saw the work armed and did
                // not say so: it arms the work again.
                let wrote_since = shared.since_last_write() < began.elapsed();
                shared.idle_armed.store(wrote_since, Ordering::Release);
                break;
            }
            match queue.try_recv() {
                Ok(Wake::Write(job)) => return Some(job),
                Ok(Wake::Wrote) => {}
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            if shared.since_last_write() < IDLE {
                break;
            }
        }
    }
}

/// Begins an immediate transaction and commits writes from the front of
/// `batch` in it (see [`commit_in`]); if it cannot begin, every write in
/// `batch` is told why.
fn commit(
    conn: &mut Connection,
    batch: &mut VecDeque<Box<dyn Job>>,
    live: &broadcast::Sender<Arc<Event>>,
) {
    match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => commit_in(tx, batch, live),
        Err(e) => {
            for job in batch.drain(..) {
                job.refuse(&e);
            }
        }
    }
}

/// Runs writes from the front of `batch` in `tx` and commits it. Normally
/// that is all of them; if a failure ended the transaction itself (SQLite
/// rolls back on some I/O errors), the writes run so far get that failure
/// and the rest stay in `batch` for the next transaction. Every call takes
/// at least one write off `batch`.
fn commit_in(
    tx: rusqlite::Transaction<'_>,
    batch: &mut VecDeque<Box<dyn Job>>,
    live: &broadcast::Sender<Arc<Event>>,
) {
    // Alone, a write needs no savepoint: its failure rolls back everything.
    let alone = batch.len() == 1;
    let mut events = Vec::new();
    let mut delivers = Vec::with_capacity(batch.len());
    let mut broken = None;
    while let Some(job) = batch.pop_front() {
        if !alone && let Err(e) = tx.execute_batch("SAVEPOINT job") {
            // Refused, not put back: each transaction takes at least one
            // write off the queue, so a failure that repeats cannot loop.
            job.refuse(&e);
            broken = Some(e);
            break;
        }
        let mut work = Tx {
            conn: &tx,
            events: Vec::new(),
        };
        let (ok, deliver) = job.run(&mut work);
        delivers.push(deliver);
        if alone {
            events = work.events;
            if !ok {
                // Its error is its result; nothing of it stays.
                drop(tx);
                finish(delivers, None);
                return;
            }
            break;
        }
        let end = if ok {
            events.extend(work.events);
            tx.execute_batch("RELEASE job")
        } else {
            tx.execute_batch("ROLLBACK TO job; RELEASE job")
        };
        if let Err(e) = end {
            broken = Some(e);
            break;
        }
    }
    if let Some(e) = broken {
        // The transaction is gone or unusable: none of it commits.
        drop(tx);
        finish(delivers, Some(&e));
        return;
    }
    match tx.commit() {
        Ok(()) => {
            for event in events {
                // No receivers is fine: nobody is listening live.
                let _ = live.send(Arc::new(event));
            }
            finish(delivers, None);
        }
        Err(e) => finish(delivers, Some(&e)),
    }
}

fn finish(delivers: Vec<Deliver>, failure: Option<&rusqlite::Error>) {
    for deliver in delivers {
        deliver(failure);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBody;
    use crate::model::MessageId;

    /// A migrated write connection with scratch tables `t` (for writes)
    /// and `idle_steps` (for idle work).
    fn connection(dir: &tempfile::TempDir) -> Result<Connection> {
        let mut conn = Connection::open(dir.path().join("helm.db"))?;
        super::super::configure(&conn, false)?;
        super::super::schema::migrate(&mut conn)?;
        conn.execute_batch(
            "CREATE TABLE t (x INTEGER PRIMARY KEY); \
             CREATE TABLE idle_steps (n INTEGER PRIMARY KEY)",
        )?;
        Ok(conn)
    }

    /// A writer thread on a fresh database in `dir` (nobody listening
    /// live), and the database's path.
    fn started(dir: &tempfile::TempDir) -> Result<(Arc<Writer>, std::path::PathBuf)> {
        let (live, _) = broadcast::channel(16);
        let writer = Writer::start(connection(dir)?, live, None)?;
        Ok((Arc::new(writer), dir.path().join("helm.db")))
    }

    /// Holds the writer's connection from a thread of its own until the
    /// returned sender is used or dropped: writes made meanwhile queue for
    /// the writer thread.
    fn hold_pen(writer: &Writer) -> std::sync::mpsc::Sender<()> {
        let shared = writer.shared.clone();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let (held, holding) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _pen = shared.pen();
            let _ = held.send(());
            let _ = wait.recv();
        });
        let _ = holding.recv();
        release
    }

    /// Lets the writes just spawned run up to their wait: on the test's
    /// one runtime thread they run at its first pause, and with the
    /// connection held they queue for the writer thread.
    async fn queued() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    /// A write that inserts `x` and says on which thread it ran.
    async fn insert_where(writer: &Writer, x: i64) -> Result<std::thread::ThreadId> {
        writer
            .write(move |tx| {
                tx.conn().execute("INSERT INTO t (x) VALUES (?1)", [x])?;
                Ok(std::thread::current().id())
            })
            .await
    }

    fn tempdir() -> Result<tempfile::TempDir> {
        tempfile::tempdir().map_err(|e| Error::Internal(e.to_string()))
    }

    /// A write that inserts `x` into `t` and emits a delta event saying
    /// `x`, then fails with `fail` if given (after its work is done, so
    /// only the rollback can undo it), or panics on `x == 0`.
    fn insert(
        x: i64,
        fail: Option<&'static str>,
    ) -> (Box<dyn Job>, tokio::sync::oneshot::Receiver<Result<i64>>) {
        let (done, result) = tokio::sync::oneshot::channel();
        let work = move |tx: &mut Tx<'_>| -> Result<i64> {
            tx.conn().execute("INSERT INTO t (x) VALUES (?1)", [x])?;
            tx.emit(
                None,
                EventBody::MessageDelta {
                    message_id: MessageId(1),
                    thread_id: None,
                    text: x.to_string(),
                    offset: 0,
                },
            )?;
            assert!(x != 0, "a write that panics");
            match fail {
                Some(why) => Err(Error::Internal(why.into())),
                None => Ok(x),
            }
        };
        (Box::new(Queued { work, done }), result)
    }

    fn rows(conn: &Connection) -> Result<Vec<i64>> {
        let mut stmt = conn.prepare("SELECT x FROM t ORDER BY x")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn published(feed: &mut broadcast::Receiver<Arc<Event>>) -> Vec<(u64, String)> {
        std::iter::from_fn(|| feed.try_recv().ok())
            .filter_map(|e| match &e.body {
                EventBody::MessageDelta { text, .. } => Some((e.seq, text.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_failed_write_is_undone_alone_and_the_rest_of_its_batch_commits() -> Result<()> {
        let dir = tempdir()?;
        let mut conn = connection(&dir)?;
        let (live, mut feed) = broadcast::channel(16);
        let (a, a_out) = insert(1, None);
        let (b, b_out) = insert(2, Some("the second write fails"));
        let (c, c_out) = insert(0, None);
        let (d, d_out) = insert(4, None);
        let mut batch = VecDeque::from([a, b, c, d]);
        commit(&mut conn, &mut batch, &live);

        assert!(batch.is_empty());
        assert_eq!(rows(&conn)?, [1, 4]);
        assert_eq!(a_out.blocking_recv().map_err(|_| stopped())??, 1);
        let b = b_out.blocking_recv().map_err(|_| stopped())?;
        assert!(
            matches!(&b, Err(Error::Internal(m)) if m == "the second write fails"),
            "{b:?}"
        );
        let c = c_out.blocking_recv().map_err(|_| stopped())?;
        assert!(
            matches!(&c, Err(Error::Internal(m)) if m.contains("panicked")),
            "{c:?}"
        );
        assert_eq!(d_out.blocking_recv().map_err(|_| stopped())??, 4);
        // Only the committed writes' events go out, in seq order.
        let events = published(&mut feed);
        let texts: Vec<&str> = events.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["1", "4"]);
        assert!(events[0].0 < events[1].0);
        Ok(())
    }

    #[test]
    fn a_write_alone_that_fails_leaves_nothing() -> Result<()> {
        let dir = tempdir()?;
        let mut conn = connection(&dir)?;
        let (live, mut feed) = broadcast::channel(16);
        let (a, a_out) = insert(7, Some("no"));
        commit(&mut conn, &mut VecDeque::from([a]), &live);
        assert!(a_out.blocking_recv().map_err(|_| stopped())?.is_err());
        assert_eq!(rows(&conn)?, Vec::<i64>::new());
        assert!(published(&mut feed).is_empty());
        // The connection is usable again: the next write commits.
        let (b, b_out) = insert(8, None);
        commit(&mut conn, &mut VecDeque::from([b]), &live);
        assert_eq!(b_out.blocking_recv().map_err(|_| stopped())??, 8);
        assert_eq!(rows(&conn)?, [8]);
        Ok(())
    }

    #[test]
    fn writes_that_cannot_begin_are_told_why_and_none_runs() -> Result<()> {
        let dir = tempdir()?;
        let mut conn = connection(&dir)?;
        // Another connection holds the write lock; a zero busy timeout
        // makes ours give up at once.
        let other = Connection::open(dir.path().join("helm.db"))?;
        other.execute_batch("BEGIN IMMEDIATE")?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        let (live, _feed) = broadcast::channel(16);
        let (a, a_out) = insert(1, None);
        let (b, b_out) = insert(2, None);
        commit(&mut conn, &mut VecDeque::from([a, b]), &live);
        for out in [a_out, b_out] {
            let out = out.blocking_recv().map_err(|_| stopped())?;
            assert!(
                matches!(&out, Err(Error::Store { message, .. }) if message.contains("not committed")),
                "{out:?}"
            );
        }
        other.execute_batch("ROLLBACK")?;
        assert_eq!(rows(&conn)?, Vec::<i64>::new());
        Ok(())
    }

    #[tokio::test]
    async fn writes_queued_together_commit_together_and_each_hears_after_its_commit() -> Result<()>
    {
        let dir = tempdir()?;
        let (writer, path) = started(&dir)?;
        // The first write goes to the writer thread (the connection is
        // held when it is made) and holds it until the others are queued.
        let pen = hold_pen(&writer);
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let first = {
            let writer = writer.clone();
            tokio::spawn(async move {
                writer
                    .write(move |tx| {
                        let _ = started.send(());
                        let _ = held.recv();
                        tx.conn().execute("INSERT INTO t (x) VALUES (0)", [])?;
                        Ok(())
                    })
                    .await
            })
        };
        queued().await;
        drop(pen);
        running.await.map_err(|_| stopped())?;
        let queued: Vec<_> = (1..=20)
            .map(|x| {
                let (writer, path) = (writer.clone(), path.clone());
                tokio::spawn(async move {
                    writer
                        .write(move |tx| {
                            tx.conn().execute("INSERT INTO t (x) VALUES (?1)", [x])?;
                            let count = "SELECT count(*) FROM t";
                            let inside: i64 = tx.conn().query_row(count, [], |r| r.get(0))?;
                            let outside: i64 =
                                Connection::open(&path)?.query_row(count, [], |r| r.get(0))?;
                            Ok((x, inside, outside))
                        })
                        .await
                })
            })
            .collect();
        // Let every write reach the queue, then release the first.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let _ = release.send(());
        first.await.map_err(|e| Error::Internal(e.to_string()))??;
        let outside = Connection::open(&path)?;
        let mut insides = Vec::new();
        for task in queued {
            let (x, inside, seen_outside) =
                task.await.map_err(|e| Error::Internal(e.to_string()))??;
            // One transaction: nobody outside saw the writes queued before
            // it (only the first write had committed)...
            assert_eq!(seen_outside, 1, "write {x}");
            insides.push(inside);
            // ...and when its caller hears, it is committed for everyone.
            let there: i64 =
                outside.query_row("SELECT count(*) FROM t WHERE x = ?1", [x], |r| r.get(0))?;
            assert_eq!(there, 1, "write {x}");
        }
        // ...while inside it each saw every write run before it.
        insides.sort_unstable();
        assert_eq!(insides, (2..=21).collect::<Vec<i64>>());
        assert_eq!(rows(&outside)?.len(), 21);
        Ok(())
    }

    #[tokio::test]
    async fn a_write_holding_the_last_handle_to_the_store_still_commits() -> Result<()> {
        let dir = tempdir()?;
        let (writer, path) = started(&dir)?;
        // A write on the writer thread whose work holds a handle and waits
        // at a gate, and whose caller gives up while it waits.
        let pen = hold_pen(&writer);
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let last = writer.clone();
        let caller = tokio::spawn({
            let writer = writer.clone();
            async move {
                writer
                    .write(move |tx| {
                        let _ = started.send(());
                        let _ = gate.recv();
                        tx.conn().execute("INSERT INTO t (x) VALUES (5)", [])?;
                        // The last handle to the store ends here, on the
                        // writer's own thread.
                        drop(last);
                        Ok(())
                    })
                    .await
            }
        });
        queued().await;
        drop(pen);
        running.await.map_err(|_| stopped())?;
        caller.abort();
        let _ = caller.await;
        drop(writer);
        let _ = open.send(());
        // The writer's connection closes (the WAL goes with the last
        // connection) and the write it ran is committed.
        let wal = dir.path().join("helm.db-wal");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while wal.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(!wal.exists(), "the writer's connection is still open");
        assert_eq!(rows(&Connection::open(&path)?)?, [5]);
        Ok(())
    }

    #[tokio::test]
    async fn a_write_with_the_writer_free_runs_on_the_callers_thread() -> Result<()> {
        let dir = tempdir()?;
        let (writer, path) = started(&dir)?;
        let here = std::thread::current().id();
        assert_eq!(insert_where(&writer, 1).await?, here);
        assert_eq!(insert_where(&writer, 2).await?, here);
        // Committed when the caller hears, as on the writer thread.
        assert_eq!(rows(&Connection::open(&path)?)?, [1, 2]);
        // With the connection held, the next write waits for the thread.
        let pen = hold_pen(&writer);
        let later = tokio::spawn({
            let writer = writer.clone();
            async move { insert_where(&writer, 3).await }
        });
        queued().await;
        drop(pen);
        let there = later.await.map_err(|e| Error::Internal(e.to_string()))??;
        assert_ne!(there, here);
        assert_eq!(rows(&Connection::open(&path)?)?, [1, 2, 3]);
        Ok(())
    }

    #[tokio::test]
    async fn a_write_while_another_process_writes_waits_on_the_writer_thread() -> Result<()> {
        let dir = tempdir()?;
        let (writer, path) = started(&dir)?;
        // Another connection holds the write lock: a caller's thread does
        // not wait for it...
        let other = Connection::open(&path)?;
        other.execute_batch("BEGIN IMMEDIATE; INSERT INTO t (x) VALUES (1)")?;
        let waiting = tokio::spawn({
            let writer = writer.clone();
            async move { insert_where(&writer, 2).await }
        });
        queued().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished());
        // ...the writer thread does, for as long as the busy timeout lets
        // it, and commits once the lock is free.
        other.execute_batch("COMMIT")?;
        let there = waiting
            .await
            .map_err(|e| Error::Internal(e.to_string()))??;
        assert_ne!(there, std::thread::current().id());
        assert_eq!(rows(&other)?, [1, 2]);
        // The connection kept its busy timeout.
        let timeout: i64 = writer
            .shared
            .pen()
            .pragma_query_value(None, "busy_timeout", |r| r.get(0))?;
        assert_eq!(u128::try_from(timeout).ok(), Some(BUSY_TIMEOUT.as_millis()));
        Ok(())
    }

    /// Idle work in rounds of 30 steps of 10 ms each; each step records
    /// itself in `idle_steps`.
    fn thirty_slow_steps(conn: &mut Connection) -> Result<bool> {
        let tx = conn.transaction()?;
        tx.execute("INSERT INTO idle_steps DEFAULT VALUES", [])?;
        std::thread::sleep(Duration::from_millis(10));
        let done: i64 = tx.query_row("SELECT count(*) FROM idle_steps", [], |r| r.get(0))?;
        tx.commit()?;
        Ok(done % 30 != 0)
    }

    fn idle_steps(path: &std::path::Path) -> Result<i64> {
        Ok(Connection::open(path)?
            .query_row("SELECT count(*) FROM idle_steps", [], |r| r.get(0))?)
    }

    /// Waits (up to 10 s) until `idle_steps` holds `n` rows.
    async fn steps_reach(path: &std::path::Path, n: i64) -> Result<i64> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut steps = idle_steps(path)?;
        while steps < n && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
            steps = idle_steps(path)?;
        }
        Ok(steps)
    }

    #[tokio::test]
    async fn idle_work_runs_while_writes_pause_and_a_write_goes_before_its_next_step() -> Result<()>
    {
        let dir = tempdir()?;
        let (live, _) = broadcast::channel(16);
        let writer = Writer::start(connection(&dir)?, live, Some(thirty_slow_steps))?;
        let path = dir.path().join("helm.db");
        // A store just opened does its idle work once writes pause.
        assert!(steps_reach(&path, 1).await? >= 1, "idle work began");
        // A write in the middle of it waits for one step at most.
        let seen = writer
            .write(|tx| {
                tx.conn().execute("INSERT INTO t (x) VALUES (1)", [])?;
                Ok(tx
                    .conn()
                    .query_row("SELECT count(*) FROM idle_steps", [], |r| {
                        r.get::<_, i64>(0)
                    })?)
            })
            .await?;
        assert!(
            seen < 30,
            "the write ran before the idle work ended ({seen} steps)"
        );
        // The work goes on after it, and ends when a step says it is done.
        assert_eq!(steps_reach(&path, 30).await?, 30);
        tokio::time::sleep(IDLE * 4).await;
        assert_eq!(idle_steps(&path)?, 30, "nothing runs once the work is done");
        // The next write arms it again.
        writer
            .write(|tx| Ok(tx.conn().execute("INSERT INTO t (x) VALUES (2)", [])?))
            .await?;
        assert_eq!(steps_reach(&path, 60).await?, 60);
        assert_eq!(rows(&Connection::open(&path)?)?, [1, 2]);
        Ok(())
    }
}

//! `SqliteStore`: the embedded default store.
//!
//! One writer connection, on a thread of its own, runs every write (SQLite
//! allows one writer anyway) and commits the writes queued together in one
//! transaction (`writer`); a small pool of read-only connections serves
//! reads concurrently under WAL on tokio's blocking threads. So async
//! callers never stall the runtime. Events are published by the writer
//! after each commit and before the next, which keeps the live feed in
//! exactly `seq` order.

mod artifacts;
mod audit;
mod auth;
mod authority;
mod channels;
mod codec;
mod errors;
mod escalations;
mod events;
mod impls;
mod import;
mod mcp_pins;
mod members;
mod memory;
mod messages;
mod ot_keys;
mod policy;
mod providers;
mod reading;
mod recall;
mod schema;
mod summaries;
mod threads;
mod tool_actions;
mod turns;
mod workspace;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::broadcast;

use crate::error::{Error, Result};
use crate::events::{Event, EventBody};
use crate::model::ChannelId;

/// How many live events a slow subscriber may fall behind before it lags
/// (and must resume from the durable log).
const LIVE_CAPACITY: usize = 8192;
/// Read connections: at most this many reads run at once, each on a
/// connection kept open for the next. More would only queue on two cores
/// as threads; waiting here costs a task, and no read opens a connection
/// (and parses the schema) because the pool was momentarily empty.
const MAX_READERS: usize = 8;
/// How long a connection waits for a lock held by another process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The SQLite implementation of [`Store`].
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// Bytes of the database file each reader maps into memory
    /// (`PRAGMA mmap_size`); 0 reads through SQLite's page cache.
    read_map: u64,
    /// The one write connection's thread. Writes waiting their turn wait
    /// as tasks, not as parked blocking threads.
    writer: writer::Writer,
    readers: Mutex<Vec<Connection>>,
    /// A permit per read in flight (`MAX_READERS`).
    reader_slots: tokio::sync::Semaphore,
    live: broadcast::Sender<Arc<Event>>,
}

/// A write transaction that also collects the events it emits, to be
/// published once it commits.
pub(crate) struct Tx<'c> {
    conn: &'c Connection,
    events: Vec<Event>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and brings its schema
    /// up to date. Runs on a blocking thread.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_mapped(path, 0).await
    }

    /// Like [`open`](Self::open), with each reader mapping up to
    /// `read_map` bytes of the file into memory: a read then finds its
    /// pages in the map instead of asking the kernel for each one (recall's
    /// reads of a large channel's items take about 40% less time). Mapped
    /// pages the readers touch count in the process's resident memory, once
    /// per reader, up to `read_map` each.
    pub async fn open_mapped(path: impl AsRef<Path>, read_map: u64) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        tokio::task::spawn_blocking(move || Self::open_blocking(path, read_map))
            .await
            .map_err(|e| Error::Internal(format!("store open task failed: {e}")))?
    }

    fn open_blocking(path: PathBuf, read_map: u64) -> Result<Self> {
        let mut writer = Connection::open(&path).map_err(|e| {
            Error::store(format_args!("cannot open database {}", path.display()), e)
        })?;
        configure(&writer, false)?;
        schema::migrate(&mut writer)?;
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        let writer =
            writer::Writer::start(writer, live.clone(), Some(recall::merging::merge_step))?;
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                read_map,
                writer,
                readers: Mutex::new(Vec::new()),
                reader_slots: tokio::sync::Semaphore::new(MAX_READERS),
                live,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The schema version (the number of migrations applied).
    pub async fn schema_version(&self) -> Result<i64> {
        self.read(|c| Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?))
            .await
    }

    /// Runs `f` on a read-only connection on a blocking thread.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        let _slot = self.reader_slot().await?;
        tokio::task::spawn_blocking(move || inner.with_reader(f))
            .await
            .map_err(|e| Error::Internal(format!("store read task failed: {e}")))?
    }

    /// A permit for one read in flight (`MAX_READERS` at once).
    async fn reader_slot(&self) -> Result<tokio::sync::SemaphorePermit<'_>> {
        self.inner
            .reader_slots
            .acquire()
            .await
            .map_err(|_| Error::Internal("the store's readers are closed".into()))
    }

    /// Runs `f` on a read-only connection right here, on the caller's
    /// thread: for reads by key that touch a handful of cached pages.
    /// Handing such a read to a blocking thread and back costs two thread
    /// wake-ups, each more than the read itself, and after an idle moment a
    /// wake-up is what a post waits on most.
    pub(crate) async fn read_here<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Connection) -> Result<T>,
    {
        let _slot = self.reader_slot().await?;
        self.inner.with_reader(f)
    }

    /// Runs `f` in an immediate write transaction: on the caller's thread
    /// when the writer is free, else on the writer's thread together with
    /// the other writes queued by then, each in a savepoint of its own;
    /// returns after the commit, once the events `f` emitted are published.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        self.inner.writer.write(f).await
    }

    /// [`write`](Self::write) for a write that may take long (an import,
    /// a batch of vectors, a channel's deletion): it always runs on the
    /// writer's thread, never on the caller's.
    pub(crate) async fn write_apart<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Tx<'_>) -> Result<T> + Send + 'static,
    {
        self.inner.writer.write_apart(f).await
    }
}

impl Tx<'_> {
    /// The connection inside the transaction.
    pub(crate) fn conn(&self) -> &Connection {
        self.conn
    }

    /// Appends an event to the durable log; it is published after commit.
    pub(crate) fn emit(&mut self, channel_id: Option<ChannelId>, body: EventBody) -> Result<Event> {
        let event = events::append(self.conn, channel_id, body)?;
        self.events.push(event.clone());
        Ok(event)
    }
}

impl Inner {
    /// Runs `f` on a pooled reader (the caller holds a reader slot).
    fn with_reader<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self.take_reader()?;
        let out = f(&conn);
        self.return_reader(conn);
        out
    }

    fn take_reader(&self) -> Result<Connection> {
        if let Some(conn) = lock(&self.readers)?.pop() {
            return Ok(conn);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(|e| Error::store(format_args!("cannot open {}", self.path.display()), e))?;
        configure(&conn, true)?;
        if self.read_map > 0 {
            conn.pragma_update(
                None,
                "mmap_size",
                i64::try_from(self.read_map).unwrap_or(i64::MAX),
            )?;
        }
        Ok(conn)
    }

    fn return_reader(&self, conn: Connection) {
        if let Ok(mut pool) = self.readers.lock()
            && pool.len() < MAX_READERS
        {
            pool.push(conn);
        }
    }
}

/// `conn.execute(sql, params)` with the statement kept prepared for the
/// next call: for the writes every turn makes, where preparing again each
/// time costs more than the write.
pub(crate) fn execute_cached(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<usize> {
    Ok(conn.prepare_cached(sql)?.execute(params)?)
}

fn lock<T>(m: &Mutex<T>) -> Result<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| Error::Internal("a store thread panicked while holding a connection".into()))
}

fn configure(conn: &Connection, read_only: bool) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if !read_only {
        // WAL lets readers run beside the writer; NORMAL sync is durable across
        // process crashes and loses at most the last commits on power loss.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.set_prepared_statement_cache_capacity(64);
    // Cached statements must stay prepared. Without the query planner
    // stability guarantee, SQLite lets a plan depend on a bound value
    // wherever a parameter meets a partial index's condition (and in FTS5's
    // own lookups), and then re-prepares the statement every time that
    // parameter is bound again: about 31 re-prepares per turn, 12-17% of a
    // turn's CPU (issue 15; 937 in 30 turns under gdb, 14 with this, all
    // from a new channel's word index changing the schema). Plans here never
    // need a bound value: partial indexes are met by literals in the SQL.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    // Recall ranks the shared word index per channel with this function.
    recall::words::prepare(conn)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, StatementStatus};

    /// Runs the tool journal's partial-index lookup with ten bindings and
    /// returns how often SQLite re-prepared it.
    fn reprepares(conn: &Connection) -> rusqlite::Result<i32> {
        conn.execute_batch(
            "CREATE TABLE a (id INTEGER PRIMARY KEY, turn_id INTEGER, status TEXT);
             CREATE INDEX a_running ON a(turn_id) WHERE status = 'running';
             INSERT INTO a (turn_id, status) VALUES (1, 'running'), (2, 'done');",
        )?;
        let sql = "SELECT id FROM a WHERE status = 'running' AND turn_id = ?1 ORDER BY id";
        for turn in 0..10 {
            conn.prepare_cached(sql)?
                .query_map([turn], |r| r.get::<_, i64>(0))?
                .for_each(drop);
        }
        Ok(conn
            .prepare_cached(sql)?
            .get_status(StatementStatus::RePrepare))
    }

    #[test]
    fn cached_statements_stay_prepared_across_bindings() -> crate::error::Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        let plain = Connection::open(dir.path().join("plain.db"))?;
        assert!(
            reprepares(&plain)? > 0,
            "SQLite's default re-prepares on every binding (what this guards against)"
        );
        let ours = Connection::open(dir.path().join("ours.db"))?;
        super::configure(&ours, false)?;
        assert_eq!(reprepares(&ours)?, 0);
        Ok(())
    }

    /// What the readers of a store opened with `read_map` report as their
    /// map size, and a read through them.
    async fn reader_map(read_map: u64) -> crate::error::Result<(i64, i64)> {
        let dir = tempfile::tempdir().map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        let store = super::SqliteStore::open_mapped(dir.path().join("helm.db"), read_map).await?;
        store
            .read(|c| {
                let map = c.pragma_query_value(None, "mmap_size", |r| r.get(0))?;
                let tables = c.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
                Ok((map, tables))
            })
            .await
    }

    #[tokio::test]
    async fn readers_map_the_file_only_when_asked() -> crate::error::Result<()> {
        let (unmapped, tables) = reader_map(0).await?;
        assert_eq!(unmapped, 0);
        assert!(tables > 0, "the schema is read through an unmapped reader");
        let (mapped, mapped_tables) = reader_map(8 << 20).await?;
        assert_eq!(mapped, 8 << 20);
        assert_eq!(
            mapped_tables, tables,
            "a mapped reader reads the same schema"
        );
        Ok(())
    }
}

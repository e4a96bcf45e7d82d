//! Terminals: interactive shells on PTYs, rooted at a computer's workspace
//! and under the same isolation as its commands (`bwrap … -- setpriv … --
//! bash -l` on the PTY under bubblewrap).
//!
//! A session lives as long as its shell, whoever watches: viewers attach
//! with [`TerminalSession::subscribe`] (the scrollback, then live output), a
//! second viewer or a reconnect sees what happened before it came. The
//! [`TerminalManager`] keeps the sessions, enforces the per-channel and
//! per-workspace limits, and kills everything left when it goes away.

mod port;
mod session;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use port::{LocalTerminals, Terminals};
pub(crate) use session::{Feed, ToRemote};
pub use session::{
    TerminalEvent, TerminalInfo, TerminalSession, TerminalSize, TerminalSubscription,
};

use super::computer::{Computer, TerminalLimits};
use super::local::LocalExecutor;
use super::sandbox::Purpose;
use crate::error::{Error, Result};
use crate::model::ChannelId;

/// How long closing a terminal waits for its shell to be reaped.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Where a terminal id's node number starts: ids are the number of the
/// node whose memory keeps the terminal above 32 bits of their own, so
/// that any node of a shared store can tell where a terminal is.
const NODE_SHIFT: u32 = 32;

/// The number of the node that keeps terminal `id` (0 on a store one
/// node holds alone).
pub fn terminal_node(id: u64) -> u32 {
    // The shift leaves at most 32 bits.
    u32::try_from(id >> NODE_SHIFT).unwrap_or(u32::MAX)
}

/// Where this run's ids start within a node's 32 bits: the start time in
/// seconds (20 bits, wrapping every 12 days), times 4096. A page left open
/// across a restart asks for the id its terminal had; were ids counted from
/// 1 again, that id would be a new shell of another channel. A run would
/// reach the ids of one started a second later only after 4,096 terminals.
fn first_id_of_run() -> u64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    ((secs & 0xF_FFFF) << 12) + 1
}

/// The open terminals of a workspace.
pub struct TerminalManager {
    limits: TerminalLimits,
    sessions: Mutex<BTreeMap<u64, Arc<TerminalSession>>>,
    /// Who opened each terminal, for the per-person limits.
    openers: Mutex<BTreeMap<u64, Opener>>,
    /// The last number given in each channel (see [`TerminalInfo::number`]).
    numbers: Mutex<BTreeMap<Option<ChannelId>, u32>>,
    next_id: AtomicU64,
}

/// Who opens a terminal, for the limits that keep one person from taking
/// them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opener {
    /// The person.
    pub user: crate::model::UserId,
    /// Whether they are the Captain or an admin (no per-person limit, and
    /// the reserve is theirs).
    pub admin: bool,
}

impl std::fmt::Debug for TerminalManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalManager")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl TerminalManager {
    /// No terminals yet, with these limits.
    pub fn new(limits: TerminalLimits) -> Self {
        Self::for_node(limits, 0)
    }

    /// No terminals yet, with these limits, on the node numbered `node`
    /// (whose number the ids carry; see [`terminal_node`]).
    pub fn for_node(limits: TerminalLimits, node: u32) -> Self {
        TerminalManager {
            limits,
            sessions: Mutex::new(BTreeMap::new()),
            openers: Mutex::new(BTreeMap::new()),
            numbers: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new((u64::from(node) << NODE_SHIFT) + first_id_of_run()),
        }
    }

    /// Opens a terminal in `computer`: a login shell in its workspace.
    pub async fn open(
        &self,
        executor: &LocalExecutor,
        computer: &Computer,
        size: TerminalSize,
    ) -> Result<Arc<TerminalSession>> {
        self.open_as(executor, computer, size, None).await
    }

    /// Opens a terminal for `opener`, within the per-person limits: a
    /// member holds at most `per_person`, and members together leave
    /// `admin_reserve` of the workspace's terminals, and one of each
    /// channel's, to the Captain and admins.
    pub async fn open_as(
        &self,
        executor: &LocalExecutor,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
    ) -> Result<Arc<TerminalSession>> {
        self.check_open(size, computer.channel, opener)?;
        let launch = executor.launch(computer, Purpose::Terminal, &[]).await?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut sessions = self.lock()?;
        self.admit(&sessions, id, computer.channel, opener)?;
        let session = TerminalSession::spawn(
            id,
            computer.channel,
            computer.isolation,
            launch,
            size,
            self.limits.scrollback_bytes,
            executor.ledger(),
        )?;
        self.enlist(&mut sessions, session.clone(), opener);
        Ok(session)
    }

    /// Opens a terminal that `open` makes (on another host) under the
    /// same limits as [`open_as`](Self::open_as). `open` gets the new id
    /// and runs without the table's lock; a terminal it made that the
    /// limits no longer allow (another open raced it) is closed again.
    pub(crate) async fn open_with<F, Fut>(
        &self,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
        open: F,
    ) -> Result<Arc<TerminalSession>>
    where
        F: FnOnce(u64, usize) -> Fut,
        Fut: std::future::Future<Output = Result<Arc<TerminalSession>>>,
    {
        self.check_open(size, computer.channel, opener)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let session = open(id, self.limits.scrollback_bytes).await?;
        let mut sessions = self.lock()?;
        if let Err(e) = self.admit(&sessions, id, computer.channel, opener) {
            session.kill_now();
            return Err(e);
        }
        self.enlist(&mut sessions, session.clone(), opener);
        Ok(session)
    }

    /// Keeps an admitted terminal: who opened it, its number in its channel.
    fn enlist(
        &self,
        sessions: &mut BTreeMap<u64, Arc<TerminalSession>>,
        session: Arc<TerminalSession>,
        opener: Option<Opener>,
    ) {
        if let Some(opener) = opener {
            session.opened_by(opener.user);
        }
        if let Ok(mut numbers) = self.numbers.lock() {
            let last = numbers.entry(session.channel()).or_insert(0);
            *last += 1;
            session.numbered(*last);
        }
        sessions.insert(session.id(), session);
    }

    /// What an open checks before it makes anything: the size, and the
    /// limits as they stand.
    fn check_open(
        &self,
        size: TerminalSize,
        channel: Option<ChannelId>,
        opener: Option<Opener>,
    ) -> Result<()> {
        if size.rows == 0 || size.cols == 0 {
            return Err(Error::invalid(
                "terminal size",
                "rows and columns must be at least 1",
            ));
        }
        self.check_limits(channel)?;
        self.check_person(opener, channel)
    }

    /// The limits checked again under the table's lock (another open may
    /// have raced this one), and terminal `id` counted as `opener`'s.
    fn admit(
        &self,
        sessions: &BTreeMap<u64, Arc<TerminalSession>>,
        id: u64,
        channel: Option<ChannelId>,
        opener: Option<Opener>,
    ) -> Result<()> {
        check(sessions, &self.limits, channel)?;
        if let Some(opener) = opener {
            let mut openers = self
                .openers
                .lock()
                .map_err(|_| Error::Internal("the terminal table was poisoned".into()))?;
            check_person(sessions, &openers, &self.limits, opener, channel)?;
            openers.insert(id, opener);
        }
        Ok(())
    }

    /// A running terminal by id.
    pub fn get(&self, id: u64) -> Result<Arc<TerminalSession>> {
        self.lock()?
            .get(&id)
            .filter(|s| s.is_running())
            .cloned()
            .ok_or_else(|| Error::not_found("terminal", id))
    }

    /// The running terminals, of one channel or of all (`None`).
    pub fn list(&self, channel: Option<ChannelId>) -> Vec<TerminalInfo> {
        let Ok(mut sessions) = self.lock() else {
            return Vec::new();
        };
        // Terminals whose shell has ended are forgotten here.
        sessions.retain(|_, s| s.is_running());
        sessions
            .values()
            .filter(|s| channel.is_none() || s.channel() == channel)
            .map(|s| s.info())
            .collect()
    }

    /// Closes a terminal: kills its shell and everything started in it, and
    /// returns once the shell has been reaped.
    pub async fn close(&self, id: u64) -> Result<()> {
        let session = self
            .lock()?
            .remove(&id)
            .ok_or_else(|| Error::not_found("terminal", id))?;
        session.kill(CLOSE_WAIT).await
    }

    /// Closes every terminal of a channel (when it is archived).
    pub async fn close_channel(&self, channel: ChannelId) -> Result<()> {
        let ids: Vec<u64> = self
            .lock()?
            .values()
            .filter(|s| s.channel() == Some(channel))
            .map(|s| s.id())
            .collect();
        for id in ids {
            match self.close(id).await {
                Ok(()) | Err(Error::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn check_limits(&self, channel: Option<ChannelId>) -> Result<()> {
        check(&*self.lock()?, &self.limits, channel)
    }

    fn check_person(&self, opener: Option<Opener>, channel: Option<ChannelId>) -> Result<()> {
        let Some(opener) = opener else {
            return Ok(());
        };
        let sessions = self.lock()?;
        let openers = self
            .openers
            .lock()
            .map_err(|_| Error::Internal("the terminal table was poisoned".into()))?;
        check_person(&sessions, &openers, &self.limits, opener, channel)
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, BTreeMap<u64, Arc<TerminalSession>>>> {
        self.sessions
            .lock()
            .map_err(|_| Error::Internal("the terminal table was poisoned".into()))
    }
}

/// The per-person limits (see [`TerminalManager::open_as`]).
fn check_person(
    sessions: &BTreeMap<u64, Arc<TerminalSession>>,
    openers: &BTreeMap<u64, Opener>,
    limits: &TerminalLimits,
    opener: Opener,
    channel: Option<ChannelId>,
) -> Result<()> {
    if opener.admin {
        return Ok(());
    }
    let running =
        |o: &&Opener, id: &u64| sessions.get(id).is_some_and(|s| s.is_running()) && !o.admin;
    let by_members = openers.iter().filter(|(id, o)| running(o, id)).count();
    let mine = openers
        .iter()
        .filter(|(id, o)| running(o, id) && o.user == opener.user)
        .count();
    let by_members_here = openers
        .iter()
        .filter(|(id, o)| {
            running(o, id) && sessions.get(id).is_some_and(|s| s.channel() == channel)
        })
        .count();
    // One of a channel's terminals is kept for the Captain and admins, or
    // members could shut them out of that channel's computer.
    if limits.per_channel > 1 && by_members_here >= limits.per_channel - 1 {
        return Err(Error::Refused(format!(
            "members already hold {by_members_here} of this channel's {} terminals (the last is \
             kept for the Captain and admins); close one first",
            limits.per_channel
        )));
    }
    if mine >= limits.per_person {
        return Err(Error::Refused(format!(
            "you already have {} open terminals, the most one person may hold; close one first",
            limits.per_person
        )));
    }
    if by_members >= limits.total.saturating_sub(limits.admin_reserve) {
        return Err(Error::Refused(
            "the workspace's terminals for members are all in use (the rest are kept for the \
             Captain and admins); close one first"
                .into(),
        ));
    }
    Ok(())
}

fn check(
    sessions: &BTreeMap<u64, Arc<TerminalSession>>,
    limits: &TerminalLimits,
    channel: Option<ChannelId>,
) -> Result<()> {
    let running: Vec<&Arc<TerminalSession>> =
        sessions.values().filter(|s| s.is_running()).collect();
    if running.len() >= limits.total {
        return Err(Error::Refused(format!(
            "the workspace already has {} open terminals, the limit; close one first",
            limits.total
        )));
    }
    let here = running.iter().filter(|s| s.channel() == channel).count();
    if here >= limits.per_channel {
        return Err(Error::Refused(format!(
            "this channel already has {} open terminals, the limit; close one first",
            limits.per_channel
        )));
    }
    Ok(())
}

impl Drop for TerminalManager {
    fn drop(&mut self) {
        if let Ok(sessions) = self.sessions.lock() {
            for session in sessions.values() {
                session.kill_now();
            }
        }
    }
}

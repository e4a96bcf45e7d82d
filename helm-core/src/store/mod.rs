//! The `Store` port: durable state and the event log.
//!
//! The port is split by area ([`WorkspaceStore`], [`ChannelStore`],
//! [`ThreadStore`], [`TurnStore`], [`MemoryStore`], [`AuthStore`],
//! [`AuthorityStore`], [`EventStore`], [`NodeStore`]); [`Store`] is their sum, and
//! callers hold an `Arc<dyn Store>`, on which every area's methods can be
//! called as they are. Code holding a concrete store (a `SqliteStore`)
//! imports [`prelude`] to bring all the areas into scope at once.
//!
//! Store methods are domain operations, each one transaction: provisioning a
//! channel writes every row of the new agent world and its events at once, or
//! nothing. The port is async; an implementation must never block the caller's
//! runtime (`SqliteStore` runs SQLite on blocking threads).
//!
//! Invariants that matter (one resident agent per channel, one Skipper, unique
//! live channel names) are enforced by the database itself, not only here, so a
//! caller that goes around the facade still cannot break them.

mod ports;
#[cfg(feature = "postgres")]
mod postgres;
pub mod prelude;
pub(crate) mod rules;
mod sqlite;
mod stems;
mod thread_search;
mod types;

pub use ports::{
    AuthStore, AuthorityStore, ChannelStore, EventStore, MemoryStore, NodeStore, ThreadStore,
    TurnStore, WorkspaceStore,
};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
pub use thread_search::{MatchedIn, ThreadMatch, search_threads, snippet};
pub use types::{
    Admission, AdmissionModel, AuditRecord, AuditVerification, Bootstrap, BootstrapPlan,
    CapabilityChange, CaptainSetup, ChannelFilter, ChannelPlan, ChannelRecord, ChannelUpdate,
    Escalated, InviteAcceptance, JournalEntry, LeaseRenewal, MemoryFilter, NewAgent, NewApiToken,
    NewApproval, NewEscalation, NewInvite, NewMemory, NewOtKey, NewPost, NewThreadSummary,
    NewToolAction, NewUser, NodeAddress, NodeRecord, PolicyScope, Posted, Repaired, Resume,
    StoreStats, ThreadCursor, ThreadPage, ThreadTail, ToolActionOutcome, TurnFinish, UserChange,
    WorldHook, message_tokens,
};

/// Durable state of one workspace, and its event log: every area trait at
/// once. Implement the areas; this follows by the blanket impl.
pub trait Store:
    WorkspaceStore
    + ChannelStore
    + ThreadStore
    + TurnStore
    + MemoryStore
    + AuthStore
    + AuthorityStore
    + EventStore
    + NodeStore
{
}

impl<T> Store for T where
    T: WorkspaceStore
        + ChannelStore
        + ThreadStore
        + TurnStore
        + MemoryStore
        + AuthStore
        + AuthorityStore
        + EventStore
        + NodeStore
{
}

//! # helm-core
//!
//! The embeddable library behind Helm, a self-hosted agent workspace: create a
//! channel for anything and it comes with a resident AI agent that has a
//! computer (a shell workspace at `/workspace`), a memory that belongs to the
//! channel, and threads that are durable work sessions. One workspace-wide
//! operator agent, Skipper, takes escalations; the Captain owns everything.
//!
//! The crate is the whole domain; frontends (the `1helm` CLI, the `helm-http`
//! server, the `onehelm` Python package) are thin layers over [`Helm`].
//!
//! - [`model`]: plain data types (ids, channels, agents, threads, memory…).
//! - [`store`]: the [`Store`](store::Store) port (the sum of its area traits)
//!   and [`SqliteStore`](store::SqliteStore); [`audit`]: the audit log's hash chain.
//! - [`events`]: the ordered, durable [`Event`](events::Event) log frontends render.
//! - [`world`]: each channel's tree on disk.
//! - [`exec`]: each channel's computer: commands, files and terminals.
//! - [`tool`]: the [`Tool`](tool::Tool) abstraction and each channel's registry.
//! - [`mcp`]: MCP servers as channel capabilities.
//! - [`world`]: each channel's tree on disk; [`lock`]: who holds a data root.
//! - [`auth`]: sessions, API tokens, invitations and passwords.
//! - [`Helm`]: the facade every frontend calls.
//!
//! The library never prints; it logs through `tracing` and returns events.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod auth;
pub mod config;
pub mod error;
pub mod events;
pub mod exec;
pub mod faults;
pub(crate) mod helm;
pub mod lock;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod net;
pub mod provider;
pub(crate) mod replace_file;
pub mod runtime;
pub mod secrets;
pub mod store;
pub mod tool;
pub mod world;

pub use config::HelmConfig;
pub use error::{Error, ErrorKind, ProviderFailure, Result};
pub use helm::{
    AccountRequest, Audience, ComputerPlacement, ComputerPorts, Conversation, ConversationUpdate,
    Helm, HelmOptions, InitOptions, InitReport, MAX_INSTRUCTIONS, MAX_INVITE_TTL, MAX_NOTE_BYTES,
    MAX_THREAD_TITLE, MAX_TITLE_CHARS, MAX_WORKSPACE_NAME, MemoryNote, NOTES_DIR, NewChannel,
    NewNote, NodeOptions, OtherNode, PersonChange, PostedMessage, RESCAN_AUTHOR, Status,
    ThreadFilter, ThreadList,
};
pub use runtime::{ModelCheck, ProviderModels, RuntimeOptions, Verification};

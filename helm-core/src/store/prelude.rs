//! Brings every store area trait into scope, so the methods of an
//! `Arc<dyn Store>` can be called: `use helm_core::store::prelude::*;`.
//! The traits are imported unnamed, so a glob import adds no names.

pub use super::Store;
pub use super::ports::{
    AuthStore as _, AuthorityStore as _, ChannelStore as _, EventStore as _, MemoryStore as _,
    ThreadStore as _, TurnStore as _, WorkspaceStore as _,
};

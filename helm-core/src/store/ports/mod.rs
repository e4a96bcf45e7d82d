//! The store's area traits; [`Store`](super::Store) is their sum.

mod auth;
mod authority;
mod channels;
mod events;
mod memory;
mod nodes;
mod threads;
mod turns;
mod workspace;

pub use auth::AuthStore;
pub use authority::AuthorityStore;
pub use channels::ChannelStore;
pub use events::EventStore;
pub use memory::MemoryStore;
pub use nodes::NodeStore;
pub use threads::ThreadStore;
pub use turns::TurnStore;
pub use workspace::WorkspaceStore;

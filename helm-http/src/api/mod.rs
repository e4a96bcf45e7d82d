//! The API's wire types, with their OpenAPI schemas.
//!
//! helm-core's types stay free of OpenAPI concerns, so each type the API
//! returns has a mirror here that derives [`utoipa::ToSchema`] and is built
//! from the core value with `From`. A mirror serialises exactly as the core
//! type does, so clients (the `1helm --server` backend among them) read
//! responses straight into helm-core's types.

mod auth;
mod authority;
mod computer;
mod enums;
mod events;
mod exec;
mod mcp;
mod memory;
mod model;
mod ot;
mod reading;
mod requests;
mod threads;

pub use auth::*;
pub use authority::*;
pub use computer::*;
pub use enums::*;
pub use events::*;
pub use exec::*;
pub use mcp::*;
pub use memory::*;
pub use model::*;
pub use ot::*;
pub use reading::*;
pub use requests::*;
pub use threads::*;

use serde::Serialize;
use utoipa::ToSchema;

/// One page of a list; ask for the next with `after=next_after`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MessagePage {
    /// The messages, oldest first.
    pub items: Vec<Message>,
    /// The cursor for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_after: Option<i64>,
    /// For pages read backwards (`before`, `newest`): the cursor for the
    /// previous (older) page; absent on the oldest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}

/// A page of the event log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventPage {
    /// The events the caller may see, in `seq` order.
    pub items: Vec<Event>,
    /// The log position this page reaches: pass it as `after` for the next
    /// page (or to a WebSocket) to continue without a gap.
    pub last_seq: u64,
}

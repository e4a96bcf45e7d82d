//! Memory: channel-owned knowledge with provenance, independent of any model.
//!
//! Records (summaries, decisions, facts, preferences, artifact references)
//! belong to a channel, say where they came from and who wrote them, and are
//! superseded rather than overwritten. Recall searches a channel's records and
//! its message history together; histories from elsewhere come in through
//! [`import`].

pub mod embed;
pub mod import;

//! Memory: channel-owned knowledge with provenance, independent of any model.
//!
//! Records (summaries, decisions, facts, preferences, artifact references)
//! belong to a channel, say where they came from and who wrote them, and are
//! superseded rather than overwritten. [`recall`] searches a channel's records
//! and its message history together, by words and (with an [`embed::Embedder`])
//! by meaning: the [`engine`] gathers candidates, [`fusion`] ranks them, and
//! [`vectors`] holds what the meaning search scans (in bfloat16), and
//! [`vector_cache`] keeps those of recently searched channels within a
//! budget. Histories from elsewhere come in through [`import`].

mod bf16;
pub mod config;
pub mod embed;
pub mod engine;
pub mod fusion;
pub mod import;
pub mod ivf;
pub mod query;
pub mod recall;
pub mod vector_cache;
pub mod vectors;
pub mod when;

//! `SqliteStore`'s implementation of each area trait, one file per area;
//! the SQL itself lives in the area modules beside `impls`.

mod auth;
mod authority;
mod channels;
mod events;
mod memory;
mod nodes;
mod threads;
mod turns;
mod workspace;

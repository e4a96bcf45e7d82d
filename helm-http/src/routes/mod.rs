//! The REST API, one module per area. Each module exposes `routes()`, an
//! [`Api`] whose handlers carry their own OpenAPI description; [`api`]
//! merges them, so the document can never miss a route.
//!
//! To add an area (files, terminals, memory, …): write `routes/<area>.rs`
//! with its handlers and `pub fn routes() -> Api` (`handlers!` in place of
//! `utoipa_axum::routes!`; see `described`), add
//! its wire types to `api/`, its tag to `openapi.rs`, and one `.merge(...)`
//! line below.

mod activity;
mod authority;
mod channels;
pub(crate) mod described;
mod events;
mod exec;
mod files;
mod mcp_servers;
mod members;
mod memory;
mod messages;
mod models;
mod ot;
mod ot_errors;
mod ot_files;
mod ot_keys;
mod ot_search;
mod providers;
mod reading;
mod session;
mod status;
mod terminals;
mod threads;
mod tokens;
mod upload;
mod users;

use std::str::FromStr;

use axum::http::StatusCode;
use helm_core::model::ChannelRef;
use utoipa::IntoResponses;

use crate::error::{ApiError, ErrorBody};

pub use described::Api;
pub use events::EVENTS_PATH;

/// Every `/api` route.
pub fn api() -> Api {
    Api::new()
        .merge(session::routes())
        .merge(users::routes())
        .merge(tokens::routes())
        .merge(status::routes())
        .merge(channels::routes())
        .merge(members::routes())
        .merge(threads::routes())
        .merge(messages::routes())
        .merge(reading::routes())
        .merge(activity::routes())
        .merge(authority::routes())
        .merge(providers::routes())
        .merge(models::routes())
        .merge(events::routes())
        .merge(files::routes())
        .merge(exec::routes())
        .merge(terminals::routes())
        .merge(memory::routes())
        .merge(ot_keys::routes())
        .merge(ot::routes())
        .merge(ot_files::routes())
        .merge(ot_search::routes())
        .merge(mcp_servers::routes())
}

/// The Open Terminal routes alone (`/api/channels/{channel}/ot/...`), for
/// a computer server.
pub fn open_terminal() -> Api {
    Api::new()
        .merge(ot::routes())
        .merge(ot_files::routes())
        .merge(ot_search::routes())
}

/// The errors a read can answer with.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum ReadErrors {
    /// A path or query parameter does not parse.
    #[response(status = 400)]
    BadRequest(ErrorBody),
    /// Not signed in.
    #[response(status = 401)]
    Unauthenticated(ErrorBody),
    /// Not allowed.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such thing (or not visible to the caller).
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// A value is out of range.
    #[response(status = 422)]
    Invalid(ErrorBody),
}

/// The errors a change can answer with.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum WriteErrors {
    /// Malformed JSON, or a path or query parameter that does not parse.
    #[response(status = 400)]
    BadRequest(ErrorBody),
    /// Not signed in.
    #[response(status = 401)]
    Unauthenticated(ErrorBody),
    /// Not allowed (or a session cookie from another origin).
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// No such thing (or not visible to the caller).
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// Clashes with the current state, or refused by a product rule.
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body is too large.
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The body is not JSON.
    #[response(status = 415)]
    UnsupportedMediaType(ErrorBody),
    /// The body has the wrong shape, or a value is invalid.
    #[response(status = 422)]
    Invalid(ErrorBody),
    /// Too many attempts.
    #[response(status = 429)]
    RateLimited(ErrorBody),
}

/// A channel named in a path: `launch`, `#launch` (as `%23launch`) or an id.
pub fn channel_ref(raw: &str) -> Result<ChannelRef, ApiError> {
    ChannelRef::from_str(raw).map_err(|e| ApiError::bad_path(e.to_string()))
}

/// A typed id from a path parameter.
pub fn path_id<T: FromStr<Err = helm_core::Error>>(raw: i64) -> Result<T, ApiError> {
    raw.to_string()
        .parse()
        .map_err(|e: helm_core::Error| ApiError::bad_path(e.to_string()))
}

/// A page's `before` cursor: an id (a positive number), otherwise a 400
/// saying so.
pub fn before_id<T: FromStr<Err = helm_core::Error>>(raw: i64) -> Result<T, ApiError> {
    raw.to_string().parse().map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            format!(
                "before {raw} is not an id: give the id (a positive number) the last page ended at"
            ),
        )
    })
}

/// A page size: `default` when absent; 400 outside 1..=`max`.
pub fn page_size(asked: Option<u32>, default: usize, max: usize) -> Result<usize, ApiError> {
    match asked {
        None => Ok(default),
        Some(n) if (1..=max).contains(&(n as usize)) => Ok(n as usize),
        Some(n) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            format!("limit {n} is out of range: ask for 1 to {max}"),
        )),
    }
}

/// A 201 response.
pub fn created<T>(body: T) -> (StatusCode, axum::Json<T>) {
    (StatusCode::CREATED, axum::Json(body))
}

//! # helm-http
//!
//! The server operators run: it serves a Helm data directory to the people
//! who work in it. REST under `/api/` (documented by the OpenAPI document at
//! `/api/openapi.json`, generated from the handlers), the live event stream
//! at `/api/events` (a resumable WebSocket), `/healthz` and `/metrics`;
//! Helm as an MCP server at `/mcp` ([`mcp`]) and an OpenAI-compatible
//! surface onto channel agents at `/v1` ([`openai`]).
//!
//! The crate is also a library: [`router`] builds the whole application over
//! an [`AppState`], for embedding and for tests that call it without a port;
//! [`serve`] runs it on a listener until a shutdown signal.
//!
//! - [`caller`]: who a request comes from (API token or session cookie, with
//!   the origin check), [`error`]: every error as `{"code","message"}` with
//!   its status, mapped in one place.
//! - `routes`: one module per area; `api`: the wire types and their schemas.
//! - [`ui`]: the web UI's built files, served at every other path.
//! - [`config`]: the TOML file and `HELM_*` overrides; [`metrics`]: the
//!   Prometheus counters; [`limiter`]: sign-in rate limits.

pub mod api;
pub mod caller;
pub mod commands;
pub mod config;
pub mod error;
mod extract;
mod forward;
mod heap;
pub mod limiter;
pub mod mcp;
pub mod metrics;
pub mod openai;
mod openapi;
pub(crate) mod routes;
mod serve;
pub mod setup;
mod state;
pub mod ui;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router, middleware};
use serde_json::{Value, json};
use utoipa::OpenApi;

pub use config::ServerConfig;
pub use error::{ApiError, ErrorBody};
pub use routes::EVENTS_PATH;
pub use state::AppState;

/// The OpenAPI document of the API this crate serves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes::api().describe(openapi::ApiDoc::openapi())
}

/// The OpenAPI document as the server serves it (pretty JSON).
pub fn openapi_json() -> String {
    openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The document `/api/openapi.json` serves: the checked-in copy, which a
/// test keeps equal to [`openapi_json`]. Built at start instead, the
/// document costs about 9 MB of heap at its peak, memory the allocator then
/// keeps; compiled in, it costs nothing until it is asked for.
const DOCUMENT: &str = include_str!("../../docs/openapi.json");

/// The whole application.
pub fn router(state: AppState) -> Router {
    // The routes' OpenAPI description is never composed here: the server
    // serves `DOCUMENT` (see `routes::described`).
    Router::new()
        .merge(routes::api().into_router())
        .route(
            "/api/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], DOCUMENT) }),
        )
        .merge(mcp::routes(state.clone()))
        .merge(openai::routes())
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics::metrics))
        .fallback(ui::serve)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            declared_size_guard,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), host_guard))
        .with_state(state)
}

/// A computer server (`helm-http computer`): the Open Terminal protocol at
/// the root for the computer of `channel` (whose key
/// [`Helm::serve_computer`](helm_core::Helm::serve_computer) set), and
/// `/healthz`. Every other request is the protocol's, for that channel: the
/// paths are the channel's Open Terminal paths without their prefix. No
/// host check: there is no cookie to protect, every request needs the key.
pub fn computer_router(state: AppState, channel: &str) -> Router {
    let ot = routes::open_terminal()
        .into_router()
        .with_state(state.clone());
    let prefix = format!("/api/channels/{channel}/ot");
    let served = tower::service_fn(move |mut request: axum::extract::Request| {
        let ot = ot.clone();
        let path = match request.uri().path_and_query() {
            Some(p) => format!("{prefix}{}", p.as_str()),
            None => prefix.clone(),
        };
        if let Ok(uri) = path.parse() {
            *request.uri_mut() = uri;
        }
        tower::ServiceExt::oneshot(ot, request)
    });
    Router::new()
        .route("/healthz", get(healthz))
        .fallback_service(served)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            declared_size_guard,
        ))
        .with_state(state)
}

/// Answers only requests for one of the server's own hosts. A page on any
/// domain can rebind that domain to 127.0.0.1 and then send requests that
/// name it in `Host` (and `Origin`); refusing every host but ours keeps such
/// pages away from a server on loopback, before setup and after. `/healthz`
/// and `/metrics` answer for any host: probes and scrapers name the server
/// by address, and neither says anything a page could use.
async fn host_guard(
    State(state): State<AppState>,
    request: axum::http::Request<axum::body::Body>,
    next: middleware::Next,
) -> axum::response::Response {
    let path = request.uri().path();
    if path == "/healthz" || path == "/metrics" {
        return next.run(request).await;
    }
    let host = caller::request_host(&request).unwrap_or_default();
    if state.allowed_hosts.contains(&host) {
        next.run(request).await
    } else {
        ApiError::bad_host(&host, &state.trusted_origins).into_response()
    }
}

/// Refuses at once a request whose declared `Content-Length` is over the
/// limit it is read under (uploads have their own, larger one): the limit
/// itself applies as the body is read, so without this a request declaring
/// far more than it sends would hold its connection until the body
/// timeout, to be told it was malformed.
async fn declared_size_guard(
    State(state): State<AppState>,
    request: axum::http::Request<axum::body::Body>,
    next: middleware::Next,
) -> axum::response::Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = if request.uri().path().ends_with("/files/upload") {
        state.config.max_upload_bytes
    } else {
        state.config.max_body_bytes
    };
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    match declared {
        Some(size) if size > limit => ApiError::new(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than this server accepts ({limit} bytes)"),
        )
        .into_response(),
        _ => next.run(request).await,
    }
}

/// Prepares the process's allocator for a long-running server: blocks of a
/// megabyte or more (recall's vector matrices) go back to the OS when
/// freed. Call it first thing in `main`, before opening the workspace.
pub fn prepare_heap() {
    heap::map_large_allocations();
}

/// Serves `state` on `listener` until `shutdown` resolves, then stops live
/// streams and waits for requests in flight. Connections carry the peer
/// address, which sign-in rate limits key on, and have header, body and
/// idle timeouts (see `serve.rs`). Without a public URL the server answers
/// for the loopback names with the port it actually listens on.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, router, shutdown).await
}

/// Like [`serve`], for a computer server: [`computer_router`] for `channel`.
pub async fn serve_computer(
    listener: tokio::net::TcpListener,
    state: AppState,
    channel: String,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = move |state| computer_router(state, &channel);
    serve_with(listener, state, app, shutdown).await
}

async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    app: impl FnOnce(AppState) -> Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = state.listening_on(listener.local_addr()?);
    let streams = state.shutdown.clone();
    let config = &state.config;
    let timeouts = serve::Timeouts {
        header: std::time::Duration::from_secs(config.header_timeout_secs.max(1)),
        body: std::time::Duration::from_secs(config.body_timeout_secs.max(1)),
        idle: std::time::Duration::from_secs(config.idle_timeout_secs.max(1)),
    };
    let app = app(state);
    heap::release_free_pages();
    serve::run(listener, app, timeouts, async move {
        shutdown.await;
        // WebSocket streams end with a going-away close; plain requests
        // in flight finish.
        streams.cancel();
    })
    .await
}

/// Liveness: the process is up and its store answers.
async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let store_ok = state.helm.store().stats().await.is_ok();
    let status = if store_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body: Value = json!({
        "status": if store_ok { "ok" } else { "degraded" },
        "workspace": state.helm.workspace().name,
    });
    (status, Json(body))
}

/// Unknown API paths get the same JSON error shape as everything else.
pub(crate) async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint; the API is described at /api/openapi.json",
    )
}

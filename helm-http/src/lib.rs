//! # helm-http
//!
//! The server operators run: it serves a Helm data directory to the people
//! who work in it. REST under `/api/` (documented by the OpenAPI document at
//! `/api/openapi.json`, generated from the handlers), the live event stream
//! at `/api/events` (a resumable WebSocket), `/healthz` and `/metrics`.
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
pub mod limiter;
pub mod metrics;
mod openapi;
pub(crate) mod routes;
mod state;
pub mod ui;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router, middleware};
use serde_json::{Value, json};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use config::ServerConfig;
pub use error::{ApiError, ErrorBody};
pub use routes::EVENTS_PATH;
pub use state::AppState;

/// The OpenAPI document of the API this crate serves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    OpenApiRouter::<AppState>::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::api())
        .into_openapi()
}

/// The OpenAPI document as the server serves it (pretty JSON).
pub fn openapi_json() -> String {
    openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The whole application.
pub fn router(state: AppState) -> Router {
    let (api, _) = OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::api())
        .split_for_parts();
    let document = Arc::new(openapi_json());
    Router::new()
        .merge(api)
        .route(
            "/api/openapi.json",
            get(move || {
                let document = document.clone();
                async move {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        document.as_str().to_string(),
                    )
                }
            }),
        )
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics::metrics))
        .fallback(ui::serve)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .with_state(state)
}

/// Serves `state` on `listener` until `shutdown` resolves, then stops live
/// streams and waits for requests in flight. Connections carry the peer
/// address, which sign-in rate limits key on.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let streams = state.shutdown.clone();
    let app = router(state);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
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

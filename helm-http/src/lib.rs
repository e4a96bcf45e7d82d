//! # helm-http
//!
//! The server operators run: it opens a Helm data directory and serves it over
//! HTTP. The crate is also a library: [`router`] builds the whole application
//! for embedding or for tests that call it without binding a port.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use helm_core::Helm;
use serde_json::{Value, json};

/// What every handler can reach. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The workspace being served.
    pub helm: Helm,
}

/// The whole application.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .with_state(state)
}

/// Liveness: the process is up and its store answers.
async fn healthz(State(state): State<AppState>) -> Json<Value> {
    let store_ok = state.helm.store().stats().await.is_ok();
    Json(json!({
        "status": if store_ok { "ok" } else { "degraded" },
        "workspace": state.helm.workspace().name,
    }))
}

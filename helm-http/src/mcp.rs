//! `/mcp`: Helm as a streamable-HTTP MCP server (see
//! [`helm_core::mcp::server`]). Every request is signed like any API
//! request (an API token as `Authorization: Bearer`, or the session cookie
//! from the workspace's own origins) and acts for that person: the channels
//! they may see, their messages, their files. Hosts the server answers to
//! are loopback plus the configured public URL's.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use helm_core::mcp::server::{HelmMcpServer, Identify};
use helm_core::model::User;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::caller::Caller;
use crate::state::AppState;

/// Where the MCP server is served.
pub const MCP_PATH: &str = "/mcp";

/// The person an MCP request acts for, put there by [`authenticate`].
#[derive(Clone)]
struct McpCaller(User);

/// The `/mcp` routes.
pub fn routes(state: AppState) -> Router<AppState> {
    let identify: Identify = Arc::new(|context| {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<McpCaller>())
            .map(|caller| caller.0.clone())
    });
    let helm = state.helm.clone();
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "[::1]".to_string(),
    ];
    for origin in state.config.trusted_origins() {
        if let Some(host) = origin.split("://").nth(1) {
            hosts.push(host.to_string());
            if let Some((name, _)) = host.rsplit_once(':') {
                hosts.push(name.to_string());
            }
        }
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(state.shutdown.child_token());
    config.allowed_hosts = hosts;
    let service: StreamableHttpService<HelmMcpServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(HelmMcpServer::new(helm.clone(), identify.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(state, authenticate))
}

/// Signs the request in (as every API request is) before the MCP layer
/// sees it; an unsigned one gets 401 with a `WWW-Authenticate` challenge.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    match Caller::from_request_parts(&mut parts, &state).await {
        Ok(caller) => {
            parts.extensions.insert(McpCaller(caller.user));
            next.run(Request::from_parts(parts, body)).await
        }
        Err(error) => {
            let mut response = error.into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"helm\""),
            );
            response
        }
    }
}

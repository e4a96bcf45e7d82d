//! A streamable-HTTP MCP server for tests, on `127.0.0.1`: one tool,
//! `lookup`, whose description a test can change (a changed definition must
//! be approved again before it is called), counting its calls and keeping
//! the `Authorization` headers it was sent (a credential Helm injects must
//! arrive here and nowhere else).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Shared {
    description: Mutex<String>,
    calls: AtomicUsize,
    authorizations: Mutex<Vec<String>>,
}

#[derive(Clone)]
struct LookupServer(Arc<Shared>);

impl ServerHandler for LookupServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let description = self
            .0
            .description
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default();
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look up."}},
            "required": ["query"]
        });
        let schema = match schema {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "lookup",
            description,
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        let query = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("query"))
            .and_then(|q| q.as_str())
            .unwrap_or("")
            .to_string();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(format!("found: {query} (order 1042, shipped)")),
        ])))
    }
}

/// The running server; it stops when dropped.
pub struct MockMcpServer {
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl MockMcpServer {
    /// Starts the server with `lookup` described as `description`.
    pub async fn start(description: &str) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared::default());
        if let Ok(mut d) = shared.description.lock() {
            *d = description.to_string();
        }
        let cancel = CancellationToken::new();
        let handler = LookupServer(shared.clone());
        let service: StreamableHttpService<LookupServer, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(handler.clone()),
                Default::default(),
                StreamableHttpServerConfig::default()
                    .with_sse_keep_alive(None)
                    .with_cancellation_token(cancel.child_token()),
            );
        let seen = shared.clone();
        let record = move |request: Request, next: Next| {
            let seen = seen.clone();
            async move {
                if let Some(value) = request
                    .headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    && let Ok(mut all) = seen.authorizations.lock()
                {
                    all.push(value.to_string());
                }
                let response: Response = next.run(request).await;
                response
            }
        };
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(record));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let stop = cancel.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stop.cancelled_owned().await })
                .await;
        });
        Ok(MockMcpServer {
            url,
            shared,
            cancel,
        })
    }

    /// Changes what `lookup`'s description says from now on.
    pub fn set_description(&self, description: &str) {
        if let Ok(mut d) = self.shared.description.lock() {
            *d = description.to_string();
        }
    }

    /// How many times `lookup` was called.
    pub fn calls(&self) -> usize {
        self.shared.calls.load(Ordering::SeqCst)
    }

    /// Every `Authorization` header the server received.
    pub fn authorizations(&self) -> Vec<String> {
        self.shared
            .authorizations
            .lock()
            .map(|a| a.clone())
            .unwrap_or_default()
    }
}

impl Drop for MockMcpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

//! Connections to channels' MCP servers, kept open across turns.
//!
//! A stdio server is started in its channel's computer through the
//! executor (the same sandbox, uid, limits and scrubbed environment as the
//! agent's commands; `/workspace` as its working directory), with only the
//! environment its configuration names. A streamable-HTTP server is reached
//! by this process, which adds the configured headers (secrets read from its
//! own environment) to every request: nothing of them enters the channel's
//! computer. A connection is made on first use, reused while its
//! configuration is unchanged and it is alive, and closed when the
//! configuration changes, the server is removed or the channel is archived.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool as McpToolDefinition};
use rmcp::service::{RoleClient, RunningService};
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::config::{McpServer, McpTransport};
use crate::error::{Error, Result};
use crate::exec::{Computer, Executor, StdioHandle, StdioSpec};
use crate::model::ChannelId;
use crate::secrets::SecretStore;

/// How long connecting (starting a stdio server, the handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one tool call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// How long listing a server's tools may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// One live connection.
struct Connection {
    /// A digest of the configuration it was made with.
    fingerprint: String,
    service: RunningService<RoleClient, ()>,
    /// The stdio server's process, killed when the connection goes.
    process: Option<StdioHandle>,
}

impl Connection {
    fn is_alive(&self) -> bool {
        !self.service.is_closed() && !self.process.as_ref().is_some_and(|p| p.has_exited())
    }
}

/// The open connections of every channel's MCP servers.
pub(crate) struct McpClients {
    secrets: Arc<dyn SecretStore>,
    connections: Mutex<HashMap<(ChannelId, String), Arc<Connection>>>,
    /// The last problem told about per server, so a thread hears of one
    /// once rather than on every turn.
    reported: Mutex<HashMap<(ChannelId, String), String>>,
}

impl McpClients {
    pub(crate) fn new(secrets: Arc<dyn SecretStore>) -> Self {
        McpClients {
            secrets,
            connections: Mutex::default(),
            reported: Mutex::default(),
        }
    }

    /// Whether `problem` of `server` is new (and so worth a note); a server
    /// that works again is forgotten by [`McpClients::connection`].
    pub(crate) async fn first_report(
        &self,
        channel: ChannelId,
        server: &str,
        problem: &str,
    ) -> bool {
        let mut reported = self.reported.lock().await;
        let key = (channel, server.to_string());
        if reported.get(&key).map(String::as_str) == Some(problem) {
            return false;
        }
        reported.insert(key, problem.to_string());
        true
    }

    /// The live connection to `server` of `channel`, made (or remade) when
    /// there is none, it died, or the configuration changed.
    async fn connection(
        &self,
        channel: ChannelId,
        server: &McpServer,
        computer: &Computer,
        executor: &Arc<dyn Executor>,
    ) -> Result<Arc<Connection>> {
        let fingerprint = fingerprint(server);
        let key = (channel, server.name.clone());
        let mut connections = self.connections.lock().await;
        if let Some(existing) = connections.get(&key)
            && existing.fingerprint == fingerprint
            && existing.is_alive()
        {
            return Ok(existing.clone());
        }
        // Whatever was there is replaced (and so closed) now.
        connections.remove(&key);
        let connection = tokio::time::timeout(
            CONNECT_TIMEOUT,
            connect(
                server,
                computer,
                executor,
                self.secrets.as_ref(),
                fingerprint,
            ),
        )
        .await
        .map_err(|_| {
            unavailable(
                &server.name,
                format!("it did not answer within {} s", CONNECT_TIMEOUT.as_secs()),
            )
        })??;
        let connection = Arc::new(connection);
        connections.insert(key.clone(), connection.clone());
        drop(connections);
        self.reported.lock().await.remove(&key);
        Ok(connection)
    }

    /// The server's tools, as it lists them now.
    pub(crate) async fn list_tools(
        &self,
        channel: ChannelId,
        server: &McpServer,
        computer: &Computer,
        executor: &Arc<dyn Executor>,
    ) -> Result<Vec<McpToolDefinition>> {
        let connection = self.connection(channel, server, computer, executor).await?;
        let listed = tokio::time::timeout(LIST_TIMEOUT, connection.service.peer().list_all_tools())
            .await
            .map_err(|_| unavailable(&server.name, "listing its tools timed out".into()))?;
        listed.map_err(|e| self.failed(channel, server, &connection, "listing its tools", e))
    }

    /// Calls the server's tool `tool` with `arguments`.
    pub(crate) async fn call(
        &self,
        channel: ChannelId,
        server: &McpServer,
        computer: &Computer,
        executor: &Arc<dyn Executor>,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult> {
        let connection = self.connection(channel, server, computer, executor).await?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let called =
            tokio::time::timeout(CALL_TIMEOUT, connection.service.peer().call_tool(params))
                .await
                .map_err(|_| {
                    unavailable(
                        &server.name,
                        format!("{tool} did not answer within {} s", CALL_TIMEOUT.as_secs()),
                    )
                })?;
        called.map_err(|e| self.failed(channel, server, &connection, tool, e))
    }

    /// Closes the connections of `channel` (all of them, or one server's).
    pub(crate) async fn close(&self, channel: ChannelId, server: Option<&str>) {
        self.connections
            .lock()
            .await
            .retain(|(c, s), _| *c != channel || server.is_some_and(|name| name != s));
    }

    /// The error for a failed exchange, with what a stdio server said on
    /// stderr (its secrets never reach it, and it runs in the sandbox).
    fn failed(
        &self,
        _channel: ChannelId,
        server: &McpServer,
        connection: &Connection,
        what: &str,
        error: rmcp::ServiceError,
    ) -> Error {
        let stderr = connection
            .process
            .as_ref()
            .map(|p| p.stderr_tail())
            .filter(|s| !s.trim().is_empty())
            .map(|s| format!("; it said: {}", crate::tool::clip(s.trim(), 500)))
            .unwrap_or_default();
        unavailable(&server.name, format!("{what} failed: {error}{stderr}"))
    }
}

fn unavailable(server: &str, reason: String) -> Error {
    Error::Refused(format!("MCP server {server}: {reason}"))
}

/// A digest of the configuration, so a change makes a new connection.
fn fingerprint(server: &McpServer) -> String {
    let json = serde_json::to_string(server).unwrap_or_default();
    Sha256::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn connect(
    server: &McpServer,
    computer: &Computer,
    executor: &Arc<dyn Executor>,
    secrets: &dyn SecretStore,
    fingerprint: String,
) -> Result<Connection> {
    match &server.transport {
        McpTransport::Stdio { command, args, env } => {
            let mut spec = StdioSpec::new(command.clone(), args.clone());
            for setting in env {
                spec.env
                    .push((setting.name.clone(), setting.resolve(secrets)?));
            }
            let process = executor.spawn_stdio(computer, spec).await?;
            let handle = process.handle;
            match ().serve((process.stdout, process.stdin)).await {
                Ok(service) => Ok(Connection {
                    fingerprint,
                    service,
                    process: Some(handle),
                }),
                Err(e) => {
                    // Give it a moment to say why on stderr.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let said = handle.stderr_tail();
                    let said = if said.trim().is_empty() {
                        String::new()
                    } else {
                        format!("; it said: {}", crate::tool::clip(said.trim(), 500))
                    };
                    Err(unavailable(
                        &server.name,
                        format!("it did not start as an MCP server ({e}){said}"),
                    ))
                }
            }
        }
        McpTransport::Http { url, headers } => {
            use reqwest::header::{HeaderName, HeaderValue};
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut custom = HashMap::new();
            for setting in headers {
                let name = HeaderName::try_from(setting.name.as_str()).map_err(|_| {
                    Error::invalid(
                        "MCP server header",
                        format!("{} is not a header name", setting.name),
                    )
                })?;
                let mut value = HeaderValue::try_from(setting.resolve(secrets)?).map_err(|_| {
                    Error::invalid(
                        "MCP server header",
                        format!("the value of {} is not a valid header value", setting.name),
                    )
                })?;
                value.set_sensitive(setting.secret_ref.is_some());
                custom.insert(name, value);
            }
            let client = crate::provider::build_http_client(Duration::from_secs(10))?;
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::with_client(client, config);
            let service = ().serve(transport).await.map_err(|e| {
                unavailable(&server.name, format!("connecting to {url} failed: {e}"))
            })?;
            Ok(Connection {
                fingerprint,
                service,
                process: None,
            })
        }
    }
}

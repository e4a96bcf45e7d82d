//! A channel's MCP servers on the wire: their settings (secrets only as
//! references) and their status.

use std::collections::BTreeMap;

use helm_core::mcp as m;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A name-value pair for a server: a literal `value`, or a `secret_ref`
/// naming the Helm server's secret (with `value` a template containing
/// `{secret}`, such as `Bearer {secret}`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSetting {
    /// The variable's or header's name.
    pub name: String,
    /// The value, or a template with `{secret}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The Helm server's secret (environment variable) it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
}

/// How a server is reached.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum McpTransport {
    /// A program run inside the channel's computer, speaking MCP on stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Its environment (nothing else of the host's).
        #[serde(default)]
        env: Vec<McpSetting>,
    },
    /// A streamable-HTTP server reached by Helm.
    Http {
        /// Its endpoint.
        url: String,
        /// Headers Helm adds to every request.
        #[serde(default)]
        headers: Vec<McpSetting>,
    },
}

/// A server's settings, as `PUT` takes them (the name is in the path).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerSettings {
    /// How it is reached.
    pub transport: McpTransport,
    /// Only these tools (names or `*` globs); empty: all.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Never these tools (applied last).
    #[serde(default)]
    pub deny: Vec<String>,
    /// `auto` (default) or `ask` (every call asks first).
    #[serde(default)]
    pub approval: Option<String>,
    /// Per-tool approval modes, by the server's tool name.
    #[serde(default)]
    pub tool_approval: BTreeMap<String, String>,
}

/// A server with its settings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpServer {
    /// Its name in the channel.
    pub name: String,
    /// Its settings.
    #[serde(flatten)]
    pub settings: McpServerSettings,
}

/// One of a server's tools.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpTool {
    /// Its name on the server.
    pub name: String,
    /// Its name for the agent (`mcp__SERVER__TOOL`), when it is offered.
    pub tool: Option<String>,
    /// Why it is not offered, when it is not.
    pub withheld: Option<String>,
    /// Its description as the server gives it now.
    pub description: String,
    /// `auto` or `ask`.
    pub approval: String,
    /// `unpinned` (never approved), `pinned` (as approved) or `changed`
    /// (the next call asks for approval of the change).
    pub pin: String,
}

/// A server and what it offers now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpServerStatus {
    /// The server.
    pub server: McpServer,
    /// Whether Helm reached it and listed its tools.
    pub connected: bool,
    /// Why not, when it could not.
    pub error: Option<String>,
    /// Its tools.
    pub tools: Vec<McpTool>,
}

/// Which tools to approve (all the server offers when absent).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpApproveRequest {
    /// The server's tool names.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

fn mode(m: m::McpApproval) -> String {
    match m {
        m::McpApproval::Auto => "auto",
        m::McpApproval::Ask => "ask",
    }
    .into()
}

fn parse_mode(raw: &str) -> helm_core::Result<m::McpApproval> {
    match raw {
        "auto" => Ok(m::McpApproval::Auto),
        "ask" => Ok(m::McpApproval::Ask),
        other => Err(helm_core::Error::invalid(
            "approval",
            format!("{other:?}: choose auto or ask"),
        )),
    }
}

impl From<McpSetting> for m::McpSetting {
    fn from(s: McpSetting) -> Self {
        m::McpSetting {
            name: s.name,
            value: s.value,
            secret_ref: s.secret_ref,
        }
    }
}

impl From<m::McpSetting> for McpSetting {
    fn from(s: m::McpSetting) -> Self {
        McpSetting {
            name: s.name,
            value: s.value,
            secret_ref: s.secret_ref,
        }
    }
}

impl McpServerSettings {
    /// The core configuration named `name`.
    pub fn into_core(self, name: String) -> helm_core::Result<m::McpServer> {
        let transport = match self.transport {
            McpTransport::Stdio { command, args, env } => m::McpTransport::Stdio {
                command,
                args,
                env: env.into_iter().map(Into::into).collect(),
            },
            McpTransport::Http { url, headers } => m::McpTransport::Http {
                url,
                headers: headers.into_iter().map(Into::into).collect(),
            },
        };
        let mut tool_approval = BTreeMap::new();
        for (tool, raw) in self.tool_approval {
            tool_approval.insert(tool, parse_mode(&raw)?);
        }
        Ok(m::McpServer {
            name,
            transport,
            allow: self.allow,
            deny: self.deny,
            approval: self
                .approval
                .as_deref()
                .map(parse_mode)
                .transpose()?
                .unwrap_or_default(),
            tool_approval,
        })
    }
}

impl From<m::McpServer> for McpServer {
    fn from(s: m::McpServer) -> Self {
        let transport = match s.transport {
            m::McpTransport::Stdio { command, args, env } => McpTransport::Stdio {
                command,
                args,
                env: env.into_iter().map(Into::into).collect(),
            },
            m::McpTransport::Http { url, headers } => McpTransport::Http {
                url,
                headers: headers.into_iter().map(Into::into).collect(),
            },
        };
        McpServer {
            name: s.name,
            settings: McpServerSettings {
                transport,
                allow: s.allow,
                deny: s.deny,
                approval: Some(mode(s.approval)),
                tool_approval: s
                    .tool_approval
                    .into_iter()
                    .map(|(k, v)| (k, mode(v)))
                    .collect(),
            },
        }
    }
}

impl From<m::McpServerStatus> for McpServerStatus {
    fn from(s: m::McpServerStatus) -> Self {
        McpServerStatus {
            server: s.server.into(),
            connected: s.connected,
            error: s.error,
            tools: s
                .tools
                .into_iter()
                .map(|t| McpTool {
                    name: t.name,
                    tool: t.tool,
                    withheld: t.withheld,
                    description: t.description,
                    approval: mode(t.approval),
                    pin: match t.pin {
                        m::PinState::Unpinned => "unpinned",
                        m::PinState::Pinned => "pinned",
                        m::PinState::Changed => "changed",
                    }
                    .into(),
                })
                .collect(),
        }
    }
}

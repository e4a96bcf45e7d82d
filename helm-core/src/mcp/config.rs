//! A channel's MCP servers as its settings name them: how each is reached
//! ([`McpTransport`]), which of its tools the agent gets (allow and deny
//! lists, deny last), and whether calls need approval ([`McpApproval`], per
//! server and per tool). Secrets are never stored, only named: a value with
//! a `secret_ref` is read from the server's environment when Helm connects.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tool::MAX_TOOL_NAME;

/// The most servers one channel may have.
pub const MAX_SERVERS: usize = 16;

/// Whether a call of an MCP tool needs a person's approval. A tool's
/// definition always needs approval the first time and again whenever it
/// changes, whatever the mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpApproval {
    /// Calls run once the tool's definition is approved.
    #[default]
    Auto,
    /// Every call asks first.
    Ask,
}

/// A name-value pair given to a server (an environment variable of a stdio
/// server, a header of an HTTP one). With `secret_ref`, the value comes from
/// the Helm server's environment variable of that name at connect time;
/// `value` may then hold a template with `{secret}` where it goes (such as
/// `Bearer {secret}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSetting {
    /// The variable's or header's name.
    pub name: String,
    /// The value, or with `secret_ref` a template containing `{secret}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The Helm server's environment variable holding a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
}

impl McpSetting {
    /// A literal value.
    pub fn literal(name: impl Into<String>, value: impl Into<String>) -> Self {
        McpSetting {
            name: name.into(),
            value: Some(value.into()),
            secret_ref: None,
        }
    }

    /// A secret by reference, optionally placed into a template.
    pub fn secret(name: impl Into<String>, secret_ref: impl Into<String>) -> Self {
        McpSetting {
            name: name.into(),
            value: None,
            secret_ref: Some(secret_ref.into()),
        }
    }

    /// The value to send, reading the secret it names.
    pub(crate) fn resolve(&self, secrets: &dyn crate::secrets::SecretStore) -> Result<String> {
        let Some(secret_ref) = &self.secret_ref else {
            return Ok(self.value.clone().unwrap_or_default());
        };
        let secret = secrets.secret(secret_ref).ok_or_else(|| {
            Error::Refused(format!(
                "{} names the secret {secret_ref}, which is not set in the Helm server's \
                 environment; set it and restart the server",
                self.name
            ))
        })?;
        Ok(match &self.value {
            Some(template) => template.replace("{secret}", &secret),
            None => secret,
        })
    }

    fn validate(&self, what: &'static str, header: bool) -> Result<()> {
        let name_ok = if header {
            !self.name.is_empty()
                && self.name.len() <= 128
                && self
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
        } else {
            is_env_name(&self.name)
        };
        if !name_ok {
            return Err(Error::invalid(
                what,
                format!("{:?} is not a valid name", self.name),
            ));
        }
        if header
            && ["host", "content-length", "content-type", "mcp-session-id"]
                .contains(&self.name.to_ascii_lowercase().as_str())
        {
            return Err(Error::invalid(
                what,
                format!("{} is set by Helm itself", self.name),
            ));
        }
        match (&self.value, &self.secret_ref) {
            (None, None) => Err(Error::invalid(
                what,
                format!("{} needs a value or a secret_ref", self.name),
            )),
            (_, Some(r)) if !is_env_name(r) => Err(Error::invalid(
                what,
                format!("secret_ref {r:?} must be an environment variable name"),
            )),
            (Some(t), Some(_)) if !t.contains("{secret}") => Err(Error::invalid(
                what,
                format!(
                    "the value of {} must say where the secret goes, as in \"Bearer {{secret}}\"",
                    self.name
                ),
            )),
            (Some(v), _) if v.contains(['\0', '\r', '\n']) => Err(Error::invalid(
                what,
                format!("the value of {} contains a control character", self.name),
            )),
            _ => Ok(()),
        }
    }
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum McpTransport {
    /// A program speaking MCP on stdin/stdout, run inside the channel's
    /// computer (its sandbox, `/workspace` as the working directory) with
    /// an empty environment plus only `env`.
    Stdio {
        /// The program, such as `npx` or `/workspace/bin/server`.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables it gets.
        #[serde(default)]
        env: Vec<McpSetting>,
    },
    /// A streamable-HTTP server, reached by the Helm server (not the
    /// sandbox) with `headers` added to every request; secrets in them never
    /// enter the channel's computer, its transcript or its tool journal.
    Http {
        /// The endpoint, such as `https://mcp.example.com/mcp`.
        url: String,
        /// Headers added to every request.
        #[serde(default)]
        headers: Vec<McpSetting>,
    },
}

/// One MCP server of a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// Its name in the channel: tools appear as `mcp__<name>__<tool>`.
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// Only these tools (names or `*` globs); empty: all.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Never these tools (names or `*` globs), applied after `allow`.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Whether calls need approval, for tools without their own mode.
    #[serde(default)]
    pub approval: McpApproval,
    /// Per-tool approval modes, by the server's tool name.
    #[serde(default)]
    pub tool_approval: BTreeMap<String, McpApproval>,
}

impl McpServer {
    /// Checks the whole configuration; nothing half-valid is stored.
    pub fn validate(&self) -> Result<()> {
        validate_server_name(&self.name)?;
        match &self.transport {
            McpTransport::Stdio { command, args, env } => {
                if command.trim().is_empty() {
                    return Err(Error::invalid(
                        "MCP server",
                        "a stdio server needs a command",
                    ));
                }
                if command.contains('\0') || args.iter().any(|a| a.contains('\0')) {
                    return Err(Error::invalid(
                        "MCP server",
                        "the command contains a NUL byte",
                    ));
                }
                if env.len() > 64 {
                    return Err(Error::invalid(
                        "MCP server",
                        "at most 64 environment variables",
                    ));
                }
                for e in env {
                    e.validate("MCP server environment", false)?;
                }
            }
            McpTransport::Http { url, headers } => {
                let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
                if !scheme_ok || url.len() > 2048 || url.contains(char::is_whitespace) {
                    return Err(Error::invalid(
                        "MCP server",
                        format!("{url:?} is not an http:// or https:// URL"),
                    ));
                }
                if headers.len() > 32 {
                    return Err(Error::invalid("MCP server", "at most 32 headers"));
                }
                for h in headers {
                    h.validate("MCP server header", true)?;
                }
            }
        }
        for pattern in self
            .allow
            .iter()
            .chain(&self.deny)
            .chain(self.tool_approval.keys())
        {
            if pattern.is_empty() || pattern.len() > 128 {
                return Err(Error::invalid(
                    "MCP tool pattern",
                    format!("{pattern:?} must be 1 to 128 characters"),
                ));
            }
        }
        Ok(())
    }

    /// Whether the channel's agent gets the server's tool `tool`: allowed
    /// (or no allow list) and not denied. Deny wins.
    pub fn offers(&self, tool: &str) -> bool {
        let allowed = self.allow.is_empty() || self.allow.iter().any(|p| glob(p, tool));
        allowed && !self.deny.iter().any(|p| glob(p, tool))
    }

    /// The approval mode of the server's tool `tool`.
    pub fn approval_for(&self, tool: &str) -> McpApproval {
        self.tool_approval
            .get(tool)
            .copied()
            .unwrap_or(self.approval)
    }

    /// The configuration with every secret left as its reference: what
    /// frontends show. (Secrets are never stored, so this is the whole of it.)
    pub fn is_stdio(&self) -> bool {
        matches!(self.transport, McpTransport::Stdio { .. })
    }
}

/// The name an MCP tool gets in the registry, if it fits providers' rules:
/// `mcp__<server>__<tool>`, at most 64 characters of letters, digits, `_`
/// and `-`.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("mcp__{server}__{tool}");
    let ok = name.len() <= MAX_TOOL_NAME
        && !tool.is_empty()
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(name)
}

/// A server name: 1 to 32 lowercase letters, digits, `_` or `-`, starting
/// with a letter or digit, without `__` (which separates it from the tool).
pub fn validate_server_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.contains("__");
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "MCP server name",
            format!(
                "{name:?} must be 1 to 32 lowercase letters, digits, '_' or '-' without '__' \
                 (such as files or github)"
            ),
        ))
    }
}

fn is_env_name(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && !v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(after) = rest.strip_prefix(part) else {
                return false;
            };
            rest = after;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> McpServer {
        McpServer {
            name: "files".into(),
            transport: McpTransport::Stdio {
                command: "npx".into(),
                args: vec![],
                env: vec![],
            },
            allow: vec!["read_*".into(), "list_directory".into()],
            deny: vec!["read_media_file".into()],
            approval: McpApproval::Auto,
            tool_approval: BTreeMap::from([("list_directory".into(), McpApproval::Ask)]),
        }
    }

    #[test]
    fn allow_then_deny_last() {
        let s = server();
        assert!(s.offers("read_text_file"));
        assert!(s.offers("list_directory"));
        assert!(!s.offers("read_media_file"), "deny wins over allow");
        assert!(!s.offers("write_file"), "not allowed");
        assert_eq!(s.approval_for("list_directory"), McpApproval::Ask);
        assert_eq!(s.approval_for("read_text_file"), McpApproval::Auto);
    }

    #[test]
    fn globs() {
        assert!(glob("*", "anything"));
        assert!(glob("a*c", "abbbc"));
        assert!(glob("*_file", "read_file"));
        assert!(!glob("a*c", "abd"));
        assert!(glob("a*b*c", "a1b2c"));
    }

    #[test]
    fn names_and_settings_are_checked() {
        assert!(validate_server_name("files").is_ok());
        for bad in ["", "Files", "a__b", "-x", &"x".repeat(33)] {
            assert!(validate_server_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            tool_name("files", "read_text_file").as_deref(),
            Some("mcp__files__read_text_file")
        );
        assert_eq!(tool_name("files", "has.dot"), None);
        let mut s = server();
        s.transport = McpTransport::Http {
            url: "https://x/mcp".into(),
            headers: vec![McpSetting {
                name: "Authorization".into(),
                value: Some("Bearer".into()),
                secret_ref: Some("TOKEN".into()),
            }],
        };
        assert!(s.validate().is_err(), "a template must place the secret");
        s.transport = McpTransport::Http {
            url: "ftp://x".into(),
            headers: vec![],
        };
        assert!(s.validate().is_err());
    }
}

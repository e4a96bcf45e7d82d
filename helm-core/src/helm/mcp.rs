//! A channel's MCP servers, as the facade offers them. Only the Captain and
//! admins add, change, remove and approve servers: a server runs code in
//! the channel's computer or receives the host's secrets, which is the
//! Captain's authority. Anyone else asks Skipper, whose tool does it through
//! an approval. Anyone who may see the channel may list its servers.

use serde_json::json;

use crate::error::{Error, Result};
use crate::mcp::{MAX_SERVERS, McpPin, McpServer, McpServerStatus, McpTransport, tool_name};
use crate::model::{ChannelKind, ChannelRef, User};
use crate::store::{CapabilityChange, ChannelRecord};
use crate::tool::ApprovalClass;

use super::Helm;

fn admin_only(actor: &User, what: &str) -> Result<()> {
    if actor.role.is_admin() {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "only the Captain or an admin {what}; ask @skipper in the channel, who asks for \
             approval"
        )))
    }
}

/// A sentence naming a server for notes and the audit log.
pub(crate) fn describe(server: &McpServer) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => {
            let line: Vec<&str> = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect();
            format!("MCP server {} (stdio: {})", server.name, line.join(" "))
        }
        McpTransport::Http { url, .. } => format!("MCP server {} (HTTP: {url})", server.name),
    }
}

/// Adds or replaces `server` in `record`'s policy, on the record: the pins
/// go when the way the server is reached changes (another program or URL
/// is another server), and the old connection is closed.
pub(crate) async fn put_server(
    rt: &crate::runtime::Runtime,
    record: &ChannelRecord,
    server: McpServer,
    by: &str,
    asker: Option<&User>,
    announce_in: Option<(crate::model::ChannelId, crate::model::ThreadId)>,
) -> Result<()> {
    server.validate()?;
    if record.channel.kind == ChannelKind::Home {
        return Err(Error::Refused(format!(
            "{} is Skipper's home; MCP servers belong to agent channels",
            record.channel.name
        )));
    }
    let mut policy = record.profile.capability_policy.clone();
    let previous = policy
        .mcp_servers
        .iter()
        .position(|s| s.name == server.name);
    let same_endpoint = previous
        .map(|i| policy.mcp_servers[i].transport == server.transport)
        .unwrap_or(false);
    match previous {
        Some(i) => policy.mcp_servers[i] = server.clone(),
        None if policy.mcp_servers.len() >= MAX_SERVERS => {
            return Err(Error::Refused(format!(
                "{} already has {MAX_SERVERS} MCP servers; remove one first",
                record.channel.name
            )));
        }
        None => policy.mcp_servers.push(server.clone()),
    }
    if !same_endpoint {
        rt.store
            .clear_mcp_pins(record.channel.id, &server.name)
            .await?;
    }
    let description = describe(&server);
    rt.store
        .change_capabilities(CapabilityChange {
            channel_id: record.channel.id,
            policy,
            capability: "mcp_server".into(),
            detail: json!({"name": server.name, "stdio": server.is_stdio()}),
            description,
            revoke: false,
            by: by.to_string(),
            asker: asker.map(|u| u.name.clone()),
            announce_in,
        })
        .await?;
    rt.mcp.close(record.channel.id, Some(&server.name)).await;
    Ok(())
}

/// Removes `name` from `record`'s servers, on the record, with its pins
/// and connection.
pub(crate) async fn remove_server(
    rt: &crate::runtime::Runtime,
    record: &ChannelRecord,
    name: &str,
    by: &str,
    asker: Option<&User>,
    announce_in: Option<(crate::model::ChannelId, crate::model::ThreadId)>,
) -> Result<()> {
    let mut policy = record.profile.capability_policy.clone();
    let Some(i) = policy.mcp_servers.iter().position(|s| s.name == name) else {
        return Err(Error::not_found(
            "MCP server",
            format!("{name} in {}", record.channel.name),
        ));
    };
    let removed = policy.mcp_servers.remove(i);
    rt.store
        .change_capabilities(CapabilityChange {
            channel_id: record.channel.id,
            policy,
            capability: "mcp_server".into(),
            detail: json!({"name": name}),
            description: describe(&removed),
            revoke: true,
            by: by.to_string(),
            asker: asker.map(|u| u.name.clone()),
            announce_in,
        })
        .await?;
    rt.store.clear_mcp_pins(record.channel.id, name).await?;
    rt.mcp.close(record.channel.id, Some(name)).await;
    Ok(())
}

impl Helm {
    /// The MCP servers of a channel `actor` may see, each connected to and
    /// asked for its tools. Literal header values are shown only to the
    /// Captain and admins (secrets are only ever references).
    pub async fn mcp_servers(
        &self,
        actor: &User,
        channel: &ChannelRef,
    ) -> Result<Vec<McpServerStatus>> {
        let record = self.visible_channel(actor, channel).await?;
        let mut statuses = self.inner.runtime.mcp_status(&record).await;
        if !actor.role.is_admin() {
            for status in &mut statuses {
                if let McpTransport::Http { headers, .. } = &mut status.server.transport {
                    for h in headers.iter_mut().filter(|h| h.secret_ref.is_none()) {
                        h.value = Some("[hidden]".into());
                    }
                }
            }
        }
        Ok(statuses)
    }

    /// Adds an MCP server to a channel (or replaces the one of that name),
    /// and returns what it offers. Its tools reach the agent from its next
    /// turn; each tool's definition is approved on first use (or with
    /// [`Helm::approve_mcp_tools`]).
    pub async fn set_mcp_server(
        &self,
        actor: &User,
        channel: &ChannelRef,
        server: McpServer,
    ) -> Result<McpServerStatus> {
        admin_only(actor, "adds MCP servers")?;
        let record = self.visible_channel(actor, channel).await?;
        let name = server.name.clone();
        put_server(
            &self.inner.runtime,
            &record,
            server,
            &actor.name,
            Some(actor),
            None,
        )
        .await?;
        self.mcp_server(actor, channel, &name).await
    }

    /// Removes a channel's MCP server, its pins and its connection.
    pub async fn remove_mcp_server(
        &self,
        actor: &User,
        channel: &ChannelRef,
        name: &str,
    ) -> Result<()> {
        admin_only(actor, "removes MCP servers")?;
        let record = self.visible_channel(actor, channel).await?;
        remove_server(
            &self.inner.runtime,
            &record,
            name,
            &actor.name,
            Some(actor),
            None,
        )
        .await
    }

    /// Approves the current definitions of a server's tools (all it offers,
    /// or those named), pinning them: the agent may call them without a
    /// first-use approval, and any later change needs approval again.
    pub async fn approve_mcp_tools(
        &self,
        actor: &User,
        channel: &ChannelRef,
        name: &str,
        tools: Option<Vec<String>>,
    ) -> Result<McpServerStatus> {
        admin_only(actor, "approves MCP tools")?;
        let record = self.visible_channel(actor, channel).await?;
        let status = self.mcp_server(actor, channel, name).await?;
        if let Some(error) = &status.error {
            return Err(Error::Refused(error.clone()));
        }
        if let Some(wanted) = &tools
            && let Some(unknown) = wanted
                .iter()
                .find(|w| !status.tools.iter().any(|t| &t.name == *w))
        {
            return Err(Error::not_found(
                "MCP tool",
                format!("{unknown} of server {name}"),
            ));
        }
        for tool in &status.tools {
            let chosen = tools.as_ref().is_none_or(|w| w.contains(&tool.name));
            let Some(registry_name) = tool.tool.clone().or_else(|| tool_name(name, &tool.name))
            else {
                continue;
            };
            if !chosen {
                continue;
            }
            let spec = crate::tool::ToolSpec {
                name: registry_name,
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
                approval: ApprovalClass::PerCall,
            };
            self.inner
                .store
                .put_mcp_pin(
                    McpPin {
                        channel_id: record.channel.id,
                        server: name.to_string(),
                        tool: tool.name.clone(),
                        hash: spec.definition_hash(),
                        description: spec.description.clone(),
                        input_schema: spec.input_schema.clone(),
                        approval_id: None,
                        approved_by: Some(actor.id),
                        pinned_at: jiff::Timestamp::now(),
                    },
                    Some(actor.name.clone()),
                )
                .await?;
        }
        self.mcp_server(actor, channel, name).await
    }

    /// One server's status.
    async fn mcp_server(
        &self,
        actor: &User,
        channel: &ChannelRef,
        name: &str,
    ) -> Result<McpServerStatus> {
        self.mcp_servers(actor, channel)
            .await?
            .into_iter()
            .find(|s| s.server.name == name)
            .ok_or_else(|| Error::not_found("MCP server", name))
    }
}

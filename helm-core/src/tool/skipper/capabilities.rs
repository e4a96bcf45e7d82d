//! Skipper widening or narrowing a channel's world: network access, a
//! credential by reference, a read-only mount. Grants need approval by
//! policy; revocations never do. Every change is recorded and announced.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::target_to_act;
use crate::error::Result;
use crate::model::{ApprovalAction, ChannelKind, CredentialGrant, ReadOnlyMount};
use crate::store::CapabilityChange;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool};

/// What a grant or revocation is about.
#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Capability {
    Network,
    Credential,
    Mount,
}

impl Capability {
    fn as_str(self) -> &'static str {
        match self {
            Capability::Network => "network",
            Capability::Credential => "credential",
            Capability::Mount => "mount",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrantArgs {
    /// The channel whose world widens.
    channel: String,
    capability: Capability,
    /// credential: the name the agent uses.
    #[serde(default)]
    name: Option<String>,
    /// credential: the variable it arrives as.
    #[serde(default)]
    env_var: Option<String>,
    /// credential: the server's environment variable holding it.
    #[serde(default)]
    secret_ref: Option<String>,
    /// mount: the host directory.
    #[serde(default)]
    host_path: Option<String>,
    /// mount: where it appears.
    #[serde(default)]
    at: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RevokeArgs {
    /// The channel whose world narrows.
    channel: String,
    capability: Capability,
    /// credential: its name.
    #[serde(default)]
    name: Option<String>,
    /// mount: where it appears.
    #[serde(default)]
    at: Option<String>,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "grant_capability",
            "Widen a channel's world: network access, a credential (by reference to a secret \
             the server holds), or a read-only mount. Recorded and announced.",
            ApprovalClass::PerCall,
            grant,
        )),
        Arc::new(TypedTool::new(
            "revoke_capability",
            "Narrow a channel's world again.",
            ApprovalClass::None,
            revoke,
        )),
    ]
}

fn is_env_name(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

async fn grant(cx: &ToolContext<'_>, args: GrantArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    if record.channel.kind == ChannelKind::Home {
        return Ok(ToolOutput::denied(
            "#main is Skipper's own home; it has no capability policy",
        ));
    }
    let mut policy = record.profile.capability_policy.clone();
    let (description, detail) = match args.capability {
        Capability::Network => {
            policy.network = true;
            ("network access on".to_string(), json!({}))
        }
        Capability::Credential => {
            let name = args.name.clone().unwrap_or_default();
            if name.trim().is_empty() {
                return Ok(ToolOutput::error("a credential needs a name"));
            }
            let env_var = args
                .env_var
                .clone()
                .unwrap_or_else(|| name.to_uppercase().replace(['-', ' '], "_"));
            let Some(secret_ref) = args.secret_ref.clone().filter(|s| !s.trim().is_empty()) else {
                return Ok(ToolOutput::error(
                    "a credential needs secret_ref: the server's environment variable that holds \
                     it",
                ));
            };
            if !is_env_name(&env_var) || !is_env_name(&secret_ref) {
                return Ok(ToolOutput::error(
                    "env_var and secret_ref must be environment variable names",
                ));
            }
            policy.credentials.retain(|c| c.name != name);
            policy.credentials.push(CredentialGrant {
                name: name.clone(),
                env_var: env_var.clone(),
                secret_ref: secret_ref.clone(),
            });
            (
                format!("credential {name} (as ${env_var}, from the server's {secret_ref})"),
                json!({"name": name, "env_var": env_var, "secret_ref": secret_ref}),
            )
        }
        Capability::Mount => {
            let (Some(host_path), Some(at)) = (args.host_path.clone(), args.at.clone()) else {
                return Ok(ToolOutput::error("a mount needs host_path and at"));
            };
            policy.mounts.push(ReadOnlyMount {
                host_path: host_path.clone(),
                at: at.clone(),
            });
            (
                format!("read-only mount of {host_path} at {at}"),
                json!({"host_path": host_path, "at": at}),
            )
        }
    };
    if let Some(refusal) = cx
        .approval_by_policy(
            record.channel.id,
            ApprovalAction::GrantCapability,
            format!("grant {} to {}", description, record.channel.name),
            format!("asked from thread {}", cx.thread_id()),
        )
        .await?
    {
        return Ok(refusal);
    }
    change(
        cx,
        &record,
        policy,
        args.capability,
        detail,
        description,
        false,
    )
    .await
}

async fn revoke(cx: &ToolContext<'_>, args: RevokeArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    if record.channel.kind == ChannelKind::Home {
        return Ok(ToolOutput::denied(
            "#main is Skipper's own home; it has no capability policy",
        ));
    }
    let mut policy = record.profile.capability_policy.clone();
    let (description, detail) = match args.capability {
        Capability::Network => {
            policy.network = false;
            ("network access off".to_string(), json!({}))
        }
        Capability::Credential => {
            let name = args.name.clone().unwrap_or_default();
            if name.trim().is_empty() {
                return Ok(ToolOutput::error("a credential needs a name"));
            }
            policy.credentials.retain(|c| c.name != name);
            (format!("credential {name}"), json!({"name": name}))
        }
        Capability::Mount => {
            let at = args.at.clone().unwrap_or_default();
            policy.mounts.retain(|m| m.at != at);
            (format!("read-only mount at {at}"), json!({"at": at}))
        }
    };
    change(
        cx,
        &record,
        policy,
        args.capability,
        detail,
        description,
        true,
    )
    .await
}

async fn change(
    cx: &ToolContext<'_>,
    record: &crate::store::ChannelRecord,
    policy: crate::model::CapabilityPolicy,
    capability: Capability,
    detail: serde_json::Value,
    description: String,
    revoke: bool,
) -> Result<ToolOutput> {
    cx.rt()
        .store
        .change_capabilities(CapabilityChange {
            channel_id: record.channel.id,
            policy,
            capability: capability.as_str().into(),
            detail,
            description: description.clone(),
            revoke,
            by: "@skipper".into(),
            asker: cx.person().map(|u| u.name.clone()),
            announce_in: Some((cx.channel_id(), cx.thread_id())),
        })
        .await?;
    let verb = if revoke { "revoked" } else { "granted" };
    let done = format!("{verb} {description} for {}", record.channel.name);
    Ok(ToolOutput::ok(done.clone(), done))
}

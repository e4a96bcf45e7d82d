//! Skipper on computers: any visible channel's `/workspace`, the host
//! (`#main` is Skipper's host computer, so work there is host work and
//! needs approval by policy), and packages installed into a channel.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{target, target_to_act};
use crate::error::Result;
use crate::exec::Files;
use crate::model::{ApprovalAction, ChannelKind, ToolStatus};
use crate::store::{CapabilityChange, ChannelRecord};
use crate::tool::builtin::computer::{list_files, read_file, run_command, write_file};
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    /// The command line.
    command: String,
    /// A channel (default: this thread's).
    #[serde(default)]
    channel: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HostArgs {
    /// The command line, run on the host.
    command: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// A path in that channel's /workspace.
    path: String,
    /// A channel (default: this thread's).
    #[serde(default)]
    channel: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// A path in that channel's /workspace.
    path: String,
    /// The whole new text of the file.
    content: String,
    /// A channel (default: this thread's).
    #[serde(default)]
    channel: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// A folder in that channel's /workspace (default: /workspace).
    #[serde(default)]
    path: Option<String>,
    /// A channel (default: this thread's).
    #[serde(default)]
    channel: Option<String>,
}

/// A package manager `install_package` knows.
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Manager {
    Pip,
    Npm,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PackageArgs {
    /// The channel to install into.
    channel: String,
    manager: Manager,
    /// The package, as the manager names it (`requests`, `left-pad@1.3.0`).
    package: String,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "run_command",
            "Run a shell command in a channel's computer (its /workspace, under its isolation).",
            ApprovalClass::PerCall,
            run_in_channel,
        )),
        Arc::new(TypedTool::new(
            "read_file",
            "Read a file of a channel's workspace.",
            ApprovalClass::PerCall,
            read_in_channel,
        )),
        Arc::new(TypedTool::new(
            "write_file",
            "Write a file in a channel's workspace.",
            ApprovalClass::PerCall,
            write_in_channel,
        )),
        Arc::new(TypedTool::new(
            "list_files",
            "List a folder of a channel's workspace.",
            ApprovalClass::PerCall,
            list_in_channel,
        )),
        Arc::new(TypedTool::new(
            "host_command",
            "Run a command on the host, outside every sandbox (needs approval unless the person \
             asking may approve it).",
            ApprovalClass::PerCall,
            host_command_tool,
        )),
        Arc::new(TypedTool::new(
            "install_package",
            "Install a package into a channel's environment (its /workspace; network is opened \
             for the install only). Needs approval by policy.",
            ApprovalClass::PerCall,
            install_package,
        )),
    ]
}

async fn run_in_channel(cx: &ToolContext<'_>, args: CommandArgs) -> Result<ToolOutput> {
    let record = target(cx, args.channel.as_deref()).await?;
    // #main is Skipper's host computer: a command there is a host command.
    if record.channel.kind == ChannelKind::Home {
        return host_command(cx, &args.command).await;
    }
    let computer = cx.rt().computers.computer_of(&record).await?;
    run_command(cx, &computer, &args.command, Vec::new()).await
}

async fn host_command_tool(cx: &ToolContext<'_>, args: HostArgs) -> Result<ToolOutput> {
    host_command(cx, &args.command).await
}

async fn host_command(cx: &ToolContext<'_>, command: &str) -> Result<ToolOutput> {
    let home = cx.authority().home().await?;
    if let Some(refusal) = cx
        .approval_by_policy(
            home.channel.id,
            ApprovalAction::HostCommand,
            format!("run on the host: {command}"),
            "a host-level command",
        )
        .await?
    {
        return Ok(refusal);
    }
    let computer = cx.rt().computers.computer_of(&home).await?;
    run_command(cx, &computer, command, Vec::new()).await
}

/// The files of a channel for a Skipper tool; on `#main` (the host), only
/// after approval by policy.
async fn files_for(
    cx: &ToolContext<'_>,
    record: &ChannelRecord,
    what: &str,
    path: &str,
) -> Result<Result<std::sync::Arc<dyn Files>, ToolOutput>> {
    if record.channel.kind == ChannelKind::Home
        && let Some(refusal) = cx
            .approval_by_policy(
                record.channel.id,
                ApprovalAction::HostCommand,
                format!("{what} {path} on the host"),
                "file access on Skipper's host computer",
            )
            .await?
    {
        return Ok(Err(refusal));
    }
    let computer = cx.rt().computers.computer_of(record).await?;
    Ok(Ok(cx.rt().computers.files_of(&computer, None)?))
}

async fn read_in_channel(cx: &ToolContext<'_>, args: ReadArgs) -> Result<ToolOutput> {
    let record = target(cx, args.channel.as_deref()).await?;
    match files_for(cx, &record, "read_file", &args.path).await? {
        Ok(files) => read_file(files.as_ref(), &args.path).await,
        Err(refusal) => Ok(refusal),
    }
}

async fn write_in_channel(cx: &ToolContext<'_>, args: WriteArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, args.channel.as_deref()).await?;
    match files_for(cx, &record, "write_file", &args.path).await? {
        Ok(files) => {
            write_file(
                cx,
                record.channel.id,
                files.as_ref(),
                &args.path,
                &args.content,
            )
            .await
        }
        Err(refusal) => Ok(refusal),
    }
}

async fn list_in_channel(cx: &ToolContext<'_>, args: ListArgs) -> Result<ToolOutput> {
    let record = target(cx, args.channel.as_deref()).await?;
    let path = args.path.as_deref().unwrap_or("/workspace");
    match files_for(cx, &record, "list_files", path).await? {
        Ok(files) => list_files(files.as_ref(), path).await,
        Err(refusal) => Ok(refusal),
    }
}

async fn install_package(cx: &ToolContext<'_>, args: PackageArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    let package = args.package.trim();
    let safe = !package.is_empty()
        && package
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.=<>~[],@/".contains(c));
    if !safe {
        return Ok(ToolOutput::error(format!(
            "{package:?} is not a package specification"
        )));
    }
    let (manager, command) = match args.manager {
        Manager::Pip => (
            "pip",
            format!(
                "python3 -m pip install --user --no-input --disable-pip-version-check '{package}'"
            ),
        ),
        Manager::Npm => (
            "npm",
            format!("npm install --global --prefix /workspace/.npm-global '{package}'"),
        ),
    };
    if let Some(refusal) = cx
        .approval_by_policy(
            record.channel.id,
            ApprovalAction::InstallPackage,
            format!(
                "install {manager} package {package} into {}",
                record.channel.name
            ),
            format!("asked from thread {}", cx.thread_id()),
        )
        .await?
    {
        return Ok(refusal);
    }
    // The install gets the network for itself only; the channel's policy is
    // unchanged apart from the package list.
    let mut computer = cx.rt().computers.computer_of(&record).await?;
    computer.network = true;
    let output = run_command(cx, &computer, &command, Vec::new()).await?;
    if output.status == ToolStatus::Ok {
        let mut policy = record.profile.capability_policy.clone();
        let entry = format!("{manager}:{package}");
        if !policy.packages.contains(&entry) {
            policy.packages.push(entry.clone());
        }
        cx.rt()
            .store
            .change_capabilities(CapabilityChange {
                channel_id: record.channel.id,
                policy,
                capability: "package".into(),
                detail: json!({"manager": manager, "package": package}),
                description: format!("package {entry}"),
                revoke: false,
                by: "@skipper".into(),
                asker: cx.person().map(|u| u.name.clone()),
                announce_in: Some((cx.channel_id(), cx.thread_id())),
            })
            .await?;
    }
    Ok(output)
}

//! The computer tools: a shell command and file operations in the channel's
//! `/workspace`. The helpers are shared with Skipper, whose versions take a
//! channel to act in.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{COMMAND_TIMEOUT, MAX_TOOL_OUTPUT};
use crate::error::Result;
use crate::exec::{CommandSpec, Computer, FileKind, Files};
use crate::model::{ArtifactKind, ChannelId, ToolStatus};
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool, clip_bytes};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    /// The command line.
    command: String,
    /// Names of granted credentials to pass to this command.
    #[serde(default)]
    credentials: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// A path in the workspace, relative or under /workspace.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// A path in the workspace, relative or under /workspace.
    path: String,
    /// The whole new text of the file.
    content: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// A folder in the workspace, relative or under /workspace (default: /workspace).
    #[serde(default)]
    path: Option<String>,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "run_command",
            "Run a shell command (bash) in /workspace, the channel's computer. Returns the exit \
             code and the tail of stdout and stderr. Credentials granted to the channel are \
             passed by name: they arrive as environment variables, never as text.",
            ApprovalClass::None,
            run_command_tool,
        )),
        Arc::new(TypedTool::new(
            "read_file",
            "Read a text file from the workspace.",
            ApprovalClass::None,
            read_file_tool,
        )),
        Arc::new(TypedTool::new(
            "write_file",
            "Create or replace a text file in the workspace (parent folders are created).",
            ApprovalClass::None,
            write_file_tool,
        )),
        Arc::new(TypedTool::new(
            "list_files",
            "List a folder of the workspace (default: /workspace).",
            ApprovalClass::None,
            list_files_tool,
        )),
    ]
}

async fn read_file_tool(cx: &ToolContext<'_>, args: ReadArgs) -> Result<ToolOutput> {
    read_file(cx.files()?.as_ref(), &args.path).await
}

async fn write_file_tool(cx: &ToolContext<'_>, args: WriteArgs) -> Result<ToolOutput> {
    write_file(
        cx,
        cx.channel_id(),
        cx.files()?.as_ref(),
        &args.path,
        &args.content,
    )
    .await
}

async fn list_files_tool(cx: &ToolContext<'_>, args: ListArgs) -> Result<ToolOutput> {
    list_files(
        cx.files()?.as_ref(),
        args.path.as_deref().unwrap_or("/workspace"),
    )
    .await
}

async fn run_command_tool(cx: &ToolContext<'_>, args: CommandArgs) -> Result<ToolOutput> {
    match credential_env(cx, &args.credentials) {
        Ok(env) => run_command(cx, cx.computer(), &args.command, env).await,
        Err(refusal) => Ok(refusal),
    }
}

/// A credential passed into one command: the variable it arrives as, its
/// value, and the name the agent knows it by.
pub(crate) struct CredentialValue {
    pub(crate) env_var: String,
    pub(crate) value: String,
    pub(crate) name: String,
}

/// The environment additions for the named credentials the channel was
/// granted. The agent only ever names a credential; its value goes straight
/// into the command.
fn credential_env(
    cx: &ToolContext<'_>,
    names: &[String],
) -> std::result::Result<Vec<CredentialValue>, ToolOutput> {
    let mut env = Vec::new();
    for name in names {
        let granted = cx
            .channel()
            .profile
            .capability_policy
            .credentials
            .iter()
            .find(|c| &c.name == name);
        let Some(grant) = granted else {
            return Err(ToolOutput::denied(format!(
                "this channel has no credential named {name:?}; ask @skipper (call_skipper) to \
                 grant one"
            )));
        };
        let value = cx.rt().secrets.secret(&grant.secret_ref).ok_or_else(|| {
            ToolOutput::error(format!(
                "credential {name:?} is granted but its secret is not set on the server; tell a \
                 person"
            ))
        })?;
        env.push(CredentialValue {
            env_var: grant.env_var.clone(),
            value,
            name: name.clone(),
        });
    }
    Ok(env)
}

/// Runs a command in `computer`, with credentials passed as environment
/// variables and scrubbed from what comes back; files it made become
/// artifacts (of this thread, when it ran in the thread's own channel).
pub(crate) async fn run_command(
    cx: &ToolContext<'_>,
    computer: &Computer,
    command: &str,
    credentials: Vec<CredentialValue>,
) -> Result<ToolOutput> {
    if command.trim().is_empty() {
        return Ok(ToolOutput::error("run_command needs a non-empty command"));
    }
    let mut spec = CommandSpec::new(command).timeout(Some(COMMAND_TIMEOUT));
    for c in &credentials {
        spec = spec.env(c.env_var.clone(), c.value.clone());
    }
    let mut run = cx.run_in(computer, spec).await?;
    // A command may print a secret it was given; the model never sees it.
    for c in &credentials {
        if c.value.len() >= 4 {
            let mask = format!("[credential {}]", c.name);
            run.stdout = run.stdout.replace(c.value.as_str(), &mask);
            run.stderr = run.stderr.replace(c.value.as_str(), &mask);
        }
    }
    let status = match (run.exit_code, run.signal) {
        (Some(code), _) => format!("exit code {code}"),
        _ if run.timed_out => format!("killed after {} s (timeout)", COMMAND_TIMEOUT.as_secs()),
        _ if run.killed => "killed: the turn was cancelled".to_string(),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended without an exit code".to_string(),
    };
    let mut content = status.clone();
    if run.truncated {
        content.push_str(" (output cut to its tail)");
    }
    if !run.stdout.is_empty() {
        content.push_str("\nstdout:\n");
        content.push_str(&run.stdout);
    }
    if !run.stderr.is_empty() {
        content.push_str("\nstderr:\n");
        content.push_str(&run.stderr);
    }
    let mut output = ToolOutput::ok(clip_bytes(&content, MAX_TOOL_OUTPUT), status);
    output.isolation = Some(run.isolation.as_str().to_string());
    if !run.success() {
        output.is_error = true;
        output.status = ToolStatus::Error;
    }
    if let Some(channel) = computer.channel
        && computer.is_confined()
    {
        let found = if computer.isolation == crate::exec::Isolation::Remote {
            // The workspace is not on this disk: it is listed through its files.
            let files = cx.rt().computers.files_of(computer, None)?;
            crate::world::scan_files(files.as_ref()).await?
        } else {
            crate::world::scan_workspace(computer.workspace_dir())
        };
        let thread = (channel == cx.channel_id()).then_some(cx.thread_id());
        cx.rt()
            .store
            .record_artifacts(
                channel,
                thread,
                ArtifactKind::File,
                &cx.agent_handle(),
                found,
                false,
            )
            .await?;
    }
    Ok(output)
}

/// Reads a text file for the model, bounded.
pub(crate) async fn read_file(files: &dyn Files, path: &str) -> Result<ToolOutput> {
    let text = files.read(path, None).await?;
    let mut content = clip_bytes(&text.content, MAX_TOOL_OUTPUT);
    if text.truncated {
        content.push_str("\n[… the file goes on; read it by parts with a command such as sed -n]");
    }
    Ok(ToolOutput::ok(
        content,
        format!("read {} lines of {}", text.end_line, text.path),
    ))
}

/// Writes a file of `channel`'s workspace and records it as an artifact.
pub(crate) async fn write_file(
    cx: &ToolContext<'_>,
    channel: ChannelId,
    files: &dyn Files,
    path: &str,
    content: &str,
) -> Result<ToolOutput> {
    let entry = files.write(path, content.as_bytes().to_vec()).await?;
    cx.rt()
        .store
        .record_artifacts(
            channel,
            (channel == cx.channel_id()).then_some(cx.thread_id()),
            ArtifactKind::File,
            &cx.agent_handle(),
            vec![entry.path.clone()],
            true,
        )
        .await?;
    let done = format!("wrote {} bytes to {}", content.len(), entry.path);
    Ok(ToolOutput::ok(done.clone(), done))
}

/// Lists a folder for the model.
pub(crate) async fn list_files(files: &dyn Files, path: &str) -> Result<ToolOutput> {
    let entries = files.list(path).await?;
    let lines: Vec<String> = entries
        .iter()
        .map(|e| match e.kind {
            FileKind::Dir => format!("{}/", e.name),
            _ => format!("{} ({} bytes)", e.name, e.size),
        })
        .collect();
    let listing = if lines.is_empty() {
        "(empty)".to_string()
    } else {
        lines.join("\n")
    };
    Ok(ToolOutput::ok(
        clip_bytes(&listing, MAX_TOOL_OUTPUT),
        format!("{} entries", lines.len()),
    ))
}

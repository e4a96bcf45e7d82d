//! Helm as an MCP server: any MCP client (an editor, another agent) lists
//! the channels its person may see, talks to a channel's agent (continuing
//! a thread by id) and gets the reply, reads threads, lists and reads a
//! channel's files, and recalls its memory. Every call acts as one person
//! and sees only what they may: `helm-http` serves it at `/mcp` for the
//! person whose token signs the request; `1helm mcp` serves it over stdio
//! for the person the command runs as.
//!
//! A long `send_message` sends progress notifications (when the client
//! asked for them) as the reply streams and tools run; `retry_thread` runs
//! a failed turn again without sending its message twice.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Helm;
use crate::error::{Error, ErrorKind};
use crate::helm::{Conversation, ConversationUpdate};
use crate::memory::recall::RecallQuery;
use crate::model::{ChannelRef, ThreadId, User};
use crate::store::ChannelFilter;
use crate::tool::schema_for;

/// How long `send_message` waits for the agent before answering with what
/// it has (the thread goes on; read it later).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(600);

/// Who a request acts for.
pub type Identify = Arc<dyn Fn(&RequestContext<RoleServer>) -> Option<User> + Send + Sync>;

/// The MCP server over one workspace.
#[derive(Clone)]
pub struct HelmMcpServer {
    helm: Helm,
    identify: Identify,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    /// The channel, such as `launch` (`main` is Skipper's).
    channel: String,
    /// What to say to the channel's agent.
    text: String,
    /// A thread to continue (from an earlier reply); a new one by default.
    #[serde(default)]
    thread: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ThreadArgs {
    /// The thread's id.
    thread: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// The channel.
    channel: String,
    /// A folder of its workspace (default: /workspace).
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// The channel.
    channel: String,
    /// A file of its workspace, such as /workspace/plan.md.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteArgs {
    /// The channel.
    channel: String,
    /// The note, in Markdown.
    text: String,
    /// A one-line title: the note's heading and file name.
    #[serde(default)]
    title: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// The channel.
    channel: String,
    /// What to look for, in plain words.
    query: String,
    /// How many matches (1 to 50, default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u32>,
}

fn tool<A: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    let schema = match schema_for::<A>() {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(name, description, schema)
}

/// The tools Helm serves.
pub fn server_tools() -> Vec<Tool> {
    vec![
        tool::<NoArgs>(
            "list_channels",
            "The channels you may see, each with its agent and what it is for.",
        ),
        tool::<SendArgs>(
            "send_message",
            "Send a message to a channel's resident agent and get its reply (the agent may \
             work with its tools first). Continue a conversation by passing the thread from an \
             earlier reply.",
        ),
        tool::<ThreadArgs>(
            "retry_thread",
            "Run a thread's failed last turn again (after send_message failed, say because the \
             model was unreachable) and get the reply; the message is not sent a second time.",
        ),
        tool::<ThreadArgs>("read_thread", "The messages of a thread, oldest first."),
        tool::<ListArgs>("list_files", "List a folder of a channel's workspace."),
        tool::<ReadArgs>("read_file", "Read a text file of a channel's workspace."),
        tool::<NoteArgs>(
            "save_note",
            "Save a note as a new Markdown file in a channel's /workspace/notes, where its \
             agent and people find it; an existing file is never replaced.",
        ),
        tool::<RecallArgs>(
            "recall",
            "Search a channel's memory and history (decisions, facts, summaries, messages), \
             with where each match came from.",
        ),
    ]
}

/// What a tool answers: text for the model, the same as data, and whether
/// the call failed.
struct Answer {
    text: String,
    structured: Value,
    failed: bool,
}

impl Answer {
    fn ok(text: String, structured: Value) -> Self {
        Answer {
            text,
            structured,
            failed: false,
        }
    }

    fn failed(text: String, structured: Value) -> Self {
        Answer {
            text,
            structured,
            failed: true,
        }
    }
}

/// Passes a conversation's progress on as MCP progress notifications, when
/// the client asked for them (a progress token in the call).
fn progress(context: &RequestContext<RoleServer>) -> impl FnMut(ConversationUpdate) + Send {
    let token = context.meta.get_progress_token();
    let peer = context.peer.clone();
    let mut step = 0u32;
    move |update| {
        let Some(token) = token.clone() else {
            return;
        };
        step += 1;
        let message = match update {
            ConversationUpdate::Text { text } => text,
            ConversationUpdate::Tool { name, .. } => format!("[running {name}]"),
            ConversationUpdate::Started { thread, .. } => format!("[thread {thread}]"),
        };
        let peer = peer.clone();
        let param = ProgressNotificationParam::new(token, f64::from(step)).with_message(message);
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// What `send_message` and `retry_thread` answer: the replies, with the
/// thread to go on in.
fn conversation_answer(conversation: &Conversation) -> Answer {
    let structured = json!({
        "thread": conversation.thread.0,
        "reply": conversation.reply,
        "state": conversation.state.map(|s| s.to_string()),
        "error": conversation.error,
        "waiting_for_approval": conversation.waiting_for.iter().map(|a| a.id).collect::<Vec<_>>(),
        // Tokens of every model call the message set off, when every
        // provider reported them.
        "usage": conversation.usage,
    });
    let mut text = format!("{}\n\n(thread {})", conversation.reply, conversation.thread);
    // A failed turn is the tool failing, though the thread (and what the
    // agent did before it failed) is there to go on with, or to run again.
    if conversation.error.is_none() {
        return Answer::ok(text, structured);
    }
    text.push_str(&format!(
        "\n\nTo run the failed turn again without sending the message twice, call retry_thread \
         with thread {}.",
        conversation.thread
    ));
    Answer::failed(text, structured)
}

impl HelmMcpServer {
    /// A server over `helm` whose requests act for whoever `identify` says.
    pub fn new(helm: Helm, identify: Identify) -> Self {
        HelmMcpServer { helm, identify }
    }

    /// A server whose every request acts for `user` (stdio).
    pub fn for_user(helm: Helm, user: User) -> Self {
        HelmMcpServer::new(helm, Arc::new(move |_| Some(user.clone())))
    }

    async fn run(
        &self,
        user: &User,
        name: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> crate::Result<Answer> {
        fn parse<A: serde::de::DeserializeOwned>(args: Value) -> crate::Result<A> {
            serde_json::from_value(args).map_err(|e| Error::invalid("arguments", e.to_string()))
        }
        let helm = &self.helm;
        match name {
            "list_channels" => {
                let _: NoArgs = parse(args)?;
                let channels = helm
                    .visible_channels(user, ChannelFilter::default())
                    .await?;
                let list: Vec<Value> = channels
                    .iter()
                    .map(|r| {
                        json!({
                            "name": r.channel.name.as_str(),
                            "purpose": r.channel.purpose,
                            "agent": r.agent.handle.to_string(),
                            "status": r.channel.status.to_string(),
                        })
                    })
                    .collect();
                let text = channels
                    .iter()
                    .map(|r| {
                        format!(
                            "{} ({}): {}",
                            r.channel.name, r.agent.handle, r.channel.purpose
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Ok(Answer::ok(text, json!({"channels": list})))
            }
            "send_message" => {
                let args: SendArgs = parse(args)?;
                let channel: ChannelRef = args.channel.parse()?;
                let thread = args.thread.map(ThreadId);
                let conversation = helm
                    .converse(
                        user,
                        &channel,
                        &args.text,
                        thread,
                        REPLY_TIMEOUT,
                        progress(context),
                    )
                    .await?;
                Ok(conversation_answer(&conversation))
            }
            "retry_thread" => {
                let args: ThreadArgs = parse(args)?;
                let thread = ThreadId(args.thread);
                let again = helm.converse_again(user, thread, REPLY_TIMEOUT, progress(context));
                Ok(conversation_answer(&again.await?))
            }
            "read_thread" => {
                let args: ThreadArgs = parse(args)?;
                let (thread, _) = helm.visible_thread(user, ThreadId(args.thread)).await?;
                let messages = helm.thread_messages(thread.id).await?;
                let lines: Vec<String> = messages
                    .iter()
                    .filter(|m| !m.content.trim().is_empty())
                    .map(|m| format!("{}: {}", m.author.display(), m.content))
                    .collect();
                Ok(Answer::ok(
                    format!(
                        "thread {} \"{}\" ({})\n\n{}",
                        thread.id,
                        thread.title,
                        thread.status,
                        lines.join("\n\n")
                    ),
                    json!({"thread": thread.id.0, "title": thread.title, "status": thread.status.to_string(), "messages": lines}),
                ))
            }
            "list_files" => {
                let args: ListArgs = parse(args)?;
                let files = helm.workspace_files(user, &args.channel.parse()?).await?;
                let entries = files
                    .list(args.path.as_deref().unwrap_or("/workspace"))
                    .await?;
                let names: Vec<String> = entries
                    .iter()
                    .map(|e| match e.kind {
                        crate::exec::FileKind::Dir => format!("{}/", e.name),
                        _ => e.name.clone(),
                    })
                    .collect();
                Ok(Answer::ok(names.join("\n"), json!({"entries": names})))
            }
            "read_file" => {
                let args: ReadArgs = parse(args)?;
                let files = helm.workspace_files(user, &args.channel.parse()?).await?;
                let text = files.read(&args.path, None).await?;
                Ok(Answer::ok(
                    text.content.clone(),
                    json!({"path": text.path, "truncated": text.truncated}),
                ))
            }
            "save_note" => {
                let args: NoteArgs = parse(args)?;
                let note = crate::NewNote {
                    text: args.text,
                    title: args.title,
                };
                let entry = helm.save_note(user, &args.channel.parse()?, note).await?;
                Ok(Answer::ok(
                    format!("Saved {} ({} bytes).", entry.path, entry.size),
                    json!({"path": entry.path, "size": entry.size}),
                ))
            }
            "recall" => {
                let args: RecallArgs = parse(args)?;
                let mut query = RecallQuery::new(&args.query);
                query.limit = args.limit.unwrap_or(8) as usize;
                let hits = helm.recall_as(user, &args.channel.parse()?, query).await?;
                let lines: Vec<String> = hits
                    .iter()
                    .map(crate::runtime::context::provenance_line)
                    .collect();
                Ok(Answer::ok(
                    if lines.is_empty() {
                        "nothing found".into()
                    } else {
                        lines.join("\n")
                    },
                    // The hits as data (kind, id, score, content, thread,
                    // author, created, sources); the text shows each in a line.
                    json!({"hits": hits}),
                ))
            }
            other => Err(Error::not_found("tool", other)),
        }
    }
}

impl ServerHandler for HelmMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("helm", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Helm: channels with resident agents. list_channels, then send_message to a \
                 channel's agent; continue with the thread from its reply. When a reply failed \
                 (its model was unreachable, say), retry_thread runs it again.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(server_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(user) = (self.identify)(&context) else {
            return Err(ErrorData::invalid_request("not signed in", None));
        };
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let result = match self.run(&user, &request.name, args, &context).await {
            Ok(answer) => {
                let content = vec![ContentBlock::text(answer.text)];
                let mut result = if answer.failed {
                    CallToolResult::error(content)
                } else {
                    CallToolResult::success(content)
                };
                result.structured_content = Some(answer.structured);
                result
            }
            Err(e)
                if e.kind() == ErrorKind::NotFound
                    && !server_tools().iter().any(|t| t.name == request.name) =>
            {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {}", request.name),
                    None,
                ));
            }
            // What went wrong is for the caller to read: a tool error.
            Err(e) => {
                CallToolResult::error(vec![ContentBlock::text(format!("{} ({})", e, e.code()))])
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}

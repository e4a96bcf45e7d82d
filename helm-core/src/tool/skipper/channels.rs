//! Skipper across channels: listing what the person asking may see,
//! reading another channel's knowledge (approval by policy), creating a
//! channel, and choosing a channel's model.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{target, target_to_act};
use crate::error::Result;
use crate::memory::recall::RecallQuery;
use crate::model::{ApprovalAction, ModelChoice};
use crate::store::MemoryFilter;
use crate::tool::builtin::MAX_TOOL_OUTPUT;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool, clip, clip_bytes};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadChannelArgs {
    /// The channel to read.
    channel: String,
    /// Something to recall from it, in plain words.
    #[serde(default)]
    query: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The new channel's name, such as `ops`.
    name: String,
    /// What the channel is for, in plain language.
    purpose: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ModelArgs {
    /// The channel.
    channel: String,
    /// A registered provider's name.
    provider: String,
    /// The model (default: the provider's default model).
    #[serde(default)]
    model: Option<String>,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "list_channels",
            "The workspace's channels the person asking, and everyone who reads this thread, may \
             see.",
            ApprovalClass::None,
            list_channels,
        )),
        Arc::new(TypedTool::new(
            "read_channel",
            "Read another channel's recent threads, summaries and memory (needs approval by \
             policy).",
            ApprovalClass::PerCall,
            read_channel,
        )),
        Arc::new(TypedTool::new(
            "create_channel",
            "Create a channel with its resident agent.",
            ApprovalClass::None,
            create_channel,
        )),
        Arc::new(TypedTool::new(
            "set_model_policy",
            "Choose the provider and model that serve a channel from its next turn.",
            ApprovalClass::None,
            set_model_policy,
        )),
    ]
}

async fn list_channels(cx: &ToolContext<'_>, _args: NoArgs) -> Result<ToolOutput> {
    // The list lands in this thread: only channels every reader of it may
    // see (and the asker too), as Skipper's prompt lists them.
    let visible: Vec<_> = cx
        .authority()
        .visible_channels(cx.person(), true)
        .await?
        .into_iter()
        .filter(|r| cx.audience().sees_channel(r.channel.id))
        .collect();
    let lines: Vec<String> = visible
        .iter()
        .map(|r| {
            format!(
                "{} ({}, {}): {}",
                r.channel.name, r.agent.handle, r.channel.status, r.channel.purpose
            )
        })
        .collect();
    Ok(ToolOutput::ok(
        lines.join("\n"),
        format!("{} channels", lines.len()),
    ))
}

async fn read_channel(cx: &ToolContext<'_>, args: ReadChannelArgs) -> Result<ToolOutput> {
    let record = target(cx, Some(&args.channel)).await?;
    if record.channel.id != cx.channel_id()
        && let Some(refusal) = cx
            .approval_by_policy(
                record.channel.id,
                ApprovalAction::CrossChannelRead,
                format!("read {}'s threads and memory", record.channel.name),
                format!("asked from thread {}", cx.thread_id()),
            )
            .await?
    {
        return Ok(refusal);
    }
    let store = &cx.rt().store;
    let mut out = format!(
        "{} ({}): {}\n",
        record.channel.name, record.agent.handle, record.channel.purpose
    );
    out.push_str("\nRecent threads:\n");
    for t in store.threads(record.channel.id, 10).await? {
        out.push_str(&format!("- thread {} \"{}\" ({})", t.id, t.title, t.status));
        if !t.summary.is_empty() {
            out.push_str(&format!(": {}", clip(&t.summary, 400)));
        }
        out.push('\n');
    }
    out.push_str("\nMemory:\n");
    let filter = MemoryFilter {
        limit: 30,
        ..Default::default()
    };
    for m in store.list_memory(record.channel.id, filter).await? {
        out.push_str(&format!(
            "- [{} {}] {}\n",
            m.kind,
            m.id,
            clip(&m.content, 400)
        ));
    }
    if let Some(q) = args.query.as_deref().filter(|q| !q.trim().is_empty()) {
        out.push_str(&format!("\nRecalled for {q:?}:\n"));
        let mut query = RecallQuery::new(q);
        query.limit = 8;
        // Records other channels share with the workspace come only from
        // channels the asker and every reader of this thread may see.
        let audience = cx.audience().clone();
        for hit in cx
            .rt()
            .recall
            .recall(&audience, record.channel.id, &query)
            .await?
        {
            if cx
                .authority()
                .may_see_id(cx.person(), hit.channel_id)
                .await?
            {
                out.push_str(&crate::runtime::context::provenance_line(&hit));
                out.push('\n');
            }
        }
    }
    Ok(ToolOutput::ok(
        clip_bytes(&out, MAX_TOOL_OUTPUT),
        format!("read {}", record.channel.name),
    ))
}

async fn create_channel(cx: &ToolContext<'_>, args: CreateArgs) -> Result<ToolOutput> {
    let Some(person) = cx.person() else {
        return Ok(ToolOutput::denied(
            "only a person can have a channel created",
        ));
    };
    let record = cx
        .authority()
        .create_channel(person, &args.name, &args.purpose)
        .await?;
    let done = format!(
        "created {} with {}",
        record.channel.name, record.agent.handle
    );
    Ok(ToolOutput::ok(done.clone(), done))
}

async fn set_model_policy(cx: &ToolContext<'_>, args: ModelArgs) -> Result<ToolOutput> {
    let record = target_to_act(cx, Some(&args.channel)).await?;
    let Some(person) = cx.person() else {
        return Ok(ToolOutput::denied(
            "only a person can change a channel's model",
        ));
    };
    let choice = ModelChoice::new(&args.provider, args.model.clone());
    // The same choice again changes nothing (and is recorded nowhere), so
    // there is nothing to announce.
    let current = cx.rt().store.model_policy(record.channel.id, None).await?;
    if current.channel.as_ref() == Some(&choice) {
        let served = match &choice.model {
            Some(model) => format!("{} / {model}", choice.provider),
            None => choice.provider.clone(),
        };
        let same = format!(
            "{} is already served by {served}; nothing changed",
            record.channel.name
        );
        return Ok(ToolOutput::ok(same.clone(), same));
    }
    let check = cx
        .authority()
        .set_channel_model(cx.rt(), person, &record, choice)
        .await?;
    let served = check
        .map(|c| format!("{} / {}", c.provider, c.model))
        .unwrap_or_else(|| args.provider.clone());
    let done = format!("{} is now served by {served}", record.channel.name);
    cx.note(format!("@skipper set {done}.")).await?;
    Ok(ToolOutput::ok(done.clone(), done))
}

//! `1helm memory …` and `1helm recall`.

use anyhow::Result;
use helm_core::MemoryNote;
use helm_core::memory::config::RecallMode;
use helm_core::memory::recall::{MAX_LIMIT, RecallQuery};
use helm_core::model::{MemoryId, MemoryItem, MemoryScope, ThreadId};
use helm_core::store::MemoryFilter;

use super::Ctx;
use crate::cli::{MEMORY_PAGE, MemoryCommand, RecallArgs};
use crate::exit;
use crate::output::{clip, table};

/// The most records `memory list` shows (as the HTTP API's page).
const MAX_LIST: usize = 500;

fn render_item(item: &MemoryItem) -> String {
    let by = item
        .forgotten_by
        .as_deref()
        .map(|who| format!(" by {who}"))
        .unwrap_or_default();
    format!(
        "Memory {} ({}, {}{by}{}): {}",
        item.id,
        item.kind,
        item.status,
        if item.pinned { ", pinned" } else { "" },
        item.content
    )
}

/// The command that lists the records after `last`, as this one was asked.
fn older_records_hint(
    channel: &str,
    kind: &Option<String>,
    all: bool,
    thread: &Option<String>,
    limit: usize,
    last: MemoryId,
) -> String {
    let mut command = format!("1helm memory list {channel}");
    if let Some(kind) = kind {
        command.push_str(&format!(" --kind {kind}"));
    }
    if all {
        command.push_str(" --all");
    }
    if let Some(thread) = thread {
        command.push_str(&format!(" --thread {thread}"));
    }
    if limit != MEMORY_PAGE {
        command.push_str(&format!(" --limit {limit}"));
    }
    format!("\nOlder records: `{command} --before {last}`")
}

pub async fn run(ctx: &Ctx, cmd: MemoryCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        MemoryCommand::List {
            channel,
            kind,
            all,
            thread,
            limit,
            before,
        } => {
            if !(1..=MAX_LIST).contains(&limit) {
                return Err(helm_core::Error::invalid(
                    "limit",
                    format!("--limit must be between 1 and {MAX_LIST}"),
                )
                .into());
            }
            let filter = MemoryFilter {
                kind: kind.as_deref().map(str::parse).transpose()?,
                thread: thread.as_deref().map(str::parse::<ThreadId>).transpose()?,
                include_inactive: all,
                limit,
                before: before.as_deref().map(str::parse::<MemoryId>).transpose()?,
            };
            let items = backend.memory(&channel, filter.clone()).await?;
            // Whether records remain after a full page: one more asked for
            // says so exactly (a page that happens to end the list offers
            // no next one).
            let more = match items.last() {
                Some(last) if items.len() == limit => {
                    let next = MemoryFilter {
                        limit: 1,
                        before: Some(last.id),
                        ..filter.clone()
                    };
                    !backend.memory(&channel, next).await?.is_empty()
                }
                _ => false,
            };
            ctx.out.print(&items, || {
                if items.is_empty() && filter.before.is_some() {
                    return "No older records.".to_string();
                }
                if items.is_empty() {
                    return "No memory yet. Agents record decisions and facts as they work; add one \
                            with `1helm memory add CHANNEL --kind decision TEXT`."
                        .to_string();
                }
                let rows: Vec<Vec<String>> = items
                    .iter()
                    .map(|i| {
                        vec![
                            i.id.to_string(),
                            i.kind.to_string(),
                            format!("{}{}", i.status, if i.pinned { " ★" } else { "" }),
                            i.thread_id
                                .map(|t| t.to_string())
                                .unwrap_or_else(|| "-".into()),
                            i.author_name
                                .clone()
                                .unwrap_or_else(|| i.author_type.to_string()),
                            clip(&i.content, 70),
                        ]
                    })
                    .collect();
                let mut out = table(&["ID", "KIND", "STATUS", "THREAD", "BY", "CONTENT"], &rows);
                if let (true, Some(last)) = (more, items.last()) {
                    out.push_str(&older_records_hint(
                        &channel, &kind, all, &thread, limit, last.id,
                    ));
                }
                out
            })?;
        }
        MemoryCommand::Add {
            channel,
            kind,
            text,
            thread,
            workspace,
        } => {
            let item = backend
                .remember(
                    &channel,
                    MemoryNote {
                        kind: kind.parse()?,
                        content: text,
                        thread: thread.map(|t| t.parse()).transpose()?,
                        scope: if workspace {
                            MemoryScope::Workspace
                        } else {
                            MemoryScope::Channel
                        },
                    },
                )
                .await?;
            ctx.out
                .print(&item, || format!("Remembered: {}", render_item(&item)))?;
        }
        MemoryCommand::Edit { id, text } => {
            let old: MemoryId = id.parse()?;
            let item = backend.edit_memory(old, &text).await?;
            ctx.out.print(&item, || {
                format!(
                    "{}\n(memory {old} is kept as superseded by {})",
                    render_item(&item),
                    item.id
                )
            })?;
        }
        MemoryCommand::Forget { id } => {
            let item = backend.forget_memory(id.parse()?).await?;
            ctx.out
                .print(&item, || format!("Forgotten: {}", render_item(&item)))?;
        }
        MemoryCommand::Restore { id } => {
            let item = backend.restore_memory(id.parse()?).await?;
            ctx.out
                .print(&item, || format!("Restored: {}", render_item(&item)))?;
        }
        MemoryCommand::Pin { id, off } => {
            let item = backend.pin_memory(id.parse()?, !off).await?;
            ctx.out.print(&item, || render_item(&item))?;
        }
    }
    Ok(exit::OK)
}

pub async fn recall(ctx: &Ctx, args: RecallArgs) -> Result<i32> {
    if args.limit == 0 || args.limit > MAX_LIMIT {
        return Err(helm_core::Error::invalid(
            "limit",
            format!("--limit must be between 1 and {MAX_LIMIT}"),
        )
        .into());
    }
    if args.query.trim().is_empty() {
        // Checked here so that a server's wording does not differ.
        return Err(
            helm_core::Error::invalid("query", "recall needs a question or some words").into(),
        );
    }
    let backend = ctx.backend().await?;
    let mut query = RecallQuery::new(args.query);
    query.limit = args.limit;
    query.include_superseded = args.superseded;
    let hits = backend.recall(&args.channel, query).await?;
    // Words only is a lesser recall: say so every time, beside the hits
    // (on stderr, so JSON output stays clean).
    if let Some(mode @ RecallMode::Words { .. }) = backend.recall_mode() {
        eprintln!("note: recall worked {}", mode.describe());
    }
    ctx.out.print(&hits, || {
        if hits.is_empty() {
            return "Nothing recalled.".to_string();
        }
        let mut out = String::new();
        for (n, h) in hits.iter().enumerate() {
            let thread = h
                .thread
                .as_ref()
                .map(|t| format!(" · thread {} \"{}\"", t.id, clip(&t.title, 40)))
                .unwrap_or_default();
            let by = h
                .author
                .as_deref()
                .map(|a| format!(" · {a}"))
                .unwrap_or_default();
            let sources = if h.source_external_ids.is_empty() {
                String::new()
            } else {
                format!(" · from {}", clip(&h.source_external_ids.join(", "), 60))
            };
            out.push_str(&format!(
                "{}. [{} {}] {:.3}{thread}{by} · {}{sources}\n   {}\n",
                n + 1,
                h.kind,
                h.id,
                h.score,
                h.created.strftime("%Y-%m-%d"),
                clip(&h.content, 300)
            ));
        }
        out
    })?;
    Ok(exit::OK)
}

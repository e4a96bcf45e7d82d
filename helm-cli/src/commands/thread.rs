//! `1helm thread …`.

use anyhow::Result;
use helm_core::ThreadFilter;
use helm_core::model::{MessageId, ThreadId, ThreadStatus};
use serde_json::json;

use helm_core::runtime::follow::Follow;

use super::Ctx;
use super::say::{Render, follow_to_the_end};
use crate::backend::Backend;
use crate::cli::{MESSAGE_PAGE, THREAD_PAGE, ThreadCommand};
use crate::exit;
use crate::output::{clip, table};

/// The most messages one page of `thread show` holds (as the HTTP API's page).
const MAX_MESSAGES: usize = 500;

/// What `thread show --json` prints: the thread with the page of its
/// messages shown, and where the page before starts while older ones remain.
#[derive(serde::Serialize)]
struct ThreadShown<'a> {
    #[serde(flatten)]
    view: &'a helm_client::ThreadView,
    /// The first message shown, to give as `--before` for older ones;
    /// absent when none are older.
    next_before: Option<MessageId>,
}

pub async fn run(ctx: &Ctx, cmd: ThreadCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        ThreadCommand::List {
            channel,
            limit,
            search,
            archived,
            hide_archived,
            before,
        } => {
            let before = match before {
                Some(id) => Some(backend.thread_cursor(&channel, id.parse()?).await?),
                None => None,
            };
            let filter = ThreadFilter {
                archived: (archived || hide_archived).then_some(archived),
                search,
                before,
            };
            let list = backend.threads(&channel, &filter, limit).await?;
            let threads = &list.threads;
            ctx.out.print(threads, || {
                if threads.is_empty() && filter.before.is_some() {
                    return "No older threads.".to_string();
                }
                if threads.is_empty() && filter != ThreadFilter::default() {
                    return "No thread matches.".to_string();
                }
                if threads.is_empty() {
                    return "No threads yet: start one with `1helm say CHANNEL \"@agent …\"`."
                        .to_string();
                }
                let rows: Vec<Vec<String>> = threads
                    .iter()
                    .map(|t| {
                        vec![
                            t.id.to_string(),
                            t.status.to_string(),
                            t.updated_at.strftime("%Y-%m-%d %H:%M").to_string(),
                            clip(&t.title, 60),
                        ]
                    })
                    .collect();
                let mut out = table(&["ID", "STATUS", "UPDATED (UTC)", "TITLE"], &rows);
                if let Some(next) = list.next {
                    out.push_str(&next_page_hint(&channel, &filter, limit, next.id));
                }
                out
            })?;
        }
        ThreadCommand::Show {
            id,
            limit,
            before,
            all,
        } => {
            let id: ThreadId = id.parse()?;
            if !(1..=MAX_MESSAGES).contains(&limit) {
                return Err(helm_core::Error::invalid(
                    "limit",
                    format!(
                        "--limit must be between 1 and {MAX_MESSAGES}; --all shows every message"
                    ),
                )
                .into());
            }
            let before = before.as_deref().map(str::parse::<MessageId>).transpose()?;
            let view = if all {
                backend.thread(id).await?
            } else {
                backend.thread_page(id, before, limit).await?
            };
            // Whether older messages remain before a full page: one more
            // asked for says so exactly.
            let older = match view.messages.first() {
                Some(first) if !all && view.messages.len() == limit => {
                    let next = backend.thread_page(id, Some(first.id), 1).await?;
                    (!next.messages.is_empty()).then_some(first.id)
                }
                _ => None,
            };
            let shown = ThreadShown {
                view: &view,
                next_before: older,
            };
            let (thread, messages) = (&view.thread, &view.messages);
            // The channel by name, as people know it; its number only if it
            // cannot be read.
            let channel = match backend.channel(&thread.channel_id.to_string()).await {
                Ok(detail) => detail.record.channel.name.to_string(),
                Err(_) => format!("channel {}", thread.channel_id),
            };
            ctx.out.print(&shown, || {
                let mut out = format!(
                    "Thread {} in {channel}: {} ({})\n",
                    thread.id, thread.title, thread.status
                );
                if !thread.summary.is_empty() {
                    out.push_str(&format!("Summary: {}\n", thread.summary));
                }
                if messages.is_empty() && before.is_some() {
                    out.push_str("\nNo older messages.\n");
                }
                // Said first, where a reader starts: the page is the newest
                // messages, and how to see the ones before.
                if let Some(first) = older {
                    let sized = if limit == MESSAGE_PAGE {
                        String::new()
                    } else {
                        format!(" --limit {limit}")
                    };
                    out.push_str(&format!(
                        "({} messages shown; older ones: `1helm thread show {id}{sized} --before {first}`; \
                         all of them: `1helm thread show {id} --all`)\n",
                        messages.len(),
                        id = thread.id
                    ));
                }
                // Times are UTC; the date shows on the first message and
                // wherever the day changes.
                let mut day = None;
                for m in messages {
                    let date = m.created.strftime("%Y-%m-%d").to_string();
                    let when = if day.as_ref() == Some(&date) {
                        m.created.strftime("%H:%M:%S").to_string()
                    } else {
                        m.created.strftime("%Y-%m-%d %H:%M:%S UTC").to_string()
                    };
                    day = Some(date);
                    let status = match m.status {
                        helm_core::model::MessageStatus::Complete => String::new(),
                        other => format!(" [{other}]"),
                    };
                    let served = m
                        .served_by
                        .as_ref()
                        .map(|s| {
                            format!(
                                " via {}{}",
                                s.provider,
                                s.model
                                    .as_deref()
                                    .map(|m| format!("/{m}"))
                                    .unwrap_or_default()
                            )
                        })
                        .unwrap_or_default();
                    // An agent's reply says what its turn's model calls used.
                    let tokens = view
                        .turns
                        .iter()
                        .find(|t| t.reply_message_id == m.id)
                        .and_then(|t| t.usage)
                        .map(|u| format!(", {} tokens in, {} out", u.input_tokens, u.output_tokens))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "\n{when} {}{}{}{}:\n{}\n",
                        m.author.display(),
                        served,
                        tokens,
                        status,
                        m.content
                    ));
                }
                out
            })?;
        }
        ThreadCommand::Retry { id, no_wait } => {
            let id: ThreadId = id.parse()?;
            return retry(ctx, backend, id, no_wait).await;
        }
        ThreadCommand::Resolve { id, no_summary } => {
            let id: ThreadId = id.parse()?;
            let thread = backend
                .set_thread_status(id, ThreadStatus::Resolved)
                .await?;
            // A server writes a resolved thread's summary by itself.
            let by_server = !no_summary && backend.summarizes_resolved_threads();
            let summary = if no_summary || by_server {
                None
            } else {
                Some(backend.summarize_thread(id).await)
            };
            let value = json!({
                "thread": thread,
                "summary": summary.as_ref().and_then(|s| s.as_ref().ok()),
                "summary_error": summary.as_ref().and_then(|s| s.as_ref().err()).map(|e| e.to_string()),
                "summary_by_server": by_server,
            });
            ctx.out.print(&value, || {
                let mut out = format!("Thread {} resolved.", thread.id);
                match &summary {
                    Some(Ok(written)) => {
                        out.push_str(&format!("\nSummary:\n{}", written.summary.render()))
                    }
                    Some(Err(e)) => out.push_str(&format!("\nNo summary was written: {e}")),
                    None if by_server => out.push_str(&format!(
                        "\nThe server writes its summary shortly; `1helm thread show {}` shows it.",
                        thread.id
                    )),
                    None => {}
                }
                out
            })?;
        }
        ThreadCommand::Summarize { id } => {
            let written = backend.summarize_thread(id.parse()?).await?;
            ctx.out.print(&written, || {
                format!(
                    "Summary of thread {} (memory {}, by {}/{}):\n{}",
                    written.thread_id,
                    written.memory_id,
                    written.provider,
                    written.model,
                    written.summary.render()
                )
            })?;
        }
        ThreadCommand::Rename { id, title } => {
            let thread = backend.rename_thread(id.parse()?, &title).await?;
            ctx.out.print(&thread, || {
                format!("Thread {} is now called {:?}.", thread.id, thread.title)
            })?;
        }
        ThreadCommand::Archive { id } => {
            let thread = backend
                .set_thread_status(id.parse()?, ThreadStatus::Archived)
                .await?;
            ctx.out.print(&thread, || {
                format!(
                    "Thread {} archived; `1helm thread reopen {}` brings it back.",
                    thread.id, thread.id
                )
            })?;
        }
        ThreadCommand::Reopen { id } => {
            let thread = backend
                .set_thread_status(id.parse()?, ThreadStatus::Open)
                .await?;
            ctx.out
                .print(&thread, || format!("Thread {} reopened.", thread.id))?;
        }
    }
    Ok(exit::OK)
}

/// The line after a page of threads when more remain: the command that
/// lists the next page, with the same filter and page size.
fn next_page_hint(channel: &str, filter: &ThreadFilter, limit: usize, last: ThreadId) -> String {
    let mut command = format!("1helm thread list {channel}");
    match filter.archived {
        Some(true) => command.push_str(" --archived"),
        Some(false) => command.push_str(" --hide-archived"),
        None => {}
    }
    if limit != THREAD_PAGE {
        command.push_str(&format!(" --limit {limit}"));
    }
    format!("\nOlder threads: `{command} --before {last}`")
}

/// `thread retry`: the thread's failed turn runs again; like `say`, this
/// process drives it on a data directory and streams it to its end.
async fn retry(ctx: &Ctx, backend: Box<dyn Backend>, id: ThreadId, no_wait: bool) -> Result<i32> {
    if no_wait {
        let turn = backend.retry_thread(id).await?;
        ctx.out.print(&turn, || {
            format!(
                "Turn {} is queued to run thread {id}'s failed turn again.",
                turn.id
            )
        })?;
        return Ok(exit::OK);
    }
    let view = backend.thread(id).await?;
    let resident = backend
        .channel(&view.thread.channel_id.to_string())
        .await?
        .record
        .agent;
    backend.drive_turns().await?;
    let events = backend.events().await?;
    let turn = match backend.retry_thread(id).await {
        Ok(turn) => turn,
        Err(e) => {
            backend.stop_driving().await;
            return Err(e);
        }
    };
    let mut follow = Follow::new(id, resident.id, resident.handle);
    follow.admit(&turn);
    let mut render = Render::new(ctx.out_is_json(), turn.agent_id == resident.id);
    render.header(&view.thread.title, id, 0)?;
    follow_to_the_end(backend.as_ref(), events, follow, render).await
}

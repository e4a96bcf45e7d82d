//! `1helm activity CHANNEL`: the tool journal.

use anyhow::Result;
use helm_core::model::{ThreadId, ToolActionId};

use super::Ctx;
use crate::cli::{ACTIVITY_PAGE, ActivityArgs};
use crate::exit;
use crate::output::{clip, table};

/// The most actions one page shows (as the HTTP API's page).
const MAX_ACTIVITY: usize = 500;

/// The command that shows the actions before `first`, as this one was asked.
fn older_actions_hint(args: &ActivityArgs, first: ToolActionId) -> String {
    let mut command = format!("1helm activity {}", args.channel);
    if let Some(thread) = &args.thread {
        command.push_str(&format!(" --thread {thread}"));
    }
    if args.limit != ACTIVITY_PAGE {
        command.push_str(&format!(" --limit {}", args.limit));
    }
    format!("\nOlder actions: `{command} --before {first}`")
}

pub async fn run(ctx: &Ctx, args: ActivityArgs) -> Result<i32> {
    let backend = ctx.backend().await?;
    let thread = args
        .thread
        .as_deref()
        .map(str::parse::<ThreadId>)
        .transpose()?;
    if !(1..=MAX_ACTIVITY).contains(&args.limit) {
        return Err(helm_core::Error::invalid(
            "limit",
            format!("--limit must be between 1 and {MAX_ACTIVITY}"),
        )
        .into());
    }
    let before = args
        .before
        .as_deref()
        .map(str::parse::<ToolActionId>)
        .transpose()?;
    let (record, actions) = backend
        .activity(&args.channel, thread, before, args.limit)
        .await?;
    // Whether older actions remain before a full page: one more asked for
    // says so exactly.
    let more = match actions.first() {
        Some(first) if actions.len() == args.limit => !backend
            .activity(&args.channel, thread, Some(first.id), 1)
            .await?
            .1
            .is_empty(),
        _ => false,
    };
    ctx.out.print(&actions, || {
        if actions.is_empty() && before.is_some() {
            return "No older tool actions.".to_string();
        }
        if actions.is_empty() {
            return format!("No tool activity in {} yet.", record.channel.name);
        }
        let rows: Vec<Vec<String>> = actions
            .iter()
            .map(|a| {
                vec![
                    a.id.to_string(),
                    a.created.strftime("%Y-%m-%d %H:%M:%S").to_string(),
                    a.thread_id
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| "-".into()),
                    a.tool.clone(),
                    a.status.to_string(),
                    a.duration_ms
                        .map(|d| format!("{d} ms"))
                        .unwrap_or_else(|| "-".into()),
                    clip(&a.input_summary, 50),
                    clip(&a.result_summary, 40),
                ]
            })
            .collect();
        let mut out = table(
            &[
                "ID",
                "WHEN (UTC)",
                "THREAD",
                "TOOL",
                "STATUS",
                "TOOK",
                "INPUT",
                "RESULT",
            ],
            &rows,
        );
        if let (true, Some(first)) = (more, actions.first()) {
            out.push_str(&older_actions_hint(&args, first.id));
        }
        out
    })?;
    Ok(exit::OK)
}

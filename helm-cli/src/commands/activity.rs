//! `1helm activity CHANNEL`: the tool journal.

use anyhow::Result;
use helm_core::model::ThreadId;

use super::Ctx;
use crate::cli::ActivityArgs;
use crate::exit;
use crate::output::{clip, table};

pub async fn run(ctx: &Ctx, args: ActivityArgs) -> Result<i32> {
    let backend = ctx.backend().await?;
    let thread = args
        .thread
        .as_deref()
        .map(str::parse::<ThreadId>)
        .transpose()?;
    let (record, actions) = backend.activity(&args.channel, thread, args.limit).await?;
    ctx.out.print(&actions, || {
        if actions.is_empty() {
            return format!("No tool activity in {} yet.", record.channel.name);
        }
        let rows: Vec<Vec<String>> = actions
            .iter()
            .map(|a| {
                vec![
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
        table(
            &[
                "WHEN (UTC)",
                "THREAD",
                "TOOL",
                "STATUS",
                "TOOK",
                "INPUT",
                "RESULT",
            ],
            &rows,
        )
    })?;
    Ok(exit::OK)
}

//! `1helm status`.

use anyhow::Result;

use super::Ctx;
use crate::exit;

pub async fn run(ctx: &Ctx) -> Result<i32> {
    let status = ctx.backend().await?.status().await?;
    ctx.out.print(&status, || {
        let s = &status.stats;
        let computers = if status.computers.is_empty() {
            String::new()
        } else {
            format!(
                "\nComputers: {} (a new channel may choose one)",
                status.computers.join(", ")
            )
        };
        // A member through a server is not told these two.
        let counted = |label: &str, n: Option<u64>| {
            n.map(|n| format!("{label:<11}{n}\n")).unwrap_or_default()
        };
        format!(
            "Workspace {:?} at {}\n\
             Captain:   {}\n\
             Skipper:   {} ({})\n\
             Channels:  {} active, {} archived\n\
             Agents:    {}\n\
             People:    {}\n\
             {}{}\
             Recall:    {}\n\
             Schema:    v{}, event log at #{}{computers}",
            status.workspace.name,
            status.data_dir.as_deref().unwrap_or("-"),
            status.captain.name,
            status.skipper.handle,
            status.skipper.status,
            s.channels_active,
            s.channels_archived,
            s.agents,
            s.users,
            counted("Threads:", s.threads),
            counted("Messages:", s.messages),
            status
                .recall
                .as_ref()
                .map(|r| r.describe())
                .unwrap_or_else(|| "not reported by this server".to_string()),
            s.schema_version,
            s.last_event_seq,
        )
    })?;
    Ok(exit::OK)
}

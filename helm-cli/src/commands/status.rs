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
        format!(
            "Workspace {:?} at {}\n\
             Captain:   {}\n\
             Skipper:   {} ({})\n\
             Channels:  {} active, {} archived\n\
             Agents:    {}\n\
             People:    {}\n\
             Threads:   {}\n\
             Messages:  {}\n\
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
            s.threads,
            s.messages,
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

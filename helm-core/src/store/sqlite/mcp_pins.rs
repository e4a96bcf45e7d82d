//! Approved MCP tool definitions as rows, audited when pinned.

use rusqlite::{Connection, Row, params};

use super::audit::{self, AuditInput};
use super::codec::{ms, now, ts};
use crate::error::{Error, Result};
use crate::mcp::McpPin;
use crate::model::ChannelId;

const COLUMNS: &str = "channel_id, server, tool, hash, description, input_schema, approval_id, approved_by, pinned_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<McpPin> {
    let schema: String = r.get(5)?;
    Ok(McpPin {
        channel_id: r.get(0)?,
        server: r.get(1)?,
        tool: r.get(2)?,
        hash: r.get(3)?,
        description: r.get(4)?,
        input_schema: serde_json::from_str(&schema).unwrap_or(serde_json::Value::Null),
        approval_id: r.get(6)?,
        approved_by: r.get(7)?,
        pinned_at: ts(r, 8)?,
    })
}

/// The pins of a channel's server.
pub(super) fn list(conn: &Connection, channel: ChannelId, server: &str) -> Result<Vec<McpPin>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM mcp_pins WHERE channel_id = ?1 AND server = ?2 ORDER BY tool"
    ))?;
    let rows = stmt.query_map(params![channel, server], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Pins a definition (replacing an earlier pin of the same tool).
pub(super) fn put(conn: &Connection, pin: &McpPin, by: Option<&str>) -> Result<()> {
    let schema = serde_json::to_string(&pin.input_schema)
        .map_err(|e| Error::Internal(format!("a schema does not serialise: {e}")))?;
    conn.prepare_cached(
        "INSERT INTO mcp_pins (channel_id, server, tool, hash, description, input_schema, \
         approval_id, approved_by, pinned_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
         ON CONFLICT (channel_id, server, tool) DO UPDATE SET hash = excluded.hash, \
         description = excluded.description, input_schema = excluded.input_schema, \
         approval_id = excluded.approval_id, approved_by = excluded.approved_by, \
         pinned_at = excluded.pinned_at",
    )?
    .execute(params![
        pin.channel_id,
        pin.server,
        pin.tool,
        pin.hash,
        pin.description,
        schema,
        pin.approval_id,
        pin.approved_by,
        ms(now())
    ])?;
    audit::append(
        conn,
        AuditInput {
            channel_id: Some(pin.channel_id),
            thread_id: None,
            agent: None,
            asker: by,
            action: "mcp.tool_pinned",
            input_summary: &format!("mcp__{}__{} {}", pin.server, pin.tool, pin.hash),
            outcome: "ok",
        },
    )?;
    Ok(())
}

/// Forgets a server's pins (it was removed); returns how many.
pub(super) fn clear(conn: &Connection, channel: ChannelId, server: &str) -> Result<u64> {
    let n = conn
        .prepare_cached("DELETE FROM mcp_pins WHERE channel_id = ?1 AND server = ?2")?
        .execute(params![channel, server])?;
    Ok(n as u64)
}

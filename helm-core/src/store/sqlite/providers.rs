//! The provider registry's rows. Only key *references* are stored.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::codec::{json, ms, now, parsed};
use crate::error::{Error, Result};
use crate::provider::ProviderConfig;

const COLUMNS: &str = "name, kind, base_url, api_key_ref, default_model, extra_headers";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ProviderConfig> {
    Ok(ProviderConfig {
        name: r.get(0)?,
        kind: parsed(r, 1)?,
        base_url: r.get(2)?,
        api_key: match r.get::<_, Option<String>>(3)? {
            Some(_) => Some(parsed(r, 3)?),
            None => None,
        },
        default_model: r.get(4)?,
        extra_headers: json(r, 5)?,
    })
}

/// Adds a provider, or replaces the one with the same name.
pub(super) fn upsert(conn: &Connection, config: &ProviderConfig) -> Result<()> {
    let headers = serde_json::to_string(&config.extra_headers)
        .map_err(|e| Error::Internal(format!("headers do not serialise: {e}")))?;
    conn.prepare_cached(
        "INSERT INTO providers (name, kind, base_url, api_key_ref, default_model, extra_headers, \
         created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, base_url = excluded.base_url, \
         api_key_ref = excluded.api_key_ref, default_model = excluded.default_model, \
         extra_headers = excluded.extra_headers",
    )?
    .execute(params![
        config.name,
        config.kind.as_str(),
        config.base_url,
        config.api_key.as_ref().map(|k| k.to_string()),
        config.default_model,
        headers,
        ms(now())
    ])?;
    Ok(())
}

pub(super) fn get(conn: &Connection, name: &str) -> Result<ProviderConfig> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM providers WHERE name = ?1"))?
        .query_row([name], from_row)
        .optional()?
        .ok_or_else(|| Error::not_found("provider", name))
}

pub(super) fn list(conn: &Connection) -> Result<Vec<ProviderConfig>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM providers ORDER BY name"))?;
    let all = stmt
        .query_map([], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(all)
}

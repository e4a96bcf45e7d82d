//! How domain values are written to and read from SQLite columns.

use std::str::FromStr;

use jiff::Timestamp;
use rusqlite::Row;
use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::model::{
    AgentId, ArtifactId, ChannelId, EscalationId, MemoryId, MessageId, ProviderId, ThreadId,
    ToolActionId, TurnId, UserId, WorkspaceId,
};

macro_rules! sql_id {
    ($($id:ty),*) => {$(
        impl ToSql for $id {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.0))
            }
        }

        impl FromSql for $id {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map(Self)
            }
        }
    )*};
}

sql_id!(
    WorkspaceId,
    UserId,
    ChannelId,
    AgentId,
    ThreadId,
    MessageId,
    MemoryId,
    ArtifactId,
    ToolActionId,
    EscalationId,
    ProviderId,
    TurnId
);

/// The current time, in the store's resolution (milliseconds).
pub(crate) fn now() -> Timestamp {
    Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or_else(|_| Timestamp::now())
}

/// A timestamp as stored: Unix milliseconds.
pub(crate) fn ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}

/// Reads a Unix-milliseconds column as a timestamp.
pub(crate) fn ts(row: &Row<'_>, idx: usize) -> rusqlite::Result<Timestamp> {
    let ms: i64 = row.get(idx)?;
    Timestamp::from_millisecond(ms).map_err(|e| conversion(idx, e))
}

/// Reads a nullable Unix-milliseconds column.
pub(crate) fn opt_ts(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Timestamp>> {
    let ms: Option<i64> = row.get(idx)?;
    ms.map(|ms| Timestamp::from_millisecond(ms).map_err(|e| conversion(idx, e)))
        .transpose()
}

/// Reads a text column through `FromStr` (the domain's string enums).
pub(crate) fn parsed<T>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T>
where
    T: FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    // Borrowed, not copied: this runs for every row of every listing.
    let text = row.get_ref(idx)?.as_str()?;
    text.parse().map_err(|e| conversion(idx, e))
}

/// Reads a JSON text column.
pub(crate) fn json<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    idx: usize,
) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| conversion(idx, e))
}

fn conversion(idx: usize, e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
}

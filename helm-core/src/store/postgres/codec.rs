//! Reading rows into the domain's types: Unix-millisecond timestamps and
//! the string enums, as the schema stores them.

use std::str::FromStr;

use jiff::Timestamp;
use tokio_postgres::Row;

use crate::error::{Error, Result};
use crate::model::{User, UserId};

/// The current time, in the store's resolution (milliseconds).
pub(crate) fn now() -> Timestamp {
    Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or_else(|_| Timestamp::now())
}

/// Milliseconds of a timestamp, for parameters.
pub(crate) fn ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}

/// A stored Unix-milliseconds column.
pub(crate) fn ts(row: &Row, idx: usize) -> Result<Timestamp> {
    let ms: i64 = row.get(idx);
    Timestamp::from_millisecond(ms).map_err(|e| Error::store("a stored time", e))
}

/// A nullable Unix-milliseconds column.
pub(crate) fn opt_ts(row: &Row, idx: usize) -> Result<Option<Timestamp>> {
    row.get::<_, Option<i64>>(idx)
        .map(|ms| Timestamp::from_millisecond(ms).map_err(|e| Error::store("a stored time", e)))
        .transpose()
}

/// A text column through `FromStr` (the domain's string enums).
pub(crate) fn parsed<T>(row: &Row, idx: usize) -> Result<T>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let text: &str = row.get(idx);
    text.parse().map_err(|e| Error::Store {
        message: format!("a stored value {text:?} cannot be read: {e}"),
        source: None,
    })
}

/// The user columns, prefixed with `u.`, in [`user_at`] order.
pub(crate) const USER: &str = "u.id, u.name, u.display_name, u.role, u.created, u.deactivated";

/// A user from the six [`USER`] columns starting at `at`.
pub(crate) fn user_at(row: &Row, at: usize) -> Result<User> {
    Ok(User {
        id: UserId(row.get(at)),
        name: row.get(at + 1),
        display_name: row.get(at + 2),
        role: parsed(row, at + 3)?,
        created: ts(row, at + 4)?,
        deactivated: opt_ts(row, at + 5)?,
    })
}

/// The workspace (a store holds one), for statements scoped to it.
pub(crate) const WORKSPACE: &str = "(SELECT id FROM workspaces ORDER BY id LIMIT 1)";

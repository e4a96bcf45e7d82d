//! `helm_row(recall)`: an FTS5 auxiliary function that tells, for one matched
//! row of the shared word index, what BM25 needs of it: its length in tokens
//! and how often each phrase of the query occurs in it.
//!
//! Why it exists: every channel's words live in one table (a table per
//! channel changed the schema with each new channel, and every pooled
//! connection then re-read the whole schema). FTS5's own `bm25()` ranks with
//! the statistics of the whole table, which loses recall in a workspace whose
//! channels talk about different things; Helm ranks with the channel's own
//! statistics instead (`words::rank`), and this function hands it the
//! per-row figures FTS5 keeps, which SQL cannot reach otherwise.
//!
//! This module and `exec::process_tree` are the only places Helm uses
//! `unsafe`: the FTS5 extension API is C function pointers only. What each
//! block relies on is said beside it; nothing here can panic.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::{Connection, ffi};

use crate::error::{Error, Result};

/// The columns holding text (`body`, `prev`); column 0 holds the scope
/// tokens, whose matches count toward neither length nor frequency.
const TEXT_COLUMNS: [c_int; 2] = [1, 2];

/// Registers `helm_row` on a connection (again is harmless: FTS5 replaces a
/// function of the same name).
pub(super) fn register(conn: &Connection) -> Result<()> {
    // SAFETY: `handle` is the live connection `conn` borrows; `fts5_api`
    // returns a pointer FTS5 owns for that connection's lifetime, and the
    // function we register has the signature FTS5 calls it with.
    let rc = unsafe {
        let api = fts5_api(conn.handle())?;
        let Some(create) = (*api).xCreateFunction else {
            return Err(no_fts5("it lacks xCreateFunction"));
        };
        create(
            api,
            c"helm_row".as_ptr(),
            ptr::null_mut(),
            Some(helm_row),
            None,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(no_fts5(&format!("registering helm_row failed ({rc})")));
    }
    Ok(())
}

fn no_fts5(why: &str) -> Error {
    Error::Store {
        message: format!("this SQLite's full-text search cannot be extended: {why}"),
        source: None,
    }
}

/// The connection's `fts5_api`, fetched the documented way: `SELECT fts5(?)`
/// with a pointer bound under the type name "fts5_api_ptr".
///
/// # Safety
/// `db` must be an open connection.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    // SAFETY: `db` is open (the caller's promise); `stmt` is finalized on
    // every path after a successful prepare; `api` outlives the step that
    // writes through the bound pointer.
    unsafe {
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(no_fts5("it has no fts5() function"));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        return Err(no_fts5("fts5() handed back no API"));
    }
    Ok(api)
}

/// The auxiliary function: a blob of little-endian `u32`s, the row's length
/// in text tokens, then one occurrence count per query phrase (phrase
/// order is the order of appearance in the MATCH expression).
unsafe extern "C" fn helm_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API table, the current row's context
    // and a result context, all valid for the duration of the call.
    unsafe {
        match row_figures(&*api, fts) {
            Ok(figures) => {
                let bytes: Vec<u8> = figures.iter().flat_map(|n| n.to_le_bytes()).collect();
                ffi::sqlite3_result_blob(
                    ctx,
                    bytes.as_ptr().cast::<c_void>(),
                    bytes.len() as c_int,
                    ffi::SQLITE_TRANSIENT(),
                );
            }
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// # Safety
/// `fts` must be the context FTS5 passed with `api`.
unsafe fn row_figures(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> std::result::Result<Vec<u32>, c_int> {
    let (Some(phrase_count), Some(column_size), Some(inst_count), Some(inst)) =
        (api.xPhraseCount, api.xColumnSize, api.xInstCount, api.xInst)
    else {
        return Err(ffi::SQLITE_MISUSE);
    };
    // SAFETY: the functions come from FTS5's own table and are called with
    // the context it gave, as its documentation says; out-parameters are
    // locals that live across each call.
    unsafe {
        let phrases = phrase_count(fts).max(0) as usize;
        let mut figures = vec![0u32; 1 + phrases];
        for column in TEXT_COLUMNS {
            let mut tokens: c_int = 0;
            check(column_size(fts, column, &mut tokens))?;
            figures[0] += tokens.max(0) as u32;
        }
        let mut count: c_int = 0;
        check(inst_count(fts, &mut count))?;
        for i in 0..count {
            let (mut phrase, mut column, mut offset) = (0, 0, 0);
            check(inst(fts, i, &mut phrase, &mut column, &mut offset))?;
            if TEXT_COLUMNS.contains(&column)
                && let Some(n) = figures.get_mut(1 + phrase.max(0) as usize)
            {
                *n += 1;
            }
        }
        Ok(figures)
    }
}

fn check(rc: c_int) -> std::result::Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

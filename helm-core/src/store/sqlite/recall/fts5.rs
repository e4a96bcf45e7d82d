//! `helm_row(recall)`: an FTS5 auxiliary function that tells, for one matched
//! row of the shared word index, what BM25 needs of it: how often each
//! phrase of the query occurs in it, and a lower bound of its length.
//!
//! Why it exists: every channel's words live in one table (a table per
//! channel changed the schema with each new channel, and every pooled
//! connection then re-read the whole schema). FTS5's own `bm25()` ranks with
//! the statistics of the whole table, which loses recall in a workspace whose
//! channels talk about different things; Helm ranks with the channel's own
//! statistics instead (`words::rank`), and this function hands it the
//! per-row figures FTS5 keeps, which SQL cannot reach otherwise.
//!
//! This module, `english` (the word index's tokenizer) and
//! `exec::process_tree` are the only places helm-core uses `unsafe`: the FTS5
//! extension API is C function pointers only. What each block relies on is
//! said beside it; nothing here can panic.
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

pub(super) fn no_fts5(why: &str) -> Error {
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
pub(super) unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api> {
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

/// The auxiliary function: a blob of little-endian `u32`s, a lower bound of
/// the row's length in text tokens (one past the last matched offset of
/// each text column), then one occurrence count per query phrase after the
/// first (phrase 0 is the scope token; the others follow the order of the
/// MATCH expression). An optional integer argument limits the phrases
/// counted to that many, phrase 0 included: a narrowed search
/// (`words::Plan::query`) repeats phrases it needs no counts of.
///
/// Why a bound and not the length: the length is a `docsize` b-tree seek
/// per row, two thirds of a search that matches tens of thousands of rows;
/// ranking needs exact lengths only for the few rows that can still reach
/// the top (`words::rank`). Phrases are walked one by one
/// (`xPhraseFirst`), as `xInstCount` would first sort every instance of
/// every phrase, the scope token's included.
unsafe extern "C" fn helm_row(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API table, the current row's context
    // and a result context, all valid for the duration of the call, and
    // with `n` arguments in `values`.
    unsafe {
        let counted = if n >= 1 && ffi::sqlite3_value_type(*values) == ffi::SQLITE_INTEGER {
            usize::try_from(ffi::sqlite3_value_int64(*values)).unwrap_or(0)
        } else {
            usize::MAX
        };
        let mut figures = [0u32; 1 + MAX_PHRASES];
        match row_figures(&*api, fts, counted, &mut figures) {
            Ok(len) => {
                let mut bytes = [0u8; 4 * (1 + MAX_PHRASES)];
                for (chunk, n) in bytes.chunks_exact_mut(4).zip(&figures[..len]) {
                    chunk.copy_from_slice(&n.to_le_bytes());
                }
                ffi::sqlite3_result_blob(
                    ctx,
                    bytes.as_ptr().cast::<c_void>(),
                    (4 * len) as c_int,
                    ffi::SQLITE_TRANSIENT(),
                );
            }
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// The most query phrases `helm_row` counts (queries have far fewer words;
/// any beyond are not counted).
const MAX_PHRASES: usize = 64;

/// Fills `figures` from the first `counted` phrases and returns how many it
/// holds.
///
/// # Safety
/// `fts` must be the context FTS5 passed with `api`.
unsafe fn row_figures(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    counted: usize,
    figures: &mut [u32; 1 + MAX_PHRASES],
) -> std::result::Result<usize, c_int> {
    let (Some(phrase_count), Some(first), Some(next)) =
        (api.xPhraseCount, api.xPhraseFirst, api.xPhraseNext)
    else {
        return Err(ffi::SQLITE_MISUSE);
    };
    // SAFETY: the functions come from FTS5's own table and are called with
    // the context it gave, as its documentation says; the iterator and the
    // out-parameters are locals that live across each call.
    unsafe {
        let phrases = (phrase_count(fts).max(1) as usize)
            .min(counted.max(1))
            .min(1 + MAX_PHRASES);
        let mut ends = [0u32; TEXT_COLUMNS.len()];
        for (phrase, count) in figures.iter_mut().enumerate().take(phrases).skip(1) {
            let mut iter = ffi::Fts5PhraseIter {
                a: ptr::null(),
                b: ptr::null(),
            };
            let (mut column, mut offset) = (0, 0);
            check(first(
                fts,
                phrase as c_int,
                &mut iter,
                &mut column,
                &mut offset,
            ))?;
            while column >= 0 {
                if let Some(at) = TEXT_COLUMNS.iter().position(|c| *c == column) {
                    *count += 1;
                    ends[at] = ends[at].max(offset.max(0) as u32 + 1);
                }
                next(fts, &mut iter, &mut column, &mut offset);
            }
        }
        figures[0] = ends.iter().sum();
        Ok(phrases)
    }
}

fn check(rc: c_int) -> std::result::Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

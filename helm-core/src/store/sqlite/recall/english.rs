//! `helm_english`: the word index's tokenizer, FTS5's `unicode61` with each
//! token stemmed by the Snowball English stemmer.
//!
//! Why not FTS5's own `porter`: the original Porter stemmer leaves words
//! that end in "s" apart from their plurals ("walrus" gives "walru",
//! "walruses" gives "walrus"; "class" and "classes" alike), so a question
//! saying one missed a message saying the other. Snowball English (Porter's
//! later algorithm) stems both alike, and it is the stemmer of PostgreSQL's
//! `english` configuration, which the PostgreSQL store searches with: both
//! stores now find the same words.
//!
//! FTS5 calls the tokenizer for the text it indexes and for the words of a
//! MATCH expression alike, so a question's words are stemmed exactly as the
//! index's. Tokens are `unicode61`'s (lowercased, diacritics removed), as
//! before: only the stemming changed.
//!
//! The FTS5 tokenizer API is C function pointers only (see `fts5`); what
//! each `unsafe` block relies on is said beside it. The stemmer is pure Rust
//! and is not known to panic; should it ever, the token is indexed as it is
//! rather than unwinding into SQLite.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

use rusqlite::{Connection, ffi};

use super::fts5::{fts5_api, no_fts5};
use crate::error::Result;

/// The tokenizer's name, as the word index's `tokenize` option gives it.
pub(super) const NAME: &CStr = c"helm_english";

/// The tokenizer wrapped: its arguments, if any, are `unicode61`'s.
const BASE: &CStr = c"unicode61";

/// Registers `helm_english` on a connection. Every connection that reads or
/// writes the word index needs it: FTS5 looks the tokenizer up by name each
/// time it opens the table (again is harmless: FTS5 uses the newest).
pub(super) fn register(conn: &Connection) -> Result<()> {
    // SAFETY: `handle` is the live connection `conn` borrows; `fts5_api`
    // returns a pointer FTS5 owns for that connection's lifetime, which is
    // why it can serve as the tokenizer's user data (the tokenizer lives no
    // longer than the connection). FTS5 copies `methods` before returning.
    let rc = unsafe {
        let api = fts5_api(conn.handle())?;
        let (3.., Some(create), Some(_)) = (
            (*api).iVersion,
            (*api).xCreateTokenizer_v2,
            (*api).xFindTokenizer_v2,
        ) else {
            return Err(no_fts5("it lacks version 2 tokenizers"));
        };
        let mut methods = ffi::fts5_tokenizer_v2 {
            iVersion: 2,
            xCreate: Some(create_tokenizer),
            xDelete: Some(delete_tokenizer),
            xTokenize: Some(tokenize),
        };
        create(api, NAME.as_ptr(), api.cast::<c_void>(), &mut methods, None)
    };
    if rc != ffi::SQLITE_OK {
        return Err(no_fts5(&format!("registering helm_english failed ({rc})")));
    }
    Ok(())
}

/// One instance, made for a table: the `unicode61` instance it wraps and
/// that tokenizer's methods (copied, as FTS5's own `porter` does).
struct English {
    base: ffi::fts5_tokenizer_v2,
    inner: *mut ffi::Fts5Tokenizer,
}

/// `xCreate`: finds `unicode61` through the API held as user data and makes
/// an instance of it with the table's arguments.
unsafe extern "C" fn create_tokenizer(
    api: *mut c_void,
    args: *mut *const c_char,
    n: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    // SAFETY: `api` is the `fts5_api` `register` gave as user data, valid
    // while the connection is; `args`/`n` and `out` are FTS5's, passed on as
    // its documentation says. The box is owned by FTS5 until `xDelete`.
    unsafe {
        *out = ptr::null_mut();
        let api = api.cast::<ffi::fts5_api>();
        let Some(find) = (*api).xFindTokenizer_v2 else {
            return ffi::SQLITE_ERROR;
        };
        let mut user: *mut c_void = ptr::null_mut();
        let mut base: *mut ffi::fts5_tokenizer_v2 = ptr::null_mut();
        let rc = find(api, BASE.as_ptr(), &mut user, &mut base);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        if base.is_null() {
            return ffi::SQLITE_ERROR;
        }
        let base = *base;
        let Some(create) = base.xCreate else {
            return ffi::SQLITE_ERROR;
        };
        let mut inner: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        let rc = create(user, args, n, &mut inner);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        *out = Box::into_raw(Box::new(English { base, inner })).cast::<ffi::Fts5Tokenizer>();
        ffi::SQLITE_OK
    }
}

/// `xDelete`: deletes the wrapped instance, then this one.
unsafe extern "C" fn delete_tokenizer(tokenizer: *mut ffi::Fts5Tokenizer) {
    if tokenizer.is_null() {
        return;
    }
    // SAFETY: a non-null `tokenizer` is a box `create_tokenizer` made, which
    // FTS5 deletes once.
    unsafe {
        let english = Box::from_raw(tokenizer.cast::<English>());
        if let Some(delete) = english.base.xDelete {
            delete(english.inner);
        }
    }
}

/// What `stem_token` needs to hand a token on: FTS5's own callback and its
/// context.
struct Forward {
    ctx: *mut c_void,
    emit: unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int,
}

/// `xTokenize`: `unicode61` splits the text, and each of its tokens is
/// stemmed on the way back to FTS5 (offsets and flags unchanged).
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn tokenize(
    tokenizer: *mut ffi::Fts5Tokenizer,
    ctx: *mut c_void,
    flags: c_int,
    text: *const c_char,
    len: c_int,
    locale: *const c_char,
    locale_len: c_int,
    emit: Option<
        unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int,
    >,
) -> c_int {
    let Some(emit) = emit else {
        return ffi::SQLITE_MISUSE;
    };
    // SAFETY: `tokenizer` is a box `create_tokenizer` made and FTS5 has not
    // deleted; the other arguments are FTS5's, passed on to `unicode61`
    // unchanged but for the callback and its context, a local that outlives
    // the call (`unicode61` calls back only while tokenizing).
    unsafe {
        let english = &*tokenizer.cast::<English>();
        let Some(base_tokenize) = english.base.xTokenize else {
            return ffi::SQLITE_ERROR;
        };
        let mut forward = Forward { ctx, emit };
        base_tokenize(
            english.inner,
            (&raw mut forward).cast::<c_void>(),
            flags,
            text,
            len,
            locale,
            locale_len,
            Some(stem_token),
        )
    }
}

/// The callback `unicode61` calls with each token: hands FTS5 its stem.
unsafe extern "C" fn stem_token(
    ctx: *mut c_void,
    flags: c_int,
    token: *const c_char,
    len: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // SAFETY: `ctx` is the `Forward` `tokenize` passed, alive for the
    // duration of its call; `token` holds `len` bytes, valid for this call.
    unsafe {
        let forward = &*ctx.cast::<Forward>();
        if token.is_null() || len <= 0 {
            return (forward.emit)(forward.ctx, flags, token, len, start, end);
        }
        let bytes = std::slice::from_raw_parts(token.cast::<u8>(), len as usize);
        let stemmed = stem(bytes);
        (forward.emit)(
            forward.ctx,
            flags,
            stemmed.as_ptr().cast::<c_char>(),
            stemmed.len() as c_int,
            start,
            end,
        )
    }
}

/// A token's Snowball English stem ([`crate::store::stems::english`]);
/// the token itself when it is not UTF-8.
pub(super) fn stem(token: &[u8]) -> Cow<'_, [u8]> {
    let Ok(word) = std::str::from_utf8(token) else {
        return Cow::Borrowed(token);
    };
    match crate::store::stems::english(word) {
        Cow::Borrowed(stem) => Cow::Borrowed(stem.as_bytes()),
        Cow::Owned(stem) => Cow::Owned(stem.into_bytes()),
    }
}

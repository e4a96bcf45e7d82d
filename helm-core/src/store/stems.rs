//! The Snowball English stemmer the word index matches by: SQLite's
//! `helm_english` tokenizer runs it, and PostgreSQL's `english`
//! configuration is built on the same algorithm. Rust code that must find
//! a word as the index found it (a search result's excerpt) stems here.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use rust_stemmers::{Algorithm, Stemmer};

/// Words longer than this many bytes are left unstemmed, as FTS5's
/// `porter` leaves those over 64: no English word is that long, and a hash
/// or a URL gains nothing from stemming.
pub(crate) const MAX_STEMMED: usize = 64;

/// A lowercase word's Snowball English stem; the word itself when it is
/// too long or the stemmer fails. The stemmer is pure Rust and not known
/// to panic; should it ever, the word stands as it is.
pub(crate) fn english(word: &str) -> Cow<'_, str> {
    if word.len() > MAX_STEMMED {
        return Cow::Borrowed(word);
    }
    let stemmer = Stemmer::create(Algorithm::English);
    catch_unwind(AssertUnwindSafe(|| stemmer.stem(word))).unwrap_or(Cow::Borrowed(word))
}

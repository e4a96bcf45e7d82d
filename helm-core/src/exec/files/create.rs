//! Creating a file that must not exist yet, through the [`Files`] port
//! alone, so every computer gets the same guarantee: the new file appears
//! whole or not at all, and an existing file is never replaced, however
//! many writers race for the name.
//!
//! The contents go to a hidden draft beside the target first, then the
//! draft is moved to the name with a move that refuses to replace
//! ([`Files::rename`]; `RENAME_NOREPLACE` on this host). An Open Terminal
//! server's move may replace what it finds, so a name seen taken is
//! refused before the move as well.

use super::{FileEntry, Files};
use crate::error::{Error, Result};

/// A hidden, unguessable draft name in `path`'s directory, where its
/// contents are written before the file is moved into place.
pub(crate) fn draft_for(path: &str) -> Result<String> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((dir, name)) => (format!("{dir}/"), name),
        None => (String::new(), path),
    };
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce)
        .map_err(|e| Error::Internal(format!("no randomness for a draft's name: {e}")))?;
    let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{dir}.{name}.{nonce}.saving"))
}

/// Moves the written `draft` to `path` unless `path` exists: a
/// [`Error::Conflict`] then, with the draft left for the caller to place
/// elsewhere or delete.
pub(crate) async fn place_draft<F: Files + ?Sized>(
    files: &F,
    draft: &str,
    path: &str,
) -> Result<FileEntry> {
    if let Ok(entry) = files.stat(path).await {
        return Err(Error::Conflict(format!("{} already exists", entry.path)));
    }
    files.rename(draft, path).await
}

/// Creates `path` with `contents` (parents made), refused with
/// [`Error::Conflict`] when it exists; nothing is left behind on failure.
pub(super) async fn create_new<F: Files + ?Sized>(
    files: &F,
    path: &str,
    contents: Vec<u8>,
) -> Result<FileEntry> {
    if path.ends_with('/') || path.trim().is_empty() {
        return Err(Error::invalid("path", "name a file to create"));
    }
    // Checked first too, so a taken name costs no draft.
    if let Ok(entry) = files.stat(path).await {
        return Err(Error::Conflict(format!("{} already exists", entry.path)));
    }
    let draft = draft_for(path)?;
    files.write(&draft, contents).await?;
    match place_draft(files, &draft, path).await {
        Ok(entry) => Ok(entry),
        Err(e) => {
            let _ = files.delete(&draft, false).await;
            Err(e)
        }
    }
}

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

/// How many numbered names (`-2`, `-3`, …) [`create_numbered`] tries.
pub(crate) const MAX_NAME_TRIES: usize = 100;

/// `path` with `-n` before its extension: `notes/plan.md` → `notes/plan-2.md`,
/// `a/site.tar.gz` → `a/site-2.tar.gz`, `README` → `README-2`.
pub(crate) fn numbered(path: &str, n: usize) -> String {
    let (dir, name) = path.rsplit_once('/').map_or(("", path), |(d, n)| (d, n));
    let cut = match name.rfind('.') {
        Some(0) | None => name.len(),
        Some(dot) => match name[..dot].strip_suffix(".tar") {
            Some(stem) if !stem.is_empty() => stem.len(),
            _ => dot,
        },
    };
    let (stem, ext) = name.split_at(cut);
    let numbered = format!("{stem}-{n}{ext}");
    if dir.is_empty() && !path.starts_with('/') {
        numbered
    } else {
        format!("{dir}/{numbered}")
    }
}

/// Creates `path`, or when it is taken the first free numbered name
/// ([`numbered`]), never replacing a file: the contents are written once
/// to a draft, which is then moved to each name in turn until one is free.
pub(crate) async fn create_numbered<F: Files + ?Sized>(
    files: &F,
    path: &str,
    contents: Vec<u8>,
) -> Result<FileEntry> {
    if path.ends_with('/') || path.trim().is_empty() {
        return Err(Error::invalid("path", "name a file to create"));
    }
    let draft = draft_for(path)?;
    files.write(&draft, contents).await?;
    for n in 1..=MAX_NAME_TRIES {
        let name = if n == 1 {
            path.to_string()
        } else {
            numbered(path, n)
        };
        match place_draft(files, &draft, &name).await {
            Ok(entry) => return Ok(entry),
            Err(Error::Conflict(_)) => continue,
            Err(e) => {
                let _ = files.delete(&draft, false).await;
                return Err(e);
            }
        }
    }
    let _ = files.delete(&draft, false).await;
    Err(Error::Conflict(format!(
        "{path} and {MAX_NAME_TRIES} numbered names after it are all taken; choose another name"
    )))
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn numbers_go_before_the_extension() {
        assert_eq!(numbered("notes/plan.md", 2), "notes/plan-2.md");
        assert_eq!(
            numbered("/workspace/uploads/site.tar.gz", 3),
            "/workspace/uploads/site-3.tar.gz"
        );
        assert_eq!(numbered("README", 2), "README-2");
        assert_eq!(numbered(".env", 2), ".env-2");
        assert_eq!(numbered("/x/.tar.gz", 2), "/x/.tar-2.gz");
    }
}

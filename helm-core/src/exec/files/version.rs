//! A file's version: a digest of its contents, so a person's editor can
//! save "over what I opened" and be told, instead of silently replacing
//! what someone else (or the agent) saved meanwhile.
//!
//! A digest rather than a modification time: times are coarse on some
//! filesystems and a remote computer's clock is its own, while equal bytes
//! are equal wherever they are.

use sha2::{Digest, Sha256};

use super::{FileEntry, Files};
use crate::error::{Error, Result};

/// The largest file a versioned write compares (the editors' limit too).
const MAX_VERSIONED: usize = super::MAX_READ_TEXT;

/// The version of `bytes`: 24 hex digits of their SHA-256.
pub fn content_version(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Replaces `path` with `contents` if it still has version `base`; a
/// [`Error::Conflict`] naming what happened otherwise, with the file left
/// as it is. Atomic against other writes through Helm only when the
/// caller holds the path's write lock, as every [`Files`] Helm hands out
/// does (`LockedFiles`); a shell command may still write in between.
pub(super) async fn write_unchanged<F: Files + ?Sized>(
    files: &F,
    path: &str,
    contents: Vec<u8>,
    base: &str,
) -> Result<FileEntry> {
    let current = match files.read_bytes(path, MAX_VERSIONED + 1).await {
        Ok(current) => current,
        Err(Error::NotFound { .. }) => {
            return Err(Error::Conflict(format!(
                "{path} was deleted or moved since it was opened; save again to make it anew"
            )));
        }
        Err(e) => return Err(e),
    };
    if current.truncated || content_version(&current.bytes) != base {
        return Err(Error::Conflict(format!(
            "{} changed since it was opened (someone saved it meanwhile); load their version, or save again to replace it",
            current.path
        )));
    }
    files.write(path, contents).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_short_stable_digests() {
        assert_eq!(content_version(b"").len(), 24);
        assert_eq!(content_version(b"plan"), content_version(b"plan"));
        assert_ne!(content_version(b"plan"), content_version(b"plan\n"));
    }
}

//! Walking a directory tree through descriptors, never following symbolic
//! links (so a walk cannot be led outside the directory it started in), and
//! the glob patterns walks are filtered with.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, Stat};

/// How deep a walk goes at most.
pub(crate) const MAX_DEPTH: usize = 64;

/// One entry a walk visits.
pub(crate) struct WalkEntry<'a> {
    /// Its path relative to where the walk started.
    pub(crate) rel: &'a Path,
    /// Its own stat (links are not followed).
    pub(crate) stat: &'a Stat,
    /// The directory that holds it.
    pub(crate) parent: BorrowedFd<'a>,
    /// Its name in that directory.
    pub(crate) name: &'a OsStr,
}

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on (into this entry, if it is a directory).
    Continue,
    /// Do not descend into this directory.
    SkipDir,
    /// End the walk.
    Stop,
}

/// Opens a directory for reading its entries, not through a link.
pub(crate) fn open_dir_at(parent: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The names in a directory, sorted, without `.` and `..`.
pub(crate) fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    let fd = open_dir_at(dir, OsStr::new("."))?;
    let mut reader = Dir::new(fd)?;
    let mut names = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(name).to_os_string());
        }
    }
    names.sort();
    Ok(names)
}

/// Visits everything under `dir` (not `dir` itself), depth first, in name
/// order. Entries that vanish during the walk are skipped.
pub(crate) fn walk(
    dir: BorrowedFd<'_>,
    visit: &mut dyn FnMut(&WalkEntry<'_>) -> Flow,
) -> io::Result<()> {
    walk_in(dir, Path::new(""), 0, visit).map(|_| ())
}

fn walk_in(
    dir: BorrowedFd<'_>,
    prefix: &Path,
    depth: usize,
    visit: &mut dyn FnMut(&WalkEntry<'_>) -> Flow,
) -> io::Result<Flow> {
    if depth >= MAX_DEPTH {
        return Ok(Flow::Continue);
    }
    for name in names(dir)? {
        let Ok(stat) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let rel = prefix.join(&name);
        let entry = WalkEntry {
            rel: &rel,
            stat: &stat,
            parent: dir,
            name: &name,
        };
        match visit(&entry) {
            Flow::Stop => return Ok(Flow::Stop),
            Flow::SkipDir => continue,
            Flow::Continue => {}
        }
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
            let Ok(child) = open_dir_at(dir, &name) else {
                continue;
            };
            if walk_in(child.as_fd(), &rel, depth + 1, visit)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
    }
    Ok(Flow::Continue)
}

/// Removes `name` in `parent` and, if it is a directory, everything in it.
/// Links are removed, never followed.
pub(crate) fn remove_tree(parent: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<()> {
    let stat = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return Ok(rustix::fs::unlinkat(parent, name, AtFlags::empty())?);
    }
    if depth >= MAX_DEPTH {
        return Err(io::Error::other("directory tree too deep"));
    }
    let dir = open_dir_at(parent, name)?;
    for child in names(dir.as_fd())? {
        remove_tree(dir.as_fd(), &child, depth + 1)?;
    }
    Ok(rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?)
}

/// Gives `dir` and everything under it to `uid`/`gid` (links themselves,
/// not what they point to).
pub(crate) fn chown_tree(dir: BorrowedFd<'_>, uid: u32, gid: u32) -> io::Result<()> {
    use rustix::fs::{Gid, Uid};
    let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
    rustix::fs::chownat(dir, "", Some(uid), Some(gid), AtFlags::EMPTY_PATH)?;
    let mut failed: Option<io::Error> = None;
    walk(dir, &mut |entry| {
        if let Err(e) = rustix::fs::chownat(
            entry.parent,
            entry.name,
            Some(uid),
            Some(gid),
            AtFlags::SYMLINK_NOFOLLOW,
        ) {
            failed.get_or_insert(e.into());
        }
        Flow::Continue
    })?;
    failed.map_or(Ok(()), Err)
}

/// A relative path with `/` separators, for matching and showing.
pub(crate) fn slash_path(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

/// Whether `path` (relative, `/`-separated) matches the glob `pattern`.
///
/// `*` matches within one path segment, `?` one character, `[a-z]` and
/// `[!a]` a class, and `**` any number of whole segments. A pattern without
/// `/` is matched against the file name at any depth, as in `.gitignore`.
pub(crate) fn glob_match(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    if !pattern.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return segment_match(pattern.as_bytes(), name.as_bytes());
    }
    let pats: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segments_match(&pats, &parts)
}

fn segments_match(pats: &[&str], parts: &[&str]) -> bool {
    match pats.split_first() {
        None => parts.is_empty(),
        Some((&"**", rest)) => {
            segments_match(rest, parts) || (!parts.is_empty() && segments_match(pats, &parts[1..]))
        }
        Some((pat, rest)) => match parts.split_first() {
            Some((part, tail)) => {
                segment_match(pat.as_bytes(), part.as_bytes()) && segments_match(rest, tail)
            }
            None => false,
        },
    }
}

fn segment_match(pat: &[u8], text: &[u8]) -> bool {
    match pat.first() {
        None => text.is_empty(),
        Some(b'*') => (0..=text.len()).any(|skip| segment_match(&pat[1..], &text[skip..])),
        Some(b'?') => !text.is_empty() && segment_match(&pat[1..], &text[1..]),
        Some(b'[') => match (
            class_match(&pat[1..], text.first().copied()),
            text.split_first(),
        ) {
            (Some((true, consumed)), Some((_, rest))) => segment_match(&pat[1 + consumed..], rest),
            (Some((false, _)), _) | (_, None) => false,
            // An unclosed `[` is an ordinary character.
            (None, Some((c, rest))) => *c == b'[' && segment_match(&pat[1..], rest),
        },
        Some(c) => text.first() == Some(c) && segment_match(&pat[1..], &text[1..]),
    }
}

/// Matches `c` against the class that starts after `[`; returns whether it
/// matched and how many pattern bytes the class used (through `]`).
fn class_match(class: &[u8], c: Option<u8>) -> Option<(bool, usize)> {
    let c = c?;
    let (negate, start) = match class.first() {
        Some(b'!') | Some(b'^') => (true, 1),
        _ => (false, 0),
    };
    let mut i = start;
    let mut hit = false;
    let mut first = true;
    while i < class.len() {
        let b = class[i];
        if b == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if i + 2 < class.len() && class[i + 1] == b'-' && class[i + 2] != b']' {
            if (b..=class[i + 2]).contains(&c) {
                hit = true;
            }
            i += 3;
        } else {
            if b == c {
                hit = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell() {
        assert!(glob_match("*.rs", "src/lib.rs"));
        assert!(glob_match("src/*.rs", "src/lib.rs"));
        assert!(!glob_match("src/*.rs", "src/a/lib.rs"));
        assert!(glob_match("src/**/*.rs", "src/a/b/lib.rs"));
        assert!(glob_match("src/**/*.rs", "src/lib.rs"));
        assert!(glob_match("**/notes.md", "notes.md"));
        assert!(glob_match("file?.txt", "file1.txt"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("[!a-c]x", "bx"));
        assert!(glob_match("[!a-c]x", "dx"));
        assert!(glob_match("a[", "a["));
        assert!(!glob_match("*.rs", "lib.rsx"));
    }
}

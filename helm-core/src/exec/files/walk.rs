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

/// A compiled glob pattern (globset: matching takes linear time, however
/// many `*` a pattern holds).
///
/// `*` matches within one path segment, `?` one character, `[a-z]` and
/// `[!a]` a class, and `**` any number of whole segments. A pattern without
/// `/` is matched against the file name at any depth, as in `.gitignore`.
/// A pattern globset cannot read (an unclosed `[`) matches literally.
pub(crate) struct GlobPattern {
    /// `None` only if even the escaped pattern failed (then nothing matches).
    matcher: Option<globset::GlobMatcher>,
    names_only: bool,
}

impl GlobPattern {
    /// Compiles `pattern`.
    pub(crate) fn new(pattern: &str) -> Self {
        let pattern = pattern.trim_start_matches("./");
        let build = |p: &str| {
            globset::GlobBuilder::new(p)
                .literal_separator(true)
                .backslash_escape(false)
                .build()
        };
        let glob = build(pattern).or_else(|_| build(&globset::escape(pattern)));
        GlobPattern {
            matcher: glob.ok().map(|g| g.compile_matcher()),
            names_only: !pattern.contains('/'),
        }
    }

    /// Whether `path` (relative, `/`-separated) matches.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let Some(matcher) = &self.matcher else {
            return false;
        };
        if self.names_only {
            matcher.is_match(path.rsplit('/').next().unwrap_or(path))
        } else {
            matcher.is_match(path.trim_matches('/'))
        }
    }
}

/// Whether `path` matches the glob `pattern` (compiling it each time; for
/// one-off checks).
#[cfg(test)]
pub(crate) fn glob_match(pattern: &str, path: &str) -> bool {
    GlobPattern::new(pattern).matches(path)
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
        // What backtracked exponentially in the hand-written matcher.
        let evil = format!("{}b", "*a".repeat(40));
        assert!(!glob_match(&evil, &"a".repeat(60)));
    }
}

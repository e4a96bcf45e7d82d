//! grep and glob over a workspace, through the same confined walk.

use std::io::{BufRead, BufReader};
use std::os::fd::AsFd;

use rustix::fs::{FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::Inner;
use super::open::fs_error;
use super::walk::{self, Flow, slash_path};
use crate::error::{Error, Result};
use crate::exec::computer::AGENT_ROOT;

/// Files larger than this are not searched.
const MAX_GREP_FILE: i64 = 8 * 1024 * 1024;
/// Entries a search looks at before it gives up.
const MAX_VISITED: usize = 200_000;
/// Characters of a matching line that are returned.
const MAX_LINE: usize = 400;
/// Paths a glob returns at most.
const MAX_GLOB: usize = 1000;

/// A content search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepQuery {
    /// A regular expression (Rust `regex` syntax), or a literal string.
    pub pattern: String,
    /// Where to search (a directory or a file); the workspace by default.
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose path matches this glob, such as `*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Match regardless of case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Treat the pattern as a literal string.
    #[serde(default)]
    pub literal: bool,
    /// Stop after this many matches.
    pub max_matches: usize,
}

impl GrepQuery {
    /// A search for `pattern` in the whole workspace, up to 200 matches.
    pub fn new(pattern: impl Into<String>) -> Self {
        GrepQuery {
            pattern: pattern.into(),
            path: None,
            glob: None,
            ignore_case: false,
            literal: false,
            max_matches: 200,
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepMatch {
    /// The file's agent-visible path.
    pub path: String,
    /// The line number (1-based).
    pub line: usize,
    /// The line, without its newline, cut to 400 characters.
    pub text: String,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepResult {
    /// The matches, in path and line order.
    pub matches: Vec<GrepMatch>,
    /// Files searched.
    pub files_searched: usize,
    /// Whether the search stopped early (at the match or entry limit).
    pub truncated: bool,
}

/// What a glob found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobResult {
    /// Matching agent-visible paths, in walk order.
    pub paths: Vec<String>,
    /// Whether more would have matched than are returned.
    pub truncated: bool,
}

pub(super) fn grep(fs: &Inner, query: &GrepQuery) -> Result<GrepResult> {
    let source = if query.literal {
        regex::escape(&query.pattern)
    } else {
        query.pattern.clone()
    };
    let pattern = regex::RegexBuilder::new(&source)
        .case_insensitive(query.ignore_case)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| Error::invalid("pattern", e.to_string()))?;
    let start = fs.resolve(query.path.as_deref().unwrap_or(root_name(fs)))?;
    let root = fs.open_root()?;
    let dir = root
        .open(&start.rel, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())
        .map_err(|e| fs_error(e, "searching", &start.visible))?;
    let mut result = GrepResult {
        matches: Vec::new(),
        files_searched: 0,
        truncated: false,
    };
    let stat =
        rustix::fs::fstat(&dir).map_err(|e| fs_error(e.into(), "searching", &start.visible))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        let (file, _) = fs.open_file(&root, &start, OFlags::RDONLY)?;
        search_file(
            file,
            &start.visible,
            &pattern,
            query.max_matches,
            &mut result,
        );
        return Ok(result);
    }
    let filter = query.glob.as_deref().map(walk::GlobPattern::new);
    let mut visited = 0;
    walk::walk(dir.as_fd(), &mut |entry| {
        visited += 1;
        if visited > MAX_VISITED || result.matches.len() >= query.max_matches {
            result.truncated = true;
            return Flow::Stop;
        }
        let kind = FileType::from_raw_mode(entry.stat.st_mode);
        if kind == FileType::Directory {
            return if entry.name == ".git" {
                Flow::SkipDir
            } else {
                Flow::Continue
            };
        }
        if kind != FileType::RegularFile
            || entry.stat.st_size > MAX_GREP_FILE
            || (fs.confined && entry.stat.st_nlink > 1)
        {
            return Flow::Continue;
        }
        let rel = slash_path(entry.rel);
        if let Some(glob) = &filter
            && !glob.matches(&rel)
        {
            return Flow::Continue;
        }
        let Ok(file) = rustix::fs::openat(
            entry.parent,
            entry.name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return Flow::Continue;
        };
        let visible = start.child(&rel).visible;
        search_file(file, &visible, &pattern, query.max_matches, &mut result);
        Flow::Continue
    })
    .map_err(|e| fs_error(e, "searching", &start.visible))?;
    if result.matches.len() >= query.max_matches {
        result.truncated = true;
    }
    Ok(result)
}

/// How a search names the root when no path is given.
fn root_name(fs: &Inner) -> &'static str {
    if fs.confined { AGENT_ROOT } else { "." }
}

fn search_file(
    file: std::os::fd::OwnedFd,
    visible: &str,
    pattern: &regex::Regex,
    max: usize,
    result: &mut GrepResult,
) {
    let mut reader = BufReader::new(std::fs::File::from(file));
    let binary = reader
        .fill_buf()
        .map(|head| head[..head.len().min(8192)].contains(&0))
        .unwrap_or(true);
    if binary {
        return;
    }
    result.files_searched += 1;
    let mut line = Vec::new();
    let mut number = 0;
    while result.matches.len() < max {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        number += 1;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if pattern.is_match(text) {
            result.matches.push(GrepMatch {
                path: visible.to_string(),
                line: number,
                text: text.chars().take(MAX_LINE).collect(),
            });
        }
    }
}

pub(super) fn glob(fs: &Inner, pattern: &str) -> Result<GlobResult> {
    let pattern = pattern.trim();
    if pattern.is_empty() || pattern.contains('\0') {
        return Err(Error::invalid("glob", "give a pattern such as src/**/*.rs"));
    }
    let relative = if fs.confined && pattern.starts_with('/') {
        match pattern.strip_prefix(AGENT_ROOT) {
            Some(rest) => rest.trim_start_matches('/'),
            None => return Err(super::path::escapes(pattern)),
        }
    } else if pattern.starts_with('/') {
        return Err(Error::invalid(
            "glob",
            "give the pattern relative to the working directory",
        ));
    } else {
        pattern
    };
    if relative.split('/').any(|part| part == "..") {
        return Err(super::path::escapes(pattern));
    }
    let base = fs.resolve(root_name(fs))?;
    let root = fs.open_root()?;
    let dir = root
        .open(
            std::path::Path::new(""),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .map_err(|e| fs_error(e, "searching", &base.visible))?;
    let mut result = GlobResult {
        paths: Vec::new(),
        truncated: false,
    };
    let mut visited = 0;
    let matcher = walk::GlobPattern::new(relative);
    walk::walk(dir.as_fd(), &mut |entry| {
        visited += 1;
        if visited > MAX_VISITED {
            result.truncated = true;
            return Flow::Stop;
        }
        let rel = slash_path(entry.rel);
        if matcher.matches(&rel) {
            if result.paths.len() >= MAX_GLOB {
                result.truncated = true;
                return Flow::Stop;
            }
            result.paths.push(base.child(&rel).visible);
        }
        Flow::Continue
    })
    .map_err(|e| fs_error(e, "searching", &base.visible))?;
    Ok(result)
}

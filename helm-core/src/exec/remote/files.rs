//! The files of a remote computer, over the Open Terminal file endpoints
//! (`/files/list`, `read`, `view`, `upload`, `mkdir`, `move`, `delete`,
//! `grep`, `glob`), keeping [`Files`]' contract: agent paths in and out,
//! nothing outside `/workspace` ever asked for, the same error kinds.
//!
//! Where the protocol says less than this host's files do, the entries say
//! so plainly: links are followed (the server does), `mode` is `0o644` /
//! `0o755` or the read-only `0o444` / `0o555` from the server's writable
//! flag, `links` is 1. Searches use the server's matching: Python regular
//! expressions, `fnmatch` globs; a search returns at most 500 matches.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use reqwest::Method;
use serde::Deserialize;

use super::client::{OtServer, agent_path, resolve, server_path};
use crate::error::{Error, Result};
use crate::exec::files::path::ToolPath;
use crate::exec::files::{
    FileBytes, FileEntry, FileKind, FileText, Files, GlobResult, GrepMatch, GrepQuery, GrepResult,
    LineRange, MAX_READ_TEXT,
};

/// The most matches one search asks the server for (its own limit).
const MAX_SEARCH: usize = 500;
/// A matching line is cut to this many characters, as on this host.
const MAX_LINE: usize = 400;

/// The files of one remote computer's workspace.
#[derive(Debug)]
pub struct RemoteFiles {
    server: Arc<OtServer>,
    read_only: Option<String>,
}

/// An entry of a `/files/list` answer.
#[derive(Debug, Deserialize)]
struct Listed {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    size: u64,
    modified: Option<f64>,
    #[serde(default = "yes")]
    writable: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct Listing {
    entries: Vec<Listed>,
}

impl Listed {
    fn entry(self, parent: &ToolPath) -> FileEntry {
        let kind = if self.kind == "directory" {
            FileKind::Dir
        } else {
            FileKind::File
        };
        let mode = match (kind, self.writable) {
            (FileKind::Dir, true) => 0o755,
            (FileKind::Dir, false) => 0o555,
            (_, true) => 0o644,
            (_, false) => 0o444,
        };
        FileEntry {
            path: parent.child(&self.name).visible,
            name: self.name,
            kind,
            size: self.size,
            mode,
            links: 1,
            modified: self
                .modified
                .and_then(|s| Timestamp::from_nanosecond((s * 1e9) as i128).ok()),
            link_target: None,
        }
    }
}

impl RemoteFiles {
    /// The files of `server`'s workspace; with `read_only`, every change
    /// is refused with that reason.
    pub(super) fn new(server: Arc<OtServer>, read_only: Option<String>) -> Self {
        RemoteFiles { server, read_only }
    }

    fn writable(&self) -> Result<()> {
        match &self.read_only {
            Some(reason) => Err(Error::Refused(reason.clone())),
            None => Ok(()),
        }
    }

    /// `input` as an agent path and as the server's path.
    async fn at(&self, input: &str) -> Result<(ToolPath, String)> {
        resolve(self.server.root().await?, input)
    }

    /// The entries of the directory at `server` (which is `dir`).
    async fn entries(&self, dir: &ToolPath, server: &str) -> Result<Vec<FileEntry>> {
        let listing: Listing = self
            .server
            .json(
                "listing a directory",
                self.get("/files/list").query(&[("directory", server)]),
            )
            .await
            .map_err(|e| named(e, dir))?;
        Ok(listing.entries.into_iter().map(|l| l.entry(dir)).collect())
    }

    /// The entry of `path`, from its parent's listing.
    async fn entry(&self, path: &ToolPath) -> Result<FileEntry> {
        let Some(parent_rel) = path.rel.parent() else {
            return Ok(workspace_entry());
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let parent = ToolPath {
            rel: parent_rel.to_path_buf(),
            visible: parent_of(&path.visible),
        };
        let server = server_path(self.server.root().await?, &parent_rel.to_string_lossy());
        let missing = || Error::not_found("file", &path.visible);
        let entries = self.entries(&parent, &server).await.map_err(|e| match e {
            Error::NotFound { .. } => missing(),
            other => other,
        })?;
        entries
            .into_iter()
            .find(|e| Some(&e.name) == name.as_ref())
            .ok_or_else(missing)
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.server.request(Method::GET, path, Duration::ZERO)
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.server.request(Method::POST, path, Duration::ZERO)
    }
}

/// The workspace itself, which no listing shows.
fn workspace_entry() -> FileEntry {
    FileEntry {
        path: crate::exec::AGENT_ROOT.to_string(),
        name: "workspace".to_string(),
        kind: FileKind::Dir,
        size: 0,
        mode: 0o755,
        links: 1,
        modified: None,
        link_target: None,
    }
}

fn parent_of(visible: &str) -> String {
    match visible.rsplit_once('/') {
        Some(("", _)) => "/".to_string(),
        Some((parent, _)) => parent.to_string(),
        None => crate::exec::AGENT_ROOT.to_string(),
    }
}

/// A refusal about `path`, named by its agent path rather than the
/// server's words.
fn named(error: Error, path: &ToolPath) -> Error {
    match error {
        Error::NotFound { .. } => Error::not_found("file", &path.visible),
        Error::Conflict(_) => Error::Conflict(format!("{} already exists", path.visible)),
        other => other,
    }
}

/// The workspace itself cannot be written, moved or deleted.
fn refuse_root(path: &ToolPath, action: &str) -> Result<()> {
    if path.is_root() {
        return Err(Error::Refused(format!(
            "the workspace itself cannot be {action}"
        )));
    }
    Ok(())
}

/// A `multipart/form-data` body with one file field, as `/files/upload`
/// reads it, and its content type.
fn upload_body(name: &str, contents: &[u8]) -> Result<(String, Vec<u8>)> {
    if name.chars().any(|c| matches!(c, '"' | '\\' | '\r' | '\n')) {
        return Err(Error::invalid(
            "path",
            format!(
                "{name:?}: a remote computer takes no quotes, backslashes or line breaks in file names"
            ),
        ));
    }
    let mut boundary = boundary()?;
    while contents
        .windows(boundary.len())
        .any(|w| w == boundary.as_bytes())
    {
        boundary = self::boundary()?;
    }
    let mut body = Vec::with_capacity(contents.len() + 256);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(contents);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), body))
}

/// A fresh multipart boundary (checked against the file's bytes too).
fn boundary() -> Result<String> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Internal(format!("no randomness for an upload: {e}")))?;
    Ok(bytes.iter().fold(String::from("helm-"), |mut s, b| {
        s.push_str(&format!("{b:02x}"));
        s
    }))
}

/// The lines `content` holds, as the numbers of its first and last line
/// when it starts at `start` (0 and 0 when it is empty).
fn line_span(content: &str, start: usize) -> (usize, usize) {
    if content.is_empty() {
        return (0, 0);
    }
    let breaks = content.matches('\n').count();
    let lines = breaks + usize::from(!content.ends_with('\n'));
    (start, start + lines - 1)
}

/// Cuts `text` to at most `max` bytes, on a character boundary.
fn clip(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

#[async_trait]
impl Files for RemoteFiles {
    fn is_confined(&self) -> bool {
        true
    }

    async fn list(&self, input: &str) -> Result<Vec<FileEntry>> {
        let (path, server) = self.at(input).await?;
        match self.entries(&path, &server).await {
            // Not a directory: the entry of the file, as on this host.
            Err(Error::NotFound { .. }) => Ok(vec![self.entry(&path).await?]),
            other => other,
        }
    }

    async fn stat(&self, input: &str) -> Result<FileEntry> {
        let (path, _) = self.at(input).await?;
        self.entry(&path).await
    }

    async fn read(&self, input: &str, lines: Option<LineRange>) -> Result<FileText> {
        #[derive(Deserialize)]
        struct Read {
            content: String,
            total_lines: usize,
        }
        let (path, server) = self.at(input).await?;
        let mut request = self.get("/files/read").query(&[("path", &server)]);
        let start = lines.map_or(1, |l| l.start.max(1));
        if let Some(range) = lines {
            request = request.query(&[("start_line", start)]);
            if let Some(end) = range.end {
                request = request.query(&[("end_line", end)]);
            }
        }
        let response = self
            .server
            .send("reading a file", request)
            .await
            .map_err(|e| match e {
                Error::Invalid { .. } => binary(&path),
                e => named(e, &path),
            })?;
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            // An image, which the server hands back as it is.
            return Err(binary(&path));
        }
        let read: Read = response.json().await.map_err(|e| {
            self.server
                .unreachable(format!("a file it read was not understood: {e}"))
        })?;
        let mut content = read.content;
        let truncated = clip(&mut content, MAX_READ_TEXT);
        let (start_line, end_line) = line_span(&content, start);
        Ok(FileText {
            path: path.visible,
            content,
            start_line,
            end_line,
            total_lines: read.total_lines,
            truncated,
        })
    }

    async fn read_bytes(&self, input: &str, limit: usize) -> Result<FileBytes> {
        let (path, server) = self.at(input).await?;
        let mut response = self
            .server
            .send(
                "reading a file",
                self.get("/files/view").query(&[("path", &server)]),
            )
            .await
            .map_err(|e| named(e, &path))?;
        let size = response.content_length();
        let mut bytes = Vec::new();
        let mut more = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            self.server
                .unreachable(format!("reading a file failed: {e}"))
        })? {
            let room = limit - bytes.len();
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                more = true;
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let size = size.unwrap_or(bytes.len() as u64);
        Ok(FileBytes {
            path: path.visible,
            truncated: more || size > bytes.len() as u64,
            size,
            bytes,
        })
    }

    async fn write(&self, input: &str, contents: Vec<u8>) -> Result<FileEntry> {
        self.writable()?;
        let (path, _) = self.at(input).await?;
        refuse_root(&path, "written")?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent_rel = path.rel.parent().map(|p| p.to_string_lossy().into_owned());
        let directory = server_path(
            self.server.root().await?,
            parent_rel.as_deref().unwrap_or(""),
        );
        let (content_type, body) = upload_body(&name, &contents)?;
        self.server
            .send(
                "writing a file",
                self.post("/files/upload")
                    .query(&[("directory", &directory)])
                    .header(reqwest::header::CONTENT_TYPE, content_type)
                    .body(body),
            )
            .await
            .map_err(|e| named(e, &path))?;
        self.entry(&path).await
    }

    async fn mkdir(&self, input: &str) -> Result<FileEntry> {
        self.writable()?;
        let (path, server) = self.at(input).await?;
        if !path.is_root() {
            self.server
                .send(
                    "making a directory",
                    self.post("/files/mkdir")
                        .json(&serde_json::json!({ "path": server })),
                )
                .await
                .map_err(|e| match e {
                    // It exists as a file.
                    Error::Invalid { .. } => {
                        Error::Conflict(format!("{} already exists as a file", path.visible))
                    }
                    e => named(e, &path),
                })?;
        }
        self.entry(&path).await
    }

    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        self.writable()?;
        let (source, source_server) = self.at(from).await?;
        let (target, target_server) = self.at(to).await?;
        refuse_root(&source, "moved")?;
        refuse_root(&target, "replaced")?;
        self.server
            .send(
                "moving a file",
                self.post("/files/move").json(&serde_json::json!({
                    "source": source_server,
                    "destination": target_server,
                })),
            )
            .await
            .map_err(|e| match e {
                Error::NotFound { .. } => Error::not_found("file", &source.visible),
                Error::Conflict(_) => named(e, &target),
                Error::Invalid { .. } => Error::not_found("directory", parent_of(&target.visible)),
                e => e,
            })?;
        self.entry(&target).await
    }

    async fn delete(&self, input: &str, recursive: bool) -> Result<()> {
        self.writable()?;
        let (path, server) = self.at(input).await?;
        refuse_root(&path, "deleted")?;
        // The server deletes a directory with everything in it: an
        // ordinary delete only takes an empty one, as on this host.
        if !recursive
            && self.entry(&path).await?.kind == FileKind::Dir
            && !self.entries(&path, &server).await?.is_empty()
        {
            return Err(Error::Conflict(format!(
                "{} is not empty; delete it recursively to remove its contents",
                path.visible
            )));
        }
        self.server
            .send(
                "deleting a file",
                self.server
                    .request(Method::DELETE, "/files/delete", Duration::ZERO)
                    .query(&[("path", &server)]),
            )
            .await
            .map_err(|e| named(e, &path))?;
        Ok(())
    }

    async fn grep(&self, query: GrepQuery) -> Result<GrepResult> {
        #[derive(Deserialize)]
        struct Found {
            file: String,
            line: usize,
            content: String,
        }
        #[derive(Deserialize)]
        struct Grep {
            matches: Vec<Found>,
            truncated: bool,
        }
        let (path, server) = self.at(query.path.as_deref().unwrap_or(".")).await?;
        let max = query.max_matches.clamp(1, MAX_SEARCH);
        let mut request = self.get("/files/grep").query(&[
            ("query", query.pattern.as_str()),
            ("path", &server),
            ("regex", if query.literal { "false" } else { "true" }),
            (
                "case_insensitive",
                if query.ignore_case { "true" } else { "false" },
            ),
        ]);
        request = request.query(&[("max_results", max)]);
        if let Some(glob) = &query.glob {
            request = request.query(&[("include", glob)]);
        }
        let grep: Grep =
            self.server
                .json("searching files", request)
                .await
                .map_err(|e| match e {
                    Error::NotFound { .. } => named(e, &path),
                    Error::Invalid { reason, .. } => Error::invalid("pattern", reason),
                    e => e,
                })?;
        let root = self.server.root().await?;
        let mut files: Vec<&str> = grep.matches.iter().map(|m| m.file.as_str()).collect();
        files.dedup();
        let files_searched = files.len();
        let matches = grep
            .matches
            .iter()
            .map(|m| {
                let mut text = m.content.clone();
                if text.chars().count() > MAX_LINE {
                    text = text.chars().take(MAX_LINE).collect();
                }
                GrepMatch {
                    path: agent_path(root, &m.file),
                    line: m.line,
                    text,
                }
            })
            .collect();
        Ok(GrepResult {
            matches,
            files_searched,
            truncated: grep.truncated,
        })
    }

    async fn glob(&self, pattern: &str) -> Result<GlobResult> {
        #[derive(Deserialize)]
        struct Matched {
            path: String,
        }
        #[derive(Deserialize)]
        struct Glob {
            matches: Vec<Matched>,
            truncated: bool,
        }
        if pattern.trim().is_empty() {
            return Err(Error::invalid(
                "pattern",
                "it is empty; give a glob such as src/**/*.rs",
            ));
        }
        let (root_path, server) = self.at(".").await?;
        let glob: Glob = self
            .server
            .json(
                "matching file names",
                self.get("/files/glob").query(&[
                    ("pattern", pattern),
                    ("path", &server),
                    ("max_results", &MAX_SEARCH.to_string()),
                ]),
            )
            .await?;
        Ok(GlobResult {
            paths: glob
                .matches
                .into_iter()
                .map(|m| root_path.child(&m.path).visible)
                .collect(),
            truncated: glob.truncated,
        })
    }
}

/// The refusal of a file that is not text.
fn binary(path: &ToolPath) -> Error {
    Error::invalid(
        "file",
        format!("{} is binary; read its bytes instead", path.visible),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_spans_count_a_last_line_without_its_newline() {
        assert_eq!(line_span("", 1), (0, 0));
        assert_eq!(line_span("a\n", 1), (1, 1));
        assert_eq!(line_span("a\nb", 3), (3, 4));
        assert_eq!(line_span("a\nb\n", 3), (3, 4));
    }

    #[test]
    fn uploads_are_one_multipart_field() -> Result<()> {
        let (kind, body) = upload_body("a.txt", b"hi")?;
        let boundary = kind
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap_or_default();
        assert!(boundary.starts_with("helm-"), "{kind}");
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("filename=\"a.txt\""));
        assert!(text.ends_with(&format!("\r\n\r\nhi\r\n--{boundary}--\r\n")));
        assert!(upload_body("a\"b", b"").is_err());
        Ok(())
    }

    #[test]
    fn clipping_keeps_characters_whole() {
        let mut text = "aé".to_string();
        assert!(clip(&mut text, 2));
        assert_eq!(text, "a");
    }
}

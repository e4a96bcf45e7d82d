//! The Open Terminal protocol's searches (`/api/channels/{channel}/ot/files/grep`
//! and `…/glob`), through the channel's confined files like the rest of
//! the protocol. They read the raw query, since `include` and `exclude`
//! may repeat, and answer a missing or malformed parameter with 422, as
//! the protocol does.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use globset::{GlobBuilder, GlobMatcher};
use helm_core::exec::{FileKind, GrepQuery};

use super::WriteErrors;
use crate::api::{OtGlobMatch, OtGlobQuery, OtGlobResult, OtGrepMatch, OtGrepQuery, OtGrepResult};
use crate::caller::OtCaller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Matches a search returns unless `max_results` says otherwise.
const DEFAULT_RESULTS: usize = 50;
/// The most matches a search returns.
const MAX_RESULTS: usize = 500;
/// Entries a name search looks at before it stops, truncated.
const MAX_WALK: usize = 20_000;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(grep))
        .routes(handlers!(glob))
        .route_layer(axum::middleware::from_fn(super::ot_errors::protocol_errors))
}

/// A query string's pairs, read as the protocol reads them.
struct Params(Vec<(String, String)>);

impl Params {
    fn parse(raw: Option<&str>) -> Self {
        Params(
            form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
        )
    }

    fn one(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    fn required(&self, name: &str) -> ApiResult<String> {
        self.one(name)
            .map(str::to_string)
            .ok_or_else(|| unprocessable(format!("the query parameter {name} is required")))
    }

    /// A boolean as the protocol takes it (`true`/`false`, `1`/`0`,
    /// `yes`/`no`, `on`/`off`).
    fn flag(&self, name: &str, default: bool) -> ApiResult<bool> {
        match self.one(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes" | "on" | "t" | "y") => Ok(true),
            Some("false" | "0" | "no" | "off" | "f" | "n") => Ok(false),
            Some(other) => Err(unprocessable(format!(
                "{name}={other:?} is not a boolean; use true or false"
            ))),
        }
    }

    /// `max_results`: 1 to 500.
    fn max_results(&self) -> ApiResult<usize> {
        let Some(text) = self.one("max_results") else {
            return Ok(DEFAULT_RESULTS);
        };
        match text.parse::<usize>() {
            Ok(n) if (1..=MAX_RESULTS).contains(&n) => Ok(n),
            _ => Err(unprocessable(format!(
                "max_results={text:?}: give a whole number from 1 to {MAX_RESULTS}"
            ))),
        }
    }
}

fn unprocessable(message: String) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_query", message)
}

/// A glob as the protocol matches one (`fnmatch`: `*` crosses `/`).
fn matcher(what: &str, pattern: &str) -> ApiResult<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ApiError::invalid(format!("{what} {pattern:?} is not a glob: {e}")))
}

/// Searches file contents.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/grep", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtGrepQuery),
    responses((status = 200, description = "The matches", body = OtGrepResult), WriteErrors))]
async fn grep(
    State(state): State<AppState>,
    caller: OtCaller,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<OtGrepResult>> {
    let params = Params::parse(raw.as_deref());
    let query = params.required("query")?;
    let path = params.one("path").unwrap_or(".").to_string();
    let regex = params.flag("regex", true)?;
    let ignore_case = params.flag("case_insensitive", false)?;
    let per_line = params.flag("match_per_line", true)?;
    let max = params.max_results()?;
    let include = params.all("include");
    let fs = super::ot_files::files(&state, &caller).await?;
    let target = fs.stat(&path).await?;
    // One search per include glob (a file matching any of them counts),
    // merged in path and line order.
    let globs: Vec<Option<String>> = if include.is_empty() {
        vec![None]
    } else {
        include.into_iter().map(Some).collect()
    };
    let mut found = Vec::new();
    let mut truncated = false;
    for glob in globs {
        let result = fs
            .grep(GrepQuery {
                pattern: query.clone(),
                path: Some(target.path.clone()),
                glob,
                ignore_case,
                literal: !regex,
                max_matches: max,
            })
            .await?;
        truncated |= result.truncated;
        found.extend(result.matches);
    }
    found.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    found.dedup_by(|a, b| a.path == b.path && a.line == b.line);
    if !per_line {
        found.dedup_by(|a, b| a.path == b.path);
    }
    if found.len() > max {
        found.truncate(max);
        truncated = true;
    }
    let matches = found
        .into_iter()
        .map(|m| OtGrepMatch {
            file: m.path,
            line: per_line.then_some(m.line),
            content: per_line.then_some(m.text),
        })
        .collect();
    Ok(Json(OtGrepResult {
        query,
        path: target.path,
        matches,
        truncated,
    }))
}

/// Finds files and directories by name.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/glob", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtGlobQuery),
    responses((status = 200, description = "The matches", body = OtGlobResult), WriteErrors))]
async fn glob(
    State(state): State<AppState>,
    caller: OtCaller,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<OtGlobResult>> {
    let params = Params::parse(raw.as_deref());
    let pattern = params.required("pattern")?;
    let path = params.one("path").unwrap_or(".").to_string();
    let kind = params.one("type").unwrap_or("any").to_string();
    if !matches!(kind.as_str(), "file" | "directory" | "any") {
        return Err(unprocessable(format!(
            "type={kind:?}: use file, directory or any"
        )));
    }
    let max = params.max_results()?;
    let include = matcher("pattern", &pattern)?;
    let exclude = params
        .all("exclude")
        .iter()
        .map(|e| matcher("exclude", e))
        .collect::<ApiResult<Vec<_>>>()?;
    let fs = super::ot_files::files(&state, &caller).await?;
    let base = fs.stat(&path).await?;
    if base.kind != FileKind::Dir {
        return Err(helm_core::Error::not_found("directory", base.path).into());
    }
    // Top-down, each directory's entries by name, as the protocol walks.
    let mut matches = Vec::new();
    let mut truncated = false;
    let mut seen = 0;
    let mut pending = vec![base.path.clone()];
    'walk: while let Some(dir) = pending.pop() {
        let entries = fs.list(&dir).await?;
        let mut subdirs = Vec::new();
        for entry in entries {
            seen += 1;
            if seen > MAX_WALK {
                truncated = true;
                break 'walk;
            }
            let rel = entry
                .path
                .strip_prefix(&base.path)
                .unwrap_or(&entry.path)
                .trim_start_matches('/')
                .to_string();
            let is_dir = entry.kind == FileKind::Dir;
            if is_dir {
                subdirs.push(entry.path.clone());
            }
            let wanted = match kind.as_str() {
                "file" => !is_dir,
                "directory" => is_dir,
                _ => true,
            };
            let named = include.is_match(&entry.name) || include.is_match(&rel);
            let left_out = exclude
                .iter()
                .any(|e| e.is_match(&entry.name) || e.is_match(&rel));
            if wanted && named && !left_out {
                matches.push(OtGlobMatch {
                    path: rel,
                    kind: if is_dir { "directory" } else { "file" }.to_string(),
                    size: entry.size,
                    modified: entry
                        .modified
                        .map(|t| t.as_millisecond() as f64 / 1000.0)
                        .unwrap_or_default(),
                });
                if matches.len() >= max {
                    truncated = true;
                    break 'walk;
                }
            }
        }
        // Popped from the end: the first subdirectory is walked next.
        pending.extend(subdirs.into_iter().rev());
    }
    Ok(Json(OtGlobResult {
        pattern,
        path: base.path,
        matches,
        truncated,
    }))
}

//! The Open Terminal protocol's files (`/api/channels/{channel}/ot/files/…`),
//! through the same confined file API as everything else: paths are the
//! agent's (`/workspace/...`, or relative to it), and nothing outside the
//! workspace can be named. Uploads are recorded as artifacts like the
//! normal API's.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use helm_core::exec::{FileKind, Files, LineRange};
use helm_core::model::{ChannelRef, ChannelStatus};
use serde_json::json;

use super::WriteErrors;
use super::files::{attachment, content_type_for};
use super::upload::read_upload;
use crate::api::{
    OtDeleted, OtEntry, OtFileText, OtListQuery, OtListing, OtMkdirRequest, OtMoveRequest, OtMoved,
    OtPath, OtPathQuery, OtReadQuery, OtUploadQuery, OtWriteRequest, OtWritten, UploadForm,
};
use crate::caller::OtCaller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, ProtocolQuery};
use crate::state::AppState;

/// The workspace, which is the protocol's home and working directory.
const HOME: &str = "/workspace";

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(cwd))
        .routes(handlers!(list))
        .routes(handlers!(read))
        .routes(handlers!(view))
        .routes(handlers!(write))
        .routes(handlers!(mkdir))
        .routes(handlers!(delete))
        .routes(handlers!(move_entry))
        .routes(handlers!(upload))
        .route_layer(axum::middleware::from_fn(super::ot_errors::protocol_errors))
}

pub(super) async fn files(
    state: &AppState,
    caller: &OtCaller,
) -> ApiResult<std::sync::Arc<dyn Files>> {
    Ok(state
        .helm
        .workspace_files(&caller.user, &ChannelRef::Id(caller.channel.channel.id))
        .await?)
}

fn writable(caller: &OtCaller) -> bool {
    caller.channel.channel.status == ChannelStatus::Active
}

/// The working directory and home: both the workspace.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/cwd", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "`{cwd, home}`", body = Object), WriteErrors))]
async fn cwd(_caller: OtCaller) -> Json<serde_json::Value> {
    Json(json!({"cwd": HOME, "home": HOME, "root": {"path": HOME, "label": "Workspace"}}))
}

/// A directory's entries.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/list", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtListQuery),
    responses((status = 200, description = "The listing", body = OtListing), WriteErrors))]
async fn list(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtListQuery>,
) -> ApiResult<Json<OtListing>> {
    let fs = files(&state, &caller).await?;
    let dir = query.directory.unwrap_or_else(|| HOME.to_string());
    let stat = fs.stat(&dir).await?;
    if stat.kind != FileKind::Dir {
        return Err(helm_core::Error::not_found("directory", stat.path).into());
    }
    let writable = writable(&caller);
    let entries = fs
        .list(&dir)
        .await?
        .into_iter()
        .map(|e| OtEntry {
            kind: if e.kind == FileKind::Dir {
                "directory"
            } else {
                "file"
            }
            .to_string(),
            modified: e
                .modified
                .map(|t| t.as_millisecond() as f64 / 1000.0)
                .unwrap_or_default(),
            name: e.name,
            size: e.size,
            writable,
        })
        .collect();
    Ok(Json(OtListing {
        dir: stat.path,
        writable,
        entries,
    }))
}

/// Whether a file's first bytes are not UTF-8 text, as the protocol decides
/// (it reads any file that decodes as UTF-8 as text, NULs and all). A
/// character cut by the end of a `truncated` head does not count.
fn looks_binary(bytes: &[u8], truncated: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => false,
        Err(e) => !(truncated && e.error_len().is_none()),
    }
}

/// Lines `start..=end` (1-based, each with its line break) of a text, and
/// how many lines it has.
fn line_slice(text: &str, start: Option<u32>, end: Option<u32>) -> (usize, String) {
    let start = start.unwrap_or(1) as usize;
    let end = end.map_or(usize::MAX, |e| e as usize);
    let mut total = 0;
    let mut content = String::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        total = i + 1;
        if (start..=end).contains(&total) {
            content.push_str(line);
        }
    }
    (total, content)
}

/// A text file (or a line range of it); an image comes back as its bytes;
/// other binary files are refused with 415.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/read", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtReadQuery),
    responses((status = 200, description = "The text", body = OtFileText),
              (status = 415, description = "A binary file that is not an image", body = crate::error::ErrorBody),
              WriteErrors))]
async fn read(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtReadQuery>,
) -> ApiResult<Response> {
    let fs = files(&state, &caller).await?;
    let head = fs.read_bytes(&query.path, 8192).await?;
    if looks_binary(&head.bytes, head.truncated) {
        let media = content_type_for(&head.path);
        if !media.starts_with("image/") {
            return Err(ApiError::new(
                axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!(
                    "{} is a binary file ({media}, {} bytes)",
                    head.path, head.size
                ),
            ));
        }
        let whole = fs
            .read_bytes(&query.path, state.config.max_download_bytes)
            .await?;
        let mut response = (axum::http::StatusCode::OK, whole.bytes).into_response();
        response.headers_mut().insert(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static(media),
        );
        return Ok(response);
    }
    if head.bytes.contains(&0) {
        // UTF-8 text with NULs in it: the protocol reads it as text, Helm's
        // file reader refuses it as binary, so it is sliced here.
        let whole = fs
            .read_bytes(&query.path, state.config.max_download_bytes)
            .await?;
        let text = String::from_utf8_lossy(&whole.bytes);
        let (total_lines, content) = line_slice(&text, query.start_line, query.end_line);
        return Ok(Json(OtFileText {
            path: whole.path,
            total_lines,
            content,
        })
        .into_response());
    }
    let lines = match (query.start_line, query.end_line) {
        (None, None) => None,
        (start, end) => Some(LineRange {
            start: start.unwrap_or(1) as usize,
            end: end.map(|e| e as usize),
        }),
    };
    let text = fs.read(&query.path, lines).await?;
    Ok(Json(OtFileText {
        path: text.path,
        total_lines: text.total_lines,
        content: text.content,
    })
    .into_response())
}

/// A file's bytes, for previews.
#[utoipa::path(get, path = "/api/channels/{channel}/ot/files/view", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtPathQuery),
    responses((status = 200,
               description = "The bytes, typed by the file's extension (`application/octet-stream` when unknown)",
               content_type = "*/*", body = Vec<u8>),
              WriteErrors))]
async fn view(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtPathQuery>,
) -> ApiResult<Response> {
    let fs = files(&state, &caller).await?;
    let limit = state.config.max_download_bytes;
    let read = fs.read_bytes(&query.path, limit).await?;
    if read.truncated {
        return Err(ApiError::invalid(format!(
            "{} is {} bytes, over the {limit}-byte limit",
            read.path, read.size
        )));
    }
    let name = read.path.rsplit('/').next().unwrap_or("file").to_string();
    Ok(attachment(&name, read.bytes))
}

/// Writes a text file (creating its parents).
#[utoipa::path(post, path = "/api/channels/{channel}/ot/files/write", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = OtWriteRequest,
    responses((status = 200, description = "Written", body = OtWritten), WriteErrors))]
async fn write(
    State(state): State<AppState>,
    caller: OtCaller,
    Body(request): Body<OtWriteRequest>,
) -> ApiResult<Json<OtWritten>> {
    let fs = files(&state, &caller).await?;
    let entry = fs
        .write(&request.path, request.content.into_bytes())
        .await?;
    Ok(Json(OtWritten {
        path: entry.path,
        size: entry.size,
    }))
}

/// Creates a directory and its parents.
#[utoipa::path(post, path = "/api/channels/{channel}/ot/files/mkdir", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = OtMkdirRequest,
    responses((status = 200, description = "Made", body = OtPath), WriteErrors))]
async fn mkdir(
    State(state): State<AppState>,
    caller: OtCaller,
    Body(request): Body<OtMkdirRequest>,
) -> ApiResult<Json<OtPath>> {
    let fs = files(&state, &caller).await?;
    let entry = fs.mkdir(&request.path).await?;
    Ok(Json(OtPath { path: entry.path }))
}

/// Deletes a file or a directory with everything in it (as the protocol
/// does).
#[utoipa::path(delete, path = "/api/channels/{channel}/ot/files/delete", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtPathQuery),
    responses((status = 200, description = "Deleted", body = OtDeleted), WriteErrors))]
async fn delete(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtPathQuery>,
) -> ApiResult<Json<OtDeleted>> {
    let fs = files(&state, &caller).await?;
    let stat = fs.stat(&query.path).await?;
    let is_dir = stat.kind == FileKind::Dir;
    fs.delete(&query.path, true).await?;
    Ok(Json(OtDeleted {
        path: stat.path,
        kind: if is_dir { "directory" } else { "file" }.to_string(),
    }))
}

/// Moves a file or directory; 409 when the destination exists.
#[utoipa::path(post, path = "/api/channels/{channel}/ot/files/move", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = OtMoveRequest,
    responses((status = 200, description = "Moved", body = OtMoved), WriteErrors))]
async fn move_entry(
    State(state): State<AppState>,
    caller: OtCaller,
    Body(request): Body<OtMoveRequest>,
) -> ApiResult<Json<OtMoved>> {
    let fs = files(&state, &caller).await?;
    let source = fs.stat(&request.source).await?.path;
    let entry = fs.rename(&request.source, &request.destination).await?;
    Ok(Json(OtMoved {
        source,
        destination: entry.path,
    }))
}

/// Uploads a file (a multipart form with a part named `file`) into
/// `directory`; recorded as an artifact of kind `upload`.
#[utoipa::path(post, path = "/api/channels/{channel}/ot/files/upload", tag = "open-terminal",
    security(("ot_key" = [])),
    params(("channel" = String, Path, description = "The channel's name or id"), OtUploadQuery),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses((status = 200, description = "Uploaded", body = OtWritten), WriteErrors))]
async fn upload(
    State(state): State<AppState>,
    caller: OtCaller,
    ProtocolQuery(query): ProtocolQuery<OtUploadQuery>,
    request: Request,
) -> ApiResult<Json<OtWritten>> {
    let fs = files(&state, &caller).await?;
    let (_, uploaded) = read_upload(request, state.config.max_upload_bytes).await?;
    let channel = ChannelRef::Id(caller.channel.channel.id);
    let mut last = None;
    for file in uploaded {
        let path = format!("{}/{}", query.directory.trim_end_matches('/'), file.name);
        let entry = fs.write(&path, file.bytes).await?;
        state
            .helm
            .record_upload(&caller.user, &channel, &entry.path)
            .await?;
        last = Some(OtWritten {
            path: entry.path,
            size: entry.size,
        });
    }
    last.map(Json)
        .ok_or_else(|| ApiError::invalid("the form has no files"))
}

#[cfg(test)]
mod tests {
    use super::{line_slice, looks_binary};

    #[test]
    fn utf8_with_nuls_is_text_and_a_cut_character_is_not_binary() {
        assert!(!looks_binary(b"\x00\x01 text", false));
        assert!(looks_binary(b"\xff\xfe not text", false));
        // "é" cut in half by the end of a head that was truncated.
        assert!(!looks_binary(b"caf\xc3", true));
        assert!(looks_binary(b"caf\xc3", false));
    }

    #[test]
    fn lines_are_sliced_with_their_breaks() {
        assert_eq!(line_slice("a\nb\nc", Some(2), Some(2)), (3, "b\n".into()));
        assert_eq!(line_slice("a\nb\n", None, None), (2, "a\nb\n".into()));
        assert_eq!(line_slice("", None, None), (0, String::new()));
    }
}

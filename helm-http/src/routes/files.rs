//! Files: a channel's workspace as its agent sees it (`/workspace/...`),
//! through `Helm::files`, which confines every path to the workspace (an
//! escape is refused with core's message, never a host path), and its
//! artifacts.
//!
//! Reads answer JSON (listings, entries, text with line ranges) or raw bytes
//! (downloads, always as attachments so a browser never renders a file from
//! a workspace on the server's origin). Writes take JSON text; uploads take
//! a multipart form or a raw body, land in `/workspace/uploads/` unless a
//! directory is given, and are recorded as artifacts of kind `upload`.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use helm_core::exec::LineRange;
use helm_core::model::{ChannelRef, ThreadId};

use super::upload::{UploadedFile, read_upload};
use super::{ReadErrors, WriteErrors, channel_ref, created, path_id};
use crate::api::{
    Artifact, ArtifactQuery, DeleteFileQuery, DownloadQuery, FileEntry, FileText, IfExists,
    MkdirRequest, MoveRequest, NoteRequest, PathQuery, ReadQuery, Upload, UploadForm, UploadQuery,
    WriteFileRequest,
};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

/// Where uploads go when no directory is given.
pub const UPLOADS_DIR: &str = "/workspace/uploads";

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_files, write_file, delete_file))
        .routes(handlers!(stat_file))
        .routes(handlers!(read_file))
        .routes(handlers!(download_file))
        .routes(handlers!(upload_files))
        .routes(handlers!(make_dir))
        .routes(handlers!(save_note))
        .routes(handlers!(move_file))
        .routes(handlers!(list_artifacts))
        .routes(handlers!(rescan_artifacts))
}

/// The entries of a directory (or the entry of a file), by name.
#[utoipa::path(get, path = "/api/channels/{channel}/files", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), PathQuery),
    responses((status = 200, description = "Entries, by name", body = [FileEntry]), ReadErrors))]
async fn list_files(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<PathQuery>,
) -> ApiResult<Json<Vec<FileEntry>>> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    let path = query.path.as_deref().unwrap_or("/workspace");
    let entries = files.list(path).await?;
    Ok(Json(entries.into_iter().map(Into::into).collect()))
}

/// One entry; a symbolic link is described, not followed.
#[utoipa::path(get, path = "/api/channels/{channel}/files/stat", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), PathQuery),
    responses((status = 200, description = "The entry", body = FileEntry), ReadErrors))]
async fn stat_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<PathQuery>,
) -> ApiResult<Json<FileEntry>> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    let path = query.path.as_deref().unwrap_or("/workspace");
    Ok(Json(files.stat(path).await?.into()))
}

/// A text file, whole or some of its lines (binary files are refused).
#[utoipa::path(get, path = "/api/channels/{channel}/files/read", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), ReadQuery),
    responses((status = 200, description = "The text", body = FileText), ReadErrors))]
async fn read_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<ReadQuery>,
) -> ApiResult<Json<FileText>> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    let lines = match (query.start, query.end) {
        (None, None) => None,
        (start, end) => Some(LineRange {
            start: start.unwrap_or(1) as usize,
            end: end.map(|e| e as usize),
        }),
    };
    Ok(Json(files.read(&query.path, lines).await?.into()))
}

/// A file's bytes, as an attachment.
#[utoipa::path(get, path = "/api/channels/{channel}/files/download", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), DownloadQuery),
    responses((status = 200,
               description = "The file's bytes, typed by its extension (`application/octet-stream` when unknown)",
               content_type = "*/*", body = Vec<u8>), ReadErrors))]
async fn download_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<DownloadQuery>,
) -> ApiResult<Response> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    let limit = state.config.max_download_bytes;
    let read = files.read_bytes(&query.path, limit).await?;
    if read.truncated {
        return Err(helm_core::Error::invalid(
            "download",
            format!(
                "{} is {} bytes, over the {limit}-byte download limit; copy it out with a command",
                read.path, read.size
            ),
        )
        .into());
    }
    let name = read
        .path
        .rsplit('/')
        .next()
        .unwrap_or("download")
        .to_string();
    Ok(attachment(&name, read.bytes))
}

/// Writes a text file (parents made): replacing it; with `base_version`
/// only if it is unchanged since it was read (409 otherwise, as when a
/// person saved it meanwhile); or with `create` only making a new one
/// (201; 409 when the path exists). The answer carries the new version.
#[utoipa::path(put, path = "/api/channels/{channel}/files", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = WriteFileRequest,
    responses(
        (status = 200, description = "The file, replaced or made", body = FileEntry),
        (status = 201, description = "The new file (`create`)", body = FileEntry),
        WriteErrors))]
async fn write_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<WriteFileRequest>,
) -> ApiResult<(StatusCode, Json<FileEntry>)> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    let contents = request.content.into_bytes();
    let version = Some(helm_core::exec::content_version(&contents));
    let (status, entry) = match (request.create, request.base_version) {
        (true, Some(_)) => {
            return Err(ApiError::invalid(
                "a new file has no version to save over: send create or base_version, not both",
            ));
        }
        (true, None) => (
            StatusCode::CREATED,
            files.create(&request.path, contents).await?,
        ),
        (false, Some(base)) => (
            StatusCode::OK,
            files
                .write_unchanged(&request.path, contents, &base)
                .await?,
        ),
        (false, None) => (StatusCode::OK, files.write(&request.path, contents).await?),
    };
    let entry = FileEntry {
        version,
        ..entry.into()
    };
    Ok((status, Json(entry)))
}

/// Saves a quick note as a new Markdown file in `/workspace/notes`, named
/// `<day>-<title>.md` (`-2`, `-3`, … when the name is taken; no file is
/// ever replaced), and records it as an artifact of kind `upload`.
#[utoipa::path(post, path = "/api/channels/{channel}/notes", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = NoteRequest,
    responses((status = 201, description = "The note's file", body = FileEntry), WriteErrors))]
async fn save_note(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<NoteRequest>,
) -> ApiResult<(StatusCode, Json<FileEntry>)> {
    let note = helm_core::NewNote {
        text: request.text,
        title: request.title,
    };
    let entry = state
        .helm
        .save_note(&caller.user, &channel_ref(&channel)?, note)
        .await?;
    Ok(created(entry.into()))
}

/// Uploads files: a multipart form (parts named `file`, each with a file
/// name) or a raw body named by `?name=`. They land in `?dir=` (default
/// `/workspace/uploads`) and are recorded as artifacts of kind `upload`.
/// A name that is taken is replaced, or with `?exists=refuse` refuses the
/// whole upload (409) before anything is written, or with
/// `?exists=keep_both` the upload takes the first free name (`plan-2.md`).
#[utoipa::path(post, path = "/api/channels/{channel}/files/upload", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), UploadQuery),
    request_body(content(
        (UploadForm = "multipart/form-data"),
        (Vec<u8> = "application/octet-stream"),
    ), description = "A multipart form, or the file's bytes with `?name=`"),
    responses((status = 201, description = "The files uploaded", body = [Upload]), WriteErrors))]
async fn upload_files(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<UploadQuery>,
    request: Request,
) -> ApiResult<(StatusCode, Json<Vec<Upload>>)> {
    // Names are read again strictly below (form decoding would quietly
    // replace bytes that are not UTF-8); only the flag is taken from here.
    let exists = query.exists;
    let channel = channel_ref(&channel)?;
    let files = state.helm.workspace_files(&caller.user, &channel).await?;
    let (dir, uploaded) = read_upload(request, state.config.max_upload_bytes).await?;
    let dir = dir
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or(UPLOADS_DIR)
        .trim_end_matches('/')
        .to_string();
    let path_of = |name: &str| format!("{}/{name}", if dir.is_empty() { "/" } else { &dir });
    if exists == IfExists::Refuse {
        for UploadedFile { name, .. } in &uploaded {
            if let Ok(taken) = files.stat(&path_of(name)).await {
                return Err(helm_core::Error::Conflict(format!(
                    "{} already exists; nothing was uploaded",
                    taken.path
                ))
                .into());
            }
        }
    }
    let mut done = Vec::with_capacity(uploaded.len());
    for UploadedFile { name, bytes } in uploaded {
        let path = path_of(&name);
        let entry = match exists {
            IfExists::Replace => files.write(&path, bytes).await?,
            IfExists::Refuse => files.create(&path, bytes).await?,
            IfExists::KeepBoth => files.create_numbered(&path, bytes).await?,
        };
        let artifact = state
            .helm
            .record_upload(&caller.user, &channel, &entry.path)
            .await?;
        done.push(Upload {
            file: entry.into(),
            artifact: artifact.into(),
        });
    }
    Ok(created(done))
}

/// Creates a directory and its missing parents (fine if it exists).
#[utoipa::path(post, path = "/api/channels/{channel}/files/mkdir", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = MkdirRequest,
    responses((status = 201, description = "The directory", body = FileEntry), WriteErrors))]
async fn make_dir(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<MkdirRequest>,
) -> ApiResult<(StatusCode, Json<FileEntry>)> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    Ok(created(files.mkdir(&request.path).await?.into()))
}

/// Moves (renames) a file or directory; refused if the target exists.
#[utoipa::path(post, path = "/api/channels/{channel}/files/move", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = MoveRequest,
    responses((status = 200, description = "Where it is now", body = FileEntry), WriteErrors))]
async fn move_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<MoveRequest>,
) -> ApiResult<Json<FileEntry>> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    Ok(Json(files.rename(&request.from, &request.to).await?.into()))
}

/// Deletes a file, a link, or a directory (an empty one, or with
/// `recursive=true` everything in it). The workspace itself stays.
#[utoipa::path(delete, path = "/api/channels/{channel}/files", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), DeleteFileQuery),
    responses((status = 204, description = "Deleted"), WriteErrors))]
async fn delete_file(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<DeleteFileQuery>,
) -> ApiResult<StatusCode> {
    let files = state
        .helm
        .workspace_files(&caller.user, &channel_ref(&channel)?)
        .await?;
    files
        .delete(&query.path, query.recursive.unwrap_or(false))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The files a channel's work produced, oldest first.
#[utoipa::path(get, path = "/api/channels/{channel}/artifacts", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id"), ArtifactQuery),
    responses((status = 200, description = "Artifacts, oldest first", body = [Artifact]), ReadErrors))]
async fn list_artifacts(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<ArtifactQuery>,
) -> ApiResult<Json<Vec<Artifact>>> {
    let thread = query.thread.map(path_id::<ThreadId>).transpose()?;
    let artifacts = state
        .helm
        .channel_artifacts(&caller.user, &channel_ref(&channel)?, thread)
        .await?;
    Ok(Json(artifacts.into_iter().map(Into::into).collect()))
}

/// Records the workspace's files that are not artifacts yet (made in
/// terminals or by commands), as made by `terminal`.
#[utoipa::path(post, path = "/api/channels/{channel}/artifacts/rescan", tag = "files",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The artifacts added", body = [Artifact]), WriteErrors))]
async fn rescan_artifacts(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<Vec<Artifact>>> {
    let channel: ChannelRef = channel_ref(&channel)?;
    let added = state.helm.rescan_artifacts(&caller.user, &channel).await?;
    Ok(Json(added.into_iter().map(Into::into).collect()))
}

/// A download response: the bytes as an attachment named `name`. Workspace
/// files are the agent's and anyone's uploads, so nothing is rendered on
/// the server's origin: `nosniff` and a sandboxing CSP come with it.
pub fn attachment(name: &str, bytes: Vec<u8>) -> Response {
    let mut response = (StatusCode::OK, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type_for(name)),
    );
    if let Ok(value) = HeaderValue::from_str(&content_disposition(name)) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    response
}

/// `attachment; filename="…"; filename*=UTF-8''…`: an ASCII fallback for
/// old clients and the exact name, percent-encoded, for the rest.
fn content_disposition(name: &str) -> String {
    let fallback: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

/// The media type of a file, by its extension (`application/octet-stream`
/// for anything not listed).
pub fn content_type_for(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" | "md" | "rs" | "py" | "sh" | "toml" | "yaml" | "yml" | "ini" | "cfg" => {
            "text/plain; charset=utf-8"
        }
        "csv" => "text/csv; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" | "tgz" => "application/gzip",
        "tar" => "application/x-tar",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        _ => "application/octet-stream",
    }
}

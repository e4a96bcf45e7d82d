//! Memory: a channel's records (decisions, facts, preferences, artifact
//! references, session summaries), recall over them and the channel's
//! history, history imports and summaries on request. A private channel's
//! memory reaches only those who may see the channel.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use futures_util::StreamExt;
use helm_core::MemoryNote;
use helm_core::memory::recall::{MAX_LIMIT, RecallQuery as CoreRecall};
use helm_core::model::{ChannelRef, MemoryId, MemoryKind, MemoryScope, ThreadId};
use helm_core::store::MemoryFilter;

use super::{ReadErrors, WriteErrors, before_id, channel_ref, created, page_size, path_id};
use crate::api::{
    EditMemoryRequest, ImportReport, MemoryItem, MemoryQuery, NewMemoryRequest, RecallHit,
    RecallQuery, WrittenSummary,
};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_memory, add_memory))
        .routes(handlers!(get_memory, edit_memory))
        .routes(handlers!(forget_memory))
        .routes(handlers!(restore_memory))
        .routes(handlers!(pin_memory))
        .routes(handlers!(unpin_memory))
        .routes(handlers!(recall))
        .routes(handlers!(import_history))
        .routes(handlers!(summarize_thread))
}

/// A channel's memory records, pinned first, then newest first: current
/// ones, or all with `all=true`. A page at a time: a full page may have
/// more after it, asked for with `before` set to its last record's id; a
/// shorter page is the last. A `before` that is not a record of this
/// channel is invalid (422).
#[utoipa::path(get, path = "/api/channels/{channel}/memory", tag = "memory",
    params(("channel" = String, Path, description = "The channel's name or id"), MemoryQuery),
    responses((status = 200, description = "Records, pinned first, then newest first", body = [MemoryItem]), ReadErrors))]
async fn list_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<MemoryQuery>,
) -> ApiResult<Json<Vec<MemoryItem>>> {
    let filter = MemoryFilter {
        kind: query
            .kind
            .as_deref()
            .map(str::parse::<MemoryKind>)
            .transpose()?,
        thread: query.thread.map(path_id::<ThreadId>).transpose()?,
        include_inactive: query.all.unwrap_or(false),
        limit: page_size(query.limit, 100, 500)?,
        before: query.before.map(before_id::<MemoryId>).transpose()?,
    };
    let items = state
        .helm
        .channel_memory(&caller.user, &channel_ref(&channel)?, filter)
        .await?;
    Ok(Json(items.into_iter().map(Into::into).collect()))
}

/// Adds a record by hand.
#[utoipa::path(post, path = "/api/channels/{channel}/memory", tag = "memory",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = NewMemoryRequest,
    responses((status = 201, description = "The record", body = MemoryItem), WriteErrors))]
async fn add_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<NewMemoryRequest>,
) -> ApiResult<(StatusCode, Json<MemoryItem>)> {
    let note = MemoryNote {
        kind: request.kind.parse()?,
        content: request.content,
        thread: request
            .thread_id
            .map(path_id::<ThreadId>)
            .transpose()
            .map_err(|_| helm_core::Error::invalid("thread id", "it must be a positive number"))?,
        scope: request
            .scope
            .as_deref()
            .map(str::parse::<MemoryScope>)
            .transpose()?
            .unwrap_or(MemoryScope::Channel),
    };
    let item = state
        .helm
        .remember(&caller.user, &channel_ref(&channel)?, note)
        .await?;
    Ok(created(item.into()))
}

/// One record, by id: for a view that names a record beyond the pages it
/// loaded (a recall hit). A record of a channel the caller may not see is
/// not found (404).
#[utoipa::path(get, path = "/api/memory/{id}", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    responses((status = 200, description = "The record", body = MemoryItem), ReadErrors))]
async fn get_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<MemoryItem>> {
    let item = state
        .helm
        .visible_memory(&caller.user, path_id(id)?)
        .await?;
    Ok(Json(item.into()))
}

/// Edits a record: a new record (the editor's) replaces it, and the old
/// one is kept as superseded (linked to the new one). Its author and the
/// channel's managers edit it; anyone else is forbidden (403).
#[utoipa::path(patch, path = "/api/memory/{id}", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    request_body = EditMemoryRequest,
    responses((status = 200, description = "The new record", body = MemoryItem), WriteErrors))]
async fn edit_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<EditMemoryRequest>,
) -> ApiResult<Json<MemoryItem>> {
    let id: MemoryId = path_id(id)?;
    let item = state
        .helm
        .edit_memory(&caller.user, id, &request.content)
        .await?;
    Ok(Json(item.into()))
}

/// Forgets a record: it is kept for provenance, saying who forgot it and
/// when, but never recalled until restored. Its author and the channel's
/// managers (the Captain, admins, its creator and owners) forget it; anyone
/// else is forbidden (403).
#[utoipa::path(post, path = "/api/memory/{id}/forget", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    responses((status = 200, description = "The record", body = MemoryItem), WriteErrors))]
async fn forget_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<MemoryItem>> {
    let item = state.helm.forget_memory(&caller.user, path_id(id)?).await?;
    Ok(Json(item.into()))
}

/// Restores a forgotten record: it is current (and recalled) again,
/// unpinned. Whoever may forget it may restore it; a record that is not
/// forgotten is a conflict (409).
#[utoipa::path(post, path = "/api/memory/{id}/restore", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    responses((status = 200, description = "The record", body = MemoryItem), WriteErrors))]
async fn restore_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<MemoryItem>> {
    let item = state
        .helm
        .restore_memory(&caller.user, path_id(id)?)
        .await?;
    Ok(Json(item.into()))
}

/// Pins a current record: it is always offered to the agent. Its author
/// and the channel's managers pin it; anyone else is forbidden (403).
#[utoipa::path(post, path = "/api/memory/{id}/pin", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    responses((status = 200, description = "The record", body = MemoryItem), WriteErrors))]
async fn pin_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<MemoryItem>> {
    let item = state
        .helm
        .pin_memory(&caller.user, path_id(id)?, true)
        .await?;
    Ok(Json(item.into()))
}

/// Unpins a record: its author and the channel's managers; anyone else is
/// forbidden (403).
#[utoipa::path(post, path = "/api/memory/{id}/unpin", tag = "memory",
    params(("id" = i64, Path, description = "The record's id")),
    responses((status = 200, description = "The record", body = MemoryItem), WriteErrors))]
async fn unpin_memory(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<MemoryItem>> {
    let item = state
        .helm
        .pin_memory(&caller.user, path_id(id)?, false)
        .await?;
    Ok(Json(item.into()))
}

/// Recalls from the channel's memory and history (and records other
/// channels the caller may see shared with the workspace), best first,
/// with provenance.
#[utoipa::path(get, path = "/api/channels/{channel}/recall", tag = "memory",
    params(("channel" = String, Path, description = "The channel's name or id"), RecallQuery),
    responses((status = 200, description = "Hits, best first", body = [RecallHit]), ReadErrors))]
async fn recall(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<RecallQuery>,
) -> ApiResult<Json<Vec<RecallHit>>> {
    if query.q.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "ask something: q must not be empty",
        ));
    }
    let mut request = CoreRecall::new(query.q);
    request.limit = page_size(query.limit, 10, MAX_LIMIT)?;
    request.include_superseded = query.superseded.unwrap_or(false);
    let hits = state
        .helm
        .recall_as(&caller.user, &channel_ref(&channel)?, request)
        .await?;
    Ok(Json(hits.into_iter().map(Into::into).collect()))
}

/// Imports a history (JSON Lines: `thread`, `message` and `memory` lines)
/// into the channel: checked whole, written in one transaction; a bad file
/// is refused with every bad line's number. The channel's managers import.
#[utoipa::path(post, path = "/api/channels/{channel}/import", tag = "memory",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body(content = String, content_type = "text/plain",
                 description = "The history, one JSON object a line (any content type is read)"),
    responses((status = 201, description = "What was written", body = ImportReport), WriteErrors))]
async fn import_history(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    request: Request,
) -> ApiResult<(StatusCode, Json<ImportReport>)> {
    let channel: ChannelRef = channel_ref(&channel)?;
    // Checked before reading the body, so a refused import costs nothing.
    state.helm.visible_channel(&caller.user, &channel).await?;
    let limit = state.config.max_import_bytes;
    let mut stream = request.into_body().into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::bad_body(format!("the body broke off: {e}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(ApiError::too_large(format!(
                "the history is larger than this server imports at once ({limit} bytes); split it"
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    let report = state
        .helm
        .import_history(&caller.user, &channel, std::io::Cursor::new(bytes))
        .await?;
    Ok(created(report.into()))
}

/// Writes the thread's summary now, with the model that serves the thread
/// (502 or 503 with the provider's message when there is none or it fails).
#[utoipa::path(post, path = "/api/threads/{id}/summary", tag = "memory",
    params(("id" = i64, Path, description = "The thread's id")),
    responses((status = 201, description = "The summary", body = WrittenSummary), WriteErrors,
        (status = 502, description = "The model failed or none is configured", body = crate::error::ErrorBody)))]
async fn summarize_thread(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<(StatusCode, Json<WrittenSummary>)> {
    let written = state
        .helm
        .summarize_thread(&caller.user, path_id(id)?)
        .await?;
    Ok(created(written.into()))
}

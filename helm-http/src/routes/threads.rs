//! Threads (sessions): list, show, rename, change status by hand, stop their
//! work, run a failed turn again.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use helm_core::model::{ChannelRef, ThreadId, ThreadStatus};

use super::{ReadErrors, WriteErrors, channel_ref, page_size, path_id};
use crate::api::{
    LimitQuery, RenameThreadRequest, Stopped, Thread, ThreadDetail, ThreadStatusRequest, Turn,
};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_threads))
        .routes(handlers!(show_thread, rename_thread))
        .routes(handlers!(set_status))
        .routes(handlers!(stop))
        .routes(handlers!(retry))
}

/// Runs the thread's failed (or interrupted) last turn again: Helm notes in
/// the thread who asked, and the same agent answers anew with the model
/// chosen now. A conflict when the last turn did not fail or the thread
/// went on after it.
#[utoipa::path(post, path = "/api/threads/{id}/retry", tag = "threads",
    params(("id" = i64, Path, description = "The thread's id")),
    responses((status = 201, description = "The new turn, queued", body = Turn), WriteErrors))]
async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<(axum::http::StatusCode, Json<Turn>)> {
    let turn = state.helm.retry_thread(&caller.user, path_id(id)?).await?;
    Ok(super::created(turn.into()))
}

/// A channel's threads, most recently active first.
#[utoipa::path(get, path = "/api/channels/{channel}/threads", tag = "threads",
    params(("channel" = String, Path, description = "The channel's name or id"), LimitQuery),
    responses((status = 200, description = "Threads", body = [Thread]), ReadErrors))]
async fn list_threads(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<LimitQuery>,
) -> ApiResult<Json<Vec<Thread>>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let threads = state
        .helm
        .threads(
            &ChannelRef::Id(record.channel.id),
            page_size(query.limit, 50, 500)?,
        )
        .await?;
    Ok(Json(threads.into_iter().map(Into::into).collect()))
}

/// A thread and its turns.
#[utoipa::path(get, path = "/api/threads/{id}", tag = "threads",
    params(("id" = i64, Path, description = "The thread's id")),
    responses((status = 200, description = "The thread", body = ThreadDetail), ReadErrors))]
async fn show_thread(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<ThreadDetail>> {
    let id: ThreadId = path_id(id)?;
    let (thread, _) = state.helm.visible_thread(&caller.user, id).await?;
    let turns = state.helm.thread_turns(id).await?;
    Ok(Json(ThreadDetail {
        thread: thread.into(),
        turns: turns.into_iter().map(Into::into).collect(),
    }))
}

/// Renames a thread: anyone who sees it and may post in its channel. The
/// title is trimmed and must be one line of 1 to 200 characters; an
/// archived channel refuses (409). Everyone watching hears `thread.updated`.
#[utoipa::path(patch, path = "/api/threads/{id}", tag = "threads",
    params(("id" = i64, Path, description = "The thread's id")),
    request_body = RenameThreadRequest,
    responses((status = 200, description = "The thread as it is now", body = Thread), WriteErrors))]
async fn rename_thread(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<RenameThreadRequest>,
) -> ApiResult<Json<Thread>> {
    let thread = state
        .helm
        .rename_thread(&caller.user, path_id(id)?, &request.title)
        .await?;
    Ok(Json(thread.into()))
}

/// Resolves, reopens (`open`) or archives a thread.
#[utoipa::path(put, path = "/api/threads/{id}/status", tag = "threads",
    params(("id" = i64, Path, description = "The thread's id")),
    request_body = ThreadStatusRequest,
    responses((status = 200, description = "The thread as it is now", body = Thread), WriteErrors))]
async fn set_status(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<ThreadStatusRequest>,
) -> ApiResult<Json<Thread>> {
    let id: ThreadId = path_id(id)?;
    let status: ThreadStatus = request.status.parse()?;
    state.helm.visible_thread(&caller.user, id).await?;
    let thread = state
        .helm
        .set_thread_status(&caller.user, id, status)
        .await?;
    Ok(Json(thread.into()))
}

/// Stops a thread's work: its running turn ends `stopped`, its queued turns
/// are withdrawn.
#[utoipa::path(post, path = "/api/threads/{id}/stop", tag = "threads",
    params(("id" = i64, Path, description = "The thread's id")),
    responses((status = 200, description = "The turns that ended", body = Stopped), WriteErrors))]
async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<Stopped>> {
    let id: ThreadId = path_id(id)?;
    state.helm.visible_thread(&caller.user, id).await?;
    let turns = state.helm.stop_thread(&caller.user, id).await?;
    Ok(Json(Stopped {
        turns: turns.into_iter().map(|t| t.0).collect(),
    }))
}

//! Threads (sessions): list, show, rename, change status by hand, stop their
//! work, run a failed turn again.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::model::{ChannelRef, ThreadId, ThreadStatus};
use helm_core::store::{ThreadCursor, ThreadPage};

use super::{ReadErrors, WriteErrors, channel_ref, page_size, path_id};
use crate::api::{
    RenameThreadRequest, Stopped, Thread, ThreadDetail, ThreadListQuery, ThreadStatusRequest, Turn,
};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
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

/// A channel's threads, most recently active first (`updated_at`, then id,
/// both descending). Page back with the last thread's `updated_at` and id
/// as `before_updated_at` and `before_id`: a thread updated meanwhile moves
/// to the head (its `thread.updated` event says so) and is neither repeated
/// nor makes another skip. `archived` filters; `q` searches instead: titles,
/// summaries and message text, best first, each with where it `matched`;
/// `ids` reads the threads named instead.
#[utoipa::path(get, path = "/api/channels/{channel}/threads", tag = "threads",
    params(("channel" = String, Path, description = "The channel's name or id"), ThreadListQuery),
    responses((status = 200, description = "Threads", body = [Thread]), ReadErrors))]
async fn list_threads(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<ThreadListQuery>,
) -> ApiResult<Json<Vec<Thread>>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let channel = ChannelRef::Id(record.channel.id);
    if let Some(ids) = &query.ids {
        if query.q.is_some() || query.before_id.is_some() || query.before_updated_at.is_some() {
            return Err(bad_query(
                "ids names the threads wanted: leave out q, before_updated_at and before_id",
            ));
        }
        let threads = state
            .helm
            .threads_among(&channel, &thread_ids(ids)?)
            .await?;
        return Ok(Json(threads.into_iter().map(Into::into).collect()));
    }
    let limit = page_size(query.limit, 50, 500)?;
    let before = match (query.before_updated_at, query.before_id) {
        (None, None) => None,
        (Some(updated_at), Some(id)) => Some(ThreadCursor {
            updated_at,
            id: path_id(id)?,
        }),
        _ => {
            return Err(bad_query(
                "before_updated_at and before_id go together: give both, from the last thread listed",
            ));
        }
    };
    if let Some(q) = query.q {
        if before.is_some() {
            return Err(bad_query(
                "a search answers with one ranked page: leave out before_updated_at and before_id",
            ));
        }
        let hits = state
            .helm
            .search_threads(&channel, &q, query.archived, limit)
            .await?;
        return Ok(Json(hits.into_iter().map(Into::into).collect()));
    }
    let threads = state
        .helm
        .thread_page(
            &channel,
            ThreadPage {
                before,
                archived: query.archived,
                titled: Vec::new(),
                limit,
            },
        )
        .await?;
    Ok(Json(threads.into_iter().map(Into::into).collect()))
}

/// The most threads one `ids` list may name.
const MAX_IDS: usize = 100;

/// `12,40,41` as thread ids.
fn thread_ids(list: &str) -> ApiResult<Vec<ThreadId>> {
    let ids = list
        .split(',')
        .map(|part| {
            part.trim().parse::<ThreadId>().map_err(|_| {
                bad_query(&format!(
                    "ids is a comma-separated list of thread ids, such as 12,40; {part:?} is not one"
                ))
            })
        })
        .collect::<ApiResult<Vec<_>>>()?;
    if ids.len() > MAX_IDS {
        return Err(bad_query(&format!(
            "ids names {} threads; ask for at most {MAX_IDS} at a time",
            ids.len()
        )));
    }
    Ok(ids)
}

fn bad_query(message: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "bad_query", message)
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

//! Messages: post (which may wake the agent) and read in pages.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::model::{ChannelRef, MessageId, ThreadId};

use super::{ReadErrors, WriteErrors, channel_ref, created, page_size, path_id};
use crate::api::{MessagePage, PageQuery, PostRequest, PostedMessage, ThreadPostRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(channel_messages, post_in_channel))
        .routes(handlers!(thread_messages, post_in_thread))
}

fn cursor(after: Option<i64>) -> ApiResult<Option<MessageId>> {
    match after {
        None | Some(0) => Ok(None),
        Some(n) if n > 0 => Ok(Some(MessageId(n))),
        Some(_) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "after must be a message id (a positive number)",
        )),
    }
}

fn page(items: Vec<helm_core::model::Message>, limit: usize) -> MessagePage {
    let next_after = (items.len() == limit)
        .then(|| items.last().map(|m| m.id.0))
        .flatten();
    MessagePage {
        items: items.into_iter().map(Into::into).collect(),
        next_after,
        next_before: None,
    }
}

fn page_back(items: Vec<helm_core::model::Message>, limit: usize) -> MessagePage {
    let next_before = (items.len() == limit)
        .then(|| items.first().map(|m| m.id.0))
        .flatten();
    MessagePage {
        items: items.into_iter().map(Into::into).collect(),
        next_after: None,
        next_before,
    }
}

/// Which way a page runs: forwards after a message, or backwards before one
/// (`None`: from the newest).
enum Direction {
    After(Option<MessageId>),
    Before(Option<MessageId>),
}

fn direction(query: &PageQuery) -> ApiResult<Direction> {
    let backwards = query.before.is_some() || query.newest;
    if backwards && query.after.is_some() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "give after, or before (or newest), not both",
        ));
    }
    if !backwards {
        return Ok(Direction::After(cursor(query.after)?));
    }
    match query.before {
        None => Ok(Direction::Before(None)),
        Some(n) if n > 0 => Ok(Direction::Before(Some(MessageId(n)))),
        Some(_) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_query",
            "before must be a message id (a positive number)",
        )),
    }
}

/// One page of a channel's (or a thread's) messages either way.
async fn read_page(
    state: &AppState,
    caller: &Caller,
    channel: &ChannelRef,
    thread: Option<ThreadId>,
    query: &PageQuery,
) -> ApiResult<MessagePage> {
    let limit = page_size(query.limit, 100, 500)?;
    Ok(match direction(query)? {
        Direction::After(after) => page(
            state
                .helm
                .messages_page(&caller.user, channel, thread, after, limit)
                .await?,
            limit,
        ),
        Direction::Before(before) => page_back(
            state
                .helm
                .messages_before(&caller.user, channel, thread, before, limit)
                .await?,
            limit,
        ),
    })
}

/// A channel's messages (every thread and announcement), oldest first:
/// after the cursor, or (with `before` or `newest`) the page just before it.
#[utoipa::path(get, path = "/api/channels/{channel}/messages", tag = "messages",
    params(("channel" = String, Path, description = "The channel's name or id"), PageQuery),
    responses((status = 200, description = "A page of messages", body = MessagePage), ReadErrors))]
async fn channel_messages(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<PageQuery>,
) -> ApiResult<Json<MessagePage>> {
    let channel = channel_ref(&channel)?;
    Ok(Json(
        read_page(&state, &caller, &channel, None, &query).await?,
    ))
}

/// Posts a message as the caller: without `thread_id` it starts a thread
/// (a session); mentioning the agent wakes it.
#[utoipa::path(post, path = "/api/channels/{channel}/messages", tag = "messages",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = PostRequest,
    responses((status = 201, description = "What posting did", body = PostedMessage), WriteErrors))]
async fn post_in_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<PostRequest>,
) -> ApiResult<(StatusCode, Json<PostedMessage>)> {
    let thread = request.thread_id.map(path_id::<ThreadId>).transpose()?;
    let posted = state
        .helm
        .post_message(&caller.user, &channel_ref(&channel)?, &request.text, thread)
        .await?;
    Ok(created(posted.into()))
}

/// A thread's messages in server order: after the cursor, or (with
/// `before` or `newest`) the page just before it.
#[utoipa::path(get, path = "/api/threads/{id}/messages", tag = "messages",
    params(("id" = i64, Path, description = "The thread's id"), PageQuery),
    responses((status = 200, description = "A page of messages", body = MessagePage), ReadErrors))]
async fn thread_messages(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    QueryParams(query): QueryParams<PageQuery>,
) -> ApiResult<Json<MessagePage>> {
    let id: ThreadId = path_id(id)?;
    let (thread, _) = state.helm.visible_thread(&caller.user, id).await?;
    let channel = ChannelRef::Id(thread.channel_id);
    Ok(Json(
        read_page(&state, &caller, &channel, Some(id), &query).await?,
    ))
}

/// Posts in a thread.
#[utoipa::path(post, path = "/api/threads/{id}/messages", tag = "messages",
    params(("id" = i64, Path, description = "The thread's id")),
    request_body = ThreadPostRequest,
    responses((status = 201, description = "What posting did", body = PostedMessage), WriteErrors))]
async fn post_in_thread(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<ThreadPostRequest>,
) -> ApiResult<(StatusCode, Json<PostedMessage>)> {
    let id: ThreadId = path_id(id)?;
    let (thread, _) = state.helm.visible_thread(&caller.user, id).await?;
    let posted = state
        .helm
        .post_message(
            &caller.user,
            &ChannelRef::Id(thread.channel_id),
            &request.text,
            Some(id),
        )
        .await?;
    Ok(created(posted.into()))
}

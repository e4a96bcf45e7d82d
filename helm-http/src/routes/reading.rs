//! Reading a channel as a person: unread counts, read markers and the
//! channel feed, so a client opens each channel where its person left it.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::model::MessageId;

use super::{ReadErrors, WriteErrors, channel_ref, page_size, path_id};
use crate::api::{ChannelUnread, FeedPage, FeedQuery, ReadMarker, ReadRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(unread))
        .routes(handlers!(mark_read))
        .routes(handlers!(feed))
}

/// What the caller has not read, per channel they may see: messages by
/// others since their read marker, and how many of those mention them.
#[utoipa::path(get, path = "/api/unread", tag = "channels",
    responses((status = 200, description = "Unread counts by channel", body = [ChannelUnread]),
        ReadErrors))]
async fn unread(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<Vec<ChannelUnread>>> {
    let counts = state.helm.unread(&caller.user).await?;
    Ok(Json(counts.into_iter().map(Into::into).collect()))
}

/// Marks the channel read up to a message of it. Markers only move
/// forward; each move is a `channel.read` event only the caller receives,
/// so their other tabs and devices clear the count too.
#[utoipa::path(put, path = "/api/channels/{channel}/read", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = ReadRequest,
    responses((status = 200, description = "The marker as it now is", body = ReadMarker),
        WriteErrors))]
async fn mark_read(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<ReadRequest>,
) -> ApiResult<Json<ReadMarker>> {
    if request.message_id <= 0 {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "message_id must be a message id (a positive number)",
        ));
    }
    let message: MessageId = path_id(request.message_id)?;
    let marker = state
        .helm
        .mark_read(&caller.user, &channel_ref(&channel)?, message)
        .await?;
    Ok(Json(marker.into()))
}

/// The channel's feed, newest page first: each thread's first message with
/// the thread, its reply count and its newest reply, and the announcements
/// made outside threads (such as the ready announcement). Entries in a
/// page are oldest first; `next_before` pages back.
#[utoipa::path(get, path = "/api/channels/{channel}/feed", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"), FeedQuery),
    responses((status = 200, description = "A page of the feed", body = FeedPage), ReadErrors))]
async fn feed(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<FeedQuery>,
) -> ApiResult<Json<FeedPage>> {
    let limit = page_size(query.limit, 50, 200)?;
    let before = match query.before {
        None => None,
        Some(n) if n > 0 => Some(MessageId(n)),
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                "before must be a message id (a positive number)",
            ));
        }
    };
    let items = state
        .helm
        .feed(&caller.user, &channel_ref(&channel)?, before, limit)
        .await?;
    let next_before = (items.len() == limit)
        .then(|| items.first().map(|i| i.message.id.0))
        .flatten();
    Ok(Json(FeedPage {
        items: items.into_iter().map(Into::into).collect(),
        next_before,
    }))
}

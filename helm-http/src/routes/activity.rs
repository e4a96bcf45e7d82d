//! Activity: the tool journal of a channel, and what happened to the
//! channel itself (its lifecycle, from the durable event log).

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::model::{ChannelRef, ThreadId, ToolActionId};

use super::{ReadErrors, before_id, channel_ref, page_size, path_id};
use crate::api::{ActivityQuery, Event, LifecycleQuery, ToolAction};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(activity))
        .routes(handlers!(lifecycle))
}

/// What the channel's agent ran and changed: the newest actions, newest
/// last. A page at a time: a full page may have older actions before it,
/// asked for with `before` set to its first (oldest) action's id; a
/// shorter page holds the oldest.
#[utoipa::path(get, path = "/api/channels/{channel}/activity", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"), ActivityQuery),
    responses((status = 200, description = "Tool actions, newest last", body = [ToolAction]), ReadErrors))]
async fn activity(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<ActivityQuery>,
) -> ApiResult<Json<Vec<ToolAction>>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let thread = query.thread.map(path_id::<ThreadId>).transpose()?;
    let (_, actions) = state
        .helm
        .activity_before(
            &ChannelRef::Id(record.channel.id),
            thread,
            query.before.map(before_id::<ToolActionId>).transpose()?,
            page_size(query.limit, 100, 500)?,
        )
        .await?;
    Ok(Json(actions.into_iter().map(Into::into).collect()))
}

/// What happened to the channel itself, newest first: made, renamed, its
/// purpose or model changed, people joining and leaving, archived and
/// restored, history imported, and turns that failed or were stopped. The
/// same events the WebSocket sends live, kept, so a page opened later tells
/// the same story.
#[utoipa::path(get, path = "/api/channels/{channel}/lifecycle", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"), LifecycleQuery),
    responses((status = 200, description = "Events, newest first", body = [Event]), ReadErrors))]
async fn lifecycle(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<LifecycleQuery>,
) -> ApiResult<Json<Vec<Event>>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let before = match query.before {
        Some(seq @ 1..) => Some(seq as u64),
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_query",
                "before must be an event's seq (1 or more)",
            ));
        }
        None => None,
    };
    let (_, events) = state
        .helm
        .channel_lifecycle(
            &ChannelRef::Id(record.channel.id),
            before,
            page_size(query.limit, 100, 500)?,
        )
        .await?;
    Ok(Json(events.iter().map(Event::from_core).collect()))
}

//! Activity: the tool journal of a channel.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use helm_core::model::{ChannelRef, ThreadId};

use super::{ReadErrors, channel_ref, page_size, path_id};
use crate::api::{ActivityQuery, ToolAction};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new().routes(handlers!(activity))
}

/// What the channel's agent ran and changed, newest last.
#[utoipa::path(get, path = "/api/channels/{channel}/activity", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"), ActivityQuery),
    responses((status = 200, description = "Tool actions", body = [ToolAction]), ReadErrors))]
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
        .activity(
            &ChannelRef::Id(record.channel.id),
            thread,
            page_size(query.limit, 100, 500)?,
        )
        .await?;
    Ok(Json(actions.into_iter().map(Into::into).collect()))
}

//! Channel membership: who belongs to a channel (and so may see it, when it
//! is private).

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::model::{MemberRole, UserId};

use super::{ReadErrors, WriteErrors, channel_ref, created, path_id};
use crate::api::{Member, NewMemberRequest};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_members, add_member))
        .routes(handlers!(remove_member))
}

/// A channel's members.
#[utoipa::path(get, path = "/api/channels/{channel}/members", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "Members, oldest first", body = [Member]), ReadErrors))]
async fn list_members(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<Vec<Member>>> {
    let members = state
        .helm
        .channel_members(&caller.user, &channel_ref(&channel)?)
        .await?;
    Ok(Json(members.into_iter().map(Into::into).collect()))
}

/// Adds a person to a channel (its managers).
#[utoipa::path(post, path = "/api/channels/{channel}/members", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = NewMemberRequest,
    responses((status = 201, description = "The new member", body = Member), WriteErrors))]
async fn add_member(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<NewMemberRequest>,
) -> ApiResult<(StatusCode, Json<Member>)> {
    let role = request
        .role
        .as_deref()
        .unwrap_or("member")
        .parse::<MemberRole>()?;
    let user: UserId = path_id(request.user_id)
        .map_err(|_| helm_core::Error::invalid("user id", "it must be a positive number"))?;
    let member = state
        .helm
        .add_channel_member(&caller.user, &channel_ref(&channel)?, user, role)
        .await?;
    Ok(created(member.into()))
}

/// Removes a person from a channel (its managers; anyone may leave).
#[utoipa::path(delete, path = "/api/channels/{channel}/members/{user_id}", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"),
           ("user_id" = i64, Path, description = "The person's id")),
    responses((status = 204, description = "Removed"), WriteErrors))]
async fn remove_member(
    State(state): State<AppState>,
    caller: Caller,
    PathParams((channel, user_id)): PathParams<(String, i64)>,
) -> ApiResult<StatusCode> {
    let user: UserId = path_id(user_id)?;
    state
        .helm
        .remove_channel_member(&caller.user, &channel_ref(&channel)?, user)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

//! Channels: create (with a purpose), list, show, rename and edit, archive
//! (which stops its agent's work), restore and delete with confirmation.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::NewChannel;
use helm_core::model::{ChannelRef, Visibility};
use helm_core::store::{ChannelFilter, ChannelUpdate};

use super::{ReadErrors, WriteErrors, channel_ref, created};
use crate::api::{
    ChannelDetail, ChannelListQuery, ChannelRecord, ChannelUpdateRequest, DeleteQuery,
    NewChannelRequest,
};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_channels, create_channel))
        .routes(handlers!(show_channel, update_channel, delete_channel))
        .routes(handlers!(archive_channel))
        .routes(handlers!(restore_channel))
}

/// The channels the caller may see, by name.
#[utoipa::path(get, path = "/api/channels", tag = "channels", params(ChannelListQuery),
    responses((status = 200, description = "Channels with their agents", body = [ChannelRecord]), ReadErrors))]
async fn list_channels(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<ChannelListQuery>,
) -> ApiResult<Json<Vec<ChannelRecord>>> {
    let records = state
        .helm
        .visible_channels(
            &caller.user,
            ChannelFilter {
                include_archived: query.all,
            },
        )
        .await?;
    Ok(Json(records.into_iter().map(Into::into).collect()))
}

/// Creates a channel with its resident agent, workspace, memory and model
/// policy, atomically. The purpose is required.
#[utoipa::path(post, path = "/api/channels", tag = "channels", request_body = NewChannelRequest,
    responses((status = 201, description = "The channel and its agent", body = ChannelRecord), WriteErrors))]
async fn create_channel(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<NewChannelRequest>,
) -> ApiResult<(StatusCode, Json<ChannelRecord>)> {
    let visibility = match request.visibility.as_deref() {
        Some(v) => v.parse::<Visibility>()?,
        None => Visibility::Public,
    };
    let instructions = request.instructions.unwrap_or_default();
    if instructions.len() > helm_core::MAX_INSTRUCTIONS {
        return Err(helm_core::Error::invalid("instructions", "they are too long").into());
    }
    let record = state
        .helm
        .create_channel_with(
            &caller.user,
            NewChannel {
                name: request.name,
                purpose: request.purpose,
                visibility,
                instructions,
                computer: request.computer,
            },
        )
        .await?;
    Ok(created(record.into()))
}

/// A channel with its agent and the model serving it.
#[utoipa::path(get, path = "/api/channels/{channel}", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The channel", body = ChannelDetail), ReadErrors))]
async fn show_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<ChannelDetail>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let id = record.channel.id;
    let model = state.helm.resolve_model(&ChannelRef::Id(id), None).await?;
    let workspace_dir = caller.user.role.is_admin().then(|| {
        state
            .helm
            .data_root()
            .world(id)
            .workspace()
            .display()
            .to_string()
    });
    Ok(Json(ChannelDetail {
        channel: record.channel.into(),
        agent: record.agent.into(),
        profile: record.profile.into(),
        model: model.map(Into::into),
        workspace_dir,
    }))
}

/// Renames a channel or changes its purpose or its agent's instructions (its
/// managers). A new name must be free among live channels (409 if taken);
/// the agent keeps its handle. Everyone who sees the channel gets a
/// `channel.renamed` event (and `channel.updated` for other changes).
#[utoipa::path(patch, path = "/api/channels/{channel}", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = ChannelUpdateRequest,
    responses((status = 200, description = "The channel as it is now", body = ChannelRecord), WriteErrors))]
async fn update_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<ChannelUpdateRequest>,
) -> ApiResult<Json<ChannelRecord>> {
    let record = state
        .helm
        .update_channel(
            &caller.user,
            &channel_ref(&channel)?,
            ChannelUpdate {
                name: request.name,
                purpose: request.purpose,
                instructions: request.instructions,
            },
        )
        .await?;
    Ok(Json(record.into()))
}

/// Permanently deletes an archived channel and its agent world (Captain and
/// admins). `confirm` must name the channel; without it the answer is 409
/// with code `confirmation_required`.
#[utoipa::path(delete, path = "/api/channels/{channel}", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id"), DeleteQuery),
    responses((status = 204, description = "Deleted for good"), WriteErrors))]
async fn delete_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    QueryParams(query): QueryParams<DeleteQuery>,
) -> ApiResult<StatusCode> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    state
        .helm
        .delete_channel(
            &caller.user,
            &ChannelRef::Id(record.channel.id),
            query.confirm.as_deref().unwrap_or(""),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Archives a channel: its agent pauses and everything is kept. Work stops:
/// queued turns end `cancelled` with a note in their threads, the running
/// turn is cancelled before its next step with its running command killed
/// (the answer comes once it has), and no turn of the channel starts until
/// it is restored. Restoring does not replay cancelled turns.
#[utoipa::path(post, path = "/api/channels/{channel}/archive", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The archived channel", body = ChannelRecord), WriteErrors))]
async fn archive_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<ChannelRecord>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let record = state
        .helm
        .archive_channel(&caller.user, &ChannelRef::Id(record.channel.id))
        .await?;
    Ok(Json(record.into()))
}

/// Restores an archived channel with the same agent world.
#[utoipa::path(post, path = "/api/channels/{channel}/restore", tag = "channels",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The restored channel", body = ChannelRecord), WriteErrors))]
async fn restore_channel(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<ChannelRecord>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let record = state
        .helm
        .restore_channel(&caller.user, &ChannelRef::Id(record.channel.id))
        .await?;
    Ok(Json(record.into()))
}

//! Model policy at each level: the workspace default, a channel's override,
//! a session's (thread's) override. Changing it never touches an agent's
//! identity, memory, files or history, and never moves a turn already
//! accepted. A choice is checked when it is set (the answer's `check` says
//! whether the provider confirmed the model or it is unverified); every
//! change is a `model.changed` event.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use helm_core::model::{ChannelRef, HOME_CHANNEL, ModelChoice, ThreadId};
use helm_core::store::PolicyScope;

use super::{ReadErrors, WriteErrors, channel_ref, path_id};
use crate::api::{ModelChoiceRequest, ModelPolicy};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(workspace_model, set_workspace_model))
        .routes(handlers!(channel_model, set_channel_model))
        .routes(handlers!(session_model, set_session_model))
}

/// A request's choice; the check happens in core when it is set.
fn choice(request: ModelChoiceRequest) -> Option<ModelChoice> {
    request
        .provider
        .map(|provider| ModelChoice::new(provider, request.model))
}

async fn workspace_policy(state: &AppState) -> ApiResult<ModelPolicy> {
    let home = ChannelRef::Name(helm_core::model::ChannelName::parse(HOME_CHANNEL)?);
    let mut policy = state.helm.model_policy(&home, None).await?;
    policy.session = None;
    policy.channel = None;
    Ok(policy.into())
}

/// The workspace default and the configured fallback.
#[utoipa::path(get, path = "/api/model", tag = "models",
    responses((status = 200, description = "The workspace's model policy", body = ModelPolicy), ReadErrors))]
async fn workspace_model(
    State(state): State<AppState>,
    _caller: Caller,
) -> ApiResult<Json<ModelPolicy>> {
    Ok(Json(workspace_policy(&state).await?))
}

/// Sets (or with `provider: null` clears) the workspace default (Captain and
/// admins). An unknown provider is 404; a model the provider does not list,
/// or no model for a provider without a default, is 422.
#[utoipa::path(put, path = "/api/model", tag = "models", request_body = ModelChoiceRequest,
    responses((status = 200, description = "The workspace's model policy", body = ModelPolicy), WriteErrors))]
async fn set_workspace_model(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ModelChoiceRequest>,
) -> ApiResult<Json<ModelPolicy>> {
    let check = state
        .helm
        .set_model_policy(&caller.user, PolicyScope::Workspace, choice(request))
        .await?;
    let mut policy = workspace_policy(&state).await?;
    policy.check = check.map(Into::into);
    Ok(Json(policy))
}

/// The model policy that applies in a channel.
#[utoipa::path(get, path = "/api/channels/{channel}/model", tag = "models",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The channel's model policy", body = ModelPolicy), ReadErrors))]
async fn channel_model(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<ModelPolicy>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let policy = state
        .helm
        .model_policy(&ChannelRef::Id(record.channel.id), None)
        .await?;
    Ok(Json(policy.into()))
}

/// Sets (or clears) a channel's model (its managers). Its agent, files,
/// memory and history stay. The channel's choice again changes nothing:
/// no event, no activity entry, the policy without a `check`.
#[utoipa::path(put, path = "/api/channels/{channel}/model", tag = "models",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = ModelChoiceRequest,
    responses((status = 200, description = "The channel's model policy", body = ModelPolicy), WriteErrors))]
async fn set_channel_model(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<ModelChoiceRequest>,
) -> ApiResult<Json<ModelPolicy>> {
    let record = state
        .helm
        .visible_channel(&caller.user, &channel_ref(&channel)?)
        .await?;
    let id = record.channel.id;
    let check = state
        .helm
        .set_model_policy(&caller.user, PolicyScope::Channel(id), choice(request))
        .await?;
    let mut policy: ModelPolicy = state
        .helm
        .model_policy(&ChannelRef::Id(id), None)
        .await?
        .into();
    policy.check = check.map(Into::into);
    Ok(Json(policy))
}

/// The model policy that applies in a thread.
#[utoipa::path(get, path = "/api/threads/{id}/model", tag = "models",
    params(("id" = i64, Path, description = "The thread's id")),
    responses((status = 200, description = "The thread's model policy", body = ModelPolicy), ReadErrors))]
async fn session_model(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<ModelPolicy>> {
    let id: ThreadId = path_id(id)?;
    let (thread, _) = state.helm.visible_thread(&caller.user, id).await?;
    let policy = state
        .helm
        .model_policy(&ChannelRef::Id(thread.channel_id), Some(id))
        .await?;
    Ok(Json(policy.into()))
}

/// Sets (or clears) a thread's model, for that session only (the channel's
/// managers).
#[utoipa::path(put, path = "/api/threads/{id}/model", tag = "models",
    params(("id" = i64, Path, description = "The thread's id")),
    request_body = ModelChoiceRequest,
    responses((status = 200, description = "The thread's model policy", body = ModelPolicy), WriteErrors))]
async fn set_session_model(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<ModelChoiceRequest>,
) -> ApiResult<Json<ModelPolicy>> {
    let id: ThreadId = path_id(id)?;
    let (thread, record) = state.helm.visible_thread(&caller.user, id).await?;
    if !state
        .helm
        .manages_channel(&caller.user, &record.channel)
        .await?
    {
        return Err(helm_core::Error::Forbidden(format!(
            "only the Captain, an admin or an owner of {} sets its sessions' models",
            record.channel.name
        ))
        .into());
    }
    let check = state
        .helm
        .set_model_policy(&caller.user, PolicyScope::Session(id), choice(request))
        .await?;
    let mut policy: ModelPolicy = state
        .helm
        .model_policy(&ChannelRef::Id(thread.channel_id), Some(id))
        .await?
        .into();
    policy.check = check.map(Into::into);
    Ok(Json(policy))
}

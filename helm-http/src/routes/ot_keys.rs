//! Open Terminal keys, managed through the normal API by a channel's
//! managers: see whether the channel has one, make one, rotate it (the old
//! one stops working at once), revoke it. The secret is shown once.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::auth::{Issued, OtKey as CoreKey};
use helm_core::model::ChannelRef;

use super::{ReadErrors, WriteErrors, channel_ref, created};
use crate::api::{OtKeyIssued, OtKeyState};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::error::ErrorBody;
use crate::extract::PathParams;
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(get_key, create_key, revoke_key))
        .routes(handlers!(rotate_key))
}

/// Where Open Terminal clients reach a channel's computer.
fn endpoint(state: &AppState, channel: i64) -> String {
    format!("{}/api/channels/{channel}/ot", state.config.public_url())
}

fn issued(state: &AppState, issued: Issued<CoreKey>) -> OtKeyIssued {
    let url = endpoint(state, issued.record.channel_id.0);
    OtKeyIssued {
        key: issued.record.into(),
        secret: issued.secret,
        url,
    }
}

/// The channel's Open Terminal endpoint and its live key, if any (its
/// managers).
#[utoipa::path(get, path = "/api/channels/{channel}/ot-key", tag = "open-terminal",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 200, description = "The endpoint and key", body = OtKeyState),
        (status = 409, description = "#main, Skipper's host computer, has no Open Terminal endpoint", body = ErrorBody),
        ReadErrors))]
async fn get_key(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<Json<OtKeyState>> {
    let channel = channel_ref(&channel)?;
    let key = state.helm.ot_key(&caller.user, &channel).await?;
    let id = state
        .helm
        .visible_channel(&caller.user, &channel)
        .await?
        .channel
        .id
        .0;
    Ok(Json(OtKeyState {
        key: key.map(Into::into),
        url: endpoint(&state, id),
    }))
}

/// Makes the channel's Open Terminal key (409 if it has one: rotate it).
#[utoipa::path(post, path = "/api/channels/{channel}/ot-key", tag = "open-terminal",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 201, description = "The key and its secret, shown once", body = OtKeyIssued), WriteErrors))]
async fn create_key(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<(StatusCode, Json<OtKeyIssued>)> {
    let key = state
        .helm
        .issue_ot_key(&caller.user, &channel_ref(&channel)?, false)
        .await?;
    Ok(created(issued(&state, key)))
}

/// Replaces the channel's Open Terminal key: the old one stops working.
#[utoipa::path(post, path = "/api/channels/{channel}/ot-key/rotate", tag = "open-terminal",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 201, description = "The new key and its secret, shown once", body = OtKeyIssued), WriteErrors))]
async fn rotate_key(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<(StatusCode, Json<OtKeyIssued>)> {
    let key = state
        .helm
        .issue_ot_key(&caller.user, &channel_ref(&channel)?, true)
        .await?;
    // The old key's sockets end now.
    state.credential_ended();
    Ok(created(issued(&state, key)))
}

/// Revokes the channel's Open Terminal key.
#[utoipa::path(delete, path = "/api/channels/{channel}/ot-key", tag = "open-terminal",
    params(("channel" = String, Path, description = "The channel's name or id")),
    responses((status = 204, description = "Revoked"), WriteErrors))]
async fn revoke_key(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
) -> ApiResult<StatusCode> {
    let channel: ChannelRef = channel_ref(&channel)?;
    state.helm.revoke_ot_key(&caller.user, &channel).await?;
    state.credential_ended();
    Ok(StatusCode::NO_CONTENT)
}

//! API tokens: made, listed and revoked by their owner.

use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use super::{ReadErrors, WriteErrors, created};
use crate::api::{ApiToken, IssuedToken, NewTokenRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams};
use crate::state::AppState;
use helm_core::auth::Credential;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_tokens, create_token))
        .routes(handlers!(revoke_token))
}

/// The caller's API tokens (never their secrets).
#[utoipa::path(get, path = "/api/tokens", tag = "auth",
    responses((status = 200, description = "Tokens", body = [ApiToken]), ReadErrors))]
async fn list_tokens(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<Vec<ApiToken>>> {
    let tokens = state.helm.api_tokens(&caller.user).await?;
    Ok(Json(tokens.into_iter().map(Into::into).collect()))
}

/// The longest a token may be made to last, in days (ten years).
const MAX_DAYS: u32 = 3650;

/// Makes an API token acting as the caller. The secret is shown once.
#[utoipa::path(post, path = "/api/tokens", tag = "auth", request_body = NewTokenRequest,
    responses((status = 201, description = "The token and its secret", body = IssuedToken), WriteErrors))]
async fn create_token(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<NewTokenRequest>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let expires = match request.expires_in_days {
        None => None,
        Some(days @ 1..=MAX_DAYS) => Some(Duration::from_secs(u64::from(days) * 24 * 3600)),
        Some(days) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid",
                format!(
                    "expires_in_days is {days}: give 1 to {MAX_DAYS} days, or leave it out for a \
                     token that does not expire"
                ),
            ));
        }
    };
    // A token made with a token lives no longer than the one it was made
    // with: a short-lived token must not mint one that never expires.
    let expires = match caller.via {
        Credential::Token(parent) => {
            let tokens = state.helm.api_tokens(&caller.user).await?;
            let left = tokens
                .iter()
                .find(|t| t.id == parent)
                .and_then(|t| t.expires)
                .map(|at| {
                    // Whole seconds, one short: the new token's clock
                    // starts a moment after this one reads it.
                    let secs = at.as_second() - jiff::Timestamp::now().as_second() - 1;
                    Duration::from_secs(u64::try_from(secs.max(1)).unwrap_or(1))
                });
            match (expires, left) {
                (Some(asked), Some(left)) => Some(asked.min(left)),
                (None, left) => left,
                (asked, None) => asked,
            }
        }
        Credential::Session(_) => expires,
    };
    let issued = state
        .helm
        .create_api_token(&caller.user, &request.name, expires)
        .await?;
    Ok(created(IssuedToken {
        token: issued.record.into(),
        secret: issued.secret,
    }))
}

/// Revokes one of the caller's API tokens.
#[utoipa::path(delete, path = "/api/tokens/{id}", tag = "auth",
    params(("id" = i64, Path, description = "The token's id")),
    responses((status = 200, description = "The revoked token", body = ApiToken), WriteErrors))]
async fn revoke_token(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<ApiToken>> {
    let revoked = state.helm.revoke_api_token(&caller.user, id).await?;
    state.credential_ended();
    Ok(Json(revoked.into()))
}

//! People: the list, adding someone directly, invitations.

use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use helm_core::model::{Role, UserId};
use helm_core::{AccountRequest, PersonChange};

use super::session::ClientIp;
use super::{ReadErrors, WriteErrors, created, path_id};
use crate::api::{
    AcceptInviteRequest, CheckInviteRequest, Invite, IssuedInvite, NewInviteRequest,
    NewUserRequest, PasswordRequest, SessionInfo, User, UserChangeRequest, ValidInvite,
};
use crate::caller::{Caller, session_cookie};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_users, add_user))
        .routes(handlers!(change_user))
        .routes(handlers!(give_password))
        .routes(handlers!(list_invites, create_invite))
        .routes(handlers!(revoke_invite))
        .routes(handlers!(check_invite))
        .routes(handlers!(accept_invite))
}

/// Checks an invitation before joining with it, so the page it opens can
/// say at once that it was used, revoked or has expired: the role it gives
/// and when it lapses, or 401 saying why it cannot be used.
#[utoipa::path(post, path = "/api/invites/check", tag = "users", security(()),
    request_body = CheckInviteRequest,
    responses((status = 200, description = "It can be used", body = ValidInvite), WriteErrors))]
async fn check_invite(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    Body(request): Body<CheckInviteRequest>,
) -> ApiResult<Json<ValidInvite>> {
    // Counted with sign-in attempts: it says whether a code is live.
    state
        .limiter
        .attempt_from(&ip)
        .map_err(ApiError::rate_limited)?;
    let invite = state.helm.check_invite(&request.code).await?;
    Ok(Json(ValidInvite {
        role: invite.role.into(),
        expires: invite.expires,
    }))
}

fn role(raw: Option<&str>) -> ApiResult<Role> {
    Ok(raw.unwrap_or("member").parse::<Role>()?)
}

/// Everyone in the workspace.
#[utoipa::path(get, path = "/api/users", tag = "users",
    responses((status = 200, description = "People, oldest first", body = [User]), ReadErrors))]
async fn list_users(State(state): State<AppState>, _caller: Caller) -> ApiResult<Json<Vec<User>>> {
    let users = state.helm.users().await?;
    Ok(Json(users.into_iter().map(Into::into).collect()))
}

/// Adds a person directly (Captain and admins; admins only by the Captain).
/// People usually join by invitation instead.
#[utoipa::path(post, path = "/api/users", tag = "users", request_body = NewUserRequest,
    responses((status = 201, description = "The new person", body = User), WriteErrors))]
async fn add_user(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<NewUserRequest>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let role = role(request.role.as_deref())?;
    if let Some(password) = &request.password {
        helm_core::auth::password::validate(password)?;
    }
    let user = state
        .helm
        .add_user(&caller.user, &request.name, role)
        .await?;
    if let Some(password) = &request.password {
        state
            .helm
            .set_password(&caller.user, user.id, password)
            .await?;
    }
    Ok(created(user.into()))
}

/// Changes a person's role (`admin` or `member`: the Captain only) and/or
/// whether they are active (`false` deactivates: their sessions end and
/// their API tokens are refused at once; `true` reactivates). The Captain
/// and admins deactivate members, only the Captain admins; the Captain's
/// role and access never change (`409`), and nobody deactivates themselves
/// (`409`).
#[utoipa::path(patch, path = "/api/users/{id}", tag = "users",
    params(("id" = i64, Path, description = "The person's id")),
    request_body = UserChangeRequest,
    responses((status = 200, description = "The person as they are now", body = User), WriteErrors))]
async fn change_user(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<UserChangeRequest>,
) -> ApiResult<Json<User>> {
    let id: UserId = path_id(id)?;
    let role = request
        .role
        .as_deref()
        .map(str::parse::<Role>)
        .transpose()?;
    let user = state
        .helm
        .change_person(
            &caller.user,
            id,
            PersonChange {
                role,
                active: request.active,
            },
        )
        .await?;
    Ok(Json(user.into()))
}

/// Gives a first password to an account that has none (Captain and admins),
/// or sets one's own.
#[utoipa::path(put, path = "/api/users/{id}/password", tag = "users",
    params(("id" = i64, Path, description = "The person's id")),
    request_body = PasswordRequest,
    responses((status = 204, description = "Password set"), WriteErrors))]
async fn give_password(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<PasswordRequest>,
) -> ApiResult<StatusCode> {
    let id: UserId = path_id(id)?;
    state
        .helm
        .set_password(&caller.user, id, &request.password)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Every invitation, newest first (Captain and admins).
#[utoipa::path(get, path = "/api/invites", tag = "users",
    responses((status = 200, description = "Invitations", body = [Invite]), ReadErrors))]
async fn list_invites(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<Vec<Invite>>> {
    let invites = state.helm.invites(&caller.user).await?;
    Ok(Json(invites.into_iter().map(Into::into).collect()))
}

/// Invites a person. The code is shown once.
#[utoipa::path(post, path = "/api/invites", tag = "users", request_body = NewInviteRequest,
    responses((status = 201, description = "The invitation and its code", body = IssuedInvite), WriteErrors))]
async fn create_invite(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<NewInviteRequest>,
) -> ApiResult<(StatusCode, Json<IssuedInvite>)> {
    let role = role(request.role.as_deref())?;
    let hours = u64::from(request.expires_in_hours.unwrap_or(24 * 7));
    let ttl = Duration::from_secs(hours * 3600);
    let issued = state.helm.create_invite(&caller.user, role, ttl).await?;
    let url = Some(format!(
        "{}/join#{}",
        state.config.public_url(),
        issued.secret
    ));
    Ok(created(IssuedInvite {
        invite: issued.record.into(),
        code: issued.secret,
        url,
    }))
}

/// Revokes an unused invitation.
#[utoipa::path(delete, path = "/api/invites/{id}", tag = "users",
    params(("id" = i64, Path, description = "The invitation's id")),
    responses((status = 200, description = "The revoked invitation", body = Invite), WriteErrors))]
async fn revoke_invite(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
) -> ApiResult<Json<Invite>> {
    Ok(Json(
        state.helm.revoke_invite(&caller.user, id).await?.into(),
    ))
}

/// Accepts an invitation: joins with a name and password, signed in.
#[utoipa::path(post, path = "/api/invites/accept", tag = "users", security(()),
    request_body = AcceptInviteRequest,
    responses((status = 201, description = "The newcomer, signed in", body = SessionInfo), WriteErrors))]
async fn accept_invite(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    Body(request): Body<AcceptInviteRequest>,
) -> ApiResult<Response> {
    state
        .limiter
        .attempt_from(&ip)
        .map_err(ApiError::rate_limited)?;
    let user = state
        .helm
        .accept_invite(
            &request.code,
            AccountRequest {
                name: request.name,
                display_name: request.display_name,
                password: request.password,
            },
        )
        .await?;
    let ttl = state.config.session_ttl();
    let session = state.helm.start_session(&user, ttl).await?;
    let cookie = session_cookie(
        &session.secret,
        ttl.as_secs(),
        state.config.secure_cookies(),
    );
    let body = SessionInfo {
        user: user.into(),
        expires: session.record.expires,
    };
    Ok((
        StatusCode::CREATED,
        [(axum::http::header::SET_COOKIE, cookie)],
        Json(body),
    )
        .into_response())
}

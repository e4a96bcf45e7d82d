//! First-run setup, signing in and out, and who is signed in.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use helm_core::AccountRequest;
use helm_core::auth::Credential;
use helm_core::model::User;

use super::{ReadErrors, WriteErrors};
use crate::api::{
    LoginRequest, Me, OwnPasswordRequest, SessionInfo, SessionState, SetupRequest, SetupStatus,
};
use crate::caller::{Caller, clear_cookie, client_ip, same_origin, session_cookie};
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(setup_status, complete_setup))
        .routes(handlers!(login))
        .routes(handlers!(logout))
        .routes(handlers!(me))
        .routes(handlers!(session_state))
        .routes(handlers!(set_password))
}

/// The client address of a request, for rate limits.
pub struct ClientIp(pub String);

impl axum::extract::FromRequestParts<AppState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(client_ip(parts)))
    }
}

/// Refuses a browser request from another origin before anything is done
/// with its body (setup and sign-in have no session yet, but must not be
/// driven by other sites either).
fn check_browser_origin(headers: &HeaderMap, state: &AppState) -> ApiResult<()> {
    if headers.contains_key(axum::http::header::ORIGIN) && !same_origin(headers, state) {
        return Err(ApiError::bad_origin());
    }
    Ok(())
}

/// A response that opens a session for `user` and sets its cookie.
async fn signed_in(state: &AppState, user: User, status: StatusCode) -> ApiResult<Response> {
    let ttl = state.config.session_ttl();
    let session = state.helm.start_session(&user, ttl).await?;
    session_response(state, user, session, status)
}

fn session_response(
    state: &AppState,
    user: User,
    session: helm_core::auth::Issued<helm_core::auth::Session>,
    status: StatusCode,
) -> ApiResult<Response> {
    let cookie = session_cookie(
        &session.secret,
        state.config.session_ttl().as_secs(),
        state.config.secure_cookies(),
    );
    let body = SessionInfo {
        user: user.into(),
        expires: session.record.expires,
    };
    Ok((status, [(SET_COOKIE, cookie)], Json(body)).into_response())
}

/// Whether first-run setup is needed.
#[utoipa::path(get, path = "/api/setup", tag = "auth", security(()),
    responses((status = 200, description = "Setup status", body = SetupStatus)))]
async fn setup_status(State(state): State<AppState>) -> ApiResult<Json<SetupStatus>> {
    Ok(Json(SetupStatus {
        needed: state.helm.setup_needed().await?,
        workspace: state.helm.workspace().name.clone(),
    }))
}

/// Completes first-run setup: names the Captain and sets their password.
/// Works exactly once; signs the Captain in. Needs the server's one-time
/// `setup_code` (printed at start, kept in `<data>/setup-code`), so that no
/// web page a browser on the server's machine opens can complete it.
#[utoipa::path(post, path = "/api/setup", tag = "auth", security(()),
    request_body = SetupRequest,
    responses((status = 201, description = "The Captain, signed in; 403 `bad_setup_code` without the right setup code", body = SessionInfo), WriteErrors))]
async fn complete_setup(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Body(request): Body<SetupRequest>,
) -> ApiResult<Response> {
    check_browser_origin(&headers, &state)?;
    state
        .limiter
        .attempt_from(&ip)
        .map_err(ApiError::rate_limited)?;
    if !state.helm.setup_needed().await? {
        // Done already: the core answers with its conflict, code or not.
    } else if !request
        .setup_code
        .as_deref()
        .is_some_and(|given| crate::setup::matches(&state.setup_code, given))
    {
        return Err(ApiError::bad_setup_code());
    }
    let captain = state
        .helm
        .complete_setup(AccountRequest {
            name: request.name,
            display_name: request.display_name,
            password: request.password,
        })
        .await?;
    crate::setup::remove_code(state.helm.data_root().path());
    signed_in(&state, captain, StatusCode::CREATED).await
}

/// Signs in with a name and password; the session travels in the
/// `helm_session` cookie (HttpOnly, SameSite=Lax).
#[utoipa::path(post, path = "/api/auth/login", tag = "auth", security(()),
    request_body = LoginRequest,
    responses((status = 200, description = "Signed in", body = SessionInfo), WriteErrors))]
async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Body(request): Body<LoginRequest>,
) -> ApiResult<Response> {
    check_browser_origin(&headers, &state)?;
    state
        .limiter
        .attempt_from(&ip)
        .map_err(ApiError::rate_limited)?;
    state
        .limiter
        .account_allowed(&request.name, &ip)
        .map_err(ApiError::rate_limited)?;
    match state
        .helm
        .login(&request.name, &request.password, state.config.session_ttl())
        .await
    {
        Ok((user, session)) => session_response(&state, user, session, StatusCode::OK),
        Err(e) => {
            if matches!(e, helm_core::Error::Unauthenticated(_)) {
                state.limiter.account_failed(&request.name, &ip);
                tracing::warn!(ip = %ip, "failed sign-in");
            }
            Err(e.into())
        }
    }
}

/// Signs out: ends the session and clears its cookie.
#[utoipa::path(post, path = "/api/auth/logout", tag = "auth",
    responses((status = 204, description = "Signed out"), WriteErrors))]
async fn logout(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    if matches!(caller.via, Credential::Session(_)) {
        state.helm.logout(&caller.secret).await?;
        state.credential_ended();
    }
    Ok((
        StatusCode::NO_CONTENT,
        [(SET_COOKIE, clear_cookie(state.config.secure_cookies()))],
    )
        .into_response())
}

/// Who is signed in.
#[utoipa::path(get, path = "/api/auth/me", tag = "auth",
    responses((status = 200, description = "The caller", body = Me), ReadErrors))]
async fn me(caller: Caller) -> Json<Me> {
    Json(Me {
        via: match caller.via {
            Credential::Session(_) => "session",
            Credential::Token(_) => "token",
        }
        .to_string(),
        user: caller.user.into(),
    })
}

/// Whether anyone is signed in, and who: like `GET /api/auth/me`, but a
/// missing, expired or revoked credential is `{"user": null}`, not a 401,
/// so a page can ask before it knows (a browser logs every 401 as an error).
#[utoipa::path(get, path = "/api/auth/session", tag = "auth",
    responses((status = 200, description = "Who is signed in, if anyone", body = SessionState),
        ReadErrors))]
async fn session_state(caller: Result<Caller, ApiError>) -> ApiResult<Json<SessionState>> {
    match caller {
        Ok(caller) => Ok(Json(SessionState {
            user: Some(caller.user.into()),
        })),
        Err(e) if e.status() == StatusCode::UNAUTHORIZED => Ok(Json(SessionState { user: None })),
        Err(e) => Err(e),
    }
}

/// Sets the caller's own password. `current_password` must match the one
/// the account signs in with (`422` otherwise, and each attempt counts
/// against the address like a sign-in); only an account with no password
/// yet is given its first without it. The account's other sessions end.
#[utoipa::path(put, path = "/api/auth/password", tag = "auth",
    request_body = OwnPasswordRequest,
    responses((status = 204, description = "Password set"), WriteErrors))]
async fn set_password(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    caller: Caller,
    Body(request): Body<OwnPasswordRequest>,
) -> ApiResult<StatusCode> {
    if request.current_password.is_some() {
        state
            .limiter
            .attempt_from(&ip)
            .map_err(ApiError::rate_limited)?;
    }
    let keep = match caller.via {
        Credential::Session(id) => Some(id),
        Credential::Token(_) => None,
    };
    state
        .helm
        .change_own_password(
            &caller.user,
            request.current_password.as_deref(),
            &request.password,
            keep,
        )
        .await?;
    // The account's other sessions just ended.
    state.credential_ended();
    Ok(StatusCode::NO_CONTENT)
}

//! Who a request comes from.
//!
//! A request proves it with `Authorization: Bearer <secret>` (an API token, or
//! a session secret) or with the `helm_session` cookie a browser got by
//! signing in. A cookie rides along on requests other sites make, so a
//! cookie-authenticated request that changes anything (any method but GET,
//! HEAD and OPTIONS), and every WebSocket opened with a cookie, must come
//! from one of the workspace's own origins: its `Origin` (or, failing that,
//! `Referer`) must be one of the server's configured public origins (the
//! public URL or, without one, the loopback names with the server's port,
//! plus any allowed origins). The request's own `Host` proves nothing: a
//! page on a domain rebound to 127.0.0.1 sends a matching `Host` and
//! `Origin`. Bearer requests need no such check: a browser never attaches
//! them by itself.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use helm_core::auth::{Credential, Principal};
use helm_core::model::User;
use helm_core::store::ChannelRecord;

use crate::config::origin_of;
use crate::error::ApiError;
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "helm_session";

/// The signed-in person making a request.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The person.
    pub user: User,
    /// How they proved it.
    pub via: Credential,
    /// The secret they presented (to sign out, or to re-check a long-lived
    /// stream).
    pub secret: String,
}

/// The secret in `Authorization: Bearer …`, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, secret) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| secret.trim())
}

/// The value of cookie `name`, if any.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// Whether a cookie-authenticated request comes from one of our origins.
pub fn same_origin(headers: &HeaderMap, state: &AppState) -> bool {
    let claimed = headers
        .get(header::ORIGIN)
        .or_else(|| headers.get(header::REFERER))
        .and_then(|v| v.to_str().ok())
        .map(origin_of);
    let Some(claimed) = claimed else {
        return false;
    };
    state.trusted_origins.contains(&claimed)
}

/// The host a request is for: `Host`, or the URI's authority (HTTP/2).
pub fn request_host(request: &axum::http::Request<axum::body::Body>) -> Option<String> {
    request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .map(|h| h.trim().to_ascii_lowercase())
}

/// The client's address, for rate limits (`unknown` when the server was not
/// started with connection info, as in router tests).
pub fn client_ip(parts: &Parts) -> String {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if let Some(secret) = bearer(&parts.headers) {
            let Principal { user, via } = state.helm.authenticate(secret).await?;
            return Ok(Caller {
                user,
                via,
                secret: secret.to_string(),
            });
        }
        let Some(secret) = cookie(&parts.headers, SESSION_COOKIE) else {
            return Err(ApiError::unauthenticated(
                "sign in first: send a session cookie or Authorization: Bearer <API token>",
            ));
        };
        let changes = !matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS);
        let is_websocket = parts
            .headers
            .get(header::UPGRADE)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
        if (changes || is_websocket) && !same_origin(&parts.headers, state) {
            return Err(ApiError::bad_origin());
        }
        let Principal { user, via } = state.helm.authenticate(secret).await?;
        Ok(Caller {
            user,
            via,
            secret: secret.to_string(),
        })
    }
}

/// An Open Terminal client: it presented `Authorization: Bearer <key>` with
/// the live Open Terminal key of the channel in the path, and acts as the
/// person who made the key (who must still be allowed to use the channel's
/// computer). Another channel's key is refused like an unknown one.
#[derive(Debug, Clone)]
pub struct OtCaller {
    /// The channel whose computer the key opens.
    pub channel: ChannelRecord,
    /// Who the key acts as.
    pub user: User,
}

impl FromRequestParts<AppState> for OtCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_path(e.body_text()))?;
        let channel = params
            .iter()
            .find(|(k, _)| *k == "channel")
            .map(|(_, v)| v.to_string())
            .ok_or_else(|| ApiError::bad_path("no channel in the path"))?;
        let Some(key) = bearer(&parts.headers) else {
            return Err(ApiError::unauthenticated(
                "send the channel's Open Terminal key as Authorization: Bearer <key>",
            ));
        };
        let channel = crate::routes::channel_ref(&channel)?;
        let (channel, user) = state.helm.authenticate_ot_key(&channel, key).await?;
        Ok(OtCaller { channel, user })
    }
}

/// The `Set-Cookie` value that stores a session.
pub fn session_cookie(secret: &str, max_age_secs: u64, secure: bool) -> String {
    format!(
        "{SESSION_COOKIE}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_cookie(secure: bool) -> String {
    session_cookie("", 0, secure)
}

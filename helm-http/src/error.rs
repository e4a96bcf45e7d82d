//! Errors as HTTP responses, mapped in this one place.
//!
//! Every error body is `{"code": "...", "message": "...", "hint": "..."}`:
//! `code` is stable and machine-readable (core's
//! [`Error::code`](helm_core::Error::code), or one of the HTTP-level codes
//! below), `message` is for people and protocol-neutral (core's own text),
//! and `hint`, when present, is the next step in this API's terms. Statuses
//! come from [`ErrorKind`], hints from the variant, never from message text.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use helm_core::{Error, ErrorKind};
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A stable, machine-readable code such as `not_found`, `invalid`,
    /// `unauthenticated`, `malformed_json` or `rate_limited`.
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// What to do about it with this API, when there is a step to name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// An error on its way to becoming a response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    hint: Option<String>,
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with an explicit status and code (for failures that are the
    /// HTTP layer's own, such as a malformed body).
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            hint: None,
            retry_after: None,
        }
    }

    /// 400 for a path parameter that does not parse.
    pub fn bad_path(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_path", message)
    }

    /// 401: no or unknown credentials.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthenticated", message)
    }

    /// 403 for a cookie-authenticated change from another origin.
    pub fn bad_origin() -> Self {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "bad_origin",
            "this request carries a session cookie but comes from another origin (or says none); \
             send it from the workspace's own pages or use an API token",
        )
    }

    /// 403: `POST /api/setup` without the server's setup code, or with a
    /// wrong one.
    pub fn bad_setup_code() -> Self {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "bad_setup_code",
            "setup needs the server's setup code as setup_code: the server printed it when it \
             started and keeps it in the file setup-code in its data directory",
        )
    }

    /// 421: a request for a host this server does not answer for (what a
    /// page on a rebound domain sends).
    pub fn bad_host(host: &str, allowed: &[String]) -> Self {
        ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "bad_host",
            format!(
                "this server answers for {} only, not for {host:?}; if people reach it under \
                 another name, add that origin to the server's public origins",
                allowed.join(", ")
            ),
        )
    }

    /// 413: a body over a size limit.
    pub fn too_large(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
    }

    /// 400: a body that cannot be read as what it claims to be.
    pub fn bad_body(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_body", message)
    }

    /// 422: a value in the request that is not acceptable.
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
    }

    /// 429 with a `Retry-After` header.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        ApiError {
            retry_after: Some(retry_after_secs.max(1)),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "too many attempts; try again in {} s",
                    retry_after_secs.max(1)
                ),
            )
        }
    }

    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

/// The status for each kind of core error.
fn status_for(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict | ErrorKind::Refused => StatusCode::CONFLICT,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Upstream => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let status = status_for(e.kind());
        let message = if status == StatusCode::INTERNAL_SERVER_ERROR {
            // Internal detail (paths, SQL) is for the operator's log only.
            tracing::error!(error = %e, "request failed inside Helm");
            "Helm failed to handle this request; the server log has the details".to_string()
        } else {
            e.to_string()
        };
        ApiError {
            status,
            code: e.code(),
            hint: hint_for(&e),
            message,
            retry_after: None,
        }
    }
}

/// The next step for an error, in this API's terms.
fn hint_for(e: &Error) -> Option<String> {
    match e {
        Error::ConfirmationRequired { name, .. } => Some(format!(
            "repeat the request with the query parameter confirm={name}"
        )),
        Error::ModelUnavailable(_) => Some(
            "choose a model with PUT /api/channels/{channel}/model (or PUT /api/model for the \
             workspace); GET /api/providers/{provider}/models lists what a provider serves"
                .into(),
        ),
        Error::Provider {
            failure: helm_core::ProviderFailure::Unconfigured,
            ..
        } => Some(
            "register a provider with POST /api/providers and choose its model with PUT \
             /api/model"
                .into(),
        ),
        _ => None,
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::JsonSyntaxError(e) => {
                ApiError::new(StatusCode::BAD_REQUEST, "malformed_json", e.body_text())
            }
            JsonRejection::JsonDataError(e) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_body",
                e.body_text(),
            ),
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with Content-Type: application/json",
            ),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than this server accepts",
            ),
            other => ApiError::new(other.status(), "bad_body", other.body_text()),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::bad_path(rejection.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_query", rejection.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            code: self.code.to_string(),
            message: self.message,
            hint: self.hint,
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(value) = HeaderValue::from_str(&secs.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// The result type of handlers.
pub type ApiResult<T> = Result<T, ApiError>;

//! Errors on the Open Terminal surface in both shapes: Helm's
//! `{code, message}` and the protocol's `detail` beside them (a string, or
//! for a 422 a list of `{type, loc, msg}` as FastAPI's validation errors
//! are), plus `error` on the terminal routes, whose reference answers
//! `{"error": ...}`. Clients of the protocol show `detail`; Helm's own
//! clients keep reading `code`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The largest error body rewritten (Helm's are a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Adds the protocol's error fields to an error answer.
pub async fn protocol_errors(request: Request, next: Next) -> Response {
    let terminal = request.uri().path().contains("/ot/api/terminals");
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return (status, "error body too large").into_response();
    };
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let message = object
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let code = object
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let detail = if status == StatusCode::UNPROCESSABLE_ENTITY {
        json!([{"type": code, "loc": [], "msg": message}])
    } else {
        Value::String(message.clone())
    };
    object.insert("detail".into(), detail);
    if terminal {
        object.insert("error".into(), Value::String(message));
    }
    let body = Value::Object(object).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

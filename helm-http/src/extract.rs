//! Extractors whose failures are [`ApiError`]s, so a malformed body, path or
//! query gets the same JSON error shape as everything else.

use axum::extract::{FromRequest, FromRequestParts};

use crate::error::ApiError;

/// A JSON body (400 when malformed, 422 when it has the wrong shape, 413
/// when too large, 415 without a JSON content type).
#[derive(Debug, Clone, Copy, Default, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct Body<T>(pub T);

/// Path parameters (400 when they do not parse).
#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct PathParams<T>(pub T);

/// Query parameters (400 when they do not parse).
#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct QueryParams<T>(pub T);

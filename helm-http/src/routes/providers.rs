//! The provider registry. Keys are never returned: a provider names the
//! server's environment variable (or file) that holds its key, or is given
//! the key once, which the server keeps in its data directory.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::provider::{ApiKeyRef, ProviderConfig};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{ReadErrors, WriteErrors, created};
use crate::api::{Provider, ProviderRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::state::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_providers, add_provider))
}

/// Registered providers, without secrets.
#[utoipa::path(get, path = "/api/providers", tag = "models",
    responses((status = 200, description = "Providers by name", body = [Provider]), ReadErrors))]
async fn list_providers(
    State(state): State<AppState>,
    _caller: Caller,
) -> ApiResult<Json<Vec<Provider>>> {
    let providers = state.helm.providers().await?;
    Ok(Json(providers.into_iter().map(Into::into).collect()))
}

/// Registers a provider or replaces the one of that name (Captain and
/// admins).
#[utoipa::path(post, path = "/api/providers", tag = "models", request_body = ProviderRequest,
    responses((status = 201, description = "The provider", body = Provider), WriteErrors))]
async fn add_provider(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ProviderRequest>,
) -> ApiResult<(StatusCode, Json<Provider>)> {
    if request.api_key.is_some() && request.api_key_env.is_some() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "give the key (api_key) or the server variable that holds it (api_key_env), not both",
        ));
    }
    let config = ProviderConfig {
        name: request.name,
        kind: request.kind.parse()?,
        base_url: request.base_url.trim_end_matches('/').to_string(),
        api_key: request
            .api_key_env
            .map(|v| v.parse::<ApiKeyRef>())
            .transpose()?,
        default_model: request.default_model,
        extra_headers: request.extra_headers,
    };
    let config = match request.api_key {
        Some(key) => {
            state
                .helm
                .add_provider_with_key(&caller.user, config, &key, request.make_default)
                .await?
        }
        None => {
            state
                .helm
                .add_provider(&caller.user, config, request.make_default)
                .await?
        }
    };
    Ok(created(config.into()))
}

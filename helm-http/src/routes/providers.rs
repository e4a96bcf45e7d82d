//! The provider registry. Keys are never returned: a provider names the
//! server's environment variable (or file) that holds its key, or is given
//! the key once, which the server keeps in its data directory. What a
//! provider serves is asked of it: `GET /api/providers/{provider}/models` for
//! a registered one (the model picker), `POST /api/providers/test` with the
//! body of adding one, before it is saved (the connection test).

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use helm_core::provider::{ApiKeyRef, ProviderConfig};

use super::{ReadErrors, WriteErrors, created};
use crate::api::{Provider, ProviderModels, ProviderRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{Body, PathParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_providers, add_provider))
        .routes(handlers!(provider_models))
        .routes(handlers!(test_provider))
}

/// A request's provider configuration.
fn config_of(request: ProviderRequest) -> ApiResult<ProviderConfig> {
    if request.api_key.is_some() && request.api_key_env.is_some() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            "give the key (api_key) or the server variable that holds it (api_key_env), not both",
        ));
    }
    Ok(ProviderConfig {
        name: request.name,
        kind: request.kind.parse()?,
        base_url: request.base_url.trim_end_matches('/').to_string(),
        api_key: request
            .api_key_env
            .map(|v| v.parse::<ApiKeyRef>())
            .transpose()?,
        default_model: request.default_model,
        extra_headers: request.extra_headers,
    })
}

/// What a registered provider serves, asked of it now. `listed: false`
/// means it keeps no list (any model name is taken as given). A provider
/// that cannot be reached, or refuses its key, is 502.
#[utoipa::path(get, path = "/api/providers/{provider}/models", tag = "models",
    params(("provider" = String, Path, description = "The provider's name")),
    responses((status = 200, description = "Its models", body = ProviderModels),
        (status = 502, description = "The provider could not be reached or refused", body = ErrorBody),
        ReadErrors))]
async fn provider_models(
    State(state): State<AppState>,
    _caller: Caller,
    PathParams(provider): PathParams<String>,
) -> ApiResult<Json<ProviderModels>> {
    Ok(Json(state.helm.provider_models(&provider).await?.into()))
}

/// Tries a provider configuration without saving it (Captain and admins):
/// the same body as adding one (`make_default` is ignored; an `api_key` is
/// used for this test and kept nowhere). Answers what
/// it serves and whether its default model is among them; 502 when it
/// cannot be reached or refuses its key, with the provider's reason.
#[utoipa::path(post, path = "/api/providers/test", tag = "models", request_body = ProviderRequest,
    responses((status = 200, description = "What it serves", body = ProviderModels),
        (status = 502, description = "The provider could not be reached or refused", body = ErrorBody),
        WriteErrors))]
async fn test_provider(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ProviderRequest>,
) -> ApiResult<Json<ProviderModels>> {
    let api_key = request.api_key.clone();
    let config = config_of(request)?;
    let models = match api_key {
        Some(key) => {
            state
                .helm
                .try_provider_with_key(&caller.user, &config, &key)
                .await?
        }
        None => state.helm.try_provider(&caller.user, &config).await?,
    };
    Ok(Json(models.into()))
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

/// Registers a provider (Captain and admins). A name already registered is
/// 409 unless `replace` asks to replace that provider, so a second provider
/// never silently re-points the channels that use the first. A default
/// model the provider's own list lacks is 422, and so is `make_default`
/// without a default model; a provider that cannot be reached now is still
/// registered (try it first with `/api/providers/test`).
#[utoipa::path(post, path = "/api/providers", tag = "models", request_body = ProviderRequest,
    responses((status = 201, description = "The provider", body = Provider), WriteErrors))]
async fn add_provider(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ProviderRequest>,
) -> ApiResult<(StatusCode, Json<Provider>)> {
    let (make_default, replace) = (request.make_default, request.replace);
    let api_key = request.api_key.clone();
    let config = config_of(request)?;
    let helm = &state.helm;
    let config = match api_key {
        Some(key) => {
            helm.add_provider_with_key(&caller.user, config, &key, make_default, replace)
                .await?
        }
        None if replace => {
            helm.replace_provider(&caller.user, config, make_default)
                .await?
        }
        None => {
            helm.add_provider(&caller.user, config, make_default)
                .await?
        }
    };
    Ok(created(config.into()))
}

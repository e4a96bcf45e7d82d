//! Running a command in a channel's computer for a signed-in person (an API
//! token or a session), as the channel's agent would: in `/workspace`,
//! under the channel's isolation, confined like every agent command. The
//! request waits for the command to end (or its timeout to kill it) and
//! answers with its exit status and the tails of its output. For
//! long-running work use a terminal or the Open Terminal protocol.

use std::time::Duration;

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use helm_core::exec::{CommandSpec, RUN_AND_WAIT_MAX_TIMEOUT, RUN_AND_WAIT_TIMEOUT};

use super::{WriteErrors, channel_ref};
use crate::api::{CommandResult, ExecRequest};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathParams};
use crate::state::AppState;

/// Output kept per stream (its tail).
const OUTPUT_LIMIT: usize = 256 * 1024;

pub fn routes() -> Api {
    Api::new().routes(handlers!(exec))
}

fn timeout(asked: Option<f64>) -> ApiResult<Duration> {
    match asked {
        None => Ok(RUN_AND_WAIT_TIMEOUT),
        Some(secs)
            if secs.is_finite() && secs > 0.0 && secs <= RUN_AND_WAIT_MAX_TIMEOUT.as_secs_f64() =>
        {
            Ok(Duration::from_secs_f64(secs))
        }
        Some(secs) => Err(ApiError::invalid(format!(
            "timeout_secs {secs} is out of range: give more than 0 and at most {}",
            RUN_AND_WAIT_MAX_TIMEOUT.as_secs()
        ))),
    }
}

/// Runs a command in the channel's computer and waits for it.
#[utoipa::path(post, path = "/api/channels/{channel}/exec", tag = "commands",
    params(("channel" = String, Path, description = "The channel's name or id")),
    request_body = ExecRequest,
    responses((status = 200, description = "The command ended (whatever its exit code)", body = CommandResult), WriteErrors))]
async fn exec(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(channel): PathParams<String>,
    Body(request): Body<ExecRequest>,
) -> ApiResult<Json<CommandResult>> {
    if request.command.trim().is_empty() {
        return Err(ApiError::invalid("the command is empty"));
    }
    let mut spec = CommandSpec::new(request.command)
        .timeout(Some(timeout(request.timeout_secs)?))
        .output_limit(OUTPUT_LIMIT);
    if let Some(cwd) = request.cwd.filter(|c| !c.trim().is_empty()) {
        spec = spec.cwd(cwd);
    }
    let result = state
        .helm
        .exec(&caller.user, &channel_ref(&channel)?, spec)
        .await?;
    Ok(Json(result.into()))
}

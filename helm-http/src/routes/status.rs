//! The workspace at a glance.

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::ReadErrors;
use crate::api::Status;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::state::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(status))
}

/// What the workspace holds.
#[utoipa::path(get, path = "/api/status", tag = "workspace",
    responses((status = 200, description = "Counts and identities", body = Status), ReadErrors))]
async fn status(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Status>> {
    let status = state.helm.status().await?;
    let s = status.stats;
    Ok(Json(Status {
        workspace: status.workspace.into(),
        captain: status.captain.into(),
        skipper: status.skipper.into(),
        data_dir: caller
            .user
            .role
            .is_admin()
            .then(|| status.data_dir.display().to_string()),
        schema_version: s.schema_version,
        users: s.users,
        channels_active: s.channels_active,
        channels_archived: s.channels_archived,
        agents: s.agents,
        threads: s.threads,
        messages: s.messages,
        last_event_seq: s.last_event_seq,
        recall: (&status.recall).into(),
    }))
}

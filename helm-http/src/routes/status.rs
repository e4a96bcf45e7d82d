//! The workspace at a glance.

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{ReadErrors, WriteErrors};
use crate::api::{Status, Workspace, WorkspaceUpdateRequest};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::Body;
use crate::state::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(rename_workspace))
}

/// Renames the workspace (the Captain and admins); a `workspace.updated`
/// event tells everyone.
#[utoipa::path(patch, path = "/api/workspace", tag = "workspace",
    request_body = WorkspaceUpdateRequest,
    responses((status = 200, description = "The workspace", body = Workspace), WriteErrors))]
async fn rename_workspace(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<WorkspaceUpdateRequest>,
) -> ApiResult<Json<Workspace>> {
    let workspace = state
        .helm
        .rename_workspace(&caller.user, &request.name)
        .await?;
    Ok(Json(workspace.into()))
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
    }))
}

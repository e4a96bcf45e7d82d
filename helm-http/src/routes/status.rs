//! The workspace at a glance.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;

use super::{ReadErrors, WriteErrors};
use crate::api::{Status, Workspace, WorkspaceUpdateRequest};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::Body;
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(status))
        .routes(handlers!(rename_workspace))
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
    let admin = caller.user.role.is_admin();
    // A member's counts are of what they may see: private channels they are
    // not in do not exist for them, not even as a number.
    let (active, archived) = if admin {
        (s.channels_active, s.channels_archived)
    } else {
        let visible = state
            .helm
            .visible_channels(
                &caller.user,
                helm_core::store::ChannelFilter {
                    include_archived: true,
                },
            )
            .await?;
        let archived = visible
            .iter()
            .filter(|r| r.channel.status == helm_core::model::ChannelStatus::Archived)
            .count() as u64;
        (visible.len() as u64 - archived, archived)
    };
    Ok(Json(Status {
        workspace: status.workspace.into(),
        captain: status.captain.into(),
        skipper: status.skipper.into(),
        data_dir: admin.then(|| status.data_dir.display().to_string()),
        // Settled now if no computer ran yet: the Captain is told what
        // channel computers will be, before the first one is.
        isolation: state
            .helm
            .channel_isolation()
            .await
            .ok()
            .map(|i| i.as_str().to_string()),
        computers: state.helm.computer_choices(),
        schema_version: s.schema_version,
        users: s.users,
        channels_active: active,
        channels_archived: archived,
        agents: if admin { s.agents } else { active + archived },
        threads: admin.then_some(s.threads),
        messages: admin.then_some(s.messages),
        last_event_seq: s.last_event_seq,
        recall: (&status.recall).into(),
    }))
}

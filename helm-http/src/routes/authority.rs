//! Authority: approval requests (the Captain and admins decide them), the
//! approval policy, calls for Skipper, and the audit log.

use super::described::{Api, handlers};
use axum::Json;
use axum::extract::State;
use helm_core::model::ApprovalAction;

use super::{ReadErrors, WriteErrors, channel_ref, page_size};
use crate::api::{
    Approval, ApprovalRuleRequest, AuditEntry, AuditQuery, AuditVerification, DecisionRequest,
    Escalation, ListQuery,
};
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathParams, QueryParams};
use crate::state::AppState;

pub fn routes() -> Api {
    Api::new()
        .routes(handlers!(list_approvals))
        .routes(handlers!(approve))
        .routes(handlers!(deny))
        .routes(handlers!(set_rule))
        .routes(handlers!(list_escalations))
        .routes(handlers!(audit_log))
        .routes(handlers!(verify_audit))
}

/// Approval requests: all of them for the Captain and admins, a member's own
/// otherwise; pending ones unless `all=true`.
#[utoipa::path(get, path = "/api/approvals", tag = "authority", params(ListQuery),
    responses((status = 200, description = "Approval requests, oldest first", body = [Approval]), ReadErrors))]
async fn list_approvals(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<Approval>>> {
    let list = state
        .helm
        .approvals(&caller.user, !query.all.unwrap_or(false))
        .await?;
    Ok(Json(list.into_iter().map(Into::into).collect()))
}

/// Approves a pending request; the waiting agent goes ahead.
#[utoipa::path(post, path = "/api/approvals/{id}/approve", tag = "authority",
    params(("id" = i64, Path, description = "The approval's id")), request_body = DecisionRequest,
    responses((status = 200, description = "The decided request", body = Approval), WriteErrors))]
async fn approve(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<DecisionRequest>,
) -> ApiResult<Json<Approval>> {
    Ok(Json(
        state
            .helm
            .approve(&caller.user, id, request.note)
            .await?
            .into(),
    ))
}

/// Denies a pending request; the waiting agent is told no.
#[utoipa::path(post, path = "/api/approvals/{id}/deny", tag = "authority",
    params(("id" = i64, Path, description = "The approval's id")), request_body = DecisionRequest,
    responses((status = 200, description = "The decided request", body = Approval), WriteErrors))]
async fn deny(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(id): PathParams<i64>,
    Body(request): Body<DecisionRequest>,
) -> ApiResult<Json<Approval>> {
    Ok(Json(
        state
            .helm
            .deny(&caller.user, id, request.note)
            .await?
            .into(),
    ))
}

/// Sets whether an action needs approval, workspace-wide or in one channel.
#[utoipa::path(put, path = "/api/approval-policy", tag = "authority", request_body = ApprovalRuleRequest,
    responses((status = 204, description = "Set"), WriteErrors))]
async fn set_rule(
    State(state): State<AppState>,
    caller: Caller,
    Body(request): Body<ApprovalRuleRequest>,
) -> ApiResult<axum::http::StatusCode> {
    let action: ApprovalAction = request.action.parse()?;
    let channel = request.channel.as_deref().map(channel_ref).transpose()?;
    state
        .helm
        .set_approval_rule(&caller.user, channel.as_ref(), action, request.required)
        .await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// Calls for Skipper: open ones unless `all=true`.
#[utoipa::path(get, path = "/api/escalations", tag = "authority", params(ListQuery),
    responses((status = 200, description = "Escalations, oldest first", body = [Escalation]), ReadErrors))]
async fn list_escalations(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<Escalation>>> {
    let list = state
        .helm
        .escalations(&caller.user, !query.all.unwrap_or(false))
        .await?;
    // A private channel's calls reach only those who may see the channel.
    let audience = state.helm.audience(&caller.user).await?;
    let mut visible = Vec::new();
    for e in list {
        let thread = state.helm.thread(e.thread_id).await?;
        if audience.sees_channel(thread.channel_id) {
            visible.push(e.into());
        }
    }
    Ok(Json(visible))
}

/// The audit log's newest rows (Captain and admins).
#[utoipa::path(get, path = "/api/audit", tag = "authority", params(AuditQuery),
    responses((status = 200, description = "Rows, oldest first", body = [AuditEntry]), ReadErrors))]
async fn audit_log(
    State(state): State<AppState>,
    caller: Caller,
    QueryParams(query): QueryParams<AuditQuery>,
) -> ApiResult<Json<Vec<AuditEntry>>> {
    let channel = query.channel.as_deref().map(channel_ref).transpose()?;
    let limit = page_size(query.limit, 100, 1000)?;
    let rows = state
        .helm
        .audit_log(&caller.user, channel.as_ref(), limit)
        .await?;
    Ok(Json(rows.into_iter().map(Into::into).collect()))
}

/// Checks the audit log's hash chain (Captain and admins).
#[utoipa::path(get, path = "/api/audit/verify", tag = "authority",
    responses((status = 200, description = "The check", body = AuditVerification), ReadErrors))]
async fn verify_audit(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<AuditVerification>> {
    Ok(Json(state.helm.verify_audit(&caller.user).await?.into()))
}

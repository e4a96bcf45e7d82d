//! Mirrors of helm-core's approvals, escalations and audit rows, and the
//! requests of the authority routes.

use helm_core::model as m;
use helm_core::store as st;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A request for the Captain's (or an admin's) approval.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Approval {
    /// Its id.
    pub id: i64,
    /// The channel it concerns.
    pub channel_id: i64,
    /// The thread it was asked in.
    pub thread_id: Option<i64>,
    /// The turn waiting for it.
    pub turn_id: Option<i64>,
    /// The person whose request led to it.
    pub asker_id: Option<i64>,
    /// `host_command`, `install_package`, `grant_capability`, `cross_channel_read`,
    /// `delete_channel`, `tool_call`, `tool_definition`, `mcp_server` or `other`.
    pub action: String,
    /// Exactly what would be done.
    pub summary: String,
    /// Why.
    pub reason: String,
    /// `pending`, `approved`, `denied` or `expired`.
    pub status: String,
    /// Who decided.
    pub decided_by: Option<i64>,
    /// Their note.
    pub decision_note: Option<String>,
    /// When it was asked.
    pub created: Timestamp,
    /// When it is denied if nobody decides.
    pub expires: Timestamp,
}

impl From<m::Approval> for Approval {
    fn from(a: m::Approval) -> Self {
        Approval {
            id: a.id,
            channel_id: a.channel_id.0,
            thread_id: a.thread_id.map(|t| t.0),
            turn_id: a.turn_id.map(|t| t.0),
            asker_id: a.asker_id.map(|u| u.0),
            action: a.action.to_string(),
            summary: a.summary,
            reason: a.reason,
            status: a.status.to_string(),
            decided_by: a.decided_by.map(|u| u.0),
            decision_note: a.decision_note,
            created: a.created,
            expires: a.expires,
        }
    }
}

/// A call for Skipper.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Escalation {
    /// Its id.
    pub id: i64,
    /// The thread it was raised in.
    pub thread_id: i64,
    /// That thread's channel.
    pub channel_id: i64,
    /// The agent that called, if an agent did.
    pub from_agent_id: Option<i64>,
    /// The person who called, if a person did.
    pub from_user_id: Option<i64>,
    /// Why.
    pub reason: String,
    /// `open`, `resolved` or `handed_to_captain`.
    pub status: String,
    /// Who resolved it.
    pub resolved_by: Option<String>,
    /// What came of it.
    pub outcome: Option<String>,
    /// When it was raised.
    pub created: Timestamp,
    /// For a call handed to the Captain: who answered it by writing in its
    /// thread (the Captain or an admin); absent while it waits for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// When it was answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_at: Option<Timestamp>,
}

impl From<m::Escalation> for Escalation {
    fn from(e: m::Escalation) -> Self {
        Escalation {
            id: e.id.0,
            thread_id: e.thread_id.0,
            channel_id: e.channel_id.0,
            from_agent_id: e.from_agent_id.map(|a| a.0),
            from_user_id: e.from_user_id.map(|u| u.0),
            reason: e.reason,
            status: e.status.to_string(),
            resolved_by: e.resolved_by,
            outcome: e.outcome,
            created: e.created,
            answered_by: e.answered_by,
            answered_at: e.answered_at,
        }
    }
}

/// One row of the append-only, hash-chained audit log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditEntry {
    /// Its position.
    pub id: i64,
    /// When.
    pub at: Timestamp,
    /// The channel it concerns.
    pub channel_id: Option<i64>,
    /// The thread.
    pub thread_id: Option<i64>,
    /// The agent that acted.
    pub agent: Option<String>,
    /// The person who asked or acted.
    pub asker: Option<String>,
    /// What was done.
    pub action: String,
    /// A short account of the input.
    pub input_summary: String,
    /// How it ended.
    pub outcome: String,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash.
    pub hash: String,
}

impl From<m::AuditEntry> for AuditEntry {
    fn from(e: m::AuditEntry) -> Self {
        AuditEntry {
            id: e.id,
            at: e.at,
            channel_id: e.channel_id.map(|c| c.0),
            thread_id: e.thread_id.map(|t| t.0),
            agent: e.agent,
            asker: e.asker,
            action: e.action,
            input_summary: e.input_summary,
            outcome: e.outcome,
            prev_hash: e.prev_hash,
            hash: e.hash,
        }
    }
}

/// Whether the audit log's hash chain holds.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditVerification {
    /// Rows checked.
    pub rows: u64,
    /// Whether every hash and link checks out.
    pub intact: bool,
    /// The first row that does not, if any.
    pub first_bad_row: Option<i64>,
    /// What was wrong with it.
    pub problem: Option<String>,
}

impl From<st::AuditVerification> for AuditVerification {
    fn from(v: st::AuditVerification) -> Self {
        AuditVerification {
            intact: v.intact(),
            rows: v.rows,
            first_bad_row: v.first_bad_row,
            problem: v.problem,
        }
    }
}

/// Approving or denying, with an optional note for the thread.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    /// A note, posted in the thread with the decision.
    #[serde(default)]
    pub note: Option<String>,
}

/// Whether an action needs approval, workspace-wide or in one channel.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRuleRequest {
    /// `host_command`, `install_package`, `grant_capability`, `cross_channel_read`,
    /// `delete_channel`, `tool_call`, `tool_definition` or `mcp_server`.
    pub action: String,
    /// Whether it needs approval.
    pub required: bool,
    /// Only in this channel (name or id).
    #[serde(default)]
    pub channel: Option<String>,
}

/// Which approvals or escalations to list.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Decided or closed ones too.
    pub all: Option<bool>,
}

/// Which audit rows to read.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this channel's rows (name or id).
    pub channel: Option<String>,
    /// How many of the newest rows (1 to 1000, default 100).
    pub limit: Option<u32>,
}

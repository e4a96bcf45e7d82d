//! Skipper asking the Captain, and ending the call that brought it in:
//! resolving it (the channel's agent is woken with the outcome, within the
//! rails) or handing it to the Captain.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::Result;
use crate::model::{ApprovalAction, EscalationStatus};
use crate::store::Resume;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool, clip};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApprovalArgs {
    /// Exactly what you want to do.
    action: String,
    /// Why.
    reason: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveArgs {
    /// What was done, for the channel's agent and the people in the thread.
    outcome: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HandArgs {
    /// The question that needs the Captain.
    question: String,
}

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TypedTool::new(
            "request_approval",
            "Ask the Captain to approve something before you do it; waits for the answer.",
            ApprovalClass::PerCall,
            request_approval,
        )),
        Arc::new(TypedTool::new(
            "resolve_escalation",
            "Close the call that brought you here, with its outcome (the channel's agent is told).",
            ApprovalClass::None,
            resolve,
        )),
        Arc::new(TypedTool::new(
            "hand_to_captain",
            "Hand the call to the Captain with the question that needs them.",
            ApprovalClass::None,
            hand_to_captain,
        )),
    ]
}

async fn request_approval(cx: &ToolContext<'_>, args: ApprovalArgs) -> Result<ToolOutput> {
    Ok(
        match cx
            .approval_by_policy(
                cx.channel_id(),
                ApprovalAction::Other,
                args.action.clone(),
                args.reason,
            )
            .await?
        {
            Some(refusal) => refusal,
            None => ToolOutput::ok(format!("approved: {}", args.action), "approved"),
        },
    )
}

async fn resolve(cx: &ToolContext<'_>, args: ResolveArgs) -> Result<ToolOutput> {
    settle(cx, &args.outcome, false).await
}

async fn hand_to_captain(cx: &ToolContext<'_>, args: HandArgs) -> Result<ToolOutput> {
    settle(cx, &args.question, true).await
}

async fn settle(cx: &ToolContext<'_>, outcome: &str, to_captain: bool) -> Result<ToolOutput> {
    let turn = cx.turn();
    let Some(id) = turn.escalation_id else {
        return Ok(ToolOutput::error(
            "this turn answers no call; there is nothing to resolve",
        ));
    };
    let store = &cx.rt().store;
    let escalation = store.escalation(id).await?;
    // The channel agent that called is woken with the outcome, within the rails.
    let resume = if !to_captain && escalation.from_agent_id.is_some() {
        match cx.rails(turn.hop + 1).await? {
            None => Some(Resume {
                requested_by: turn.requested_by,
                hop: turn.hop + 1,
                admission: cx
                    .rt()
                    .admission(cx.channel(), Some(turn.thread_id))
                    .await?,
            }),
            Some(_) => None,
        }
    } else {
        None
    };
    let status = if to_captain {
        EscalationStatus::HandedToCaptain
    } else {
        EscalationStatus::Resolved
    };
    let (settled, resumed) = store
        .settle_escalation(id, status, clip(outcome, 2000), resume)
        .await?;
    if resumed.is_some() {
        cx.rt().wake();
    }
    let done = format!("escalation {} {}", settled.id, settled.status);
    Ok(ToolOutput::ok(done.clone(), done))
}

//! `call_skipper`: the channel agent's way out of its world.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::Result;
use crate::store::NewEscalation;
use crate::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, TypedTool, clip};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    /// What you need and why.
    reason: String,
}

pub(super) fn call_skipper() -> Arc<dyn Tool> {
    Arc::new(TypedTool::new(
        "call_skipper",
        "Call @skipper, the workspace operator, into this thread when you need something \
         outside this channel: a package, a credential, network access, another channel's \
         information, a host-level action, a new MCP server. Skipper answers in this thread \
         after your turn.",
        ApprovalClass::None,
        call,
    ))
}

/// Calls Skipper into the thread, within the rails: a chain of agents
/// waking agents stops at the hop limit, and a thread without a person in
/// it gets only so many agent-woken turns.
async fn call(cx: &ToolContext<'_>, args: CallArgs) -> Result<ToolOutput> {
    let reason = args.reason.trim();
    if reason.is_empty() {
        return Ok(ToolOutput::error(
            "call_skipper needs a reason: what you need and why",
        ));
    }
    let turn = cx.turn();
    if let Some(refusal) = cx.rails(turn.hop + 1).await? {
        return Ok(refusal);
    }
    // Skipper's turn gets its model now, as a person's message would.
    let admission = cx
        .rt()
        .admission(cx.channel(), Some(cx.thread_id()))
        .await?;
    let escalated = cx
        .rt()
        .store
        .escalate(NewEscalation {
            thread_id: cx.thread_id(),
            from_agent_id: Some(turn.agent_id),
            from_agent_handle: Some(cx.agent_handle()),
            from_user_id: None,
            reason: clip(reason, 2000),
            requested_by: turn.requested_by,
            hop: turn.hop + 1,
            admission,
        })
        .await?;
    cx.rt().wake();
    let id = escalated.escalation.id;
    // A thread has one open call: a second one joins it.
    let (done, summary) = if escalated.added {
        (
            format!(
                "@skipper was already called into this thread (escalation {id}); your reason \
                 was added to that call, and it answers here after this turn. Tell the people \
                 what you asked for, then end your turn."
            ),
            format!("added to escalation {id}"),
        )
    } else {
        (
            format!(
                "@skipper has been called into this thread (escalation {id}); it answers here \
                 after this turn. Tell the people what you asked for, then end your turn."
            ),
            format!("escalation {id} opened"),
        )
    };
    Ok(ToolOutput::ok(done, summary))
}

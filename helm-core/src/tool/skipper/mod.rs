//! Skipper's tools: any channel's computer, the host, other channels'
//! knowledge, channel creation, archiving and deletion, model policy,
//! channels' capabilities, approvals, and ending the call that brought
//! Skipper in.
//!
//! Authority is enforced here, in code, through the narrow
//! [`Authority`](super::authority::Authority) service: Skipper never does for
//! a person what that person could not see or approve themselves (a channel
//! they may not see does not exist for it), and the actions the approval
//! policy names wait for the Captain (or an admin) unless the person asking
//! is one. Those tools are [`ApprovalClass::PerCall`](super::ApprovalClass):
//! whether a call needs approval depends on its target.

mod capabilities;
mod channels;
mod computers;
mod lifecycle;
mod settle;

use std::sync::Arc;

use crate::error::Result;
use crate::store::ChannelRecord;

use super::{Tool, ToolContext};

/// Skipper's tools, in the order they are offered.
pub(crate) fn skipper_tools() -> Vec<Arc<dyn Tool>> {
    let mut tools = computers::tools();
    tools.extend(channels::tools());
    tools.extend(lifecycle::tools());
    tools.extend(capabilities::tools());
    tools.extend(settle::tools());
    tools.extend(super::builtin::memory::tools());
    tools
}

/// The channel a Skipper tool names (default: the thread's), if the person
/// asking may see it; otherwise `not found`.
async fn target(cx: &ToolContext<'_>, name: Option<&str>) -> Result<ChannelRecord> {
    match name.filter(|n| !n.trim().is_empty()) {
        None => Ok(cx.channel().clone()),
        Some(name) => cx.authority().visible_channel(cx.person(), name).await,
    }
}

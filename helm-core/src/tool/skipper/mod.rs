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
mod mcp;
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
    tools.extend(mcp::tools());
    tools.extend(settle::tools());
    tools.extend(super::builtin::memory::tools());
    tools
}

/// The channel a Skipper tool acts on (default: the thread's), if the
/// person asking may see it; otherwise `not found`. For tools whose result
/// says what was done (archived, granted, written), not what is there.
async fn target_to_act(cx: &ToolContext<'_>, name: Option<&str>) -> Result<ChannelRecord> {
    match name.filter(|n| !n.trim().is_empty()) {
        None => Ok(cx.channel().clone()),
        Some(name) => cx.authority().visible_channel(cx.person(), name).await,
    }
}

/// The channel a Skipper tool reads from (default: the thread's): as
/// [`target_to_act`], and also one every reader of this thread may see.
/// What the tool reads lands in this thread (its result, the journal), so
/// a private channel is read only from a thread whose readers all belong
/// to it, such as one of its own: the Captain asking in `#main`, which
/// every member reads, does not copy `#secret` out to them.
async fn target(cx: &ToolContext<'_>, name: Option<&str>) -> Result<ChannelRecord> {
    let record = target_to_act(cx, name).await?;
    if record.channel.id != cx.channel_id() && !cx.audience().sees_channel(record.channel.id) {
        return Err(crate::error::Error::Refused(format!(
            "{name} is private, and not everyone who reads {here} may see it, so what it holds \
             is not read into this thread; call @skipper in a thread of {name} instead",
            name = record.channel.name,
            here = cx.channel().channel.name,
        )));
    }
    Ok(record)
}

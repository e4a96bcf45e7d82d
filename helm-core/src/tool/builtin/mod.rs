//! A channel agent's own tools: its computer ([`computer`]: `run_command`,
//! `read_file`, `write_file`, `list_files`, all in the channel's
//! `/workspace` under the deployment's isolation), its memory ([`memory`]:
//! `remember`, `recall`, `record_decision`), and the way out of its world
//! ([`escalation`]: `call_skipper`).
//!
//! A channel agent has no tool that reaches outside its channel: authority
//! is in what the tool layer offers, not in what the model is asked to do.
//! Files a tool creates or changes become artifacts of the thread.

pub(crate) mod computer;
pub(crate) mod escalation;
pub(crate) mod memory;

use std::sync::Arc;
use std::time::Duration;

use super::Tool;

/// How long an agent's command may run before it is killed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
/// The most text of a file or output a tool returns to the model.
pub const MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// The tools of a channel's resident agent, in the order they are offered.
pub(crate) fn channel_tools() -> Vec<Arc<dyn Tool>> {
    let mut tools = computer::tools();
    tools.extend(memory::tools());
    tools.push(escalation::call_skipper());
    tools
}

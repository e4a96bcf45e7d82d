//! Tools are values: one [`Tool`] abstraction for every capability an
//! agent can call.
//!
//! A tool has a [`ToolSpec`] (name, description, an input schema derived
//! from its argument type, and an [`ApprovalClass`]) and an async
//! [`Tool::call`]. Built-in channel tools, Skipper's tools, the tools of a
//! channel's MCP servers and the tools an embedding application registers
//! (Rust here, Python in `onehelm`) are all `Tool`s, gathered per channel in
//! a [`ToolRegistry`]; the turn engine sees only the registry.
//!
//! - [`ToolContext`]: what a call works with — the turn's channel, thread,
//!   agent, the person it runs for, the channel's computer, and a narrow
//!   service handle ([`ToolServices`]), never the whole facade.
//! - [`TypedTool`]: a tool written as `async fn(cx, args: A)`, with `A`'s
//!   schema (schemars) offered to the model and its input parsed into `A`.
//! - [`ToolOutput`]: text for the model and a line for the journal.
//!
//! An embedding application adds its own tools to a channel with
//! [`Helm::register_channel_tool`](crate::Helm::register_channel_tool).
//!
//! ```no_run
//! # async fn demo(helm: helm_core::Helm) -> helm_core::Result<()> {
//! use std::sync::Arc;
//! use helm_core::tool::{ApprovalClass, ToolContext, ToolOutput, TypedTool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Lookup {
//!     /// The customer's number.
//!     customer: String,
//! }
//!
//! async fn lookup(_cx: &ToolContext<'_>, args: Lookup) -> helm_core::Result<ToolOutput> {
//!     Ok(ToolOutput::text(format!("{} is a customer since 2021", args.customer)))
//! }
//!
//! let tool = TypedTool::new("lookup_customer", "Look a customer up in the CRM.",
//!     ApprovalClass::None, lookup);
//! helm.register_channel_tool(&"sales".parse()?, Arc::new(tool)).await?;
//! # Ok(()) }
//! ```

pub(crate) mod authority;
pub(crate) mod builtin;
pub(crate) mod context;
mod output;
mod registry;
pub(crate) mod skipper;
mod spec;
mod typed;

use async_trait::async_trait;
use serde_json::Value;

pub use context::{ToolContext, ToolServices};
pub use output::{ToolOutput, clip, clip_bytes};
pub use registry::{RegisteredTool, ToolRegistry, ToolSource, summarize_input};
pub use spec::{ApprovalClass, MAX_TOOL_NAME, ToolSpec, schema_for, validate_tool_name};
pub use typed::{ToolFn, TypedTool};

use crate::error::Result;

/// A capability an agent can call.
///
/// Two methods are required: [`Tool::spec`] says what it is, [`Tool::call`]
/// does it. The registry checks the input ([`Tool::check`]) and the
/// approval class before `call`, and journals every call with the line
/// [`Tool::summarize`] gives.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What the model is told, and whether a call needs approval.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool. An `Err` goes back to the model as a tool error (a
    /// refusal for `refused`/`forbidden` errors), never fails the turn.
    async fn call(&self, cx: &ToolContext<'_>, input: Value) -> Result<ToolOutput>;

    /// Checks the input before any approval is asked for or the tool runs;
    /// an [`Error::Invalid`](crate::Error::Invalid) goes back to the model
    /// as "invalid arguments". By default every object is accepted and the
    /// tool checks for itself.
    fn check(&self, input: &Value) -> Result<()> {
        let _ = input;
        Ok(())
    }

    /// A short account of the input for the journal and approval cards.
    fn summarize(&self, input: &Value) -> String {
        summarize_input(&self.spec().name, input)
    }
}

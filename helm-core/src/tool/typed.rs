//! The typed adapter: a tool written as `async fn(cx, args: A) ->
//! Result<ToolOutput>`, whose schema is derived from `A` and whose input is
//! parsed into `A` before the function runs.
//!
//! ```
//! use helm_core::tool::{ApprovalClass, ToolContext, ToolOutput, TypedTool};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct InvoiceArgs {
//!     /// The invoice number, such as INV-1042.
//!     number: String,
//! }
//!
//! async fn fetch_invoice(
//!     _cx: &ToolContext<'_>,
//!     args: InvoiceArgs,
//! ) -> helm_core::Result<ToolOutput> {
//!     Ok(ToolOutput::text(format!("{} is paid", args.number)))
//! }
//!
//! let tool = TypedTool::new(
//!     "fetch_invoice",
//!     "Look up an invoice in the accounting system.",
//!     ApprovalClass::None,
//!     fetch_invoice,
//! );
//! # let _ = tool;
//! ```

use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Tool;
use super::context::ToolContext;
use super::output::ToolOutput;
use super::spec::{ApprovalClass, ToolSpec};
use crate::error::{Error, Result};

/// An async function usable as a tool body: `async fn(&ToolContext<'_>, A)
/// -> Result<ToolOutput>`. Implemented for every such function and closure;
/// the lifetime parameter lets the future borrow the context.
pub trait ToolFn<'a, A>: Send + Sync {
    /// The future the function returns.
    type Future: Future<Output = Result<ToolOutput>> + Send + 'a;

    /// Calls the function.
    fn call(&self, cx: &'a ToolContext<'a>, args: A) -> Self::Future;
}

impl<'a, A, F, Fut> ToolFn<'a, A> for F
where
    F: Fn(&'a ToolContext<'a>, A) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolOutput>> + Send + 'a,
{
    type Future = Fut;

    fn call(&self, cx: &'a ToolContext<'a>, args: A) -> Fut {
        self(cx, args)
    }
}

/// A [`Tool`] made of an argument type and an async function.
pub struct TypedTool<A, F> {
    spec: ToolSpec,
    run: F,
    _args: PhantomData<fn() -> A>,
}

impl<A, F> TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: for<'a> ToolFn<'a, A> + 'static,
{
    /// A tool named `name` whose input schema is `A`'s.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        approval: ApprovalClass,
        run: F,
    ) -> Self {
        TypedTool {
            spec: ToolSpec::for_args::<A>(name, description, approval),
            run,
            _args: PhantomData,
        }
    }

    fn parse(&self, input: Value) -> Result<A> {
        serde_json::from_value(input).map_err(|e| {
            Error::invalid(
                "arguments",
                format!("{e}; expected JSON like {}", self.spec.expected_input()),
            )
        })
    }
}

#[async_trait]
impl<A, F> Tool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: for<'a> ToolFn<'a, A> + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn check(&self, input: &Value) -> Result<()> {
        self.parse(input.clone()).map(|_| ())
    }

    async fn call(&self, cx: &ToolContext<'_>, input: Value) -> Result<ToolOutput> {
        let args = self.parse(input)?;
        self.run.call(cx, args).await
    }
}

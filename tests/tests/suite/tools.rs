//! The `Tool` abstraction: every tool's schema is valid JSON Schema and
//! agrees with the argument type it was derived from; an embedding
//! application's tools are offered, called, journaled and approved like
//! built-in ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use helm_core::model::{ApprovalAction, ApprovalStatus, ChannelRef, ToolStatus, TurnState};
use helm_core::provider::{ChatMessage, ScriptedReply};
use helm_core::tool::{ApprovalClass, Tool, ToolContext, ToolOutput, ToolSource, TypedTool};
use helm_core::{Error, ErrorKind};
use helm_tests::TestHelm;
use serde_json::{Value, json};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

/// An argument type with every shape a tool's input takes: required and
/// optional fields, an enum, a list, a number, a flag.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct InvoiceArgs {
    /// The invoice number, such as INV-1042.
    number: String,
    /// Which ledger.
    #[serde(default)]
    ledger: Option<Ledger>,
    /// Lines to include.
    #[serde(default)]
    lines: Vec<String>,
    /// How many to show.
    #[serde(default)]
    limit: Option<u32>,
    /// Whether to include paid ones.
    #[serde(default)]
    paid: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Ledger {
    Sales,
    Purchases,
}

async fn fetch_invoice(cx: &ToolContext<'_>, args: InvoiceArgs) -> helm_core::Result<ToolOutput> {
    let who = cx.person().map(|u| u.name.clone()).unwrap_or_default();
    cx.files()?
        .write("invoices/last.txt", args.number.clone().into_bytes())
        .await?;
    Ok(ToolOutput::ok(
        format!(
            "{} is paid (asked by {who} in {})",
            args.number,
            cx.channel().channel.name
        ),
        format!("found {}", args.number),
    ))
}

fn invoice_tool(approval: ApprovalClass) -> Arc<dyn Tool> {
    Arc::new(TypedTool::new(
        "fetch_invoice",
        "Look an invoice up in the accounting system.",
        approval,
        fetch_invoice,
    ))
}

/// A value the schema `s` describes: every property (`full`) or only the
/// required ones.
fn sample(s: &Value, full: bool) -> Value {
    // An enum whose variants carry docs is a oneOf of consts.
    if let Some(value) = s.get("const") {
        return value.clone();
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        return values[0].clone();
    }
    if let Some(options) = s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
    {
        let first = options
            .iter()
            .find(|o| o.get("type") != Some(&json!("null")))
            .unwrap_or(&options[0]);
        return sample(first, full);
    }
    let kind = match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_string(),
        _ => "string".into(),
    };
    match kind.as_str() {
        "string" => json!("x"),
        "integer" => json!(3),
        "number" => json!(1.5),
        "boolean" => json!(true),
        "array" => json!([sample(s.get("items").unwrap_or(&json!({})), full)]),
        "object" => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = serde_json::Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (name, p) in props {
                    if full || required.contains(&name.as_str()) {
                        out.insert(name.clone(), sample(p, full));
                    }
                }
            }
            Value::Object(out)
        }
        _ => Value::Null,
    }
}

/// Whether the schema accepts a JSON object (so that a mutation can pick a
/// value of another type).
fn accepts_object(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        None => s
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|o| o.iter().any(accepts_object)),
        _ => false,
    }
}

/// Inputs around the schema's valid ones: each required property missing,
/// an unknown property, and per property a null, a value of the wrong
/// type and (for enums) a value that is not a variant.
fn mutations(schema: &Value) -> Vec<(String, Value)> {
    let full = sample(schema, true);
    let mut out = vec![("an unknown property".to_string(), {
        let mut v = full.clone();
        v["surprise"] = json!(1);
        v
    })];
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for name in &required {
        let mut v = full.clone();
        v.as_object_mut().map(|o| o.remove(name));
        out.push((format!("{name} missing"), v));
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            let wrong = if accepts_object(p) {
                json!(12)
            } else {
                json!({"wrong": true})
            };
            for (what, value) in [("null", Value::Null), ("the wrong type", wrong)] {
                let mut v = full.clone();
                v[name] = value;
                out.push((format!("{name} as {what}"), v));
            }
            let is_enum = p.get("enum").is_some()
                || p.get("anyOf")
                    .and_then(Value::as_array)
                    .is_some_and(|o| o.iter().any(|x| x.get("enum").is_some()));
            if is_enum {
                let mut v = full.clone();
                v[name] = json!("not-a-variant");
                out.push((format!("{name} not a variant"), v));
            }
        }
    }
    out
}

#[tokio::test]
async fn every_tool_schema_is_valid_json_schema_and_matches_its_argument_type() -> anyhow::Result<()>
{
    let t = TestHelm::new().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let launch: ChannelRef = "launch".parse()?;
    t.helm
        .register_channel_tool(&launch, invoice_tool(ApprovalClass::None))
        .await?;
    let mut tools = t.helm.channel_tools(&launch).await?;
    tools.extend(t.helm.channel_tools(&"main".parse()?).await?);
    let sources: Vec<&ToolSource> = tools.iter().map(|t| &t.source).collect();
    assert!(sources.contains(&&ToolSource::Builtin));
    assert!(sources.contains(&&ToolSource::Skipper));
    assert!(sources.contains(&&ToolSource::Embedder));
    assert!(tools.len() >= 25, "{} tools", tools.len());

    for entry in &tools {
        let spec = entry.tool.spec();
        let name = &spec.name;
        // Valid JSON Schema (draft 2020-12), checked against its meta-schema.
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        let url = format!("urn:helm:tool:{name}");
        compiler
            .add_resource(&url, spec.input_schema.clone())
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let index = compiler
            .compile(&url, &mut schemas)
            .map_err(|e| anyhow::anyhow!("{name}'s schema is not valid JSON Schema: {e:#}"))?;
        assert_eq!(spec.input_schema["type"], "object", "{name}");
        assert_eq!(
            spec.input_schema["additionalProperties"], false,
            "{name} accepts unknown properties"
        );
        assert!(!spec.description.is_empty(), "{name} has no description");

        // Valid inputs pass both the schema and the argument type…
        for full in [true, false] {
            let input = sample(&spec.input_schema, full);
            assert!(
                schemas.validate(&input, index).is_ok(),
                "{name}: the schema rejects its own sample {input}"
            );
            entry.tool.check(&input).map_err(|e| {
                anyhow::anyhow!("{name}: {input} fits the schema but not the type: {e}")
            })?;
        }
        // …and around them, the two agree on every input.
        for (what, input) in mutations(&spec.input_schema) {
            let by_schema = schemas.validate(&input, index).is_ok();
            let by_type = entry.tool.check(&input).is_ok();
            assert_eq!(
                by_schema, by_type,
                "{name} with {what} ({input}): the schema says {by_schema}, the type {by_type}"
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn an_embedders_tool_is_offered_called_and_journaled() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let launch: ChannelRef = "launch".parse()?;
    t.helm
        .register_channel_tool(&launch, invoice_tool(ApprovalClass::None))
        .await?;

    scripted.push(ScriptedReply::tool_calls(&[(
        "fetch_invoice",
        r#"{"number": "INV-1042", "ledger": "sales"}"#,
    )]));
    scripted.reply_text("INV-1042 is paid.");
    let posted = t
        .helm
        .post_message(&t.captain, &launch, "@launch-agent is INV-1042 paid?", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);

    // Offered with the schema derived from its argument type, after the built-ins.
    let requests = scripted.requests();
    let offered = requests[0]
        .tools
        .iter()
        .find(|s| s.name == "fetch_invoice")
        .ok_or_else(|| anyhow::anyhow!("not offered"))?;
    assert_eq!(offered.parameters["required"], json!(["number"]));
    assert_eq!(
        offered.parameters["properties"]["ledger"]["description"],
        "Which ledger."
    );
    assert_eq!(
        requests[0].tools.last().map(|s| s.name.as_str()),
        Some("fetch_invoice")
    );
    // Called with the turn's channel, person and computer.
    let result = requests[1].messages.iter().find_map(|m| match m {
        ChatMessage::Tool { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(
        result.as_deref(),
        Some("INV-1042 is paid (asked by captain in #launch)")
    );
    let record = t.helm.channel(&launch).await?;
    let written = t.data_dir().join(format!(
        "channels/{}/workspace/invoices/last.txt",
        record.channel.id
    ));
    assert_eq!(std::fs::read_to_string(written)?, "INV-1042");
    // Journaled (and audited) like any tool.
    let (_, actions) = t.helm.activity(&launch, Some(posted.thread.id), 10).await?;
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].tool, "fetch_invoice");
    assert_eq!(actions[0].status, ToolStatus::Ok);
    assert_eq!(actions[0].result_summary, "found INV-1042");
    let audit = t.helm.audit_log(&t.captain, None, 50).await?;
    assert!(audit.iter().any(|a| a.action == "tool:fetch_invoice"));

    // Names are checked: no shadowing a built-in, no MCP prefix, no twins.
    let clash = Arc::new(TypedTool::new(
        "write_file",
        "Shadow.",
        ApprovalClass::None,
        fetch_invoice,
    ));
    let err = t.helm.register_channel_tool(&launch, clash).await;
    assert!(matches!(err, Err(Error::Conflict(_))), "{err:?}");
    let err = t
        .helm
        .register_channel_tool(&launch, invoice_tool(ApprovalClass::None))
        .await;
    assert!(matches!(err, Err(Error::Conflict(_))), "{err:?}");
    let mcp = Arc::new(TypedTool::new(
        "mcp__x__y",
        "Not mine.",
        ApprovalClass::None,
        fetch_invoice,
    ));
    let err = t.helm.register_channel_tool(&launch, mcp).await;
    assert_eq!(err.map_err(|e| e.kind()).err(), Some(ErrorKind::Invalid));
    let bad = Arc::new(TypedTool::new(
        "has space",
        "Bad name.",
        ApprovalClass::None,
        fetch_invoice,
    ));
    let err = t.helm.register_channel_tool(&launch, bad).await;
    assert_eq!(err.map_err(|e| e.kind()).err(), Some(ErrorKind::Invalid));

    // Unregistered, it is no longer offered.
    t.helm
        .unregister_channel_tool(&launch, "fetch_invoice")
        .await?;
    let names: Vec<String> = t
        .helm
        .channel_tools(&launch)
        .await?
        .iter()
        .map(|t| t.tool.spec().name.clone())
        .collect();
    assert!(!names.contains(&"fetch_invoice".to_string()));
    let err = t
        .helm
        .unregister_channel_tool(&launch, "fetch_invoice")
        .await;
    assert_eq!(err.map_err(|e| e.kind()).err(), Some(ErrorKind::NotFound));
    Ok(())
}

/// A tool that counts its calls, asking for approval by its class.
struct Counted {
    spec: helm_core::tool::ToolSpec,
    calls: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl Tool for Counted {
    fn spec(&self) -> &helm_core::tool::ToolSpec {
        &self.spec
    }

    async fn call(&self, _cx: &ToolContext<'_>, _input: Value) -> helm_core::Result<ToolOutput> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("sent"))
    }
}

#[tokio::test]
async fn a_tool_that_needs_approval_waits_for_it_and_a_denied_call_never_runs() -> anyhow::Result<()>
{
    let t =
        TestHelm::with_options(|o| o.runtime.approval_timeout = Duration::from_secs(10)).await?;
    let scripted = t.scripted().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let launch: ChannelRef = "launch".parse()?;
    let member = t.member("bo").await?;
    let calls = Arc::new(AtomicUsize::new(0));
    let spec = helm_core::tool::ToolSpec::new(
        "send_newsletter",
        "Send the newsletter to every subscriber.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ApprovalClass::Always,
    )?;
    t.helm
        .register_channel_tool(
            &launch,
            Arc::new(Counted {
                spec,
                calls: calls.clone(),
            }),
        )
        .await?;

    // A member's request waits for the Captain, who denies it: never called.
    scripted.push(ScriptedReply::tool_calls(&[("send_newsletter", "{}")]));
    scripted.reply_text("It was not approved.");
    let posted = t
        .helm
        .post_message(&member, &launch, "@launch-agent send the newsletter", None)
        .await?;
    let approval = t
        .poll("the approval request", || async {
            Ok(t.helm.approvals(&t.captain, true).await?.into_iter().next())
        })
        .await?;
    assert_eq!(approval.action, ApprovalAction::ToolCall);
    assert!(
        approval.summary.contains("send_newsletter"),
        "{}",
        approval.summary
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "called before the decision"
    );
    t.helm.deny(&t.captain, approval.id, None).await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let (_, actions) = t.helm.activity(&launch, Some(posted.thread.id), 10).await?;
    assert_eq!(actions[0].status, ToolStatus::Denied);

    // Approved, it runs once.
    scripted.push(ScriptedReply::tool_calls(&[("send_newsletter", "{}")]));
    scripted.reply_text("Sent.");
    let posted = t
        .helm
        .post_message(&member, &launch, "@launch-agent try again", None)
        .await?;
    let approval = t
        .poll("the second approval request", || async {
            Ok(t.helm.approvals(&t.captain, true).await?.into_iter().next())
        })
        .await?;
    t.helm.approve(&t.captain, approval.id, None).await?;
    t.wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let decided = t.helm.approvals(&t.captain, false).await?;
    assert_eq!(
        decided.iter().map(|a| a.status).collect::<Vec<_>>(),
        [ApprovalStatus::Denied, ApprovalStatus::Approved]
    );
    Ok(())
}

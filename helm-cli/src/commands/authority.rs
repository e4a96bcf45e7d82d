//! `1helm approvals|approve|deny|escalations|audit`.

use anyhow::Result;
use helm_core::model::ApprovalAction;

use super::Ctx;
use crate::cli::{ApprovalsCommand, AuditArgs, DecideArgs, EscalationsCommand};
use crate::exit;
use crate::output::{clip, table};

pub async fn approvals(ctx: &Ctx, cmd: ApprovalsCommand) -> Result<i32> {
    let backend = ctx.backend().await?;
    match cmd {
        ApprovalsCommand::List { all } => {
            let list = backend.approvals(!all).await?;
            ctx.out.print(&list, || {
                if list.is_empty() {
                    return "No approval requests waiting.".to_string();
                }
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|a| {
                        vec![
                            a.id.to_string(),
                            a.status.to_string(),
                            a.action.to_string(),
                            a.channel_id.to_string(),
                            a.thread_id
                                .map(|t| t.to_string())
                                .unwrap_or_else(|| "-".into()),
                            a.expires.strftime("%H:%M:%S").to_string(),
                            clip(&a.summary, 60),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "ID",
                        "STATUS",
                        "ACTION",
                        "CHANNEL",
                        "THREAD",
                        "EXPIRES (UTC)",
                        "WHAT",
                    ],
                    &rows,
                )
            })?;
        }
        ApprovalsCommand::Require {
            action,
            required,
            channel,
        } => {
            let action: ApprovalAction = action.parse()?;
            backend
                .set_approval_rule(action, required == "yes", channel.as_deref())
                .await?;
            let value = serde_json::json!({ "action": action, "required": required == "yes" });
            ctx.out.print(&value, || {
                format!(
                    "{action} {} approval{}.",
                    if required == "yes" {
                        "needs"
                    } else {
                        "no longer needs"
                    },
                    channel.map(|c| format!(" in {c}")).unwrap_or_default()
                )
            })?;
        }
    }
    Ok(exit::OK)
}

pub async fn decide(ctx: &Ctx, args: DecideArgs, approve: bool) -> Result<i32> {
    let decided = ctx
        .backend()
        .await?
        .decide(args.id, approve, args.note)
        .await?;
    ctx.out.print(&decided, || {
        format!(
            "Approval {} {}: {}",
            decided.id, decided.status, decided.summary
        )
    })?;
    Ok(exit::OK)
}

pub async fn escalations(ctx: &Ctx, cmd: EscalationsCommand) -> Result<i32> {
    let EscalationsCommand::List { all } = cmd;
    let list = ctx.backend().await?.escalations(!all).await?;
    ctx.out.print(&list, || {
        if list.is_empty() {
            return "No open calls for Skipper.".to_string();
        }
        let rows: Vec<Vec<String>> = list
            .iter()
            .map(|e| {
                vec![
                    e.id.to_string(),
                    e.status.to_string(),
                    e.thread_id.to_string(),
                    if e.from_agent_id.is_some() {
                        "agent".into()
                    } else {
                        "person".into()
                    },
                    clip(&e.reason, 50),
                    clip(e.outcome.as_deref().unwrap_or("-"), 40),
                ]
            })
            .collect();
        table(
            &["ID", "STATUS", "THREAD", "FROM", "REASON", "OUTCOME"],
            &rows,
        )
    })?;
    Ok(exit::OK)
}

pub async fn audit(ctx: &Ctx, args: AuditArgs) -> Result<i32> {
    let backend = ctx.backend().await?;
    if args.verify.is_some() {
        let check = backend.verify_audit().await?;
        ctx.out
            .print(&check, || match (&check.first_bad_row, &check.problem) {
                (Some(row), Some(problem)) => format!(
                    "The audit log is NOT intact: row {row}: {problem}. ({} rows checked.)",
                    check.rows
                ),
                _ => format!(
                    "The audit log is intact: {} rows, every hash and link checks out.",
                    check.rows
                ),
            })?;
        return Ok(if check.intact() {
            exit::OK
        } else {
            exit::CONFLICT
        });
    }
    let rows = backend.audit(args.channel.as_deref(), args.limit).await?;
    ctx.out.print(&rows, || {
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|e| {
                vec![
                    e.id.to_string(),
                    e.at.strftime("%Y-%m-%d %H:%M:%S").to_string(),
                    e.channel_id
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "-".into()),
                    e.agent.clone().unwrap_or_else(|| "-".into()),
                    e.asker.clone().unwrap_or_else(|| "-".into()),
                    e.action.clone(),
                    clip(&e.input_summary, 40),
                    clip(&e.outcome, 30),
                ]
            })
            .collect();
        table(
            &[
                "ID",
                "WHEN (UTC)",
                "CHANNEL",
                "AGENT",
                "ASKER",
                "ACTION",
                "INPUT",
                "OUTCOME",
            ],
            &rows,
        )
    })?;
    Ok(exit::OK)
}

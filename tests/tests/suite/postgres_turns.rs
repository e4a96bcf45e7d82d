//! Turns and Skipper's authority on PostgreSQL: the same calls give the
//! same answers, events and audit rows as on SQLite (parity), and with two
//! nodes on one database a turn starts once and an approval or a call for
//! Skipper is decided once.
//!
//! The workspace, channel, threads and queued turns are seeded with plain
//! SQL into both stores (the areas that create them through the port land
//! on PostgreSQL separately); [`seed`] is the one place that does it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use helm_core::Error;
use helm_core::mcp::McpPin;
use helm_core::memory::recall::ItemKey;
use helm_core::model::{
    ApprovalAction, ApprovalStatus, ArtifactKind, CapabilityPolicy, ChannelId, EscalationId,
    EscalationStatus, MessageId, ModelChoice, PolicyLevel, ThreadId, ToolActionId, ToolStatus,
    TurnId, TurnModel, TurnState, UserId,
};
use helm_core::provider::Usage;
use helm_core::store::{
    Admission, AdmissionModel, AuthorityStore, CapabilityChange, EventStore, MemoryStore,
    NewApproval, NewEscalation, NewToolAction, PostgresStore, Resume, SqliteStore,
    ToolActionOutcome, TurnFinish, TurnStore,
};
use helm_tests::postgres::fresh_database;
use serde_json::{Value, json};
use tokio_postgres::NoTls;

const RESEARCH: ChannelId = ChannelId(2);
const MAIN: ChannelId = ChannelId(1);
const ADA: UserId = UserId(2);

/// The rows both stores start from: a workspace with its Captain and a
/// member (Ada), #main with Skipper, #research with its resident agent,
/// and `threads` threads in #research, thread `i` holding Ada's post
/// (message `2i - 1`), the agent's pending reply (`2i`) and queued turn `i`.
/// Statements are plain SQL both databases take.
fn seed(threads: i64) -> Vec<String> {
    let mut sql = vec![
        "INSERT INTO workspaces (id, name, created) VALUES (1, 'helm', 1000)".to_string(),
        "INSERT INTO users (id, workspace_id, name, display_name, role, created) VALUES \
         (1, 1, 'captain', 'Captain', 'captain', 1000), (2, 1, 'ada', 'Ada', 'member', 1000)"
            .into(),
        "INSERT INTO channels (id, workspace_id, name, purpose, kind, status, visibility, \
         created_by, created, status_changed) VALUES \
         (1, 1, 'main', 'Skipper''s home', 'home', 'active', 'public', 1, 1000, 1000), \
         (2, 1, 'research', 'Research things', 'agent', 'active', 'public', 1, 1000, 1000)"
            .into(),
        "INSERT INTO agents (id, workspace_id, kind, name, display_name, status, created) \
         VALUES (1, 1, 'skipper', 'skipper', 'Skipper', 'ready', 1000), \
         (2, 1, 'channel', 'research', 'Research', 'ready', 1000)"
            .into(),
        "INSERT INTO agent_channels (agent_id, channel_id, bound_at) VALUES (2, 2, 1000)".into(),
        "INSERT INTO agent_profiles (agent_id, purpose, instructions, workspace_ref, \
         memory_namespace, capability_policy, updated) VALUES \
         (1, 'lead', '', 'channels/1', 'channel:1', '{}', 1000), \
         (2, 'Research things', '', 'channels/2', 'channel:2', '{}', 1000)"
            .into(),
    ];
    for i in 1..=threads {
        sql.push(format!(
            "INSERT INTO threads (id, channel_id, title, status, summary, opened_by, opened_at, \
             updated_at) VALUES ({i}, 2, 'thread {i}', 'open', '', 2, 1000, 1000)"
        ));
        sql.push(queued_turn(i, i, 2 * i - 1, 0));
    }
    sql
}

/// Ada's post `trigger` (and the reply after it) in `thread`, and the
/// queued turn `turn` it woke.
fn queued_turn(turn: i64, thread: i64, trigger: i64, hop: i64) -> String {
    let reply = trigger + 1;
    format!(
        "INSERT INTO messages (id, channel_id, thread_id, author_kind, author_user_id, \
         author_agent_id, author_name, content, status, created, updated) VALUES \
         ({trigger}, 2, {thread}, 'human', 2, NULL, 'ada', '@research look', 'complete', 1000, 1000), \
         ({reply}, 2, {thread}, 'agent', NULL, 2, 'research', '', 'pending', 1000, 1000); \
         INSERT INTO turns (id, channel_id, thread_id, agent_id, trigger_message_id, \
         reply_message_id, requested_by, state, queued_at, hop, provider, model, model_level) \
         VALUES ({turn}, 2, {thread}, 2, {trigger}, {reply}, 2, 'queued', {queued}, {hop}, \
         'mock', 'mock-1', 'channel')",
        queued = 1000 + turn,
    )
}

/// Identity columns to move past explicitly seeded ids (SQLite's
/// AUTOINCREMENT follows on its own).
const IDENTITIES: &[&str] = &[
    "workspaces",
    "users",
    "channels",
    "agents",
    "threads",
    "messages",
    "turns",
];

async fn pg_client(url: &str) -> anyhow::Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

async fn seed_postgres(url: &str, sql: &[String]) -> anyhow::Result<()> {
    let client = pg_client(url).await?;
    for statement in sql {
        client.batch_execute(statement).await?;
    }
    for table in IDENTITIES {
        client
            .batch_execute(&format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                 (SELECT max(id) FROM {table}))"
            ))
            .await?;
    }
    Ok(())
}

fn seed_sqlite(path: &Path, sql: &[String]) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    for statement in sql {
        conn.execute_batch(statement)?;
    }
    Ok(())
}

/// A fresh SQLite store and a fresh PostgreSQL store, both seeded alike.
async fn pair(sql: &[String]) -> anyhow::Result<(SqliteStore, PostgresStore, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("helm.db");
    let sqlite = SqliteStore::open(&path).await?;
    seed_sqlite(&path, sql)?;
    let url = fresh_database().await?;
    let postgres = PostgresStore::connect(&url).await?;
    seed_postgres(&url, sql).await?;
    Ok((sqlite, postgres, dir))
}

/// A result as comparable JSON: times and durations removed (the stores
/// ran at different moments), errors as their message.
fn shown<T: serde::Serialize>(result: Result<T, Error>) -> Value {
    match result {
        Ok(value) => timeless(serde_json::to_value(value).unwrap_or(Value::Null)),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

const TIMES: &[&str] = &[
    "queued_at",
    "started_at",
    "finished_at",
    "created",
    "updated_at",
    "opened_at",
    "expires",
    "pinned_at",
    "at",
    // A call cancelled with its turn measures how long it ran.
    "duration_ms",
];

fn timeless(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !TIMES.contains(&k.as_str()))
                .map(|(k, v)| (k, timeless(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(timeless).collect()),
        // An approval card names its expiry's clock time.
        Value::String(s) => Value::String(without_clock(&s)),
        other => other,
    }
}

/// `s` with each `HH:MM UTC` replaced by `--:-- UTC`.
fn without_clock(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let clock = bytes.len() >= i + 9
            && bytes[i].is_ascii_digit()
            && bytes[i + 1].is_ascii_digit()
            && bytes[i + 2] == b':'
            && bytes[i + 3].is_ascii_digit()
            && bytes[i + 4].is_ascii_digit()
            && &bytes[i + 5..i + 9] == b" UTC";
        if clock {
            out.push_str("--:-- UTC");
            i += 9;
        } else {
            let c = s[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// What a store has written: its event log and its audit log, timeless.
async fn written(store: &(impl EventStore + ?Sized)) -> anyhow::Result<Value> {
    let events: Vec<Value> = store
        .events_after(0, 10_000)
        .await?
        .into_iter()
        .map(|e| json!({ "seq": e.seq, "channel": e.channel_id, "body": e.body }))
        .collect();
    let audit: Vec<Value> = store
        .audit_log(None, 1000)
        .await?
        .into_iter()
        .map(|a| {
            json!([
                a.action,
                a.agent,
                a.asker,
                a.channel_id,
                a.thread_id,
                a.input_summary,
                a.outcome
            ])
        })
        .collect();
    Ok(timeless(json!({ "events": events, "audit": audit })))
}

/// Asserts two transcripts agree step by step (the first difference named).
fn same(sqlite: &[(String, Value)], postgres: &[(String, Value)]) {
    for (s, p) in sqlite.iter().zip(postgres) {
        assert_eq!(s, p, "SQLite and PostgreSQL differ at step {:?}", s.0);
    }
    assert_eq!(sqlite.len(), postgres.len());
}

fn finish(state: TurnState, reply: &str, note: Option<&str>) -> TurnFinish {
    TurnFinish {
        state,
        reply: reply.into(),
        error: None,
        note: note.map(str::to_string),
        steps: 2,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
        },
    }
}

/// The turn lifecycle, the tool journal, artifacts and repairs, as one
/// script run against either store.
async fn turn_script(
    s: &(impl TurnStore + EventStore + MemoryStore),
) -> anyhow::Result<Vec<(String, Value)>> {
    // Whether the word search finds turn 1's reply (message 2) by its word.
    let hello = || async {
        let hits = s
            .recall_lexical(RESEARCH, &["hello".to_string()], 10, None)
            .await?;
        let reply = ItemKey::message(MessageId(2));
        anyhow::Ok(json!(hits.iter().any(|(k, _)| *k == reply)))
    };
    let mut out = Vec::new();
    let mut log = |step: &str, value: Value| out.push((step.to_string(), value));
    log("runnable 2", shown(s.runnable_turns(2).await));
    log("runnable 1", shown(s.runnable_turns(1).await));
    log("start 1", shown(s.start_turn(TurnId(1), None).await));
    log("start 1 again", shown(s.start_turn(TurnId(1), None).await));
    log(
        "start 4 (same thread)",
        shown(s.start_turn(TurnId(4), None).await),
    );
    log("runnable 1 at capacity", shown(s.runnable_turns(1).await));
    log("running", shown(s.running_turns().await));
    log(
        "delta 1",
        shown(s.append_reply(TurnId(1), "Hel".into()).await),
    );
    log(
        "delta 2",
        shown(s.append_reply(TurnId(1), "lo".into()).await),
    );
    log("words of a streaming reply", hello().await?);
    log(
        "delta to a queued turn",
        shown(s.append_reply(TurnId(2), "no".into()).await),
    );
    log(
        "delta to no turn",
        shown(s.append_reply(TurnId(99), "no".into()).await),
    );
    let tool = |turn: i64, tool: &str| NewToolAction {
        agent_id: helm_core::model::AgentId(2),
        channel_id: RESEARCH,
        thread_id: Some(ThreadId(1)),
        turn_id: (turn > 0).then_some(TurnId(turn)),
        step: 1,
        tool: tool.into(),
        input_summary: format!("{tool} input"),
    };
    log(
        "tool start",
        shown(s.start_tool_action(tool(1, "run")).await),
    );
    log(
        "tool finish",
        shown(
            s.finish_tool_action(
                ToolActionId(1),
                ToolActionOutcome {
                    status: ToolStatus::Ok,
                    result_summary: "fine".into(),
                    duration_ms: Some(12),
                    isolation: Some("sandbox".into()),
                    output: Some("exit code 0\nstdout:\nfine\n".into()),
                },
            )
            .await,
        ),
    );
    log(
        "tool finish again",
        shown(
            s.finish_tool_action(
                ToolActionId(1),
                ToolActionOutcome {
                    status: ToolStatus::Error,
                    result_summary: "late".into(),
                    duration_ms: None,
                    isolation: None,
                    output: None,
                },
            )
            .await,
        ),
    );
    log(
        "tool left running",
        shown(s.start_tool_action(tool(1, "fetch")).await),
    );
    log(
        "artifacts",
        shown(
            s.record_artifacts(
                RESEARCH,
                Some(ThreadId(1)),
                ArtifactKind::File,
                "@research",
                vec!["/workspace/a.md".into(), "/workspace/b.md".into()],
                true,
            )
            .await,
        ),
    );
    log(
        "artifacts rescan",
        shown(
            s.record_artifacts(
                RESEARCH,
                None,
                ArtifactKind::File,
                "terminal",
                vec!["/workspace/a.md".into(), "/workspace/c.md".into()],
                false,
            )
            .await,
        ),
    );
    log(
        "artifacts of channel",
        shown(s.artifacts(RESEARCH, None).await),
    );
    log(
        "artifacts of thread",
        shown(s.artifacts(RESEARCH, Some(ThreadId(1))).await),
    );
    log(
        "finish 1",
        shown(
            s.finish_turn(
                TurnId(1),
                finish(TurnState::Completed, "Hello there @captain", Some("done")),
            )
            .await,
        ),
    );
    log("words of the final reply", hello().await?);
    log(
        "finish 1 again",
        shown(
            s.finish_turn(TurnId(1), finish(TurnState::Failed, "x", None))
                .await,
        ),
    );
    log(
        "late delta",
        shown(s.append_reply(TurnId(1), "late".into()).await),
    );
    log(
        "not an end state",
        shown(
            s.finish_turn(TurnId(2), finish(TurnState::Running, "x", None))
                .await,
        ),
    );
    log(
        "journal",
        shown(s.tool_actions(RESEARCH, None, None, 10).await),
    );
    // The page back from action 2: only what is older, on both stores.
    let older = s
        .tool_actions(RESEARCH, None, Some(ToolActionId(2)), 10)
        .await?;
    assert_eq!(
        older.iter().map(|a| a.id).collect::<Vec<_>>(),
        [ToolActionId(1)],
        "the journal before action 2"
    );
    log("journal before 2", shown(Ok(older)));
    log(
        "journal of thread, last 1",
        shown(s.tool_actions(RESEARCH, Some(ThreadId(1)), None, 1).await),
    );
    log("runnable after", shown(s.runnable_turns(1).await));
    // A queued turn can be ended (cancelled) without starting.
    log(
        "cancel queued 4",
        shown(
            s.finish_turn(TurnId(4), finish(TurnState::Cancelled, "", None))
                .await,
        ),
    );
    // A stop: turn 2 runs with a tool call and an orphan call, then the
    // driver marks running turns interrupted and repairs.
    log(
        "start 2",
        shown(
            s.start_turn(
                TurnId(2),
                Some(ModelChoice {
                    provider: "other".into(),
                    model: Some("o".into()),
                }),
            )
            .await,
        ),
    );
    log(
        "tool of 2",
        shown(s.start_tool_action(tool(2, "run")).await),
    );
    log(
        "orphan tool",
        shown(s.start_tool_action(tool(0, "run")).await),
    );
    log("running before stop", shown(s.running_turns().await));
    for turn in s.running_turns().await? {
        log(
            "interrupt",
            shown(
                s.finish_turn(
                    turn.id,
                    TurnFinish {
                        error: Some("Helm stopped".into()),
                        ..finish(TurnState::Interrupted, "", None)
                    },
                )
                .await,
            ),
        );
    }
    log(
        "repair",
        shown(
            s.repair_after_stop()
                .await
                .map(|r| json!({ "tool_actions": r.tool_actions, "threads": r.threads })),
        ),
    );
    log(
        "repair again",
        shown(
            s.repair_after_stop()
                .await
                .map(|r| json!({ "tool_actions": r.tool_actions, "threads": r.threads })),
        ),
    );
    log("counts", shown(s.turn_counts().await));
    log("hops", shown(s.turn_hops_since(ThreadId(1), None).await));
    log(
        "hops since",
        shown(
            s.turn_hops_since(ThreadId(1), Some(jiff::Timestamp::from_millisecond(1002)?))
                .await,
        ),
    );
    log("thread 1 turns", shown(s.thread_turns(ThreadId(1)).await));
    log("thread 3 turns", shown(s.thread_turns(ThreadId(3)).await));
    log("turn 3", shown(s.turn(TurnId(3)).await));
    log("no turn", shown(s.turn(TurnId(99)).await));
    log("written", written(s).await?);
    Ok(out)
}

/// Thread 1 also has turn 4 (an agent's hop), and thread 3 is failed with
/// a completed turn: what repairs bring back to open.
fn turn_seed() -> Vec<String> {
    let mut sql = seed(3);
    sql.push(queued_turn(4, 1, 7, 1));
    sql.push(
        "UPDATE turns SET state = 'completed', started_at = 1100, finished_at = 1200 \
         WHERE id = 3; UPDATE threads SET status = 'failed' WHERE id = 3"
            .into(),
    );
    sql
}

#[tokio::test]
async fn the_turn_lifecycle_matches_sqlite() -> anyhow::Result<()> {
    let (sqlite, postgres, _dir) = pair(&turn_seed()).await?;
    let expected = turn_script(&sqlite).await?;
    let got = turn_script(&postgres).await?;
    same(&expected, &got);
    // The script did what it meant to (parity alone would pass two
    // stores that both did nothing).
    let step = |name: &str| {
        &expected
            .iter()
            .find(|(s, _)| s == name)
            .unwrap_or_else(|| panic!("no step {name}"))
            .1
    };
    assert_eq!(step("start 1")["state"], "running");
    assert_eq!(step("start 1 again"), &Value::Null);
    assert_eq!(step("delta 2"), &json!(true));
    assert_eq!(step("late delta"), &json!(false));
    // A reply's words are searched once it is final, not while it streams.
    assert_eq!(step("words of a streaming reply"), &json!(false));
    assert_eq!(step("words of the final reply"), &json!(true));
    assert_eq!(step("repair"), &json!({ "tool_actions": 1, "threads": 1 }));
    let events = step("written")["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        !events.iter().any(|e| e["body"]["type"] == "message.delta"),
        "a finished reply's deltas leave the log"
    );
    Ok(())
}

fn admission() -> Admission {
    Admission {
        model: AdmissionModel::Chosen(TurnModel {
            provider: "mock".into(),
            model: "mock-1".into(),
            level: PolicyLevel::Workspace,
        }),
        capacity: 2,
    }
}

fn escalated(result: Result<helm_core::store::Escalated, Error>) -> Result<Value, Error> {
    result.map(|e| json!({ "escalation": e.escalation, "turn": e.turn, "added": e.added }))
}

fn escalation(thread: i64, reason: &str) -> NewEscalation {
    NewEscalation {
        thread_id: ThreadId(thread),
        from_agent_id: Some(helm_core::model::AgentId(2)),
        from_agent_handle: Some("@research".into()),
        from_user_id: None,
        reason: reason.into(),
        requested_by: Some(ADA),
        hop: 1,
        admission: admission(),
    }
}

fn approval(thread: Option<i64>, approved_by: Option<UserId>) -> NewApproval {
    NewApproval {
        channel_id: RESEARCH,
        thread_id: thread.map(ThreadId),
        turn_id: thread.map(TurnId),
        agent_id: Some(helm_core::model::AgentId(2)),
        agent_handle: Some("@research".into()),
        asker_id: Some(ADA),
        action: ApprovalAction::InstallPackage,
        summary: "install ripgrep".into(),
        reason: "to search".into(),
        expires_in_ms: 3_600_000,
        approved_by,
    }
}

fn pin(tool: &str, hash: &str) -> McpPin {
    McpPin {
        channel_id: RESEARCH,
        server: "files".into(),
        tool: tool.into(),
        hash: hash.into(),
        description: format!("{tool} files"),
        input_schema: json!({ "type": "object" }),
        approval_id: None,
        approved_by: Some(UserId(1)),
        pinned_at: jiff::Timestamp::now(),
    }
}

/// Escalations, approvals and their rules, capabilities and pins, as one
/// script run against either store.
async fn authority_script(
    s: &(impl AuthorityStore + TurnStore + EventStore),
) -> anyhow::Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    let mut log = |step: &str, value: Value| out.push((step.to_string(), value));
    log(
        "escalate",
        shown(escalated(s.escalate(escalation(2, "which source?")).await)),
    );
    log(
        "escalate again",
        shown(escalated(s.escalate(escalation(2, "and when?")).await)),
    );
    log("open", shown(s.escalations(true).await));
    log(
        "settle",
        shown(
            s.settle_escalation(
                EscalationId(1),
                EscalationStatus::Resolved,
                "use the archive".into(),
                Some(Resume {
                    requested_by: Some(ADA),
                    hop: 2,
                    admission: admission(),
                }),
            )
            .await,
        ),
    );
    log(
        "settle again",
        shown(
            s.settle_escalation(
                EscalationId(1),
                EscalationStatus::HandedToCaptain,
                "x".into(),
                None,
            )
            .await,
        ),
    );
    log(
        "settle missing",
        shown(
            s.settle_escalation(
                EscalationId(9),
                EscalationStatus::Resolved,
                "x".into(),
                None,
            )
            .await,
        ),
    );
    log(
        "escalate elsewhere",
        shown(escalated(s.escalate(escalation(1, "budget?")).await)),
    );
    log(
        "hand to the Captain",
        shown(
            s.settle_escalation(
                EscalationId(2),
                EscalationStatus::HandedToCaptain,
                "the Captain decides budgets".into(),
                None,
            )
            .await,
        ),
    );
    log("escalation 1", shown(s.escalation(EscalationId(1)).await));
    log(
        "escalation missing",
        shown(s.escalation(EscalationId(9)).await),
    );
    log("all escalations", shown(s.escalations(false).await));
    log("open escalations", shown(s.escalations(true).await));
    log("thread 2 turns", shown(s.thread_turns(ThreadId(2)).await));

    log(
        "required by default",
        shown(
            s.approval_required(RESEARCH, ApprovalAction::InstallPackage)
                .await,
        ),
    );
    log(
        "workspace rule",
        shown(
            s.set_approval_rule(None, ApprovalAction::InstallPackage, false)
                .await,
        ),
    );
    log(
        "workspace rule again",
        shown(
            s.set_approval_rule(None, ApprovalAction::InstallPackage, false)
                .await,
        ),
    );
    log(
        "required by workspace",
        shown(
            s.approval_required(RESEARCH, ApprovalAction::InstallPackage)
                .await,
        ),
    );
    log(
        "channel rule",
        shown(
            s.set_approval_rule(Some(RESEARCH), ApprovalAction::InstallPackage, true)
                .await,
        ),
    );
    log(
        "required by channel",
        shown(
            s.approval_required(RESEARCH, ApprovalAction::InstallPackage)
                .await,
        ),
    );
    log(
        "required elsewhere",
        shown(
            s.approval_required(MAIN, ApprovalAction::InstallPackage)
                .await,
        ),
    );
    log(
        "request",
        shown(s.request_approval(approval(Some(1), None)).await),
    );
    log(
        "request self-approved",
        shown(s.request_approval(approval(None, Some(UserId(1)))).await),
    );
    log("pending", shown(s.approvals(true).await));
    log(
        "approve",
        shown(
            s.decide_approval(
                1,
                ApprovalStatus::Approved,
                Some(UserId(1)),
                Some("go ahead".into()),
            )
            .await,
        ),
    );
    log(
        "deny after approval",
        shown(
            s.decide_approval(1, ApprovalStatus::Denied, Some(UserId(1)), None)
                .await,
        ),
    );
    log(
        "decide missing",
        shown(
            s.decide_approval(9, ApprovalStatus::Denied, None, None)
                .await,
        ),
    );
    log(
        "request 3",
        shown(s.request_approval(approval(Some(3), None)).await),
    );
    log(
        "expire",
        shown(
            s.decide_approval(3, ApprovalStatus::Expired, None, None)
                .await,
        ),
    );
    log("approval 1", shown(s.approval(1).await));
    log("approval missing", shown(s.approval(9).await));
    log("approvals", shown(s.approvals(false).await));

    let change = |revoke: bool, channel: ChannelId| CapabilityChange {
        channel_id: channel,
        policy: CapabilityPolicy {
            network: !revoke,
            ..CapabilityPolicy::default()
        },
        capability: "network".into(),
        detail: json!({ "why": "fetch papers" }),
        description: "network access".into(),
        revoke,
        by: "@skipper".into(),
        asker: Some("ada".into()),
        announce_in: (!revoke).then_some((MAIN, ThreadId(1))),
    };
    log(
        "grant",
        shown(s.change_capabilities(change(false, RESEARCH)).await),
    );
    log(
        "revoke",
        shown(s.change_capabilities(change(true, RESEARCH)).await),
    );
    log(
        "grant to #main",
        shown(s.change_capabilities(change(false, MAIN)).await),
    );
    log(
        "grant to no channel",
        shown(s.change_capabilities(change(false, ChannelId(9))).await),
    );

    log(
        "pin read",
        shown(
            s.put_mcp_pin(pin("read", "h1"), Some("captain".into()))
                .await,
        ),
    );
    log(
        "pin write",
        shown(s.put_mcp_pin(pin("write", "h2"), None).await),
    );
    log(
        "repin read",
        shown(
            s.put_mcp_pin(pin("read", "h3"), Some("captain".into()))
                .await,
        ),
    );
    log("pins", shown(s.mcp_pins(RESEARCH, "files").await));
    log(
        "pins of another server",
        shown(s.mcp_pins(RESEARCH, "web").await),
    );
    log("clear", shown(s.clear_mcp_pins(RESEARCH, "files").await));
    log(
        "clear again",
        shown(s.clear_mcp_pins(RESEARCH, "files").await),
    );
    // Last: a refused call rolls back, and PostgreSQL's sequences keep
    // the ids it took (SQLite gives them out again), so later ids would differ.
    log(
        "escalate unavailable",
        shown(escalated(
            s.escalate(NewEscalation {
                admission: Admission {
                    model: AdmissionModel::Unavailable("no provider".into()),
                    capacity: 1,
                },
                ..escalation(3, "help")
            })
            .await,
        )),
    );
    log("written", written(s).await?);
    Ok(out)
}

#[tokio::test]
async fn authority_matches_sqlite() -> anyhow::Result<()> {
    let (sqlite, postgres, _dir) = pair(&seed(3)).await?;
    let expected = authority_script(&sqlite).await?;
    let got = authority_script(&postgres).await?;
    same(&expected, &got);
    let step = |name: &str| {
        &expected
            .iter()
            .find(|(s, _)| s == name)
            .unwrap_or_else(|| panic!("no step {name}"))
            .1
    };
    assert_eq!(step("escalate again")["added"], true);
    assert!(
        step("settle again")["error"]
            .as_str()
            .is_some_and(|e| e.contains("already resolved")),
        "{}",
        step("settle again")
    );
    assert!(
        step("deny after approval")["error"]
            .as_str()
            .is_some_and(|e| e.contains("already approved")),
        "{}",
        step("deny after approval")
    );
    assert_eq!(step("required by workspace"), &json!(false));
    assert_eq!(step("required by channel"), &json!(true));
    assert_eq!(step("clear"), &json!(2));
    Ok(())
}

/// Two nodes on one database.
async fn two_nodes(threads: i64) -> anyhow::Result<(PostgresStore, PostgresStore, String)> {
    let url = fresh_database().await?;
    let a = PostgresStore::connect(&url).await?;
    seed_postgres(&url, &seed(threads)).await?;
    let b = PostgresStore::connect(&url).await?;
    Ok((a, b, url))
}

#[tokio::test]
async fn two_nodes_racing_start_each_turn_once() -> anyhow::Result<()> {
    const TURNS: i64 = 24;
    let (a, b, url) = two_nodes(TURNS).await?;
    // Thread 1 also has a second queued turn: at most one of a thread's
    // turns runs, whichever node starts it.
    seed_postgres(&url, &[queued_turn(TURNS + 1, 1, 2 * TURNS + 1, 0)]).await?;
    let ids: Vec<TurnId> = (1..=TURNS + 1).map(TurnId).collect();
    let race = |store: PostgresStore, ids: Vec<TurnId>, reverse: bool| {
        tokio::spawn(async move {
            let mut order = ids;
            if reverse {
                order.reverse();
            }
            let mut won = Vec::new();
            for id in order {
                if let Some(turn) = store.start_turn(id, None).await? {
                    won.push(turn.id);
                }
            }
            anyhow::Ok(won)
        })
    };
    // Each node walks the queue from one end, and both at once from the
    // same end, so they meet on every turn.
    let (a1, b1, a2, b2) = tokio::join!(
        race(a.clone(), ids.clone(), false),
        race(b.clone(), ids.clone(), false),
        race(a.clone(), ids.clone(), true),
        race(b.clone(), ids.clone(), true),
    );
    let mut wins: HashMap<TurnId, usize> = HashMap::new();
    for won in [a1??, b1??, a2??, b2??] {
        for id in won {
            *wins.entry(id).or_default() += 1;
        }
    }
    // Thread 1's turns come first, since either may win it: a walker from
    // the end can start turn TURNS + 1 before any reaches turn 1.
    let thread_one: Vec<usize> = [TurnId(1), TurnId(TURNS + 1)]
        .iter()
        .filter_map(|id| wins.get(id).copied())
        .collect();
    assert_eq!(
        thread_one,
        [1],
        "one of thread 1's turns runs, once: {wins:?}"
    );
    for id in 2..=TURNS {
        assert_eq!(wins.get(&TurnId(id)), Some(&1), "turn {id} started once");
    }
    assert_eq!(a.running_turns().await?.len(), TURNS as usize);
    // Each started once: one turn.started event per turn in the log.
    let started = a
        .events_after(0, 10_000)
        .await?
        .iter()
        .filter(|e| e.body.type_name() == "turn.started")
        .count();
    assert_eq!(started, TURNS as usize);
    // Each claim leased the turn with token 1.
    let lease = a
        .turn_lease(TurnId(2))
        .await?
        .context("a running turn's lease")?;
    assert_eq!(lease.token, 1);
    assert!(lease.expires > jiff::Timestamp::now());
    Ok(())
}

#[tokio::test]
async fn a_stale_fencing_token_cannot_write_the_turn() -> anyhow::Result<()> {
    let (a, b, url) = two_nodes(1).await?;
    let (turn, token) = a
        .claim_turn(TurnId(1), None)
        .await?
        .context("the queued turn is claimed")?;
    assert_eq!(turn.state, TurnState::Running);
    assert!(a.renew_turn_lease(turn.id, token).await?);
    assert!(a.append_reply_fenced(turn.id, token, "mine".into()).await?);
    // Another node takes the turn over (stage 3 does so once the lease
    // lapsed): the claim counter moves on.
    pg_client(&url)
        .await?
        .batch_execute("UPDATE turns SET lease_token = lease_token + 1 WHERE id = 1")
        .await?;
    assert!(!a.renew_turn_lease(turn.id, token).await?);
    assert!(
        !a.append_reply_fenced(turn.id, token, "stale".into())
            .await?
    );
    let ended = a
        .finish_turn_fenced(turn.id, token, finish(TurnState::Completed, "stale", None))
        .await?;
    assert!(ended.is_none(), "a stale token does not end the turn");
    let ended = b
        .finish_turn_fenced(
            turn.id,
            token + 1,
            finish(TurnState::Completed, "the new owner's", None),
        )
        .await?
        .context("the current token ends it")?;
    assert_eq!(ended.state, TurnState::Completed);
    assert!(
        b.turn_lease(turn.id).await?.is_none(),
        "an ended turn has no lease"
    );
    Ok(())
}

#[tokio::test]
async fn two_nodes_deciding_one_approval_decide_it_once() -> anyhow::Result<()> {
    let (a, b, _url) = two_nodes(2).await?;
    let (a, b) = (Arc::new(a), Arc::new(b));
    for round in 0..8 {
        let asked = a.request_approval(approval(Some(1), None)).await?;
        let decide = |store: Arc<PostgresStore>, status| {
            let id = asked.id;
            tokio::spawn(async move {
                store
                    .decide_approval(id, status, Some(UserId(1)), None)
                    .await
            })
        };
        let (x, y) = tokio::join!(
            decide(a.clone(), ApprovalStatus::Approved),
            decide(b.clone(), ApprovalStatus::Denied)
        );
        let (x, y) = (x?, y?);
        let (winner, loser) = match (&x, &y) {
            (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w.clone(), l.to_string()),
            _ => panic!("round {round}: exactly one decides: {x:?} / {y:?}"),
        };
        assert_eq!(
            loser,
            format!("approval {} is already {}", asked.id, winner.status),
            "round {round}"
        );
        assert_eq!(b.approval(asked.id).await?.status, winner.status);
    }
    // A call for Skipper is settled once too.
    let called = a.escalate(escalation(2, "which source?")).await?;
    let settle = |store: Arc<PostgresStore>, status| {
        let id = called.escalation.id;
        tokio::spawn(async move {
            store
                .settle_escalation(id, status, "settled".into(), None)
                .await
        })
    };
    let (x, y) = tokio::join!(
        settle(a.clone(), EscalationStatus::Resolved),
        settle(b.clone(), EscalationStatus::HandedToCaptain)
    );
    let (x, y) = (x?, y?);
    assert!(x.is_ok() != y.is_ok(), "exactly one settles: {x:?} / {y:?}");
    // Two calls in one thread at once are one call and an addition.
    let (x, y) = tokio::join!(
        a.escalate(escalation(1, "first")),
        b.escalate(escalation(1, "second"))
    );
    let (x, y) = (x?, y?);
    assert_eq!(x.escalation.id, y.escalation.id);
    assert!(x.added != y.added, "one opens, one adds");
    Ok(())
}

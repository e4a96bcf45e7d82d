//! The agent turn, end to end through the facade with a scripted model:
//! waking rules, the tool loop, the journal, queueing, capacity, stop,
//! failures and model changes.

use std::sync::Arc;

use helm_core::events::EventBody;
use helm_core::model::{
    AgentStatus, Author, ChannelRef, MessageStatus, ThreadStatus, ToolStatus, TurnState,
};
use helm_core::provider::{ChatMessage, Scripted, ScriptedReply, StreamEvent};
use helm_core::store::PolicyScope;
use helm_core::{ErrorKind, ProviderFailure};
use helm_tests::TestHelm;
use tokio::sync::Notify;

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

async fn launch(t: &TestHelm) -> anyhow::Result<ChannelRef> {
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    Ok("launch".parse()?)
}

#[tokio::test]
async fn the_captain_asks_for_a_plan_and_a_second_human_sees_it() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    scripted.push(ScriptedReply::tool_calls(&[(
        "write_file",
        r##"{"path": "launch-plan.md", "content": "# Launch plan\n1. Beta\n2. GA\n"}"##,
    )]));
    scripted.reply_text("I wrote the plan to /workspace/launch-plan.md: beta first, then GA.");

    let posted = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent please write a launch plan",
            None,
        )
        .await?;
    assert!(posted.thread_created);
    let turn = posted
        .turn
        .ok_or_else(|| anyhow::anyhow!("the mention woke no turn"))?;
    let turn = t.wait_turn(turn.id).await?;
    assert_eq!(turn.state, TurnState::Completed);
    assert_eq!(turn.steps, 2);

    // The file is in the channel's workspace.
    let record = t.helm.channel(&ch).await?;
    let plan = t
        .helm
        .data_root()
        .world(record.channel.id)
        .workspace()
        .join("launch-plan.md");
    assert_eq!(
        std::fs::read_to_string(plan)?,
        "# Launch plan\n1. Beta\n2. GA\n"
    );

    // The reply and the tool action are in the thread.
    let messages = t.helm.thread_messages(posted.thread.id).await?;
    let reply = messages
        .iter()
        .find(|m| m.id == turn.reply_message_id)
        .ok_or_else(|| anyhow::anyhow!("no reply"))?;
    assert_eq!(reply.status, MessageStatus::Complete);
    assert!(
        reply.content.contains("launch-plan.md"),
        "{}",
        reply.content
    );
    assert_eq!(
        reply.served_by.as_ref().map(|m| m.provider.as_str()),
        Some("scripted")
    );
    let (_, actions) = t.helm.activity(&ch, Some(posted.thread.id), 10).await?;
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].tool, "write_file");
    assert_eq!(actions[0].status, ToolStatus::Ok);
    assert_eq!(actions[0].turn_id, Some(turn.id));
    assert!(
        actions[0].input_summary.contains("launch-plan.md"),
        "{}",
        actions[0].input_summary
    );

    // The model got identity, purpose, the workspace contract and the tools.
    let first = &scripted.requests()[0];
    assert!(first.system.contains("@launch-agent"));
    assert!(first.system.contains(PURPOSE));
    assert!(first.system.contains("/workspace"));
    // And where people edit files with it, in which forms.
    assert!(
        first.system.contains("presentations/ (Markdown slides")
            && first.system.contains("whiteboards/ (standalone SVG"),
        "{}",
        first.system
    );
    let names: Vec<&str> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "run_command",
            "read_file",
            "write_file",
            "list_files",
            "remember",
            "recall",
            "record_decision",
            "call_skipper"
        ]
    );
    // The second call carried the tool result back.
    assert!(scripted.requests()[1]
        .messages
        .iter()
        .any(|m| matches!(m, ChatMessage::Tool { content, is_error: false, .. } if content.contains("wrote"))));

    // A second human sees the same thread and continues it with the same agent.
    let mira = t.member("mira").await?;
    scripted.reply_text("Beta is on the 3rd.");
    let follow = t
        .helm
        .post_message(
            &mira,
            &ch,
            "@launch-agent when is the beta?",
            Some(posted.thread.id),
        )
        .await?;
    let second = t
        .wait_turn(follow.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(second.agent_id, record.agent.id);
    let seen = t.helm.thread_messages(posted.thread.id).await?;
    assert!(seen.iter().any(|m| m.content.contains("launch-plan.md")));
    // The agent's context for Mira's question included the earlier exchange.
    let context = &scripted.requests()[2].messages;
    assert!(
        context.iter().any(
            |m| matches!(m, ChatMessage::User { content } if content.starts_with("captain: "))
        )
    );
    assert!(
        context
            .iter()
            .any(|m| matches!(m, ChatMessage::User { content } if content.starts_with("mira: ")))
    );
    Ok(())
}

#[tokio::test]
async fn who_wakes_the_agent() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    t.helm
        .create_channel(&t.captain, "finance", "Money.")
        .await?;

    // No mention: no turn.
    let plain = t
        .helm
        .post_message(&t.captain, &ch, "note to self", None)
        .await?;
    assert!(plain.turn.is_none());
    // Another channel's agent's handle: no turn here.
    let other = t
        .helm
        .post_message(&t.captain, &ch, "@finance-agent budget?", None)
        .await?;
    assert!(other.turn.is_none());

    // Mention: a turn. Then the same human continues without a mention: a turn.
    scripted.reply_text("Hello.");
    let first = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent hi", None)
        .await?;
    let thread = first.thread.id;
    t.wait_turn(first.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    scripted.reply_text("Sure.");
    let cont = t
        .helm
        .post_message(&t.captain, &ch, "and one more thing", Some(thread))
        .await?;
    t.wait_turn(
        cont.turn
            .ok_or_else(|| anyhow::anyhow!("continuation woke nothing"))?
            .id,
    )
    .await?;

    // A second human speaks: now only mentions wake the agent.
    let mira = t.member("mira").await?;
    let chat = t
        .helm
        .post_message(&mira, &ch, "hi captain!", Some(thread))
        .await?;
    assert!(chat.turn.is_none());
    let again = t
        .helm
        .post_message(&t.captain, &ch, "hi mira", Some(thread))
        .await?;
    assert!(again.turn.is_none());
    assert_eq!(scripted.remaining(), 0);
    Ok(())
}

#[tokio::test]
async fn a_running_turn_shows_the_steps_it_has_taken() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    let gate = Arc::new(Notify::new());
    for path in ["notes.md", "plan.md"] {
        let input = format!(r#"{{"path": "{path}", "content": "draft"}}"#);
        scripted.push(ScriptedReply::tool_calls(&[("write_file", input.as_str())]));
    }
    scripted.push(ScriptedReply::text("Both drafts are written.").gated(gate.clone()));

    let posted = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent draft the notes and the plan",
            None,
        )
        .await?;
    let turn = posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?;
    t.wait_for("the third model call", || async {
        Ok(scripted.requests().len() == 3)
    })
    .await?;
    // Two calls asked for tools, which ran; the third is still answering.
    let running = t.helm.turn(turn.id).await?;
    assert_eq!((running.state, running.steps), (TurnState::Running, 2));
    gate.notify_one();
    let done = t.wait_turn(turn.id).await?;
    assert_eq!((done.state, done.steps), (TurnState::Completed, 3));
    Ok(())
}

#[tokio::test]
async fn turns_in_one_thread_run_in_order_and_show_their_place() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    let gate = Arc::new(Notify::new());
    scripted.push(ScriptedReply::text("first").gated(gate.clone()));
    scripted.reply_text("second");
    scripted.reply_text("third");

    let a = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent one", None)
        .await?;
    let thread = a.thread.id;
    let turn_a = a.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?;
    t.wait_for("turn one to start", || async {
        Ok(t.helm.turn(turn_a.id).await?.state == TurnState::Running)
    })
    .await?;
    let b = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent two", Some(thread))
        .await?;
    let c = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent three", Some(thread))
        .await?;
    assert_eq!((b.ahead, c.ahead), (1, 2));
    let (turn_b, turn_c) = (
        b.turn.ok_or_else(|| anyhow::anyhow!("b"))?,
        c.turn.ok_or_else(|| anyhow::anyhow!("c"))?,
    );
    assert_eq!(t.helm.turn(turn_b.id).await?.state, TurnState::Queued);

    gate.notify_one();
    let (ta, tb, tc) = (
        t.wait_turn(turn_a.id).await?,
        t.wait_turn(turn_b.id).await?,
        t.wait_turn(turn_c.id).await?,
    );
    assert!(
        ta.finished_at <= tb.started_at && tb.finished_at <= tc.started_at,
        "FIFO order"
    );
    let replies: Vec<String> = t
        .helm
        .thread_messages(thread)
        .await?
        .into_iter()
        .filter(|m| matches!(m.author, Author::Agent { .. }))
        .map(|m| m.content)
        .collect();
    assert_eq!(replies, ["first", "second", "third"]);
    // Each turn saw the transcript up to its own message only.
    let seen_by_second = &scripted.requests()[1].messages;
    assert!(
        !seen_by_second
            .iter()
            .any(|m| matches!(m, ChatMessage::User { content } if content.contains("three")))
    );
    Ok(())
}

#[tokio::test]
async fn an_agent_works_on_up_to_three_threads_at_once() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    let gate = Arc::new(Notify::new());
    for i in 0..4 {
        scripted.push(ScriptedReply::text(&format!("answer {i}")).gated(gate.clone()));
    }
    let mut turns = Vec::new();
    for i in 0..4 {
        let p = t
            .helm
            .post_message(&t.captain, &ch, &format!("@launch-agent task {i}"), None)
            .await?;
        turns.push(p.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id);
    }
    t.wait_for("three running", || async {
        let mut running = 0;
        for id in &turns {
            if t.helm.turn(*id).await?.state == TurnState::Running {
                running += 1;
            }
        }
        Ok(running == 3)
    })
    .await?;
    assert_eq!(t.helm.turn(turns[3]).await?.state, TurnState::Queued);
    let agent = t.helm.channel(&ch).await?.agent;
    assert_eq!(agent.status, AgentStatus::Working);
    for _ in 0..4 {
        gate.notify_one();
    }
    // The gate wakes one waiter per notify; keep releasing until all end.
    for id in &turns {
        loop {
            let turn = t.helm.turn(*id).await?;
            if turn.state.is_final() {
                break;
            }
            gate.notify_one();
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(t.wait_turn(*id).await?.state, TurnState::Completed);
    }
    t.wait_for("agent ready", || async {
        Ok(t.helm.channel(&ch).await?.agent.status == AgentStatus::Ready)
    })
    .await?;
    Ok(())
}

#[tokio::test]
async fn stop_ends_one_threads_work_and_keeps_what_was_written() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    scripted.push(ScriptedReply::Hang(vec![StreamEvent::TextDelta {
        text: "Working on it".into(),
    }]));
    let a = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent long task", None)
        .await?;
    let turn = a.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?;
    let queued = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent and then", Some(a.thread.id))
        .await?;
    let queued = queued
        .turn
        .ok_or_else(|| anyhow::anyhow!("no queued turn"))?;

    t.wait_for("text streamed", || async {
        Ok(t.helm.store().message(turn.reply_message_id).await?.content == "Working on it")
    })
    .await?;
    // Another thread keeps working while this one is stopped.
    scripted.reply_text("other thread done");
    let other = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent quick one", None)
        .await?;
    let stopped = t.helm.stop_thread(&t.captain, a.thread.id).await?;
    assert_eq!(stopped.len(), 2);
    let ended = t.wait_turn(turn.id).await?;
    assert_eq!(ended.state, TurnState::Stopped);
    assert_eq!(t.wait_turn(queued.id).await?.state, TurnState::Cancelled);
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(reply.status, MessageStatus::Stopped);
    assert_eq!(reply.content, "Working on it");
    let notes: Vec<String> = t
        .helm
        .thread_messages(a.thread.id)
        .await?
        .into_iter()
        .filter(|m| m.author == Author::System)
        .map(|m| m.content)
        .collect();
    assert_eq!(notes, ["Stopped by captain."]);
    let other = t
        .wait_turn(other.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(other.state, TurnState::Completed);

    // A finished turn cannot be moved again, and late text cannot change its reply.
    assert!(
        !t.helm
            .store()
            .append_reply(turn.id, "late chunk".into())
            .await?
    );
    assert_eq!(
        t.helm.store().message(turn.reply_message_id).await?.content,
        "Working on it"
    );
    Ok(())
}

#[tokio::test]
async fn a_provider_failure_fails_the_turn_visibly() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    scripted.push(ScriptedReply::FailAfter(
        vec![StreamEvent::TextDelta {
            text: "Half an ans".into(),
        }],
        ProviderFailure::MalformedStream,
        "the stream was cut".into(),
    ));
    let p = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent go", None)
        .await?;
    let turn = t
        .wait_turn(p.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Failed);
    assert!(
        turn.error
            .as_deref()
            .unwrap_or("")
            .contains("the stream was cut")
    );
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(
        reply.status,
        MessageStatus::Failed,
        "a half answer is not stored as final"
    );
    let thread = t.helm.thread(p.thread.id).await?;
    assert_eq!(thread.status, ThreadStatus::Failed);
    let note = t
        .helm
        .thread_messages(p.thread.id)
        .await?
        .into_iter()
        .find(|m| m.author == Author::System)
        .ok_or_else(|| anyhow::anyhow!("no visible error"))?;
    assert!(
        note.content
            .starts_with("The turn failed: provider scripted: the stream was cut"),
        "{}",
        note.content
    );

    // A new message reopens the session and the agent answers.
    scripted.reply_text("Recovered.");
    let again = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent try again",
            Some(p.thread.id),
        )
        .await?;
    assert_eq!(again.thread.status, ThreadStatus::Open);
    let turn = t
        .wait_turn(again.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    Ok(())
}

#[tokio::test]
async fn no_model_configured_refuses_the_message_before_it_is_stored() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm.start_runtime().await?;
    let ch = launch(&t).await?;
    let err = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent hi", None)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("a message nobody can answer was accepted"))?;
    assert_eq!(err.kind(), helm_core::ErrorKind::Conflict);
    assert_eq!(err.code(), "model_unavailable");
    let text = err.to_string();
    assert!(text.contains("no model serves #launch"), "{text}");
    assert!(text.contains("register one"), "{text}");
    assert!(!text.contains("--"), "no frontend's syntax: {text}");
    assert!(
        t.helm.threads(&ch, 10).await?.is_empty(),
        "nothing was stored"
    );
    // A message that wakes nobody needs no model.
    t.helm
        .post_message(&t.captain, &ch, "a note for later", None)
        .await?;
    Ok(())
}

#[tokio::test]
async fn bad_tool_calls_go_back_to_the_model_and_the_turn_continues() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    scripted.push(ScriptedReply::tool_calls(&[
        ("write_file", r#"{"path": "a.md", "content": "#),
        ("teleport", r#"{"to": "mars"}"#),
        ("read_file", r#"{"path": "../../helm.db"}"#),
        ("run_command", r#"{"command": "echo hi && exit 3"}"#),
    ]));
    scripted.reply_text("Sorry, fixed.");
    let p = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent do things", None)
        .await?;
    let turn = t
        .wait_turn(p.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    let (_, actions) = t.helm.activity(&ch, Some(p.thread.id), 10).await?;
    let statuses: Vec<(String, ToolStatus)> =
        actions.iter().map(|a| (a.tool.clone(), a.status)).collect();
    assert_eq!(
        statuses,
        [
            ("write_file".to_string(), ToolStatus::Error),
            ("teleport".to_string(), ToolStatus::Error),
            // A path out of the workspace is refused by policy, not a mere error.
            ("read_file".to_string(), ToolStatus::Denied),
            ("run_command".to_string(), ToolStatus::Error),
        ]
    );
    let results: Vec<(String, bool)> = scripted.requests()[1]
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 4);
    assert!(
        results[0].0.contains("invalid arguments for write_file"),
        "{}",
        results[0].0
    );
    assert!(
        results[1].0.contains("unknown tool \"teleport\""),
        "{}",
        results[1].0
    );
    assert!(
        results[2].0.contains("escapes /workspace"),
        "{}",
        results[2].0
    );
    assert!(
        results[3].0.starts_with("exit code 3") && results[3].0.contains("hi"),
        "{}",
        results[3].0
    );
    assert!(results.iter().all(|(_, is_error)| *is_error));
    Ok(())
}

#[tokio::test]
async fn a_model_change_moves_future_turns_only() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let alpha = Arc::new(Scripted::new());
    let beta = Arc::new(Scripted::new());
    t.use_provider("alpha", alpha.clone()).await?;
    t.helm.register_provider("beta", beta.clone());
    t.helm.start_runtime().await?;
    let ch = launch(&t).await?;
    let before = t.helm.channel(&ch).await?;
    let world = t.helm.data_root().world(before.channel.id);

    alpha.push(ScriptedReply::tool_calls(&[(
        "write_file",
        r#"{"path": "notes.md", "content": "kept"}"#,
    )]));
    alpha.reply_text("Noted by alpha.");
    let first = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent take notes", None)
        .await?;
    let first_turn = t
        .wait_turn(first.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;

    t.helm
        .set_model_policy(
            &t.captain,
            PolicyScope::Channel(before.channel.id),
            Some(helm_core::model::ModelChoice::new(
                "beta",
                Some("beta-large".into()),
            )),
        )
        .await?;
    beta.reply_text("Beta here; your notes are still in notes.md.");
    let second = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent still there?",
            Some(first.thread.id),
        )
        .await?;
    let second_turn = t
        .wait_turn(second.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;

    assert_eq!(
        first_turn.served_by.as_ref().map(|m| m.provider.as_str()),
        Some("alpha")
    );
    assert_eq!(
        second_turn
            .served_by
            .as_ref()
            .map(|m| (m.provider.as_str(), m.model.as_deref())),
        Some(("beta", Some("beta-large")))
    );
    assert_eq!(alpha.requests().len(), 2);
    assert_eq!(beta.requests().len(), 1);
    // The earlier reply still says who served it.
    let old = t.helm.store().message(first_turn.reply_message_id).await?;
    assert_eq!(old.served_by.map(|m| m.provider), Some("alpha".into()));
    // Same agent, same files, same history.
    let after = t.helm.channel(&ch).await?;
    assert_eq!(after.agent.id, before.agent.id);
    assert_eq!(after.agent.handle, before.agent.handle);
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("notes.md"))?,
        "kept"
    );
    let history = &beta.requests()[0].messages;
    assert!(history.iter().any(|m| matches!(m, ChatMessage::Assistant { content, .. } if content.contains("Noted by alpha"))));
    Ok(())
}

#[tokio::test]
async fn a_reader_resuming_from_the_log_gets_the_whole_reply_once() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    let start = t.helm.store().stats().await?.last_event_seq;
    scripted.reply_text("A reply streamed in several pieces to the thread.");
    let p = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent stream please", None)
        .await?;
    let turn = t
        .wait_turn(p.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;

    // The durable log holds the reply once: `message.completed` carries the
    // whole text, and the streamed deltas (which live listeners had) are
    // gone from it once the turn has ended.
    let mut follower = t.helm.follow(start).await?;
    let mut completed = None;
    let mut types = Vec::new();
    loop {
        let event = follower.next().await?;
        types.push(event.body.type_name());
        match &event.body {
            EventBody::MessageCompleted { message } if message.id == turn.reply_message_id => {
                completed = Some(message.content.clone());
            }
            EventBody::TurnCompleted { turn: done } if done.id == turn.id => break,
            _ => {}
        }
    }
    assert_eq!(
        completed.as_deref(),
        Some("A reply streamed in several pieces to the thread.")
    );
    assert!(!types.contains(&"message.delta"), "{types:?}");
    for expected in [
        "thread.created",
        "message.created",
        "turn.queued",
        "turn.started",
        "message.completed",
        "turn.completed",
    ] {
        assert!(
            types.contains(&expected),
            "{expected} missing from {types:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let _scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    let before = t.helm.store().stats().await?;
    let unknown = t
        .helm
        .post_message(&t.captain, &"nowhere".parse()?, "@x hi", None)
        .await
        .err();
    assert_eq!(unknown.map(|e| e.kind()), Some(ErrorKind::NotFound));
    let no_thread = t
        .helm
        .post_message(&t.captain, &ch, "hi", Some(helm_core::model::ThreadId(999)))
        .await
        .err();
    assert_eq!(no_thread.map(|e| e.kind()), Some(ErrorKind::NotFound));
    let empty = t.helm.post_message(&t.captain, &ch, "  ", None).await.err();
    assert_eq!(empty.map(|e| e.kind()), Some(ErrorKind::Invalid));
    let huge = t
        .helm
        .post_message(&t.captain, &ch, &"x".repeat(300 * 1024), None)
        .await
        .err();
    assert_eq!(huge.map(|e| e.kind()), Some(ErrorKind::Invalid));
    // A thread of another channel is not found from here.
    t.helm.create_channel(&t.captain, "ops", "Ops.").await?;
    let ops_thread = t
        .helm
        .post_message(&t.captain, &"ops".parse()?, "ops note", None)
        .await?;
    let cross = t
        .helm
        .post_message(&t.captain, &ch, "hi", Some(ops_thread.thread.id))
        .await
        .err();
    assert_eq!(cross.map(|e| e.kind()), Some(ErrorKind::NotFound));
    let after = t.helm.store().stats().await?;
    assert_eq!(
        after.messages,
        before.messages + 2,
        "only the ops channel's post and its announcement"
    );
    // An archived channel takes no messages.
    t.helm.archive_channel(&t.captain, &ch).await?;
    let archived = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent hi", None)
        .await
        .err();
    assert_eq!(archived.map(|e| e.kind()), Some(ErrorKind::Refused));
    Ok(())
}

#[tokio::test]
async fn a_reply_holding_nul_characters_completes_alike_on_both_stores() -> anyhow::Result<()> {
    for t in [TestHelm::new().await?, TestHelm::on_postgres().await?] {
        let scripted = t.scripted().await?;
        let ch = launch(&t).await?;
        scripted.reply_text("A reply\0 with\0 nul characters.");
        let p = t
            .helm
            .post_message(&t.captain, &ch, "@launch-agent answer please", None)
            .await?;
        let turn = t
            .wait_turn(p.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
            .await?;
        assert_eq!(turn.state, TurnState::Completed, "{turn:?}");
        let reply = t.helm.store().message(turn.reply_message_id).await?;
        assert_eq!(reply.content, "A reply with nul characters.");
    }
    Ok(())
}

/// The agent's instructions name every tool its requests offer, so a model
/// is told what it can do with the channel's memory and with Skipper, not
/// only with its computer.
#[tokio::test]
async fn the_agents_instructions_name_every_tool_it_is_offered() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let ch = launch(&t).await?;
    scripted.reply_text("Hello.");
    let first = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent hi", None)
        .await?;
    t.wait_turn(first.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    let requests = scripted.requests();
    let Some(request) = requests.first() else {
        panic!("the model was not asked");
    };
    let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    for name in [
        "run_command",
        "remember",
        "recall",
        "record_decision",
        "call_skipper",
    ] {
        assert!(offered.contains(&name), "{name} is offered: {offered:?}");
    }
    let unnamed: Vec<&str> = offered
        .iter()
        .copied()
        .filter(|name| !request.system.contains(name))
        .collect();
    assert!(
        unnamed.is_empty(),
        "not in the instructions: {unnamed:?}\n{}",
        request.system
    );
    Ok(())
}

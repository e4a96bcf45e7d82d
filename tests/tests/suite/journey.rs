//! The product journey (spec §12) through the real provider adapters, over
//! HTTP to local mock model servers that speak OpenAI's and Anthropic's wire
//! formats.

use helm_core::model::{
    Author, ChannelRef, MessageStatus, ModelChoice, ThreadStatus, ToolStatus, TurnState,
};
use helm_core::store::PolicyScope;
use helm_tests::TestHelm;
use helm_tests::mock::{Behaviour, MockAnthropic, MockOpenAi};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

#[tokio::test]
async fn plan_file_second_human_and_a_model_change_over_real_wire_formats() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let openai = MockOpenAi::start().await?;
    let anthropic = MockAnthropic::start().await?;
    t.helm
        .add_provider(&t.captain, openai.provider_config("openai-mock"), true)
        .await?;
    t.helm
        .add_provider(&t.captain, anthropic.provider_config("claude-mock"), false)
        .await?;
    t.helm.start_runtime().await?;
    let record = t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let ch = ChannelRef::Id(record.channel.id);

    // The Captain asks for a plan; the model writes a file, then answers.
    openai.push(Behaviour::tool_call(
        "write_file",
        r##"{"path": "plan.md", "content": "# Launch plan\n- beta on the 3rd\n"}"##,
    ));
    openai.push(Behaviour::text("The plan is in plan.md: beta on the 3rd."));
    let posted = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent please write a launch plan",
            None,
        )
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed, "{:?}", turn.error);
    let workspace = t.helm.data_root().world(record.channel.id).workspace();
    assert_eq!(
        std::fs::read_to_string(workspace.join("plan.md"))?,
        "# Launch plan\n- beta on the 3rd\n"
    );
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(reply.content, "The plan is in plan.md: beta on the 3rd.");
    assert_eq!(
        reply.served_by,
        Some(ModelChoice::new("openai-mock", Some("mock-model".into())))
    );
    let (_, actions) = t.helm.activity(&ch, Some(posted.thread.id), 10).await?;
    assert_eq!(
        (actions[0].tool.as_str(), actions[0].status),
        ("write_file", ToolStatus::Ok)
    );

    // What went over the wire: tools offered, then the tool result sent back.
    let requests = openai.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(
        requests[0].body["tools"][2]["function"]["name"],
        "write_file"
    );
    let last = requests[1].body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        last.iter()
            .any(|m| m["role"] == "tool" && m["content"].as_str().unwrap_or("").contains("wrote"))
    );

    // A second human sees the same thread, and asks the same agent; it
    // checks with a command first.
    let mira = t.member("mira").await?;
    openai.push(Behaviour::tool_call(
        "run_command",
        r#"{"command": "grep beta plan.md && echo checked"}"#,
    ));
    openai.push(Behaviour::text("Beta is on the 3rd, per plan.md."));
    let asked = t
        .helm
        .post_message(
            &mira,
            &ch,
            "@launch-agent when is the beta?",
            Some(posted.thread.id),
        )
        .await?;
    let second = t
        .wait_turn(asked.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(second.state, TurnState::Completed);
    // The second turn was told what the first reply's tools did, just
    // before that reply (messages alone would only say "The plan is in
    // plan.md").
    let told = openai.requests()[2].body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let note = told
        .iter()
        .position(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("[helm] The tool calls behind the next reply"))
        })
        .ok_or_else(|| anyhow::anyhow!("no tool note in {told:?}"))?;
    assert!(
        told[note]["content"]
            .as_str()
            .is_some_and(|c| c.contains("write_file plan.md")),
        "{:?}",
        told[note]
    );
    assert_eq!(told[note + 1]["role"], "assistant");
    assert_eq!(
        told[note + 1]["content"],
        "The plan is in plan.md: beta on the 3rd."
    );
    // What the command printed is kept with its journal line, for people
    // and for later turns.
    let (_, actions) = t.helm.activity(&ch, Some(posted.thread.id), 10).await?;
    let ran = actions
        .iter()
        .find(|a| a.tool == "run_command")
        .ok_or_else(|| anyhow::anyhow!("no command journaled"))?;
    assert_eq!(
        ran.output.as_deref(),
        Some("exit code 0\nstdout:\n- beta on the 3rd\nchecked")
    );
    let thread = t.helm.thread_messages(posted.thread.id).await?;
    let authors: Vec<String> = thread.iter().map(|m| m.author.display()).collect();
    assert_eq!(
        authors,
        ["captain", "@launch-agent", "mira", "@launch-agent"]
    );

    // The Captain moves the channel to another provider: the next turn goes
    // there, and the agent, its files and its history stay.
    t.helm
        .set_model_policy(
            &t.captain,
            PolicyScope::Channel(record.channel.id),
            Some(ModelChoice::new("claude-mock", None)),
        )
        .await?;
    anthropic.push(Behaviour::text("Still here, same plan."));
    let after = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent are you still on it?",
            Some(posted.thread.id),
        )
        .await?;
    let third = t
        .wait_turn(after.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(third.state, TurnState::Completed, "{:?}", third.error);
    assert_eq!(
        third.served_by.map(|m| m.provider),
        Some("claude-mock".into())
    );
    assert_eq!(
        openai.requests().len(),
        4,
        "no more requests to the old provider"
    );
    let claude = anthropic.requests();
    assert_eq!(claude.len(), 1);
    assert_eq!(claude[0].path, "/v1/messages");
    // The history travelled with the channel, not with the model.
    assert!(claude[0].raw_body.contains("The plan is in plan.md"));
    let same = t.helm.channel(&ch).await?;
    assert_eq!(
        (same.agent.id, same.agent.handle.clone()),
        (record.agent.id, record.agent.handle.clone())
    );
    assert!(workspace.join("plan.md").is_file());
    Ok(())
}

#[tokio::test]
async fn an_unreachable_provider_is_a_clear_error_in_the_thread() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut config = MockOpenAi::start().await?.provider_config("down");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    t.helm.add_provider(&t.captain, config, true).await?;
    t.helm.start_runtime().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let posted = t
        .helm
        .post_message(&t.captain, &"launch".parse()?, "@launch-agent hi", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Failed);
    let note = t
        .helm
        .thread_messages(posted.thread.id)
        .await?
        .into_iter()
        .find(|m| m.author == Author::System)
        .ok_or_else(|| anyhow::anyhow!("no error in the thread"))?;
    assert!(note.content.contains("provider down"), "{}", note.content);
    assert!(
        note.content.contains(&format!("127.0.0.1:{port}")),
        "{}",
        note.content
    );
    assert_eq!(
        t.helm.thread(posted.thread.id).await?.status,
        ThreadStatus::Failed
    );
    assert_eq!(
        t.helm.store().message(turn.reply_message_id).await?.status,
        MessageStatus::Failed
    );
    Ok(())
}

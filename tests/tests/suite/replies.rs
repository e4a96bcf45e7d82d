//! The faults: a model that streams a 64 MiB reply, and models whose
//! stream holds nothing (only `[DONE]`, or chunks without choices). The
//! first ends with a reply of bounded size and a note, the provider told
//! the output limit; the others fail the turn visibly.

use helm_core::config::ReplyLimits;
use helm_core::events::EventBody;
use helm_core::model::{ChannelRef, MessageStatus, ThreadStatus, TurnState};
use helm_tests::TestHelm;
use helm_tests::mock::{Behaviour, MockOpenAi};

async fn served_by(mock: &MockOpenAi) -> anyhow::Result<(TestHelm, ChannelRef)> {
    let t = TestHelm::new().await?;
    t.helm
        .add_provider(&t.captain, mock.provider_config("openai-mock"), true)
        .await?;
    t.helm.start_runtime().await?;
    let record = t
        .helm
        .create_channel(&t.captain, "launch", "The launch.")
        .await?;
    Ok((t, ChannelRef::Id(record.channel.id)))
}

#[tokio::test]
async fn a_64_mib_reply_is_cut_at_the_cap_and_stored_once() -> anyhow::Result<()> {
    const TOTAL: usize = 64 << 20;
    let mock = MockOpenAi::start().await?;
    let (t, ch) = served_by(&mock).await?;
    let start = t.helm.store().stats().await?.last_event_seq;
    mock.push(Behaviour::flood(TOTAL, 16 * 1024));
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent say everything", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    let cap = ReplyLimits::default().max_reply_bytes;
    assert_eq!(turn.state, TurnState::Completed, "{turn:?}");
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(reply.status, MessageStatus::Complete);
    assert_eq!(reply.content.len(), cap, "the reply is cut at the cap");
    let request = mock
        .last_request()
        .ok_or_else(|| anyhow::anyhow!("no request"))?;
    assert_eq!(
        request.body["max_tokens"],
        ReplyLimits::default().max_tokens,
        "the output limit is sent"
    );
    // Helm stopped reading: what the mock got out is the cap plus what the
    // sockets buffered, far from the 64 MiB it meant to send.
    assert!(
        mock.flood_sent() < (TOTAL / 4) as u64,
        "{} bytes were read",
        mock.flood_sent()
    );
    let thread = t
        .helm
        .store()
        .thread_messages(posted.thread.id, None)
        .await?;
    assert!(
        thread
            .iter()
            .any(|m| m.content.contains("cut at") && m.content.contains("bytes")),
        "a visible note says the reply was cut"
    );
    // The log keeps the reply once: no deltas, one completed message.
    let events = t.helm.store().events_after(start, 100_000).await?;
    let mut logged = 0;
    for e in &events {
        match &e.body {
            EventBody::MessageDelta { .. } => anyhow::bail!("a delta stayed in the log"),
            EventBody::MessageCompleted { message } => logged += message.content.len(),
            _ => {}
        }
    }
    assert_eq!(logged, cap);
    Ok(())
}

#[tokio::test]
async fn an_empty_stream_fails_the_turn_visibly() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let (t, ch) = served_by(&mock).await?;
    for frames in [
        vec!["data: [DONE]\n\n"],
        vec![
            "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n",
            "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":0}}\n\n",
            "data: [DONE]\n\n",
        ],
        vec!["data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"],
    ] {
        mock.push(Behaviour::raw_sse(&frames));
        let posted = t
            .helm
            .post_message(&t.captain, &ch, "@launch-agent hello", None)
            .await?;
        let turn = t
            .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
            .await?;
        assert_eq!(turn.state, TurnState::Failed, "{frames:?} → {turn:?}");
        let reply = t.helm.store().message(turn.reply_message_id).await?;
        assert_eq!(reply.status, MessageStatus::Failed);
        let thread = t
            .helm
            .store()
            .thread_messages(posted.thread.id, None)
            .await?;
        let note = thread.last().map(|m| m.content.clone()).unwrap_or_default();
        assert!(note.starts_with("The turn failed"), "{note}");
    }
    Ok(())
}

/// A follow-up without a mention, after the agent's reply failed, reaches
/// the agent: the person is talking to it, and that is how they try again.
#[tokio::test]
async fn a_plain_follow_up_after_a_failed_reply_wakes_the_agent() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let (t, ch) = served_by(&mock).await?;
    mock.push(Behaviour::raw_sse(&["data: [DONE]\n\n"]));
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent hello", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Failed);
    // The feed counts the failed reply, not Helm's note about it (the
    // thread shows the note's reason with the reply).
    let feed = t.helm.feed(&t.captain, &ch, None, 10).await?;
    let Some(item) = feed.iter().find(|i| i.message.id == posted.message.id) else {
        panic!("the thread is not in the feed: {feed:?}");
    };
    assert_eq!(item.replies, 1, "{item:?}");

    mock.push(Behaviour::text("Hello again."));
    let follow_up = t
        .helm
        .post_message(&t.captain, &ch, "are you there?", Some(posted.thread.id))
        .await?;
    let Some(turn) = follow_up.turn else {
        panic!("a plain follow-up after a failed reply woke nobody");
    };
    let turn = t.wait_turn(turn.id).await?;
    assert_eq!(turn.state, TurnState::Completed);
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(reply.content, "Hello again.");
    Ok(())
}

/// A shutdown in the middle of a reply ends its turn as interrupted, as a
/// crash does: the reply keeps what was streamed, and the person can run
/// the turn again once Helm is back.
#[tokio::test]
async fn a_shutdown_mid_reply_keeps_its_text_and_can_be_retried() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let (t, ch) = served_by(&mock).await?;
    mock.push(Behaviour::text_chunks(&["Half of the answer, ", "and the rest"]).hang_after(2));
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent write slowly", None)
        .await?;
    let Some(turn) = posted.turn else {
        panic!("the mention woke nobody");
    };
    t.wait_for("the first words stored", || async {
        let reply = t.helm.store().message(turn.reply_message_id).await?;
        Ok(reply.content.contains("Half of the answer"))
    })
    .await?;
    t.helm.shutdown_runtime(false).await;

    let ended = t.helm.turn(turn.id).await?;
    assert_eq!(ended.state, TurnState::Interrupted, "{ended:?}");
    let reply = t.helm.store().message(turn.reply_message_id).await?;
    assert_eq!(reply.status, MessageStatus::Interrupted);
    assert!(reply.content.starts_with("Half of the answer"), "{reply:?}");
    let thread = t.helm.thread(posted.thread.id).await?;
    assert_eq!(
        thread.status,
        ThreadStatus::Failed,
        "it needs a person's look"
    );

    let helm = t.reopen().await?;
    helm.start_runtime().await?;
    mock.push(Behaviour::text("The whole answer."));
    let again = helm.retry_thread(&t.captain, posted.thread.id).await?;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let again = loop {
        let now = helm.turn(again.id).await?;
        if now.state.is_final() || tokio::time::Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    assert_eq!(again.state, TurnState::Completed, "{again:?}");
    let answer = helm.store().message(again.reply_message_id).await?;
    assert_eq!(answer.content, "The whole answer.");
    helm.shutdown_runtime(false).await;
    Ok(())
}

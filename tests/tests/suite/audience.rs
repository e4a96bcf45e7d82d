//! The attack: a member of a private channel records a memory shared with
//! the workspace; another member, not in that channel, asks a public
//! channel's agent (and Skipper) about it. Nothing of it may reach the
//! model's context or a tool result. A channel whose readers may all see
//! the private one does get it, so the filter is not a blanket refusal.

use helm_core::model::{ChannelRef, MemberRole, MemoryKind, MemoryScope, User, Visibility};
use helm_core::provider::{ChatMessage, ChatRequest, ScriptedReply};
use helm_core::{MemoryNote, NewChannel};
use helm_tests::TestHelm;

const SECRET: &str = "BLUEBIRD";

/// Everything a model saw in one request, as text.
fn seen(request: &ChatRequest) -> String {
    let mut text = request.system.clone();
    for m in request.messages.iter() {
        text.push('\n');
        text.push_str(match m {
            ChatMessage::User { content } | ChatMessage::Assistant { content, .. } => content,
            ChatMessage::Tool { content, .. } => content,
        });
    }
    text
}

async fn private_channel(t: &TestHelm, name: &str, members: &[&User]) -> anyhow::Result<()> {
    let mut request = NewChannel::new(name, "Private work.");
    request.visibility = Visibility::Private;
    let record = t.helm.create_channel_with(&t.captain, request).await?;
    for m in members {
        t.helm
            .add_channel_member(
                &t.captain,
                &ChannelRef::Id(record.channel.id),
                m.id,
                MemberRole::Member,
            )
            .await?;
    }
    Ok(())
}

/// Posts `text` as `who` in `channel`, waits for the turn it wakes, and
/// returns the requests the model got during it.
async fn ask(
    t: &TestHelm,
    scripted: &helm_core::provider::Scripted,
    who: &User,
    channel: &str,
    text: &str,
) -> anyhow::Result<Vec<ChatRequest>> {
    let before = scripted.requests().len();
    let posted = t
        .helm
        .post_message(who, &channel.parse()?, text, None)
        .await?;
    // The agent's turn, or Skipper's (an escalation's), in the thread.
    t.wait_for("the thread's turns to end", || async {
        let turns = t.helm.store().thread_turns(posted.thread.id).await?;
        Ok(!turns.is_empty() && turns.iter().all(|x| x.state.is_final()))
    })
    .await?;
    Ok(scripted.requests()[before..].to_vec())
}

#[tokio::test]
async fn a_private_channels_shared_memory_never_reaches_an_agent_working_for_an_outsider()
-> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let mira = t.member("mira").await?;
    let tom = t.member("tom").await?;
    private_channel(&t, "priv", &[&mira]).await?;
    private_channel(&t, "duo", &[&mira]).await?;
    t.helm
        .create_channel(&t.captain, "pub", "Everyone's channel.")
        .await?;
    t.helm
        .remember(
            &mira,
            &"priv".parse()?,
            MemoryNote {
                kind: MemoryKind::Fact,
                content: format!("The acquisition code name is {SECRET}."),
                thread: None,
                scope: MemoryScope::Workspace,
            },
        )
        .await?;
    // The API already hides it from tom.
    let api = t
        .helm
        .recall_as(
            &tom,
            &"pub".parse()?,
            helm_core::memory::recall::RecallQuery::new("acquisition code name"),
        )
        .await?;
    assert!(api.iter().all(|h| !h.content.contains(SECRET)), "{api:?}");

    // tom asks the public channel's agent; it also calls its recall tool.
    scripted.push(ScriptedReply::tool_calls(&[(
        "recall",
        r#"{"query": "acquisition code name"}"#,
    )]));
    scripted.reply_text("I could not find one.");
    let requests = ask(
        &t,
        &scripted,
        &tom,
        "pub",
        "@pub-agent what is the acquisition code name?",
    )
    .await?;
    assert_eq!(
        requests.len(),
        2,
        "a context, then the recall tool's result"
    );
    for r in &requests {
        assert!(
            !seen(r).contains(SECRET),
            "leaked to tom's turn: {}",
            seen(r)
        );
    }

    // The Captain may see #priv, but tom reads #pub: still nothing there.
    scripted.push(ScriptedReply::tool_calls(&[(
        "recall",
        r#"{"query": "acquisition code name"}"#,
    )]));
    scripted.reply_text("Nothing.");
    let requests = ask(
        &t,
        &scripted,
        &t.captain,
        "pub",
        "@pub-agent what is the acquisition code name?",
    )
    .await?;
    for r in &requests {
        assert!(!seen(r).contains(SECRET), "leaked into #pub: {}", seen(r));
    }

    // tom calls Skipper into #pub and it reads the channel with a query:
    // the explicit read acts for tom, and its prompt names no private channel.
    scripted.push(ScriptedReply::tool_calls(&[(
        "read_channel",
        r#"{"channel": "pub", "query": "acquisition code name"}"#,
    )]));
    scripted.reply_text("Nothing there.");
    let requests = ask(
        &t,
        &scripted,
        &tom,
        "pub",
        "@skipper what is the acquisition code name?",
    )
    .await?;
    assert!(!requests.is_empty());
    for r in &requests {
        let text = seen(r);
        assert!(!text.contains(SECRET), "leaked through Skipper: {text}");
        assert!(
            !text.contains("#priv"),
            "Skipper's prompt names #priv: {text}"
        );
    }

    // In #duo everyone who reads it (mira, the Captain) may see #priv: the
    // shared record is in the context and the tool's result.
    scripted.push(ScriptedReply::tool_calls(&[(
        "recall",
        r#"{"query": "acquisition code name"}"#,
    )]));
    scripted.reply_text("It is BLUEBIRD.");
    let requests = ask(
        &t,
        &scripted,
        &mira,
        "duo",
        "@duo-agent what is the acquisition code name?",
    )
    .await?;
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0].system.contains(SECRET),
        "{}",
        requests[0].system
    );
    let tool_result = requests[1]
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(tool_result.contains(SECRET), "{tool_result}");
    Ok(())
}

/// The last tool result in a turn's requests.
fn last_tool_result(requests: &[ChatRequest]) -> String {
    requests
        .iter()
        .rev()
        .flat_map(|r| r.messages.iter().rev())
        .find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn skipper_reads_a_private_channel_only_into_a_thread_all_its_readers_may_see()
-> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let scripted = t.scripted().await?;
    let mira = t.member("mira").await?;
    t.member("tom").await?;
    private_channel(&t, "priv", &[&mira]).await?;
    private_channel(&t, "duo", &[&mira]).await?;
    t.helm
        .remember(
            &mira,
            &"priv".parse()?,
            MemoryNote {
                kind: MemoryKind::Fact,
                content: format!("The acquisition code name is {SECRET}."),
                thread: None,
                scope: MemoryScope::Channel,
            },
        )
        .await?;
    // The Captain, in #main (which tom reads too), asks Skipper to read
    // #priv, and to list the channels: neither copies #priv into #main.
    for (tool, args) in [
        ("read_channel", r#"{"channel": "priv"}"#),
        ("list_channels", "{}"),
        ("list_files", r#"{"channel": "priv"}"#),
    ] {
        scripted.push(ScriptedReply::tool_calls(&[(tool, args)]));
        scripted.reply_text("Done.");
        let requests = ask(&t, &scripted, &t.captain, "main", "@skipper look at #priv").await?;
        let result = last_tool_result(&requests);
        assert!(!result.contains(SECRET), "{tool} leaked: {result}");
        assert!(!result.contains("Private work"), "{tool} leaked: {result}");
        if tool != "list_channels" {
            assert!(
                result.contains("call @skipper in a thread of #priv"),
                "{tool}: {result}"
            );
        }
    }
    // In #duo, whose readers (mira, the Captain) all may see #priv, the
    // same read works (asked by the Captain, so no approval waits).
    scripted.push(ScriptedReply::tool_calls(&[(
        "read_channel",
        r#"{"channel": "priv"}"#,
    )]));
    scripted.reply_text("Done.");
    let requests = ask(&t, &scripted, &t.captain, "duo", "@skipper read #priv").await?;
    let result = last_tool_result(&requests);
    assert!(result.contains(SECRET), "{result}");
    Ok(())
}

//! Memory and continuity: a decision made in one thread is recalled in a
//! later one after a model change and a restart; scopes hold; superseded
//! knowledge is not current; bad queries and imports are handled.

use std::sync::Arc;

use helm_core::memory::recall::RecallQuery;
use helm_core::model::{
    ChannelRef, MemoryKind, MemoryScope, MemoryStatus, ModelChoice, ThreadStatus, TurnState,
};
use helm_core::provider::{ChatMessage, Scripted, ScriptedReply};
use helm_core::store::{MemoryFilter, PolicyScope};
use helm_core::{ErrorKind, MemoryNote};
use helm_tests::TestHelm;

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

fn note(kind: MemoryKind, text: &str) -> MemoryNote {
    MemoryNote {
        kind,
        content: text.into(),
        thread: None,
        scope: MemoryScope::Channel,
    }
}

#[tokio::test]
async fn a_decision_in_one_thread_is_recalled_in_another_after_a_model_change_and_a_restart()
-> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    let alpha = Arc::new(Scripted::new());
    t.use_provider("alpha", alpha.clone()).await?;
    t.helm.start_runtime().await?;
    let record = t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let ch = ChannelRef::Id(record.channel.id);

    // Thread 1: the decision is made and recorded by the agent.
    alpha.push(ScriptedReply::tool_calls(&[(
        "record_decision",
        r#"{"content": "The public beta launches on March 3rd, after the security review."}"#,
    )]));
    alpha.reply_text("Recorded: public beta on March 3rd.");
    let first = t
        .helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent beta date\nWe agreed the public beta date with legal: March 3rd.",
            None,
        )
        .await?;
    let turn = t
        .wait_turn(first.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    let decisions = t
        .helm
        .memory_list(
            &ch,
            MemoryFilter {
                kind: Some(MemoryKind::Decision),
                ..Default::default()
            },
        )
        .await?;
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].thread_id, Some(first.thread.id));
    assert_eq!(
        decisions[0].source_message_id,
        Some(first.message.id),
        "provenance: the message that led to it"
    );
    assert_eq!(decisions[0].author_name.as_deref(), Some("@launch-agent"));
    // Recall gets who, when and which thread from the record: the thread it
    // was made in, the person whose message it came from, that message.
    let hits = t
        .helm
        .recall(&ch, RecallQuery::new("when does the public beta launch?"))
        .await?;
    let hit = hits
        .iter()
        .find(|h| h.kind == "decision")
        .ok_or_else(|| anyhow::anyhow!("the decision is not recalled: {hits:?}"))?;
    assert_eq!(hit.thread.as_ref().map(|t| t.id), Some(first.thread.id));
    assert_eq!(
        hit.thread.as_ref().map(|t| t.title.as_str()),
        Some(first.thread.title.as_str()),
        "the hit names its thread"
    );
    assert!(!first.thread.title.is_empty());
    let message_hit = hits
        .iter()
        .find(|h| h.kind == "message")
        .ok_or_else(|| anyhow::anyhow!("no message recalled: {hits:?}"))?;
    assert_eq!(
        message_hit.thread.as_ref().map(|t| t.title.as_str()),
        Some(first.thread.title.as_str())
    );
    assert_eq!(hit.author.as_deref(), Some("captain"));
    assert_eq!(hit.source_message_ids, [first.message.id]);

    // Resolving writes the session summary with the serving model.
    t.helm
        .set_thread_status(&t.captain, first.thread.id, ThreadStatus::Resolved)
        .await?;
    alpha.reply_text(
        r#"{"goal": "Fix the public beta date", "work_done": "Agreed with legal", "result": "Beta on March 3rd", "open_items": ["Book the venue"], "decisions": ["Public beta on March 3rd"]}"#,
    );
    let written = t.helm.summarize_thread(&t.captain, first.thread.id).await?;
    assert_eq!(written.summary.decisions, ["Public beta on March 3rd"]);
    assert!(
        t.helm
            .thread(first.thread.id)
            .await?
            .summary
            .contains("Beta on March 3rd")
    );

    // The Captain moves the channel to another model (the application
    // registers its provider in each process), and Helm restarts.
    t.helm.register_provider("beta", Arc::new(Scripted::new()));
    t.helm
        .set_model_policy(
            &t.captain,
            PolicyScope::Channel(record.channel.id),
            Some(ModelChoice::new("beta", None)),
        )
        .await?;
    t.helm.shutdown_runtime(true).await;
    let helm = t.reopen().await?;
    let beta = Arc::new(Scripted::new());
    helm.register_provider("beta", beta.clone());
    helm.start_runtime().await?;

    // Thread 2: the agent is asked about the decision.
    beta.reply_text("The public beta launches on March 3rd.");
    let second = helm
        .post_message(
            &t.captain,
            &ch,
            "@launch-agent when does the public beta launch?",
            None,
        )
        .await?;
    let turn = t
        .wait_turn(second.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    assert_eq!(turn.served_by.map(|m| m.provider), Some("beta".into()));

    let request = &beta.requests()[0];
    // The decision reached the model through recall, with its provenance…
    assert!(
        request
            .system
            .contains("March 3rd, after the security review"),
        "{}",
        request.system
    );
    assert!(
        request
            .system
            .contains(&format!("thread {}", first.thread.id)),
        "{}",
        request.system
    );
    // …and so did thread 1's session summary, with what it decided…
    assert!(
        request.system.contains("[summary, thread") && request.system.contains("Beta on March 3rd"),
        "{}",
        request.system
    );
    // …and thread 1's transcript did not: its summary stands in for it.
    assert!(
        !request.system.contains("Recorded: public beta"),
        "{}",
        request.system
    );
    assert!(
        !request
            .system
            .contains("We agreed the public beta date with legal"),
        "{}",
        request.system
    );
    for m in request.messages.iter() {
        let text = match m {
            ChatMessage::User { content } | ChatMessage::Assistant { content, .. } => content,
            ChatMessage::Tool { content, .. } => content,
        };
        assert!(
            !text.contains("We agreed the public beta date with legal"),
            "thread 1 leaked: {text}"
        );
    }
    assert_eq!(request.messages.len(), 1, "only thread 2's own message");
    Ok(())
}

#[tokio::test]
async fn recall_is_scoped_to_the_channel_and_what_the_workspace_shares() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm
        .create_channel(&t.captain, "finance", "Money.")
        .await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let finance: ChannelRef = "finance".parse()?;
    let launch: ChannelRef = "launch".parse()?;
    t.helm
        .remember(
            &t.captain,
            &finance,
            note(
                MemoryKind::Decision,
                "The quarterly budget for marketing is 40k.",
            ),
        )
        .await?;
    let hits = t
        .helm
        .recall(&launch, RecallQuery::new("marketing budget"))
        .await?;
    assert!(hits.iter().all(|h| !h.content.contains("40k")), "{hits:?}");

    let shared = MemoryNote {
        scope: MemoryScope::Workspace,
        ..note(MemoryKind::Preference, "All budgets are reported in euros.")
    };
    t.helm.remember(&t.captain, &finance, shared).await?;
    let hits = t
        .helm
        .recall(
            &launch,
            RecallQuery::new("which currency are budgets reported in?"),
        )
        .await?;
    assert!(
        hits.iter().any(|h| h.content.contains("euros")),
        "workspace-scoped items are shared: {hits:?}"
    );
    assert!(hits.iter().all(|h| !h.content.contains("40k")));
    Ok(())
}

#[tokio::test]
async fn edits_supersede_and_forgetting_hides() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let ch: ChannelRef = "launch".parse()?;
    let old = t
        .helm
        .remember(
            &t.captain,
            &ch,
            note(MemoryKind::Fact, "The launch venue is the Grand Hall."),
        )
        .await?;
    let new = t
        .helm
        .edit_memory(
            &t.captain,
            old.id,
            "The launch venue is the Riverside Pavilion.",
        )
        .await?;
    assert_eq!(
        t.helm.memory(old.id).await?.status,
        MemoryStatus::Superseded
    );
    assert_eq!(t.helm.memory(old.id).await?.superseded_by, Some(new.id));

    let hits = t
        .helm
        .recall(&ch, RecallQuery::new("where is the launch venue?"))
        .await?;
    assert!(hits.iter().any(|h| h.content.contains("Riverside")));
    assert!(
        hits.iter().all(|h| !h.content.contains("Grand Hall")),
        "a superseded fact is not current"
    );
    let mut q = RecallQuery::new("where is the launch venue?");
    q.include_superseded = true;
    let all = t.helm.recall(&ch, q).await?;
    assert!(all.iter().any(|h| h.content.contains("Grand Hall") && h.status == Some(MemoryStatus::Superseded)));

    // Editing a superseded record is refused; forgetting hides for good.
    let err = t.helm.edit_memory(&t.captain, old.id, "x").await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Conflict));
    t.helm.forget_memory(&t.captain, new.id).await?;
    let hits = t
        .helm
        .recall(&ch, RecallQuery::new("where is the launch venue?"))
        .await?;
    assert!(hits.iter().all(|h| !h.content.contains("Riverside")));
    let listed = t.helm.memory_list(&ch, MemoryFilter::default()).await?;
    assert!(listed.is_empty());
    let everything = t
        .helm
        .memory_list(
            &ch,
            MemoryFilter {
                include_inactive: true,
                ..Default::default()
            },
        )
        .await?;
    assert_eq!(everything.len(), 2);
    Ok(())
}

/// Editing and pinning a record change what the agent tells everyone, so
/// they follow the rule for forgetting: the record's author and the
/// channel's managers; a record Helm wrote (an import) is the managers'.
#[tokio::test]
async fn only_the_author_or_a_manager_edits_and_pins_a_record() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let ch: ChannelRef = "launch".parse()?;
    let (nol, mira) = (t.member("nol").await?, t.member("mira").await?);
    let hers = t
        .helm
        .remember(&mira, &ch, note(MemoryKind::Fact, "The venue seats 300."))
        .await?;

    // Another member may neither edit nor pin it, and is told who may.
    let Err(denied) = t.helm.edit_memory(&nol, hers.id, "It seats 30.").await else {
        anyhow::bail!("nol edited mira's record");
    };
    assert_eq!(denied.kind(), ErrorKind::Forbidden, "{denied}");
    let message = denied.to_string();
    assert!(
        message.contains("its author (mira)") && message.contains("may edit"),
        "{message}"
    );
    let Err(denied) = t.helm.pin_memory(&nol, hers.id, true).await else {
        anyhow::bail!("nol pinned mira's record");
    };
    assert_eq!(denied.kind(), ErrorKind::Forbidden, "{denied}");
    assert!(denied.to_string().contains("may pin"), "{denied}");
    let unchanged = t.helm.memory(hers.id).await?;
    assert_eq!(
        (unchanged.status, unchanged.pinned),
        (MemoryStatus::Current, false)
    );

    // Its author pins and edits it; the Captain unpins and edits the edit.
    assert!(t.helm.pin_memory(&mira, hers.id, true).await?.pinned);
    let edited = t
        .helm
        .edit_memory(&mira, hers.id, "The venue seats 320.")
        .await?;
    assert_eq!(edited.author_name.as_deref(), Some("mira"));
    assert!(
        !t.helm
            .pin_memory(&t.captain, edited.id, false)
            .await?
            .pinned
    );
    let captains = t
        .helm
        .edit_memory(&t.captain, edited.id, "The venue seats 350.")
        .await?;
    assert_eq!(captains.content, "The venue seats 350.");

    // A record Helm wrote has no person behind it: the managers change it.
    let imported = r#"{"type":"thread","id":"s1","title":"Planning","opened_at":"2024-01-01T09:00:00Z"}
{"type":"memory","kind":"decision","content":"We launch in March.","thread":"s1"}"#;
    t.helm
        .import_history(
            &t.captain,
            &ch,
            std::io::Cursor::new(imported.as_bytes().to_vec()),
        )
        .await?;
    let listed = t.helm.memory_list(&ch, MemoryFilter::default()).await?;
    let Some(decision) = listed.iter().find(|m| m.content == "We launch in March.") else {
        anyhow::bail!("the imported decision is missing: {listed:?}");
    };
    let refused = t.helm.pin_memory(&nol, decision.id, true).await.err();
    assert_eq!(refused.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    let refused = t.helm.edit_memory(&nol, decision.id, "April").await.err();
    assert_eq!(refused.map(|e| e.kind()), Some(ErrorKind::Forbidden));
    assert!(
        t.helm
            .pin_memory(&t.captain, decision.id, true)
            .await?
            .pinned
    );
    Ok(())
}

#[tokio::test]
async fn odd_queries_get_clear_errors_or_sane_results() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let ch: ChannelRef = "launch".parse()?;
    t.helm
        .remember(
            &t.captain,
            &ch,
            note(
                MemoryKind::Fact,
                "NEAR the river AND the park, says \"Ann\".",
            ),
        )
        .await?;
    for blank in ["", "   ", "\n"] {
        let err = t.helm.recall(&ch, RecallQuery::new(blank)).await.err();
        assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Invalid));
    }
    for odd in [
        "\"",
        "*",
        "NEAR",
        "AND",
        "OR NOT",
        "?!...",
        "\"unbalanced",
        "a* OR b*",
        "col:value",
        "(",
        "^",
    ] {
        let hits = t.helm.recall(&ch, RecallQuery::new(odd)).await;
        assert!(hits.is_ok(), "{odd:?}: {hits:?}");
    }
    let near = t
        .helm
        .recall(&ch, RecallQuery::new("near the park"))
        .await?;
    assert_eq!(near.len(), 1);
    let long = "launch ".repeat(1500);
    assert!(t.helm.recall(&ch, RecallQuery::new(long)).await.is_ok());
    let huge = "x".repeat(20_000);
    let err = t.helm.recall(&ch, RecallQuery::new(huge)).await.err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Invalid));
    let err = t
        .helm
        .recall(&"nowhere".parse()?, RecallQuery::new("x"))
        .await
        .err();
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::NotFound));
    let err = "rumour".parse::<MemoryKind>().err();
    assert!(
        err.map(|e| e.to_string().contains("summary, decision, fact"))
            .unwrap_or(false)
    );
    Ok(())
}

#[tokio::test]
async fn imports_are_whole_or_nothing_and_carry_provenance() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm
        .create_channel(&t.captain, "life", "A long chat.")
        .await?;
    let ch: ChannelRef = "life".parse()?;
    let good = r#"{"type":"thread","id":"s1","title":"Session 1","opened_at":"2023-05-08T13:56:00Z"}
{"type":"message","thread":"s1","external_id":"D1:1","author":"Caroline","text":"I went to the LGBTQ support group yesterday.","at":"2023-05-08T13:56:00Z"}
{"type":"message","thread":"s1","external_id":"D1:2","author":"captain","text":"How was it?","at":"2023-05-08T13:57:00Z"}
{"type":"memory","kind":"fact","content":"Caroline attended an LGBTQ support group on 7 May 2023.","thread":"s1","source_external_id":"D1:1"}
{"type":"memory","kind":"summary","content":"Caroline told the captain about the support group.","thread":"s1"}
"#;
    let report = t
        .helm
        .import_history(
            &t.captain,
            &ch,
            std::io::Cursor::new(good.as_bytes().to_vec()),
        )
        .await?;
    assert_eq!(
        (report.threads, report.messages, report.memories),
        (1, 2, 2)
    );
    let threads = t.helm.threads(&ch, 10).await?;
    assert_eq!(threads[0].title, "Session 1");
    let messages = t.helm.thread_messages(threads[0].id).await?;
    assert_eq!(
        messages[0].author.display(),
        "Caroline",
        "not a user: a guest author"
    );
    assert!(matches!(
        messages[0].author,
        helm_core::model::Author::Guest { .. }
    ));
    assert!(
        matches!(messages[1].author, helm_core::model::Author::Human { .. }),
        "captain is a user"
    );

    let hits = t
        .helm
        .recall(
            &ch,
            RecallQuery::new("When did Caroline go to the support group?"),
        )
        .await?;
    let fact = hits
        .iter()
        .find(|h| h.kind == "fact")
        .ok_or_else(|| anyhow::anyhow!("no fact: {hits:?}"))?;
    assert_eq!(fact.source_external_ids, ["D1:1"]);
    if let Some(summary) = hits.iter().find(|h| h.kind == "summary") {
        assert_eq!(
            summary.source_external_ids,
            ["D1:1", "D1:2"],
            "a summary stands for its thread"
        );
    }

    // A bad file writes nothing, and says where it is bad.
    let before = t.helm.store().stats().await?;
    let bad = "{\"type\":\"thread\",\"id\":\"s2\"}\n{\"type\":\"message\",\"thread\":\"s3\",\"external_id\":\"x\",\"author\":\"a\",\"text\":\"t\"}\n";
    let err = t
        .helm
        .import_history(
            &t.captain,
            &ch,
            std::io::Cursor::new(bad.as_bytes().to_vec()),
        )
        .await
        .err();
    let err = err.ok_or_else(|| anyhow::anyhow!("bad import accepted"))?;
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert!(err.to_string().contains("line 2:"), "{err}");
    // Importing the same history twice is a conflict, and writes nothing either.
    let again = t
        .helm
        .import_history(
            &t.captain,
            &ch,
            std::io::Cursor::new(good.as_bytes().to_vec()),
        )
        .await
        .err();
    assert_eq!(again.map(|e| e.kind()), Some(ErrorKind::Conflict));
    let after = t.helm.store().stats().await?;
    assert_eq!(
        (after.threads, after.messages),
        (before.threads, before.messages)
    );
    Ok(())
}

#[tokio::test]
async fn without_a_model_there_is_no_summary() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let posted = t
        .helm
        .post_message(&t.captain, &"launch".parse()?, "a note", None)
        .await?;
    let err = t
        .helm
        .summarize_thread(&t.captain, posted.thread.id)
        .await
        .err();
    let err = err.ok_or_else(|| anyhow::anyhow!("a summary without a model"))?;
    assert!(
        matches!(
            err,
            helm_core::Error::Provider {
                failure: helm_core::ProviderFailure::Unconfigured,
                ..
            }
        ),
        "{err}"
    );
    let summaries = t
        .helm
        .memory_list(
            &"launch".parse()?,
            MemoryFilter {
                kind: Some(MemoryKind::Summary),
                ..Default::default()
            },
        )
        .await?;
    assert!(summaries.is_empty());
    assert!(t.helm.thread(posted.thread.id).await?.summary.is_empty());
    Ok(())
}

/// Three sessions of one long chat, on known days.
const DATED: &str = r#"{"type":"thread","id":"s1","title":"Session 1","opened_at":"2023-05-08T13:56:00Z"}
{"type":"message","thread":"s1","external_id":"D1:1","author":"Caroline","text":"I painted a sunrise over the lake this morning.","at":"2023-05-08T13:56:00Z"}
{"type":"message","thread":"s1","external_id":"D1:2","author":"Mel","text":"Lovely colours.","at":"2023-05-08T13:57:00Z"}
{"type":"thread","id":"s2","title":"Session 2","opened_at":"2023-06-20T10:00:00Z"}
{"type":"message","thread":"s2","external_id":"D2:1","author":"Caroline","text":"I painted a sunset at the beach.","at":"2023-06-20T10:00:00Z"}
{"type":"message","thread":"s2","external_id":"D2:2","author":"Mel","text":"And I painted my kitchen, finally.","at":"2023-06-20T10:01:00Z"}
{"type":"thread","id":"s3","title":"Session 3","opened_at":"2024-01-10T09:00:00Z"}
{"type":"message","thread":"s3","external_id":"D3:1","author":"Mel","text":"We picked the venue: the harbour hall.","at":"2024-01-10T09:00:00Z"}
{"type":"thread","id":"s4","title":"Session 4","opened_at":"2024-03-18T09:00:00Z"}
{"type":"message","thread":"s4","external_id":"D4:1","author":"Mel","text":"We picked the venue again: the old mill.","at":"2024-03-18T09:00:00Z"}
"#;

#[tokio::test]
async fn recall_reads_times_and_people_in_a_question() -> anyhow::Result<()> {
    let t = TestHelm::new().await?;
    t.helm
        .create_channel(&t.captain, "life", "A long chat.")
        .await?;
    let ch: ChannelRef = "life".parse()?;
    t.helm
        .import_history(
            &t.captain,
            &ch,
            std::io::Cursor::new(DATED.as_bytes().to_vec()),
        )
        .await?;
    let first = |hits: &[helm_core::memory::recall::RecallHit]| {
        hits.first()
            .and_then(|h| h.source_external_ids.first().cloned())
            .unwrap_or_default()
    };

    // A month without a year, and the person asked about.
    let hits = t
        .helm
        .recall(&ch, RecallQuery::new("What did Caroline paint in June?"))
        .await?;
    assert_eq!(first(&hits), "D2:1", "{hits:?}");
    let hits = t
        .helm
        .recall(&ch, RecallQuery::new("What did Mel paint?"))
        .await?;
    assert_eq!(first(&hits), "D2:2", "{hits:?}");
    // A date with its year.
    let hits = t
        .helm
        .recall(
            &ch,
            RecallQuery::new("What did Caroline paint on 8 May 2023?"),
        )
        .await?;
    assert_eq!(first(&hits), "D1:1", "{hits:?}");

    // Relative times are read against the query's clock.
    let mut asked = RecallQuery::new("Which venue did we pick three days ago?");
    asked.as_of = Some("2024-03-21T12:00:00Z".parse()?);
    let hits = t.helm.recall(&ch, asked.clone()).await?;
    assert_eq!(first(&hits), "D4:1", "{hits:?}");
    asked.text = "Which venue did we pick two days ago?".into();
    asked.as_of = Some("2024-01-12T12:00:00Z".parse()?);
    let hits = t.helm.recall(&ch, asked).await?;
    assert_eq!(first(&hits), "D3:1", "{hits:?}");
    Ok(())
}

/// A small real embedder for tests: each word hashed into one of 1,024
/// dimensions, the vector normalised. Texts that share words are near.
struct WordHashEmbedder;

#[async_trait::async_trait]
impl helm_core::memory::embed::Embedder for WordHashEmbedder {
    fn model(&self) -> &str {
        "word-hash-1024"
    }

    fn dimensions(&self) -> usize {
        1024
    }

    async fn embed(&self, texts: &[String]) -> helm_core::Result<Vec<Vec<f32>>> {
        use std::hash::{DefaultHasher, Hash, Hasher};
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0f32; 1024];
                for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
                    if word.is_empty() {
                        continue;
                    }
                    let mut h = DefaultHasher::new();
                    word.hash(&mut h);
                    v[(h.finish() % 1024) as usize] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

/// [`WordHashEmbedder`] that counts the queries it embeds, as a
/// provider's embedder would bill them.
#[derive(Default)]
struct CountingEmbedder {
    queries: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl helm_core::memory::embed::Embedder for CountingEmbedder {
    fn model(&self) -> &str {
        WordHashEmbedder.model()
    }

    fn dimensions(&self) -> usize {
        WordHashEmbedder.dimensions()
    }

    async fn embed(&self, texts: &[String]) -> helm_core::Result<Vec<Vec<f32>>> {
        WordHashEmbedder.embed(texts).await
    }

    async fn embed_query(&self, text: &str) -> helm_core::Result<Vec<f32>> {
        self.queries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        WordHashEmbedder.embed_query(text).await
    }
}

/// A recall embeds its query while the channel's kept vectors are
/// refreshed; a channel with no vectors must not pay for an embedding it
/// cannot use, and a warm channel still sees vectors stored since.
#[tokio::test]
async fn a_query_is_embedded_only_where_the_channel_has_vectors() -> anyhow::Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let embedder = Arc::new(CountingEmbedder::default());
    let t = TestHelm::with_options(|o| o.embedder = Some(embedder.clone())).await?;
    t.helm
        .create_channel(&t.captain, "depot", "Stores.")
        .await?;
    let depot: ChannelRef = "depot".parse()?;
    let ask = |text: &'static str| {
        let (helm, depot) = (t.helm.clone(), depot.clone());
        async move {
            let hits = helm.recall(&depot, RecallQuery::new(text)).await?;
            anyhow::Ok(hits.first().map(|h| h.content.clone()).unwrap_or_default())
        }
    };
    // Nothing embedded yet: found by words, no query embedded (twice, so
    // the second ask is of a channel recall has seen).
    import_lines(&t, &depot, "a", &["crate one holds apples"]).await?;
    assert_eq!(ask("apples").await?, "crate one holds apples");
    assert_eq!(ask("apples").await?, "crate one holds apples");
    assert_eq!(embedder.queries.load(Relaxed), 0);

    // Embedded: each recall embeds its query once, cold and warm.
    assert_eq!(t.helm.embed_backlog(None, |_, _| {}).await?, 1);
    assert_eq!(ask("apples").await?, "crate one holds apples");
    assert_eq!(ask("apples").await?, "crate one holds apples");
    assert_eq!(embedder.queries.load(Relaxed), 2);

    // A vector stored after the channel's were kept is in the meaning list
    // of the next recall, whose query was embedded while the refresh read it.
    t.helm
        .remember(
            &t.captain,
            &depot,
            note(MemoryKind::Fact, "Pears ripen in the cold room."),
        )
        .await?;
    assert_eq!(t.helm.embed_backlog(None, |_, _| {}).await?, 1);
    let query = RecallQuery::new("pears");
    let found = t
        .helm
        .recall_candidates(&depot, &query, &t.helm.recall_tuning())
        .await?;
    let top = found
        .dense
        .first()
        .map(|(k, _)| found.items[k].content.clone());
    assert_eq!(top.as_deref(), Some("Pears ripen in the cold room."));
    assert_eq!(embedder.queries.load(Relaxed), 3);
    Ok(())
}

#[tokio::test]
async fn the_vector_cache_stays_within_its_budget_and_recall_still_finds_evicted_channels()
-> anyhow::Result<()> {
    let t = TestHelm::with_options(|o| {
        o.embedder = Some(Arc::new(WordHashEmbedder));
        o.memory.vector_cache_mb = 1;
    })
    .await?;
    // Three channels of 200 messages: about 410 KiB of vectors each (held
    // in bfloat16), so two fit in the 1 MiB budget and the third does not.
    for name in ["north", "south", "east"] {
        t.helm.create_channel(&t.captain, name, "Stores.").await?;
        let lines: Vec<String> = (0..200)
            .map(|i| format!("shelf {i} in {name} holds crate{i} of apples"))
            .collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        import_lines(&t, &name.parse()?, name, &lines).await?;
    }
    assert_eq!(t.helm.embed_backlog(None, |_, _| {}).await?, 600);

    let search = |name: &'static str| {
        let helm = t.helm.clone();
        async move {
            let hits = helm
                .recall(
                    &name.parse()?,
                    RecallQuery::new("which shelf holds crate42"),
                )
                .await?;
            // The line asked for, or the one after it, which is embedded
            // and indexed with it and so holds its words too.
            let first_two: Vec<String> = hits.iter().take(2).map(|h| h.content.clone()).collect();
            let asked = format!("shelf 42 in {name} holds crate42 of apples");
            anyhow::Ok(if first_two.contains(&asked) {
                asked
            } else {
                format!("{first_two:?}")
            })
        }
    };
    assert_eq!(
        search("north").await?,
        "shelf 42 in north holds crate42 of apples"
    );
    assert_eq!(
        search("south").await?,
        "shelf 42 in south holds crate42 of apples"
    );
    let use_ = t
        .helm
        .vector_cache()
        .ok_or_else(|| anyhow::anyhow!("no cache"))?;
    assert_eq!((use_.channels, use_.budget), (2, 1 << 20));

    // The third channel pushes out the least recently searched (north) ...
    assert_eq!(
        search("east").await?,
        "shelf 42 in east holds crate42 of apples"
    );
    let use_ = t
        .helm
        .vector_cache()
        .ok_or_else(|| anyhow::anyhow!("no cache"))?;
    assert_eq!(use_.channels, 2);
    assert!(use_.bytes <= use_.budget, "{use_:?}");
    // ... and north, read again from the store, is searched the same.
    assert_eq!(
        search("north").await?,
        "shelf 42 in north holds crate42 of apples"
    );
    let use_ = t
        .helm
        .vector_cache()
        .ok_or_else(|| anyhow::anyhow!("no cache"))?;
    assert!(use_.bytes <= use_.budget && use_.channels == 2, "{use_:?}");

    // Restarted, the server reads ahead what fits the budget (two of the
    // three channels), evicting nothing, before anyone searches.
    let mut options = helm_core::HelmOptions::new(t.data_dir());
    options.embedder = Some(Arc::new(WordHashEmbedder));
    options.memory.vector_cache_mb = 1;
    let again = helm_core::Helm::open(options).await?;
    assert_eq!(again.preload_recall().await?, 2);
    let use_ = again
        .vector_cache()
        .ok_or_else(|| anyhow::anyhow!("no cache"))?;
    assert!(use_.bytes <= use_.budget && use_.channels == 2, "{use_:?}");
    assert_eq!(again.preload_recall().await?, 0, "nothing more fits");
    Ok(())
}

/// A decision recorded a moment ago has no vector yet (the server embeds in
/// the background): recall must not rank it below older items only because
/// the meaning search could not see it. Its word rank stands for both lists.
#[tokio::test]
async fn a_record_not_yet_embedded_ranks_by_its_words_not_last() -> anyhow::Result<()> {
    let (t, launch) = launch_with(&[
        "please write a launch plan in plan.md",
        "Here is the launch plan: beta on the 3rd, press on the 10th",
        "can the beta move a day later?",
        "Yes: the beta moves to the 4th",
    ])
    .await?;
    t.helm
        .remember(
            &t.captain,
            &launch,
            note(MemoryKind::Decision, "Launch date: 12 March."),
        )
        .await?;

    let first = |hits: &[helm_core::memory::recall::RecallHit]| {
        hits.first().map(|h| h.content.clone()).unwrap_or_default()
    };
    let asked = || RecallQuery::new("what is the launch date?");
    let hits = t.helm.recall(&launch, asked()).await?;
    assert_eq!(first(&hits), "Launch date: 12 March.", "{hits:?}");
    // Embedded, it holds its place by meaning as well.
    assert_eq!(t.helm.embed_backlog(None, |_, _| {}).await?, 1);
    let hits = t.helm.recall(&launch, asked()).await?;
    assert_eq!(first(&hits), "Launch date: 12 March.", "{hits:?}");
    Ok(())
}

/// In a channel where every message names the agent, a match on that word
/// says nothing of a message, and recall drops it where meaning ranks the
/// items. A record made a moment ago, which meaning cannot see yet, keeps
/// such a match: it is found by it, and first, until it is embedded.
#[tokio::test]
async fn a_word_in_every_item_still_finds_a_record_not_yet_embedded() -> anyhow::Result<()> {
    let (t, launch) = launch_with(&[
        "launch agent: please write the plan",
        "launch agent here: the plan is in plan.md",
        "launch agent: can the beta move?",
        "launch agent here: the beta moves to the 4th",
    ])
    .await?;
    let fresh = "Launch in spring.";
    t.helm
        .remember(&t.captain, &launch, note(MemoryKind::Decision, fresh))
        .await?;
    let hits = t.helm.recall(&launch, RecallQuery::new("launch?")).await?;
    assert_eq!(
        hits.first().map(|h| h.content.as_str()),
        Some(fresh),
        "{hits:?}"
    );
    Ok(())
}

/// English words are matched by their stems on either store, alike: a
/// plural finds its singular and the other way round, including the -us
/// and -ss words SQLite's porter stemmer once kept apart ("walrus" was
/// "walru" there, "walruses" "walrus").
#[tokio::test]
async fn a_plural_finds_its_singular_and_the_other_way_round_on_both_stores() -> anyhow::Result<()>
{
    let stores = [
        ("SQLite", TestHelm::new().await?),
        ("PostgreSQL", TestHelm::on_postgres().await?),
    ];
    for (store, t) in stores {
        t.helm.create_channel(&t.captain, "zoo", "The zoo.").await?;
        let zoo: ChannelRef = "zoo".parse()?;
        import_lines(
            &t,
            &zoo,
            "pier",
            &[
                "The keepers open the gates at nine.",
                "Two walruses slept on the pier all morning.",
                "Feeding starts after the gates open.",
                "The penguins had fish again.",
                "One of the classes booked the reptile house.",
            ],
        )
        .await?;
        let facts = [
            "The walrus mascot opens the festival.",
            "Each class gets one guide.",
        ];
        for fact in facts {
            t.helm
                .remember(&t.captain, &zoo, note(MemoryKind::Fact, fact))
                .await?;
        }
        let asked = [
            ("walrus", ["walruses slept", "walrus mascot"]),
            ("walruses?", ["walruses slept", "walrus mascot"]),
            ("class", ["the classes", "Each class"]),
            ("which classes?", ["the classes", "Each class"]),
        ];
        for (question, expected) in asked {
            let hits = t.helm.recall(&zoo, RecallQuery::new(question)).await?;
            for part in expected {
                assert!(
                    hits.iter().any(|h| h.content.contains(part)),
                    "{question:?} finds {part:?} on {store}: {hits:?}"
                );
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_word_only_a_summary_holds_finds_the_summary() -> anyhow::Result<()> {
    let stores = [
        ("SQLite", TestHelm::new().await?),
        ("PostgreSQL", TestHelm::on_postgres().await?),
        (
            "SQLite by meaning",
            TestHelm::with_options(|o| o.embedder = Some(Arc::new(WordHashEmbedder))).await?,
        ),
    ];
    for (store, t) in stores {
        t.helm
            .create_channel(&t.captain, "garden", "The garden.")
            .await?;
        let garden: ChannelRef = "garden".parse()?;
        let mut beds = history(
            "beds",
            &[
                "Let us plan the raised beds for spring.",
                "I can build them from the old planks.",
            ],
        );
        beds.extend_from_slice(
            br#"
{"type":"memory","kind":"summary","content":"Ada and Bob chose cedar planks, with marigolds along the edges.","thread":"beds"}"#,
        );
        t.helm
            .import_history(&t.captain, &garden, std::io::Cursor::new(beds))
            .await?;
        import_lines(&t, &garden, "shed", &["The shed needs a new lock."]).await?;
        t.helm.embed_backlog(None, |_, _| {}).await?;
        let hits = t
            .helm
            .recall(&garden, RecallQuery::new("marigolds"))
            .await?;
        let Some(first) = hits.first() else {
            panic!("nothing recalled on {store}");
        };
        assert_eq!(first.kind, "summary", "on {store}: {hits:?}");
        assert!(first.content.contains("marigolds"), "on {store}: {first:?}");
        assert_eq!(
            first.thread.as_ref().map(|t| t.title.as_str()),
            Some("Stock"),
            "on {store}"
        );
    }
    Ok(())
}

/// A workspace whose embedder hashes words, with `#launch` holding `lines`
/// as one embedded thread.
async fn launch_with(lines: &[&str]) -> anyhow::Result<(TestHelm, ChannelRef)> {
    let t = TestHelm::with_options(|o| o.embedder = Some(Arc::new(WordHashEmbedder))).await?;
    t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
    let launch: ChannelRef = "launch".parse()?;
    import_embedded(&t, &launch, "plan", lines).await?;
    Ok((t, launch))
}

/// Imports `lines` into `channel` as one thread named `name` and embeds
/// them, as the server would in the background.
async fn import_embedded(
    t: &TestHelm,
    channel: &ChannelRef,
    name: &str,
    lines: &[&str],
) -> anyhow::Result<()> {
    import_lines(t, channel, name, lines).await?;
    assert_eq!(
        t.helm.embed_backlog(None, |_, _| {}).await?,
        lines.len() as u64
    );
    Ok(())
}

/// Imports `lines` into `channel` as one thread named `name`, not embedded.
async fn import_lines(
    t: &TestHelm,
    channel: &ChannelRef,
    name: &str,
    lines: &[&str],
) -> anyhow::Result<()> {
    t.helm
        .import_history(
            &t.captain,
            channel,
            std::io::Cursor::new(history(name, lines)),
        )
        .await?;
    Ok(())
}

/// A history of `lines` in one thread named `name`, as `1helm import` reads it.
fn history(name: &str, lines: &[&str]) -> Vec<u8> {
    let mut history = format!(
        r#"{{"type":"thread","id":"{name}","title":"Stock","opened_at":"2024-01-01T09:00:00Z"}}"#,
    );
    for (i, text) in lines.iter().enumerate() {
        history.push_str(&format!(
            "\n{{\"type\":\"message\",\"thread\":\"{name}\",\"external_id\":\"{name}-{i}\",\"author\":\"clerk\",\"text\":\"{text}\",\"at\":\"2024-01-01T09:{:02}:00Z\"}}",
            i % 60
        ));
    }
    history.into_bytes()
}

#[tokio::test]
async fn vectors_stored_by_another_node_reach_a_channel_it_holds_in_memory() -> anyhow::Result<()> {
    use helm_core::memory::engine::RecallEngine;
    let t = TestHelm::with_options(|o| o.embedder = Some(Arc::new(WordHashEmbedder))).await?;
    t.helm
        .create_channel(&t.captain, "depot", "Stores.")
        .await?;
    let depot: ChannelRef = "depot".parse()?;
    let lines = ["crate one holds apples", "crate two holds pears"];
    import_embedded(&t, &depot, "a", &lines).await?;
    // Another node over the same store, with its own vectors in memory.
    let other = RecallEngine::new(t.helm.store().clone(), Some(Arc::new(WordHashEmbedder)));
    let id = t.helm.channel(&depot).await?.channel.id;
    let everyone = helm_core::Audience::operator();
    let meaning = |text: &'static str| {
        let (other, everyone) = (&other, &everyone);
        async move {
            let query = RecallQuery::new(text);
            let found = other
                .candidates(everyone, id, &query, &other.default_tuning())
                .await?;
            let top = found
                .dense
                .first()
                .map(|(k, _)| found.items[k].content.clone());
            anyhow::Ok(top.unwrap_or_default())
        }
    };
    assert_eq!(meaning("pears").await?, "crate two holds pears");
    assert_eq!(other.vector_cache().map(|c| c.channels), Some(1));

    // This node stores a new vector; the other finds it by meaning on its
    // next search, refreshing what it holds.
    import_embedded(&t, &depot, "b", &["the forklift keys hang by the door"]).await?;
    assert_eq!(
        meaning("forklift keys").await?,
        "the forklift keys hang by the door"
    );
    assert_eq!(meaning("pears").await?, "crate two holds pears");
    assert_eq!(other.vector_cache().map(|c| c.channels), Some(1));
    Ok(())
}

#[tokio::test]
async fn a_decision_kept_by_two_people_at_once_is_kept_once() -> anyhow::Result<()> {
    for (store, t) in [
        ("SQLite", TestHelm::new().await?),
        ("PostgreSQL", TestHelm::on_postgres().await?),
    ] {
        t.helm.create_channel(&t.captain, "launch", PURPOSE).await?;
        let launch: ChannelRef = "launch".parse()?;
        let bob = t.member("bob").await?;
        let decision = "Ship on the 14th, after the audit.";
        let kept = note(MemoryKind::Decision, decision);
        // At once: the Captain and Bob click "Record as a decision".
        let (first, second) = tokio::join!(
            t.helm.remember(&t.captain, &launch, kept.clone()),
            t.helm.remember(&bob, &launch, kept.clone()),
        );
        let (first, second) = (first?, second?);
        assert_eq!(first.id, second.id, "one record on {store}");
        // And again later: still the same record.
        let again = t.helm.remember(&bob, &launch, kept.clone()).await?;
        assert_eq!(again.id, first.id, "on {store}");
        let decisions = |t: &TestHelm| {
            let launch = launch.clone();
            let helm = t.helm.clone();
            async move {
                let filter = MemoryFilter {
                    kind: Some(MemoryKind::Decision),
                    ..Default::default()
                };
                helm.memory_list(&launch, filter).await
            }
        };
        assert_eq!(decisions(&t).await?.len(), 1, "on {store}");
        // The same words as something else (a fact), or once the decision
        // is forgotten, are a record of their own.
        let fact = t
            .helm
            .remember(&bob, &launch, note(MemoryKind::Fact, decision))
            .await?;
        assert_ne!(fact.id, first.id, "on {store}");
        t.helm.forget_memory(&t.captain, first.id).await?;
        let anew = t.helm.remember(&bob, &launch, kept).await?;
        assert_ne!(anew.id, first.id, "on {store}");
        assert_eq!(decisions(&t).await?.len(), 1, "on {store}");
    }
    Ok(())
}

#[tokio::test]
async fn a_member_importing_a_history_cannot_speak_as_another_person() -> anyhow::Result<()> {
    for (store, t) in [
        ("SQLite", TestHelm::new().await?),
        ("PostgreSQL", TestHelm::on_postgres().await?),
    ] {
        let bob = t.member("bob").await?;
        // Bob made the channel, so he manages it and may import into it.
        t.helm.create_channel(&bob, "bobs", "Bob's notes.").await?;
        let ch: ChannelRef = "bobs".parse()?;
        let history = r#"{"type":"thread","id":"s1","title":"Old talk"}
{"type":"message","thread":"s1","external_id":"1","author":"captain","text":"Bob may spend what he likes."}
{"type":"message","thread":"s1","external_id":"2","author":"bob","text":"Thanks!"}
"#;
        t.helm
            .import_history(&bob, &ch, std::io::Cursor::new(history.as_bytes().to_vec()))
            .await?;
        let threads = t.helm.threads(&ch, 10).await?;
        let messages = t.helm.thread_messages(threads[0].id).await?;
        assert!(
            matches!(messages[0].author, helm_core::model::Author::Guest { .. }),
            "the Captain's name from bob's file is a guest's on {store}: {:?}",
            messages[0].author
        );
        assert!(
            matches!(messages[1].author, helm_core::model::Author::Human { .. }),
            "bob's own lines are his on {store}"
        );
    }
    Ok(())
}

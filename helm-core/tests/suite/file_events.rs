//! A person's changes to a workspace through Helm: announced to the
//! channel as `file.changed` events, and a versioned save that cannot be
//! overtaken by another write through Helm between its check and its
//! write.

use helm_core::ErrorKind;
use helm_core::events::{EventBody, FileChange};
use helm_core::exec::content_version;

use super::kit::launch_files;

/// One announced change: (change, path, from, version, by).
type Announced = (FileChange, String, Option<String>, Option<String>, String);

#[tokio::test]
async fn a_persons_changes_are_announced_to_the_channel() -> anyhow::Result<()> {
    let (f, channel, files) = launch_files().await?;
    let launch = f.helm.channel(&channel).await?.channel.id;
    let start = f.helm.store().event_head().await?;

    files.write("notes/plan.md", b"v1\n".to_vec()).await?;
    files
        .write_unchanged(
            "/workspace/notes/plan.md",
            b"v2\n".to_vec(),
            &content_version(b"v1\n"),
        )
        .await?;
    // A refused save changes nothing and says nothing.
    let refused = files
        .write_unchanged("notes/plan.md", b"v3\n".to_vec(), &content_version(b"v1\n"))
        .await;
    assert!(matches!(refused, Err(e) if e.kind() == ErrorKind::Conflict));
    files.create("notes/new.md", b"new\n".to_vec()).await?;
    files.mkdir("drafts").await?;
    files.rename("notes/new.md", "drafts/new.md").await?;
    files.delete("drafts/new.md", false).await?;

    let events = f.helm.store().events_after(start, 100).await?;
    let mut announced: Vec<Announced> = Vec::new();
    for event in &events {
        if let EventBody::FileChanged {
            change,
            path,
            from,
            version,
            user_id,
            by,
        } = &event.body
        {
            assert_eq!(event.channel_id, Some(launch));
            assert_eq!(*user_id, f.captain.id);
            announced.push((
                *change,
                path.clone(),
                from.clone(),
                version.clone(),
                by.clone(),
            ));
        }
    }
    let by = || f.captain.display_name.clone();
    let v = |text: &[u8]| Some(content_version(text));
    assert_eq!(
        announced,
        vec![
            (
                FileChange::Saved,
                "/workspace/notes/plan.md".into(),
                None,
                v(b"v1\n"),
                by()
            ),
            (
                FileChange::Saved,
                "/workspace/notes/plan.md".into(),
                None,
                v(b"v2\n"),
                by()
            ),
            (
                FileChange::Created,
                "/workspace/notes/new.md".into(),
                None,
                v(b"new\n"),
                by()
            ),
            (
                FileChange::FolderCreated,
                "/workspace/drafts".into(),
                None,
                None,
                by()
            ),
            (
                FileChange::Moved,
                "/workspace/drafts/new.md".into(),
                Some("/workspace/notes/new.md".into()),
                None,
                by()
            ),
            (
                FileChange::Deleted,
                "/workspace/drafts/new.md".into(),
                None,
                None,
                by()
            ),
        ]
    );
    // The event reads as frontends get it.
    let saved = events
        .iter()
        .find(|e| e.body.type_name() == "file.changed")
        .map(serde_json::to_value)
        .transpose()?
        .unwrap_or_default();
    assert_eq!(saved["type"], "file.changed");
    assert_eq!(saved["change"], "saved");
    assert_eq!(saved["version"], content_version(b"v1\n"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn versioned_saves_from_one_version_race_to_one_winner() -> anyhow::Result<()> {
    let (f, channel, files) = launch_files().await?;
    files.write("notes/plan.md", b"opened\n".to_vec()).await?;
    let base = content_version(b"opened\n");

    const WRITERS: usize = 16;
    let mut saves = tokio::task::JoinSet::new();
    for n in 0..WRITERS {
        // Each writer its own handle, as each request gets one.
        let files = f.helm.workspace_files(&f.captain, &channel).await?;
        let base = base.clone();
        saves.spawn(async move {
            let text = format!("writer {n}\n");
            let saved = files
                .write_unchanged("notes/plan.md", text.clone().into_bytes(), &base)
                .await;
            (text, saved)
        });
    }
    let mut winners = Vec::new();
    let mut conflicts = 0;
    while let Some(joined) = saves.join_next().await {
        let (text, saved) = joined?;
        match saved {
            Ok(_) => winners.push(text),
            Err(e) if e.kind() == ErrorKind::Conflict => conflicts += 1,
            Err(e) => return Err(e.into()),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    assert_eq!(conflicts, WRITERS - 1);
    let text = files.read("notes/plan.md", None).await?;
    assert_eq!(text.content, winners[0]);
    Ok(())
}

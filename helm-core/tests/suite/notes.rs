//! Quick notes: saved whole under `/workspace/notes`, named from their
//! title, never over another file, and refused plainly when they cannot be.

use helm_core::model::{ArtifactKind, ChannelRef};
use helm_core::{ErrorKind, NewNote};

use super::kit::{Fixture, LAUNCH_PURPOSE};

async fn launch(f: &Fixture) -> anyhow::Result<ChannelRef> {
    let record = f
        .helm
        .create_channel(&f.captain, "launch", LAUNCH_PURPOSE)
        .await?;
    Ok(ChannelRef::Id(record.channel.id))
}

fn note(title: Option<&str>, text: &str) -> NewNote {
    NewNote {
        text: text.into(),
        title: title.map(Into::into),
    }
}

fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

/// The names in `/workspace/notes`, hidden ones included.
async fn names(f: &Fixture, channel: &ChannelRef) -> anyhow::Result<Vec<String>> {
    let files = f.helm.workspace_files(&f.captain, channel).await?;
    Ok(match files.list("notes").await {
        Ok(entries) => entries.into_iter().map(|e| e.name).collect(),
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e.into()),
    })
}

#[tokio::test]
async fn a_note_is_a_dated_markdown_file_recorded_as_an_artifact() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = launch(&f).await?;
    let saved = f
        .helm
        .save_note(
            &f.captain,
            &channel,
            note(Some(" Launch ideas: Q3! "), "- a blog post\n- a demo\n\n"),
        )
        .await?;
    // Named by the day it was saved (UTC) and its title.
    let name = saved.path.strip_prefix("/workspace/notes/").unwrap_or("");
    assert_eq!(
        name.get(10..),
        Some("-launch-ideas-q3.md"),
        "{}",
        saved.path
    );
    assert!(name.starts_with("20"), "{}", saved.path);
    let files = f.helm.workspace_files(&f.captain, &channel).await?;
    let text = files.read(&saved.path, None).await?;
    assert_eq!(
        text.content,
        "# Launch ideas: Q3!\n\n- a blog post\n- a demo\n"
    );

    // Without a title the name comes from the first line with words.
    let untitled = f
        .helm
        .save_note(
            &f.captain,
            &channel,
            note(None, "\n## Call Dana\nabout May"),
        )
        .await?;
    assert!(
        untitled.path.ends_with("-call-dana.md"),
        "{}",
        untitled.path
    );
    assert_eq!(
        files.read(&untitled.path, None).await?.content,
        "\n## Call Dana\nabout May\n"
    );

    let artifacts = f.helm.channel_artifacts(&f.captain, &channel, None).await?;
    for path in [&saved.path, &untitled.path] {
        let artifact = artifacts.iter().find(|a| &a.path == path);
        assert!(
            artifact.is_some_and(|a| a.kind == ArtifactKind::Upload && a.created_by == "captain"),
            "{path} in {artifacts:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn notes_with_one_title_never_replace_each_other() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = launch(&f).await?;
    // A file a person made by hand already has the first name.
    let files = f.helm.workspace_files(&f.captain, &channel).await?;
    let first = format!("notes/{}-standup.md", today());
    files.write(&first, b"kept".to_vec()).await?;

    let saves = (0..8).map(|i| {
        f.helm.save_note(
            &f.captain,
            &channel,
            note(Some("Standup"), &format!("note {i}")),
        )
    });
    let saved = futures_util::future::join_all(saves)
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut paths: Vec<&str> = saved.iter().map(|e| e.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), 8, "{paths:?}");
    assert_eq!(files.read(&first, None).await?.content, "kept");
    // Every note is whole, and no draft is left behind.
    let mut bodies = Vec::new();
    for entry in &saved {
        bodies.push(files.read(&entry.path, None).await?.content);
    }
    bodies.sort_unstable();
    let expected: Vec<String> = (0..8).map(|i| format!("# Standup\n\nnote {i}\n")).collect();
    assert_eq!(bodies, expected);
    let names = names(&f, &channel).await?;
    assert_eq!(names.len(), 9, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    Ok(())
}

#[tokio::test]
async fn bad_notes_are_refused_and_leave_nothing() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let channel = launch(&f).await?;
    let cases = [
        (note(None, " \n\t "), "text"),
        (note(Some("  "), ""), "text"),
        (note(Some("two\nlines"), "x"), "title"),
        (note(Some(&"t".repeat(201)), "x"), "title"),
        (
            note(None, &"x".repeat(helm_core::MAX_NOTE_BYTES + 1)),
            "text",
        ),
    ];
    for (bad, field) in cases {
        let err = f
            .helm
            .save_note(&f.captain, &channel, bad)
            .await
            .err()
            .ok_or_else(|| anyhow::anyhow!("a bad note was saved"))?;
        assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
        assert!(err.to_string().contains(field), "{err}");
    }
    assert_eq!(names(&f, &channel).await?, Vec::<String>::new());

    // An archived channel's workspace keeps what it has.
    f.helm.archive_channel(&f.captain, &channel).await?;
    let err = f
        .helm
        .save_note(&f.captain, &channel, note(None, "after the archive"))
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("a note was saved in an archived channel"))?;
    assert!(err.to_string().contains("archived"), "{err}");
    assert_eq!(names(&f, &channel).await?, Vec::<String>::new());
    Ok(())
}

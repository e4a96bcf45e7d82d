//! The file API of a channel's workspace: what it does, and what it refuses.

use helm_core::ErrorKind;
use helm_core::exec::{FileKind, GrepQuery, LineRange};
use helm_core::model::ChannelRef;

use super::kit::{Fixture, launch_files};

#[tokio::test]
async fn write_read_list_stat_with_agent_visible_paths() -> anyhow::Result<()> {
    let (f, channel, files) = launch_files().await?;
    let written = files
        .write("notes/plan.md", "one\ntwo\nthree\n".into())
        .await?;
    assert_eq!(written.path, "/workspace/notes/plan.md");
    assert_eq!(written.size, 14);

    let text = files.read("/workspace/notes/plan.md", None).await?;
    assert_eq!(text.content, "one\ntwo\nthree\n");
    assert_eq!(
        (text.start_line, text.end_line, text.total_lines),
        (1, 3, 3)
    );
    let middle = files
        .read(
            "notes/./plan.md",
            Some(LineRange {
                start: 2,
                end: Some(2),
            }),
        )
        .await?;
    assert_eq!(middle.content, "two\n");
    assert_eq!(middle.start_line, 2);

    let listing = files.list("/workspace").await?;
    assert_eq!(listing.len(), 1);
    assert_eq!(listing[0].path, "/workspace/notes");
    assert_eq!(listing[0].kind, FileKind::Dir);
    let stat = files.stat("notes/plan.md").await?;
    assert_eq!(stat.kind, FileKind::File);
    assert_eq!(stat.name, "plan.md");

    // The bytes are in the channel's workspace on the host, and the agent's
    // shell sees them too.
    let host = f
        .helm
        .data_root()
        .world(stat_channel(&f, &channel).await?)
        .workspace();
    assert_eq!(
        std::fs::read_to_string(host.join("notes/plan.md"))?,
        "one\ntwo\nthree\n"
    );
    let shell = f
        .helm
        .exec(
            &f.captain,
            &channel,
            helm_core::exec::CommandSpec::new("cat notes/plan.md; ls -l notes"),
        )
        .await?;
    assert!(
        shell.stdout.starts_with("one\ntwo\nthree\n"),
        "{}",
        shell.stdout
    );
    assert!(
        shell.stdout.contains("agent"),
        "files belong to the agent: {}",
        shell.stdout
    );
    Ok(())
}

async fn stat_channel(
    f: &Fixture,
    channel: &ChannelRef,
) -> anyhow::Result<helm_core::model::ChannelId> {
    Ok(f.helm.channel(channel).await?.channel.id)
}

#[tokio::test]
async fn mkdir_move_delete_behave_like_a_careful_shell() -> anyhow::Result<()> {
    let (_f, _channel, files) = launch_files().await?;
    files.mkdir("a/b/c").await?;
    files.mkdir("a/b").await?; // already there: fine
    files.write("a/b/c/x.txt", "x".into()).await?;

    let moved = files.rename("a/b/c/x.txt", "done/y.txt").await?;
    assert_eq!(moved.path, "/workspace/done/y.txt");
    assert_eq!(files.read("done/y.txt", None).await?.content, "x");
    assert_eq!(
        files.stat("a/b/c/x.txt").await.err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
    files.write("other.txt", "o".into()).await?;
    let clash = files.rename("other.txt", "done/y.txt").await;
    assert_eq!(clash.err().map(|e| e.kind()), Some(ErrorKind::Conflict));

    let not_empty = files.delete("a", false).await;
    assert_eq!(not_empty.err().map(|e| e.kind()), Some(ErrorKind::Conflict));
    files.delete("a", true).await?;
    assert_eq!(
        files.stat("a").await.err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
    let root = files.delete("/workspace", true).await;
    assert_eq!(root.err().map(|e| e.kind()), Some(ErrorKind::Refused));
    Ok(())
}

#[tokio::test]
async fn create_makes_a_new_file_whole_and_never_replaces_one() -> anyhow::Result<()> {
    let (_f, _channel, files) = launch_files().await?;
    let made = files.create("docs/brief.md", "# Brief\n".into()).await?;
    assert_eq!(made.path, "/workspace/docs/brief.md");
    assert_eq!(
        files.read("docs/brief.md", None).await?.content,
        "# Brief\n"
    );

    let again = files
        .create("/workspace/docs/brief.md", "other".into())
        .await;
    let err = again
        .err()
        .ok_or_else(|| anyhow::anyhow!("a taken name was replaced"))?;
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(
        err.to_string()
            .contains("/workspace/docs/brief.md already exists"),
        "{err}"
    );
    assert_eq!(
        files.read("docs/brief.md", None).await?.content,
        "# Brief\n"
    );

    // Eight writers race for one name: one wins, seven are refused, and no
    // draft is left in the folder.
    let racers = (0..8).map(|i| {
        let files = files.clone();
        async move {
            files
                .create("docs/race.md", format!("writer {i}").into())
                .await
        }
    });
    let results = futures_util::future::join_all(racers).await;
    let won: Vec<_> = results.iter().filter(|r| r.is_ok()).collect();
    assert_eq!(won.len(), 1);
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| e.kind() == ErrorKind::Conflict)
    );
    let names: Vec<_> = files
        .list("docs")
        .await?
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, ["brief.md", "race.md"]);

    // Keep both: the first free numbered name, the original untouched.
    let second = files.create_numbered("docs/brief.md", "v2".into()).await?;
    assert_eq!(second.path, "/workspace/docs/brief-2.md");
    let third = files.create_numbered("docs/brief.md", "v3".into()).await?;
    assert_eq!(third.path, "/workspace/docs/brief-3.md");
    assert_eq!(
        files.read("docs/brief.md", None).await?.content,
        "# Brief\n"
    );

    let folder = files.create("docs/", "x".into()).await;
    assert_eq!(folder.err().map(|e| e.kind()), Some(ErrorKind::Invalid));
    Ok(())
}

#[tokio::test]
async fn grep_and_glob_search_the_workspace() -> anyhow::Result<()> {
    let (_f, _channel, files) = launch_files().await?;
    files
        .write("src/main.rs", "fn main() {\n    launch();\n}\n".into())
        .await?;
    files
        .write("src/lib.rs", "pub fn launch() {}\n".into())
        .await?;
    files.write("README.md", "Launch notes\n".into()).await?;
    files
        .write(".git/config", "launch = secret-ish\n".into())
        .await?;

    let found = files.grep(GrepQuery::new("launch\\(")).await?;
    let hits: Vec<(String, usize)> = found
        .matches
        .iter()
        .map(|m| (m.path.clone(), m.line))
        .collect();
    assert_eq!(
        hits,
        [
            ("/workspace/src/lib.rs".to_string(), 1),
            ("/workspace/src/main.rs".to_string(), 2)
        ]
    );
    let mut query = GrepQuery::new("LAUNCH");
    query.ignore_case = true;
    query.glob = Some("*.md".into());
    let found = files.grep(query).await?;
    assert_eq!(found.matches.len(), 1);
    assert_eq!(found.matches[0].text, "Launch notes");
    let bad = files.grep(GrepQuery::new("(")).await;
    assert_eq!(bad.err().map(|e| e.kind()), Some(ErrorKind::Invalid));

    let globbed = files.glob("src/*.rs").await?;
    assert_eq!(
        globbed.paths,
        ["/workspace/src/lib.rs", "/workspace/src/main.rs"]
    );
    let anywhere = files.glob("/workspace/**/*.md").await?;
    assert_eq!(anywhere.paths, ["/workspace/README.md"]);
    let outside = files.glob("../*").await;
    assert_eq!(outside.err().map(|e| e.kind()), Some(ErrorKind::Forbidden));
    Ok(())
}

#[tokio::test]
async fn bad_paths_get_clear_errors_of_the_right_kind() -> anyhow::Result<()> {
    let (_f, _channel, files) = launch_files().await?;
    files.write("f.txt", "f".into()).await?;
    let cases = [
        (
            "../x",
            ErrorKind::Forbidden,
            "path escapes /workspace: ../x",
        ),
        (
            "/etc/passwd",
            ErrorKind::Forbidden,
            "path escapes /workspace: /etc/passwd",
        ),
        ("", ErrorKind::Invalid, "invalid path"),
        (
            "missing.txt",
            ErrorKind::NotFound,
            "/workspace/missing.txt not found",
        ),
        (
            "/workspace",
            ErrorKind::Invalid,
            "/workspace is a directory",
        ),
        ("f.txt/inner", ErrorKind::Invalid, "not a directory"),
    ];
    for (path, kind, message) in cases {
        let err = files.read(path, None).await.err();
        assert_eq!(
            err.as_ref().map(|e| e.kind()),
            Some(kind),
            "{path:?}: {err:?}"
        );
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains(message), "{path:?}: {text}");
        assert!(!text.contains("/channels/"), "a host path leaked: {text}");
    }
    let range = files
        .read(
            "f.txt",
            Some(LineRange {
                start: 0,
                end: None,
            }),
        )
        .await;
    assert_eq!(range.err().map(|e| e.kind()), Some(ErrorKind::Invalid));
    files.write("bin.dat", vec![0u8, 1, 2]).await?;
    let binary = files.read("bin.dat", None).await;
    assert_eq!(binary.err().map(|e| e.kind()), Some(ErrorKind::Invalid));
    assert_eq!(files.read_bytes("bin.dat", 10).await?.bytes, [0, 1, 2]);
    Ok(())
}

//! `1helm thread list --before` pages back through a channel's threads and
//! `1helm thread archive` archives one: on a data directory and through a
//! server alike, with the same output and exit codes.

use super::kit::{Cli, Run, path_str};
use super::server::{Server, ok};

/// Five sessions, opened a day apart.
fn history() -> String {
    (1..=5)
        .map(|n| {
            format!(
                concat!(
                    r#"{{"type":"thread","id":"s{n}","title":"Session {n}","opened_at":"2026-03-0{n}T09:00:00Z"}}"#,
                    "\n",
                    r#"{{"type":"message","thread":"s{n}","external_id":"m{n}","author":"Caroline","text":"Note {n}.","at":"2026-03-0{n}T09:01:00Z"}}"#,
                    "\n",
                ),
                n = n
            )
        })
        .collect()
}

/// One way to run `1helm`: through a server or on a data directory.
type RunOn<'a> = dyn Fn(&[&str]) -> anyhow::Result<Run> + 'a;

/// The ids `1helm --json thread list launch EXTRA…` lists.
fn ids(run: &RunOn, extra: &[&str]) -> anyhow::Result<Vec<i64>> {
    let args = [&["--json", "thread", "list", "launch"], extra].concat();
    let listed = run(&args)?;
    ok(&listed)?;
    let found = listed.json()?;
    let threads = found.as_array().cloned().unwrap_or_default();
    Ok(threads.iter().filter_map(|t| t["id"].as_i64()).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_page_back_and_archive_here_and_through_a_server() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let local = Cli::empty()?;
    ok(&local.run(&["init", "--captain", "ada"])?)?;
    let file = server.cli.dir.path().join("history.jsonl");
    std::fs::write(&file, history())?;
    let sides: [(&str, &RunOn); 2] = [("server", &|a| server.run(a)), ("local", &|a| local.run(a))];
    for (side, run) in sides {
        for channel in ["launch", "ops"] {
            ok(&run(&["channel", "create", channel, "--purpose", "Work."])?)?;
            ok(&run(&["import", channel, path_str(&file)?])?)?;
        }
        let all = ids(run, &[])?;
        assert_eq!(all.len(), 5, "{side}: {all:?}");

        // Page by page, each saying how to get the next while more remain.
        assert_eq!(ids(run, &["--limit", "2"])?, all[..2], "{side}");
        let first = run(&["thread", "list", "launch", "--limit", "2"])?;
        ok(&first)?;
        let next = format!(
            "Older threads: `1helm thread list launch --limit 2 --before {}`",
            all[1]
        );
        assert!(first.stdout.contains(&next), "{side}: {}", first.stdout);
        let before = all[1].to_string();
        assert_eq!(
            ids(run, &["--limit", "2", "--before", &before])?,
            all[2..4],
            "{side}"
        );
        let before = all[3].to_string();
        let last = run(&[
            "thread", "list", "launch", "--limit", "2", "--before", &before,
        ])?;
        ok(&last)?;
        assert!(last.stdout.contains("Session 1"), "{side}: {}", last.stdout);
        assert!(!last.stdout.contains("Older"), "{side}: {}", last.stdout);
        assert_eq!(ids(run, &["--before", &before])?, all[4..], "{side}");
        let oldest = all[4].to_string();
        let none = run(&["thread", "list", "launch", "--before", &oldest])?;
        assert_eq!(none.stdout.trim(), "No older threads.", "{side}");
        // Exactly a page's worth left: no next page to offer.
        let whole = run(&["thread", "list", "launch", "--limit", "5"])?;
        assert!(!whole.stdout.contains("Older"), "{side}: {}", whole.stdout);

        // A place that is not in this listing, or not there at all.
        let elsewhere = run(&["--json", "thread", "list", "ops"])?.json()?;
        let theirs = elsewhere[0]["id"].as_i64().unwrap_or_default().to_string();
        let wrong = run(&["thread", "list", "launch", "--before", &theirs])?;
        assert_eq!(wrong.code, 2, "{side}: {}", wrong.stderr);
        assert!(
            wrong.stderr.contains("in another channel"),
            "{side}: {}",
            wrong.stderr
        );
        let missing = run(&["thread", "list", "launch", "--before", "9999"])?;
        assert_eq!(missing.code, 3, "{side}: {}", missing.stderr);
        let searched = run(&[
            "thread", "list", "launch", "--search", "note", "--before", &before,
        ])?;
        assert_eq!(searched.code, 2, "{side}: {}", searched.stderr);

        // Archived, it is listed apart until reopened.
        let newest = all[0].to_string();
        let archived = run(&["thread", "archive", &newest])?;
        ok(&archived)?;
        assert_eq!(
            archived.stdout.trim(),
            format!("Thread {newest} archived; `1helm thread reopen {newest}` brings it back."),
            "{side}"
        );
        assert_eq!(ids(run, &["--archived"])?, [all[0]], "{side}");
        assert_eq!(
            ids(run, &["--hide-archived", "--limit", "2"])?,
            all[1..3],
            "{side}"
        );
        let hidden = run(&[
            "thread",
            "list",
            "launch",
            "--hide-archived",
            "--limit",
            "2",
        ])?;
        let next = format!(
            "`1helm thread list launch --hide-archived --limit 2 --before {}`",
            all[2]
        );
        assert!(hidden.stdout.contains(&next), "{side}: {}", hidden.stdout);
        let again = run(&["thread", "archive", &newest])?;
        assert_eq!(again.code, 4, "{side}: {}", again.stderr);
        assert!(!again.stderr.contains("/api/"), "{side}: {}", again.stderr);
        let nothing = run(&["thread", "archive", "9999"])?;
        assert_eq!(nothing.code, 3, "{side}: {}", nothing.stderr);
        let garbled = run(&["thread", "archive", "the-newest"])?;
        assert_eq!(garbled.code, 2, "{side}: {}", garbled.stderr);
        ok(&run(&["thread", "reopen", &newest])?)?;
        assert_eq!(ids(run, &["--archived"])?, [0; 0], "{side}");
    }
    server.stop().await;
    Ok(())
}

#[test]
fn a_thread_hidden_from_someone_is_not_theirs_to_archive_or_page_from() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    ok(&cli.run(&["user", "add", "mira"])?)?;
    ok(&cli.run(&[
        "channel",
        "create",
        "vault",
        "--purpose",
        "Secrets.",
        "--private",
    ])?)?;
    ok(&cli.run(&["channel", "create", "launch", "--purpose", "Work."])?)?;
    let file = cli.dir.path().join("history.jsonl");
    std::fs::write(&file, history())?;
    ok(&cli.run(&["import", "vault", path_str(&file)?])?)?;
    let listed = cli.run(&["--json", "thread", "list", "vault"])?.json()?;
    let id = listed[0]["id"].as_i64().unwrap_or_default().to_string();
    let archive = cli.run(&["--as", "mira", "thread", "archive", &id])?;
    assert_eq!(archive.code, 3, "{}", archive.stderr);
    let page = cli.run(&["--as", "mira", "thread", "list", "launch", "--before", &id])?;
    assert_eq!(page.code, 3, "{}", page.stderr);
    let shown = cli.run(&["--json", "thread", "show", &id])?.json()?;
    assert_eq!(shown["thread"]["status"], "resolved", "{shown}");
    Ok(())
}

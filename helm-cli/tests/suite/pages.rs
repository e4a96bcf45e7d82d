//! Lists that outgrow a page say so and page back: `1helm memory list
//! --before`, `1helm thread show --limit/--before/--all` and `1helm
//! activity --before`, on a data directory and through a server alike.

use helm_tests::mock::{Behaviour, MockOpenAi};

use super::kit::{Cli, Run, path_str};
use super::server::{Server, ok};

/// One thread of five messages, and five memory records of it.
fn history() -> String {
    let mut lines = vec![
        r#"{"type":"thread","id":"s1","title":"Planning","opened_at":"2026-03-01T09:00:00Z"}"#
            .to_string(),
    ];
    for n in 1..=5 {
        lines.push(format!(
            r#"{{"type":"message","thread":"s1","external_id":"m{n}","author":"Caroline","text":"Note {n}.","at":"2026-03-01T09:0{n}:00Z"}}"#
        ));
        lines.push(format!(
            r#"{{"type":"memory","kind":"fact","content":"Fact {n}.","thread":"s1"}}"#
        ));
    }
    lines.join("\n") + "\n"
}

/// One way to run `1helm`: through a server or on a data directory.
type RunOn<'a> = dyn Fn(&[&str]) -> anyhow::Result<Run> + 'a;

/// The ids `1helm --json memory list launch EXTRA…` lists.
fn record_ids(run: &RunOn, extra: &[&str]) -> anyhow::Result<Vec<i64>> {
    let args = [&["--json", "memory", "list", "launch"], extra].concat();
    let listed = run(&args)?;
    ok(&listed)?;
    let found = listed.json()?;
    let records = found.as_array().cloned().unwrap_or_default();
    Ok(records.iter().filter_map(|r| r["id"].as_i64()).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_a_long_thread_page_back_here_and_through_a_server() -> anyhow::Result<()> {
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
        let all = record_ids(run, &[])?;
        assert_eq!(all.len(), 5, "{side}: {all:?}");

        // A pinned record leads the list, and paging keeps its order.
        let oldest = all[4].to_string();
        ok(&run(&["memory", "pin", &oldest])?)?;
        let order = record_ids(run, &[])?;
        assert_eq!(order[0], all[4], "{side}: {order:?}");
        let first = run(&["memory", "list", "launch", "--limit", "2"])?;
        ok(&first)?;
        let next = format!(
            "Older records: `1helm memory list launch --limit 2 --before {}`",
            order[1]
        );
        assert!(first.stdout.contains(&next), "{side}: {}", first.stdout);
        let mut paged = record_ids(run, &["--limit", "2"])?;
        while let Some(last) = paged.last().map(i64::to_string) {
            let page = record_ids(run, &["--limit", "2", "--before", &last])?;
            if page.is_empty() {
                break;
            }
            paged.extend(page);
        }
        assert_eq!(paged, order, "{side}: every record once, in order");
        // The last page offers no next one, even when it is full.
        let tail = order[2].to_string();
        let last = run(&[
            "memory", "list", "launch", "--limit", "2", "--before", &tail,
        ])?;
        ok(&last)?;
        assert!(!last.stdout.contains("Older"), "{side}: {}", last.stdout);
        let end = order[4].to_string();
        let none = run(&["memory", "list", "launch", "--before", &end])?;
        assert_eq!(none.stdout.trim(), "No older records.", "{side}");
        // A record of another channel marks no place in this one.
        let theirs = run(&["--json", "memory", "list", "ops"])?.json()?;
        let theirs = theirs[0]["id"].as_i64().unwrap_or_default().to_string();
        let wrong = run(&["memory", "list", "launch", "--before", &theirs])?;
        assert_eq!(wrong.code, 2, "{side}: {}", wrong.stderr);
        assert!(
            wrong.stderr.contains("not in #launch"),
            "{side}: {}",
            wrong.stderr
        );
        let garbled = run(&["memory", "list", "launch", "--before", "last"])?;
        assert_eq!(garbled.code, 2, "{side}: {}", garbled.stderr);

        // A thread shows its newest messages and says how to see more.
        let threads = run(&["--json", "thread", "list", "launch"])?.json()?;
        let thread = threads[0]["id"].as_i64().unwrap_or_default().to_string();
        let shown = run(&["thread", "show", &thread, "--limit", "2"])?;
        ok(&shown)?;
        assert!(shown.stdout.contains("Note 5."), "{side}: {}", shown.stdout);
        assert!(shown.stdout.contains("Note 4."), "{side}: {}", shown.stdout);
        assert!(
            !shown.stdout.contains("Note 3."),
            "{side}: {}",
            shown.stdout
        );
        let json = run(&["--json", "thread", "show", &thread, "--limit", "2"])?.json()?;
        let before = json["next_before"].as_i64().unwrap_or_default().to_string();
        assert_eq!(json["messages"].as_array().map(Vec::len), Some(2), "{side}");
        let hint = format!("`1helm thread show {thread} --limit 2 --before {before}`");
        assert!(shown.stdout.contains(&hint), "{side}: {}", shown.stdout);
        let older = run(&[
            "thread", "show", &thread, "--limit", "3", "--before", &before,
        ])?;
        ok(&older)?;
        for n in 1..=3 {
            assert!(
                older.stdout.contains(&format!("Note {n}.")),
                "{side}: {}",
                older.stdout
            );
        }
        assert!(
            !older.stdout.contains("Note 4."),
            "{side}: {}",
            older.stdout
        );
        assert!(
            !older.stdout.contains("older ones"),
            "{side}: {}",
            older.stdout
        );
        let every = run(&["thread", "show", &thread, "--all"])?;
        ok(&every)?;
        for n in 1..=5 {
            assert!(
                every.stdout.contains(&format!("Note {n}.")),
                "{side}: {}",
                every.stdout
            );
        }
        let whole = run(&["thread", "show", &thread])?;
        assert!(
            !whole.stdout.contains("older ones"),
            "{side}: {}",
            whole.stdout
        );
        let both = run(&["thread", "show", &thread, "--all", "--limit", "2"])?;
        assert_eq!(both.code, 2, "{side}: {}", both.stderr);
    }
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn activity_says_older_actions_exist_and_pages_back() -> anyhow::Result<()> {
    let mock = MockOpenAi::start().await?;
    let cli = Cli::init()?;
    let base = mock.base_url();
    ok(&cli.run(&[
        "provider",
        "add",
        "mock",
        "--kind",
        "openai",
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--default",
    ])?)?;
    ok(&cli.run(&["channel", "create", "launch", "--purpose", "Work."])?)?;
    for n in 1..=3 {
        mock.push(Behaviour::tool_call(
            "write_file",
            &format!(r##"{{"path": "step-{n}.md", "content": "# Step {n}"}}"##),
        ));
    }
    mock.push(Behaviour::text("Wrote three steps."));
    ok(&cli.run(&["say", "launch", "@launch-agent write the steps"])?)?;

    let all = cli.run(&["--json", "activity", "launch"])?.json()?;
    let ids: Vec<i64> = all
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["id"].as_i64()).collect())
        .unwrap_or_default();
    assert_eq!(ids.len(), 3, "{all}");
    let newest = cli.run(&["activity", "launch", "--limit", "2"])?;
    ok(&newest)?;
    assert!(newest.stdout.contains("step-3.md"), "{}", newest.stdout);
    assert!(!newest.stdout.contains("step-1.md"), "{}", newest.stdout);
    let next = format!(
        "Older actions: `1helm activity launch --limit 2 --before {}`",
        ids[1]
    );
    assert!(newest.stdout.contains(&next), "{}", newest.stdout);
    let before = ids[1].to_string();
    let older = cli.run(&["activity", "launch", "--limit", "2", "--before", &before])?;
    ok(&older)?;
    assert!(older.stdout.contains("step-1.md"), "{}", older.stdout);
    assert!(!older.stdout.contains("step-2.md"), "{}", older.stdout);
    assert!(!older.stdout.contains("Older"), "{}", older.stdout);
    // Exactly a page's worth: nothing older to offer.
    let whole = cli.run(&["activity", "launch", "--limit", "3"])?;
    assert!(!whole.stdout.contains("Older"), "{}", whole.stdout);
    let first = ids[0].to_string();
    let none = cli.run(&["activity", "launch", "--before", &first])?;
    assert_eq!(none.stdout.trim(), "No older tool actions.");
    let wide = cli.run(&["activity", "launch", "--limit", "501"])?;
    assert_eq!(wide.code, 2, "{}", wide.stderr);
    Ok(())
}

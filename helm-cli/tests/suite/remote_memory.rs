//! Memory, recall, import and files through a server (`--server URL --token
//! T`): the same output, JSON and exit codes as on a data directory, and the
//! server's access rules for private channels.

use assert_cmd::Command;
use serde_json::Value;

use super::kit::{Cli, Run, path_str};
use super::server::{Server, ok};

/// A data directory initialised with the same Captain as [`Server`]'s.
fn local_like_server() -> anyhow::Result<Cli> {
    let cli = Cli::empty()?;
    ok(&cli.run(&["init", "--captain", "ada"])?)?;
    Ok(cli)
}

/// `value` without its `created` (and `forgotten_at`) timestamps, which
/// differ between two workspaces by nature.
fn timeless(mut value: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("created");
                map.remove("forgotten_at");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// A history of one session: two messages with external ids and a fact
/// drawn from the first.
const HISTORY: &str = concat!(
    r#"{"type":"thread","id":"s1","title":"Session 1","opened_at":"2023-05-08T13:56:00Z"}"#,
    "\n",
    r#"{"type":"message","thread":"s1","external_id":"D1:1","author":"Caroline","text":"I work as a school counselor now.","at":"2023-05-08T13:56:00Z"}"#,
    "\n",
    r#"{"type":"message","thread":"s1","external_id":"D1:2","author":"Mel","text":"That suits you.","at":"2023-05-08T13:57:00Z"}"#,
    "\n",
    r#"{"type":"memory","kind":"fact","content":"Caroline is a school counselor.","thread":"s1","source_external_id":"D1:1"}"#,
    "\n",
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_round_trips_through_a_server_with_the_same_json_as_local() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let local = local_like_server()?;
    let create = ["channel", "create", "launch", "--purpose", "The launch."];
    ok(&server.run(&create)?)?;
    ok(&local.run(&create)?)?;

    // Each step through the server and on the data directory: the same
    // exit code, the same JSON (less timestamps) and the same text.
    let same = |args: &[&str]| -> anyhow::Result<Value> {
        let (remote, here) = (server.run(args)?, local.run(args)?);
        ok(&remote)?;
        ok(&here)?;
        let (remote_json, here_json) = (timeless(remote.json()?), timeless(here.json()?));
        assert_eq!(remote_json, here_json, "{args:?}");
        let text: Vec<&str> = args.iter().copied().filter(|a| *a != "--json").collect();
        let (remote, here) = (server.run(&text)?, local.run(&text)?);
        assert_eq!(
            (remote.code, &remote.stdout),
            (here.code, &here.stdout),
            "{text:?}"
        );
        Ok(remote_json)
    };

    let empty = same(&["--json", "memory", "list", "launch"])?;
    assert_eq!(empty, serde_json::json!([]));
    // Added once on each side (the text run of `same` would add it twice).
    let add = [
        "--json",
        "memory",
        "add",
        "launch",
        "--kind",
        "decision",
        "Ship on Friday.",
    ];
    let (remote, here) = (server.run(&add)?, local.run(&add)?);
    ok(&remote)?;
    ok(&here)?;
    let added = timeless(remote.json()?);
    assert_eq!(added, timeless(here.json()?));
    assert_eq!(added["kind"], "decision");
    assert_eq!(added["author_name"], "ada");
    let id = added["id"].as_i64().unwrap_or_default().to_string();

    let listed = same(&["--json", "memory", "list", "launch"])?;
    assert_eq!(listed[0]["content"], "Ship on Friday.");

    let edit = ["--json", "memory", "edit", &id, "Ship on Monday."];
    let (remote, here) = (server.run(&edit)?, local.run(&edit)?);
    ok(&remote)?;
    ok(&here)?;
    let edited = timeless(remote.json()?);
    assert_eq!(edited, timeless(here.json()?));
    assert_eq!(edited["content"], "Ship on Monday.");
    let new_id = edited["id"].as_i64().unwrap_or_default().to_string();

    let pinned = same(&["--json", "memory", "pin", &new_id])?;
    assert_eq!(pinned["pinned"], true);
    let unpinned = same(&["--json", "memory", "pin", &new_id, "--off"])?;
    assert_eq!(unpinned["pinned"], false);
    let all = same(&["--json", "memory", "list", "launch", "--all"])?;
    assert_eq!(all.as_array().map(Vec::len), Some(2));
    assert_eq!(all[1]["status"], "superseded");
    same(&["--json", "memory", "list", "launch", "--kind", "fact"])?;

    let forget = ["--json", "memory", "forget", &new_id];
    let (remote, here) = (server.run(&forget)?, local.run(&forget)?);
    ok(&remote)?;
    ok(&here)?;
    assert_eq!(timeless(remote.json()?), timeless(here.json()?));
    assert_eq!(remote.json()?["status"], "forgotten");
    same(&["--json", "memory", "list", "launch", "--all"])?;

    // Errors: the same exit codes and messages.
    for (args, code) in [
        (vec!["memory", "pin", new_id.as_str()], 4),
        (vec!["memory", "edit", "999", "x"], 3),
        (vec!["memory", "list", "nowhere"], 3),
        (vec!["memory", "list", "launch", "--limit", "0"], 2),
        (vec!["memory", "add", "launch", "--kind", "fact", "  "], 2),
        (vec!["recall", "launch", " "], 2),
        (vec!["recall", "launch", "ship", "--limit", "51"], 2),
    ] {
        let (remote, here) = (server.run(&args)?, local.run(&args)?);
        assert_eq!(remote.code, code, "{args:?}: {}", remote.stderr);
        assert_eq!(here.code, code, "{args:?}: {}", here.stderr);
        assert_eq!(remote.stderr, here.stderr, "{args:?}");
    }
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_through_a_server_finds_an_import_with_its_external_ids() -> anyhow::Result<()> {
    let server = Server::start().await?;
    ok(&server.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let file = server.cli.dir.path().join("history.jsonl");
    std::fs::write(&file, HISTORY)?;

    let imported = server.run(&["import", "launch", path_str(&file)?])?;
    ok(&imported)?;
    assert!(
        imported
            .stdout
            .contains("Imported 1 threads, 2 messages and 1 memory records into launch"),
        "{}",
        imported.stdout
    );
    assert!(
        imported
            .stdout
            .contains("The server indexes them for meaning in the background."),
        "{}",
        imported.stdout
    );

    let hits = server
        .run(&["--json", "recall", "launch", "Where does Caroline work?"])?
        .json()?;
    let hits = hits.as_array().cloned().unwrap_or_default();
    let fact = hits
        .iter()
        .find(|h| h["kind"] == "fact")
        .ok_or_else(|| anyhow::anyhow!("no fact recalled: {hits:?}"))?;
    assert_eq!(fact["content"], "Caroline is a school counselor.");
    assert_eq!(fact["source_external_ids"], serde_json::json!(["D1:1"]));
    assert_eq!(fact["thread"]["title"], "Session 1");
    let text = server.run(&["recall", "launch", "Caroline counselor"])?;
    ok(&text)?;
    assert!(text.stdout.contains("from D1:1"), "{}", text.stdout);

    // The same history on a data directory recalls the same items.
    let local = local_like_server()?;
    ok(&local.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let json = local.run(&["--json", "import", "launch", path_str(&file)?, "--no-embed"])?;
    ok(&json)?;
    assert_eq!(json.json()?["imported"]["messages"], 2);
    let here = local
        .run(&["--json", "recall", "launch", "Where does Caroline work?"])?
        .json()?;
    let ids = |hits: &[Value]| -> Vec<(String, Value)> {
        let mut ids: Vec<(String, Value)> = hits
            .iter()
            .map(|h| (h["kind"].to_string(), h["source_external_ids"].clone()))
            .collect();
        ids.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.to_string().cmp(&b.1.to_string())));
        ids
    };
    assert_eq!(
        ids(&hits),
        ids(here.as_array().map(Vec::as_slice).unwrap_or_default())
    );

    // JSON through the server says nothing was embedded here.
    ok(&server.run(&["channel", "create", "ops", "--purpose", "Operations."])?)?;
    let json = server.run(&["--json", "import", "ops", path_str(&file)?])?;
    ok(&json)?;
    let value = json.json()?;
    assert_eq!(value["imported"]["threads"], 1);
    assert_eq!(value["embedded"], 0);
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_import_through_a_server_names_the_line_and_writes_nothing() -> anyhow::Result<()> {
    let server = Server::start().await?;
    ok(&server.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let file = server.cli.dir.path().join("bad.jsonl");
    let bad = HISTORY.replacen(r#""type":"message""#, r#""type":"mesage""#, 1);
    std::fs::write(&file, bad)?;

    let refused = server.run(&["import", "launch", path_str(&file)?])?;
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("line 2"), "{}", refused.stderr);
    let threads = server
        .run(&["--json", "thread", "list", "launch"])?
        .json()?;
    assert_eq!(threads, serde_json::json!([]));
    let memory = server
        .run(&["--json", "memory", "list", "launch", "--all"])?
        .json()?;
    assert_eq!(memory, serde_json::json!([]));

    // The same file on a data directory: the same code and message.
    let local = local_like_server()?;
    ok(&local.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let here = local.run(&["import", "launch", path_str(&file)?])?;
    assert_eq!(here.code, 2, "{}", here.stderr);
    assert_eq!(here.stderr, refused.stderr);
    server.stop().await;
    Ok(())
}

/// Runs `1helm --server URL --token T ARGS…` and returns stdout's raw bytes.
fn raw_stdout(server: &Server, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = Command::cargo_bin("1helm")?
        .args(["--server", &server.url, "--token", &server.token])
        .args(args)
        .env_remove("HELM_DATA")
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_put_ls_and_cat_round_trip_bytes_through_a_server() -> anyhow::Result<()> {
    let server = Server::start().await?;
    ok(&server.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let dir = server.cli.dir.path();
    let binary: Vec<u8> = (0..=255u8).chain([0xff, 0xfe, 0x00, b'\n']).collect();
    let blob = dir.join("blob.bin");
    std::fs::write(&blob, &binary)?;
    let notes = dir.join("naïve plan & notes.md");
    std::fs::write(&notes, "# Plan\nship it\n")?;

    // No PATH: the workspace, under the local name.
    let put = server.run(&["files", "put", "launch", path_str(&blob)?])?;
    ok(&put)?;
    assert!(
        put.stdout.contains("to /workspace/blob.bin (260 bytes)."),
        "{}",
        put.stdout
    );
    // A PATH ending in `/` keeps the name (and makes the directory).
    let into = server.run(&[
        "--json",
        "files",
        "put",
        "launch",
        path_str(&notes)?,
        "docs/",
    ])?;
    ok(&into)?;
    assert_eq!(
        into.json()?["path"],
        "/workspace/docs/naïve plan & notes.md"
    );
    // A PATH naming an existing directory keeps the name too.
    ok(&server.run(&[
        "files",
        "put",
        "launch",
        path_str(&blob)?,
        "/workspace/docs",
    ])?)?;
    // Any other PATH is the file.
    let renamed = server.run(&[
        "files",
        "put",
        "launch",
        path_str(&notes)?,
        "docs/plan v2.md",
    ])?;
    ok(&renamed)?;
    assert!(
        renamed.stdout.contains("to /workspace/docs/plan v2.md"),
        "{}",
        renamed.stdout
    );
    // With --new, a file already there is refused (exit 4) and kept.
    let kept = server.run(&[
        "files",
        "put",
        "launch",
        path_str(&blob)?,
        "docs/plan v2.md",
        "--new",
    ])?;
    assert_eq!(kept.code, 4, "{}", kept.stderr);
    assert!(
        kept.stderr
            .contains("/workspace/docs/plan v2.md already exists; nothing was uploaded"),
        "{}",
        kept.stderr
    );
    let cat = server.run(&["files", "cat", "launch", "docs/plan v2.md"])?;
    assert_eq!(cat.stdout, "# Plan\nship it\n");

    let ls = server.run(&["files", "ls", "launch"])?;
    ok(&ls)?;
    assert!(
        ls.stdout.contains("blob.bin") && ls.stdout.contains("docs/"),
        "{}",
        ls.stdout
    );
    let docs = server
        .run(&["--json", "files", "ls", "launch", "docs"])?
        .json()?;
    let mut names: Vec<&str> = docs
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(names, ["blob.bin", "naïve plan & notes.md", "plan v2.md"]);

    assert_eq!(
        raw_stdout(&server, &["files", "cat", "launch", "blob.bin"])?,
        binary
    );
    assert_eq!(
        raw_stdout(
            &server,
            &["files", "cat", "launch", "/workspace/docs/blob.bin"]
        )?,
        binary
    );
    let text = server
        .run(&[
            "--json",
            "files",
            "cat",
            "launch",
            "docs/naïve plan & notes.md",
        ])?
        .json()?;
    assert_eq!(text["content"], "# Plan\nship it\n");
    assert_eq!(text["total_lines"], 2);

    // Errors exit by kind, as on a data directory.
    let missing = server.run(&["files", "cat", "launch", "nope.txt"])?;
    assert_eq!(missing.code, 3, "{}", missing.stderr);
    let binary_json = server.run(&["--json", "files", "cat", "launch", "blob.bin"])?;
    assert_eq!(binary_json.code, 2, "{}", binary_json.stderr);
    let no_channel = server.run(&["files", "ls", "nowhere"])?;
    assert_eq!(no_channel.code, 3, "{}", no_channel.stderr);

    // exec and term stay on a data directory, and say what to use instead.
    let exec = server.run(&["exec", "launch", "--", "true"])?;
    assert_eq!(exec.code, 2, "{}", exec.stderr);
    assert!(exec.stderr.contains("/terminals"), "{}", exec.stderr);
    server.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_token_cannot_recall_or_list_a_private_channels_memory() -> anyhow::Result<()> {
    let server = Server::start().await?;
    ok(&server.run(&[
        "channel",
        "create",
        "ops",
        "--purpose",
        "Operations.",
        "--private",
    ])?)?;
    ok(&server.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let secret = server.run(&[
        "--json",
        "memory",
        "add",
        "ops",
        "--kind",
        "fact",
        "The vault code is 4711.",
        "--workspace",
    ])?;
    ok(&secret)?;
    let secret_id = secret.json()?["id"]
        .as_i64()
        .unwrap_or_default()
        .to_string();
    ok(&server.run(&[
        "memory",
        "add",
        "launch",
        "--kind",
        "fact",
        "The launch is public.",
    ])?)?;

    let token = server.member_token("mira").await?;
    let as_mira = |args: &[&str]| server.run_as(&token, args);

    for args in [
        vec!["recall", "ops", "vault code"],
        vec!["memory", "list", "ops"],
        vec!["memory", "pin", secret_id.as_str()],
        vec!["memory", "edit", secret_id.as_str(), "changed"],
        vec!["memory", "add", "ops", "--kind", "fact", "sneaky"],
        vec!["files", "ls", "ops"],
    ] {
        let run = as_mira(&args)?;
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("not found"), "{args:?}: {}", run.stderr);
        assert!(!run.stdout.contains("4711"), "{}", run.stdout);
    }
    // Records the private channel shared with the workspace stay hidden too.
    let public = as_mira(&["--json", "recall", "launch", "vault code launch"])?;
    ok(&public)?;
    assert!(!public.stdout.contains("4711"), "{}", public.stdout);
    let listed = as_mira(&["memory", "list", "launch"])?;
    ok(&listed)?;
    assert!(
        listed.stdout.contains("The launch is public."),
        "{}",
        listed.stdout
    );
    // The Captain recalls it.
    let captains = server.run(&["recall", "ops", "vault code"])?;
    ok(&captains)?;
    assert!(captains.stdout.contains("4711"), "{}", captains.stdout);
    server.stop().await;
    Ok(())
}

#[test]
fn a_member_cannot_recall_a_private_channels_memory_locally() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    ok(&cli.run(&["user", "add", "mira"])?)?;
    ok(&cli.run(&[
        "channel",
        "create",
        "ops",
        "--purpose",
        "Operations.",
        "--private",
    ])?)?;
    let secret = cli.run(&[
        "--json",
        "memory",
        "add",
        "ops",
        "--kind",
        "fact",
        "The vault code is 4711.",
        "--workspace",
    ])?;
    ok(&secret)?;
    let id = secret.json()?["id"]
        .as_i64()
        .unwrap_or_default()
        .to_string();
    ok(&cli.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;

    for args in [
        vec!["--as", "mira", "recall", "ops", "vault code"],
        vec!["--as", "mira", "memory", "list", "ops"],
        vec!["--as", "mira", "memory", "forget", id.as_str()],
    ] {
        let run = cli.run(&args)?;
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert!(!run.stdout.contains("4711"), "{}", run.stdout);
    }
    // Shared with the workspace, it still does not reach her through a
    // channel she may see.
    let public = cli.run(&["--as", "mira", "recall", "launch", "vault code"])?;
    ok(&public)?;
    assert!(!public.stdout.contains("4711"), "{}", public.stdout);
    let captains = cli.run(&["recall", "launch", "vault code"])?;
    ok(&captains)?;
    assert!(captains.stdout.contains("4711"), "{}", captains.stdout);
    Ok(())
}

/// One way to run `1helm`: through a server or on a data directory.
type RunOn<'a> = dyn Fn(&[&str]) -> anyhow::Result<Run> + 'a;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_are_renamed_and_memory_restored_here_and_through_a_server() -> anyhow::Result<()> {
    let server = Server::start().await?;
    let local = local_like_server()?;
    let file = server.cli.dir.path().join("history.jsonl");
    std::fs::write(&file, HISTORY)?;
    let sides: [(&str, &RunOn); 2] = [("server", &|a| server.run(a)), ("local", &|a| local.run(a))];
    for (side, run) in sides {
        ok(&run(&[
            "channel",
            "create",
            "launch",
            "--purpose",
            "The launch.",
        ])?)?;
        ok(&run(&["import", "launch", path_str(&file)?])?)?;
        let threads = run(&["--json", "thread", "list", "launch"])?.json()?;
        let id = threads[0]["id"].as_i64().unwrap_or_default().to_string();

        let renamed = run(&["thread", "rename", &id, "  Counselling work  "])?;
        ok(&renamed)?;
        assert_eq!(
            renamed.stdout.trim(),
            format!("Thread {id} is now called \"Counselling work\"."),
            "{side}"
        );
        let shown = run(&["--json", "thread", "list", "launch"])?.json()?;
        assert_eq!(shown[0]["title"], "Counselling work", "{side}");
        // Found by a word only its messages hold; archived ones apart.
        let list = |extra: &[&str]| -> anyhow::Result<Vec<i64>> {
            let args = [&["--json", "thread", "list", "launch"], extra].concat();
            let found = run(&args)?.json()?;
            let ids = found.as_array().cloned().unwrap_or_default();
            Ok(ids.iter().filter_map(|t| t["id"].as_i64()).collect())
        };
        let this = id.parse::<i64>()?;
        assert_eq!(list(&["--search", "counselor"])?, [this], "{side}");
        assert_eq!(list(&["--search", "zebra"])?, [0; 0], "{side}");
        assert_eq!(list(&["--hide-archived"])?, [this], "{side}");
        assert_eq!(list(&["--archived"])?, [0; 0], "{side}");
        let none = run(&["thread", "list", "launch", "--search", "zebra"])?;
        assert_eq!(none.stdout.trim(), "No thread matches.", "{side}");
        let blank = run(&["thread", "list", "launch", "--search", " "])?;
        assert_eq!(blank.code, 2, "{side}: {}", blank.stderr);
        let empty = run(&["thread", "rename", &id, " "])?;
        assert_eq!(empty.code, 2, "{side}: {}", empty.stderr);
        assert!(
            empty.stderr.contains("thread title"),
            "{side}: {}",
            empty.stderr
        );
        let missing = run(&["thread", "rename", "9999", "Nothing"])?;
        assert_eq!(missing.code, 3, "{side}: {}", missing.stderr);

        let added = run(&[
            "--json",
            "memory",
            "add",
            "launch",
            "--kind",
            "decision",
            "Ship on Friday.",
        ])?
        .json()?;
        let memory = added["id"].as_i64().unwrap_or_default().to_string();
        let forgotten = run(&["memory", "forget", &memory])?;
        ok(&forgotten)?;
        assert!(
            forgotten.stdout.contains("forgotten by ada"),
            "{side}: {}",
            forgotten.stdout
        );
        let restored = run(&["--json", "memory", "restore", &memory])?;
        ok(&restored)?;
        let restored = restored.json()?;
        assert_eq!(restored["status"], "current", "{side}");
        assert_eq!(restored.get("forgotten_by"), None, "{side}");
        let listed = run(&["--json", "memory", "list", "launch"])?.json()?;
        assert_eq!(listed[0]["content"], "Ship on Friday.", "{side}");
        let again = run(&["memory", "restore", &memory])?;
        assert_eq!(again.code, 4, "{side}: {}", again.stderr);
        assert!(!again.stderr.contains("/api/"), "{side}: {}", again.stderr);
    }
    server.stop().await;
    Ok(())
}

#[test]
fn only_the_author_or_a_manager_changes_a_record_locally() -> anyhow::Result<()> {
    let cli = Cli::init()?;
    ok(&cli.run(&["user", "add", "mira"])?)?;
    ok(&cli.run(&["channel", "create", "launch", "--purpose", "The launch."])?)?;
    let decision = cli.run(&[
        "--json",
        "memory",
        "add",
        "launch",
        "--kind",
        "decision",
        "Ship on Friday.",
    ])?;
    ok(&decision)?;
    let id = decision.json()?["id"]
        .as_i64()
        .unwrap_or_default()
        .to_string();
    let denied = cli.run(&["--as", "mira", "memory", "forget", &id])?;
    assert_eq!(denied.code, 7, "{}", denied.stderr);
    assert!(denied.stderr.contains("may forget"), "{}", denied.stderr);
    // Editing and pinning are the same person's and the managers'.
    for (args, verb) in [
        (
            vec!["memory", "edit", id.as_str(), "Ship on Monday."],
            "may edit",
        ),
        (vec!["memory", "pin", id.as_str()], "may pin"),
        (vec!["memory", "pin", id.as_str(), "--off"], "may unpin"),
    ] {
        let denied = cli.run(&[&["--as", "mira"][..], &args[..]].concat())?;
        assert_eq!(denied.code, 7, "{args:?}: {}", denied.stderr);
        assert!(denied.stderr.contains(verb), "{}", denied.stderr);
    }
    let hers = cli.run(&[
        "--json",
        "--as",
        "mira",
        "memory",
        "add",
        "launch",
        "--kind",
        "fact",
        "Kits are ready.",
    ])?;
    ok(&hers)?;
    let hers = hers.json()?["id"].as_i64().unwrap_or_default().to_string();
    let own = cli.run(&["--json", "--as", "mira", "memory", "forget", &hers])?;
    ok(&own)?;
    assert_eq!(own.json()?["forgotten_by"], "mira");
    ok(&cli.run(&["--as", "mira", "memory", "restore", &hers])?)?;
    ok(&cli.run(&["--as", "mira", "memory", "pin", &hers])?)?;
    ok(&cli.run(&["--as", "mira", "memory", "edit", &hers, "Kits ship Monday."])?)?;
    ok(&cli.run(&["memory", "pin", &id])?)?;
    let edited = cli.run(&["--json", "--as", "mira", "memory", "list", "launch"])?;
    ok(&edited)?;
    let Some(kits) = edited.json()?.as_array().and_then(|items| {
        items
            .iter()
            .find(|m| m["content"] == "Kits ship Monday.")
            .cloned()
    }) else {
        anyhow::bail!("mira's edit is missing: {}", edited.stdout);
    };
    let hers = kits["id"].as_i64().unwrap_or_default().to_string();
    ok(&cli.run(&["--as", "mira", "memory", "forget", &hers])?)?;
    // The Captain brings it back; mira may not restore the Captain's.
    ok(&cli.run(&["memory", "forget", &id])?)?;
    let denied = cli.run(&["--as", "mira", "memory", "restore", &id])?;
    assert_eq!(denied.code, 7, "{}", denied.stderr);
    ok(&cli.run(&["memory", "restore", &hers])?)?;
    Ok(())
}

//! Two `helm-http` processes, each with its own data directory, on one
//! PostgreSQL database: any node serves any request, a person connected to
//! node B sees live what was posted on node A, each turn runs exactly once,
//! a stop asked on one node stops the turn the other runs (and an archive
//! the turn it runs, with a note naming who archived), and when the node
//! running a turn is SIGKILLed the other ends that turn interrupted once its
//! lease lapses and runs the turn queued behind it; a channel's computer is
//! held by one node and reached through it from the other.

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_postgres::NoTls;
use tokio_tungstenite::tungstenite::Message;

use super::computer::read_until;
use super::kit::{PASSWORD, client, events_ws, next_json};
use super::process::Process;
use helm_tests::mock::{Behaviour, MockOpenAi};

/// The lease the nodes give their turns: short, so the takeover after a
/// node dies is seen within the test's patience.
const LEASE_SECS: &str = "3";

/// A signed-in person's calls to one node or the other.
pub(super) struct Caller {
    http: reqwest::Client,
    pub(super) token: String,
}

impl Caller {
    pub(super) async fn post(
        &self,
        node: &Process,
        path: &str,
        body: Value,
    ) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(format!("{}{path}", node.url))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        anyhow::ensure!(status.is_success(), "POST {path}: {status} {body}");
        Ok(body)
    }

    /// Any call, answered with its status and JSON body (`null` when it
    /// has none), whether it succeeded or not.
    pub(super) async fn call(
        &self,
        method: reqwest::Method,
        node: &Process,
        path: &str,
        body: Value,
    ) -> anyhow::Result<(u16, Value)> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", node.url))
            .bearer_auth(&self.token);
        if !body.is_null() {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let text = response.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    pub(super) async fn get(&self, node: &Process, path: &str) -> anyhow::Result<Value> {
        let response = self
            .http
            .get(format!("{}{path}", node.url))
            .bearer_auth(&self.token)
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        anyhow::ensure!(status.is_success(), "GET {path}: {status} {body}");
        Ok(body)
    }

    /// Polls a thread on `node` until `done` holds for its detail (up to
    /// 30 s, a guard against hangs).
    async fn wait_thread(
        &self,
        node: &Process,
        thread: i64,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let detail = self.get(node, &format!("/api/threads/{thread}")).await?;
            if done(&detail) {
                return Ok(detail);
            }
            anyhow::ensure!(Instant::now() < deadline, "{what}: {detail}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn node(data: &std::path::Path, store: &str) -> anyhow::Result<Process> {
    Process::spawn_env(
        data,
        &[],
        &[("HELM_STORE", store), ("HELM_TURN_LEASE_SECS", LEASE_SECS)],
    )
}

/// The Captain's setup on `node` with the code it wrote, and an API token.
pub(super) async fn captain(node: &Process, data: &std::path::Path) -> anyhow::Result<Caller> {
    let http = client()?;
    let code = std::fs::read_to_string(data.join("setup-code"))?;
    let setup = http
        .post(format!("{}/api/setup", node.url))
        .json(&json!({"name": "ada", "password": PASSWORD, "setup_code": code.trim()}))
        .send()
        .await?;
    anyhow::ensure!(setup.status().is_success(), "setup: {}", setup.status());
    let cookie = setup
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let token: Value = http
        .post(format!("{}/api/tokens", node.url))
        .header("cookie", cookie)
        .header("origin", &node.url)
        .json(&json!({"name": "nodes"}))
        .send()
        .await?
        .json()
        .await?;
    Ok(Caller {
        http,
        token: token["secret"].as_str().unwrap_or_default().to_string(),
    })
}

/// The process id of the node holding `turn`'s lease, from the database.
async fn lease_holder(store: &str, turn: i64) -> anyhow::Result<u32> {
    let (db, connection) = tokio_postgres::connect(store, NoTls).await?;
    tokio::spawn(connection);
    let row = db
        .query_one("SELECT lease_owner FROM turns WHERE id = $1", &[&turn])
        .await?;
    let owner: Option<String> = row.get(0);
    let owner = owner.ok_or_else(|| anyhow::anyhow!("turn {turn} has no lease"))?;
    helm_core::store::PostgresStore::node_pid(&owner)
        .ok_or_else(|| anyhow::anyhow!("a lease owner without a process id: {owner}"))
}

/// A turn in #launch asked for on node `a`, whose reply hangs: waits until
/// it runs and answers its thread, its id and the node *not* running it.
async fn hanging_turn<'n>(
    ada: &Caller,
    (a, b): (&'n Process, &'n Process),
    store: &str,
    text: &str,
) -> anyhow::Result<(i64, i64, &'n Process)> {
    let posted = ada
        .post(a, "/api/channels/launch/messages", json!({ "text": text }))
        .await?;
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let running = ada
        .wait_thread(b, thread, "the turn never started", |d| {
            d["turns"][0]["state"] == "running"
        })
        .await?;
    let turn = running["turns"][0]["id"].as_i64().unwrap_or_default();
    let other = if lease_holder(store, turn).await? == a.pid() {
        b
    } else {
        a
    };
    Ok((thread, turn, other))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_share_one_workspace_and_take_over_a_dead_nodes_turns() -> anyhow::Result<()> {
    let store = helm_tests::postgres::fresh_database().await?;
    let dir = tempfile::tempdir()?;
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    let mut a = node(&a_data, &store)?;
    a.wait_ready().await?;
    let mut b = node(&b_data, &store)?;
    b.wait_ready().await?;

    // Set up on A; the token A issued works on B: the state is the database's.
    let ada = captain(&a, &a_data).await?;
    let mock = MockOpenAi::start().await?;
    ada.post(
        &b,
        "/api/providers",
        json!({"name": "mock", "kind": "openai", "base_url": mock.base_url(),
               "default_model": "mock-model", "make_default": true}),
    )
    .await?;
    ada.post(
        &a,
        "/api/channels",
        json!({"name": "launch", "purpose": "The launch."}),
    )
    .await?;
    let on_b = ada.get(&b, "/api/channels/launch").await?;
    assert_eq!(on_b["channel"]["name"], "launch", "{on_b}");

    // Connected to B, Ada sees live what is posted on A.
    let mut socket = events_ws(&format!("{}/api/events", b.ws_url()), &ada.token).await?;
    let hello = next_json(&mut socket).await?;
    assert_eq!(hello["type"], "stream.hello", "{hello}");
    mock.set_fallback(Behaviour::text("Noted."));
    let posted = ada
        .post(
            &a,
            "/api/channels/launch/messages",
            json!({"text": "@launch-agent the beta is on the 3rd"}),
        )
        .await?;
    let message = posted["message"]["id"].clone();
    loop {
        let event = next_json(&mut socket).await?;
        if event["type"] == "message.created" && event["message"]["id"] == message {
            assert_eq!(
                event["message"]["content"],
                "@launch-agent the beta is on the 3rd"
            );
            break;
        }
    }

    // Both nodes drive turns; the turn ran once: one model call, one reply.
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let detail = ada
        .wait_thread(&b, thread, "the first turn never completed", |d| {
            d["turns"][0]["state"] == "completed"
        })
        .await?;
    // Long enough for a second claim to have shown itself, had there been one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(mock.requests().len(), 1, "the model was called once");
    let detail_again = ada.get(&a, &format!("/api/threads/{thread}")).await?;
    assert_eq!(detail_again["turns"], detail["turns"]);
    assert_eq!(detail["turns"].as_array().map(Vec::len), Some(1));

    // Stop asked on the node that is not running the turn: the node that is
    // stops it at its next lease tick, and the answer waits for that.
    mock.set_fallback(Behaviour::text("Reading every file, one by one").hang_after(2));
    let (slow_thread, slow_turn, other) =
        hanging_turn(&ada, (&a, &b), &store, "@launch-agent read every file").await?;
    let stopped = ada
        .post(
            other,
            &format!("/api/threads/{slow_thread}/stop"),
            json!({}),
        )
        .await?;
    assert_eq!(stopped["turns"], json!([slow_turn]), "{stopped}");
    let detail = ada
        .get(other, &format!("/api/threads/{slow_thread}"))
        .await?;
    assert_eq!(detail["turns"][0]["state"], "stopped", "{detail}");
    let messages = ada
        .get(other, &format!("/api/threads/{slow_thread}/messages"))
        .await?
        .to_string();
    assert!(
        messages.contains("Stopped by ada."),
        "the note names who stopped it: {messages}"
    );

    // Archived on the node that is not running the turn: the node that is
    // cancels it on hearing of it, and its note names who archived, as the
    // archiving node's own would.
    mock.set_fallback(Behaviour::text("Sorting the inbox, message by").hang_after(2));
    let (sorting_thread, _, other) =
        hanging_turn(&ada, (&a, &b), &store, "@launch-agent sort the inbox").await?;
    ada.post(other, "/api/channels/launch/archive", json!({}))
        .await?;
    ada.wait_thread(
        other,
        sorting_thread,
        "the sorting turn was not cancelled",
        |d| d["turns"][0]["state"] == "cancelled",
    )
    .await?;
    let messages = ada
        .get(other, &format!("/api/threads/{sorting_thread}/messages"))
        .await?
        .to_string();
    assert!(
        messages.contains("#launch was archived by ada while it ran"),
        "the note names who archived: {messages}"
    );
    ada.post(other, "/api/channels/launch/restore", json!({}))
        .await?;

    // A turn that never finishes; a second message queues a turn behind it.
    mock.set_fallback(Behaviour::text("Working on it, this will take").hang_after(2));
    let long = ada
        .post(
            &b,
            "/api/channels/launch/messages",
            json!({"text": "@launch-agent draft the whole plan"}),
        )
        .await?;
    let long_thread = long["thread"]["id"].as_i64().unwrap_or_default();
    let running = ada
        .wait_thread(&a, long_thread, "the long turn never started", |d| {
            d["turns"][0]["state"] == "running"
        })
        .await?;
    let first = running["turns"][0]["id"].as_i64().unwrap_or_default();
    let queued = ada
        .post(
            &a,
            &format!("/api/threads/{long_thread}/messages"),
            json!({"text": "@launch-agent and then the budget"}),
        )
        .await?;
    let second = queued["turn"]["id"].as_i64().unwrap_or_default();

    // Kill whichever node runs the long turn, as a crash would.
    let holder = lease_holder(&store, first).await?;
    let (dead, survivor) = if holder == a.pid() {
        (&mut a, &b)
    } else {
        anyhow::ensure!(holder == b.pid(), "the lease is held by process {holder}");
        (&mut b, &a)
    };
    mock.set_fallback(Behaviour::text("The budget: see budget.md."));
    dead.kill_hard()?;

    // Once the lease lapses the survivor ends the turn interrupted, with the
    // note people see, and runs the queued one.
    let after = ada
        .wait_thread(survivor, long_thread, "the queued turn never ran", |d| {
            d["turns"][1]["state"] == "completed"
        })
        .await?;
    assert_eq!(after["turns"][0]["id"], first);
    assert_eq!(after["turns"][0]["state"], "interrupted", "{after}");
    assert_eq!(after["turns"][1]["id"], second);
    assert_eq!(
        lease_holder(&store, second).await?,
        survivor.pid(),
        "the survivor ran the queued turn"
    );
    let messages = ada
        .get(survivor, &format!("/api/threads/{long_thread}/messages"))
        .await?;
    let text = messages.to_string();
    assert!(text.contains("interrupted"), "a visible note: {text}");
    assert!(text.contains("The budget: see budget.md."), "{text}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_reach_one_remote_computer() -> anyhow::Result<()> {
    let computer = helm_tests::open_terminal::OpenTerminal::start().await?;
    let store = helm_tests::postgres::fresh_database().await?;
    let dir = tempfile::tempdir()?;
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    let env = [
        ("HELM_STORE", store.as_str()),
        ("HELM_COMPUTER", computer.url.as_str()),
        ("HELM_COMPUTER_KEY", computer.key.as_str()),
    ];
    let mut a = Process::spawn_env(&a_data, &[], &env)?;
    a.wait_ready().await?;
    let mut b = Process::spawn_env(&b_data, &[], &env)?;
    b.wait_ready().await?;
    let ada = captain(&a, &a_data).await?;
    let status = ada.get(&b, "/api/status").await?;
    assert_eq!(status["isolation"], "remote", "{status}");
    ada.post(
        &a,
        "/api/channels",
        json!({"name": "builds", "purpose": "Runs the builds on the build box."}),
    )
    .await?;

    // Written through A, seen and changed by a command through B: one
    // computer, whichever node serves the call.
    let (code, written) = ada
        .call(
            reqwest::Method::PUT,
            &a,
            "/api/channels/builds/files",
            json!({"path": "notes/plan.md", "content": "ship it\n"}),
        )
        .await?;
    assert_eq!(code, 200, "{written}");
    let run = ada
        .post(
            &b,
            "/api/channels/builds/exec",
            json!({"command": "cat notes/plan.md && echo tested >> notes/plan.md"}),
        )
        .await?;
    assert_eq!(run["exit_code"], 0, "{run}");
    assert_eq!(run["stdout"], "ship it\n", "{run}");
    assert_eq!(run["isolation"], "remote", "{run}");
    let read = ada
        .get(&a, "/api/channels/builds/files/read?path=notes/plan.md")
        .await?;
    assert_eq!(read["content"], "ship it\ntested\n", "{read}");
    // An escape is refused as on this host, and nothing reached the server.
    let (code, escape) = ada
        .call(
            reqwest::Method::GET,
            &b,
            "/api/channels/builds/files/read?path=/etc/passwd",
            Value::Null,
        )
        .await?;
    assert_eq!(
        (code, escape["code"].as_str()),
        (403, Some("forbidden")),
        "{escape}"
    );

    // The computer going away is a 503 that says which one, on either node.
    let url = computer.url.clone();
    drop(computer);
    let (code, down) = ada
        .call(
            reqwest::Method::POST,
            &a,
            "/api/channels/builds/exec",
            json!({"command": "true"}),
        )
        .await?;
    assert_eq!(code, 503, "{down}");
    assert_eq!(down["code"], "computer_unreachable", "{down}");
    assert!(
        down["message"].as_str().unwrap_or_default().contains(&url),
        "{down}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_computer_without_its_key_stops_the_start() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let mut server = Process::spawn_env(
        &data,
        &[],
        &[
            ("HELM_COMPUTER", "http://127.0.0.1:9/"),
            ("HELM_COMPUTER_KEY_ENV", "HELM_TEST_NO_KEY_HERE"),
        ],
    )?;
    let (status, stderr) = server.finish()?;
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("computer.key_env") && stderr.contains("HELM_TEST_NO_KEY_HERE"),
        "{stderr}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channels_computer_is_held_by_one_node_and_reached_through_it() -> anyhow::Result<()> {
    let store = helm_tests::postgres::fresh_database().await?;
    let dir = tempfile::tempdir()?;
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    // Process isolation: the test asserts where files land on the hosts'
    // disks, the same with bubblewrap.
    let env = [
        ("HELM_STORE", store.as_str()),
        ("HELM_ISOLATION", "process"),
    ];
    let mut a = Process::spawn_env(&a_data, &[], &env)?;
    a.wait_ready().await?;
    let mut b = Process::spawn_env(&b_data, &[], &env)?;
    b.wait_ready().await?;
    let ada = captain(&a, &a_data).await?;
    let made = ada
        .post(
            &a,
            "/api/channels",
            json!({"name": "lab", "purpose": "Experiments."}),
        )
        .await?;
    let id = made["channel"]["id"].as_i64().unwrap_or_default();
    let on_a = a_data.join(format!("channels/{id}/workspace"));
    let on_b = b_data.join(format!("channels/{id}/workspace"));

    // A made the channel, so A holds its computer: a file written through
    // B lands on A's disk, and a command run through B sees it there.
    let (code, written) = ada
        .call(
            reqwest::Method::PUT,
            &b,
            "/api/channels/lab/files",
            json!({"path": "notes/plan.md", "content": "ship it\n"}),
        )
        .await?;
    assert_eq!(code, 200, "{written}");
    assert_eq!(
        std::fs::read_to_string(on_a.join("notes/plan.md"))?,
        "ship it\n"
    );
    assert!(!on_b.join("notes/plan.md").exists(), "nothing on B's disk");
    let run = ada
        .post(
            &b,
            "/api/channels/lab/exec",
            json!({"command": "cat notes/plan.md && pwd && echo tested >> notes/plan.md"}),
        )
        .await?;
    assert_eq!(run["exit_code"], 0, "{run}");
    let stdout = run["stdout"].as_str().unwrap_or_default();
    assert!(stdout.starts_with("ship it\n"), "{run}");
    assert!(
        stdout.contains(&on_a.to_string_lossy().to_string()),
        "the command ran in A's workspace: {run}"
    );
    let read = ada
        .get(&a, "/api/channels/lab/files/read?path=notes/plan.md")
        .await?;
    assert_eq!(read["content"], "ship it\ntested\n", "{read}");
    let listed = ada.get(&b, "/api/channels/lab/files?path=notes").await?;
    assert!(listed.to_string().contains("plan.md"), "{listed}");

    // A terminal opened through B is a shell on A, in the workspace, kept
    // in A's memory: its id carries A's node number, and either node lists
    // it, attaches to it and closes it.
    let opened = ada
        .post(
            &b,
            "/api/channels/lab/terminals",
            json!({"rows": 24, "cols": 80}),
        )
        .await?;
    let terminal = opened["id"].as_u64().unwrap_or_default();
    assert!(terminal > 1 << 32, "the id carries A's number: {opened}");
    for node in [&a, &b] {
        let listed = ada.get(node, "/api/channels/lab/terminals").await?;
        let ids: Vec<u64> = listed
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["id"].as_u64())
            .collect();
        assert_eq!(ids, [terminal], "the same one terminal on both: {listed}");
    }
    let socket = |node: &Process| format!("{}/api/terminals/{terminal}/ws", node.ws_url());
    let mut shell = events_ws(&socket(&b), &ada.token).await?;
    let mut watcher = events_ws(&socket(&a), &ada.token).await?;
    shell
        .send(Message::Binary(
            b"cat notes/plan.md; echo from-terminal > t.txt; echo MARK-$((6*7))\n"
                .to_vec()
                .into(),
        ))
        .await?;
    let seen = read_until(&mut shell, "MARK-42").await?;
    assert!(seen.contains("tested"), "{seen}");
    read_until(&mut watcher, "MARK-42").await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !on_a.join("t.txt").exists() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the terminal's file never landed on A"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Typed through A, seen through B.
    watcher
        .send(Message::Binary(b"echo BOTH-$((6*8))\n".to_vec().into()))
        .await?;
    read_until(&mut shell, "BOTH-48").await?;
    // A terminal no node keeps is unknown through either; a request passed
    // on once is not passed on again, but answered with what is wrong.
    let unknown = (terminal >> 32 << 32) + 999_999;
    for (node, id) in [(&b, unknown), (&a, unknown), (&b, (999_999 << 32) | 1)] {
        let path = format!("/api/terminals/{id}");
        let (code, body) = ada
            .call(reqwest::Method::DELETE, node, &path, json!(null))
            .await?;
        assert_eq!((code, &body["code"]), (404, &json!("not_found")), "{body}");
        let refused = events_ws(&format!("{}{path}/ws", node.ws_url()), &ada.token).await;
        assert!(
            refused.is_err_and(|e| e.to_string().contains("404")),
            "a socket to {id} through {}",
            node.url
        );
    }
    let looped = client()?
        .get(format!("{}/api/channels/lab/terminals", b.url))
        .bearer_auth(&ada.token)
        .header("x-helm-forwarded-by", "1")
        .send()
        .await?;
    assert_eq!(looped.status(), 503);
    let body = looped.text().await?;
    assert!(body.contains("addresses disagree"), "{body}");
    // Closed through B: both viewers are told, and neither node lists it.
    let (code, body) = ada
        .call(
            reqwest::Method::DELETE,
            &b,
            &format!("/api/terminals/{terminal}"),
            json!(null),
        )
        .await?;
    assert_eq!(code, 204, "{body}");
    for viewer in [&mut shell, &mut watcher] {
        let end = read_until(viewer, "\"closed\"").await?;
        assert!(end.contains("exit_code"), "{end}");
    }
    for node in [&a, &b] {
        let listed = ada.get(node, "/api/channels/lab/terminals").await?;
        assert_eq!(listed, json!([]), "{}", node.url);
    }

    // The agent's tools reach the same computer, whichever node runs its turn.
    let mock = MockOpenAi::start().await?;
    ada.post(
        &b,
        "/api/providers",
        json!({"name": "mock", "kind": "openai", "base_url": mock.base_url(),
               "default_model": "mock-model", "make_default": true}),
    )
    .await?;
    mock.push(Behaviour::tool_call(
        "write_file",
        r#"{"path":"agent.md","content":"written by the agent\n"}"#,
    ));
    mock.set_fallback(Behaviour::text("Written."));
    let posted = ada
        .post(
            &b,
            "/api/channels/lab/messages",
            json!({"text": "@lab-agent write agent.md"}),
        )
        .await?;
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let done = ada
        .wait_thread(&b, thread, "the turn never completed", |d| {
            d["turns"][0]["state"] == "completed"
        })
        .await?;
    assert_eq!(
        std::fs::read_to_string(on_a.join("agent.md"))?,
        "written by the agent\n",
        "{done}"
    );
    assert!(!on_b.join("agent.md").exists());
    // Posted on B, run by A: the node that holds the computer takes the
    // channel's turns while it is there.
    let turn = done["turns"][0]["id"].as_i64().unwrap_or_default();
    assert_eq!(lease_holder(&store, turn).await?, a.pid(), "{done}");

    // A node key is checked against the store: B's opens lab on A, a made
    // up one does not, and no node key opens #main (each node's own host).
    let key = std::fs::read_to_string(b_data.join("node-key"))?;
    let http = client()?;
    let cwd = |channel: &str, key: &str| {
        http.get(format!("{}/api/channels/{channel}/ot/files/cwd", a.url))
            .bearer_auth(key.trim().to_string())
            .send()
    };
    assert_eq!(cwd("lab", &key).await?.status(), 200);
    let forged = format!("hnode_{}", "0".repeat(64));
    assert_eq!(cwd("lab", &forged).await?.status(), 401);
    assert_eq!(cwd("main", &key).await?.status(), 401);
    // A node asked for a computer it does not hold (its address given
    // wrongly, say) says so instead of passing the call on.
    let wrong = http
        .get(format!("{}/api/channels/lab/ot/files/cwd", b.url))
        .bearer_auth(key.trim().to_string())
        .send()
        .await?;
    assert_eq!(wrong.status(), 503);
    let body = wrong.text().await?;
    assert!(body.contains("does not hold"), "{body}");

    // Edited through B, which has no copy of its world, a channel's
    // profile mirror on A follows; archived through B, its terminals on A
    // end: A follows both from the live feed.
    let made = ada
        .post(
            &a,
            "/api/channels",
            json!({"name": "scratch", "purpose": "A scratch pad."}),
        )
        .await?;
    let scratch = made["channel"]["id"].as_i64().unwrap_or_default();
    let (code, body) = ada
        .call(
            reqwest::Method::PATCH,
            &b,
            "/api/channels/scratch",
            json!({"purpose": "Drafts, edited on B."}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let mirror = a_data.join(format!("channels/{scratch}/profile/agent.json"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&mirror)?.contains("edited on B") {
        anyhow::ensure!(Instant::now() < deadline, "A's mirror never followed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let opened = ada
        .post(&b, "/api/channels/scratch/terminals", json!({}))
        .await?;
    let id = opened["id"].as_u64().unwrap_or_default();
    let url = format!("{}/api/terminals/{id}/ws", b.ws_url());
    let mut viewer = events_ws(&url, &ada.token).await?;
    viewer
        .send(Message::Binary(b"echo UP-$((3*3))\n".to_vec().into()))
        .await?;
    read_until(&mut viewer, "UP-9").await?;
    // A turn of it running on A (its holder) when B archives it stops too.
    mock.push(Behaviour::text("Thinking it over").hang());
    let asked = mock.requests().len();
    let posted = ada
        .post(
            &b,
            "/api/channels/scratch/messages",
            json!({"text": "@scratch-agent take your time"}),
        )
        .await?;
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    ada.wait_thread(&b, thread, "the turn never ran", |d| {
        d["turns"][0]["state"] == "running"
    })
    .await?;
    // Running is not yet asking the model: a claimed turn reads its
    // context first. Archived before its call, it would end without
    // taking the hanging answer, and the next model call (the last turn
    // below, on B) would get it and hang. So B archives once A has asked.
    mock.wait_for_requests(asked + 1, Duration::from_secs(30))
        .await?;
    ada.post(&b, "/api/channels/scratch/archive", json!({}))
        .await?;
    let stopped = ada
        .wait_thread(&b, thread, "the turn on A never stopped", |d| {
            d["turns"][0]["state"] == "cancelled"
        })
        .await?;
    let turn = stopped["turns"][0]["id"].as_i64().unwrap_or_default();
    assert_eq!(lease_holder(&store, turn).await?, a.pid(), "{stopped}");
    let end = read_until(&mut viewer, "\"closed\"").await?;
    assert!(end.contains("exit_code"), "{end}");
    let listed = ada.get(&a, "/api/channels/scratch/terminals").await?;
    assert_eq!(listed, json!([]));

    // The holder gone, its computer is unreachable from B, saying where.
    a.kill_hard()?;
    let (code, down) = ada
        .call(
            reqwest::Method::POST,
            &b,
            "/api/channels/lab/exec",
            json!({"command": "true"}),
        )
        .await?;
    assert_eq!(code, 503, "{down}");
    assert_eq!(down["code"], "computer_unreachable", "{down}");
    assert!(
        down["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&a.url),
        "{down}"
    );
    // Its channel's turns still run, on B, once they have waited for A.
    let later = ada
        .post(
            &b,
            "/api/channels/lab/messages",
            json!({"text": "@lab-agent still there?"}),
        )
        .await?;
    let thread = later["thread"]["id"].as_i64().unwrap_or_default();
    let done = ada
        .wait_thread(&b, thread, "the turn never ran without A", |d| {
            d["turns"][0]["state"] == "completed"
        })
        .await?;
    let turn = done["turns"][0]["id"].as_i64().unwrap_or_default();
    assert_eq!(lease_holder(&store, turn).await?, b.pid(), "{done}");
    Ok(())
}

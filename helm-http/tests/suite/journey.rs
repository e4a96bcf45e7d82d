//! The product journey over HTTP on a real loopback port, with the agent
//! served by the mock OpenAI server: setup, a provider, a channel, a thread
//! whose agent writes a file (streamed to a WebSocket as `message.delta`s),
//! a second person in the same thread, a model change, archive and restore,
//! and deletion with confirmation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::kit::{Api, PASSWORD, Served, client, events_ws, next_json};
use helm_tests::mock::{Behaviour, MockAnthropic, MockOpenAi};

const PURPOSE: &str = "This channel owns planning and coordinating the product launch.";

struct Person {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Person {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status();
        let text = response.text().await?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    async fn get(&self, path: &str) -> anyhow::Result<(StatusCode, Value)> {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<(StatusCode, Value)> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }
}

/// Reads events until the turn `turn` ends; returns the concatenated deltas
/// of its reply (each checked to start where the last ended) and the final
/// turn.
async fn follow_turn<S>(socket: &mut S, turn: &Value) -> anyhow::Result<(String, Value)>
where
    S: futures_util::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    let mut streamed = String::new();
    loop {
        let event = next_json(socket).await?;
        match event["type"].as_str() {
            Some("message.delta") if event["message_id"] == turn["reply_message_id"] => {
                // The deltas come in order from the reply's start, so
                // each goes where the one before ended (in characters).
                anyhow::ensure!(
                    event["offset"].as_u64() == Some(streamed.chars().count() as u64),
                    "a delta placed elsewhere than after {streamed:?}: {event}"
                );
                streamed.push_str(event["text"].as_str().unwrap_or_default());
            }
            Some("turn.completed" | "turn.failed" | "turn.cancelled")
                if event["turn"]["id"] == turn["id"] =>
            {
                return Ok((streamed, event["turn"].clone()));
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_product_journey_over_http() -> anyhow::Result<()> {
    // The test command runs this suite again with every workspace on
    // PostgreSQL.
    let deltas = if std::env::var("HELM_TEST_STORE").is_ok_and(|s| s == "postgres") {
        Deltas::Prefix
    } else {
        Deltas::All
    };
    journey(Api::new().await?, deltas).await
}

/// The same journey with the server's state in PostgreSQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_product_journey_over_http_on_postgres() -> anyhow::Result<()> {
    journey(Api::on_postgres().await?, Deltas::Prefix).await
}

/// Which of a reply's `message.delta`s a client watching the turn is sure
/// to get.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deltas {
    /// Every one: with SQLite, one process's feed sends each as it commits.
    All,
    /// The first ones, maybe none: on PostgreSQL a node's feed reads the
    /// event log after each commit, and a finished turn's deltas leave the
    /// log with its completion, so a feed that reads after the completion
    /// (a mock model's whole reply in a few milliseconds, on a loaded
    /// machine) gets the completed reply without them.
    Prefix,
}

async fn journey(api: Api, deltas: Deltas) -> anyhow::Result<()> {
    let served = Served::start(api).await?;
    served.api.t.helm.start_runtime().await?;
    let http = client()?;
    let base = served.url("");

    // First run: the Captain's account, then an API token from the session.
    let setup = http
        .post(served.url("/api/setup"))
        .json(&json!({"name": "ada", "password": PASSWORD,
                      "setup_code": served.api.state.setup_code.as_str()}))
        .send()
        .await?;
    assert_eq!(setup.status(), StatusCode::CREATED);
    let cookie = setup
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let issued: Value = http
        .post(served.url("/api/tokens"))
        .header("cookie", &cookie)
        .header("origin", &base)
        .json(&json!({"name": "journey"}))
        .send()
        .await?
        .json()
        .await?;
    let ada = Person {
        http: http.clone(),
        base: base.clone(),
        token: issued["secret"].as_str().unwrap_or_default().to_string(),
    };

    // A provider pointing at the mock model, the workspace default.
    let openai = MockOpenAi::start().await?;
    let (status, provider) = ada
        .post(
            "/api/providers",
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "default_model": "mock-model", "make_default": true,
                   "api_key_env": "MOCK_OPENAI_KEY", "extra_headers": {"X-Secret": "s3cr3t"}}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{provider}");
    assert_eq!(provider["api_key"], "env:MOCK_OPENAI_KEY");
    assert!(
        !provider.to_string().contains("s3cr3t"),
        "header values are not returned"
    );
    // The variable is not set for this test; the mock needs no key. The
    // provider is replaced, which must be asked for.
    let (status, _) = ada
        .post(
            "/api/providers",
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "default_model": "mock-model", "make_default": true}),
        )
        .await?;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, provider) = ada
        .post(
            "/api/providers",
            json!({"name": "mock", "kind": "openai", "base_url": openai.base_url(),
                   "default_model": "mock-model", "make_default": true, "replace": true}),
        )
        .await?;
    assert_eq!(provider["api_key"], Value::Null);

    let (status, created) = ada
        .post(
            "/api/channels",
            json!({"name": "launch", "purpose": PURPOSE}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["agent"]["handle"], "launch-agent");
    let (status, missing) = ada
        .post(
            "/api/channels",
            json!({"name": "nopurpose", "purpose": "  "}),
        )
        .await?;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(missing["code"], "missing_purpose");

    // Watch the stream while the agent works.
    let mut socket = events_ws(&served.ws_url("/api/events"), &ada.token).await?;
    let hello = next_json(&mut socket).await?;
    assert_eq!(hello["type"], "stream.hello");

    openai.push(Behaviour::tool_call(
        "write_file",
        r##"{"path": "plan.md", "content": "# Launch plan\n- beta on the 3rd\n"}"##,
    ));
    openai.push(Behaviour::text_chunks(&[
        "The plan is in ",
        "plan.md: ",
        "beta on the 3rd.",
    ]));
    let (status, posted) = ada
        .post(
            "/api/channels/launch/messages",
            json!({"text": "@launch-agent please write a launch plan"}),
        )
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["thread_created"], true);
    let thread = posted["thread"]["id"].as_i64().unwrap_or_default();
    let (streamed, turn) = follow_turn(&mut socket, &posted["turn"]).await?;
    assert_eq!(turn["state"], "completed", "{turn}");
    let reply = "The plan is in plan.md: beta on the 3rd.";
    match deltas {
        Deltas::All => assert_eq!(streamed, reply),
        Deltas::Prefix => assert!(reply.starts_with(&streamed), "streamed {streamed:?}"),
    }
    let world = served
        .api
        .t
        .helm
        .data_root()
        .world(helm_core::model::ChannelId(
            created["channel"]["id"].as_i64().unwrap_or_default(),
        ));
    assert_eq!(
        std::fs::read_to_string(world.workspace().join("plan.md"))?,
        "# Launch plan\n- beta on the 3rd\n"
    );
    let (_, activity) = ada.get("/api/channels/launch/activity").await?;
    assert_eq!(activity[0]["tool"], "write_file");
    assert_eq!(activity[0]["status"], "ok");

    // A second person, invited, sees the same thread and continues it.
    let (_, invite) = ada.post("/api/invites", json!({"role": "member"})).await?;
    let joined = http
        .post(served.url("/api/invites/accept"))
        .json(&json!({"code": invite["code"], "name": "mira", "password": PASSWORD}))
        .send()
        .await?;
    assert_eq!(joined.status(), StatusCode::CREATED);
    let mira_cookie = joined
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let mira_token: Value = http
        .post(served.url("/api/tokens"))
        .header("cookie", &mira_cookie)
        .header("origin", &base)
        .json(&json!({"name": "mira"}))
        .send()
        .await?
        .json()
        .await?;
    let mira = Person {
        http: http.clone(),
        base: base.clone(),
        token: mira_token["secret"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    let (status, page) = mira.get(&format!("/api/threads/{thread}/messages")).await?;
    assert_eq!(status, StatusCode::OK);
    let authors: Vec<String> = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            m["author"]["name"]
                .as_str()
                .or(m["author"]["handle"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(authors, ["ada", "launch-agent"]);
    // The whole reply, however much of it streamed.
    assert_eq!(page["items"][1]["content"], reply, "{page}");
    openai.push(Behaviour::text("Beta is on the 3rd, per plan.md."));
    let (_, asked) = mira
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@launch-agent when is the beta?"}),
        )
        .await?;
    let (_, turn) = follow_turn(&mut socket, &asked["turn"]).await?;
    assert_eq!(turn["state"], "completed");

    // The Captain moves the channel to another provider; the agent stays.
    let anthropic = MockAnthropic::start().await?;
    anthropic.serve_models(&["claude-mock"]);
    ada.post(
        "/api/providers",
        json!({"name": "claude", "kind": "anthropic", "base_url": anthropic.base_url(),
               "default_model": "claude-mock"}),
    )
    .await?;
    let (status, policy) = ada
        .send(
            reqwest::Method::PUT,
            "/api/channels/launch/model",
            Some(json!({"provider": "claude"})),
        )
        .await?;
    assert_eq!(status, StatusCode::OK, "{policy}");
    assert_eq!(policy["resolved"]["provider"], "claude");
    assert_eq!(policy["resolved"]["level"], "channel");
    let (status, _) = mira
        .send(
            reqwest::Method::PUT,
            "/api/channels/launch/model",
            Some(json!({"provider": "mock"})),
        )
        .await?;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "members do not change the model"
    );
    anthropic.push(Behaviour::text("Still here, same plan."));
    let (_, again) = ada
        .post(
            &format!("/api/threads/{thread}/messages"),
            json!({"text": "@launch-agent still on it?"}),
        )
        .await?;
    let (_, turn) = follow_turn(&mut socket, &again["turn"]).await?;
    assert_eq!(turn["served_by"]["provider"], "claude");
    let (_, shown) = mira.get("/api/channels/launch").await?;
    assert_eq!(shown["agent"]["id"], created["agent"]["id"]);
    assert!(
        shown.get("workspace_dir").is_none(),
        "members are not shown host paths"
    );

    // Archive and restore keep the same agent world.
    let (status, archived) = ada.post("/api/channels/launch/archive", json!({})).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(archived["agent"]["status"], "paused");
    let (status, refused) = ada
        .post("/api/channels/launch/messages", json!({"text": "hello?"}))
        .await?;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let (status, restored) = ada.post("/api/channels/launch/restore", json!({})).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(restored["agent"]["id"], created["agent"]["id"]);

    // Deletion needs an archived channel and its name as confirmation.
    let delete = |confirm: &'static str| {
        let path = format!("/api/channels/launch?confirm={confirm}");
        let ada = &ada;
        async move { ada.send(reqwest::Method::DELETE, &path, None).await }
    };
    let (status, body) = delete("launch").await?;
    assert_eq!(status, StatusCode::CONFLICT, "still active: {body}");
    ada.post("/api/channels/launch/archive", json!({})).await?;
    let (status, body) = delete("wrong").await?;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("confirm")
    );
    let (status, _) = mira
        .send(
            reqwest::Method::DELETE,
            "/api/channels/launch?confirm=launch",
            None,
        )
        .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = delete("launch").await?;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        ada.get("/api/channels/launch").await?.0,
        StatusCode::NOT_FOUND
    );
    assert!(!world.root().exists());
    let deleted = loop {
        let event = next_json(&mut socket).await?;
        if event["type"] == "channel.deleted" {
            break event;
        }
    };
    assert_eq!(deleted["name"], "launch");

    served.api.t.helm.shutdown_runtime(false).await;
    served.stop().await
}

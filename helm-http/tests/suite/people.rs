//! People using a server over real HTTP, for tests written as a user's
//! steps: the Captain's first run, invited members, and the waits a person
//! does (for a turn to end, for something to show up), each bounded at 20 s
//! as a guard against hangs, never as a performance bound.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{PASSWORD, Served, client};

/// Someone signed in with an API token.
pub struct Person {
    http: reqwest::Client,
    base: String,
    /// Their API token.
    pub token: String,
    /// Their user id.
    pub id: i64,
}

impl Person {
    /// Sends a request; the status and the body as JSON (`Null` if not JSON).
    pub async fn send(
        &self,
        method: Method,
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

    /// The same person, talking to the server at `base` (restarted elsewhere).
    pub fn at(&self, base: &str) -> Person {
        Person {
            http: self.http.clone(),
            base: base.to_string(),
            token: self.token.clone(),
            id: self.id,
        }
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<(StatusCode, Value)> {
        self.send(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<(StatusCode, Value)> {
        self.send(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> anyhow::Result<(StatusCode, Value)> {
        self.send(Method::PUT, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> anyhow::Result<(StatusCode, Value)> {
        self.send(Method::PATCH, path, Some(body)).await
    }

    /// A request that must succeed with `expected`; its body.
    pub async fn ok(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        expected: StatusCode,
    ) -> anyhow::Result<Value> {
        let (status, reply) = self.send(method.clone(), path, body).await?;
        anyhow::ensure!(
            status == expected,
            "{method} {path}: {status} (expected {expected}) {reply}"
        );
        Ok(reply)
    }

    /// Registers the OpenAI-compatible mock at `base_url` as `name`, the
    /// workspace default with `model`.
    pub async fn add_mock_provider(
        &self,
        name: &str,
        base_url: &str,
        model: &str,
    ) -> anyhow::Result<Value> {
        self.ok(
            Method::POST,
            "/api/providers",
            Some(json!({"name": name, "kind": "openai", "base_url": base_url,
                        "default_model": model, "make_default": true})),
            StatusCode::CREATED,
        )
        .await
    }

    /// Creates a public channel.
    pub async fn create_channel(&self, name: &str, purpose: &str) -> anyhow::Result<Value> {
        self.ok(
            Method::POST,
            "/api/channels",
            Some(json!({"name": name, "purpose": purpose})),
            StatusCode::CREATED,
        )
        .await
    }

    /// A thread with its turns.
    pub async fn thread(&self, id: i64) -> anyhow::Result<Value> {
        self.ok(
            Method::GET,
            &format!("/api/threads/{id}"),
            None,
            StatusCode::OK,
        )
        .await
    }

    /// A thread's messages, oldest first.
    pub async fn messages(&self, thread: i64) -> anyhow::Result<Vec<Value>> {
        let page = self
            .ok(
                Method::GET,
                &format!("/api/threads/{thread}/messages?limit=500"),
                None,
                StatusCode::OK,
            )
            .await?;
        Ok(page["items"].as_array().cloned().unwrap_or_default())
    }

    /// The turn `turn` of `thread` once `done` says it is where it should be.
    pub async fn wait_turn(
        &self,
        thread: i64,
        turn: i64,
        done: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        self.poll(&format!("turn {turn}"), || async {
            let detail = self.thread(thread).await?;
            Ok(detail["turns"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["id"] == turn && done(t))
                .cloned())
        })
        .await
    }

    /// The turn `turn` of `thread` once it has ended.
    pub async fn wait_ended(&self, thread: i64, turn: i64) -> anyhow::Result<Value> {
        self.wait_turn(thread, turn, |t| {
            !matches!(t["state"].as_str(), Some("queued" | "running"))
        })
        .await
    }

    /// Polls `check` until it returns something.
    pub async fn poll<T, F, Fut>(&self, what: &str, check: F) -> anyhow::Result<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
    {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(found) = check().await? {
                return Ok(found);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The Captain (`ada`), after first-run setup of the server at `base` with
/// its one-time setup code.
pub async fn captain(base: &str, setup_code: &str) -> anyhow::Result<Person> {
    let http = client()?;
    let setup = http
        .post(format!("{base}/api/setup"))
        .json(&json!({"name": "ada", "password": PASSWORD, "setup_code": setup_code}))
        .send()
        .await?;
    anyhow::ensure!(setup.status() == StatusCode::CREATED, "setup failed");
    let cookie = session_cookie(&setup);
    let user: Value = setup.json().await?;
    let token = token_for(&http, base, &cookie).await?;
    Ok(Person {
        http,
        base: base.to_string(),
        token,
        id: user["user"]["id"]
            .as_i64()
            .or(user["id"].as_i64())
            .unwrap_or_default(),
    })
}

/// Someone the Captain invites with `role`, signed in.
pub async fn invited(
    base: &str,
    captain: &Person,
    name: &str,
    role: &str,
) -> anyhow::Result<Person> {
    let invite = captain
        .ok(
            Method::POST,
            "/api/invites",
            Some(json!({"role": role})),
            StatusCode::CREATED,
        )
        .await?;
    let http = client()?;
    let joined = http
        .post(format!("{base}/api/invites/accept"))
        .json(&json!({"code": invite["code"], "name": name, "password": PASSWORD}))
        .send()
        .await?;
    anyhow::ensure!(joined.status() == StatusCode::CREATED, "joining failed");
    let cookie = session_cookie(&joined);
    let accepted: Value = joined.json().await?;
    let token = token_for(&http, base, &cookie).await?;
    Ok(Person {
        http,
        base: base.to_string(),
        token,
        id: accepted["user"]["id"].as_i64().unwrap_or_default(),
    })
}

/// A served workspace whose turns are driven, and its Captain.
pub async fn served_with_captain() -> anyhow::Result<(Served, Person)> {
    let served = Served::start(super::kit::Api::new().await?).await?;
    served.api.t.helm.start_runtime().await?;
    let code = served.api.state.setup_code.clone();
    let ada = captain(&served.url(""), &code).await?;
    Ok((served, ada))
}

fn session_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string()
}

async fn token_for(http: &reqwest::Client, base: &str, cookie: &str) -> anyhow::Result<String> {
    let issued: Value = http
        .post(format!("{base}/api/tokens"))
        .header("cookie", cookie)
        .header("origin", base)
        .json(&json!({"name": "tests"}))
        .send()
        .await?
        .json()
        .await?;
    issued["secret"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("no token: {issued}"))
}

//! The authorization matrix: every endpoint, called by an anonymous client,
//! a member outside the private channel, a member of it, an admin and the
//! Captain, answers with the expected status; and nothing of the private
//! channel reaches the outsider through any of them.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth};
use super::matrix_areas::{authority_rows, computer_rows, memory_rows, open_terminal_rows};

/// Text only the private channel holds.
const MARKER: &str = "SECRET-MARKER-7f3a";

/// A workspace with a private channel `vault` (Captain `ada`, member `mia`),
/// a public channel `lobby`, an admin `ann` and a member `nol` outside
/// `vault`; one thread in each channel; one open invitation.
struct Fixture {
    api: Api,
    tokens: [Option<String>; 5],
    ids: Ids,
}

#[derive(Clone, Copy)]
struct Ids {
    vault_thread: i64,
    vault_message: i64,
    mia: i64,
    nol: i64,
    invite: i64,
    terminal: u64,
    memory: i64,
}

const ROLES: [&str; 5] = ["anonymous", "outsider", "member", "admin", "captain"];

impl Fixture {
    async fn new() -> anyhow::Result<Self> {
        let api = Api::new().await?;
        let ada = api.setup().await?;
        let (_, ann) = api.join(&ada, "ann", "admin").await?;
        let (mia_id, mia) = api.join(&ada, "mia", "member").await?;
        let (nol_id, nol) = api.join(&ada, "nol", "member").await?;
        let b = Auth::Bearer(&ada);
        let created = api
            .post(
                "/api/channels",
                b,
                json!({"name": "vault", "purpose": format!("Keeps {MARKER}"), "visibility": "private"}),
            )
            .await?;
        anyhow::ensure!(created.status == StatusCode::CREATED, "{created:?}");
        api.post("/api/channels/vault/members", b, json!({"user_id": mia_id}))
            .await?;
        api.post(
            "/api/channels",
            b,
            json!({"name": "lobby", "purpose": "Everyone"}),
        )
        .await?;
        let posted = api
            .post(
                "/api/channels/vault/messages",
                b,
                json!({"text": format!("the code is {MARKER}")}),
            )
            .await?;
        api.post(
            "/api/channels/lobby/messages",
            b,
            json!({"text": "hello all"}),
        )
        .await?;
        api.post(
            "/api/providers",
            b,
            json!({"name": "mock", "kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                   "default_model": "m"}),
        )
        .await?;
        let invite = api.post("/api/invites", b, json!({})).await?;
        // The vault's computer: a file, a terminal, a memory record, a key.
        let wrote = api
            .call(
                Method::PUT,
                "/api/channels/vault/files",
                b,
                Some(json!({"path": "notes.md", "content": format!("{MARKER}\n")})),
            )
            .await?;
        anyhow::ensure!(wrote.status == StatusCode::OK, "{wrote:?}");
        let terminal = api
            .post("/api/channels/vault/terminals", b, json!({}))
            .await?;
        anyhow::ensure!(terminal.status == StatusCode::CREATED, "{terminal:?}");
        let memory = api
            .post(
                "/api/channels/vault/memory",
                b,
                json!({"kind": "fact", "content": format!("the vault holds {MARKER}")}),
            )
            .await?;
        anyhow::ensure!(memory.status == StatusCode::CREATED, "{memory:?}");
        let key = api.post("/api/channels/vault/ot-key", b, json!({})).await?;
        anyhow::ensure!(key.status == StatusCode::CREATED, "{key:?}");
        Ok(Fixture {
            ids: Ids {
                vault_thread: posted.body["thread"]["id"].as_i64().unwrap_or_default(),
                vault_message: posted.body["message"]["id"].as_i64().unwrap_or_default(),
                mia: mia_id,
                nol: nol_id,
                invite: invite.body["invite"]["id"].as_i64().unwrap_or_default(),
                terminal: terminal.body["id"].as_u64().unwrap_or_default(),
                memory: memory.body["id"].as_i64().unwrap_or_default(),
            },
            tokens: [None, Some(nol), Some(mia), Some(ann), Some(ada)],
            api,
        })
    }

    fn auth(&self, role: usize) -> Auth<'_> {
        match &self.tokens[role] {
            Some(token) => Auth::Bearer(token),
            None => Auth::None,
        }
    }
}

pub(super) struct Row {
    method: Method,
    path: &'static str,
    body: Option<Value>,
    expect: [u16; 5],
}

pub(super) fn row(
    method: Method,
    path: &'static str,
    body: Option<Value>,
    expect: [u16; 5],
) -> Row {
    Row {
        method,
        path,
        body,
        expect,
    }
}

fn rows() -> Vec<Row> {
    use Method as M;
    let purpose = json!({"purpose": "Still private"});
    let model = json!({"provider": "mock"});
    vec![
        row(M::GET, "/healthz", None, [200, 200, 200, 200, 200]),
        row(M::GET, "/metrics", None, [200, 200, 200, 200, 200]),
        row(M::GET, "/api/openapi.json", None, [200, 200, 200, 200, 200]),
        row(M::GET, "/api/setup", None, [200, 200, 200, 200, 200]),
        row(M::GET, "/api/auth/me", None, [401, 200, 200, 200, 200]),
        row(M::GET, "/api/auth/session", None, [200, 200, 200, 200, 200]),
        row(
            M::PUT,
            "/api/auth/password",
            // Without the current password: refused to everyone.
            Some(json!({"password": "another long password"})),
            [401, 422, 422, 422, 422],
        ),
        row(
            M::POST,
            "/api/auth/logout",
            Some(json!({})),
            [401, 204, 204, 204, 204],
        ),
        row(M::GET, "/api/status", None, [401, 200, 200, 200, 200]),
        row(
            M::PATCH,
            "/api/workspace",
            Some(json!({"name": "Renamed"})),
            [401, 403, 403, 200, 200],
        ),
        row(M::GET, "/api/unread", None, [401, 200, 200, 200, 200]),
        row(
            M::PUT,
            "/api/channels/vault/read",
            Some(json!({"message_id": 0})),
            [401, 404, 200, 200, 200],
        ),
        row(
            M::GET,
            "/api/channels/vault/feed",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::GET,
            "/api/channels/vault/messages?newest=true",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(M::GET, "/api/users", None, [401, 200, 200, 200, 200]),
        row(
            M::POST,
            "/api/users",
            Some(json!({"name": "newbie"})),
            [401, 403, 403, 201, 201],
        ),
        row(
            M::POST,
            "/api/users",
            Some(json!({"name": "boss", "role": "admin"})),
            [401, 403, 403, 403, 201],
        ),
        row(
            M::PATCH,
            "/api/users/{nol}",
            Some(json!({"active": false})),
            [401, 403, 403, 200, 200],
        ),
        row(
            M::PATCH,
            "/api/users/{nol}",
            Some(json!({"role": "admin"})),
            [401, 403, 403, 403, 200],
        ),
        row(
            M::PUT,
            "/api/users/{nol}/password",
            Some(json!({"password": "another long password"})),
            [401, 204, 403, 403, 403],
        ),
        row(M::GET, "/api/invites", None, [401, 403, 403, 200, 200]),
        row(
            M::POST,
            "/api/invites",
            Some(json!({})),
            [401, 403, 403, 201, 201],
        ),
        row(
            M::POST,
            "/api/invites",
            Some(json!({"role": "admin"})),
            [401, 403, 403, 403, 201],
        ),
        row(
            M::DELETE,
            "/api/invites/{invite}",
            None,
            [401, 403, 403, 200, 200],
        ),
        row(M::GET, "/api/tokens", None, [401, 200, 200, 200, 200]),
        row(
            M::POST,
            "/api/tokens",
            Some(json!({"name": "x"})),
            [401, 201, 201, 201, 201],
        ),
        row(M::GET, "/api/channels", None, [401, 200, 200, 200, 200]),
        row(
            M::POST,
            "/api/channels",
            Some(json!({"name": "fresh", "purpose": "New work"})),
            [401, 201, 201, 201, 201],
        ),
        row(
            M::GET,
            "/api/channels/vault",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::PATCH,
            "/api/channels/vault",
            Some(purpose),
            [401, 404, 403, 200, 200],
        ),
        row(
            M::PATCH,
            "/api/channels/vault",
            Some(json!({"name": "strongroom"})),
            [401, 404, 403, 200, 200],
        ),
        // `lobby` is taken, so a rename to it conflicts (after authority).
        row(
            M::PATCH,
            "/api/channels/vault",
            Some(json!({"name": "lobby"})),
            [401, 404, 403, 409, 409],
        ),
        row(
            M::POST,
            "/api/channels/vault/archive",
            Some(json!({})),
            [401, 404, 403, 200, 200],
        ),
        // Authority is checked before state: the channel is active.
        row(
            M::POST,
            "/api/channels/vault/restore",
            Some(json!({})),
            [401, 404, 403, 409, 409],
        ),
        row(
            M::DELETE,
            "/api/channels/vault?confirm=vault",
            None,
            [401, 404, 403, 409, 409],
        ),
        row(
            M::GET,
            "/api/channels/vault/members",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::POST,
            "/api/channels/vault/members",
            Some(json!({"user_id": 0})),
            [401, 404, 403, 201, 201],
        ),
        // Anyone may leave; managers remove anyone.
        row(
            M::DELETE,
            "/api/channels/vault/members/{mia}",
            None,
            [401, 404, 204, 204, 204],
        ),
        row(
            M::GET,
            "/api/channels/vault/threads",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::GET,
            "/api/channels/vault/messages",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::POST,
            "/api/channels/vault/messages",
            Some(json!({"text": "more"})),
            [401, 404, 201, 201, 201],
        ),
        row(
            M::GET,
            "/api/channels/vault/activity",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::GET,
            "/api/channels/vault/model",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::PUT,
            "/api/channels/vault/model",
            Some(model.clone()),
            [401, 404, 403, 200, 200],
        ),
        row(
            M::GET,
            "/api/threads/{thread}",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::PATCH,
            "/api/threads/{thread}",
            Some(json!({"title": "Vault work"})),
            [401, 404, 200, 200, 200],
        ),
        row(
            M::PUT,
            "/api/threads/{thread}/status",
            Some(json!({"status": "resolved"})),
            [401, 404, 200, 200, 200],
        ),
        row(
            M::POST,
            "/api/threads/{thread}/stop",
            Some(json!({})),
            [401, 404, 200, 200, 200],
        ),
        row(
            M::GET,
            "/api/threads/{thread}/messages",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::POST,
            "/api/threads/{thread}/messages",
            Some(json!({"text": "more"})),
            [401, 404, 201, 201, 201],
        ),
        row(
            M::GET,
            "/api/threads/{thread}/model",
            None,
            [401, 404, 200, 200, 200],
        ),
        row(
            M::PUT,
            "/api/threads/{thread}/model",
            Some(model.clone()),
            [401, 404, 403, 200, 200],
        ),
        row(M::GET, "/api/providers", None, [401, 200, 200, 200, 200]),
        row(
            M::POST,
            "/api/providers",
            Some(json!({"name": "p2", "kind": "openai", "base_url": "http://127.0.0.1:9/v1"})),
            [401, 403, 403, 201, 201],
        ),
        // Nothing answers at the provider's address: asking what it serves
        // is an upstream failure, for whoever may ask.
        row(
            M::GET,
            "/api/providers/mock/models",
            None,
            [401, 502, 502, 502, 502],
        ),
        row(
            M::GET,
            "/api/providers/nobody/models",
            None,
            [401, 404, 404, 404, 404],
        ),
        row(
            M::POST,
            "/api/providers/test",
            Some(json!({"name": "p3", "kind": "openai", "base_url": "http://127.0.0.1:9/v1"})),
            [401, 403, 403, 502, 502],
        ),
        row(M::GET, "/api/model", None, [401, 200, 200, 200, 200]),
        row(M::PUT, "/api/model", Some(model), [401, 403, 403, 200, 200]),
        row(M::GET, "/api/events/log", None, [401, 200, 200, 200, 200]),
        row(M::GET, "/api/events", None, [401, 400, 400, 400, 400]),
    ]
    .into_iter()
    .chain(computer_rows())
    .chain(memory_rows())
    .chain(authority_rows())
    .chain(open_terminal_rows())
    .collect()
}

fn fill(path: &str, ids: Ids) -> String {
    path.replace("{thread}", &ids.vault_thread.to_string())
        .replace("{mia}", &ids.mia.to_string())
        .replace("{nol}", &ids.nol.to_string())
        .replace("{invite}", &ids.invite.to_string())
        .replace("{terminal}", &ids.terminal.to_string())
        .replace("{memory}", &ids.memory.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_each_role_as_expected_and_leaks_nothing() -> anyhow::Result<()> {
    // Reads and refusals change nothing, so one fixture serves them all;
    // every change expected to succeed gets a fresh fixture, so none depends
    // on another.
    let shared = Fixture::new().await?;
    let mut failures = Vec::new();
    for row in rows() {
        for (role, expected) in row.expect.iter().enumerate() {
            let fresh;
            let fixture = if (200..300).contains(expected) && role > 0 && row.method != Method::GET
            {
                fresh = Fixture::new().await?;
                &fresh
            } else {
                &shared
            };
            let mut body = row.body.clone();
            if let Some(b) = body.as_mut()
                && b.get("user_id") == Some(&json!(0))
            {
                b["user_id"] = json!(fixture.ids.nol);
            }
            if let Some(b) = body.as_mut()
                && b.get("message_id") == Some(&json!(0))
            {
                b["message_id"] = json!(fixture.ids.vault_message);
            }
            let path = fill(row.path, fixture.ids);
            let reply = fixture
                .api
                .call(row.method.clone(), &path, fixture.auth(role), body)
                .await?;
            if reply.status.as_u16() != *expected {
                failures.push(format!(
                    "{} {path} as {}: {} (expected {expected}) {}",
                    row.method, ROLES[role], reply.status, reply.body
                ));
            }
            if role == 1 {
                let text = reply.body.to_string();
                let leaked =
                    text.contains(MARKER) || (reply.status.is_success() && text.contains("vault"));
                if leaked {
                    failures.push(format!(
                        "{} {path} leaks the private channel: {text}",
                        row.method
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

#[tokio::test]
async fn a_private_channel_opens_to_a_person_added_and_closes_when_removed() -> anyhow::Result<()> {
    let f = Fixture::new().await?;
    let nol = f.auth(1);
    let ada = f.auth(4);
    let listed = f.api.get("/api/channels", nol).await?;
    assert!(!listed.body.to_string().contains("vault"));
    f.api
        .post(
            "/api/channels/vault/members",
            ada,
            json!({"user_id": f.ids.nol}),
        )
        .await?;
    let listed = f.api.get("/api/channels", nol).await?;
    assert!(listed.body.to_string().contains("vault"));
    let messages = f.api.get("/api/channels/vault/messages", nol).await?;
    assert!(messages.body.to_string().contains(MARKER));
    let removed = f
        .api
        .call(
            Method::DELETE,
            &format!("/api/channels/vault/members/{}", f.ids.nol),
            ada,
            None,
        )
        .await?;
    assert_eq!(removed.status, StatusCode::NO_CONTENT);
    assert_eq!(
        f.api.get("/api/channels/vault", nol).await?.status,
        StatusCode::NOT_FOUND
    );
    // Members cannot be re-added twice, and unknown people are not found.
    let again = f
        .api
        .post(
            "/api/channels/vault/members",
            ada,
            json!({"user_id": f.ids.mia}),
        )
        .await?;
    assert_eq!(again.status, StatusCode::CONFLICT);
    let ghost = f
        .api
        .post("/api/channels/vault/members", ada, json!({"user_id": 999}))
        .await?;
    assert_eq!(ghost.status, StatusCode::NOT_FOUND);
    Ok(())
}

//! Managing people: roles (`PATCH /api/users/{id}` with `role`),
//! deactivation and reactivation (`active`), and changing one's own password.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::kit::{Api, Auth, PASSWORD, Served, client, events_ws, next_json};

fn patch_path(id: i64) -> String {
    format!("/api/users/{id}")
}

async fn patch(api: &Api, token: &str, id: i64, body: Value) -> anyhow::Result<super::kit::Reply> {
    api.call(
        Method::PATCH,
        &patch_path(id),
        Auth::Bearer(token),
        Some(body),
    )
    .await
}

async fn login(api: &Api, name: &str, password: &str) -> anyhow::Result<super::kit::Reply> {
    api.post(
        "/api/auth/login",
        Auth::None,
        json!({"name": name, "password": password}),
    )
    .await
}

fn message(reply: &super::kit::Reply) -> String {
    reply.body["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_deactivated_persons_session_and_token_are_refused_at_once() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob_token) = api.join(&ada, "bob", "member").await?;
    let signed_in = login(&api, "bob", PASSWORD).await?;
    let bob_session = signed_in
        .session()
        .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
    for auth in [Auth::Bearer(&bob_token), Auth::Cookie(&bob_session)] {
        let me = api.get("/api/auth/me", auth).await?;
        anyhow::ensure!(me.status == StatusCode::OK, "before: {me:?}");
    }
    // Bob posted before; it must stay, under his name.
    let posted = api
        .post(
            "/api/channels/main/messages",
            Auth::Bearer(&bob_token),
            json!({"text": "hello from bob"}),
        )
        .await?;
    anyhow::ensure!(posted.status == StatusCode::CREATED, "{posted:?}");

    let off = patch(&api, &ada, bob_id, json!({"active": false})).await?;
    anyhow::ensure!(off.status == StatusCode::OK, "deactivate: {off:?}");
    anyhow::ensure!(off.body["deactivated"].is_string(), "{:?}", off.body);

    let token = api.get("/api/auth/me", Auth::Bearer(&bob_token)).await?;
    anyhow::ensure!(token.status == StatusCode::UNAUTHORIZED, "token: {token:?}");
    anyhow::ensure!(message(&token).contains("deactivated"), "{token:?}");
    let session = api.get("/api/auth/me", Auth::Cookie(&bob_session)).await?;
    anyhow::ensure!(
        session.status == StatusCode::UNAUTHORIZED,
        "session: {session:?}"
    );
    let again = login(&api, "bob", PASSWORD).await?;
    anyhow::ensure!(again.status == StatusCode::UNAUTHORIZED, "login: {again:?}");
    anyhow::ensure!(message(&again).contains("deactivated"), "{again:?}");
    anyhow::ensure!(
        again.session().is_none(),
        "no session for a deactivated person"
    );
    let wrong = login(&api, "bob", "not the password at all").await?;
    anyhow::ensure!(
        !message(&wrong).contains("deactivated"),
        "a wrong password learns nothing: {wrong:?}"
    );

    let people = api.get("/api/users", Auth::Bearer(&ada)).await?;
    let bob = people
        .body
        .as_array()
        .and_then(|all| all.iter().find(|u| u["name"] == "bob"))
        .ok_or_else(|| anyhow::anyhow!("bob is still listed: {:?}", people.body))?;
    anyhow::ensure!(
        bob["deactivated"].is_string(),
        "listed as deactivated: {bob}"
    );
    let thread = posted.body["thread"]["id"].as_i64().unwrap_or_default();
    let kept = api
        .get(
            &format!("/api/threads/{thread}/messages"),
            Auth::Bearer(&ada),
        )
        .await?;
    anyhow::ensure!(
        kept.body.to_string().contains("hello from bob"),
        "his message stays: {kept:?}"
    );

    let on = patch(&api, &ada, bob_id, json!({"active": true})).await?;
    anyhow::ensure!(on.status == StatusCode::OK, "reactivate: {on:?}");
    anyhow::ensure!(on.body.get("deactivated").is_none(), "{:?}", on.body);
    let token = api.get("/api/auth/me", Auth::Bearer(&bob_token)).await?;
    anyhow::ensure!(token.status == StatusCode::OK, "token again: {token:?}");
    let session = api.get("/api/auth/me", Auth::Cookie(&bob_session)).await?;
    anyhow::ensure!(
        session.status == StatusCode::UNAUTHORIZED,
        "a session ended by deactivation stays ended: {session:?}"
    );
    let back = login(&api, "bob", PASSWORD).await?;
    anyhow::ensure!(back.status == StatusCode::OK, "signs in again: {back:?}");
    Ok(())
}

#[tokio::test]
async fn the_captain_is_never_demoted_or_deactivated() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, ann) = api.join(&ada, "ann", "admin").await?;
    let (bob_id, _) = api.join(&ada, "bob", "member").await?;
    let me = api.get("/api/auth/me", Auth::Bearer(&ada)).await?;
    let ada_id = me.body["user"]["id"].as_i64().unwrap_or_default();

    for (who, body) in [
        (&ada, json!({"role": "member"})),
        (&ada, json!({"role": "admin"})),
        (&ada, json!({"active": false})),
        (&ann, json!({"active": false})),
        (&ann, json!({"role": "member"})),
    ] {
        let reply = patch(&api, who, ada_id, body.clone()).await?;
        anyhow::ensure!(
            reply.status == StatusCode::CONFLICT,
            "{body} on the Captain: {reply:?}"
        );
    }
    let second = patch(&api, &ada, bob_id, json!({"role": "captain"})).await?;
    anyhow::ensure!(second.status == StatusCode::CONFLICT, "{second:?}");
    let me = api.get("/api/auth/me", Auth::Bearer(&ada)).await?;
    anyhow::ensure!(me.body["user"]["role"] == "captain", "{me:?}");

    // Bad input and unknown people.
    for body in [
        json!({"role": "boss"}),
        json!({}),
        json!({"active": "no"}),
        json!({"admin": true}),
    ] {
        let reply = patch(&api, &ada, bob_id, body.clone()).await?;
        anyhow::ensure!(
            reply.status == StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {reply:?}"
        );
    }
    let unknown = patch(&api, &ada, 9_999, json!({"active": false})).await?;
    anyhow::ensure!(unknown.status == StatusCode::NOT_FOUND, "{unknown:?}");
    Ok(())
}

#[tokio::test]
async fn members_change_nobody_and_admins_only_members_access() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (ann_id, ann) = api.join(&ada, "ann", "admin").await?;
    let (abe_id, _) = api.join(&ada, "abe", "admin").await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let (cid_id, _) = api.join(&ada, "cid", "member").await?;

    // A member may do none of it, to anyone, themselves included.
    for (id, body) in [
        (cid_id, json!({"active": false})),
        (cid_id, json!({"role": "admin"})),
        (bob_id, json!({"role": "admin"})),
        (bob_id, json!({"active": false})),
        (ann_id, json!({"active": false})),
    ] {
        let reply = patch(&api, &bob, id, body.clone()).await?;
        anyhow::ensure!(
            reply.status == StatusCode::FORBIDDEN,
            "member: {body} on {id}: {reply:?}"
        );
    }
    // An admin deactivates and reactivates members, but changes no role
    // and does not touch other admins.
    for (id, body) in [
        (cid_id, json!({"role": "admin"})),
        (abe_id, json!({"role": "member"})),
        (abe_id, json!({"active": false})),
    ] {
        let reply = patch(&api, &ann, id, body.clone()).await?;
        anyhow::ensure!(
            reply.status == StatusCode::FORBIDDEN,
            "admin: {body} on {id}: {reply:?}"
        );
    }
    let myself = patch(&api, &ann, ann_id, json!({"active": false})).await?;
    anyhow::ensure!(myself.status == StatusCode::CONFLICT, "{myself:?}");
    let off = patch(&api, &ann, cid_id, json!({"active": false})).await?;
    anyhow::ensure!(off.status == StatusCode::OK, "{off:?}");
    let on = patch(&api, &ann, cid_id, json!({"active": true})).await?;
    anyhow::ensure!(on.status == StatusCode::OK, "{on:?}");

    // The Captain promotes: the new admin's token has an admin's reach at
    // once, and loses it when demoted.
    let invites = api.get("/api/invites", Auth::Bearer(&bob)).await?;
    anyhow::ensure!(invites.status == StatusCode::FORBIDDEN, "{invites:?}");
    let up = patch(&api, &ada, bob_id, json!({"role": "admin"})).await?;
    anyhow::ensure!(
        up.status == StatusCode::OK && up.body["role"] == "admin",
        "{up:?}"
    );
    let invites = api.get("/api/invites", Auth::Bearer(&bob)).await?;
    anyhow::ensure!(invites.status == StatusCode::OK, "{invites:?}");
    let down = patch(&api, &ada, bob_id, json!({"role": "member"})).await?;
    anyhow::ensure!(down.status == StatusCode::OK, "{down:?}");
    let invites = api.get("/api/invites", Auth::Bearer(&bob)).await?;
    anyhow::ensure!(invites.status == StatusCode::FORBIDDEN, "{invites:?}");
    // Both at once: checked together, so a refusal changes neither.
    let both = patch(
        &api,
        &ann,
        cid_id,
        json!({"role": "admin", "active": false}),
    )
    .await?;
    anyhow::ensure!(both.status == StatusCode::FORBIDDEN, "{both:?}");
    let people = api.get("/api/users", Auth::Bearer(&ada)).await?;
    let cid = people
        .body
        .as_array()
        .and_then(|all| all.iter().find(|u| u["name"] == "cid"))
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(
        cid["role"] == "member" && cid.get("deactivated").is_none(),
        "unchanged: {cid}"
    );
    Ok(())
}

#[tokio::test]
async fn changing_ones_own_password_needs_the_current_one() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    let put = |body: Value| {
        api.call(
            Method::PUT,
            "/api/auth/password",
            Auth::Bearer(&bob),
            Some(body),
        )
    };
    let wrong =
        put(json!({"current_password": "not my password", "password": "a brand new secret"}))
            .await?;
    anyhow::ensure!(
        wrong.status == StatusCode::UNPROCESSABLE_ENTITY,
        "{wrong:?}"
    );
    anyhow::ensure!(message(&wrong).contains("current password"), "{wrong:?}");
    let short = put(json!({"current_password": PASSWORD, "password": "short"})).await?;
    anyhow::ensure!(
        short.status == StatusCode::UNPROCESSABLE_ENTITY,
        "{short:?}"
    );
    anyhow::ensure!(message(&short).contains("10 characters"), "{short:?}");
    // Without the current password, a token (or a session left open) cannot
    // take the account.
    let bare = put(json!({"password": "a brand new secret"})).await?;
    anyhow::ensure!(bare.status == StatusCode::UNPROCESSABLE_ENTITY, "{bare:?}");
    anyhow::ensure!(
        message(&bare).contains("give the password you sign in with"),
        "{bare:?}"
    );
    // A browser session bob left open elsewhere ends with the change.
    let elsewhere = login(&api, "bob", PASSWORD).await?;
    let cookie = elsewhere
        .session()
        .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
    let before = api.get("/api/auth/me", Auth::Cookie(&cookie)).await?;
    anyhow::ensure!(before.status == StatusCode::OK, "{before:?}");
    let done = put(json!({"current_password": PASSWORD, "password": "a brand new secret"})).await?;
    anyhow::ensure!(done.status == StatusCode::NO_CONTENT, "{done:?}");
    let after = api.get("/api/auth/me", Auth::Cookie(&cookie)).await?;
    anyhow::ensure!(after.status == StatusCode::UNAUTHORIZED, "{after:?}");
    // The token it was changed with still works.
    let me = api.get("/api/auth/me", Auth::Bearer(&bob)).await?;
    anyhow::ensure!(me.status == StatusCode::OK, "{me:?}");
    let old = login(&api, "bob", PASSWORD).await?;
    anyhow::ensure!(old.status == StatusCode::UNAUTHORIZED, "{old:?}");
    let new = login(&api, "bob", "a brand new secret").await?;
    anyhow::ensure!(new.status == StatusCode::OK, "{new:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deactivated_persons_event_stream_ends_at_once() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let served = Served::start(api).await?;
    let mut socket = events_ws(&served.ws_url("/api/events"), &bob).await?;
    let hello = next_json(&mut socket).await?;
    anyhow::ensure!(hello["type"] == "stream.hello", "{hello}");

    let http = client()?;
    let reply = http
        .patch(served.url(&patch_path(bob_id)))
        .bearer_auth(&ada)
        .json(&json!({"active": false}))
        .send()
        .await?;
    anyhow::ensure!(reply.status() == reqwest::StatusCode::OK, "{reply:?}");
    // The stream closes with 4001 long before the next 30 s heartbeat.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match next_json(&mut socket).await {
                Ok(_) => continue,
                Err(e) => return e.to_string(),
            }
        }
    })
    .await
    .map_err(|_| anyhow::anyhow!("the stream stayed open"))?;
    anyhow::ensure!(ended.contains("4001"), "closed how: {ended}");
    served.stop().await
}

/// How a WebSocket ended, within 10 s (long before the 30 s heartbeat):
/// its close code, or why there was none.
async fn close_code<S>(socket: &mut S) -> anyhow::Result<u16>
where
    S: futures_util::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(Some(frame)))) => return Ok(u16::from(frame.code)),
                Some(Ok(Message::Close(None))) | None => anyhow::bail!("closed with no code"),
                Some(Ok(_)) => continue,
                Some(Err(e)) => anyhow::bail!("the socket failed: {e}"),
            }
        }
    })
    .await
    .map_err(|_| anyhow::anyhow!("the socket stayed open"))?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deactivated_persons_terminals_close_at_once() -> anyhow::Result<()> {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let served = Served::start(api).await?;
    let http = client()?;
    let made = http
        .post(served.url("/api/channels"))
        .bearer_auth(&bob)
        .json(&json!({"name": "bench", "purpose": "Bob's bench"}))
        .send()
        .await?;
    anyhow::ensure!(made.status().is_success(), "{made:?}");

    // Bob watches a terminal over Helm's socket...
    let opened: Value = http
        .post(served.url("/api/channels/bench/terminals"))
        .bearer_auth(&bob)
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    let id = opened["id"].as_u64().unwrap_or_default();
    let mut terminal = events_ws(&served.ws_url(&format!("/api/terminals/{id}/ws")), &bob).await?;
    terminal
        .send(Message::Binary(b"echo READY-$((6*7))\n".to_vec().into()))
        .await?;
    super::computer::read_until(&mut terminal, "READY-42").await?;

    // ...and another over Open Terminal's, with the key he made.
    let (_, mut open_terminal) = open_terminal_in(&served, &bob, "bench").await?;

    let reply = http
        .patch(served.url(&patch_path(bob_id)))
        .bearer_auth(&ada)
        .json(&json!({"active": false}))
        .send()
        .await?;
    anyhow::ensure!(reply.status() == reqwest::StatusCode::OK, "{reply:?}");
    // Both close with 4001, as his event stream does, not at the next
    // 30 s heartbeat.
    anyhow::ensure!(close_code(&mut terminal).await? == 4001);
    anyhow::ensure!(close_code(&mut open_terminal).await? == 4001);
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_close_at_once_when_their_access_or_credential_ends() -> anyhow::Result<()> {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (bob_id, bob) = api.join(&ada, "bob", "member").await?;
    let served = Served::start(api).await?;
    let http = client()?;
    let post = |path: &str, token: &str, body: Value| {
        http.post(served.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    post(
        "/api/channels",
        &ada,
        json!({"name": "vault", "purpose": "Private work", "visibility": "private"}),
    )
    .await?;
    post(
        "/api/channels/vault/members",
        &ada,
        json!({"user_id": bob_id}),
    )
    .await?;

    // Removed from a private channel: his terminal there closes now.
    let opened: Value = post("/api/channels/vault/terminals", &bob, json!({}))
        .await?
        .json()
        .await?;
    let id = opened["id"].as_u64().unwrap_or_default();
    let mut terminal = events_ws(&served.ws_url(&format!("/api/terminals/{id}/ws")), &bob).await?;
    terminal
        .send(Message::Binary(b"echo READY-$((6*7))\n".to_vec().into()))
        .await?;
    super::computer::read_until(&mut terminal, "READY-42").await?;
    let removed = http
        .delete(served.url(&format!("/api/channels/vault/members/{bob_id}")))
        .bearer_auth(&ada)
        .send()
        .await?;
    anyhow::ensure!(removed.status().is_success(), "{removed:?}");
    anyhow::ensure!(close_code(&mut terminal).await? == 4001);

    // An Open Terminal key revoked: its socket closes now.
    post(
        "/api/channels",
        &bob,
        json!({"name": "bench", "purpose": "Bob's bench"}),
    )
    .await?;
    let (_, mut open_terminal) = open_terminal_in(&served, &bob, "bench").await?;
    http.delete(served.url("/api/channels/bench/ot-key"))
        .bearer_auth(&bob)
        .send()
        .await?;
    anyhow::ensure!(close_code(&mut open_terminal).await? == 4001);

    // A revoked API token: the event stream it opened closes now.
    let minted: Value = post("/api/tokens", &bob, json!({"name": "laptop"}))
        .await?
        .json()
        .await?;
    let laptop = minted["secret"].as_str().unwrap_or_default().to_string();
    let laptop_id = minted["token"]["id"].as_i64().unwrap_or_default();
    let mut events = events_ws(&served.ws_url("/api/events"), &laptop).await?;
    let hello = next_json(&mut events).await?;
    anyhow::ensure!(hello["type"] == "stream.hello", "{hello}");
    http.delete(served.url(&format!("/api/tokens/{laptop_id}")))
        .bearer_auth(&bob)
        .send()
        .await?;
    anyhow::ensure!(close_code(&mut events).await? == 4001);
    served.stop().await
}

/// Makes `channel`'s Open Terminal key as the holder of `token`, opens a
/// terminal with it and connects to it, checked by a command's output.
/// Returns the key and the socket.
async fn open_terminal_in(
    served: &Served,
    token: &str,
    channel: &str,
) -> anyhow::Result<(
    String,
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
)> {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let http = client()?;
    let key: Value = http
        .post(served.url(&format!("/api/channels/{channel}/ot-key")))
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?;
    let key = key["secret"].as_str().unwrap_or_default().to_string();
    let ot: Value = http
        .post(served.url(&format!("/api/channels/{channel}/ot/api/terminals")))
        .bearer_auth(&key)
        .send()
        .await?
        .json()
        .await?;
    let tid = ot["id"].as_str().unwrap_or_default();
    let url = served.ws_url(&format!("/api/channels/{channel}/ot/api/terminals/{tid}"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str()).await?;
    socket
        .send(Message::Text(
            json!({"type": "auth", "token": key}).to_string().into(),
        ))
        .await?;
    socket
        .send(Message::Text(
            json!({"type": "input", "data": "echo OT-$((6*7))\n"})
                .to_string()
                .into(),
        ))
        .await?;
    super::computer::read_until(&mut socket, "OT-42").await?;
    Ok((key, socket))
}

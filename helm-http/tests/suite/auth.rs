//! Setup, signing in and out, invitations, API tokens, the origin check and
//! rate limits, through the router.

use axum::http::{Method, StatusCode, header};
use serde_json::json;

use super::kit::{Api, Auth, PASSWORD};

#[tokio::test]
async fn setup_completes_the_captain_exactly_once() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let status = api.get("/api/setup", Auth::None).await?;
    assert_eq!(status.body["needed"], true);
    // Nobody can sign in as the passwordless `captain` made by init.
    let refused = api
        .post(
            "/api/auth/login",
            Auth::None,
            json!({"name": "captain", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);

    let weak = api
        .post(
            "/api/setup",
            Auth::None,
            json!({"name": "ada", "password": "short", "setup_code": api.state.setup_code.as_str()}),
        )
        .await?;
    assert_eq!(weak.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(weak.body["code"], "invalid");

    let done = api
        .post(
            "/api/setup",
            Auth::None,
            json!({"name": "ada", "display_name": "Ada L.", "password": PASSWORD,
                   "setup_code": api.state.setup_code.as_str()}),
        )
        .await?;
    assert_eq!(done.status, StatusCode::CREATED, "{done:?}");
    assert_eq!(done.body["user"]["role"], "captain");
    assert_eq!(done.body["user"]["name"], "ada");
    let cookie = done
        .headers
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(
        !cookie.contains("Secure"),
        "plain http by default: {cookie}"
    );

    let again = api
        .post(
            "/api/setup",
            Auth::None,
            json!({"name": "eve", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(
        api.get("/api/setup", Auth::None).await?.body["needed"],
        false
    );
    assert_eq!(api.t.helm.captain().await?.name, "ada");
    Ok(())
}

#[tokio::test]
async fn login_me_logout() -> anyhow::Result<()> {
    let api = Api::new().await?;
    api.setup().await?;
    let wrong = api
        .post(
            "/api/auth/login",
            Auth::None,
            json!({"name": "ada", "password": "not the password"}),
        )
        .await?;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.body["code"], "unauthenticated");
    let unknown = api
        .post(
            "/api/auth/login",
            Auth::None,
            json!({"name": "nobody", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown.body["message"], wrong.body["message"]);

    let ok = api
        .post(
            "/api/auth/login",
            Auth::None,
            json!({"name": "ada", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(ok.status, StatusCode::OK);
    let session = ok.session().ok_or_else(|| anyhow::anyhow!("no cookie"))?;
    let me = api.get("/api/auth/me", Auth::Cookie(&session)).await?;
    assert_eq!(me.body["user"]["name"], "ada");
    assert_eq!(me.body["via"], "session");

    let out = api
        .call(
            Method::POST,
            "/api/auth/logout",
            Auth::Cookie(&session),
            None,
        )
        .await?;
    assert_eq!(out.status, StatusCode::NO_CONTENT);
    assert!(
        out.headers
            .get(header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.contains("Max-Age=0"))
    );
    let gone = api.get("/api/auth/me", Auth::Cookie(&session)).await?;
    assert_eq!(gone.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        api.get("/api/auth/me", Auth::None).await?.status,
        StatusCode::UNAUTHORIZED
    );
    Ok(())
}

#[tokio::test]
async fn an_invited_person_joins_with_the_invited_role() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let captain = api.setup().await?;
    let invite = api
        .post(
            "/api/invites",
            Auth::Bearer(&captain),
            json!({"role": "member", "expires_in_hours": 2}),
        )
        .await?;
    assert_eq!(invite.status, StatusCode::CREATED);
    let code = invite.body["code"].as_str().unwrap_or_default().to_string();
    assert!(code.starts_with("hinv_"));
    assert!(
        invite.body["url"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&code)
    );

    let listed = api.get("/api/invites", Auth::Bearer(&captain)).await?;
    assert_eq!(listed.body.as_array().map(Vec::len), Some(1));
    assert!(
        !listed.body.to_string().contains(&code),
        "codes are shown once"
    );

    // The page an invitation opens checks it first.
    let live = api
        .post("/api/invites/check", Auth::None, json!({"code": code}))
        .await?;
    assert_eq!(live.status, StatusCode::OK, "{live:?}");
    assert_eq!(live.body["role"], "member");
    assert!(
        live.body.get("created_by").is_none(),
        "only what its holder needs"
    );
    let unknown = api
        .post(
            "/api/invites/check",
            Auth::None,
            json!({"code": "hinv_nothing"}),
        )
        .await?;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);

    let joined = api
        .post(
            "/api/invites/accept",
            Auth::None,
            json!({"code": code, "name": "mira", "display_name": "Mira", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(joined.status, StatusCode::CREATED, "{joined:?}");
    assert_eq!(joined.body["user"]["role"], "member");
    let session = joined
        .session()
        .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
    assert_eq!(
        api.get("/api/auth/me", Auth::Cookie(&session)).await?.body["user"]["name"],
        "mira"
    );
    // Used once.
    let reused = api
        .post(
            "/api/invites/accept",
            Auth::None,
            json!({"code": code, "name": "mallory", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(reused.status, StatusCode::UNAUTHORIZED);
    let used = api
        .post("/api/invites/check", Auth::None, json!({"code": code}))
        .await?;
    assert_eq!(used.status, StatusCode::UNAUTHORIZED);
    assert!(
        used.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("was used already"),
        "{used:?}"
    );
    // A member may not invite, and only the Captain invites admins.
    let member_token = api.token(&session).await?;
    let denied = api
        .post("/api/invites", Auth::Bearer(&member_token), json!({}))
        .await?;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    // A revoked invitation cannot be accepted.
    let second = api
        .post(
            "/api/invites",
            Auth::Bearer(&captain),
            json!({"role": "admin"}),
        )
        .await?;
    let id = second.body["invite"]["id"].as_i64().unwrap_or_default();
    let revoked = api
        .call(
            Method::DELETE,
            &format!("/api/invites/{id}"),
            Auth::Bearer(&captain),
            None,
        )
        .await?;
    assert_eq!(revoked.status, StatusCode::OK);
    let late = api
        .post(
            "/api/invites/accept",
            Auth::None,
            json!({"code": second.body["code"], "name": "tom", "password": PASSWORD}),
        )
        .await?;
    assert_eq!(late.status, StatusCode::UNAUTHORIZED);
    let checked = api
        .post(
            "/api/invites/check",
            Auth::None,
            json!({"code": second.body["code"]}),
        )
        .await?;
    assert!(
        checked.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("was revoked"),
        "{checked:?}"
    );
    Ok(())
}

#[tokio::test]
async fn api_tokens_are_shown_once_stored_hashed_and_revocable() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let token = api.setup().await?;
    assert!(token.starts_with("helm_"));
    let me = api.get("/api/auth/me", Auth::Bearer(&token)).await?;
    assert_eq!(me.body["via"], "token");
    let listed = api.get("/api/tokens", Auth::Bearer(&token)).await?;
    assert!(!listed.body.to_string().contains(&token));
    let id = listed.body[0]["id"].as_i64().unwrap_or_default();

    // Neither the token nor the password is anywhere in the database.
    let db = std::fs::read(api.t.data_dir().join("helm.db"))?;
    let wal = std::fs::read(api.t.data_dir().join("helm.db-wal")).unwrap_or_default();
    for secret in [token.as_str(), PASSWORD] {
        for file in [&db, &wal] {
            assert!(
                !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "a secret is stored in clear"
            );
        }
    }

    let revoked = api
        .call(
            Method::DELETE,
            &format!("/api/tokens/{id}"),
            Auth::Bearer(&token),
            None,
        )
        .await?;
    assert_eq!(revoked.status, StatusCode::OK);
    assert!(revoked.body["revoked"].is_string());
    assert_eq!(
        api.get("/api/auth/me", Auth::Bearer(&token)).await?.status,
        StatusCode::UNAUTHORIZED
    );
    Ok(())
}

#[tokio::test]
async fn cookie_changes_must_come_from_our_origin() -> anyhow::Result<()> {
    let api = Api::new().await?;
    api.setup().await?;
    let login = api
        .post(
            "/api/auth/login",
            Auth::None,
            json!({"name": "ada", "password": PASSWORD}),
        )
        .await?;
    let session = login
        .session()
        .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
    let body = json!({"name": "ops", "purpose": "Operations"});
    let forged = |origin: Option<&str>| {
        let mut request = axum::http::Request::post("/api/channels")
            .header(header::HOST, "localhost")
            .header(header::COOKIE, format!("helm_session={session}"))
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        request.body(axum::body::Body::from(body.to_string()))
    };
    let evil = api.send(forged(Some("https://evil.example"))?).await?;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    assert_eq!(evil.body["code"], "bad_origin");
    let none = api.send(forged(None)?).await?;
    assert_eq!(none.status, StatusCode::FORBIDDEN);
    let own = api.send(forged(Some("http://localhost"))?).await?;
    assert_eq!(own.status, StatusCode::CREATED, "{own:?}");
    // Reading with a cookie needs no origin.
    let read = api
        .send(
            axum::http::Request::get("/api/channels")
                .header(header::HOST, "localhost")
                .header(header::COOKIE, format!("helm_session={session}"))
                .body(axum::body::Body::empty())?,
        )
        .await?;
    assert_eq!(read.status, StatusCode::OK);
    Ok(())
}

#[tokio::test]
async fn sign_in_attempts_are_rate_limited_per_account_and_per_address() -> anyhow::Result<()> {
    let api = Api::with_config(|c| {
        c.login_per_account.burst = 3;
        // Setup and every sign-in attempt count against the address.
        c.login_per_ip.burst = 7;
    })
    .await?;
    api.setup().await?;
    let attempt = |name: &'static str, password: &'static str| {
        api.post(
            "/api/auth/login",
            Auth::None,
            json!({"name": name, "password": password}),
        )
    };
    for _ in 0..3 {
        assert_eq!(
            attempt("ada", "guess guess guess").await?.status,
            StatusCode::UNAUTHORIZED
        );
    }
    // The account is locked even for the right password, for now.
    let limited = attempt("ada", PASSWORD).await?;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.body["code"], "rate_limited");
    assert!(limited.headers.contains_key(header::RETRY_AFTER));
    // Other accounts are not, until the address runs out.
    assert_eq!(
        attempt("bob", "guess guess guess").await?.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        attempt("eve", "guess guess guess").await?.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        attempt("zed", "guess guess guess").await?.status,
        StatusCode::TOO_MANY_REQUESTS
    );
    Ok(())
}

#[tokio::test]
async fn a_page_can_ask_who_is_signed_in_without_a_401() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let token = api.setup().await?;
    let nobody = api.get("/api/auth/session", Auth::None).await?;
    assert_eq!(nobody.status, StatusCode::OK);
    assert!(nobody.body["user"].is_null(), "{nobody:?}");
    let stale = api
        .get("/api/auth/session", Auth::Cookie("not-a-session"))
        .await?;
    assert_eq!(stale.status, StatusCode::OK);
    assert!(stale.body["user"].is_null());
    let ada = api.get("/api/auth/session", Auth::Bearer(&token)).await?;
    assert_eq!(ada.body["user"]["name"], "ada");
    Ok(())
}

#[tokio::test]
async fn a_token_lasts_one_to_3650_days_and_other_lifetimes_are_refused() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let token = api.setup().await?;
    let made = api
        .post(
            "/api/tokens",
            Auth::Bearer(&token),
            json!({"name": "month", "expires_in_days": 30}),
        )
        .await?;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let expires = made.body["token"]["expires"].as_str().unwrap_or_default();
    let expires: jiff::Timestamp = expires.parse()?;
    let days = (expires - jiff::Timestamp::now()).get_seconds() / 86_400;
    assert!((29..=30).contains(&days), "{days} days");
    // Out of range is refused, not quietly changed, and nothing is made.
    for days in [0_u64, 3651, 2_147_483_648] {
        let refused = api
            .post(
                "/api/tokens",
                Auth::Bearer(&token),
                json!({"name": "odd", "expires_in_days": days}),
            )
            .await?;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{days}");
        assert!(
            refused.body.to_string().contains("expires_in_days"),
            "{}",
            refused.body
        );
    }
    let listed = api.get("/api/tokens", Auth::Bearer(&token)).await?;
    assert_eq!(
        listed.body.as_array().map(Vec::len),
        Some(2),
        "{}",
        listed.body
    );
    Ok(())
}

#[tokio::test]
async fn nobody_joins_under_a_name_that_passes_for_someone_else() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let captain = api.get("/api/auth/me", Auth::Bearer(&ada)).await?;
    let captain_display = captain.body["user"]["display_name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (name, display) in [
        ("bob", "Skipper".to_string()),
        ("bob", "@skipper".to_string()),
        ("bob", "launch-agent".to_string()),
        ("bob", "The Captain".to_string()),
        ("bob", captain_display.to_uppercase()),
        ("bob", "ADA".to_string()),
    ] {
        let invite = api
            .post(
                "/api/invites",
                Auth::Bearer(&ada),
                json!({"role": "member"}),
            )
            .await?;
        let accepted = api
            .post(
                "/api/invites/accept",
                Auth::None,
                json!({"code": invite.body["code"], "name": name, "display_name": display,
                    "password": PASSWORD}),
            )
            .await?;
        assert_eq!(
            accepted.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{display}: {accepted:?}"
        );
        assert!(
            accepted.body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("would pass for"),
            "{accepted:?}"
        );
    }
    // A name of one's own is fine.
    let invite = api
        .post(
            "/api/invites",
            Auth::Bearer(&ada),
            json!({"role": "member"}),
        )
        .await?;
    let accepted = api
        .post(
            "/api/invites/accept",
            Auth::None,
            json!({"code": invite.body["code"], "name": "bob", "display_name": "Bob Builder",
                "password": PASSWORD}),
        )
        .await?;
    assert_eq!(accepted.status, StatusCode::CREATED, "{accepted:?}");
    Ok(())
}

#[tokio::test]
async fn a_token_made_with_a_token_lives_no_longer_than_it() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let short = api
        .post(
            "/api/tokens",
            Auth::Bearer(&ada),
            json!({"name": "one day", "expires_in_days": 1}),
        )
        .await?;
    assert_eq!(short.status, StatusCode::CREATED, "{short:?}");
    let short_secret = short.body["secret"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let short_expires = short.body["token"]["expires"].clone();
    let minted = api
        .post(
            "/api/tokens",
            Auth::Bearer(&short_secret),
            json!({"name": "forever?"}),
        )
        .await?;
    assert_eq!(minted.status, StatusCode::CREATED, "{minted:?}");
    let expires: jiff::Timestamp = minted.body["token"]["expires"]
        .as_str()
        .unwrap_or_default()
        .parse()?;
    let limit: jiff::Timestamp = short_expires.as_str().unwrap_or_default().parse()?;
    assert!(expires <= limit, "{expires} after {limit}");
    Ok(())
}

//! Bad input gets a clear 4xx with a JSON error, never a 5xx: malformed
//! JSON, wrong types, missing fields, oversized bodies, unknown and
//! malformed ids, unknown routes.

use axum::body::Body;
use axum::http::{Method, Request, header};

use serde_json::json;

use super::computer::multipart;
use super::kit::{Api, Auth};

#[tokio::test]
async fn bad_requests_are_clear_client_errors() -> anyhow::Result<()> {
    let api = Api::with_config(|c| c.max_body_bytes = 64 * 1024).await?;
    let token = api.setup().await?;
    let raw = |method: Method, path: &str, content_type: Option<&str>, body: Vec<u8>| {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        if let Some(ct) = content_type {
            request = request.header(header::CONTENT_TYPE, ct);
        }
        request.body(Body::from(body))
    };
    let json_ct = Some("application/json");
    let cases: Vec<(&str, Request<Body>, u16, &str)> = vec![
        ("malformed JSON", raw(Method::POST, "/api/channels", json_ct, b"{\"name\": ".to_vec())?, 400, "malformed_json"),
        ("not an object", raw(Method::POST, "/api/channels", json_ct, b"[1,2]".to_vec())?, 422, "invalid_body"),
        ("wrong type", raw(Method::POST, "/api/channels", json_ct, br#"{"name": 5, "purpose": "x"}"#.to_vec())?, 422, "invalid_body"),
        ("missing field", raw(Method::POST, "/api/channels", json_ct, br#"{"name": "a"}"#.to_vec())?, 422, "invalid_body"),
        ("unknown field", raw(Method::POST, "/api/channels", json_ct, br#"{"name": "a", "purpose": "b", "owner": 1}"#.to_vec())?, 422, "invalid_body"),
        ("no content type", raw(Method::POST, "/api/channels", None, br#"{"name":"a","purpose":"b"}"#.to_vec())?, 415, "unsupported_media_type"),
        ("oversized", raw(Method::POST, "/api/channels/main/messages", json_ct, format!("{{\"text\": \"{}\"}}", "x".repeat(100 * 1024)).into_bytes())?, 413, "payload_too_large"),
        ("invalid name", raw(Method::POST, "/api/channels", json_ct, br#"{"name": "a b/c", "purpose": "b"}"#.to_vec())?, 422, "invalid"),
        ("bad visibility", raw(Method::POST, "/api/channels", json_ct, br#"{"name": "ab", "purpose": "b", "visibility": "secret"}"#.to_vec())?, 422, "invalid"),
        ("empty message", raw(Method::POST, "/api/channels/main/messages", json_ct, br#"{"text": "   "}"#.to_vec())?, 422, "invalid"),
        ("unknown channel", raw(Method::GET, "/api/channels/nowhere", None, vec![])?, 404, "not_found"),
        ("bad channel in path", raw(Method::GET, "/api/channels/a%20b", None, vec![])?, 400, "bad_path"),
        ("unknown thread", raw(Method::GET, "/api/threads/424242", None, vec![])?, 404, "not_found"),
        ("zero thread id", raw(Method::GET, "/api/threads/0", None, vec![])?, 400, "bad_path"),
        ("negative thread id", raw(Method::GET, "/api/threads/-3", None, vec![])?, 400, "bad_path"),
        ("word as thread id", raw(Method::GET, "/api/threads/abc", None, vec![])?, 400, "bad_path"),
        ("huge thread id", raw(Method::GET, "/api/threads/99999999999999999999999", None, vec![])?, 400, "bad_path"),
        ("thread of another channel", raw(Method::POST, "/api/channels/main/messages", json_ct, br#"{"text": "hi", "thread_id": 999}"#.to_vec())?, 404, "not_found"),
        ("bad thread status", raw(Method::PUT, "/api/threads/1/status", json_ct, br#"{"status": "done"}"#.to_vec())?, 422, "invalid"),
        ("bad query", raw(Method::GET, "/api/channels?all=maybe", None, vec![])?, 400, "bad_query"),
        ("bad cursor", raw(Method::GET, "/api/channels/main/messages?after=-1", None, vec![])?, 400, "bad_query"),
        ("bad limit", raw(Method::GET, "/api/channels/main/threads?limit=lots", None, vec![])?, 400, "bad_query"),
        ("unknown route", raw(Method::GET, "/api/nothing-here", None, vec![])?, 404, "not_found"),
        ("unknown provider", raw(Method::PUT, "/api/model", json_ct, br#"{"provider": "ghost"}"#.to_vec())?, 404, "not_found"),
        ("bad provider URL", raw(Method::POST, "/api/providers", json_ct, br#"{"name": "p", "kind": "openai", "base_url": "ftp://x"}"#.to_vec())?, 422, "invalid"),
        ("bad key reference", raw(Method::POST, "/api/providers", json_ct, br#"{"name": "p", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "sk-live-123"}"#.to_vec())?, 422, "invalid"),
        ("a person named as an agent", raw(Method::POST, "/api/users", json_ct, br#"{"name": "ops-agent", "role": "member"}"#.to_vec())?, 422, "invalid"),
        ("a person named Skipper", raw(Method::POST, "/api/users", json_ct, br#"{"name": "skipper", "role": "member"}"#.to_vec())?, 422, "invalid"),
        ("bad member id", raw(Method::DELETE, "/api/channels/main/members/0", None, vec![])?, 400, "bad_path"),
        ("archive main", raw(Method::POST, "/api/channels/main/archive", json_ct, b"{}".to_vec())?, 409, "refused"),
        ("non-UTF-8 body", raw(Method::POST, "/api/channels", json_ct, vec![0xff, 0xfe, 0x00])?, 400, "malformed_json"),
    ];
    let mut failures = Vec::new();
    for (what, request, status, code) in cases {
        let reply = api.send(request).await?;
        if reply.status.as_u16() != status || reply.body["code"] != code {
            failures.push(format!("{what}: {} {}", reply.status, reply.body));
        }
        if reply.body["message"].as_str().is_none_or(str::is_empty) {
            failures.push(format!("{what}: no message: {}", reply.body));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

#[tokio::test]
async fn fuzzed_paths_and_bodies_never_fail_inside() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let token = api.setup().await?;
    let paths = [
        "/api/channels/%00",
        "/api/channels/%ff%fe",
        "/api/channels/..%2F..%2Fetc",
        "/api/channels/main/members/abc",
        "/api/threads/1.5",
        "/api/threads/%20",
        "/api/channels/main/messages?after=1&limit=0",
        "/api/channels/main/messages?limit=100000000000",
        "/api/events/log?after=18446744073709551615",
        "/api/channels/main/activity?thread=-1",
        "/api/channels/main/activity?thread=0",
    ];
    let bodies = [
        "",
        "null",
        "0",
        "\"x\"",
        "{}",
        "{\"text\": null}",
        "{\"text\": \"\\u0000\"}",
        "{\"name\": \"\", \"purpose\": \"\"}",
        "{\"provider\": 1}",
        "{\"name\": \"x\", \"purpose\": \"y\", \"visibility\": null, \"instructions\": null}",
    ];
    for path in paths {
        for method in [
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::DELETE,
            Method::PATCH,
        ] {
            for body in bodies {
                let request = Request::builder()
                    .method(method.clone())
                    .uri(path)
                    .header(header::HOST, "localhost")
                    .header(header::AUTHORIZATION, format!("Bearer {token}"))
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(body))?;
                let reply = api.send(request).await?;
                assert!(
                    reply.status.is_client_error() || reply.status.is_success(),
                    "{method} {path} {body}: {} {}",
                    reply.status,
                    reply.body
                );
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn file_routes_refuse_bad_input_with_clear_client_errors() -> anyhow::Result<()> {
    let api = Api::with_config(|c| c.max_upload_bytes = 1024).await?;
    let token = api.setup().await?;
    api.post(
        "/api/channels",
        Auth::Bearer(&token),
        json!({"name": "launch", "purpose": "The launch"}),
    )
    .await?;
    let request = |method: Method, path: &str, content_type: &str, body: Vec<u8>| {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
    };
    let json_ct = "application/json";
    let form = "multipart/form-data; boundary=B";
    let up = "/api/channels/launch/files/upload";
    let cases: Vec<(&str, Request<Body>, u16, &str)> = vec![
        (
            "traversal read",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=../../etc/passwd",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "absolute read",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=/etc/passwd",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal list",
            request(
                Method::GET,
                "/api/channels/launch/files?path=/workspace/../..",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal download",
            request(
                Method::GET,
                "/api/channels/launch/files/download?path=..%2F..%2Fhelm.db",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal write",
            request(
                Method::PUT,
                "/api/channels/launch/files",
                json_ct,
                br#"{"path": "../escape.txt", "content": "x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal move",
            request(
                Method::POST,
                "/api/channels/launch/files/move",
                json_ct,
                br#"{"from": "x", "to": "../../x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal delete",
            request(
                Method::DELETE,
                "/api/channels/launch/files?path=..&recursive=true",
                json_ct,
                vec![],
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal mkdir",
            request(
                Method::POST,
                "/api/channels/launch/files/mkdir",
                json_ct,
                br#"{"path": "/tmp/x"}"#.to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "traversal upload dir",
            request(
                Method::POST,
                &format!("{up}?dir=../..&name=a.txt"),
                "text/plain",
                b"x".to_vec(),
            )?,
            403,
            "forbidden",
        ),
        (
            "delete the workspace",
            request(
                Method::DELETE,
                "/api/channels/launch/files?path=/workspace&recursive=true",
                json_ct,
                vec![],
            )?,
            409,
            "refused",
        ),
        (
            "missing file",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=nothing.txt",
                json_ct,
                vec![],
            )?,
            404,
            "not_found",
        ),
        (
            "NUL in a path",
            request(
                Method::GET,
                "/api/channels/launch/files/stat?path=a%00b",
                json_ct,
                vec![],
            )?,
            422,
            "invalid",
        ),
        (
            "bad line range",
            request(
                Method::GET,
                "/api/channels/launch/files/read?path=x&start=5&end=2",
                json_ct,
                vec![],
            )?,
            422,
            "invalid",
        ),
        (
            "raw upload without a name",
            request(Method::POST, up, "text/plain", b"x".to_vec())?,
            422,
            "invalid",
        ),
        (
            "name with ..",
            request(
                Method::POST,
                &format!("{up}?name=.."),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name with a slash",
            request(
                Method::POST,
                &format!("{up}?name=a%2Fb"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name with a control character",
            request(
                Method::POST,
                &format!("{up}?name=a%0Ab"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "name not UTF-8",
            request(
                Method::POST,
                &format!("{up}?name=%ff%fe.txt"),
                "text/plain",
                b"x".to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "multipart name not UTF-8",
            request(
                Method::POST,
                up,
                form,
                multipart("B", b"\xff\xfe.txt", b"x"),
            )?,
            422,
            "invalid",
        ),
        (
            "multipart name with ..",
            request(Method::POST, up, form, multipart("B", b"../../etc/x", b"x"))?,
            422,
            "invalid",
        ),
        (
            "multipart without files",
            request(Method::POST, up, form, b"--B--\r\n".to_vec())?,
            422,
            "invalid",
        ),
        (
            "malformed multipart",
            request(Method::POST, up, form, b"garbage".to_vec())?,
            400,
            "bad_body",
        ),
        (
            "multipart without a boundary",
            request(Method::POST, up, "multipart/form-data", b"x".to_vec())?,
            400,
            "bad_body",
        ),
        (
            "oversized raw upload",
            request(
                Method::POST,
                &format!("{up}?name=big.bin"),
                "application/octet-stream",
                vec![7u8; 4096],
            )?,
            413,
            "payload_too_large",
        ),
        (
            "oversized multipart upload",
            request(
                Method::POST,
                up,
                form,
                multipart("B", b"big.bin", &[7u8; 4096]),
            )?,
            413,
            "payload_too_large",
        ),
        (
            "terminal too small",
            request(
                Method::POST,
                "/api/channels/launch/terminals",
                json_ct,
                br#"{"rows": 0}"#.to_vec(),
            )?,
            422,
            "invalid",
        ),
        (
            "unknown terminal",
            request(Method::DELETE, "/api/terminals/424242", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "word as terminal id",
            request(Method::DELETE, "/api/terminals/abc", json_ct, vec![])?,
            400,
            "bad_path",
        ),
        (
            "unknown terminal socket",
            request(Method::GET, "/api/terminals/424242/ws", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "unknown channel's files",
            request(Method::GET, "/api/channels/nowhere/files", json_ct, vec![])?,
            404,
            "not_found",
        ),
        (
            "artifacts of another channel's thread",
            request(
                Method::GET,
                "/api/channels/launch/artifacts?thread=999",
                json_ct,
                vec![],
            )?,
            404,
            "not_found",
        ),
    ];
    let mut failures = Vec::new();
    for (what, request, status, code) in cases {
        let reply = api.send(request).await?;
        if reply.status.as_u16() != status || reply.body["code"] != code {
            failures.push(format!("{what}: {} {}", reply.status, reply.body));
        }
        let text = reply.body.to_string();
        if text.contains(&api.t.data_dir().display().to_string()) {
            failures.push(format!("{what}: names a host path: {text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was written outside the workspace.
    assert!(!api.t.data_dir().join("channels/escape.txt").exists());
    Ok(())
}

/// A request declaring a body far over the limit is refused at once, on a
/// real connection, before any of the body is read (it never comes here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_body_over_the_limit_is_refused_before_it_is_sent() -> anyhow::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let served = super::kit::Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let mut stream = tokio::net::TcpStream::connect(served.addr).await?;
    let head = format!(
        "POST /api/channels/main/messages HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{{}}",
        served.addr
    );
    stream.write_all(head.as_bytes()).await?;
    let mut answer = vec![0u8; 4096];
    // A guard against hangs (the body timeout is longer), not a measure.
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), stream.read(&mut answer))
        .await??;
    let answer = String::from_utf8_lossy(&answer[..read]).to_string();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
    served.stop().await
}

/// A provider's URL is shown to everyone: one with a user name and
/// password is refused, and credentials in its query are not shown back.
#[tokio::test]
async fn a_providers_url_never_shows_a_credential() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let ada = api.setup().await?;
    let (_, bob) = api.join(&ada, "bob", "member").await?;
    let with_password = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "svc", "kind": "openai",
                   "base_url": "http://svcuser:URLPASSWORD@127.0.0.1:9/v1"}),
        )
        .await?;
    assert_eq!(with_password.status, 422, "{with_password:?}");
    assert!(
        with_password.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("API key or an extra header"),
        "{with_password:?}"
    );
    let with_query = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "azure", "kind": "openai",
                   "base_url": "http://127.0.0.1:9/v1?api-key=QUERYSECRET&api-version=1"}),
        )
        .await?;
    assert_eq!(with_query.status, 201, "{with_query:?}");
    // A stored key that was never given is refused, not kept to fail later.
    let ghost = api
        .post(
            "/api/providers",
            Auth::Bearer(&ada),
            json!({"name": "ghost", "kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                   "api_key_env": "stored:ghost"}),
        )
        .await?;
    assert_eq!(ghost.status, 422, "{ghost:?}");
    assert!(
        ghost.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("names no stored key"),
        "{ghost:?}"
    );
    let listed = api.get("/api/providers", Auth::Bearer(&bob)).await?;
    let text = listed.body.to_string();
    assert!(!text.contains("QUERYSECRET"), "{text}");
    assert!(text.contains("api-version=1"), "{text}");
    Ok(())
}

/// Uploads are read under their own limit, larger than the body limit: one
/// over the body limit declared up front is taken, not refused at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_over_the_body_limit_but_within_its_own_is_taken() -> anyhow::Result<()> {
    let served = super::kit::Served::start(Api::new().await?).await?;
    let token = served.api.setup().await?;
    let http = super::kit::client()?;
    http.post(served.url("/api/channels"))
        .bearer_auth(&token)
        .json(&json!({"name": "alpha", "purpose": "Work"}))
        .send()
        .await?;
    let limit = served.api.state.config.max_body_bytes;
    let bytes = vec![b'x'; limit + limit / 2];
    let body = multipart("XyZ", b"big.log", &bytes);
    let uploaded = http
        .post(served.url("/api/channels/alpha/files/upload"))
        .bearer_auth(&token)
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .header("content-length", body.len())
        .body(body)
        .send()
        .await?;
    assert!(
        uploaded.status().is_success(),
        "{:?}",
        uploaded.text().await
    );
    served.stop().await
}

//! Attacks a browser-facing server must withstand: a page on a domain
//! rebound to 127.0.0.1 (foreign `Host` and `Origin`, before and after
//! setup), setup without the one-time code, and a slowloris client holding
//! 1,100 half-sent requests while `/healthz` must still answer.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::kit::{Api, PASSWORD, Served};

/// Sends one raw HTTP/1.1 request and returns the status and the body.
async fn raw(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let json = text
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    let cookie = text
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: helm_session="))
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    Ok((status, json, cookie))
}

#[tokio::test]
async fn a_rebound_page_can_neither_set_up_nor_use_the_server() -> anyhow::Result<()> {
    let served = Served::start(Api::new().await?).await?;
    let port = served.addr.port();
    let code = served.api.state.setup_code.to_string();
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    let own_host = format!("127.0.0.1:{port}");
    let own_origin = format!("http://127.0.0.1:{port}");
    let setup = |code: Option<&str>| {
        let mut body = json!({"name": "mallory", "password": PASSWORD});
        if let Some(code) = code {
            body["setup_code"] = json!(code);
        }
        body
    };

    // Before setup: the rebound page, even with the right code (it cannot
    // know it), matching Host and Origin, is refused for its host.
    let (status, body, _) = raw(
        port,
        "POST",
        "/api/setup",
        &[("Host", evil_host.clone()), ("Origin", evil_origin.clone())],
        Some(&setup(Some(&code))),
    )
    .await?;
    assert_eq!((status, body["code"].as_str()), (421, Some("bad_host")));
    let (status, body, _) = raw(
        port,
        "GET",
        "/api/setup",
        &[("Host", evil_host.clone())],
        None,
    )
    .await?;
    assert_eq!((status, body["code"].as_str()), (421, Some("bad_host")));
    // Our host, another page's origin: refused for the origin.
    let (status, body, _) = raw(
        port,
        "POST",
        "/api/setup",
        &[("Host", own_host.clone()), ("Origin", evil_origin.clone())],
        Some(&setup(Some(&code))),
    )
    .await?;
    assert_eq!((status, body["code"].as_str()), (403, Some("bad_origin")));
    // Our own host and origin, but no code or a wrong one: its own code.
    for wrong in [None, Some("0000-0000-0000-0000-0000")] {
        let (status, body, _) = raw(
            port,
            "POST",
            "/api/setup",
            &[("Host", own_host.clone()), ("Origin", own_origin.clone())],
            Some(&setup(wrong)),
        )
        .await?;
        assert_eq!(
            (status, body["code"].as_str()),
            (403, Some("bad_setup_code")),
            "{body}"
        );
        assert!(!body["message"].as_str().unwrap_or_default().contains("--"));
    }
    assert!(served.api.t.helm.setup_needed().await?, "nothing happened");

    // The Captain, with the code.
    let (status, body, cookie) = raw(
        port,
        "POST",
        "/api/setup",
        &[("Host", own_host.clone()), ("Origin", own_origin.clone())],
        Some(&json!({"name": "ada", "password": PASSWORD, "setup_code": code})),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    assert!(!cookie.is_empty());

    // After setup: the rebound page rides the Captain's cookie (the
    // browser sends it for 127.0.0.1:port) to open a root shell on #main.
    let (status, body, _) = raw(
        port,
        "POST",
        "/api/channels/main/terminals",
        &[
            ("Host", evil_host.clone()),
            ("Origin", evil_origin.clone()),
            ("Cookie", format!("helm_session={cookie}")),
        ],
        Some(&json!({})),
    )
    .await?;
    assert_eq!((status, body["code"].as_str()), (421, Some("bad_host")));
    let (status, _, _) = raw(
        port,
        "GET",
        "/api/channels",
        &[
            ("Host", evil_host),
            ("Cookie", format!("helm_session={cookie}")),
        ],
        None,
    )
    .await?;
    assert_eq!(status, 421, "reads are refused for a foreign host too");
    // The same cookie from our own page works.
    let (status, body, _) = raw(
        port,
        "GET",
        "/api/channels",
        &[
            ("Host", own_host),
            ("Cookie", format!("helm_session={cookie}")),
        ],
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    served.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_client_does_not_starve_healthz() -> anyhow::Result<()> {
    helm_core::exec::raise_open_files_limit()?;
    let api = Api::with_config(|c| c.header_timeout_secs = 3).await?;
    let served = Served::start(api).await?;
    let port = served.addr.port();
    // 1,100 requests whose headers never end.
    let mut held = Vec::new();
    for _ in 0..1100 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream
            .write_all(
                format!("GET /api/setup HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ").as_bytes(),
            )
            .await?;
        held.push(stream);
    }
    let (status, body, _) = raw(
        port,
        "GET",
        "/healthz",
        &[("Host", format!("127.0.0.1:{port}"))],
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ok");
    // The server closes every one of them once the header timeout passes
    // (the 30 s are a guard against hangs, not a bound being measured).
    let mut closed = 0;
    for stream in &mut held {
        let mut buf = [0u8; 512];
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf)).await;
        if matches!(read, Ok(Ok(_)) | Ok(Err(_))) {
            closed += 1;
        }
    }
    assert_eq!(closed, held.len(), "half-sent requests are dropped");
    let (status, _, _) = raw(port, "GET", "/healthz", &[], None).await?;
    assert_eq!(status, 200);
    served.stop().await
}

#[tokio::test]
async fn names_with_control_characters_are_refused_by_every_write() -> anyhow::Result<()> {
    use super::kit::Auth;
    use axum::http::{Method, StatusCode};
    let api = Api::new().await?;
    let token = api.setup().await?;
    let created = api
        .post(
            "/api/channels",
            Auth::Bearer(&token),
            json!({"name": "launch", "purpose": "The launch."}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{created:?}");
    for name in ["notes\nevil.md", "dir\u{1b}]52;c;x\u{7}/a.md"] {
        let put = api
            .call(
                Method::PUT,
                "/api/channels/launch/files",
                Auth::Bearer(&token),
                Some(json!({"path": name, "content": "x"})),
            )
            .await?;
        assert_eq!(put.status, StatusCode::UNPROCESSABLE_ENTITY, "{put:?}");
        assert_eq!(put.body["code"], "invalid");
    }
    let ok = api
        .call(
            Method::PUT,
            "/api/channels/launch/files",
            Auth::Bearer(&token),
            Some(json!({"path": "notes/plain.md", "content": "x"})),
        )
        .await?;
    assert_eq!(ok.status, StatusCode::OK, "{ok:?}");
    Ok(())
}

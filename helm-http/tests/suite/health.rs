use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use helm_core::{Helm, HelmOptions, InitOptions};
use helm_http::{AppState, ServerConfig, router};
use tower::ServiceExt;

#[tokio::test]
async fn healthz_answers_through_the_router() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (helm, _) = Helm::init(HelmOptions::new(dir.path()), InitOptions::default()).await?;
    let response = router(AppState::new(helm, ServerConfig::default()))
        .oneshot(Request::get("/healthz").body(Body::empty())?)
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body = axum::body::to_bytes(response.into_body(), 1 << 16).await?;
    let v: serde_json::Value = serde_json::from_slice(&body)?;
    assert_eq!(v["status"], "ok");
    assert_eq!(v["workspace"], "Helm");
    Ok(())
}

/// The binary initialises a fresh data dir and serves /healthz on a real port.
#[test]
fn the_server_starts_on_a_fresh_data_dir() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let port = free_port()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_helm-http"))
        .args([
            "--data",
            &dir.path().join("data").to_string_lossy(),
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let result = (|| -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let response = loop {
            match get(port, "/healthz") {
                Ok(r) => break r,
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("\"status\":\"ok\""), "{response}");
        assert!(dir.path().join("data").join("helm.db").is_file());
        Ok(())
    })();
    let _ = child.kill();
    let _ = child.wait();
    if result.is_err()
        && let Some(mut err) = child.stderr.take()
    {
        let mut log = String::new();
        let _ = err.read_to_string(&mut log);
        eprintln!("server log:\n{log}");
    }
    result
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn get(port: u16, path: &str) -> anyhow::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )?;
    let mut reader = BufReader::new(stream);
    let mut out = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        out.push_str(&line);
    }
    Ok(out)
}

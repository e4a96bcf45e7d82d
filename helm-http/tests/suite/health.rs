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

#[tokio::test]
async fn status_says_how_recall_works() -> anyhow::Result<()> {
    let api = super::kit::Api::new().await?;
    let token = api.setup().await?;
    let status = api
        .get("/api/status", super::kit::Auth::Bearer(&token))
        .await?;
    assert_eq!(status.status, StatusCode::OK, "{status:?}");
    // The test workspace is given no embedder.
    assert_eq!(status.body["recall"]["mode"], "words", "{:?}", status.body);
    assert_eq!(status.body["recall"]["reason"], "no_embedder");
    assert_eq!(
        status.body["recall"]["detail"],
        "no embedder was configured"
    );
    Ok(())
}

/// Started where no embedding model is found: a warning that recall works
/// by words only; and with `HELM_EMBEDDER=required`, no start at all.
#[test]
fn the_server_warns_of_words_only_and_refuses_when_the_model_is_required() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let cwd = dir.path().join("elsewhere");
    std::fs::create_dir_all(&cwd)?;
    let data = dir.path().join("data");
    let start = |required: bool| -> anyhow::Result<std::process::Child> {
        let mut command = Command::new(env!("CARGO_BIN_EXE_helm-http"));
        command
            .current_dir(&cwd)
            .args([
                "--data",
                &data.to_string_lossy(),
                "--listen",
                &format!("127.0.0.1:{}", free_port()?),
            ])
            .env_remove("HELM_EMBED_MODEL")
            .env_remove("HELM_EMBEDDER")
            .env_remove("HELM_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if required {
            command.env("HELM_EMBEDDER", "required");
        }
        Ok(command.spawn()?)
    };

    let refused = start(true)?.wait_with_output()?;
    assert!(!refused.status.success());
    let log = String::from_utf8_lossy(&refused.stderr);
    assert!(
        log.contains("requires recall by meaning") && log.contains("fetch-embedding-model"),
        "{log}"
    );
    assert!(
        !data.join("helm.db").exists(),
        "nothing was written before refusing"
    );

    let mut child = start(false)?;
    let mut stderr = BufReader::new(
        child
            .stderr
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stderr"))?,
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut log = String::new();
    let found = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line)? == 0 || Instant::now() > deadline {
            break false;
        }
        log.push_str(&line);
        if line.contains("WARN") && line.contains("recall works by words only") {
            break true;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "{log}");
    Ok(())
}

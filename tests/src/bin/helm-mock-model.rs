//! `helm-mock-model`: the test kit's mock OpenAI server as a process, for
//! tests written in other languages (the web UI's browser suite and its
//! benchmark). It serves the real streaming wire format on 127.0.0.1 and
//! takes its script over a second, control port:
//!
//! - `POST /push` with a behaviour (or an array of them) queues answers for
//!   the next model requests;
//! - `POST /fallback` with a behaviour answers every request once the
//!   queue is empty;
//! - `GET /requests` lists the requests received (`[{path, body}]`);
//! - `GET /remaining` says how many queued answers are unused.
//!
//! A behaviour is JSON: `{"text": "...", "chunks": ["..", ".."],
//! "tool_calls": [{"name": "write_file", "arguments": {...}}],
//! "chunk_delay_ms": 10, "error": {"status": 500, "message": ".."},
//! "hang_after": 3}` (fields combine as the kit's `Behaviour` allows).
//!
//! Arguments, if any, are a script queued at start, one answer each, for
//! callers that need no control port (the onehelm pytest suite):
//! `text:<answer>` or `tool:<name>:<json arguments>`. With a script, every
//! request after it answers `done` unless a fallback is set.
//!
//! It prints one JSON line, `{"model_url": "...", "control_url": "..."}`,
//! then serves until its standard input closes or it is told to stop.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use helm_tests::mock::{Behaviour, MockOpenAi};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

/// One answer of a command-line script: `text:ANSWER` or `tool:NAME:JSON`.
fn scripted(spec: &str) -> anyhow::Result<Behaviour> {
    if let Some(text) = spec.strip_prefix("text:") {
        return Ok(Behaviour::text(text));
    }
    if let Some(rest) = spec.strip_prefix("tool:")
        && let Some((name, arguments)) = rest.split_once(':')
    {
        return Ok(Behaviour::tool_call(name, arguments));
    }
    anyhow::bail!("{spec:?} is not `text:ANSWER` or `tool:NAME:JSON`")
}

fn behaviour(spec: &Value) -> Result<Behaviour, String> {
    let mut b = if let Some(error) = spec.get("error") {
        let status = error["status"].as_u64().unwrap_or(500) as u16;
        Behaviour::error(status, error["message"].as_str().unwrap_or("mock error"))
    } else if let Some(calls) = spec.get("tool_calls").and_then(Value::as_array) {
        let calls: Vec<(String, String)> = calls
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default().to_string();
                let arguments = match &c["arguments"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (name, arguments)
            })
            .collect();
        let borrowed: Vec<(&str, &str)> = calls
            .iter()
            .map(|(n, a)| (n.as_str(), a.as_str()))
            .collect();
        let mut b = Behaviour::tool_calls(&borrowed);
        if let Some(text) = spec["text"].as_str() {
            b = b.with_text(text);
        }
        b
    } else if let Some(chunks) = spec.get("chunks").and_then(Value::as_array) {
        let chunks: Vec<&str> = chunks.iter().filter_map(Value::as_str).collect();
        Behaviour::text_chunks(&chunks)
    } else if let Some(text) = spec["text"].as_str() {
        Behaviour::text(text)
    } else {
        return Err(format!(
            "a behaviour needs text, chunks, tool_calls or error: {spec}"
        ));
    };
    if let Some(ms) = spec["chunk_delay_ms"].as_u64() {
        b = b.chunk_delay(Duration::from_millis(ms));
    }
    if let Some(ms) = spec["header_delay_ms"].as_u64() {
        b = b.delay_headers(Duration::from_millis(ms));
    }
    if let Some(frames) = spec["hang_after"].as_u64() {
        b = b.hang_after(frames as usize);
    }
    Ok(b)
}

/// The behaviours in a request body, or what is wrong with it.
fn parse(body: &Bytes) -> Result<Vec<Behaviour>, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let specs = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    specs.iter().map(behaviour).collect()
}

fn bad(message: String) -> Response {
    (StatusCode::UNPROCESSABLE_ENTITY, message).into_response()
}

async fn push(State(mock): State<Arc<MockOpenAi>>, body: Bytes) -> Response {
    match parse(&body) {
        Ok(list) => {
            let count = list.len();
            for b in list {
                mock.push(b);
            }
            axum::Json(json!({"queued": count, "remaining": mock.remaining()})).into_response()
        }
        Err(e) => bad(e),
    }
}

async fn fallback(State(mock): State<Arc<MockOpenAi>>, body: Bytes) -> Response {
    match parse(&body) {
        Ok(mut list) if list.len() == 1 => {
            if let Some(b) = list.pop() {
                mock.set_fallback(b);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(_) => bad("give one behaviour".to_string()),
        Err(e) => bad(e),
    }
}

async fn requests(State(mock): State<Arc<MockOpenAi>>) -> axum::Json<Value> {
    let list: Vec<Value> = mock
        .requests()
        .into_iter()
        .map(|r| json!({"method": r.method, "path": r.path, "body": r.body}))
        .collect();
    axum::Json(Value::Array(list))
}

async fn remaining(State(mock): State<Arc<MockOpenAi>>) -> axum::Json<Value> {
    axum::Json(json!({"remaining": mock.remaining()}))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let script = std::env::args()
        .skip(1)
        .map(|s| scripted(&s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mock = Arc::new(MockOpenAi::start().await?);
    if !script.is_empty() {
        for step in script {
            mock.push(step);
        }
        mock.set_fallback(Behaviour::text("done"));
    }
    let control = Router::new()
        .route("/push", post(push))
        .route("/fallback", post(fallback))
        .route("/requests", get(requests))
        .route("/remaining", get(remaining))
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let control_url = format!("http://{}", listener.local_addr()?);
    let line = json!({"model_url": mock.base_url(), "control_url": control_url});
    // The one line a parent process reads to find the ports.
    #[allow(clippy::print_stdout)]
    {
        println!("{line}");
    }
    let served = tokio::spawn(async move { axum::serve(listener, control).await });
    // Until the parent closes our standard input (or dies).
    let mut stdin = tokio::io::stdin();
    let mut buffer = [0u8; 64];
    loop {
        match stdin.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(_) => continue,
        }
    }
    served.abort();
    Ok(())
}

//! `mock-model`: the OpenAI-compatible mock model server as a process, for
//! tests written in other languages (the onehelm pytest suite points a
//! helm-http server at it).
//!
//! Each argument is one scripted response, taken in order by the requests
//! that arrive: `text:<answer>` or `tool:<name>:<json arguments>`. When the
//! script is used up, every further request answers `text:done`. It prints
//! its base URL (`http://127.0.0.1:PORT/v1`) on the first line of stdout and
//! serves until stdin closes.

use std::io::{BufRead, Write};

use helm_tests::mock::{Behaviour, MockOpenAi};

fn behaviour(spec: &str) -> anyhow::Result<Behaviour> {
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let script = std::env::args()
        .skip(1)
        .map(|s| behaviour(&s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mock = MockOpenAi::start().await?;
    for step in script {
        mock.push(step);
    }
    mock.set_fallback(Behaviour::text("done"));
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", mock.base_url())?;
    out.flush()?;
    drop(out);
    // Serve until whoever started us closes our stdin.
    tokio::task::spawn_blocking(|| {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            if line.is_err() {
                break;
            }
        }
    })
    .await?;
    Ok(())
}

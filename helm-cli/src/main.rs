//! `1helm`: operate a Helm workspace from the command line.
//!
//! Every command works through a backend (the data directory opened here, or
//! a running server with `--server`), and renders the result as text or,
//! with `--json`, as JSON. Errors go to stderr with an exit
//! code that says what kind of failure it was (see `exit.rs`).

mod backend;
mod cli;
mod commands;
mod exit;
mod output;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use cli::Cli;

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    // An empty HELM_SERVER (or HELM_TOKEN), as `export HELM_SERVER=` leaves
    // it, means none: work on the data directory.
    for value in [&mut cli.global.server, &mut cli.global.token] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            *value = None;
        }
    }
    init_logging();
    let json = cli.global.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                json,
                "internal",
                &format!("cannot start the runtime: {e}"),
                None,
                exit::INTERNAL,
            );
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => ExitCode::from(code as u8),
        // The reader went away (`1helm … | head`): what it wanted was
        // written, so the command ends quietly, as Unix tools do.
        Err(err) if closed_output(&err) => ExitCode::SUCCESS,
        Err(err) => {
            if let Some(remote) = err.downcast_ref::<helm_client::Error>() {
                fail(
                    json,
                    &remote.code,
                    &remote.message,
                    exit::hint_for_code(&remote.code, &remote.message),
                    exit::code_for(remote.kind),
                )
            } else if let Some(core) = err.downcast_ref::<helm_core::Error>() {
                fail(
                    json,
                    core.code(),
                    &core.to_string(),
                    exit::hint_for(core),
                    exit::code_for(core.kind()),
                )
            } else {
                fail(json, "internal", &format!("{err:#}"), None, exit::INTERNAL)
            }
        }
    }
}

/// Whether `err` is a write to an output whose reader has gone.
fn closed_output(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr, quiet unless `HELM_LOG` (or `RUST_LOG`) asks for more:
/// a command says what went wrong as its `error:` (or its JSON), so core's
/// warnings (a provider retried, say) would only be noise in its output.
/// Colour only on a terminal, never into a pipe or a file.
fn init_logging() {
    use std::io::IsTerminal;
    let filter = std::env::var("HELM_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "error".to_string());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}

fn fail(json: bool, code: &str, message: &str, hint: Option<String>, exit_code: i32) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let _ = if json {
        let mut error = serde_json::json!({ "code": code, "message": message });
        if let Some(hint) = &hint {
            error["hint"] = serde_json::json!(hint);
        }
        writeln!(err, "{}", serde_json::json!({ "error": error }))
    } else {
        match &hint {
            Some(hint) => writeln!(err, "error: {message}\nhint: {hint}"),
            None => writeln!(err, "error: {message}"),
        }
    };
    ExitCode::from(exit_code as u8)
}

#[cfg(test)]
mod tests {
    use super::closed_output;

    #[test]
    fn a_closed_output_is_told_from_other_failures() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(closed_output(&anyhow::Error::new(pipe).context("printing")));
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(!closed_output(&anyhow::Error::new(other)));
        assert!(!closed_output(&anyhow::anyhow!("Broken pipe")));
    }
}

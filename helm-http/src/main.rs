//! `helm-http`: serve a Helm workspace.
//!
//! On first start it initialises the data directory (workspace, Captain,
//! `#main`, Skipper), so one command takes a fresh machine to a running server.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use helm_core::{Helm, HelmOptions, InitOptions};
use helm_http::{AppState, router};

/// Serve a Helm workspace over HTTP.
#[derive(Debug, Parser)]
#[command(name = "helm-http", version)]
struct Args {
    /// The data directory (created on first start).
    #[arg(
        long,
        env = "HELM_DATA",
        default_value = "helm-data",
        value_name = "DIR"
    )]
    data: PathBuf,

    /// The address to listen on.
    #[arg(
        long,
        env = "HELM_LISTEN",
        default_value = "127.0.0.1:7400",
        value_name = "ADDR"
    )]
    listen: SocketAddr,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            std::env::var("HELM_LOG").unwrap_or_else(|_| "info".to_string()),
        ))
        .init();
    let args = Args::parse();
    let (helm, report) = Helm::init(HelmOptions::new(&args.data), InitOptions::default())
        .await
        .with_context(|| format!("opening {}", args.data.display()))?;
    if report.created {
        tracing::info!(data = %args.data.display(), "initialised a new workspace");
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    tracing::info!(addr = %args.listen, workspace = %helm.workspace().name, "serving");
    axum::serve(listener, router(AppState { helm }))
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}

//! Checking the audit log's hash chain over a log of many rows, through the
//! store port: `helm_core::audit::verify` reads the rows in pages and
//! recomputes every link.
//!
//! `cargo bench -p helm-tests --bench audit_verify` (`HELM_BENCH_AUDIT_ROWS`
//! sets the log's length, 20,000 by default). Prints the median and p99 of
//! 21 checks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use helm_core::store::{AuditRecord, AuditVerification, SqliteStore, Store};

const RUNS: usize = 21;

async fn check(store: &Arc<dyn Store>) -> anyhow::Result<AuditVerification> {
    Ok(helm_core::audit::verify(store.as_ref()).await?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let rows: usize = std::env::var("HELM_BENCH_AUDIT_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("helm.db")).await?);
    for i in 0..rows {
        store
            .audit(AuditRecord {
                channel_id: None,
                thread_id: None,
                agent: Some("skipper".into()),
                asker: Some("captain".into()),
                action: "bench.step".into(),
                input_summary: format!("step {i} of the benchmark's audit log"),
                outcome: "ok".into(),
            })
            .await?;
    }
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let verdict = check(&store).await?;
        times.push(started.elapsed());
        anyhow::ensure!(
            verdict.intact() && verdict.rows == rows as u64,
            "{verdict:?}"
        );
    }
    times.sort();
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    println!(
        "audit verify, {rows} rows: median {:.1} ms, p99 {:.1} ms ({RUNS} runs)",
        times[RUNS / 2].as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    Ok(())
}

//! `/metrics` in the Prometheus text format, written by hand: request counts
//! and latency by route and status, live WebSocket connections, turns by
//! state and the event log's position. Requests are counted by their route
//! *template* (`/api/channels/{channel}`), so the series stay few.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// Latency bucket bounds, in seconds.
const BUCKETS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

#[derive(Debug, Default, Clone)]
struct RouteStats {
    count: u64,
    seconds: f64,
    buckets: [u64; BUCKETS.len()],
}

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), RouteStats>>,
    ws_live: AtomicI64,
    ws_total: AtomicU64,
    ws_resyncs: AtomicU64,
}

impl Metrics {
    fn record(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let stats = requests
            .entry((method.to_string(), route.to_string(), status))
            .or_default();
        stats.count += 1;
        stats.seconds += seconds;
        for (i, bound) in BUCKETS.iter().enumerate() {
            if seconds <= *bound {
                stats.buckets[i] += 1;
            }
        }
    }

    /// A WebSocket client connected.
    pub fn ws_opened(&self) {
        self.ws_live.fetch_add(1, Ordering::Relaxed);
        self.ws_total.fetch_add(1, Ordering::Relaxed);
    }

    /// A WebSocket client went away.
    pub fn ws_closed(&self) {
        self.ws_live.fetch_sub(1, Ordering::Relaxed);
    }

    /// A slow WebSocket client was told to resync.
    pub fn ws_resynced(&self) {
        self.ws_resyncs.fetch_add(1, Ordering::Relaxed);
    }

    /// Live WebSocket connections.
    pub fn ws_live(&self) -> i64 {
        self.ws_live.load(Ordering::Relaxed)
    }

    fn render_requests(&self, out: &mut String) {
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let _ = writeln!(
            out,
            "# HELP helm_http_requests_total HTTP requests by method, route and status."
        );
        let _ = writeln!(out, "# TYPE helm_http_requests_total counter");
        for ((method, route, status), s) in &requests {
            let _ = writeln!(
                out,
                "helm_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {}",
                escape(route),
                s.count
            );
        }
        let _ = writeln!(
            out,
            "# HELP helm_http_request_duration_seconds HTTP request latency."
        );
        let _ = writeln!(out, "# TYPE helm_http_request_duration_seconds histogram");
        for ((method, route, status), s) in &requests {
            let labels = format!(
                "method=\"{method}\",route=\"{}\",status=\"{status}\"",
                escape(route)
            );
            for (i, bound) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "helm_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {}",
                    s.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "helm_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                s.count
            );
            let _ = writeln!(
                out,
                "helm_http_request_duration_seconds_sum{{{labels}}} {}",
                s.seconds
            );
            let _ = writeln!(
                out,
                "helm_http_request_duration_seconds_count{{{labels}}} {}",
                s.count
            );
        }
    }
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Times and counts every request, and logs it.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(request).await;
    let seconds = started.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    state.metrics.record(&method, &route, status, seconds);
    tracing::info!(
        method = %method,
        route = %route,
        status,
        ms = (seconds * 1000.0).round() as u64,
        "request"
    );
    response
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut out = String::new();
    state.metrics.render_requests(&mut out);
    let _ = writeln!(
        out,
        "# HELP helm_ws_connections Live event WebSocket connections."
    );
    let _ = writeln!(out, "# TYPE helm_ws_connections gauge");
    let _ = writeln!(out, "helm_ws_connections {}", state.metrics.ws_live());
    let _ = writeln!(
        out,
        "# HELP helm_ws_connections_total Event WebSocket connections accepted."
    );
    let _ = writeln!(out, "# TYPE helm_ws_connections_total counter");
    let _ = writeln!(
        out,
        "helm_ws_connections_total {}",
        state.metrics.ws_total.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        out,
        "# HELP helm_ws_resyncs_total Slow WebSocket clients told to resync."
    );
    let _ = writeln!(out, "# TYPE helm_ws_resyncs_total counter");
    let _ = writeln!(
        out,
        "helm_ws_resyncs_total {}",
        state.metrics.ws_resyncs.load(Ordering::Relaxed)
    );
    if let Ok(counts) = state.helm.store().turn_counts().await {
        let _ = writeln!(out, "# HELP helm_turns Agent turns by state.");
        let _ = writeln!(out, "# TYPE helm_turns gauge");
        for (turn_state, count) in counts {
            let _ = writeln!(out, "helm_turns{{state=\"{turn_state}\"}} {count}");
        }
    }
    if let Ok(stats) = state.helm.store().stats().await {
        let _ = writeln!(
            out,
            "# HELP helm_events_last_seq The newest event's sequence number."
        );
        let _ = writeln!(out, "# TYPE helm_events_last_seq gauge");
        let _ = writeln!(out, "helm_events_last_seq {}", stats.last_event_seq);
        let _ = writeln!(out, "# HELP helm_channels Channels by status.");
        let _ = writeln!(out, "# TYPE helm_channels gauge");
        let _ = writeln!(
            out,
            "helm_channels{{status=\"active\"}} {}",
            stats.channels_active
        );
        let _ = writeln!(
            out,
            "helm_channels{{status=\"archived\"}} {}",
            stats.channels_archived
        );
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        out,
    )
        .into_response()
}

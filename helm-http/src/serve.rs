//! The accept loop: HTTP/1.1 connections with the timeouts a server facing
//! the open network needs, so that clients who send slowly (or not at all)
//! cannot pile up until nobody else is answered:
//!
//! - headers must arrive within `header_timeout_secs` (hyper's own timer);
//! - a body must arrive within `body_timeout_secs` (a deadline on the body
//!   stream: reading it then fails and the request ends);
//! - a kept-alive connection with no request in flight closes after
//!   `idle_timeout_secs`.
//!
//! Upgraded connections (WebSockets) leave this loop's care once upgraded;
//! they end with the server's shutdown token.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use http_body::{Body as HttpBody, Frame};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long shutdown waits for requests in flight.
const DRAIN: Duration = Duration::from_secs(30);

/// The timeouts of one server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub header: Duration,
    pub body: Duration,
    pub idle: Duration,
}

/// Accepts connections on `listener` and serves `app` on each until
/// `shutdown` resolves; then stops accepting, lets requests in flight
/// finish (up to 30 s) and returns.
pub(crate) async fn run(
    listener: tokio::net::TcpListener,
    app: Router,
    timeouts: Timeouts,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let stop = CancellationToken::new();
    let live = Arc::new(AtomicUsize::new(0));
    let drained = Arc::new(Notify::new());
    let stopper = stop.clone();
    tokio::spawn(async move {
        shutdown.await;
        stopper.cancel();
    });
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of descriptors, or a connection reset before accept:
                // wait a moment rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        live.fetch_add(1, Ordering::AcqRel);
        let app = app.clone();
        let stop = stop.clone();
        let (live, drained) = (live.clone(), drained.clone());
        tokio::spawn(async move {
            serve_connection(stream, peer, app, timeouts, stop).await;
            if live.fetch_sub(1, Ordering::AcqRel) == 1 {
                drained.notify_waiters();
            }
        });
    }
    let deadline = tokio::time::Instant::now() + DRAIN;
    while live.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
        tokio::select! {
            _ = drained.notified() => {}
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
    Ok(())
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    timeouts: Timeouts,
    stop: CancellationToken,
) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let activity = Arc::new(Notify::new());
    let service = {
        let (in_flight, activity) = (in_flight.clone(), activity.clone());
        hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let app = app.clone();
            let guard = InFlight::new(in_flight.clone(), activity.clone());
            request.extensions_mut().insert(ConnectInfo(peer));
            let request = request.map(|body| Body::new(Deadline::new(body, timeouts.body)));
            async move {
                let response = tower::ServiceExt::oneshot(app, request).await;
                drop(guard);
                response
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(timeouts.header)
        .keep_alive(true);
    let connection = http
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    let mut stopping = false;
    loop {
        let idle = async {
            // Idle: no request in flight for the whole idle timeout.
            loop {
                let woken = activity.notified();
                if in_flight.load(Ordering::Acquire) == 0 {
                    tokio::select! {
                        _ = tokio::time::sleep(timeouts.idle) => {
                            if in_flight.load(Ordering::Acquire) == 0 {
                                return;
                            }
                        }
                        _ = woken => {}
                    }
                } else {
                    woken.await;
                }
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            _ = stop.cancelled(), if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
            _ = idle, if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Counts a request in flight on its connection for as long as it lives.
struct InFlight {
    count: Arc<AtomicUsize>,
    activity: Arc<Notify>,
}

impl InFlight {
    fn new(count: Arc<AtomicUsize>, activity: Arc<Notify>) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        activity.notify_waiters();
        InFlight { count, activity }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.activity.notify_waiters();
    }
}

/// A request body that must be complete by a deadline.
struct Deadline {
    inner: Incoming,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl Deadline {
    fn new(inner: Incoming, limit: Duration) -> Self {
        Deadline {
            inner,
            sleep: Box::pin(tokio::time::sleep(limit)),
            limit,
        }
    }
}

/// The error a body that came too slowly ends with.
#[derive(Debug)]
struct BodyTimeout(Duration);

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body did not arrive within {} s",
            self.0.as_secs()
        )
    }
}

impl std::error::Error for BodyTimeout {}

impl HttpBody for Deadline {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if self.inner.is_end_stream() {
            return Poll::Ready(None);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTimeout(self.limit)))));
        }
        Pin::new(&mut self.inner)
            .poll_frame(cx)
            .map_err(|e| Box::new(e) as Self::Error)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

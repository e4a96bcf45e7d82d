//! The test kit: a workspace served by the router (no port) or on a real
//! loopback port, and helpers to sign people in.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use helm_http::{AppState, ServerConfig, router};
use helm_tests::TestHelm;
use serde_json::{Value, json};
use tower::ServiceExt;

/// The password every test account uses.
pub const PASSWORD: &str = "correct horse battery staple";
/// The origin cookie requests claim (the router sees `Host: localhost`).
pub const ORIGIN: &str = "http://localhost";

/// How a request authenticates.
#[derive(Debug, Clone, Copy)]
pub enum Auth<'a> {
    /// No credentials.
    None,
    /// `Authorization: Bearer …`.
    Bearer(&'a str),
    /// The session cookie, from the workspace's own origin.
    Cookie(&'a str),
}

/// A response, with its body parsed as JSON (`Null` when it is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The session secret from `Set-Cookie`, if one was set.
    pub fn session(&self) -> Option<String> {
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(|c| c.strip_prefix("helm_session="))
            .and_then(|rest| rest.split(';').next())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}

/// A workspace behind the router.
pub struct Api {
    pub t: TestHelm,
    pub state: AppState,
    pub app: Router,
}

impl Api {
    pub async fn new() -> anyhow::Result<Self> {
        Self::with_config(|_| {}).await
    }

    pub async fn with_config(adjust: impl FnOnce(&mut ServerConfig)) -> anyhow::Result<Self> {
        Self::over(TestHelm::new().await?, adjust)
    }

    /// A server whose workspace keeps its state in a fresh Postgres database.
    pub async fn on_postgres() -> anyhow::Result<Self> {
        Self::over(TestHelm::on_postgres().await?, |_| {})
    }

    fn over(t: TestHelm, adjust: impl FnOnce(&mut ServerConfig)) -> anyhow::Result<Self> {
        // Router requests say `Host: localhost`: the server's loopback
        // origins on port 80 are http://localhost and its siblings.
        let mut config = ServerConfig {
            data: t.data_dir(),
            listen: SocketAddr::from(([127, 0, 0, 1], 80)),
            ..ServerConfig::default()
        };
        adjust(&mut config);
        let state = AppState::new(t.helm.clone(), config);
        let app = router(state.clone());
        Ok(Api { t, state, app })
    }

    /// Sends a request through the router.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        auth: Auth<'_>,
        body: Option<Value>,
    ) -> anyhow::Result<Reply> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost");
        match auth {
            Auth::None => {}
            Auth::Bearer(secret) => {
                request = request.header(header::AUTHORIZATION, format!("Bearer {secret}"));
            }
            Auth::Cookie(secret) => {
                request = request
                    .header(header::COOKIE, format!("helm_session={secret}"))
                    .header(header::ORIGIN, ORIGIN);
            }
        }
        let request = match body {
            Some(body) => request
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))?,
            None => request.body(Body::empty())?,
        };
        self.send(request).await
    }

    /// Sends a prepared request through the router.
    pub async fn send(&self, request: Request<Body>) -> anyhow::Result<Reply> {
        let response = self.app.clone().oneshot(request).await?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 64 << 20).await?;
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    pub async fn get(&self, path: &str, auth: Auth<'_>) -> anyhow::Result<Reply> {
        self.call(Method::GET, path, auth, None).await
    }

    pub async fn post(&self, path: &str, auth: Auth<'_>, body: Value) -> anyhow::Result<Reply> {
        self.call(Method::POST, path, auth, Some(body)).await
    }

    /// Completes setup as `captain`; returns an API token for the Captain.
    pub async fn setup(&self) -> anyhow::Result<String> {
        let reply = self
            .post(
                "/api/setup",
                Auth::None,
                json!({"name": "ada", "display_name": "Ada", "password": PASSWORD,
                       "setup_code": self.state.setup_code.as_str()}),
            )
            .await?;
        anyhow::ensure!(reply.status == StatusCode::CREATED, "setup: {reply:?}");
        let session = reply
            .session()
            .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
        self.token(&session).await
    }

    /// Makes an API token for whoever holds `session`.
    pub async fn token(&self, session: &str) -> anyhow::Result<String> {
        let reply = self
            .post(
                "/api/tokens",
                Auth::Cookie(session),
                json!({"name": "tests"}),
            )
            .await?;
        anyhow::ensure!(reply.status == StatusCode::CREATED, "token: {reply:?}");
        Ok(reply.body["secret"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("no secret"))?
            .to_string())
    }

    /// Invites `name` with `role` (as the holder of `token`), accepts, and
    /// returns (user id, API token).
    pub async fn join(&self, token: &str, name: &str, role: &str) -> anyhow::Result<(i64, String)> {
        let invite = self
            .post("/api/invites", Auth::Bearer(token), json!({"role": role}))
            .await?;
        anyhow::ensure!(invite.status == StatusCode::CREATED, "invite: {invite:?}");
        let accepted = self
            .post(
                "/api/invites/accept",
                Auth::None,
                json!({"code": invite.body["code"], "name": name, "password": PASSWORD}),
            )
            .await?;
        anyhow::ensure!(
            accepted.status == StatusCode::CREATED,
            "accept: {accepted:?}"
        );
        let id = accepted.body["user"]["id"].as_i64().unwrap_or_default();
        let session = accepted
            .session()
            .ok_or_else(|| anyhow::anyhow!("no cookie"))?;
        Ok((id, self.token(&session).await?))
    }
}

/// The event log's items of `kind` the holder of `token` may see.
pub async fn events_of(api: &Api, token: &str, kind: &str) -> anyhow::Result<Vec<Value>> {
    let page = api
        .get("/api/events/log?after=0&limit=1000", Auth::Bearer(token))
        .await?;
    anyhow::ensure!(page.status == StatusCode::OK, "{page:?}");
    Ok(page.body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect())
}

/// A workspace served on a real loopback port by `helm_http::serve`.
pub struct Served {
    pub api: Api,
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Served {
    pub async fn start(api: Api) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = api.state.clone();
        let task = tokio::spawn(helm_http::serve(listener, state, async move {
            let _ = stopped.await;
        }));
        Ok(Served {
            api,
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn ws_url(&self, path: &str) -> String {
        format!("ws://{}{path}", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await??;
        }
        Ok(())
    }
}

/// An HTTP client for real-port tests.
pub fn client() -> anyhow::Result<reqwest::Client> {
    // reqwest is built without a default TLS provider; tests speak plain
    // HTTP to loopback but the builder still wants one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder().build()?)
}

/// A WebSocket client connected to the event stream with a bearer token.
pub async fn events_ws(
    url: &str,
    token: &str,
) -> anyhow::Result<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request()?;
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse()?);
    let (socket, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(socket)
}

/// The next JSON text frame from a WebSocket (skipping pings), within 20 s.
pub async fn next_json<S>(socket: &mut S) -> anyhow::Result<Value>
where
    S: futures_util::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(20), socket.next())
            .await
            .map_err(|_| anyhow::anyhow!("no event within 20 s"))?
            .ok_or_else(|| anyhow::anyhow!("the stream ended"))??;
        match frame {
            Message::Text(text) => return Ok(serde_json::from_str(&text)?),
            Message::Close(frame) => anyhow::bail!("closed: {frame:?}"),
            _ => continue,
        }
    }
}

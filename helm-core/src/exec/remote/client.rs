//! The HTTP side of a remote computer: one Open Terminal server (its base
//! URL and key), the requests Helm sends it, what its failures mean, and
//! how agent paths (`/workspace/...`) become the server's paths and back.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tokio::sync::OnceCell;

use super::RemoteComputer;
use crate::error::{Error, Result};
use crate::exec::files::path::{ToolPath, confined};
use crate::provider::http::root_cause;

/// How long one request may take, beyond the wait it asks the server for.
const REQUEST_SLACK: Duration = Duration::from_secs(30);

/// One channel's Open Terminal server: where it is, its key, and the
/// directory on it that is the computer's `/workspace` (found once).
pub(crate) struct OtServer {
    http: reqwest::Client,
    /// Its URL (no trailing `/`), key, and the workspace under its home
    /// when channels share it.
    at: RemoteComputer,
    root: OnceCell<String>,
}

impl std::fmt::Debug for OtServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("OtServer")
            .field("base", &self.at.url)
            .finish_non_exhaustive()
    }
}

impl OtServer {
    /// The server of the computer `at` (its URL with or without a
    /// trailing slash).
    pub(super) fn new(http: reqwest::Client, at: &RemoteComputer) -> Self {
        let mut at = at.clone();
        at.url = at.url.trim_end_matches('/').to_string();
        OtServer {
            http,
            at,
            root: OnceCell::new(),
        }
    }

    /// Its base URL.
    pub(super) fn base(&self) -> &str {
        &self.at.url
    }

    /// Whether it is the server of the computer `at`.
    pub(super) fn is(&self, at: &RemoteComputer) -> bool {
        self.at.url == at.url.trim_end_matches('/')
            && self.at.key == at.key
            && self.at.subdir == at.subdir
    }

    /// Its key (for the terminals' WebSocket, which authenticates with
    /// its first message rather than a header).
    pub(super) fn key(&self) -> &str {
        &self.at.key
    }

    /// The WebSocket URL of `path` under the base.
    pub(super) fn ws_url(&self, path: &str) -> String {
        let base = if let Some(rest) = self.at.url.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = self.at.url.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            self.at.url.clone()
        };
        format!("{base}{path}")
    }

    /// A request to `path` (under the base), authenticated, which may take
    /// `wait` on the server plus some slack.
    pub(super) fn request(
        &self,
        method: Method,
        path: &str,
        wait: Duration,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.at.url))
            .bearer_auth(&self.at.key)
            .timeout(wait + REQUEST_SLACK)
    }

    /// Sends a request and reads its JSON answer, mapping refusals.
    pub(super) async fn json<T: DeserializeOwned>(
        &self,
        what: &'static str,
        request: reqwest::RequestBuilder,
    ) -> Result<T> {
        let response = self.send(what, request).await?;
        response
            .json()
            .await
            .map_err(|e| self.unreachable(format!("its answer to {what} was not understood: {e}")))
    }

    /// Sends a request and returns the response once it succeeded.
    pub(super) async fn send(
        &self,
        what: &'static str,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response> {
        let response = request
            .send()
            .await
            .map_err(|e| self.unreachable(format!("{what} failed: {}", root_cause(&e))))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        Err(self.refusal(what, status, &detail(&body)))
    }

    /// What a refused request amounts to, by its status.
    fn refusal(&self, what: &'static str, status: StatusCode, detail: &str) -> Error {
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => self.unreachable(format!(
                "it refused the computer key ({detail}); check the key the server was given"
            )),
            StatusCode::NOT_FOUND => Error::not_found("path", detail),
            StatusCode::CONFLICT => Error::Conflict(detail.to_string()),
            StatusCode::BAD_REQUEST | StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                Error::invalid(what, detail.to_string())
            }
            StatusCode::UNPROCESSABLE_ENTITY => Error::invalid(what, detail.to_string()),
            _ => self.unreachable(format!("{what} failed with {status}: {detail}")),
        }
    }

    /// The computer cannot be used right now, and why.
    pub(super) fn unreachable(&self, reason: String) -> Error {
        Error::ComputerUnreachable(format!("the computer at {}: {reason}", self.at.url))
    }

    /// The server's directory that is the computer's `/workspace`: its
    /// home, or the channel's directory under it (made the first time).
    pub(super) async fn root(&self) -> Result<&str> {
        self.root
            .get_or_try_init(|| async {
                #[derive(serde::Deserialize)]
                struct Cwd {
                    home: String,
                }
                let cwd: Cwd = self
                    .json(
                        "reading its home directory",
                        self.request(Method::GET, "/files/cwd", Duration::ZERO),
                    )
                    .await?;
                let home = cwd.home.trim_end_matches('/');
                let Some(subdir) = &self.at.subdir else {
                    return Ok::<_, Error>(home.to_string());
                };
                let root = server_path(home, subdir);
                self.send(
                    "making the channel's workspace",
                    self.request(Method::POST, "/files/mkdir", Duration::ZERO)
                        .json(&serde_json::json!({ "path": root })),
                )
                .await?;
                Ok(root)
            })
            .await
            .map(String::as_str)
    }
}

/// The message of an error answer: Open Terminal's `{"detail": ...}`,
/// Helm's `{"message": ...}`, or the text itself.
fn detail(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let text = parsed.as_ref().and_then(|v| {
        v.get("detail")
            .or_else(|| v.get("message"))
            .map(|d| match d {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
    });
    let text = text.unwrap_or_else(|| body.trim().to_string());
    if text.is_empty() {
        "no reason given".to_string()
    } else {
        text.chars().take(500).collect()
    }
}

/// The server's path for `rel`, a path under the workspace `root` (empty
/// for the workspace itself).
pub(super) fn server_path(root: &str, rel: &str) -> String {
    if rel.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{rel}")
    }
}

/// The server's path for an agent path (`/workspace/src`, `src`, `.`),
/// which must stay in the workspace: a path outside is refused before
/// anything is sent (the server confines too, but Helm never asks).
pub(super) fn resolve(root: &str, input: &str) -> Result<(ToolPath, String)> {
    let path = confined(input)?;
    let server = server_path(root, &path.rel.to_string_lossy());
    Ok((path, server))
}

/// The agent path for a path the server answered with.
pub(super) fn agent_path(home: &str, server: &str) -> String {
    let server = server.trim_end_matches('/');
    match server.strip_prefix(home) {
        Some("") => "/workspace".to_string(),
        Some(rest) if rest.starts_with('/') => format!("/workspace{rest}"),
        _ => server.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_paths_stay_in_the_workspace() -> Result<()> {
        let server = |p: &str| resolve("/srv/w", p).map(|(_, s)| s);
        assert_eq!(server("/workspace")?, "/srv/w");
        assert_eq!(server("/workspace/a/./b")?, "/srv/w/a/b");
        assert_eq!(server("a/../b")?, "/srv/w/b");
        for escape in ["/etc/passwd", "../x", "/workspace/../etc", "/srv/w/a"] {
            assert!(
                matches!(server(escape), Err(Error::Forbidden(_))),
                "{escape}"
            );
        }
        Ok(())
    }

    #[test]
    fn server_paths_map_back() {
        assert_eq!(server_path("/srv/w", ""), "/srv/w");
        assert_eq!(server_path("/srv/w", "a/b"), "/srv/w/a/b");
        assert_eq!(agent_path("/srv/w", "/srv/w/a/b"), "/workspace/a/b");
        assert_eq!(agent_path("/srv/w", "/srv/w"), "/workspace");
        assert_eq!(agent_path("/srv/w", "/srv/wx"), "/srv/wx");
    }

    #[test]
    fn error_details_are_read_from_either_shape() {
        assert_eq!(detail(r#"{"detail":"File not found"}"#), "File not found");
        assert_eq!(detail(r#"{"code":"x","message":"nope"}"#), "nope");
        assert_eq!(detail(""), "no reason given");
    }
}

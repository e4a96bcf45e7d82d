//! The remote backend: a running `helm-http` server, over its REST API and
//! its event stream, authenticated with an API token.

use std::sync::Arc;

use async_trait::async_trait;
use helm_core::ErrorKind;
use helm_core::exec::{FileBytes, FileEntry, FileText};
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    ChannelRef, MemoryId, MemoryItem, Message, ModelChoice, ResolvedModel, Role, Thread, ThreadId,
    ThreadStatus, ToolAction, Turn, User,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelRecord, MemoryFilter};
use helm_core::{MemoryNote, NewChannel, PostedMessage};
use reqwest::{Method, StatusCode};
use rustls_platform_verifier::BuilderVerifierExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::stream;
use super::{Backend, ChannelDetail, EventSource, Imported, Progress, StatusView, ThreadView};

/// An error the server answered with (or a server that could not be
/// reached), carrying the server's stable code.
#[derive(Debug)]
pub struct RemoteError {
    /// The class, for the exit code.
    pub kind: ErrorKind,
    /// The server's code, such as `not_found`.
    pub code: String,
    /// The server's message.
    pub message: String,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

impl RemoteError {
    fn unreachable(url: &str, e: &reqwest::Error) -> Self {
        RemoteError {
            kind: ErrorKind::Unavailable,
            code: "unreachable".into(),
            message: format!("cannot reach the server at {url}: {e}"),
        }
    }

    /// What an HTTP error response means.
    fn from_response(status: StatusCode, body: &str) -> Self {
        #[derive(Deserialize)]
        struct Body {
            code: String,
            message: String,
        }
        let (code, message) = match serde_json::from_str::<Body>(body) {
            Ok(b) => (b.code, b.message),
            Err(_) => (
                "http".to_string(),
                format!("the server answered {status}: {}", body.trim()),
            ),
        };
        let kind = match status.as_u16() {
            400 | 413 | 415 | 422 => ErrorKind::Invalid,
            401 => ErrorKind::Unauthenticated,
            403 => ErrorKind::Forbidden,
            404 => ErrorKind::NotFound,
            409 if code == "conflict" => ErrorKind::Conflict,
            409 => ErrorKind::Refused,
            429 | 503 => ErrorKind::Unavailable,
            502 => ErrorKind::Upstream,
            _ => ErrorKind::Internal,
        };
        RemoteError {
            kind,
            code,
            message,
        }
    }
}

/// A server, reached with an API token.
pub struct Remote {
    base: String,
    token: String,
    http: reqwest::Client,
}

/// Builds the client. TLS is rustls with the `ring` provider passed in
/// explicitly, verified against the OS certificate store.
fn client() -> anyhow::Result<reqwest::Client> {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_platform_verifier()?
    .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("1helm/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

/// A channel as it goes into a URL path (`#launch` → `launch`).
fn channel_path(raw: &str) -> anyhow::Result<String> {
    Ok(match raw.parse::<ChannelRef>()? {
        ChannelRef::Id(id) => id.to_string(),
        ChannelRef::Name(name) => name.as_str().to_string(),
    })
}

impl Remote {
    /// A server at `url`, acting as the owner of `token`.
    pub fn new(url: &str, token: Option<&str>) -> anyhow::Result<Self> {
        let base = url.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(helm_core::Error::invalid(
                "server URL",
                format!("{url:?} is not an http(s) URL such as http://127.0.0.1:7400"),
            )
            .into());
        }
        let token = token
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| RemoteError {
                kind: ErrorKind::Unauthenticated,
                code: "unauthenticated".into(),
                message: "--server needs an API token: pass --token TOKEN or set HELM_TOKEN \
                          (make one with POST /api/tokens after signing in)"
                    .into(),
            })?;
        Ok(Remote {
            base,
            token: token.to_string(),
            http: client()?,
        })
    }

    /// `path` on the server, with `query` encoded as a form (`a=b&c=d`).
    fn url(&self, path: &str, query: &[(&str, &str)]) -> anyhow::Result<reqwest::Url> {
        let mut url = reqwest::Url::parse(&format!("{}{path}", self.base)).map_err(|e| {
            helm_core::Error::invalid("server URL", format!("{}{path}: {e}", self.base))
        })?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// Sends a request with the token; an error response becomes a
    /// [`RemoteError`] with the server's code and message.
    async fn send(&self, request: reqwest::RequestBuilder) -> anyhow::Result<reqwest::Response> {
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| RemoteError::unreachable(&self.base, &e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response
                .text()
                .await
                .map_err(|e| RemoteError::unreachable(&self.base, &e))?;
            return Err(RemoteError::from_response(status, &text).into());
        }
        Ok(response)
    }

    /// A successful response's JSON body (an empty one reads as `null`).
    async fn read_json<T: DeserializeOwned>(
        &self,
        response: reqwest::Response,
    ) -> anyhow::Result<T> {
        let text = response
            .text()
            .await
            .map_err(|e| RemoteError::unreachable(&self.base, &e))?;
        let text = if text.is_empty() { "null" } else { &text };
        Ok(serde_json::from_str(text)?)
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<T> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = self.send(request).await?;
        self.read_json(response).await
    }

    /// `GET path?query`, answered with JSON.
    async fn get_query<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> anyhow::Result<T> {
        let response = self.send(self.http.get(self.url(path, query)?)).await?;
        self.read_json(response).await
    }

    /// `GET path?query`, answered with raw bytes.
    async fn get_bytes(&self, path: &str, query: &[(&str, &str)]) -> anyhow::Result<Vec<u8>> {
        let response = self.send(self.http.get(self.url(path, query)?)).await?;
        Ok(response
            .bytes()
            .await
            .map_err(|e| RemoteError::unreachable(&self.base, &e))?
            .to_vec())
    }

    /// `POST path?query` with a raw body, answered with JSON.
    async fn post_raw<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        content_type: &'static str,
        body: Vec<u8>,
    ) -> anyhow::Result<T> {
        let request = self
            .http
            .post(self.url(path, query)?)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body);
        let response = self.send(request).await?;
        self.read_json(response).await
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        self.call(Method::GET, path, None).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: Value) -> anyhow::Result<T> {
        self.call(Method::POST, path, Some(body)).await
    }
}

#[derive(Deserialize)]
struct Page {
    items: Vec<Message>,
    next_after: Option<i64>,
}

#[derive(Deserialize)]
struct ThreadDetail {
    thread: Thread,
    turns: Vec<Turn>,
}

#[derive(Deserialize)]
struct Policy {
    resolved: Option<ResolvedModel>,
    #[serde(default)]
    check: Option<helm_core::ModelCheck>,
}

/// One file of `POST …/files/upload`'s answer (its artifact is not needed).
#[derive(Deserialize)]
struct Uploaded {
    file: FileEntry,
}

/// Where an upload of `path` goes: `?dir=` and `?name=` (the upload route
/// names one path component and writes `{dir}/{name}`).
fn upload_target(path: &str) -> (String, String) {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some((dir, name)) => (
            if dir.is_empty() { "/" } else { dir }.to_string(),
            name.to_string(),
        ),
        None => (helm_core::exec::AGENT_ROOT.to_string(), path.to_string()),
    }
}

#[async_trait]
impl Backend for Remote {
    async fn approvals(
        &self,
        pending_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Approval>> {
        self.get(&format!("/api/approvals?all={}", !pending_only))
            .await
    }

    async fn decide(
        &self,
        id: i64,
        approve: bool,
        note: Option<String>,
    ) -> anyhow::Result<helm_core::model::Approval> {
        let verb = if approve { "approve" } else { "deny" };
        self.post(
            &format!("/api/approvals/{id}/{verb}"),
            serde_json::json!({ "note": note }),
        )
        .await
    }

    async fn set_approval_rule(
        &self,
        action: helm_core::model::ApprovalAction,
        required: bool,
        channel: Option<&str>,
    ) -> anyhow::Result<()> {
        let body =
            serde_json::json!({ "action": action, "required": required, "channel": channel });
        let _: serde_json::Value = self
            .call(Method::PUT, "/api/approval-policy", Some(body))
            .await?;
        Ok(())
    }

    async fn escalations(
        &self,
        open_only: bool,
    ) -> anyhow::Result<Vec<helm_core::model::Escalation>> {
        self.get(&format!("/api/escalations?all={}", !open_only))
            .await
    }

    async fn audit(
        &self,
        channel: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<helm_core::model::AuditEntry>> {
        let mut path = format!("/api/audit?limit={}", limit.clamp(1, 1000));
        if let Some(c) = channel {
            path.push_str(&format!("&channel={}", c.trim_start_matches('#')));
        }
        self.get(&path).await
    }

    async fn verify_audit(&self) -> anyhow::Result<helm_core::store::AuditVerification> {
        self.get("/api/audit/verify").await
    }

    async fn memory(&self, channel: &str, filter: MemoryFilter) -> anyhow::Result<Vec<MemoryItem>> {
        let kind = filter.kind.map(|k| k.as_str());
        let thread = filter.thread.map(|t| t.to_string());
        let all = filter.include_inactive.to_string();
        let limit = filter.limit.to_string();
        let mut query = vec![("all", all.as_str())];
        if let Some(kind) = kind {
            query.push(("kind", kind));
        }
        if let Some(thread) = &thread {
            query.push(("thread", thread));
        }
        if filter.limit > 0 {
            query.push(("limit", &limit));
        }
        self.get_query(
            &format!("/api/channels/{}/memory", channel_path(channel)?),
            &query,
        )
        .await
    }

    async fn remember(&self, channel: &str, note: MemoryNote) -> anyhow::Result<MemoryItem> {
        Remote::post(
            self,
            &format!("/api/channels/{}/memory", channel_path(channel)?),
            json!({
                "kind": note.kind.as_str(),
                "content": note.content,
                "thread_id": note.thread.map(|t| t.0),
                "scope": note.scope.as_str(),
            }),
        )
        .await
    }

    async fn edit_memory(&self, id: MemoryId, content: &str) -> anyhow::Result<MemoryItem> {
        self.call(
            Method::PATCH,
            &format!("/api/memory/{id}"),
            Some(json!({ "content": content })),
        )
        .await
    }

    async fn forget_memory(&self, id: MemoryId) -> anyhow::Result<MemoryItem> {
        Remote::post(self, &format!("/api/memory/{id}/forget"), json!({})).await
    }

    async fn pin_memory(&self, id: MemoryId, pinned: bool) -> anyhow::Result<MemoryItem> {
        let verb = if pinned { "pin" } else { "unpin" };
        Remote::post(self, &format!("/api/memory/{id}/{verb}"), json!({})).await
    }

    async fn recall(&self, channel: &str, query: RecallQuery) -> anyhow::Result<Vec<RecallHit>> {
        let limit = query.limit.to_string();
        let superseded = query.include_superseded.to_string();
        self.get_query(
            &format!("/api/channels/{}/recall", channel_path(channel)?),
            &[
                ("q", query.text.as_str()),
                ("limit", &limit),
                ("superseded", &superseded),
            ],
        )
        .await
    }

    async fn import_history(
        &self,
        channel: &str,
        mut history: Box<dyn std::io::BufRead + Send>,
        _embed: bool,
        _progress: Progress<'_>,
    ) -> anyhow::Result<Imported> {
        let path = format!("/api/channels/{}/import", channel_path(channel)?);
        let mut body = Vec::new();
        std::io::Read::read_to_end(&mut history, &mut body)
            .map_err(|e| helm_core::Error::io("reading the history", "the history file", e))?;
        let started = std::time::Instant::now();
        let report: ImportReport = self
            .post_raw(&path, &[], "application/x-ndjson", body)
            .await?;
        Ok(Imported {
            report,
            seconds: started.elapsed().as_secs_f64(),
            // The server embeds imported items in the background.
            embedded: 0,
            indexed_by_server: true,
        })
    }

    async fn list_files(&self, channel: &str, path: &str) -> anyhow::Result<Vec<FileEntry>> {
        self.get_query(
            &format!("/api/channels/{}/files", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    async fn stat_file(&self, channel: &str, path: &str) -> anyhow::Result<FileEntry> {
        self.get_query(
            &format!("/api/channels/{}/files/stat", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    async fn read_text(&self, channel: &str, path: &str) -> anyhow::Result<FileText> {
        self.get_query(
            &format!("/api/channels/{}/files/read", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    async fn read_bytes(
        &self,
        channel: &str,
        path: &str,
        limit: usize,
    ) -> anyhow::Result<FileBytes> {
        let mut bytes = self
            .get_bytes(
                &format!("/api/channels/{}/files/download", channel_path(channel)?),
                &[("path", path)],
            )
            .await?;
        let size = bytes.len() as u64;
        let truncated = bytes.len() > limit;
        bytes.truncate(limit);
        Ok(FileBytes {
            path: path.to_string(),
            bytes,
            size,
            truncated,
        })
    }

    async fn put_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
    ) -> anyhow::Result<FileEntry> {
        let (dir, name) = upload_target(path);
        let uploaded: Vec<Uploaded> = self
            .post_raw(
                &format!("/api/channels/{}/files/upload", channel_path(channel)?),
                &[("dir", &dir), ("name", &name)],
                "application/octet-stream",
                bytes,
            )
            .await?;
        uploaded.into_iter().next().map(|u| u.file).ok_or_else(|| {
            helm_core::Error::Internal("the server answered an upload with no file".into()).into()
        })
    }

    async fn status(&self) -> anyhow::Result<StatusView> {
        let mut status: StatusView = self.get("/api/status").await?;
        status.data_dir = Some(match status.data_dir {
            Some(dir) => format!("{dir} (served by {})", self.base),
            None => self.base.clone(),
        });
        Ok(status)
    }

    async fn create_channel(&self, request: NewChannel) -> anyhow::Result<ChannelDetail> {
        let record: ChannelRecord = self
            .post(
                "/api/channels",
                json!({
                    "name": request.name,
                    "purpose": request.purpose,
                    "visibility": request.visibility.as_str(),
                    "instructions": request.instructions,
                }),
            )
            .await?;
        // The detail adds the workspace directory (for the Captain and admins).
        self.channel(&record.channel.id.to_string()).await
    }

    async fn channels(&self, include_archived: bool) -> anyhow::Result<Vec<ChannelRecord>> {
        self.get(&format!("/api/channels?all={include_archived}"))
            .await
    }

    async fn channel(&self, channel: &str) -> anyhow::Result<ChannelDetail> {
        self.get(&format!("/api/channels/{}", channel_path(channel)?))
            .await
    }

    async fn archive(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        self.post(
            &format!("/api/channels/{}/archive", channel_path(channel)?),
            json!({}),
        )
        .await
    }

    async fn restore(&self, channel: &str) -> anyhow::Result<ChannelRecord> {
        self.post(
            &format!("/api/channels/{}/restore", channel_path(channel)?),
            json!({}),
        )
        .await
    }

    async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> anyhow::Result<(Option<ResolvedModel>, Option<helm_core::ModelCheck>)> {
        let body = match choice {
            Some(c) => json!({"provider": c.provider, "model": c.model}),
            None => json!({"provider": null}),
        };
        let policy: Policy = self
            .call(
                Method::PUT,
                &format!("/api/channels/{}/model", channel_path(channel)?),
                Some(body),
            )
            .await?;
        Ok((policy.resolved, policy.check))
    }

    async fn rename_channel(&self, channel: &str, name: &str) -> anyhow::Result<ChannelRecord> {
        self.call(
            Method::PATCH,
            &format!("/api/channels/{}", channel_path(channel)?),
            Some(json!({"name": name})),
        )
        .await
    }

    async fn delete_channel(&self, channel: &str, confirm: &str) -> anyhow::Result<()> {
        let confirm: String = confirm
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || "-_".contains(*c))
            .collect();
        let _: Value = self
            .call(
                Method::DELETE,
                &format!("/api/channels/{}?confirm={confirm}", channel_path(channel)?),
                None,
            )
            .await?;
        Ok(())
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> anyhow::Result<PostedMessage> {
        Remote::post(
            self,
            &format!("/api/channels/{}/messages", channel_path(channel)?),
            json!({"text": text, "thread_id": thread.map(|t| t.0)}),
        )
        .await
    }

    async fn threads(&self, channel: &str, limit: usize) -> anyhow::Result<Vec<Thread>> {
        self.get(&format!(
            "/api/channels/{}/threads?limit={}",
            channel_path(channel)?,
            limit.clamp(1, 500)
        ))
        .await
    }

    async fn thread(&self, id: ThreadId) -> anyhow::Result<ThreadView> {
        let detail: ThreadDetail = self.get(&format!("/api/threads/{id}")).await?;
        let mut messages = Vec::new();
        let mut after = 0;
        loop {
            let page: Page = self
                .get(&format!(
                    "/api/threads/{id}/messages?after={after}&limit=500"
                ))
                .await?;
            messages.extend(page.items);
            match page.next_after {
                Some(next) => after = next,
                None => break,
            }
        }
        Ok(ThreadView {
            thread: detail.thread,
            messages,
            turns: detail.turns,
        })
    }

    async fn set_thread_status(
        &self,
        id: ThreadId,
        status: ThreadStatus,
    ) -> anyhow::Result<Thread> {
        self.call(
            Method::PUT,
            &format!("/api/threads/{id}/status"),
            Some(json!({"status": status.as_str()})),
        )
        .await
    }

    async fn stop_thread(&self, id: ThreadId) -> anyhow::Result<()> {
        let _: Value = Remote::post(self, &format!("/api/threads/{id}/stop"), json!({})).await?;
        Ok(())
    }

    async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> anyhow::Result<(ChannelRecord, Vec<ToolAction>)> {
        let detail = self.channel(channel).await?;
        let mut path = format!(
            "/api/channels/{}/activity?limit={}",
            detail.record.channel.id,
            limit.clamp(1, 500)
        );
        if let Some(thread) = thread {
            path.push_str(&format!("&thread={thread}"));
        }
        Ok((detail.record, self.get(&path).await?))
    }

    async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
    ) -> anyhow::Result<ProviderConfig> {
        let api_key_env = config.api_key.as_ref().map(|k| match k {
            helm_core::provider::ApiKeyRef::Env(var) => var.clone(),
        });
        Remote::post(
            self,
            "/api/providers",
            json!({
                "name": config.name,
                "kind": config.kind.as_str(),
                "base_url": config.base_url,
                "api_key_env": api_key_env,
                "default_model": config.default_model,
                "extra_headers": config.extra_headers,
                "make_default": make_default,
            }),
        )
        .await
    }

    async fn providers(&self) -> anyhow::Result<Vec<ProviderConfig>> {
        self.get("/api/providers").await
    }

    async fn add_user(
        &self,
        name: &str,
        role: Role,
        password: Option<String>,
    ) -> anyhow::Result<User> {
        Remote::post(
            self,
            "/api/users",
            json!({"name": name, "role": role.as_str(), "password": password}),
        )
        .await
    }

    async fn users(&self) -> anyhow::Result<Vec<User>> {
        self.get("/api/users").await
    }

    async fn drive_turns(&self) -> anyhow::Result<()> {
        // The server drives every turn.
        Ok(())
    }

    async fn stop_driving(&self) {}

    async fn events(&self) -> anyhow::Result<Box<dyn EventSource>> {
        stream::open(&self.base, &self.token, self.http.clone()).await
    }
}

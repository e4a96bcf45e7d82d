//! The endpoints, one method each, answering helm-core's types.

use helm_core::exec::{CommandResult, FileBytes, FileEntry, FileText, RUN_AND_WAIT_MAX_TIMEOUT};
use helm_core::memory::import::ImportReport;
use helm_core::memory::recall::{RecallHit, RecallQuery};
use helm_core::model::{
    MemoryId, MemoryItem, Message, MessageId, ModelChoice, ResolvedModel, Role, Thread, ThreadId,
    ThreadStatus, ToolAction, ToolActionId, Turn, User, UserId,
};
use helm_core::provider::ProviderConfig;
use helm_core::store::{ChannelRecord, MemoryFilter, ThreadCursor};
use helm_core::{MemoryNote, NewChannel, PersonChange, PostedMessage, ThreadFilter, ThreadList};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{ChannelDetail, Client, Result, StatusView, ThreadView, channel_path};

/// The most threads the server lists at once.
const MAX_PAGE: usize = 500;

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

impl Client {
    /// Approval requests (pending ones only, if asked).
    pub async fn approvals(&self, pending_only: bool) -> Result<Vec<helm_core::model::Approval>> {
        self.get(&format!("/api/approvals?all={}", !pending_only))
            .await
    }

    /// Approves or denies a pending request.
    pub async fn decide(
        &self,
        id: i64,
        approve: bool,
        note: Option<String>,
    ) -> Result<helm_core::model::Approval> {
        let verb = if approve { "approve" } else { "deny" };
        self.post(
            &format!("/api/approvals/{id}/{verb}"),
            serde_json::json!({ "note": note }),
        )
        .await
    }

    /// Sets whether an action needs approval (workspace-wide, or in one channel).
    pub async fn set_approval_rule(
        &self,
        action: helm_core::model::ApprovalAction,
        required: bool,
        channel: Option<&str>,
    ) -> Result<()> {
        let body =
            serde_json::json!({ "action": action, "required": required, "channel": channel });
        let _: serde_json::Value = self
            .call(reqwest::Method::PUT, "/api/approval-policy", Some(body))
            .await?;
        Ok(())
    }

    /// Calls for Skipper (open ones only, if asked).
    pub async fn escalations(&self, open_only: bool) -> Result<Vec<helm_core::model::Escalation>> {
        self.get(&format!("/api/escalations?all={}", !open_only))
            .await
    }

    /// The audit log's newest rows.
    pub async fn audit(
        &self,
        channel: Option<&str>,
        limit: usize,
    ) -> Result<Vec<helm_core::model::AuditEntry>> {
        let mut path = format!("/api/audit?limit={}", limit.clamp(1, 1000));
        if let Some(c) = channel {
            path.push_str(&format!("&channel={}", c.trim_start_matches('#')));
        }
        self.get(&path).await
    }

    /// Checks the audit log's hash chain.
    pub async fn verify_audit(&self) -> Result<helm_core::store::AuditVerification> {
        self.get("/api/audit/verify").await
    }

    /// A channel's memory records, newest first.
    pub async fn memory(&self, channel: &str, filter: MemoryFilter) -> Result<Vec<MemoryItem>> {
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
        let before = filter.before.map(|b| b.to_string());
        if let Some(before) = &before {
            query.push(("before", before));
        }
        self.get_query(
            &format!("/api/channels/{}/memory", channel_path(channel)?),
            &query,
        )
        .await
    }

    /// Adds a memory record by hand, as the token's owner.
    pub async fn remember(&self, channel: &str, note: MemoryNote) -> Result<MemoryItem> {
        self.post(
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

    /// Replaces a record's text; the old record is kept as superseded.
    pub async fn edit_memory(&self, id: MemoryId, content: &str) -> Result<MemoryItem> {
        self.call(
            reqwest::Method::PATCH,
            &format!("/api/memory/{id}"),
            Some(json!({ "content": content })),
        )
        .await
    }

    /// Forgets a record (kept for provenance, never recalled).
    pub async fn forget_memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.post(&format!("/api/memory/{id}/forget"), json!({}))
            .await
    }

    /// Brings a forgotten record back to current.
    pub async fn restore_memory(&self, id: MemoryId) -> Result<MemoryItem> {
        self.post(&format!("/api/memory/{id}/restore"), json!({}))
            .await
    }

    /// Pins or unpins a record.
    pub async fn pin_memory(&self, id: MemoryId, pinned: bool) -> Result<MemoryItem> {
        let verb = if pinned { "pin" } else { "unpin" };
        self.post(&format!("/api/memory/{id}/{verb}"), json!({}))
            .await
    }

    /// Writes a thread's session summary now, with the model that serves
    /// the thread (what `1helm thread summarize` asks for).
    pub async fn summarize_thread(
        &self,
        id: helm_core::model::ThreadId,
    ) -> Result<helm_core::runtime::summary::WrittenSummary> {
        use helm_core::runtime::summary::{SessionSummary, SummaryTrigger, WrittenSummary};
        /// The server's answer: the summary without its trigger, which is
        /// a request here.
        #[derive(serde::Deserialize)]
        struct Written {
            thread_id: helm_core::model::ThreadId,
            summary: SessionSummary,
            provider: String,
            model: String,
            memory_id: MemoryId,
        }
        let w: Written = self
            .post(&format!("/api/threads/{id}/summary"), json!({}))
            .await?;
        Ok(WrittenSummary {
            thread_id: w.thread_id,
            summary: w.summary,
            trigger: SummaryTrigger::Request,
            provider: w.provider,
            model: w.model,
            memory_id: w.memory_id,
        })
    }

    /// Recalls from a channel's memory and history.
    pub async fn recall(&self, channel: &str, query: RecallQuery) -> Result<Vec<RecallHit>> {
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

    /// Imports a JSON Lines history into a channel; the server embeds what it wrote in the background.
    pub async fn import_history(&self, channel: &str, history: Vec<u8>) -> Result<ImportReport> {
        let path = format!("/api/channels/{}/import", channel_path(channel)?);
        self.post_raw(&path, &[], "application/x-ndjson", history)
            .await
    }

    /// A directory's entries in a channel's workspace (or a file's).
    pub async fn list_files(&self, channel: &str, path: &str) -> Result<Vec<FileEntry>> {
        self.get_query(
            &format!("/api/channels/{}/files", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    /// One entry of a channel's workspace.
    pub async fn stat_file(&self, channel: &str, path: &str) -> Result<FileEntry> {
        self.get_query(
            &format!("/api/channels/{}/files/stat", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    /// A text file of a channel's workspace.
    pub async fn read_text(&self, channel: &str, path: &str) -> Result<FileText> {
        self.get_query(
            &format!("/api/channels/{}/files/read", channel_path(channel)?),
            &[("path", path)],
        )
        .await
    }

    /// A file's bytes, at most `limit` of them (the server may refuse a file over its own download limit instead).
    pub async fn read_bytes(&self, channel: &str, path: &str, limit: usize) -> Result<FileBytes> {
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

    /// Uploads `bytes` as the file `path` of a channel's workspace (parents
    /// made), recorded as an upload. With `create`, a file already there is
    /// a conflict and left as it was; otherwise it is replaced.
    pub async fn put_file(
        &self,
        channel: &str,
        path: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> Result<FileEntry> {
        let (dir, name) = upload_target(path);
        let exists = if create { "refuse" } else { "replace" };
        let uploaded: Vec<Uploaded> = self
            .post_raw(
                &format!("/api/channels/{}/files/upload", channel_path(channel)?),
                &[("dir", &dir), ("name", &name), ("exists", exists)],
                "application/octet-stream",
                bytes,
            )
            .await?;
        uploaded.into_iter().next().map(|u| u.file).ok_or_else(|| {
            helm_core::Error::Internal("the server answered an upload with no file".into()).into()
        })
    }

    /// The workspace at a glance.
    pub async fn status(&self) -> Result<StatusView> {
        let mut status: StatusView = self.get("/api/status").await?;
        status.data_dir = Some(match status.data_dir {
            Some(dir) => format!("{dir} (served by {})", self.base),
            None => self.base.clone(),
        });
        Ok(status)
    }

    /// Creates a channel with its resident agent.
    pub async fn create_channel(&self, request: NewChannel) -> Result<ChannelDetail> {
        let record: ChannelRecord = self
            .post(
                "/api/channels",
                json!({
                    "name": request.name,
                    "purpose": request.purpose,
                    "visibility": request.visibility.as_str(),
                    "instructions": request.instructions,
                    "computer": request.computer,
                }),
            )
            .await?;
        // The detail adds the workspace directory (for the Captain and admins).
        self.channel(&record.channel.id.to_string()).await
    }

    /// Channels by name.
    pub async fn channels(&self, include_archived: bool) -> Result<Vec<ChannelRecord>> {
        self.get(&format!("/api/channels?all={include_archived}"))
            .await
    }

    /// One channel.
    pub async fn channel(&self, channel: &str) -> Result<ChannelDetail> {
        self.get(&format!("/api/channels/{}", channel_path(channel)?))
            .await
    }

    /// Archives a channel.
    pub async fn archive(&self, channel: &str) -> Result<ChannelRecord> {
        self.post(
            &format!("/api/channels/{}/archive", channel_path(channel)?),
            json!({}),
        )
        .await
    }

    /// Restores a channel.
    pub async fn restore(&self, channel: &str) -> Result<ChannelRecord> {
        self.post(
            &format!("/api/channels/{}/restore", channel_path(channel)?),
            json!({}),
        )
        .await
    }

    /// Sets or clears a channel's model; returns what now serves it.
    pub async fn set_channel_model(
        &self,
        channel: &str,
        choice: Option<ModelChoice>,
    ) -> Result<(Option<ResolvedModel>, Option<helm_core::ModelCheck>)> {
        let body = match choice {
            Some(c) => json!({"provider": c.provider, "model": c.model}),
            None => json!({"provider": null}),
        };
        let policy: Policy = self
            .call(
                reqwest::Method::PUT,
                &format!("/api/channels/{}/model", channel_path(channel)?),
                Some(body),
            )
            .await?;
        Ok((policy.resolved, policy.check))
    }

    /// Renames a channel; its agent keeps its handle.
    pub async fn rename_channel(&self, channel: &str, name: &str) -> Result<ChannelRecord> {
        self.call(
            reqwest::Method::PATCH,
            &format!("/api/channels/{}", channel_path(channel)?),
            Some(json!({"name": name})),
        )
        .await
    }

    /// Deletes an archived channel for good; `confirm` must name it.
    pub async fn delete_channel(&self, channel: &str, confirm: &str) -> Result<()> {
        let confirm: String = confirm
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || "-_".contains(*c))
            .collect();
        let _: Value = self
            .call(
                reqwest::Method::DELETE,
                &format!("/api/channels/{}?confirm={confirm}", channel_path(channel)?),
                None,
            )
            .await?;
        Ok(())
    }

    /// Posts a message as the token's owner (a new thread unless `thread` is given).
    pub async fn post_message(
        &self,
        channel: &str,
        text: &str,
        thread: Option<ThreadId>,
    ) -> Result<PostedMessage> {
        self.post(
            &format!("/api/channels/{}/messages", channel_path(channel)?),
            json!({"text": text, "thread_id": thread.map(|t| t.0)}),
        )
        .await
    }

    /// A channel's threads as `filter` asks (see
    /// [`helm_core::Helm::list_threads`]): matching its search best first,
    /// else the most recently active first, after `filter.before`, with
    /// where the next page starts when more remain.
    pub async fn threads(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<ThreadList> {
        filter.check()?;
        let limit = limit.clamp(1, MAX_PAGE);
        if filter.search.is_some() {
            let threads = self.thread_page(channel, filter, limit).await?;
            return Ok(ThreadList {
                threads,
                next: None,
            });
        }
        // One more than asked says whether more remain; at the server's
        // largest page, a one-thread page after it says so instead.
        let mut threads = self
            .thread_page(channel, filter, (limit + 1).min(MAX_PAGE))
            .await?;
        if threads.len() == MAX_PAGE && limit == MAX_PAGE {
            let after = ThreadFilter {
                before: threads.last().map(ThreadCursor::after),
                ..filter.clone()
            };
            threads.extend(self.thread_page(channel, &after, 1).await?);
        }
        Ok(ThreadList::from_probe(threads, limit))
    }

    /// One `GET /api/channels/{channel}/threads`.
    async fn thread_page(
        &self,
        channel: &str,
        filter: &ThreadFilter,
        limit: usize,
    ) -> Result<Vec<Thread>> {
        let limit = limit.to_string();
        let archived = filter.archived.map(|a| a.to_string());
        let before = filter
            .before
            .map(|c| (c.updated_at.to_string(), c.id.to_string()));
        let mut query = vec![("limit", limit.as_str())];
        if let Some(archived) = &archived {
            query.push(("archived", archived));
        }
        if let Some(search) = &filter.search {
            query.push(("q", search));
        }
        if let Some((updated_at, id)) = &before {
            query.push(("before_updated_at", updated_at));
            query.push(("before_id", id));
        }
        let path = format!("/api/channels/{}/threads", channel_path(channel)?);
        self.get_query(&path, &query).await
    }

    /// Where a listing of `channel`'s threads resumes after thread `id` as
    /// it is now (see [`helm_core::Helm::thread_cursor`]).
    pub async fn thread_cursor(&self, channel: &str, id: ThreadId) -> Result<ThreadCursor> {
        let detail: ThreadDetail = self.get(&format!("/api/threads/{id}")).await?;
        let record = self.channel(channel).await?.record;
        Ok(ThreadCursor::after_in(&detail.thread, record.channel.id)?)
    }

    /// A thread with its transcript and turns.
    pub async fn thread(&self, id: ThreadId) -> Result<ThreadView> {
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

    /// Resolves, reopens or archives a thread.
    pub async fn set_thread_status(&self, id: ThreadId, status: ThreadStatus) -> Result<Thread> {
        self.call(
            reqwest::Method::PUT,
            &format!("/api/threads/{id}/status"),
            Some(json!({"status": status.as_str()})),
        )
        .await
    }

    /// Gives a thread a new title (trimmed; one line of 1 to 200 characters).
    pub async fn rename_thread(&self, id: ThreadId, title: &str) -> Result<Thread> {
        self.call(
            reqwest::Method::PATCH,
            &format!("/api/threads/{id}"),
            Some(json!({ "title": title })),
        )
        .await
    }

    /// Stops a thread's work.
    pub async fn stop_thread(&self, id: ThreadId) -> Result<()> {
        let _: Value = self
            .post(&format!("/api/threads/{id}/stop"), json!({}))
            .await?;
        Ok(())
    }

    /// Runs a thread's failed last turn again; the new turn, queued.
    pub async fn retry_thread(&self, id: ThreadId) -> Result<helm_core::model::Turn> {
        self.post(&format!("/api/threads/{id}/retry"), json!({}))
            .await
    }

    /// A channel's tool journal (or one thread's): its newest actions.
    pub async fn activity(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        limit: usize,
    ) -> Result<(ChannelRecord, Vec<ToolAction>)> {
        self.activity_before(channel, thread, None, limit).await
    }

    /// A page of a channel's tool journal: the `limit` newest actions
    /// older than `before` (the newest without it), newest last.
    pub async fn activity_before(
        &self,
        channel: &str,
        thread: Option<ThreadId>,
        before: Option<ToolActionId>,
        limit: usize,
    ) -> Result<(ChannelRecord, Vec<ToolAction>)> {
        let detail = self.channel(channel).await?;
        let mut path = format!(
            "/api/channels/{}/activity?limit={}",
            detail.record.channel.id,
            limit.clamp(1, MAX_PAGE)
        );
        if let Some(thread) = thread {
            path.push_str(&format!("&thread={thread}"));
        }
        if let Some(before) = before {
            path.push_str(&format!("&before={before}"));
        }
        Ok((detail.record, self.get(&path).await?))
    }

    /// A thread with its `limit` messages just before message `before`
    /// (its newest without it), oldest first, and its turns.
    pub async fn thread_messages_before(
        &self,
        id: ThreadId,
        before: Option<MessageId>,
        limit: usize,
    ) -> Result<ThreadView> {
        let detail: ThreadDetail = self.get(&format!("/api/threads/{id}")).await?;
        let limit = limit.clamp(1, MAX_PAGE);
        let path = match before {
            Some(before) => format!("/api/threads/{id}/messages?before={before}&limit={limit}"),
            None => format!("/api/threads/{id}/messages?newest=true&limit={limit}"),
        };
        let page: Page = self.get(&path).await?;
        Ok(ThreadView {
            thread: detail.thread,
            messages: page.items,
            turns: detail.turns,
        })
    }

    /// Registers a model provider; with `replace`, replaces the one of that
    /// name (without it, a name already registered is a conflict).
    pub async fn add_provider(
        &self,
        config: ProviderConfig,
        make_default: bool,
        replace: bool,
    ) -> Result<ProviderConfig> {
        // The server reads every kind of reference from this field.
        let api_key_env = config.api_key.as_ref().map(ToString::to_string);
        self.post(
            "/api/providers",
            json!({
                "name": config.name,
                "kind": config.kind.as_str(),
                "base_url": config.base_url,
                "api_key_env": api_key_env,
                "default_model": config.default_model,
                "extra_headers": config.extra_headers,
                "make_default": make_default,
                "replace": replace,
            }),
        )
        .await
    }

    /// The provider registry.
    pub async fn providers(&self) -> Result<Vec<ProviderConfig>> {
        self.get("/api/providers").await
    }

    /// What a registered provider serves, asked of it now (502 when it does
    /// not answer).
    pub async fn provider_models(&self, name: &str) -> Result<helm_core::ProviderModels> {
        // A provider's name is letters, digits, `-`, `_` and `.`; anything
        // else is escaped so it stays one path segment (and is not found).
        let segment: String = name
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        self.get(&format!("/api/providers/{segment}/models")).await
    }

    /// Adds a person.
    pub async fn add_user(&self, name: &str, role: Role, password: Option<String>) -> Result<User> {
        self.post(
            "/api/users",
            json!({"name": name, "role": role.as_str(), "password": password}),
        )
        .await
    }

    /// Everyone.
    pub async fn users(&self) -> Result<Vec<User>> {
        self.get("/api/users").await
    }

    /// Changes a person's role and/or whether they are active
    /// (`PATCH /api/users/{id}`).
    pub async fn change_person(&self, user: UserId, change: PersonChange) -> Result<User> {
        let mut body = serde_json::Map::new();
        if let Some(role) = change.role {
            body.insert("role".into(), json!(role.as_str()));
        }
        if let Some(active) = change.active {
            body.insert("active".into(), json!(active));
        }
        self.call(
            reqwest::Method::PATCH,
            &format!("/api/users/{}", user.0),
            Some(Value::Object(body)),
        )
        .await
    }

    /// The person the token acts as.
    pub async fn me(&self) -> Result<User> {
        #[derive(Deserialize)]
        struct Me {
            user: User,
        }
        let me: Me = self.get("/api/auth/me").await?;
        Ok(me.user)
    }

    /// The model that will serve a channel's next turn.
    pub async fn channel_model(&self, channel: &str) -> Result<Option<ResolvedModel>> {
        let policy: Policy = self
            .get(&format!("/api/channels/{}/model", channel_path(channel)?))
            .await?;
        Ok(policy.resolved)
    }

    /// Writes a text file of a channel's workspace (parents made): replacing
    /// it, or with `create` only making a new one (a file already there is a
    /// conflict and left as it was).
    pub async fn write_text(
        &self,
        channel: &str,
        path: &str,
        content: &str,
        create: bool,
    ) -> Result<FileEntry> {
        self.call(
            reqwest::Method::PUT,
            &format!("/api/channels/{}/files", channel_path(channel)?),
            Some(json!({"path": path, "content": content, "create": create})),
        )
        .await
    }

    /// Saves a quick note as a new Markdown file in a channel's
    /// `/workspace/notes` (named from `title` or the first line; never over
    /// another file).
    pub async fn save_note(
        &self,
        channel: &str,
        text: &str,
        title: Option<&str>,
    ) -> Result<FileEntry> {
        self.call(
            reqwest::Method::POST,
            &format!("/api/channels/{}/notes", channel_path(channel)?),
            Some(json!({"text": text, "title": title})),
        )
        .await
    }

    /// Runs a command in a channel's computer and waits for it to end (or
    /// its timeout, in seconds, to kill it). A timeout the server would
    /// refuse is refused here first, so the error names no request field.
    pub async fn exec(
        &self,
        channel: &str,
        command: &str,
        cwd: Option<&str>,
        timeout_secs: Option<f64>,
    ) -> Result<CommandResult> {
        let max = RUN_AND_WAIT_MAX_TIMEOUT.as_secs();
        if let Some(secs) = timeout_secs
            && !(secs.is_finite() && secs > 0.0 && secs <= max as f64)
        {
            return Err(helm_core::Error::invalid(
                "timeout",
                format!(
                    "{secs} seconds is out of range: a server waits more than 0 and at most {max} \
                     seconds for a command"
                ),
            )
            .into());
        }
        self.post(
            &format!("/api/channels/{}/exec", channel_path(channel)?),
            json!({"command": command, "cwd": cwd, "timeout_secs": timeout_secs}),
        )
        .await
    }

    /// Sets or clears the workspace's default model; returns what now
    /// serves a channel without its own choice.
    pub async fn set_workspace_model(
        &self,
        choice: Option<ModelChoice>,
    ) -> Result<Option<ResolvedModel>> {
        let body = match choice {
            Some(c) => json!({"provider": c.provider, "model": c.model}),
            None => json!({"provider": null}),
        };
        let policy: Policy = self
            .call(reqwest::Method::PUT, "/api/model", Some(body))
            .await?;
        Ok(policy.resolved)
    }
}

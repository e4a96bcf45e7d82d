//! `/v1`: an OpenAI-compatible surface onto channel agents, for clients
//! that speak OpenAI's API (Open WebUI, LibreChat, editors, the `openai`
//! package). A model is a channel the caller may see (`main` is Skipper);
//! a chat completion posts the last user message to that channel's agent as
//! the caller and answers with its reply, streamed or not.
//!
//! - `X-Helm-Thread: ID` continues a thread; every answer names its thread
//!   in the same header. Without it, a request whose history ends with a
//!   reply this caller got from the channel continues that reply's thread
//!   (so a client that resends the whole chat keeps one session); otherwise
//!   a new thread starts.
//! - `Idempotency-Key`: a retried request with the same key (same caller)
//!   gets the first answer again instead of posting twice (kept 24 hours in
//!   this process).
//! - A failed turn is a 502 that clients are told not to retry on their own
//!   (`x-should-retry: false`); the same message sent again in its thread
//!   runs the failed turn again instead of posting twice.
//! - The agent's own tool calls are its work, not the client's: they never
//!   appear as `tool_calls`. A turn that waits for an approval ends with a
//!   message that says so and where.
//! - Client-supplied `tools` (function calling by the client) are refused
//!   with 400 for now.
//!
//! Errors are OpenAI-shaped: `{"error": {"message", "type", "code"}}`, for
//! any path under `/v1` too (never the web UI's page).

mod threads;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use futures_util::stream::{self, StreamExt};
use helm_core::model::{ChannelRef, ThreadId, User};
use helm_core::provider::Usage;
use helm_core::store::{ChannelFilter, ChannelRecord};
use helm_core::{Conversation, ConversationUpdate};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use self::threads::{asks_again, continued_thread};
use crate::caller::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The header that names a thread.
pub const THREAD_HEADER: &str = "x-helm-thread";
/// How long a completion waits for the agent.
const REPLY_TIMEOUT: Duration = Duration::from_secs(600);
/// How long an idempotency key is remembered.
const KEY_TTL: Duration = Duration::from_secs(24 * 3600);

/// A caller's user id and the key they sent.
type IdempotencyKey = (i64, String);
/// When an answer was made, the request it answered (its fingerprint), the
/// answer, and the thread it continued.
type Remembered = (Instant, u64, Value, ThreadId);

/// What a retry must repeat to get the remembered answer: the model and the
/// messages (not `stream`, which only changes how the answer is sent).
fn fingerprint(request: &CompletionRequest) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    request.model.hash(&mut hasher);
    for message in &request.messages {
        message.role.hash(&mut hasher);
        text_of(&message.content).hash(&mut hasher);
    }
    hasher.finish()
}

/// Answers remembered by idempotency key.
#[derive(Default)]
pub struct IdempotencyCache {
    entries: Mutex<HashMap<IdempotencyKey, Remembered>>,
}

impl IdempotencyCache {
    /// The answer remembered for `key`, if the request is the same one;
    /// a key reused for another request is refused.
    fn get(
        &self,
        user: &User,
        key: &str,
        request: u64,
    ) -> Result<Option<(Value, ThreadId)>, OpenAiError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|_, (at, _, _, _)| at.elapsed() < KEY_TTL);
        match entries.get(&(user.id.0, key.to_string())) {
            None => Ok(None),
            Some((_, same, v, t)) if *same == request => Ok(Some((v.clone(), *t))),
            Some(_) => Err(OpenAiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                "this Idempotency-Key was used for a different request; a new request needs a \
                 new key"
                    .into(),
                "idempotency_key_reused",
            )),
        }
    }

    fn put(&self, user: &User, key: &str, request: u64, value: Value, thread: ThreadId) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.insert(
            (user.id.0, key.to_string()),
            (Instant::now(), request, value, thread),
        );
    }
}

/// The `/v1` routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/models/{model}", get(model))
        .route("/v1/chat/completions", post(completions))
        // Anything else under /v1 is an OpenAI-shaped 404, never the web UI.
        .route("/v1", any(unknown_route))
        .route("/v1/{*rest}", any(unknown_route))
}

/// A path under `/v1` this endpoint does not serve.
async fn unknown_route(method: axum::http::Method, uri: axum::http::Uri) -> OpenAiError {
    OpenAiError(
        StatusCode::NOT_FOUND,
        format!(
            "no route {method} {}: the OpenAI-compatible endpoint serves GET /v1/models, \
             GET /v1/models/{{model}} and POST /v1/chat/completions",
            uri.path()
        ),
        "unknown_url",
    )
}

/// An error in OpenAI's shape.
struct OpenAiError(StatusCode, String, &'static str);

impl From<ApiError> for OpenAiError {
    fn from(e: ApiError) -> Self {
        let (status, code, message) = e.parts();
        OpenAiError(status, message.to_string(), code)
    }
}

impl From<helm_core::Error> for OpenAiError {
    fn from(e: helm_core::Error) -> Self {
        ApiError::from(e).into()
    }
}

impl OpenAiError {
    /// The error as OpenAI's `{"error": {…}}` body.
    fn body(&self) -> Value {
        let kind = match self.0 {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::FORBIDDEN => "permission_error",
            StatusCode::NOT_FOUND => "not_found_error",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request_error",
        };
        json!({"error": {"message": self.1, "type": kind, "param": null, "code": self.2}})
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        // The `openai` package retries a 409 and every 5xx on its own unless
        // told not to. A conflict answers the same however often it is sent,
        // and a failed turn's message is already posted: a blind resend
        // (without the thread) would post it again.
        let final_answer = self.0 == StatusCode::CONFLICT || self.2 == "turn_failed";
        let mut response = (self.0, Json(self.body())).into_response();
        if final_answer {
            response
                .headers_mut()
                .insert("x-should-retry", HeaderValue::from_static("false"));
        }
        response
    }
}

/// The agent's turn failed (its model, most often): a bad gateway, with why.
/// The thread keeps what the agent did before it failed; sending the same
/// message again in it runs the failed turn again.
fn turn_failed(error: &str) -> OpenAiError {
    OpenAiError(
        StatusCode::BAD_GATEWAY,
        format!(
            "the agent's turn failed: {error}. The message is kept in its thread (see the \
             X-Helm-Thread header); send it again with that header to run the turn again."
        ),
        "turn_failed",
    )
}

fn bad(message: impl Into<String>, code: &'static str) -> OpenAiError {
    OpenAiError(StatusCode::BAD_REQUEST, message.into(), code)
}

async fn caller(
    state: &AppState,
    request: Request,
) -> Result<(Caller, HeaderMap, axum::body::Bytes), OpenAiError> {
    let (mut parts, body) = request.into_parts();
    let caller = <Caller as axum::extract::FromRequestParts<AppState>>::from_request_parts(
        &mut parts, state,
    )
    .await?;
    let headers = parts.headers.clone();
    let bytes = axum::body::Bytes::from_request(Request::from_parts(parts, body), state)
        .await
        .map_err(|_| bad("the request body could not be read", "bad_body"))?;
    Ok((caller, headers, bytes))
}

/// `GET /v1/models`: the channels the caller may see.
async fn models(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<Value>, OpenAiError> {
    let (caller, _, _) = caller(&state, request).await?;
    let channels = state
        .helm
        .visible_channels(&caller.user, ChannelFilter::default())
        .await?;
    let data: Vec<Value> = channels.iter().map(model_entry).collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

/// `GET /v1/models/{model}`: one channel the caller may see, as a model.
async fn model(
    State(state): State<AppState>,
    Path(name): Path<String>,
    request: Request,
) -> Result<Json<Value>, OpenAiError> {
    let (caller, _, _) = caller(&state, request).await?;
    let record = model_channel(&state, &caller.user, &name).await?;
    Ok(Json(model_entry(&record)))
}

/// A channel as an OpenAI model: its name is the model's id.
fn model_entry(r: &ChannelRecord) -> Value {
    json!({
        "id": r.channel.name.as_str(),
        "object": "model",
        "created": r.channel.created.as_second(),
        "owned_by": "helm",
        "description": r.channel.purpose,
        "agent": r.agent.handle.to_string(),
    })
}

/// The channel a model id names, if the caller may see it.
async fn model_channel(
    state: &AppState,
    user: &User,
    model: &str,
) -> Result<ChannelRecord, OpenAiError> {
    let not_found = || {
        OpenAiError(
            StatusCode::NOT_FOUND,
            format!("no model {model:?}: models are the channels GET /v1/models lists"),
            "model_not_found",
        )
    };
    let channel: ChannelRef = model
        .trim_start_matches('#')
        .parse()
        .map_err(|_| not_found())?;
    match state.helm.visible_channel(user, &channel).await {
        Ok(record) => Ok(record),
        Err(helm_core::Error::NotFound { .. }) => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
struct CompletionRequest {
    model: String,
    messages: Vec<RequestMessage>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    functions: Option<Vec<Value>>,
    /// How many answers: Helm gives one.
    #[serde(default)]
    n: Option<u32>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

/// What a stream carries besides the reply.
#[derive(Deserialize, Default)]
struct StreamOptions {
    /// A last chunk with the `usage` (and no choices) before `[DONE]`.
    #[serde(default)]
    include_usage: bool,
}

#[derive(Deserialize)]
struct RequestMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
}

/// A message's text: a string, or the text parts of a list.
fn text_of(content: &Option<Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `POST /v1/chat/completions`.
async fn completions(State(state): State<AppState>, request: Request) -> Response {
    match complete(state, request).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn complete(state: AppState, request: Request) -> Result<Response, OpenAiError> {
    let (caller, headers, body) = caller(&state, request).await?;
    let request: CompletionRequest = serde_json::from_slice(&body).map_err(|e| {
        bad(
            format!("the body is not a chat completion request: {e}"),
            "invalid_body",
        )
    })?;
    if request.tools.as_ref().is_some_and(|t| !t.is_empty())
        || request.functions.as_ref().is_some_and(|f| !f.is_empty())
    {
        return Err(bad(
            "tools supplied by the client are not supported: the channel's agent works with \
             its own tools in its own computer. Send the request without `tools`.",
            "tools_not_supported",
        ));
    }
    if request.n.is_some_and(|n| n != 1) {
        return Err(bad(
            "one answer per request: the channel's agent answers once, in its thread. Send n = 1 \
             or leave it out.",
            "n_not_supported",
        ));
    }
    let Some(last) = request.messages.iter().rev().find(|m| m.role == "user") else {
        return Err(bad(
            "the messages hold no user message to send",
            "no_user_message",
        ));
    };
    let text = text_of(&last.content);
    if text.trim().is_empty() {
        return Err(bad("the last user message is empty", "empty_message"));
    }
    let record = model_channel(&state, &caller.user, &request.model).await?;
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(|k| format!("{}:{k}", record.channel.id));
    let asked = fingerprint(&request);
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o.include_usage);
    if let Some(key) = &key
        && let Some((answer, thread)) = state.idempotency.get(&caller.user, key, asked)?
    {
        return Ok(answer_response(
            &answer,
            thread,
            request.stream.then_some(include_usage),
            &request.model,
        ));
    }
    let thread = match headers.get(THREAD_HEADER) {
        Some(value) => {
            let id = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| {
                    bad(
                        "X-Helm-Thread must be a thread id, such as 42",
                        "bad_thread",
                    )
                })?;
            Some(ThreadId(id))
        }
        None => continued_thread(&state, &caller.user, record.channel.id, &request.messages).await,
    };
    let again = match thread {
        Some(id) => asks_again(&state, &caller.user, id, &text).await,
        None => false,
    };
    let talk = Talk {
        helm: state.helm.clone(),
        user: caller.user.clone(),
        channel: record.channel.id,
        text,
        thread,
        again,
    };
    let model = request.model.clone();
    let user = caller.user.clone();
    if !request.stream {
        let conversation = talk.run(|_| {}).await?;
        if let Some(error) = &conversation.error {
            let mut response = turn_failed(error).into_response();
            set_thread(&mut response, conversation.thread);
            return Ok(response);
        }
        let answer = completion(&conversation, &model);
        if let Some(key) = &key {
            state
                .idempotency
                .put(&user, key, asked, answer.clone(), conversation.thread);
        }
        return Ok(answer_response(&answer, conversation.thread, None, &model));
    }
    // Streaming: the conversation runs in a task; its updates become chunks.
    let (tx, mut rx) = mpsc::unbounded_channel::<Update>();
    let cache = state.idempotency.clone();
    let key_for_task = key.clone();
    let model_for_task = model.clone();
    tokio::spawn(async move {
        let updates = tx.clone();
        let result = talk
            .run(move |u| {
                let _ = updates.send(Update::Progress(u));
            })
            .await;
        if let (Ok(conversation @ Conversation { error: None, .. }), Some(key)) =
            (&result, &key_for_task)
        {
            cache.put(
                &user,
                key,
                asked,
                completion(conversation, &model_for_task),
                conversation.thread,
            );
        }
        let _ = tx.send(Update::Done(result));
    });
    // The thread is known once the message is posted; the response (and its
    // header) starts then.
    let thread = match rx.recv().await {
        Some(Update::Progress(ConversationUpdate::Started { thread, .. })) => thread,
        Some(Update::Done(Err(e))) => return Err(e.into()),
        _ => {
            return Err(OpenAiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the conversation did not start".into(),
                "internal",
            ));
        }
    };
    let id = format!("chatcmpl-helm-{thread}");
    let created = jiff::Timestamp::now().as_second();
    let first = chunk(
        &id,
        created,
        &model,
        json!({"role": "assistant", "content": ""}),
        None,
    );
    let streamed = stream::unfold(
        (rx, String::new(), false),
        move |(mut rx, mut sent, done)| {
            let id = id.clone();
            let model = model.clone();
            async move {
                if done {
                    return None;
                }
                loop {
                    match rx.recv().await {
                        Some(Update::Progress(ConversationUpdate::Text { text })) => {
                            sent.push_str(&text);
                            let c = chunk(&id, created, &model, json!({"content": text}), None);
                            return Some((vec![c], (rx, sent, false)));
                        }
                        Some(Update::Progress(_)) => continue,
                        Some(Update::Done(result)) => {
                            let mut out = Vec::new();
                            // A failure ends the stream with an error event, as
                            // OpenAI's own streams do, so clients raise it.
                            let (reply, failed, usage) = match result {
                                Ok(c) => {
                                    let failed = c.error.as_deref().map(turn_failed);
                                    (c.reply, failed, c.usage)
                                }
                                Err(e) => (String::new(), Some(OpenAiError::from(e)), None),
                            };
                            // Whatever the stream did not carry (notes, a second
                            // agent's reply, the approval notice) comes last.
                            let rest = reply
                                .strip_prefix(sent.trim_end())
                                .unwrap_or(&reply)
                                .to_string();
                            if !rest.trim().is_empty() && !sent.contains(rest.trim()) {
                                let sep = if sent.is_empty() { "" } else { "\n\n" };
                                out.push(chunk(
                                    &id,
                                    created,
                                    &model,
                                    json!({"content": format!("{sep}{}", rest.trim_start())}),
                                    None,
                                ));
                            }
                            match failed {
                                Some(error) => {
                                    out.push(SseEvent::default().data(error.body().to_string()))
                                }
                                None => {
                                    out.push(chunk(&id, created, &model, json!({}), Some("stop")));
                                    if include_usage {
                                        out.push(usage_chunk(
                                            &id,
                                            created,
                                            &model,
                                            usage_json(usage),
                                        ));
                                    }
                                }
                            }
                            out.push(SseEvent::default().data("[DONE]"));
                            return Some((out, (rx, sent, true)));
                        }
                        None => return None,
                    }
                }
            }
        },
    )
    .flat_map(|events| stream::iter(events.into_iter().map(Ok::<_, Infallible>)));
    let all = stream::once(async move { Ok::<_, Infallible>(first) }).chain(streamed);
    let mut response = Sse::new(all)
        .keep_alive(KeepAlive::default())
        .into_response();
    set_thread(&mut response, thread);
    Ok(response)
}

/// One chat completion's talk with the channel's agent: the message posted
/// (in `thread`, or a new one), or, when the request asks `again`, the
/// thread's failed turn run anew on the message it already holds.
struct Talk {
    helm: helm_core::Helm,
    user: User,
    channel: helm_core::model::ChannelId,
    text: String,
    thread: Option<ThreadId>,
    again: bool,
}

impl Talk {
    async fn run(
        &self,
        on_update: impl FnMut(ConversationUpdate) + Send,
    ) -> helm_core::Result<Conversation> {
        match self.thread {
            Some(thread) if self.again => {
                let helm = &self.helm;
                helm.converse_again(&self.user, thread, REPLY_TIMEOUT, on_update)
                    .await
            }
            thread => {
                let channel = ChannelRef::Id(self.channel);
                self.helm
                    .converse(
                        &self.user,
                        &channel,
                        &self.text,
                        thread,
                        REPLY_TIMEOUT,
                        on_update,
                    )
                    .await
            }
        }
    }
}

enum Update {
    Progress(ConversationUpdate),
    Done(helm_core::Result<Conversation>),
}

fn chunk(id: &str, created: i64, model: &str, delta: Value, finish: Option<&str>) -> SseEvent {
    let choices = json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    chunk_event(id, created, model, [("choices", choices)])
}

/// The last chunk of a stream that asked for `usage`: no choices, as
/// OpenAI sends it (`usage` is null when a provider reported no tokens).
fn usage_chunk(id: &str, created: i64, model: &str, usage: Value) -> SseEvent {
    chunk_event(
        id,
        created,
        model,
        [("choices", json!([])), ("usage", usage)],
    )
}

/// A `chat.completion.chunk` event of the stream `id`, with `fields`.
fn chunk_event<const N: usize>(
    id: &str,
    created: i64,
    model: &str,
    fields: [(&str, Value); N],
) -> SseEvent {
    let mut body = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
    });
    if let Value::Object(map) = &mut body {
        map.extend(fields.map(|(k, v)| (k.to_string(), v)));
    }
    SseEvent::default().data(body.to_string())
}

/// A conversation's tokens in OpenAI's terms: every model call of every
/// turn it took, summed; null when a provider did not report them.
fn usage_json(usage: Option<Usage>) -> Value {
    match usage {
        Some(u) => json!({
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
        }),
        None => Value::Null,
    }
}

fn completion(conversation: &Conversation, model: &str) -> Value {
    json!({
        "id": format!("chatcmpl-helm-{}-{}", conversation.thread, conversation.message),
        "object": "chat.completion",
        "created": jiff::Timestamp::now().as_second(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": conversation.reply},
            "finish_reason": "stop",
        }],
        // The agent may take several model calls (and Skipper some of its
        // own): `usage` counts them all; null when one was not reported.
        "usage": usage_json(conversation.usage),
        "helm": {
            "thread": conversation.thread.0,
            "state": conversation.state.map(|s| s.to_string()),
            "waiting_for_approval": conversation.waiting_for.iter().map(|a| a.id).collect::<Vec<_>>(),
        },
    })
}

/// A remembered (or fresh) answer as a response; streamed when `stream`
/// says whether to end with the usage chunk.
fn answer_response(
    answer: &Value,
    thread: ThreadId,
    stream: Option<bool>,
    model: &str,
) -> Response {
    let mut response = if let Some(include_usage) = stream {
        let content = answer
            .pointer("/choices/0/message/content")
            .cloned()
            .unwrap_or(Value::Null);
        let id = format!("chatcmpl-helm-{thread}");
        let created = jiff::Timestamp::now().as_second();
        let mut events = vec![
            chunk(
                &id,
                created,
                model,
                json!({"role": "assistant", "content": content}),
                None,
            ),
            chunk(&id, created, model, json!({}), Some("stop")),
        ];
        if include_usage {
            let usage = answer.get("usage").cloned().unwrap_or(Value::Null);
            events.push(usage_chunk(&id, created, model, usage));
        }
        events.push(SseEvent::default().data("[DONE]"));
        Sse::new(stream::iter(events.into_iter().map(Ok::<_, Infallible>))).into_response()
    } else {
        Json(answer.clone()).into_response()
    };
    set_thread(&mut response, thread);
    response
}

fn set_thread(response: &mut Response, thread: ThreadId) {
    if let Ok(value) = HeaderValue::from_str(&thread.to_string()) {
        response.headers_mut().insert(THREAD_HEADER, value);
    }
}

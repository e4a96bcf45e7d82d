//! The model lists the mocks publish, as the real providers do: OpenAI's
//! `GET /v1/models` (`{"object": "list", "data": [{"id", "object": "model",
//! "created", "owned_by"}]}`), Ollama's `GET /api/tags` (`{"models":
//! [{"name", "model", "modified_at", "size", "digest", "details"}]}`) and
//! Anthropic's paged `GET /v1/models?limit=&after_id=` (`{"data": [{"type":
//! "model", "id", "display_name", "created_at"}], "has_more", "first_id",
//! "last_id"}`).

use serde_json::{Value, json};

use super::Dialect;

/// What a mock answers when asked for its models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelList {
    /// These models, in the mock's own dialect (OpenAI's or Anthropic's).
    Models(Vec<String>),
    /// An OpenAI-compatible server that is Ollama: no `/v1/models`, but
    /// these models at `/api/tags`.
    OllamaTags(Vec<String>),
    /// No list at all (404 on every list endpoint).
    Unlisted,
    /// An error status with this message (such as 401 for a refused key).
    Error(u16, String),
}

impl ModelList {
    /// The list a fresh mock serves: its default model.
    pub(crate) fn default_for(_dialect: Dialect) -> Self {
        ModelList::Models(vec!["mock-model".to_string()])
    }
}

/// Whether `method path` asks for a model list in this dialect.
pub(crate) fn is_list_request(dialect: Dialect, method: &str, path: &str) -> bool {
    method == "GET"
        && match dialect {
            Dialect::OpenAi => path == "/v1/models" || path == "/api/tags",
            Dialect::Anthropic => path == "/v1/models",
        }
}

/// The status and body answering a list request.
pub(crate) fn answer(
    dialect: Dialect,
    list: &ModelList,
    path: &str,
    query: Option<&str>,
) -> (u16, Value) {
    let not_found = |what: &str| {
        (
            404,
            dialect.error_body(404, &format!("mock server: no {what} here")),
        )
    };
    match (list, dialect, path) {
        (ModelList::Error(status, message), _, _) => {
            (*status, dialect.error_body(*status, message))
        }
        (ModelList::Unlisted, _, _) => not_found("model list"),
        (ModelList::Models(ids), Dialect::OpenAi, "/v1/models") => (200, openai_list(ids)),
        (ModelList::OllamaTags(ids), Dialect::OpenAi, "/api/tags") => (200, ollama_tags(ids)),
        (ModelList::Models(ids), Dialect::Anthropic, _) => (200, anthropic_page(ids, query)),
        _ => not_found("such list"),
    }
}

fn openai_list(ids: &[String]) -> Value {
    json!({
        "object": "list",
        "data": ids.iter().map(|id| json!({
            "id": id, "object": "model", "created": 1_700_000_000, "owned_by": "mock"
        })).collect::<Vec<_>>(),
    })
}

fn ollama_tags(ids: &[String]) -> Value {
    json!({
        "models": ids.iter().map(|id| json!({
            "name": id, "model": id, "modified_at": "2024-05-01T10:00:00.5-07:00",
            "size": 4_661_224_676_u64, "digest": "sha256:0000",
            "details": {"format": "gguf", "family": "llama", "parameter_size": "8B"}
        })).collect::<Vec<_>>(),
    })
}

/// One page, honouring `limit` and `after_id` as Anthropic does.
fn anthropic_page(ids: &[String], query: Option<&str>) -> Value {
    let param = |name: &str| {
        query.and_then(|q| {
            q.split('&')
                .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
                .map(str::to_string)
        })
    };
    let limit = param("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, 1000);
    let start = match param("after_id") {
        Some(after) => ids.iter().position(|id| *id == after).map_or(0, |i| i + 1),
        None => 0,
    };
    let page: Vec<&String> = ids.iter().skip(start).take(limit).collect();
    json!({
        "data": page.iter().map(|id| json!({
            "type": "model", "id": id, "display_name": format!("Mock {id}"),
            "created_at": "2025-02-19T00:00:00Z"
        })).collect::<Vec<_>>(),
        "has_more": start + page.len() < ids.len(),
        "first_id": page.first(),
        "last_id": page.last(),
    })
}

//! Reading the model lists providers publish, in each one's own shape:
//! OpenAI's (and compatible servers') `GET /models`, Ollama's
//! `GET /api/tags`, and Anthropic's paged `GET /v1/models`. Pure functions,
//! so each shape is tested on its own; the adapters do the requests.

use std::time::Duration;

use serde_json::Value;

use super::ModelInfo;

/// How long listing a provider's models may take, retries included.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most pages of a paged list read (Anthropic pages hold up to 1000).
pub(crate) const MAX_PAGES: usize = 10;

/// `{"object": "list", "data": [{"id", "created" (Unix seconds), "owned_by"}]}`.
pub(crate) fn openai_models(document: &Value) -> Result<Vec<ModelInfo>, String> {
    let items = document["data"]
        .as_array()
        .ok_or("the model list has no \"data\" list")?;
    items
        .iter()
        .map(|item| {
            let id = item["id"]
                .as_str()
                .ok_or("a listed model has no \"id\"")?
                .to_string();
            let created = item["created"]
                .as_i64()
                .and_then(|secs| jiff::Timestamp::from_second(secs).ok());
            Ok(ModelInfo {
                id,
                display_name: None,
                created,
            })
        })
        .collect()
}

/// `{"models": [{"name": "llama3:latest", "model": "llama3:latest", "modified_at": RFC 3339}]}`.
pub(crate) fn ollama_tags(document: &Value) -> Result<Vec<ModelInfo>, String> {
    let items = document["models"]
        .as_array()
        .ok_or("the model list has no \"models\" list")?;
    items
        .iter()
        .map(|item| {
            let id = item["model"]
                .as_str()
                .or_else(|| item["name"].as_str())
                .ok_or("a listed model has no \"name\"")?
                .to_string();
            Ok(ModelInfo {
                id,
                display_name: None,
                created: item["modified_at"].as_str().and_then(|t| t.parse().ok()),
            })
        })
        .collect()
}

/// One page of Anthropic's list: `{"data": [{"type": "model", "id",
/// "display_name", "created_at"}], "has_more", "last_id"}`. Returns the
/// models and, when there is another page, the id to continue after.
pub(crate) fn anthropic_page(document: &Value) -> Result<(Vec<ModelInfo>, Option<String>), String> {
    let items = document["data"]
        .as_array()
        .ok_or("the model list has no \"data\" list")?;
    let models = items
        .iter()
        .map(|item| {
            let id = item["id"]
                .as_str()
                .ok_or("a listed model has no \"id\"")?
                .to_string();
            Ok(ModelInfo {
                id,
                display_name: item["display_name"].as_str().map(str::to_string),
                created: item["created_at"].as_str().and_then(|t| t.parse().ok()),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let next = (document["has_more"].as_bool() == Some(true))
        .then(|| document["last_id"].as_str().map(str::to_string))
        .flatten();
    Ok((models, next))
}

/// Where Ollama's own list lives for an OpenAI-compatible base URL ending
/// in `/v1` (`http://localhost:11434/v1` → `http://localhost:11434/api/tags`).
pub(crate) fn ollama_tags_url(base_url: &str) -> Option<String> {
    let base = base_url.trim().trim_end_matches('/');
    base.strip_suffix("/v1")
        .map(|origin| format!("{origin}/api/tags"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_openais_list() -> Result<(), String> {
        let doc = json!({"object": "list", "data": [
            {"id": "gpt-4o", "object": "model", "created": 1_715_367_049, "owned_by": "system"},
            {"id": "local", "object": "model"}
        ]});
        let models = openai_models(&doc)?;
        assert_eq!(models[0].id, "gpt-4o");
        assert_eq!(
            models[0].created.map(|t| t.as_second()),
            Some(1_715_367_049)
        );
        assert_eq!(models[1].created, None);
        assert!(openai_models(&json!({"models": []})).is_err());
        assert!(openai_models(&json!({"data": [{"object": "model"}]})).is_err());
        Ok(())
    }

    #[test]
    fn reads_ollamas_tags() -> Result<(), String> {
        let doc = json!({"models": [
            {"name": "llama3:latest", "model": "llama3:latest",
             "modified_at": "2024-05-01T10:00:00.123456789-07:00", "size": 4_661_224_676_u64}
        ]});
        let models = ollama_tags(&doc)?;
        assert_eq!(models[0].id, "llama3:latest");
        assert!(models[0].created.is_some());
        assert_eq!(
            ollama_tags_url("http://localhost:11434/v1/").as_deref(),
            Some("http://localhost:11434/api/tags")
        );
        assert_eq!(ollama_tags_url("https://api.openai.com"), None);
        Ok(())
    }

    #[test]
    fn reads_anthropics_pages() -> Result<(), String> {
        let doc = json!({"data": [
            {"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5",
             "created_at": "2025-09-29T00:00:00Z"}
        ], "has_more": true, "first_id": "claude-sonnet-4-5", "last_id": "claude-sonnet-4-5"});
        let (models, next) = anthropic_page(&doc)?;
        assert_eq!(models[0].display_name.as_deref(), Some("Claude Sonnet 4.5"));
        assert_eq!(next.as_deref(), Some("claude-sonnet-4-5"));
        let (_, last) = anthropic_page(&json!({"data": [], "has_more": false}))?;
        assert_eq!(last, None);
        Ok(())
    }
}

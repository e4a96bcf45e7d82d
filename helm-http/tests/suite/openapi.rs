//! The OpenAPI document is generated from the handlers; `docs/openapi.json`
//! is a copy that must not drift from it, and the copy the server serves.

use axum::http::StatusCode;

use super::kit::{Api, Auth};

const REGENERATE: &str = "cargo run -q -p helm-http -- openapi > docs/openapi.json";

#[test]
fn the_committed_document_matches_the_code() -> anyhow::Result<()> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
    let generated = format!("{}\n", helm_http::openapi_json());
    if std::env::var_os("HELM_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated)?;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json differs from the API the code serves; regenerate it with\n    {REGENERATE}\n(or HELM_UPDATE_OPENAPI=1 cargo test -p helm-http openapi) and commit it"
    );
    Ok(())
}

#[tokio::test]
async fn the_server_serves_the_document_and_it_covers_every_area() -> anyhow::Result<()> {
    let api = Api::new().await?;
    let reply = api.get("/api/openapi.json", Auth::None).await?;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body["openapi"], "3.1.0");
    let paths = reply.body["paths"]
        .as_object()
        .ok_or_else(|| anyhow::anyhow!("no paths"))?;
    for expected in [
        "/api/setup",
        "/api/auth/login",
        "/api/tokens",
        "/api/invites",
        "/api/users",
        "/api/channels/{channel}",
        "/api/channels/{channel}/members",
        "/api/threads/{id}/messages",
        "/api/providers",
        "/api/model",
        "/api/events",
    ] {
        assert!(paths.contains_key(expected), "{expected} is not documented");
    }
    let schemes = &reply.body["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["session"]["in"], "cookie");
    // What is served is what the handlers generate, not a stale copy.
    let generated: serde_json::Value = serde_json::from_str(&helm_http::openapi_json())?;
    assert!(
        reply.body == generated,
        "the served document differs from the generated one"
    );
    Ok(())
}

/// Client generators (the web UI's among them) name each call by its
/// operation id, so two operations may not share one.
#[test]
fn every_operation_has_its_own_id() -> anyhow::Result<()> {
    let document: serde_json::Value = serde_json::from_str(&helm_http::openapi_json())?;
    let mut seen = std::collections::BTreeMap::new();
    let paths = document["paths"]
        .as_object()
        .ok_or_else(|| anyhow::anyhow!("no paths"))?;
    for (path, item) in paths {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Some(id) = operation["operationId"].as_str() else {
                anyhow::bail!("{method} {path} has no operationId");
            };
            if let Some(other) = seen.insert(id.to_string(), format!("{method} {path}")) {
                anyhow::bail!("{method} {path} and {other} share the operationId {id}");
            }
        }
    }
    Ok(())
}

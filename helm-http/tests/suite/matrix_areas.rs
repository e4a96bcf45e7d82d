//! The authorization matrix's rows for a channel's computer (files,
//! artifacts, terminals), its memory and its Open Terminal keys; the vault's
//! fixture (a file, a terminal, a memory record, a key) is in `matrix`.

use axum::http::Method;
use serde_json::json;

use super::matrix::{Row, row};

/// Files, artifacts and terminals: the vault's computer is its members',
/// the Captain's and admins'; `#main`'s (Skipper's host) only the Captain's
/// and admins'.
pub(super) fn computer_rows() -> Vec<Row> {
    use Method as M;
    const SEE: [u16; 5] = [401, 404, 200, 200, 200];
    const MAKE: [u16; 5] = [401, 404, 201, 201, 201];
    vec![
        row(M::GET, "/api/channels/vault/files", None, SEE),
        row(
            M::GET,
            "/api/channels/vault/files/stat?path=notes.md",
            None,
            SEE,
        ),
        row(
            M::GET,
            "/api/channels/vault/files/read?path=notes.md",
            None,
            SEE,
        ),
        row(
            M::GET,
            "/api/channels/vault/files/download?path=notes.md",
            None,
            SEE,
        ),
        row(
            M::PUT,
            "/api/channels/vault/files",
            Some(json!({"path": "plan.md", "content": "# Plan"})),
            SEE,
        ),
        // A raw body (here, JSON text) named by ?name=.
        row(
            M::POST,
            "/api/channels/vault/files/upload?name=data.json",
            Some(json!({"a": 1})),
            MAKE,
        ),
        row(
            M::POST,
            "/api/channels/vault/files/mkdir",
            Some(json!({"path": "docs"})),
            MAKE,
        ),
        row(
            M::POST,
            "/api/channels/vault/files/move",
            Some(json!({"from": "notes.md", "to": "moved.md"})),
            SEE,
        ),
        row(
            M::DELETE,
            "/api/channels/vault/files?path=notes.md",
            None,
            [401, 404, 204, 204, 204],
        ),
        row(
            M::POST,
            "/api/channels/vault/exec",
            Some(json!({"command": "true"})),
            SEE,
        ),
        row(
            M::POST,
            "/api/channels/main/exec",
            Some(json!({"command": "true"})),
            [401, 403, 403, 200, 200],
        ),
        row(M::GET, "/api/channels/vault/artifacts", None, SEE),
        row(
            M::POST,
            "/api/channels/vault/artifacts/rescan",
            Some(json!({})),
            SEE,
        ),
        row(M::GET, "/api/channels/vault/terminals", None, SEE),
        row(
            M::POST,
            "/api/channels/vault/terminals",
            Some(json!({"rows": 24, "cols": 80})),
            MAKE,
        ),
        row(
            M::DELETE,
            "/api/terminals/{terminal}",
            None,
            [401, 404, 204, 204, 204],
        ),
        row(
            M::GET,
            "/api/terminals/{terminal}/ws",
            None,
            [401, 404, 400, 400, 400],
        ),
        row(
            M::GET,
            "/api/channels/main/files",
            None,
            [401, 403, 403, 200, 200],
        ),
        row(
            M::GET,
            "/api/channels/main/terminals",
            None,
            [401, 403, 403, 200, 200],
        ),
    ]
}

/// Memory: private like the rest of the channel; editing, pinning and
/// forgetting by a record's author and the channel's managers; imports by
/// managers.
pub(super) fn memory_rows() -> Vec<Row> {
    use Method as M;
    const SEE: [u16; 5] = [401, 404, 200, 200, 200];
    vec![
        row(M::GET, "/api/channels/vault/memory", None, SEE),
        row(
            M::GET,
            "/api/channels/vault/memory?all=true&kind=fact",
            None,
            SEE,
        ),
        row(
            M::POST,
            "/api/channels/vault/memory",
            Some(json!({"kind": "decision", "content": "Ship on Friday"})),
            [401, 404, 201, 201, 201],
        ),
        // The Captain wrote the record: its author and the vault's
        // managers edit, pin and forget it, not every member; restoring
        // one that is not forgotten is a conflict for them.
        row(
            M::PATCH,
            "/api/memory/{memory}",
            Some(json!({"content": "the vault holds less"})),
            [401, 404, 403, 200, 200],
        ),
        row(
            M::POST,
            "/api/memory/{memory}/forget",
            Some(json!({})),
            [401, 404, 403, 200, 200],
        ),
        row(
            M::POST,
            "/api/memory/{memory}/restore",
            Some(json!({})),
            [401, 404, 403, 409, 409],
        ),
        row(
            M::POST,
            "/api/memory/{memory}/pin",
            Some(json!({})),
            [401, 404, 403, 200, 200],
        ),
        row(
            M::POST,
            "/api/memory/{memory}/unpin",
            Some(json!({})),
            [401, 404, 403, 200, 200],
        ),
        row(M::GET, "/api/channels/vault/recall?q=vault", None, SEE),
        row(
            M::POST,
            "/api/channels/vault/import",
            Some(json!({"type": "thread", "id": "t1", "title": "Imported"})),
            [401, 404, 403, 201, 201],
        ),
        // No model is configured for the vault: the summary cannot be written.
        row(
            M::POST,
            "/api/threads/{thread}/summary",
            Some(json!({})),
            [401, 404, 502, 502, 502],
        ),
    ]
}

/// Open Terminal keys are managed by the channel's managers; the protocol
/// itself takes only the channel's key, never a person's credentials.
pub(super) fn open_terminal_rows() -> Vec<Row> {
    use Method as M;
    const MANAGE: [u16; 5] = [401, 404, 403, 200, 200];
    vec![
        row(M::GET, "/api/channels/vault/ot-key", None, MANAGE),
        row(
            M::POST,
            "/api/channels/vault/ot-key",
            Some(json!({})),
            [401, 404, 403, 409, 409],
        ),
        row(
            M::POST,
            "/api/channels/vault/ot-key/rotate",
            Some(json!({})),
            [401, 404, 403, 201, 201],
        ),
        row(
            M::DELETE,
            "/api/channels/vault/ot-key",
            None,
            [401, 404, 403, 204, 204],
        ),
        row(
            M::POST,
            "/api/channels/main/ot-key",
            Some(json!({})),
            [401, 403, 403, 409, 409],
        ),
        row(M::GET, "/api/channels/vault/ot/health", None, [200; 5]),
        row(M::GET, "/api/channels/vault/ot/execute", None, [401; 5]),
        row(
            M::POST,
            "/api/channels/vault/ot/execute",
            Some(json!({"command": "true"})),
            [401; 5],
        ),
        row(M::GET, "/api/channels/vault/ot/files/list", None, [401; 5]),
        row(
            M::GET,
            "/api/channels/vault/ot/api/terminals",
            None,
            [401; 5],
        ),
    ]
}

/// Approvals, the approval policy, calls for Skipper and the audit log.
pub(super) fn authority_rows() -> Vec<Row> {
    use Method as M;
    const ADMINS: [u16; 5] = [401, 403, 403, 200, 200];
    vec![
        row(M::GET, "/api/approvals", None, [401, 200, 200, 200, 200]),
        row(
            M::GET,
            "/api/approvals?all=true",
            None,
            [401, 200, 200, 200, 200],
        ),
        row(
            M::POST,
            "/api/approvals/999/approve",
            Some(json!({})),
            [401, 403, 403, 404, 404],
        ),
        row(
            M::POST,
            "/api/approvals/999/deny",
            Some(json!({"note": "no"})),
            [401, 403, 403, 404, 404],
        ),
        row(
            M::PUT,
            "/api/approval-policy",
            Some(json!({"action": "host_command", "required": true})),
            [401, 403, 403, 204, 204],
        ),
        row(
            M::GET,
            "/api/escalations?all=true",
            None,
            [401, 200, 200, 200, 200],
        ),
        row(M::GET, "/api/audit", None, ADMINS),
        row(M::GET, "/api/audit?channel=lobby&limit=5", None, ADMINS),
        row(M::GET, "/api/audit/verify", None, ADMINS),
    ]
}

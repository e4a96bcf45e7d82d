//! The OpenAPI document's frame: title, tags and security schemes. The paths
//! and schemas come from the handlers themselves (`#[utoipa::path]` on each,
//! collected by `routes::api`), so the document cannot drift from the code;
//! `docs/openapi.json` is a copy checked by a test.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::api::{StreamHello, StreamResync};
use crate::caller::SESSION_COOKIE;
use crate::error::ErrorBody;

/// The document's frame.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Helm",
        description = "The Helm workspace server: channels with resident agents, threads, \
                       messages, people and live events. Errors are `{\"code\", \"message\"}`. \
                       Authenticate with `Authorization: Bearer <API token>` or the \
                       `helm_session` cookie from signing in.",
        license(name = "Apache-2.0")
    ),
    tags(
        (name = "auth", description = "Setup, signing in, sessions and API tokens"),
        (name = "users", description = "People and invitations"),
        (name = "workspace", description = "The workspace at a glance"),
        (name = "channels", description = "Channels, their members and activity"),
        (name = "threads", description = "Threads: durable work sessions"),
        (name = "messages", description = "Posting and reading messages"),
        (name = "models", description = "Providers and model policy"),
        (name = "events", description = "The event log, live over WebSocket or in pages"),
        (name = "files", description = "A channel's workspace files, uploads and artifacts"),
        (name = "terminals", description = "Interactive shells in a channel's computer"),
        (name = "commands", description = "Running a command in a channel's computer and waiting for it"),
        (name = "memory", description = "A channel's memory, recall, imports and summaries"),
        (name = "mcp", description = "A channel's MCP servers: their tools join its agent's"),
        (name = "authority", description = "Approvals, the approval policy, calls for Skipper, \
            and the audit log"),
        (name = "open-terminal", description = "Each channel's computer over the Open Terminal \
            protocol, authenticated with the channel's Open Terminal key"),
    ),
    modifiers(&SecuritySchemes),
    security(("bearer" = []), ("session" = [])),
    components(schemas(ErrorBody, StreamHello, StreamResync))
)]
pub struct ApiDoc;

/// Adds the two ways to authenticate.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "ot_key",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))),
        );
    }
}

//! Routes whose OpenAPI description is composed only when it is asked for.
//!
//! Each handler carries its description (`#[utoipa::path]`), and
//! `utoipa_axum::routes!` composes it while the router is built: every
//! operation, parameter and schema of the API, at every start. The server
//! never needs it (it serves the checked-in `docs/openapi.json`), yet
//! running that code made its pages of the binary resident. [`handlers!`]
//! routes the same handlers by the paths and methods their descriptions
//! name, and keeps the composing for later: [`Api::describe`] runs it,
//! through `routes!` as before, so the document is the same one.

use axum::Router;
use axum::routing::MethodRouter;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::state::AppState;

/// Composes the description of a group of handlers (see [`handlers!`]).
pub type Describe = fn() -> UtoipaMethodRouter<AppState>;

/// Handlers on one path: how to serve them, and how to describe them.
pub struct Handlers {
    /// Their path, from their descriptions.
    pub path: String,
    /// Each handler under the methods its description names.
    pub router: MethodRouter<AppState>,
    /// Their description, composed when called.
    pub describe: Describe,
}

/// Handlers of one path, as `utoipa_axum::routes!` takes them, for
/// [`Api::routes`]: routed now, described later.
macro_rules! handlers {
    ( $first:ident $( , $handler:ident )* $(,)? ) => {{
        use utoipa_axum::PathItemExt as _;
        // One path: `routes!` takes handlers of one path together.
        let path = utoipa_axum::paste! { <[<__path_ $first>] as utoipa::Path>::path() };
        let mut router = axum::routing::MethodRouter::new();
        $crate::routes::described::handlers!(@on router, path: $first $( , $handler )*);
        $crate::routes::described::Handlers {
            path,
            router,
            describe: || utoipa_axum::routes!( $first $( , $handler )* ),
        }
    }};
    ( @on $router:ident, $path:ident: $( $handler:ident ),+ ) => {
        $(
            utoipa_axum::paste! {
                debug_assert_eq!(
                    <[<__path_ $handler>] as utoipa::Path>::path(),
                    $path,
                    "handlers!() takes the handlers of one path"
                );
                for method in <[<__path_ $handler>] as utoipa::Path>::methods() {
                    $router = $router.on(method.to_method_filter(), $handler);
                }
            }
        )+
    };
}
pub(crate) use handlers;

/// Routes, and how to describe them.
#[derive(Default)]
pub struct Api {
    router: Router<AppState>,
    described: Vec<Describe>,
}

impl Api {
    /// No routes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the handlers of one path.
    pub fn routes(mut self, handlers: Handlers) -> Self {
        self.router = self.router.route(&handlers.path, handlers.router);
        self.described.push(handlers.describe);
        self
    }

    /// A layer around the routes added so far (`axum::Router::route_layer`).
    pub fn route_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<axum::routing::Route> + Clone + Send + Sync + 'static,
        L::Service: tower::Service<axum::extract::Request> + Clone + Send + Sync + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Response:
            axum::response::IntoResponse + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Error:
            Into<std::convert::Infallible> + 'static,
        <L::Service as tower::Service<axum::extract::Request>>::Future: Send + 'static,
    {
        self.router = self.router.route_layer(layer);
        self
    }

    /// Adds another set's routes.
    pub fn merge(mut self, other: Api) -> Self {
        self.router = self.router.merge(other.router);
        self.described.extend(other.described);
        self
    }

    /// The routes, to serve.
    pub fn into_router(self) -> Router<AppState> {
        self.router
    }

    /// The document `base` with every route's description added, in order.
    pub fn describe(self, base: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
        self.described
            .into_iter()
            .fold(OpenApiRouter::with_openapi(base), |api, describe| {
                api.routes(describe())
            })
            .into_openapi()
    }
}

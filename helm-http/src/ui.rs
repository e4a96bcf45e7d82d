//! The web UI: the files `npm run build` writes to `helm-http/ui/dist`,
//! served at every path that is not the API.
//!
//! - Release builds carry the files in the binary (see `build.rs`); debug
//!   builds read `ui/dist` at run time; `ui_dir` in the config serves any
//!   directory instead. Without a built UI, `/` answers a short page saying
//!   how to build it, and the API works as ever.
//! - Files under `/assets/` are named by their content hash, so they are
//!   cached for a year (`immutable`); `index.html` and the other top-level
//!   files are revalidated on every load (`no-cache`, with an `ETag`).
//! - Each file has a `.br` and a `.gz` twin made at build time; the smaller
//!   encoding the client accepts is sent, so nothing is compressed per
//!   request.
//! - Every page gets a strict Content-Security-Policy: scripts and styles
//!   only from this origin, no inline script, no other host.
//! - Paths that name no file (`/c/launch`, `/join`) are the UI's own routes
//!   and get `index.html`; `/api/...` paths never do (they stay JSON 404s).

use std::borrow::Cow;
use std::path::PathBuf;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

mod built {
    include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));
}

/// The Content-Security-Policy of every UI page. Scripts come only from
/// this origin as files (no inline script, no `eval`). `<style>` elements
/// may be inline because the terminal (xterm.js) writes its measured cell
/// sizes into one at run time; style *attributes* in markup are refused,
/// which also keeps them out of rendered Markdown.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; style-src-elem 'self' 'unsafe-inline'; style-src-attr 'none'; \
     img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
     media-src 'self' blob:; worker-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'; object-src 'none'";

/// Where the UI's files come from.
#[derive(Debug, Clone)]
pub enum UiAssets {
    /// Files compiled into the binary.
    Embedded(&'static [(&'static str, &'static [u8])]),
    /// A directory read at request time.
    Dir(PathBuf),
}

/// One file ready to send: its bytes in the chosen encoding.
struct Found {
    body: Cow<'static, [u8]>,
    encoding: Option<&'static str>,
    /// A validator of the uncompressed content.
    etag: String,
}

/// Encodings in the order they are preferred, with their file suffix.
const ENCODINGS: [(&str, &str); 2] = [("br", ".br"), ("gzip", ".gz")];

impl UiAssets {
    /// The UI this binary was built with: embedded files in release builds,
    /// `helm-http/ui/dist` read from disk in debug builds.
    pub fn builtin() -> Self {
        if built::EMBEDDED.is_empty() {
            UiAssets::Dir(PathBuf::from(built::DIST_DIR))
        } else {
            UiAssets::Embedded(built::EMBEDDED)
        }
    }

    /// Whether a built UI is there to serve.
    pub fn is_built(&self) -> bool {
        self.raw("index.html").is_some()
    }

    fn raw(&self, name: &str) -> Option<Cow<'static, [u8]>> {
        match self {
            UiAssets::Embedded(files) => files
                .binary_search_by(|(n, _)| (*n).cmp(name))
                .ok()
                .map(|i| Cow::Borrowed(files[i].1)),
            UiAssets::Dir(dir) => std::fs::read(dir.join(name)).ok().map(Cow::Owned),
        }
    }

    /// `name` in the best encoding `accepted` allows.
    fn find(&self, name: &str, accepted: &AcceptedEncodings) -> Option<Found> {
        let plain = self.raw(name)?;
        let etag = format!("\"{:016x}\"", fnv1a(&plain));
        for (encoding, suffix) in ENCODINGS {
            if accepted.allows(encoding)
                && let Some(body) = self.raw(&format!("{name}{suffix}"))
                && body.len() < plain.len()
            {
                return Some(Found {
                    body,
                    encoding: Some(encoding),
                    etag,
                });
            }
        }
        Some(Found {
            body: plain,
            encoding: None,
            etag,
        })
    }
}

/// A stable, cheap fingerprint for ETags (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The encodings an `Accept-Encoding` header allows (`q=0` refuses one).
struct AcceptedEncodings(Vec<(String, bool)>);

impl AcceptedEncodings {
    fn parse(headers: &HeaderMap) -> Self {
        let list = headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|item| {
                let mut parts = item.split(';');
                let name = parts.next()?.trim().to_ascii_lowercase();
                let refused = parts.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                });
                (!name.is_empty()).then_some((name, !refused))
            })
            .collect();
        AcceptedEncodings(list)
    }

    fn allows(&self, encoding: &str) -> bool {
        let named = self.0.iter().find(|(n, _)| n == encoding);
        match named {
            Some((_, ok)) => *ok,
            None => self.0.iter().any(|(n, ok)| n == "*" && *ok),
        }
    }
}

/// The content type for a file name.
fn content_type(name: &str) -> &'static str {
    let extension = name.rsplit('.').next().unwrap_or("");
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Headers every UI response carries.
fn security_headers(headers: &mut HeaderMap) {
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        CONTENT_SECURITY_POLICY,
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::REFERRER_POLICY, "same-origin");
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
}

/// A file name under the UI's root for a request path, or `None` when the
/// path cannot name one (it climbs out, or has odd characters).
fn file_name(path: &str) -> Option<String> {
    let trimmed = path.trim_start_matches('/');
    let ok = trimmed.split('/').all(|part| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    });
    (ok && !trimmed.is_empty()).then(|| trimmed.to_string())
}

/// Serves the UI for every path no route claimed.
pub async fn serve(
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path();
    // The API's and MCP's paths answer as APIs do (JSON), never with the
    // page; `/v1` has its own OpenAI-shaped fallback.
    let is_api = ["/api", "/mcp"].iter().any(|p| {
        path == *p
            || path
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('/'))
    });
    if is_api || !(method == Method::GET || method == Method::HEAD) {
        return crate::not_found().await.into_response();
    }
    let assets = &state.ui;
    let accepted = AcceptedEncodings::parse(&headers);
    let name = file_name(path);
    // A real file of the build, such as a hashed asset or the icon.
    if let Some(name) = &name
        && name != "index.html"
        && let Some(found) = assets.find(name, &accepted)
    {
        let immutable = name.starts_with("assets/");
        return respond(found, content_type(name), immutable, &headers, &method);
    }
    // A missing hashed asset is a 404, not the page: a stale page asking for
    // it must fail visibly rather than run HTML as script.
    if path.starts_with("/assets/") {
        return (StatusCode::NOT_FOUND, "no such asset\n").into_response();
    }
    match assets.find("index.html", &accepted) {
        Some(found) => respond(found, content_type("index.html"), false, &headers, &method),
        None => not_built(),
    }
}

fn respond(
    found: Found,
    content_type: &'static str,
    immutable: bool,
    request: &HeaderMap,
    method: &Method,
) -> Response {
    let mut response = Response::new(Body::empty());
    let headers = response.headers_mut();
    security_headers(headers);
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    if let Ok(etag) = HeaderValue::from_str(&found.etag) {
        headers.insert(header::ETAG, etag);
    }
    let unchanged = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == found.etag));
    if unchanged {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    if let Some(encoding) = found.encoding {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(found.body.len()));
    if method != Method::HEAD {
        *response.body_mut() = match found.body {
            Cow::Borrowed(bytes) => Body::from(bytes),
            Cow::Owned(bytes) => Body::from(bytes),
        };
    }
    response
}

/// The page a server without a built UI answers with.
fn not_built() -> Response {
    const PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Helm: the web UI is not built</title></head><body>\
<h1>Helm is running, but its web UI is not built</h1>\
<p>This server was built without the web UI. The API works: see \
<a href=\"/api/openapi.json\">/api/openapi.json</a>.</p>\
<p>To get the UI, build it and restart the server (a debug build picks it up without a restart):</p>\
<pre>cd helm-http/ui\nnpm ci\nnpm run build</pre>\
<p>or start the server with <code>./scripts/serve</code>, which does this for you.</p>\
</body></html>\n";
    let mut response = (StatusCode::OK, PAGE).into_response();
    let headers = response.headers_mut();
    security_headers(headers);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(value: &str) -> AcceptedEncodings {
        let mut headers = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(header::ACCEPT_ENCODING, v);
        }
        AcceptedEncodings::parse(&headers)
    }

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        assert!(accepted("gzip, deflate, br").allows("br"));
        assert!(accepted("gzip;q=1.0, br;q=0").allows("gzip"));
        assert!(!accepted("gzip;q=1.0, br;q=0").allows("br"));
        assert!(accepted("*").allows("br"));
        assert!(!accepted("identity").allows("gzip"));
        assert!(!accepted("").allows("gzip"));
    }

    #[test]
    fn request_paths_name_files_only_inside_the_root() {
        assert_eq!(
            file_name("/assets/app-1a2b.js").as_deref(),
            Some("assets/app-1a2b.js")
        );
        assert_eq!(file_name("/favicon.svg").as_deref(), Some("favicon.svg"));
        assert_eq!(file_name("/"), None);
        assert_eq!(file_name("/../etc/passwd"), None);
        assert_eq!(file_name("/assets//x.js"), None);
        assert_eq!(file_name("/a%2f..%2fb"), None);
    }
}

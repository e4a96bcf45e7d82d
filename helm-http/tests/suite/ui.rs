//! Serving the web UI: hashed assets cached for good, the page revalidated,
//! the smaller pre-compressed encoding chosen, a strict CSP, the SPA
//! fallback for the UI's own routes (never for `/api`), and a clear page
//! when the UI was not built. The files are a stand-in build written to a
//! temporary directory (`ui_dir`), so these tests need no npm.

use std::io::Write;
use std::path::Path;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};

use super::kit::{Api, Auth};

const PAGE: &str = "<!doctype html><html><head><script type=\"module\" src=\"/assets/app-3f2a.js\"></script></head><body><div id=\"app\"></div></body></html>";
const SCRIPT: &str = "console.log('the app, long enough that compressing it pays off: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');";

/// A build as `npm run build` lays it out: each file with its twins.
fn write_build(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("assets"))?;
    for (name, body) in [
        ("index.html", PAGE),
        ("assets/app-3f2a.js", SCRIPT),
        ("favicon.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
    ] {
        std::fs::write(dir.join(name), body)?;
        // Stand-ins for the real encodings: marked so the test can tell
        // which one was sent, and shorter than the original.
        std::fs::write(dir.join(format!("{name}.br")), b"BR")?;
        std::fs::write(dir.join(format!("{name}.gz")), b"GZ")?;
    }
    let mut log = std::fs::File::create(dir.join("assets/README.txt"))?;
    writeln!(log, "plain")?;
    Ok(())
}

async fn api_with_build() -> anyhow::Result<(Api, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    write_build(dir.path())?;
    let path = dir.path().to_path_buf();
    let api = Api::with_config(move |c| c.ui_dir = Some(path)).await?;
    Ok((api, dir))
}

/// A GET with these request headers; returns status, headers and raw body.
async fn fetch(
    api: &Api,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> anyhow::Result<(StatusCode, axum::http::HeaderMap, Vec<u8>)> {
    // Like the kit's requests: a loopback Host the server answers for.
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "localhost");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    use tower::ServiceExt;
    let response = api
        .app
        .clone()
        .oneshot(request.body(Body::empty())?)
        .await?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await?;
    Ok((status, headers, body.to_vec()))
}

fn header(headers: &axum::http::HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn the_page_is_revalidated_and_locked_down_by_its_csp() -> anyhow::Result<()> {
    let (api, _dir) = api_with_build().await?;
    let (status, headers, body) = fetch(&api, Method::GET, "/", &[]).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(String::from_utf8(body)?, PAGE);
    assert_eq!(
        header(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert_eq!(header(&headers, header::CACHE_CONTROL), "no-cache");
    let csp = header(&headers, header::CONTENT_SECURITY_POLICY);
    let script_src = csp
        .split(';')
        .map(str::trim)
        .find(|d| d.starts_with("script-src "))
        .unwrap_or_default();
    assert_eq!(script_src, "script-src 'self'", "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(
        !csp.contains("http"),
        "no other host may serve anything: {csp}"
    );
    assert_eq!(header(&headers, header::X_CONTENT_TYPE_OPTIONS), "nosniff");

    // The validator saves sending the page again.
    let etag = header(&headers, header::ETAG).to_string();
    assert!(etag.starts_with('"'), "{etag}");
    let (status, _, body) = fetch(&api, Method::GET, "/", &[("if-none-match", &etag)]).await?;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());

    // HEAD answers the headers alone.
    let (status, headers, body) = fetch(&api, Method::HEAD, "/", &[]).await?;
    assert_eq!(status, StatusCode::OK);
    assert!(body.is_empty());
    assert_eq!(
        header(&headers, header::CONTENT_LENGTH),
        PAGE.len().to_string()
    );
    Ok(())
}

#[tokio::test]
async fn hashed_assets_are_cached_for_good_in_the_best_encoding() -> anyhow::Result<()> {
    let (api, _dir) = api_with_build().await?;
    let path = "/assets/app-3f2a.js";
    let cases = [
        ("gzip, deflate, br, zstd", "br", "BR"),
        ("gzip;q=1.0, br;q=0", "gzip", "GZ"),
        ("identity", "", SCRIPT),
        ("", "", SCRIPT),
    ];
    for (accept, encoding, body) in cases {
        let (status, headers, sent) =
            fetch(&api, Method::GET, path, &[("accept-encoding", accept)]).await?;
        assert_eq!(status, StatusCode::OK, "{accept}");
        assert_eq!(
            header(&headers, header::CONTENT_ENCODING),
            encoding,
            "{accept}"
        );
        assert_eq!(String::from_utf8(sent)?, body, "{accept}");
        assert_eq!(
            header(&headers, header::CACHE_CONTROL),
            "public, max-age=31536000, immutable"
        );
        assert_eq!(header(&headers, header::VARY), "accept-encoding");
        assert_eq!(
            header(&headers, header::CONTENT_TYPE),
            "text/javascript; charset=utf-8"
        );
    }
    // A top-level file is served as itself, but revalidated.
    let (status, headers, _) = fetch(&api, Method::GET, "/favicon.svg", &[]).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CONTENT_TYPE), "image/svg+xml");
    assert_eq!(header(&headers, header::CACHE_CONTROL), "no-cache");
    // A twin larger than the file itself is not worth sending.
    let (_, headers, sent) = fetch(
        &api,
        Method::GET,
        "/assets/README.txt",
        &[("accept-encoding", "br")],
    )
    .await?;
    assert_eq!(header(&headers, header::CONTENT_ENCODING), "");
    assert_eq!(sent, b"plain\n");
    Ok(())
}

#[tokio::test]
async fn ui_routes_get_the_page_but_the_api_and_missing_assets_do_not() -> anyhow::Result<()> {
    let (api, _dir) = api_with_build().await?;
    for path in ["/c/launch", "/c/launch/files", "/join", "/admin/audit"] {
        let (status, headers, body) = fetch(&api, Method::GET, path, &[]).await?;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(String::from_utf8(body)?, PAGE, "{path}");
        assert_eq!(
            header(&headers, header::CACHE_CONTROL),
            "no-cache",
            "{path}"
        );
    }
    // The API keeps its JSON errors.
    for path in ["/api/nothing-here", "/api", "/api/channels/launch/nope"] {
        let reply = api.get(path, Auth::None).await?;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(reply.body["code"], "not_found", "{path}");
    }
    // A stale page asking for an asset that is gone gets a 404, not HTML.
    let (status, headers, _) = fetch(&api, Method::GET, "/assets/app-0000.js", &[]).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_ne!(
        header(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    // Paths that climb out of the build are not files.
    let (status, _, body) = fetch(&api, Method::GET, "/../Cargo.toml", &[]).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(String::from_utf8(body)?, PAGE);
    // Other methods on UI paths are not routes.
    let reply = api
        .call(
            Method::POST,
            "/c/launch",
            Auth::None,
            Some(serde_json::json!({})),
        )
        .await?;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn without_a_built_ui_the_server_says_how_to_build_it() -> anyhow::Result<()> {
    let empty = tempfile::tempdir()?;
    let path = empty.path().to_path_buf();
    let api = Api::with_config(move |c| c.ui_dir = Some(path)).await?;
    let (status, headers, body) = fetch(&api, Method::GET, "/", &[]).await?;
    assert_eq!(status, StatusCode::OK);
    let page = String::from_utf8(body)?;
    assert!(page.contains("npm run build"), "{page}");
    assert!(page.contains("./scripts/serve"), "{page}");
    assert!(header(&headers, header::CONTENT_SECURITY_POLICY).contains("script-src 'self'"));
    // The API is unaffected.
    let reply = api.get("/api/setup", Auth::None).await?;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body["needed"], true);
    Ok(())
}

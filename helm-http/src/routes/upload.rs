//! Reading an upload: a multipart form or a raw body, streamed in under a
//! size limit (the server's general body limit does not apply: uploads have
//! their own, `max_upload_bytes`), with every file name checked.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use futures_util::StreamExt;

use crate::error::ApiError;

/// The most files one upload may carry.
const MAX_FILES: usize = 100;
/// The longest file name accepted, in bytes (the usual file system limit).
const MAX_NAME: usize = 255;

/// One file of an upload.
pub struct UploadedFile {
    /// Its checked name.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Reads `?dir=` and the files of an upload, at most `limit` bytes in all.
pub async fn read_upload(
    request: Request,
    limit: usize,
) -> Result<(Option<String>, Vec<UploadedFile>), ApiError> {
    let query = request.uri().query().unwrap_or_default().to_string();
    let dir = query_value(&query, "dir")?;
    let name = query_value(&query, "name")?
        .map(|n| checked_name(&n))
        .transpose()?;
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = request.into_body();
    let files = if content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        read_multipart(body, &content_type, name, limit).await?
    } else {
        let name = name.ok_or_else(|| {
            ApiError::invalid(
                "name the file with ?name=, or send a multipart form whose parts carry file names",
            )
        })?;
        vec![UploadedFile {
            name,
            bytes: read_raw(body, limit).await?,
        }]
    };
    Ok((dir, files))
}

fn too_large(limit: usize) -> ApiError {
    ApiError::too_large(format!(
        "the upload is larger than this server accepts ({limit} bytes)"
    ))
}

async fn read_raw(body: Body, limit: usize) -> Result<Vec<u8>, ApiError> {
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::bad_body(format!("the body broke off: {e}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(too_large(limit));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

async fn read_multipart(
    body: Body,
    content_type: &str,
    rename: Option<String>,
    limit: usize,
) -> Result<Vec<UploadedFile>, ApiError> {
    let boundary = multer::parse_boundary(content_type)
        .map_err(|e| ApiError::bad_body(format!("the multipart form has no boundary: {e}")))?;
    let constraints =
        multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(limit as u64));
    let mut form =
        multer::Multipart::with_constraints(body.into_data_stream(), boundary, constraints);
    let mut files = Vec::new();
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return Err(multipart_error(e, limit)),
        };
        let named_in_header = field
            .headers()
            .get(header::CONTENT_DISPOSITION)
            .is_some_and(|v| contains(v.as_bytes(), b"filename"));
        let is_file = field.file_name().is_some() || field.name() == Some("file");
        let name = match (field.file_name(), &rename) {
            (_, Some(name)) if is_file => name.clone(),
            (Some(name), _) => checked_name(name)?,
            (None, _) if named_in_header => {
                return Err(ApiError::invalid(
                    "a part's file name is not valid UTF-8; rename the file or name it with ?name=",
                ));
            }
            // Other form fields are not files.
            (None, _) => continue,
        };
        if files.len() >= MAX_FILES {
            return Err(ApiError::invalid(format!(
                "upload at most {MAX_FILES} files at once"
            )));
        }
        let bytes = field.bytes().await.map_err(|e| multipart_error(e, limit))?;
        files.push(UploadedFile {
            name,
            bytes: bytes.to_vec(),
        });
    }
    if files.is_empty() {
        return Err(ApiError::invalid(
            "the form has no files: send parts named `file` with a file name",
        ));
    }
    if rename.is_some() && files.len() > 1 {
        return Err(ApiError::invalid(
            "?name= names one file; this form has several",
        ));
    }
    Ok(files)
}

fn multipart_error(e: multer::Error, limit: usize) -> ApiError {
    match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            too_large(limit)
        }
        other => ApiError::bad_body(format!("the multipart form is malformed: {other}")),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A file name that is one path component: not empty, not `.` or `..`, no
/// `/` or `\`, no control characters, at most 255 bytes.
pub fn checked_name(name: &str) -> Result<String, ApiError> {
    let refuse = |why: &str| ApiError::invalid(format!("the file name {name:?} {why}"));
    if name.is_empty() || name.trim().is_empty() {
        return Err(refuse("is empty"));
    }
    if name == "." || name == ".." {
        return Err(refuse("names a directory, not a file"));
    }
    if name.contains(['/', '\\']) {
        return Err(refuse(
            "contains a path separator; give the directory with ?dir=",
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(refuse("contains control characters"));
    }
    if name.len() > MAX_NAME {
        return Err(refuse("is longer than 255 bytes"));
    }
    Ok(name.to_string())
}

/// The value of `key` in a raw query string, percent-decoded strictly: a
/// value whose bytes are not UTF-8 is refused (form decoding would replace
/// them quietly).
fn query_value(query: &str, key: &str) -> Result<Option<String>, ApiError> {
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != key {
            continue;
        }
        let bytes = percent_decode(v).ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::BAD_REQUEST,
                "bad_query",
                format!("?{key}= has a malformed percent escape"),
            )
        })?;
        return String::from_utf8(bytes).map(Some).map_err(|_| {
            ApiError::invalid(format!(
                "?{key}= is not valid UTF-8 once decoded; file names must be UTF-8"
            ))
        });
    }
    Ok(None)
}

/// Decodes `%XX` escapes and `+` (a space in forms).
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_clean_component() {
        assert!(checked_name("report.pdf").is_ok());
        assert!(checked_name("naïve résumé.txt").is_ok());
        for bad in ["", " ", ".", "..", "a/b", "../x", "a\\b", "a\u{0}b", "a\nb"] {
            assert!(checked_name(bad).is_err(), "{bad:?}");
        }
        assert!(checked_name(&"x".repeat(256)).is_err());
    }

    #[test]
    fn query_values_decode_strictly() -> Result<(), ApiError> {
        assert_eq!(
            query_value("dir=a&name=r%C3%A9sum%C3%A9+1.txt", "name")?.as_deref(),
            Some("résumé 1.txt")
        );
        assert!(query_value("name=%ff", "name").is_err());
        assert!(query_value("name=%f", "name").is_err());
        assert_eq!(query_value("other=1", "name")?, None);
        Ok(())
    }
}

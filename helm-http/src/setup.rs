//! The first-run setup code: until the Captain's account exists, whoever
//! completes `POST /api/setup` becomes the Captain, with a root shell on
//! the host through `#main`. A loopback address does not keep browsers out
//! (a page can rebind its domain to 127.0.0.1), so setup needs a one-time
//! code that only someone at the server can read: printed when the server
//! starts and kept in `<data>/setup-code` (mode 0600) until setup is done.

use std::path::{Path, PathBuf};

/// The file the code is kept in, in the data directory.
pub const CODE_FILE: &str = "setup-code";

/// A new code: 80 random bits as four groups of five hex digits.
pub fn new_code() -> String {
    let secret = helm_core::auth::secret::generate("").unwrap_or_else(|_| {
        // The system random source failed: a code nobody can know keeps
        // setup closed rather than open.
        format!("{:064x}", std::process::id())
    });
    let digits: Vec<char> = secret.chars().take(20).collect();
    digits
        .chunks(5)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

/// Whether `given` is `code`, ignoring case, spaces and dashes, compared in
/// constant time.
pub fn matches(code: &str, given: &str) -> bool {
    let norm = |s: &str| -> Vec<u8> {
        s.bytes()
            .filter(|b| !matches!(b, b'-' | b' ' | b'\t'))
            .map(|b| b.to_ascii_lowercase())
            .collect()
    };
    let (a, b) = (norm(code), norm(given));
    let mut diff = a.len() ^ b.len();
    for (x, y) in a.iter().zip(b.iter()) {
        diff |= usize::from(x ^ y);
    }
    diff == 0 && !a.is_empty()
}

/// Where the code is kept for `data`.
pub fn code_path(data: &Path) -> PathBuf {
    data.join(CODE_FILE)
}

/// Writes the code to `<data>/setup-code`, readable by the server's user only.
pub fn write_code(data: &Path, code: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = code_path(data);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(format!("{code}\n").as_bytes())?;
    Ok(path)
}

/// Removes the code file once setup is done (it is useless then).
pub fn remove_code(data: &Path) {
    let path = code_path(data);
    if let Err(e) = std::fs::remove_file(&path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "could not remove the setup code");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_random_and_compare_loosely_but_exactly() {
        let (a, b) = (new_code(), new_code());
        assert_ne!(a, b);
        assert_eq!(a.len(), 23);
        assert!(matches(&a, &a.to_uppercase().replace('-', " ")));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, ""));
        assert!(!matches(&a, &a[..20]));
    }
}

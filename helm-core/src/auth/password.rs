//! Passwords: argon2id with the crate's default (OWASP-recommended) cost,
//! stored as PHC strings so the cost can rise later without a migration.
//! Hashing is slow on purpose; callers run it on a blocking thread.

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

use crate::error::{Error, Result};

/// The shortest password accepted, in characters.
pub const MIN_PASSWORD: usize = 10;
/// The longest password accepted, in bytes (hashing cost grows with length).
pub const MAX_PASSWORD: usize = 1024;

/// Checks a new password's length.
pub fn validate(password: &str) -> Result<()> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(Error::invalid(
            "password",
            format!("use at least {MIN_PASSWORD} characters"),
        ));
    }
    if password.len() > MAX_PASSWORD {
        return Err(Error::invalid(
            "password",
            format!("use at most {MAX_PASSWORD} bytes"),
        ));
    }
    Ok(())
}

/// Hashes a password with a fresh random salt (blocking; slow on purpose).
pub fn hash(password: &str) -> Result<String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| Error::Internal(format!("hashing a password failed: {e}")))
}

/// Whether `password` matches `stored` (blocking). A malformed stored hash
/// never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    if password.len() > MAX_PASSWORD {
        return false;
    }
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_only_its_password() -> Result<()> {
        let stored = hash("correct horse battery")?;
        assert!(stored.starts_with("$argon2id$"));
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse batterY", &stored));
        assert!(!verify("anything", "not a hash"));
        assert!(validate("short").is_err());
        assert!(validate("long enough now").is_ok());
        Ok(())
    }
}

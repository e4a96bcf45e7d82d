//! Random secrets and their stored form.
//!
//! A secret is 32 bytes from the operating system's random source, written as
//! hex behind a short prefix that says what it is (`hs_` sessions, `helm_`
//! API tokens, `hinv_` invitations, `hot_` Open Terminal keys, `hnode_` the
//! keys nodes present to each other), so a leaked one is recognisable in
//! logs and secret scanners. Only [`digest`] of it is stored: with 256 bits of
//! entropy a plain SHA-256 cannot be reversed or guessed, and looking it up is
//! one indexed read.

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The prefix of a session secret.
pub const SESSION_PREFIX: &str = "hs_";
/// The prefix of an API token.
pub const TOKEN_PREFIX: &str = "helm_";
/// The prefix of an invitation code.
pub const INVITE_PREFIX: &str = "hinv_";
/// The prefix of a channel's Open Terminal key.
pub const OT_KEY_PREFIX: &str = "hot_";
/// The prefix of the key a server node presents to the other nodes that
/// share its store.
pub const NODE_KEY_PREFIX: &str = "hnode_";

/// The longest secret accepted for lookup; anything longer is not ours.
const MAX_SECRET: usize = 128;

/// A new secret: `prefix` followed by 64 hex digits.
pub fn generate(prefix: &str) -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Internal(format!("the system random source failed: {e}")))?;
    Ok(format!("{prefix}{}", hex(&bytes)))
}

/// The stored form of a secret: its SHA-256, in hex.
pub fn digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Whether `secret` could be one of ours with `prefix` (cheap, before any
/// lookup, so junk never reaches the store).
pub fn looks_like(secret: &str, prefix: &str) -> bool {
    secret.len() <= MAX_SECRET
        && secret
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.len() == 64 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_unique_prefixed_and_digest_stably() -> Result<()> {
        let a = generate(TOKEN_PREFIX)?;
        let b = generate(TOKEN_PREFIX)?;
        assert_ne!(a, b);
        assert!(looks_like(&a, TOKEN_PREFIX));
        assert!(!looks_like(&a, SESSION_PREFIX));
        assert!(!looks_like("helm_xyz", TOKEN_PREFIX));
        assert_eq!(digest(&a), digest(&a));
        assert_ne!(digest(&a), digest(&b));
        assert_eq!(digest(&a).len(), 64);
        Ok(())
    }
}

//! Channels: a durable domain of work, each with exactly one resident agent
//! (except `#main`, Skipper's home).

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::enums::string_enum;
use super::ids::{ChannelId, UserId};
use crate::error::{Error, Result};

/// The longest channel name accepted.
pub const MAX_CHANNEL_NAME: usize = 64;
/// The longest purpose accepted, in bytes.
pub const MAX_PURPOSE: usize = 4000;
/// The name of Skipper's home channel.
pub const HOME_CHANNEL: &str = "main";

/// A validated channel name: lowercase letters, digits, `-` and `_`, starting
/// with a letter or digit, not all digits (those are ids), at most 64 characters.
/// A leading `#` is accepted and dropped; ASCII capitals are lowered.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ChannelName(String);

/// A valid name close to `bare`, if there is one: lowercased, every run of
/// other characters made one '-', trimmed ("Bad Name!" → "bad-name").
fn suggested(bare: &str) -> Option<String> {
    let mut out = String::new();
    for c in bare.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out
        .trim_end_matches('-')
        .chars()
        .take(MAX_CHANNEL_NAME)
        .collect();
    let out = out.trim_end_matches('-').to_string();
    ChannelName::parse(&out).is_ok().then_some(out)
}

/// ", as in NAME" for a suggestion, nothing without one.
fn as_in(suggestion: Option<String>) -> String {
    suggestion
        .map(|s| format!(", as in {s:?}"))
        .unwrap_or_default()
}

impl ChannelName {
    /// Parses and validates a channel name as a user typed it.
    pub fn parse(input: &str) -> Result<Self> {
        let bare = input.strip_prefix('#').unwrap_or(input);
        let bad = |reason: String| Err(Error::invalid("channel name", reason));
        if bare.is_empty() {
            return bad("a channel needs a name, such as launch or home-renovation".into());
        }
        if let Some(c) = bare.chars().find(|c| c.is_control()) {
            return bad(format!(
                "{input:?} contains the control character {:?}; use letters, digits, '-' and '_'",
                c
            ));
        }
        if bare.chars().any(char::is_whitespace) {
            return bad(format!(
                "{input:?} contains spaces; use '-' instead{}",
                as_in(suggested(bare))
            ));
        }
        if bare.contains('/') || bare.contains('\\') || bare.contains('.') {
            return bad(format!(
                "{input:?} contains '/', '\\' or '.'; a channel name is not a path"
            ));
        }
        if bare.chars().count() > MAX_CHANNEL_NAME {
            return bad(format!(
                "{} characters is too long; the limit is {MAX_CHANNEL_NAME}",
                bare.chars().count()
            ));
        }
        let lowered = bare.to_ascii_lowercase();
        if !lowered
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return bad(format!(
                "{input:?} may only use letters a-z, digits, '-' and '_'{}",
                as_in(suggested(bare))
            ));
        }
        if !lowered.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return bad(format!("{input:?} must start with a letter or digit"));
        }
        if lowered.chars().all(|c| c.is_ascii_digit()) {
            return bad(format!(
                "{input:?} is all digits, which reads as an id; add a letter"
            ));
        }
        Ok(ChannelName(lowered))
    }

    /// The name without `#`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Wraps a name read back from the store, which only ever holds validated names.
    pub(crate) fn from_stored(name: String) -> Self {
        ChannelName(name)
    }
}

impl fmt::Display for ChannelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl<'de> Deserialize<'de> for ChannelName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ChannelName::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// How a user names a channel: `launch`, `#launch`, or its numeric id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelRef {
    /// By id.
    Id(ChannelId),
    /// By name.
    Name(ChannelName),
}

impl FromStr for ChannelRef {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
            return s.parse().map(ChannelRef::Id);
        }
        ChannelName::parse(s).map(ChannelRef::Name)
    }
}

impl fmt::Display for ChannelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelRef::Id(id) => write!(f, "{id}"),
            ChannelRef::Name(name) => write!(f, "{name}"),
        }
    }
}

impl From<ChannelId> for ChannelRef {
    fn from(id: ChannelId) -> Self {
        ChannelRef::Id(id)
    }
}

/// Checks a purpose: required, not only whitespace, at most [`MAX_PURPOSE`] bytes.
/// Returns it trimmed.
pub fn validate_purpose(purpose: &str) -> Result<String> {
    let trimmed = purpose.trim();
    if trimmed.is_empty() {
        return Err(Error::MissingPurpose);
    }
    if trimmed.len() > MAX_PURPOSE {
        return Err(Error::invalid(
            "purpose",
            format!(
                "{} bytes is too long; keep it under {MAX_PURPOSE} and put details in the instructions",
                trimmed.len()
            ),
        ));
    }
    Ok(trimmed.to_string())
}

string_enum! {
    /// Whether a channel is Skipper's home or an ordinary agent channel.
    ChannelKind as "channel kind" {
        /// `#main`: Skipper's home, one per workspace.
        Home => "home",
        /// An ordinary channel with one resident agent.
        Agent => "agent",
    }
}

string_enum! {
    /// A channel's lifecycle state.
    ChannelStatus as "channel status" {
        /// In use; its agent can work.
        Active => "active",
        /// Paused; everything is kept and can be restored.
        Archived => "archived",
    }
}

string_enum! {
    /// Who may see a channel.
    Visibility as "visibility" {
        /// Every workspace member.
        Public => "public",
        /// Only its members (and the Captain and admins).
        Private => "private",
    }
}

/// A channel: a durable domain of work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    /// Its id.
    pub id: ChannelId,
    /// Its unique name among live channels.
    pub name: ChannelName,
    /// What it is for, in the words of whoever created it.
    pub purpose: String,
    /// Home or agent channel.
    pub kind: ChannelKind,
    /// Active or archived.
    pub status: ChannelStatus,
    /// Public or private.
    pub visibility: Visibility,
    /// Who created it.
    pub created_by: UserId,
    /// When.
    pub created: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_and_checked() {
        assert_eq!(
            ChannelName::parse("#Launch").map(|n| n.0).ok(),
            Some("launch".into())
        );
        assert!(ChannelName::parse("2026-plans").is_ok());
        for bad in ["", "#", "a/b", "..", "a b", "a\u{7}", "-x", "123", "é"] {
            assert!(ChannelName::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(ChannelName::parse(&"x".repeat(65)).is_err());
        assert!(ChannelName::parse(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn a_bad_name_suggests_only_a_name_that_is_valid() {
        let message = |input: &str| {
            ChannelName::parse(input)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(
            message("Bad Name!").ends_with(r#"as in "bad-name""#),
            "{}",
            message("Bad Name!")
        );
        assert!(message("Q3 plans").ends_with(r#"as in "q3-plans""#));
        assert!(message("café-plans").ends_with(r#"as in "caf-plans""#));
        // Nothing valid is near: no suggestion at all.
        assert!(!message("!! ??").contains("as in"), "{}", message("!! ??"));
        assert!(!message("é è").contains("as in"), "{}", message("é è"));
        assert!(message("12 34").ends_with(r#"as in "12-34""#));
    }

    #[test]
    fn refs_distinguish_ids_from_names() {
        assert_eq!(
            "12".parse::<ChannelRef>().ok(),
            Some(ChannelRef::Id(ChannelId(12)))
        );
        assert!(matches!(
            "#ops".parse::<ChannelRef>(),
            Ok(ChannelRef::Name(_))
        ));
    }

    #[test]
    fn purpose_is_required() {
        assert!(matches!(
            validate_purpose(" \n\t"),
            Err(Error::MissingPurpose)
        ));
        assert_eq!(validate_purpose("  plan  ").ok().as_deref(), Some("plan"));
    }
}

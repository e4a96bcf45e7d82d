//! What a tool call produced: text for the model, a line for the journal.

use crate::error::{Error, ErrorKind};
use crate::model::ToolStatus;

/// What a tool call produced, for the model and for the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text returned to the model.
    pub content: String,
    /// Whether the model should treat it as an error.
    pub is_error: bool,
    /// The journal status.
    pub status: ToolStatus,
    /// A short account of the result for the journal.
    pub summary: String,
    /// The isolation mode a command ran under, when the tool ran one.
    pub isolation: Option<String>,
}

impl ToolOutput {
    /// A successful result whose journal line is the text itself (clipped).
    pub fn text(content: impl Into<String>) -> Self {
        let content = content.into();
        let summary = clip(&content, 200);
        ToolOutput::ok(content, summary)
    }

    /// A successful result with its own journal line.
    pub fn ok(content: impl Into<String>, summary: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            status: ToolStatus::Ok,
            summary: summary.into(),
            isolation: None,
        }
    }

    /// A failed call: the model reads `error: MESSAGE` and may try again.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        ToolOutput {
            content: format!("error: {message}"),
            is_error: true,
            status: ToolStatus::Error,
            summary: clip(&message, 200),
            isolation: None,
        }
    }

    /// A call refused by a rule or a person (journaled as `denied`).
    pub fn denied(message: impl Into<String>) -> Self {
        ToolOutput {
            status: ToolStatus::Denied,
            ..ToolOutput::error(message)
        }
    }
}

impl From<Error> for ToolOutput {
    /// A tool's error goes back to the model, never fails the turn: refusals
    /// and missing authority as `denied`, everything else as an error.
    fn from(e: Error) -> Self {
        match e.kind() {
            ErrorKind::Refused | ErrorKind::Forbidden => ToolOutput::denied(e.to_string()),
            _ => ToolOutput::error(e.to_string()),
        }
    }
}

/// Shortens text to `max` characters, marking the cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Shortens text to `max` bytes (at a character boundary), saying how much
/// was left out.
pub fn clip_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[… {} more bytes not shown]",
        &text[..cut],
        text.len() - cut
    )
}

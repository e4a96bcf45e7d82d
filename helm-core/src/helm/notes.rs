//! Quick notes (spec §8.3): a person's note saved as a Markdown file under
//! the channel's `/workspace/notes`, named from its title and the day, and
//! never over another file, however many notes land at once.
//!
//! The note is written whole under a hidden draft name and then moved to
//! its name with a move that refuses to replace anything (the port's
//! create-new rails, `exec::files::create`), so a reader never sees half a
//! note and two notes with the same title get two files, on any computer.

use jiff::Timestamp;

use super::Helm;
use crate::error::{Error, Result};
use crate::exec::FileEntry;
use crate::exec::files::create::MAX_NAME_TRIES;
use crate::model::{ChannelRef, User};

/// The folder of the workspace notes are saved in.
pub const NOTES_DIR: &str = "notes";
/// The largest note, in bytes of Markdown.
pub const MAX_NOTE_BYTES: usize = 1024 * 1024;
/// The longest title.
pub const MAX_TITLE_CHARS: usize = 200;
/// The longest slug taken from a title or first line.
const MAX_SLUG_CHARS: usize = 48;

/// A note to save: its text, and a title when the person gave one.
#[derive(Debug, Clone, Default)]
pub struct NewNote {
    /// The note's Markdown.
    pub text: String,
    /// A title: the file's first line (`# title`) and its name. Without
    /// one, the name comes from the text's first line.
    pub title: Option<String>,
}

impl Helm {
    /// Saves `note` as a new Markdown file in `channel`'s `/workspace/notes`
    /// on behalf of `actor`, recorded as an artifact of the channel, and
    /// returns the file. The name is `<day>-<slug>.md` (UTC day, slug from
    /// the title or the first line), with `-2`, `-3`, … when taken; no
    /// existing file is ever replaced.
    pub async fn save_note(
        &self,
        actor: &User,
        channel: &ChannelRef,
        note: NewNote,
    ) -> Result<FileEntry> {
        let title = note
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(title) = title {
            if title.chars().count() > MAX_TITLE_CHARS {
                return Err(Error::invalid(
                    "title",
                    format!("a note's title is at most {MAX_TITLE_CHARS} characters"),
                ));
            }
            if title.contains(['\n', '\r']) {
                return Err(Error::invalid("title", "a note's title is one line"));
            }
        }
        let body = note.text.trim_end();
        if body.trim().is_empty() && title.is_none() {
            return Err(Error::invalid(
                "text",
                "the note is empty; write something to save",
            ));
        }
        let contents = match title {
            Some(title) if body.trim().is_empty() => format!("# {title}\n"),
            Some(title) => format!("# {title}\n\n{body}\n"),
            None => format!("{body}\n"),
        };
        if contents.len() > MAX_NOTE_BYTES {
            return Err(Error::invalid(
                "text",
                format!(
                    "the note has {} bytes; a note is at most {} KiB (save longer text as a file)",
                    contents.len(),
                    MAX_NOTE_BYTES / 1024
                ),
            ));
        }

        let files = self.workspace_files(actor, channel).await?;
        let stem = format!(
            "{}-{}",
            Timestamp::now().strftime("%Y-%m-%d"),
            slug(title.unwrap_or(first_line(body)))
        );
        let entry = files
            .create_numbered(&format!("{NOTES_DIR}/{stem}.md"), contents.into_bytes())
            .await
        .map_err(|e| match e {
            Error::Conflict(_) => Error::Conflict(format!(
                "{MAX_NAME_TRIES} notes named {stem} already exist in {NOTES_DIR}; give this one another title"
            )),
            e => e,
        })?;
        self.record_upload(actor, channel, &entry.path).await?;
        Ok(entry)
    }
}

/// The first line of `text` with words in it, without Markdown's leading
/// marks (`#`, `-`, `>`).
fn first_line(text: &str) -> &str {
    text.lines()
        .map(|l| l.trim_start_matches(['#', '-', '*', '>', ' ', '\t']).trim())
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// A file-name slug: lowercase letters and digits (any script) joined by
/// single hyphens, cut at a word boundary; `note` when nothing is left.
fn slug(text: &str) -> String {
    let mut out = String::new();
    let mut len = 0;
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        let (chars, extra) = (word.chars().count(), usize::from(len > 0));
        if len + extra + chars > MAX_SLUG_CHARS {
            if len == 0 {
                out.extend(word.chars().take(MAX_SLUG_CHARS));
            }
            break;
        }
        if extra == 1 {
            out.push('-');
        }
        out.push_str(&word);
        len += extra + chars;
    }
    if out.is_empty() { "note".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_lowercase_words() {
        assert_eq!(slug("Launch ideas: Q3 & beyond!"), "launch-ideas-q3-beyond");
        assert_eq!(slug("  "), "note");
        assert_eq!(slug("Café déjà vu"), "café-déjà-vu");
        assert_eq!(slug(&"word ".repeat(30)).len(), 44);
        assert_eq!(slug(&"ü".repeat(80)).chars().count(), MAX_SLUG_CHARS);
    }

    #[test]
    fn the_first_line_skips_markdown_marks() {
        assert_eq!(first_line("\n\n## Plan for May\nmore"), "Plan for May");
        assert_eq!(first_line("- buy milk"), "buy milk");
        assert_eq!(first_line(""), "");
    }
}

//! Rendering results: human text by default, JSON with `--json`.

use std::io::Write;

use serde::Serialize;

/// Where a command's results go.
pub struct Output {
    json: bool,
}

impl Output {
    pub fn new(json: bool) -> Self {
        Output { json }
    }

    /// Prints `value` as JSON with `--json`, or the text `human` builds.
    pub fn print<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        let text = if self.json {
            serde_json::to_string_pretty(value)?
        } else {
            printable(&human())
        };
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", text.trim_end())?;
        Ok(())
    }

    /// Prints one JSON line (for streams of events).
    #[allow(dead_code)]
    pub fn line<T: Serialize>(&self, value: &T) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(value)?)?;
        out.flush()?;
        Ok(())
    }
}

/// Text made safe for a terminal: control characters other than newline
/// and tab (escape sequences that clear the screen, retitle the window or
/// write the clipboard with OSC 52, C1 controls such as U+009B) are shown as
/// `\x1b`-style escapes instead of being sent. Messages, titles and names
/// come from other people and agents; only they are filtered, not the
/// bytes of a command the operator runs (`exec`) or a file they `cat`.
pub fn printable(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x100 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Lays out rows in aligned columns under a header.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i < last {
                let pad = widths[i] + 2 - cell.chars().count();
                out.push_str(&" ".repeat(pad));
            }
        }
        out.push('\n');
    };
    push_row(header.to_vec());
    for row in rows {
        push_row(row.iter().map(String::as_str).collect());
    }
    out
}

/// Shortens text to `max` characters for a table cell.
pub fn clip(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut s: String = one_line.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        let hostile = "hi\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}[2J\u{9b}31m done\n\tok";
        let shown = printable(hostile);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
        assert!(shown.contains("\\x1b]52;c;"), "{shown}");
        assert!(shown.ends_with("done\n\tok"));
        assert_eq!(printable("plain text"), "plain text");
    }
}

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
            human()
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

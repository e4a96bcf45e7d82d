//! History import: a JSON Lines file of threads, messages and memory records
//! from another tool (or a benchmark), checked whole before anything is
//! written, then written in one transaction.
//!
//! ```text
//! {"type":"thread","id":"s1","title":"Session 1","opened_at":"2023-05-08T13:56:00Z"}
//! {"type":"message","thread":"s1","external_id":"D1:1","author":"Caroline","text":"Hi!","at":"2023-05-08T13:56:00Z"}
//! {"type":"memory","kind":"fact","content":"Caroline is a counselor.","thread":"s1","source_external_id":"D1:1"}
//! ```
//!
//! Times are RFC 3339 strings or Unix seconds. Authors who are not users of
//! the workspace become guest authors. Every bad line is reported with its
//! line number, and a failed import writes nothing.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::MemoryKind;

/// The most bad lines listed in one error.
const MAX_REPORTED: usize = 20;

/// A thread to import.
#[derive(Debug, Clone)]
pub struct ImportThread {
    /// Its id in the file (kept as the thread's external id).
    pub id: String,
    /// Its title.
    pub title: String,
    /// When it was opened.
    pub opened_at: Option<Timestamp>,
}

/// A message to import.
#[derive(Debug, Clone)]
pub struct ImportMessage {
    /// The file's id of its thread.
    pub thread: String,
    /// Its external id, unique in the file.
    pub external_id: String,
    /// Who wrote it, by name.
    pub author: String,
    /// Its text.
    pub text: String,
    /// When it was written.
    pub at: Option<Timestamp>,
}

/// A memory record to import.
#[derive(Debug, Clone)]
pub struct ImportMemory {
    /// Its kind.
    pub kind: MemoryKind,
    /// Its text.
    pub content: String,
    /// The file's id of its thread, if any.
    pub thread: Option<String>,
    /// The external id of the message it came from, if any.
    pub source_external_id: Option<String>,
    /// For facts, how sure the source was.
    pub confidence: Option<f64>,
}

/// A checked history, ready to write.
#[derive(Debug, Clone, Default)]
pub struct ImportPlan {
    /// Threads, in file order.
    pub threads: Vec<ImportThread>,
    /// Messages, in file order.
    pub messages: Vec<ImportMessage>,
    /// Memory records, in file order.
    pub memories: Vec<ImportMemory>,
}

/// What an import wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportReport {
    /// Threads created.
    pub threads: usize,
    /// Messages created.
    pub messages: usize,
    /// Memory records created.
    pub memories: usize,
}

/// A `"type": "thread"` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadLine {
    id: Value,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    opened_at: Option<Value>,
}

/// A `"type": "message"` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageLine {
    thread: Value,
    external_id: Value,
    author: String,
    text: String,
    #[serde(default)]
    at: Option<Value>,
}

/// A `"type": "memory"` line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryLine {
    kind: String,
    content: String,
    #[serde(default)]
    thread: Option<Value>,
    #[serde(default)]
    source_external_id: Option<Value>,
    #[serde(default)]
    confidence: Option<f64>,
}

/// One line of a history, by its `"type"`.
enum Line {
    Thread(ThreadLine),
    Message(MessageLine),
    Memory(MemoryLine),
}

/// The kinds of line, as `"type"` names them.
const LINE_TYPES: [&str; 3] = ["thread", "message", "memory"];

/// One line read, or what is wrong with it in the file's own terms: serde's
/// wording speaks of variants and idents, places the fault on "line 1"
/// (the line alone) and does not say which field has the wrong type.
fn read_line(line: &str) -> std::result::Result<Line, String> {
    let value: Value = serde_json::from_str(line)
        .map_err(|e| format!("is not JSON (at column {}: {})", e.column(), bare(&e)))?;
    let Value::Object(mut fields) = value else {
        return Err("is not a JSON object; each line is one object with a \"type\"".into());
    };
    let kind = match fields.remove("type") {
        Some(Value::String(kind)) => kind,
        found => {
            let why = if found.is_some() {
                "\"type\" is not a string"
            } else {
                "has no \"type\""
            };
            return Err(format!("{why}; it is one of {}", quoted(&LINE_TYPES)));
        }
    };
    let fields = Value::Object(fields);
    let read = match kind.as_str() {
        "thread" => fields_of(fields).map(Line::Thread),
        "message" => fields_of(fields).map(Line::Message),
        "memory" => fields_of(fields).map(Line::Memory),
        _ => {
            return Err(format!(
                "\"type\" {kind:?} is not one of {}",
                quoted(&LINE_TYPES)
            ));
        }
    };
    read.map_err(|e| {
        let field = e.path().to_string();
        let why = e.inner().to_string();
        if let Some(missing) = field_named(&why, "missing field `") {
            format!("a {kind} needs \"{missing}\"")
        } else if let Some(unknown) = field_named(&why, "unknown field `") {
            format!("\"{unknown}\" is not a field of a {kind}")
        } else if let Some((found, wanted)) = why
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split_once(", expected "))
        {
            format!("\"{field}\" must be {wanted}, not {found}")
        } else {
            format!("\"{field}\": {why}")
        }
    })
}

/// A line's fields (its `"type"` taken out) as `T`, with the path of the
/// field at fault.
fn fields_of<T: serde::de::DeserializeOwned>(
    fields: Value,
) -> std::result::Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(fields)
}

/// The field a serde message names after `prefix`, up to its closing
/// backquote.
fn field_named<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message.strip_prefix(prefix)?.split('`').next()
}

/// A JSON syntax error without serde's "at line 1 column N" (the line
/// number is the file's, given apart).
fn bare(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `"a", "b", "c"`.
fn quoted(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An id given as a string or a number.
fn id_text(v: &Value, field: &str) -> std::result::Result<String, String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(format!(
            "\"{field}\" must be a non-empty string or a number"
        )),
    }
}

fn time(v: &Value, field: &str) -> std::result::Result<Timestamp, String> {
    match v {
        Value::String(s) => s.trim().parse::<Timestamp>().map_err(|e| {
            format!("\"{field}\" {s:?} is not an RFC 3339 time such as 2023-05-08T13:56:00Z ({e})")
        }),
        Value::Number(n) => n
            .as_i64()
            .and_then(|secs| Timestamp::from_second(secs).ok())
            .ok_or_else(|| format!("\"{field}\" {n} is not a Unix time in seconds")),
        _ => Err(format!(
            "\"{field}\" must be an RFC 3339 string or Unix seconds"
        )),
    }
}

/// Reads and checks a whole history. Returns every problem at once (up to
/// a limit), each with its line number.
pub fn parse_history(reader: impl BufRead) -> Result<ImportPlan> {
    let mut plan = ImportPlan::default();
    let mut problems: Vec<String> = Vec::new();
    let mut problem_count = 0usize;
    let mut thread_ids: HashSet<String> = HashSet::new();
    let mut message_ids: HashMap<String, String> = HashMap::new();
    let mut memory_lines: Vec<(usize, usize)> = Vec::new();
    let mut message_lines: Vec<usize> = Vec::new();
    let mut report = |line: usize, why: String, problems: &mut Vec<String>| {
        problem_count += 1;
        if problems.len() < MAX_REPORTED {
            problems.push(format!("line {line}: {why}"));
        }
    };

    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line = match line {
            Ok(line) => line,
            // Not text here (invalid UTF-8): a problem of this line; read on.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                report(number, format!("cannot be read ({e})"), &mut problems);
                continue;
            }
            // The reader itself failed (a directory, a device): the same
            // error would come back for every line, so stop here.
            Err(e) => {
                return Err(Error::invalid(
                    "history",
                    format!("it cannot be read at line {number}: {e}; give a JSON Lines file"),
                ));
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let parsed = match read_line(&line) {
            Ok(parsed) => parsed,
            Err(why) => {
                report(number, why, &mut problems);
                continue;
            }
        };
        let checked: std::result::Result<(), String> = (|| {
            match parsed {
                Line::Thread(ThreadLine {
                    id,
                    title,
                    opened_at,
                }) => {
                    let id = id_text(&id, "id")?;
                    if !thread_ids.insert(id.clone()) {
                        return Err(format!("thread {id:?} is defined twice"));
                    }
                    plan.threads.push(ImportThread {
                        title: title
                            .filter(|t| !t.trim().is_empty())
                            .unwrap_or_else(|| format!("Imported thread {id}")),
                        id,
                        opened_at: opened_at
                            .as_ref()
                            .map(|v| time(v, "opened_at"))
                            .transpose()?,
                    });
                }
                Line::Message(MessageLine {
                    thread,
                    external_id,
                    author,
                    text,
                    at,
                }) => {
                    let thread = id_text(&thread, "thread")?;
                    let external_id = id_text(&external_id, "external_id")?;
                    if author.trim().is_empty() {
                        return Err("\"author\" must not be empty".into());
                    }
                    if text.trim().is_empty() {
                        return Err("\"text\" must not be empty".into());
                    }
                    if message_ids
                        .insert(external_id.clone(), thread.clone())
                        .is_some()
                    {
                        return Err(format!("\"external_id\" {external_id:?} is used twice"));
                    }
                    plan.messages.push(ImportMessage {
                        thread,
                        external_id,
                        author: author.trim().to_string(),
                        text,
                        at: at.as_ref().map(|v| time(v, "at")).transpose()?,
                    });
                    message_lines.push(number);
                }
                Line::Memory(MemoryLine {
                    kind,
                    content,
                    thread,
                    source_external_id,
                    confidence,
                }) => {
                    let kind: MemoryKind = kind.parse().map_err(|e: Error| e.to_string())?;
                    if content.trim().is_empty() {
                        return Err("\"content\" must not be empty".into());
                    }
                    if let Some(c) = confidence
                        && !(0.0..=1.0).contains(&c)
                    {
                        return Err(format!("\"confidence\" {c} is not between 0 and 1"));
                    }
                    plan.memories.push(ImportMemory {
                        kind,
                        content,
                        thread: thread.as_ref().map(|v| id_text(v, "thread")).transpose()?,
                        source_external_id: source_external_id
                            .as_ref()
                            .map(|v| id_text(v, "source_external_id"))
                            .transpose()?,
                        confidence,
                    });
                    memory_lines.push((number, plan.memories.len() - 1));
                }
            }
            Ok(())
        })();
        if let Err(why) = checked {
            report(number, why, &mut problems);
        }
    }

    // References are checked once the whole file is read, so order does not matter.
    for (message, line) in plan.messages.iter().zip(&message_lines) {
        if !thread_ids.contains(&message.thread) {
            report(
                *line,
                format!("thread {:?} is not defined in the file", message.thread),
                &mut problems,
            );
        }
    }
    for (line, index) in &memory_lines {
        let memory = &plan.memories[*index];
        if let Some(t) = &memory.thread
            && !thread_ids.contains(t)
        {
            report(
                *line,
                format!("thread {t:?} is not defined in the file"),
                &mut problems,
            );
        }
        if let Some(source) = &memory.source_external_id
            && !message_ids.contains_key(source)
        {
            report(
                *line,
                format!("\"source_external_id\" {source:?} names no message in the file"),
                &mut problems,
            );
        }
    }

    if problem_count > 0 {
        let more = problem_count.saturating_sub(problems.len());
        let mut reason = format!(
            "{problem_count} bad line(s); nothing was imported:\n  {}",
            problems.join("\n  ")
        );
        if more > 0 {
            reason.push_str(&format!("\n  … and {more} more"));
        }
        return Err(Error::invalid("history", reason));
    }
    if plan.threads.is_empty() && plan.messages.is_empty() && plan.memories.is_empty() {
        return Err(Error::invalid(
            "history",
            "the file has no threads, messages or memory records",
        ));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader whose every read fails, as a directory's does (it stops
    /// after 1,000 reads, so a parser that reads on cannot hang the test).
    struct Failing(usize);

    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            self.0 += 1;
            if self.0 > 1000 {
                return Ok(0);
            }
            Err(std::io::Error::other("Is a directory"))
        }
    }

    #[test]
    fn a_history_that_cannot_be_read_stops_at_once() {
        let err = parse_history(std::io::BufReader::new(Failing(0))).err();
        let Some(err) = err else {
            panic!("an unreadable history parsed");
        };
        assert_eq!(err.kind(), crate::ErrorKind::Invalid);
        assert!(
            err.to_string()
                .contains("cannot be read at line 1: Is a directory"),
            "{err}"
        );
    }

    #[test]
    fn a_good_history_parses_in_any_order() -> Result<()> {
        let text = r#"
{"type":"message","thread":"s1","external_id":"D1:1","author":"Caroline","text":"Hi","at":"2023-05-08T13:56:00Z"}
{"type":"thread","id":"s1","title":"Session 1","opened_at":1683554160}
{"type":"memory","kind":"fact","content":"Caroline says hi.","thread":"s1","source_external_id":"D1:1"}
"#;
        let plan = parse_history(text.as_bytes())?;
        assert_eq!(
            (plan.threads.len(), plan.messages.len(), plan.memories.len()),
            (1, 1, 1)
        );
        assert_eq!(
            plan.threads[0].opened_at.map(|t| t.as_second()),
            Some(1_683_554_160)
        );
        Ok(())
    }

    #[test]
    fn every_bad_line_is_reported_with_its_number() {
        let text = r#"{"type":"thread","id":"s1"}
not json
{"type":"message","thread":"s9","external_id":"x","author":"a","text":"t"}
{"type":"memory","kind":"rumour","content":"c"}
{"type":"message","thread":"s1","external_id":"x","author":"a","text":"t","at":"yesterday"}
{"type":"memory","kind":"fact","content":"c","source_external_id":"nope"}
{"type":"planet","id":1}"#;
        let err = parse_history(text.as_bytes())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        for line in [
            "line 2:", "line 3:", "line 4:", "line 5:", "line 6:", "line 7:",
        ] {
            assert!(err.contains(line), "{line} missing from {err}");
        }
        assert!(!err.contains("line 1:"), "{err}");
        assert!(err.contains("nothing was imported"));
    }

    #[test]
    fn a_bad_line_is_described_in_the_files_terms() {
        let text = r#"{"type":"thread","id":"t"}
{"thread":"t","author":"a","text":"x"}
{"type":"msg","thread":"t"}
{"type":"message","thread":"t","author":"a","text":"x"}
{"type":"message","thread":"t","external_id":"1","author":"a","text":5}
{"type":"message","thread":"t","external_id":"2","author":"a","text":"x","extra":1}
not json
[1, 2]
{"type":7}
{"type":"message","thread":"t","external_id":"1","author":"a","text":"y","at":"yesterday"}"#;
        let err = parse_history(text.as_bytes())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        for said in [
            r#"line 2: has no "type"; it is one of "thread", "message", "memory""#,
            r#"line 3: "type" "msg" is not one of "thread", "message", "memory""#,
            r#"line 4: a message needs "external_id""#,
            r#"line 5: "text" must be a string, not integer `5`"#,
            r#"line 6: "extra" is not a field of a message"#,
            "line 7: is not JSON (at column 2: expected ident)",
            r#"line 8: is not a JSON object; each line is one object with a "type""#,
            r#"line 9: "type" is not a string; it is one of "thread", "message", "memory""#,
            r#"line 10: "at" "yesterday" is not an RFC 3339 time"#,
        ] {
            assert!(err.contains(said), "{said:?} missing from {err}");
        }
        assert!(
            !err.contains("variant") && !err.contains("line 1 column"),
            "{err}"
        );
    }
}

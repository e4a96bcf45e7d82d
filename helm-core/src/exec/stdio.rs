//! Long-running programs that speak over stdin and stdout (an MCP server,
//! a language server): started in a computer exactly as a command is (the
//! same sandbox, uid, limits and scrubbed environment, `/workspace` as the
//! working directory), but kept running and read as a byte stream.
//! Dropping the [`StdioHandle`] kills the program and everything it started.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::output::{OutputTail, tail_text};
use super::process_tree::kill_tree;

/// The stderr kept of a stdio program, for diagnostics.
pub const STDIO_STDERR_TAIL: usize = 16 * 1024;

/// A program to start with its stdin and stdout as a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioSpec {
    /// The program, found on the sandbox's `PATH` or by path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables added to the computer's scrubbed environment.
    pub env: Vec<(String, String)>,
}

impl StdioSpec {
    /// A program with arguments and no extra environment.
    pub fn new(program: impl Into<String>, args: Vec<String>) -> Self {
        StdioSpec {
            program: program.into(),
            args,
            env: Vec::new(),
        }
    }

    /// The shell line that runs it in place of the shell (`exec 'prog' 'arg'`),
    /// every word quoted so nothing in it is interpreted.
    pub(crate) fn command_line(&self) -> String {
        let mut line = String::from("exec");
        for word in std::iter::once(&self.program).chain(&self.args) {
            line.push(' ');
            line.push('\'');
            line.push_str(&word.replace('\'', r"'\''"));
            line.push('\'');
        }
        line
    }
}

/// A started stdio program: its two pipes and the handle that keeps it.
pub struct StdioProcess {
    /// What it writes (its stdout).
    pub stdout: Box<dyn AsyncRead + Send + Unpin>,
    /// What it reads (its stdin).
    pub stdin: Box<dyn AsyncWrite + Send + Unpin>,
    /// Its lifetime: dropping it kills the program.
    pub handle: StdioHandle,
}

/// Keeps a stdio program alive; dropping it kills the program's whole tree.
pub struct StdioHandle {
    pub(crate) pid: u32,
    pub(crate) stderr: Arc<Mutex<OutputTail>>,
    pub(crate) exited: watch::Receiver<bool>,
}

impl StdioHandle {
    /// The last of what it wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let tail = self
            .stderr
            .lock()
            .map(|t| t.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        tail_text(&tail.bytes(), tail.truncated())
    }

    /// Whether it has ended.
    pub fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }
}

impl Drop for StdioHandle {
    fn drop(&mut self) {
        if !self.has_exited() {
            kill_tree(self.pid);
        }
    }
}

impl std::fmt::Debug for StdioHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioHandle")
            .field("pid", &self.pid)
            .field("exited", &self.has_exited())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_quoted() {
        let spec = StdioSpec::new("node", vec!["it's".into(), "$HOME;rm -rf /".into()]);
        assert_eq!(
            spec.command_line(),
            r#"exec 'node' 'it'\''s' '$HOME;rm -rf /'"#
        );
    }
}

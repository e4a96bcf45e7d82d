//! The computer ports really swap: a Helm built with its own executor,
//! files and terminals (wrappers that record every call, real processes
//! and real files underneath) sends the resident agent's tool calls and
//! the facade's operations through them, and an executor that refuses
//! shows up as the tool's error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use helm_core::exec::{
    CommandResult, CommandSpec, Computer, ComputerOptions, Executor, FileBytes, FileEntry,
    FileText, Files, FilesProvider, GlobResult, GrepQuery, GrepResult, Isolation, LineRange,
    LocalComputers, LocalFiles, LocalTerminals, OneExecutor, Opener, RunningCommand, SandboxUser,
    StdioProcess, StdioSpec, TerminalInfo, TerminalSession, TerminalSize, Terminals,
};
use helm_core::model::{ChannelId, ChannelRef, ToolStatus, TurnState};
use helm_core::provider::{ChatMessage, ScriptedReply};
use helm_core::{ComputerPorts, ErrorKind, Result};
use helm_tests::TestHelm;

/// Runs commands on the local executor and records each one with the
/// channel whose computer it ran in.
struct RecordingExecutor {
    inner: Arc<dyn Executor>,
    commands: Mutex<Vec<(Option<ChannelId>, String)>>,
}

impl RecordingExecutor {
    fn commands(&self) -> Vec<(Option<ChannelId>, String)> {
        self.commands.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn record(&self, computer: &Computer, spec: &CommandSpec) {
        if let Ok(mut commands) = self.commands.lock() {
            commands.push((computer.channel, spec.command.clone()));
        }
    }
}

#[async_trait]
impl Executor for RecordingExecutor {
    fn channel_isolation(&self) -> Isolation {
        self.inner.channel_isolation()
    }
    fn sandbox_user(&self, channel: ChannelId) -> Result<Option<SandboxUser>> {
        self.inner.sandbox_user(channel)
    }
    async fn kill_leftovers(&self) -> usize {
        self.inner.kill_leftovers().await
    }
    async fn start(
        &self,
        computer: &Computer,
        spec: CommandSpec,
    ) -> Result<Arc<dyn RunningCommand>> {
        self.record(computer, &spec);
        self.inner.start(computer, spec).await
    }
    async fn run(&self, computer: &Computer, spec: CommandSpec) -> Result<CommandResult> {
        self.record(computer, &spec);
        self.inner.run(computer, spec).await
    }
    async fn spawn_stdio(&self, computer: &Computer, spec: StdioSpec) -> Result<StdioProcess> {
        self.inner.spawn_stdio(computer, spec).await
    }
}

/// An executor whose computers are unreachable: every command is refused.
struct OfflineExecutor;

#[async_trait]
impl Executor for OfflineExecutor {
    fn channel_isolation(&self) -> Isolation {
        Isolation::Process
    }
    async fn start(&self, _: &Computer, _: CommandSpec) -> Result<Arc<dyn RunningCommand>> {
        Err(helm_core::Error::Refused(
            "the remote computer is offline".into(),
        ))
    }
}

/// Counts the file calls of every workspace it hands out, by operation.
#[derive(Default)]
struct CountingFiles {
    calls: Arc<Mutex<Vec<String>>>,
}

impl CountingFiles {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl FilesProvider for CountingFiles {
    fn files(&self, computer: &Computer, read_only: Option<String>) -> Result<Arc<dyn Files>> {
        Ok(Arc::new(Counted {
            inner: LocalFiles.files(computer, read_only)?,
            calls: self.calls.clone(),
        }))
    }
}

#[derive(Debug)]
struct Counted {
    inner: Arc<dyn Files>,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Counted {
    fn note(&self, op: &str, path: &str) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(format!("{op} {path}"));
        }
    }
}

#[async_trait]
impl Files for Counted {
    fn is_confined(&self) -> bool {
        self.inner.is_confined()
    }
    async fn list(&self, path: &str) -> Result<Vec<FileEntry>> {
        self.note("list", path);
        self.inner.list(path).await
    }
    async fn stat(&self, path: &str) -> Result<FileEntry> {
        self.note("stat", path);
        self.inner.stat(path).await
    }
    async fn read(&self, path: &str, lines: Option<LineRange>) -> Result<FileText> {
        self.note("read", path);
        self.inner.read(path, lines).await
    }
    async fn read_bytes(&self, path: &str, limit: usize) -> Result<FileBytes> {
        self.note("read_bytes", path);
        self.inner.read_bytes(path, limit).await
    }
    async fn write(&self, path: &str, contents: Vec<u8>) -> Result<FileEntry> {
        self.note("write", path);
        self.inner.write(path, contents).await
    }
    async fn mkdir(&self, path: &str) -> Result<FileEntry> {
        self.note("mkdir", path);
        self.inner.mkdir(path).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<FileEntry> {
        self.note("rename", from);
        self.inner.rename(from, to).await
    }
    async fn delete(&self, path: &str, recursive: bool) -> Result<()> {
        self.note("delete", path);
        self.inner.delete(path, recursive).await
    }
    async fn grep(&self, query: GrepQuery) -> Result<GrepResult> {
        self.note("grep", &query.pattern);
        self.inner.grep(query).await
    }
    async fn glob(&self, pattern: &str) -> Result<GlobResult> {
        self.note("glob", pattern);
        self.inner.glob(pattern).await
    }
}

/// Local terminals that count how many were opened through them.
struct CountingTerminals {
    inner: LocalTerminals,
    opened: AtomicUsize,
}

#[async_trait]
impl Terminals for CountingTerminals {
    async fn open(
        &self,
        computer: &Computer,
        size: TerminalSize,
        opener: Option<Opener>,
    ) -> Result<Arc<TerminalSession>> {
        self.opened.fetch_add(1, Ordering::SeqCst);
        self.inner.open(computer, size, opener).await
    }
    fn get(&self, id: u64) -> Result<Arc<TerminalSession>> {
        self.inner.get(id)
    }
    fn list(&self, channel: Option<ChannelId>) -> Vec<TerminalInfo> {
        self.inner.list(channel)
    }
    async fn close(&self, id: u64) -> Result<()> {
        self.inner.close(id).await
    }
    async fn close_channel(&self, channel: ChannelId) -> Result<()> {
        self.inner.close_channel(channel).await
    }
}

fn tool_results(requests: &[helm_core::provider::ChatRequest]) -> Vec<(String, bool)> {
    requests
        .iter()
        .flat_map(|r| r.messages.iter())
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_agents_tools_and_the_facade_go_through_the_injected_ports() -> anyhow::Result<()> {
    let local = LocalComputers::new(ComputerOptions::default(), None);
    let recording = Arc::new(RecordingExecutor {
        inner: local.local().await?,
        commands: Mutex::new(Vec::new()),
    });
    let files = Arc::new(CountingFiles::default());
    let terminals = Arc::new(CountingTerminals {
        inner: LocalTerminals::new(Default::default(), Arc::new(local)),
        opened: AtomicUsize::new(0),
    });
    let (exec_port, files_port, term_port) = (recording.clone(), files.clone(), terminals.clone());
    let t = TestHelm::with_options(move |o| {
        o.ports = ComputerPorts {
            computers: Some(Arc::new(OneExecutor(exec_port))),
            files: Some(files_port),
            terminals: Some(term_port),
        };
    })
    .await?;
    let scripted = t.scripted().await?;
    t.helm
        .create_channel(&t.captain, "launch", "Plans the product launch.")
        .await?;
    let ch: ChannelRef = "launch".parse()?;
    let id = t.helm.channel(&ch).await?.channel.id;

    // The resident agent runs a command and writes a file.
    scripted.push(ScriptedReply::tool_calls(&[
        ("run_command", r#"{"command": "echo swapped-$((6 * 7))"}"#),
        (
            "write_file",
            r#"{"path": "plan.md", "content": "beta, then GA\n"}"#,
        ),
    ]));
    scripted.reply_text("Done.");
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent run it", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);

    // The command went through the recording executor, in launch's
    // computer, and really ran: its output reached the model.
    let commands = recording.commands();
    assert_eq!(
        commands,
        [(Some(id), "echo swapped-$((6 * 7))".to_string())],
        "the agent's command did not go through the injected executor"
    );
    let results = tool_results(&scripted.requests());
    assert!(
        results
            .iter()
            .any(|(c, err)| !err && c.contains("swapped-42")),
        "{results:?}"
    );
    // The file went through the counting files, and is really on disk.
    assert_eq!(files.calls(), ["write plan.md"]);
    let on_disk = t.helm.data_root().world(id).workspace().join("plan.md");
    assert_eq!(std::fs::read_to_string(on_disk)?, "beta, then GA\n");

    // The facade's commands, files and terminals use the same ports.
    t.helm
        .exec(&t.captain, &ch, CommandSpec::new("true"))
        .await?;
    assert_eq!(recording.commands().len(), 2);
    let fs = t.helm.files(&t.captain, &ch).await?;
    assert_eq!(fs.read("plan.md", None).await?.content, "beta, then GA\n");
    // Confinement is the local one's, unchanged behind the port.
    let escape = fs.read("../../helm.db", None).await;
    assert!(
        matches!(&escape, Err(e) if e.kind() == ErrorKind::Forbidden),
        "{escape:?}"
    );
    assert_eq!(
        files.calls(),
        ["write plan.md", "read plan.md", "read ../../helm.db"]
    );
    let term = t
        .helm
        .open_terminal(&t.captain, &ch, TerminalSize::default())
        .await?;
    assert_eq!(terminals.opened.load(Ordering::SeqCst), 1);
    assert_eq!(t.helm.channel_terminals(&t.captain, &ch).await?.len(), 1);
    t.helm.close_terminal(&t.captain, term.id()).await?;
    Ok(())
}

#[tokio::test]
async fn an_executor_that_refuses_is_what_the_agents_command_meets() -> anyhow::Result<()> {
    let t = TestHelm::with_options(|o| {
        o.ports.computers = Some(Arc::new(OneExecutor(Arc::new(OfflineExecutor))));
    })
    .await?;
    let scripted = t.scripted().await?;
    t.helm
        .create_channel(&t.captain, "launch", "Plans the product launch.")
        .await?;
    let ch: ChannelRef = "launch".parse()?;
    scripted.push(ScriptedReply::tool_calls(&[(
        "run_command",
        r#"{"command": "echo local"}"#,
    )]));
    scripted.reply_text("It is offline.");
    let posted = t
        .helm
        .post_message(&t.captain, &ch, "@launch-agent run it", None)
        .await?;
    let turn = t
        .wait_turn(posted.turn.ok_or_else(|| anyhow::anyhow!("no turn"))?.id)
        .await?;
    assert_eq!(turn.state, TurnState::Completed);
    let (_, actions) = t.helm.activity(&ch, Some(posted.thread.id), 10).await?;
    assert_eq!(actions.len(), 1);
    assert_ne!(actions[0].status, ToolStatus::Ok);
    let results = tool_results(&scripted.requests());
    assert!(
        results
            .iter()
            .any(|(c, err)| *err && c.contains("the remote computer is offline")),
        "{results:?}"
    );
    // The facade meets it too, and the isolation reported is the port's.
    let refused = t
        .helm
        .exec(&t.captain, &ch, CommandSpec::new("echo local"))
        .await;
    assert!(
        matches!(&refused, Err(e) if e.to_string().contains("offline")),
        "{refused:?}"
    );
    assert_eq!(t.helm.isolation_in_use(), Some(Isolation::Process));
    Ok(())
}

//! `1helm say CHANNEL TEXT`: post a message and stream the agent's work live.

use std::io::Write;

use anyhow::Result;
use helm_core::events::EventBody;
use helm_core::model::{Approval, ThreadId, Turn, TurnState};
use helm_core::runtime::follow::{Follow, Followed};

use super::Ctx;
use crate::backend::{Backend, EventSource};
use crate::cli::SayArgs;
use crate::exit;

pub async fn run(ctx: &Ctx, args: SayArgs) -> Result<i32> {
    let backend = ctx.backend().await?;
    let thread = args
        .thread
        .as_deref()
        .map(str::parse::<ThreadId>)
        .transpose()?;

    if args.no_wait {
        let posted = backend.post(&args.channel, &args.text, thread).await?;
        ctx.out.print(&posted, || match &posted.turn {
            Some(turn) => format!(
                "Posted in thread {}; turn {} is queued with {} ahead of it in this thread.",
                posted.thread.id, turn.id, posted.ahead
            ),
            None => format!("Posted in thread {}; no agent was woken.", posted.thread.id),
        })?;
        return Ok(exit::OK);
    }

    // Locally this process runs the turns; a server runs them by itself. The
    // event stream opens before the post, so nothing the post causes is
    // missed.
    let resident = backend.channel(&args.channel).await?.record.agent;
    backend.drive_turns().await?;
    let events = backend.events().await?;
    let posted = backend.post(&args.channel, &args.text, thread).await?;
    let thread_id = posted.thread.id;
    if posted.turn.is_none() && posted.escalation.is_none() {
        backend.stop_driving().await;
        ctx.out.print(&posted, || {
            format!(
                "Posted in thread {thread_id}. No agent was mentioned, so nobody was woken; \
                 mention {} to ask it something.",
                resident.handle
            )
        })?;
        return Ok(exit::OK);
    }
    // The post may wake more than its resident: a call for Skipper queues
    // Skipper's turn, and Skipper's answer can wake the resident again.
    let mut follow = Follow::new(thread_id, resident.id, resident.handle);
    if let Some(turn) = &posted.turn {
        follow.admit(turn);
    }
    let mut render = Render::new(ctx.out_is_json(), posted.turn.is_some());
    render.header(&posted.thread.title, thread_id, posted.ahead)?;
    follow_to_the_end(backend.as_ref(), events, follow, render).await
}

/// Streams what `follow`'s run does until its last turn ends (Ctrl-C stops
/// the thread's work), stops driving turns, and returns the exit code of
/// how the last turn ended. Through a server, a turn that waits on an
/// approval the acting person cannot give ends the following early
/// ([`exit::REFUSED`]): the server keeps the turn waiting, and nothing this
/// command could do would move it.
pub(super) async fn follow_to_the_end(
    backend: &dyn Backend,
    mut events: Box<dyn EventSource>,
    mut follow: Follow,
    mut render: Render,
) -> Result<i32> {
    let thread_id = follow.thread();
    let last = loop {
        let event = tokio::select! {
            event = events.next() => event?,
            _ = tokio::signal::ctrl_c() => {
                backend.stop_thread(thread_id).await?;
                continue;
            }
        };
        if render.json && concerns(&event.body, thread_id) {
            render.json_line(&event)?;
        }
        for step in follow.absorb(event.body) {
            if let Followed::ApprovalRequested(approval) = &step
                && !backend.me().await?.role.is_admin()
            {
                let agent = approval
                    .turn_id
                    .and_then(|t| follow.agent_of(t))
                    .map_or_else(|| "The agent".to_string(), |h| h.to_string());
                if backend.runs_turns_here() {
                    // This process runs the turn: leaving would end it, and
                    // an approval given from another shell lets it go on.
                    render.notice(&approval_notice(&agent, approval, thread_id, true))?;
                } else {
                    render.notice(&approval_notice(&agent, approval, thread_id, false))?;
                    backend.stop_driving().await;
                    return Ok(exit::REFUSED);
                }
            }
            render.step(step)?;
        }
        if let Some(last) = follow.finished() {
            break last.turn.clone();
        }
    };
    backend.stop_driving().await;
    render.footer(&last)?;
    Ok(match last.state {
        TurnState::Completed | TurnState::Waiting => exit::OK,
        TurnState::Failed => exit::UPSTREAM,
        _ => exit::REFUSED,
    })
}

/// What a person who cannot approve is told when the turn they follow
/// waits on an approval: what it waits for, who can give it and where.
/// `here`: this process runs the turn and goes on following it.
fn approval_notice(agent: &str, approval: &Approval, thread: ThreadId, here: bool) -> String {
    let id = approval.id;
    let what = format!(
        "{agent} is waiting for approval {id}: {}. Only the Captain or an admin can approve it, \
         in the web UI or with `1helm approve {id}`",
        approval.summary.trim_end_matches('.')
    );
    if here {
        format!(
            "{what}. This command runs the turn, so it waits here until then \
             (Ctrl-C stops the turn)."
        )
    } else {
        format!(
            "{what}. The agent goes on once it is approved; `1helm thread show {thread}` \
             shows how it went."
        )
    }
}

/// Whether an event belongs to the thread being followed (what `--json`
/// prints).
fn concerns(body: &EventBody, thread_id: ThreadId) -> bool {
    match body {
        EventBody::MessageCreated { message } | EventBody::MessageCompleted { message } => {
            message.thread_id == Some(thread_id)
        }
        EventBody::MessageDelta { thread_id: t, .. } => *t == Some(thread_id),
        EventBody::ThreadCreated { thread } | EventBody::ThreadUpdated { thread } => {
            thread.id == thread_id
        }
        EventBody::TurnQueued { turn, .. }
        | EventBody::TurnStarted { turn }
        | EventBody::TurnCompleted { turn }
        | EventBody::TurnFailed { turn }
        | EventBody::TurnCancelled { turn } => turn.thread_id == thread_id,
        EventBody::ToolActionStarted { action } | EventBody::ToolActionFinished { action } => {
            action.thread_id == Some(thread_id)
        }
        EventBody::EscalationChanged { escalation } => escalation.thread_id == thread_id,
        EventBody::ApprovalChanged { approval } => approval.thread_id == Some(thread_id),
        _ => false,
    }
}

/// Renders a run's steps as text (or, with `--json`, its events as JSON
/// lines).
pub(super) struct Render {
    json: bool,
    at_line_start: bool,
    /// How many turns have started. The post's own resident turn, when it
    /// woke one, starts first and goes unnamed; every other turn (Skipper's,
    /// the resident's after Skipper) is named as it starts.
    started: usize,
    resident_first: bool,
}

impl Render {
    /// `resident_first`: the run starts with the resident's turn, which
    /// goes unnamed.
    pub(super) fn new(json: bool, resident_first: bool) -> Self {
        Render {
            json,
            at_line_start: true,
            started: 0,
            resident_first,
        }
    }

    fn write(&mut self, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        // Replies and notes come from models and other people: shown, not obeyed.
        let text = crate::output::printable(text);
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        self.at_line_start = text.ends_with('\n');
        Ok(())
    }

    fn line(&mut self, text: &str) -> Result<()> {
        let prefix = if self.at_line_start { "" } else { "\n" };
        self.write(&format!("{prefix}{text}\n"))
    }

    fn json_line(&mut self, event: &helm_core::events::Event) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(event)?)?;
        out.flush()?;
        Ok(())
    }

    /// A line about the run that is not the agent's (an approval it waits
    /// on): on stdout with the run, on stderr with `--json`, whose stdout
    /// holds events only.
    fn notice(&mut self, text: &str) -> Result<()> {
        if self.json {
            eprintln!("{text}");
            return Ok(());
        }
        self.line(&format!("[helm] {text}"))
    }

    pub(super) fn header(&mut self, title: &str, thread: ThreadId, ahead: u32) -> Result<()> {
        if self.json {
            return Ok(());
        }
        self.line(&format!("── thread {thread}: {title}"))?;
        if ahead > 0 {
            self.line(&format!("(queued: {ahead} turn(s) of this thread ahead)"))?;
        }
        Ok(())
    }

    /// Renders one step of the run.
    fn step(&mut self, step: Followed) -> Result<()> {
        if self.json {
            return Ok(());
        }
        match step {
            Followed::Started { turn, agent } => {
                let model = turn.served_by.map(|m| {
                    format!(
                        "{} / {}",
                        m.provider,
                        m.model.as_deref().unwrap_or("default")
                    )
                });
                self.started += 1;
                let named = !(self.started == 1 && self.resident_first);
                let gap = if self.started > 1 { "\n" } else { "" };
                match (named, model) {
                    (false, Some(model)) => self.line(&format!("(working: {model})"))?,
                    (false, None) => {}
                    (true, Some(model)) => {
                        self.line(&format!("{gap}{agent} (working: {model})"))?;
                    }
                    (true, None) => self.line(&format!("{gap}{agent}"))?,
                }
            }
            Followed::Text { text, .. } => self.write(&text)?,
            Followed::ToolStarted(action) => self.line(&format!("  ⚙ {}", action.input_summary))?,
            Followed::ToolFinished(action) => {
                let took = action.duration_ms.unwrap_or(0);
                self.line(&format!(
                    "    → {} ({took} ms){}",
                    action.status,
                    if action.result_summary.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", action.result_summary)
                    }
                ))?;
            }
            Followed::Note(message) => self.line(&format!("[helm] {}", message.content))?,
            Followed::Ended(ended) => match ended.turn.state {
                TurnState::Completed => {}
                other => self.line(&format!("({} turn {other})", ended.agent))?,
            },
            // Helm's note in the thread says these in words already.
            Followed::ApprovalRequested(_) | Followed::SkipperCalled(_) => {}
        }
        Ok(())
    }

    fn footer(&mut self, last: &Turn) -> Result<()> {
        if self.json {
            return Ok(());
        }
        if last.state == TurnState::Completed {
            self.line("")?;
        }
        Ok(())
    }
}

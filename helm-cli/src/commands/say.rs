//! `1helm say CHANNEL TEXT`: post a message and stream the agent's work live.

use std::io::Write;

use anyhow::Result;
use helm_core::events::EventBody;
use helm_core::model::{Author, ThreadId, Turn, TurnState};

use super::Ctx;
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

    // Locally this process runs the turn; a server runs it by itself. The
    // event stream opens before the post, so nothing the post causes is missed.
    backend.drive_turns().await?;
    let mut events = backend.events().await?;
    let posted = backend.post(&args.channel, &args.text, thread).await?;
    let thread_id = posted.thread.id;
    let Some(turn) = posted.turn.clone() else {
        backend.stop_driving().await;
        ctx.out.print(&posted, || {
            format!(
                "Posted in thread {thread_id}. No agent was mentioned, so nobody was woken; \
                 mention the channel's agent to ask it something."
            )
        })?;
        return Ok(exit::OK);
    };
    let mut render = Render::new(ctx.out_is_json(), turn.clone());
    render.header(&posted.thread.title, thread_id, posted.ahead)?;

    let ended = loop {
        let event = tokio::select! {
            event = events.next() => event?,
            _ = tokio::signal::ctrl_c() => {
                backend.stop_thread(thread_id).await?;
                continue;
            }
        };
        if !concerns(&event.body, thread_id) {
            continue;
        }
        if let Some(end) = render.event(&event)? {
            break end;
        }
    };
    backend.stop_driving().await;
    render.footer(&ended)?;
    Ok(match ended.state {
        TurnState::Completed | TurnState::Waiting => exit::OK,
        TurnState::Failed => exit::UPSTREAM,
        _ => exit::REFUSED,
    })
}

/// Whether an event belongs to the thread being followed.
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
        _ => false,
    }
}

/// Renders one turn's events as text (or JSON lines).
struct Render {
    json: bool,
    turn: Turn,
    at_line_start: bool,
}

impl Render {
    fn new(json: bool, turn: Turn) -> Self {
        Render {
            json,
            turn,
            at_line_start: true,
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

    fn header(&mut self, title: &str, thread: ThreadId, ahead: u32) -> Result<()> {
        if self.json {
            return Ok(());
        }
        self.line(&format!("── thread {thread}: {title}"))?;
        if ahead > 0 {
            self.line(&format!("(queued: {ahead} turn(s) of this thread ahead)"))?;
        }
        Ok(())
    }

    /// Renders `event`; returns the turn once it has ended.
    fn event(&mut self, event: &helm_core::events::Event) -> Result<Option<Turn>> {
        if self.json {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", serde_json::to_string(event)?)?;
            out.flush()?;
        }
        let mine = self.turn.id;
        match &event.body {
            EventBody::TurnCompleted { turn }
            | EventBody::TurnFailed { turn }
            | EventBody::TurnCancelled { turn }
                if turn.id == mine =>
            {
                return Ok(Some(turn.clone()));
            }
            _ if self.json => {}
            EventBody::TurnStarted { turn } if turn.id == mine => {
                if let Some(m) = &turn.served_by {
                    let model = m.model.as_deref().unwrap_or("default");
                    self.line(&format!("(working: {} / {model})", m.provider))?;
                }
            }
            EventBody::MessageDelta {
                message_id, text, ..
            } if *message_id == self.turn.reply_message_id => {
                let text = text.clone();
                self.write(&text)?;
            }
            EventBody::ToolActionStarted { action } if action.turn_id == Some(mine) => {
                self.line(&format!("  ⚙ {}", action.input_summary))?;
            }
            EventBody::ToolActionFinished { action } if action.turn_id == Some(mine) => {
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
            EventBody::MessageCreated { message } if message.author == Author::System => {
                let note = message.content.clone();
                self.line(&format!("[helm] {note}"))?;
            }
            _ => {}
        }
        Ok(None)
    }

    fn footer(&mut self, turn: &Turn) -> Result<()> {
        if self.json {
            return Ok(());
        }
        match turn.state {
            TurnState::Completed => self.line(""),
            other => self.line(&format!("(turn {other})")),
        }
    }
}

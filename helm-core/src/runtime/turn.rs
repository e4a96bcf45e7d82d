//! One turn, start to end: resolve the model, claim the turn, assemble the
//! context, then loop model call → tool calls → model call until the model
//! answers, the step limit is reached, the turn is stopped, or something
//! fails. Streamed text is written to the reply in small batches; the
//! finalizer records how it ended.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::context::{self as context, ContextInputs, system_prompt, transcript};
use super::recalled;
use super::summary::{SummaryTrigger, refresh_due};
use super::tool_notes::ToolNotes;
use super::{Runtime, StopReason};
use crate::error::{Error, ProviderFailure, Result};
use crate::model::{ChannelRef, ChannelStatus, Turn, TurnState};
use crate::provider::{
    ChatMessage, ChatRequest, FinishReason, Provider, StreamEvent, ToolCall, Usage, next,
};
use crate::store::TurnFinish;
use crate::store::rules::FAILED_TURN_NOTE;
use crate::tool::{ToolContext, ToolServices};

/// What the loop ended with, before the finalizer writes it.
struct Ending {
    state: TurnState,
    error: Option<String>,
    note: Option<String>,
}

/// Skipper sees the whole thread; this bounds it only against the absurd.
const SKIPPER_TRANSCRIPT_TOKENS: usize = 200_000;
/// How many of the thread's newest tool calls earlier replies are told with.
const TOOL_NOTES_CALLS: usize = 200;

/// Text streamed but not yet written, and when it was last written.
struct ReplyBuffer {
    text: String,
    pending: String,
    last_flush: Instant,
}

impl ReplyBuffer {
    fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
        self.pending.push_str(delta);
    }
}

/// Runs `turn` to its end state.
pub(super) async fn drive(
    rt: &Arc<Runtime>,
    turn: &Turn,
    cancel: &CancellationToken,
    reason: &Arc<Mutex<Option<StopReason>>>,
) -> Result<()> {
    if cancel.is_cancelled() {
        return finish(rt, turn, "", 0, Usage::default(), stopped(reason)).await;
    }
    let record = rt.store.channel(&ChannelRef::Id(turn.channel_id)).await?;
    // The model was fixed when the message was accepted; turns admitted by
    // versions that did not fix it are resolved now.
    let resolved = match &turn.served_by {
        Some(choice) if choice.model.is_some() => rt.adapter_for(choice).await,
        _ => rt.model_for(turn.channel_id, Some(turn.thread_id)).await,
    };
    let (provider, choice) = match resolved {
        Ok(pair) => pair,
        Err(e) => {
            // Claim it so the failure is the turn's own visible end.
            if rt.store.start_turn(turn.id, None).await?.is_none() {
                return Ok(());
            }
            return finish(rt, turn, "", 0, Usage::default(), failed(&e)).await;
        }
    };
    let Some(turn) = rt.store.start_turn(turn.id, Some(choice.clone())).await? else {
        return Ok(());
    };
    let model = choice.model.clone().unwrap_or_default();

    // Skipper sees the whole thread; a channel agent its budget.
    let skipper = turn.agent_id == rt.skipper_agent().await?;
    let budget_tokens = if skipper {
        SKIPPER_TRANSCRIPT_TOKENS
    } else {
        rt.options.transcript_budget_tokens
    };
    // Only what fits is read: the first message and the newest ones.
    let tail = rt
        .store
        .thread_tail(turn.thread_id, Some(turn.trigger_message_id), budget_tokens)
        .await?;
    // The session summary stands in for what is left out; it is brought up
    // to date only once enough has fallen out since it last was.
    if refresh_due(&tail, rt.options.summary_refresh_messages)
        && let Err(e) = rt
            .summarize_through(
                turn.thread_id,
                SummaryTrigger::Compaction,
                tail.newest_omitted,
            )
            .await
    {
        tracing::warn!(turn = %turn.id, error = %e, "could not summarise a long thread");
    }
    let omitted = tail.omitted;
    let messages = tail.into_messages();
    let thread = rt.store.thread(turn.thread_id).await?;
    let artifacts = rt
        .store
        .artifacts(turn.channel_id, Some(turn.thread_id))
        .await?;
    let trigger = messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let asker = match turn.requested_by {
        Some(user) => rt.store.user(user).await.ok(),
        None => None,
    };
    // Everything below that reads beyond this thread reads for this
    // audience: what the person the turn works for, and every reader of
    // this channel, may see.
    let audience =
        crate::helm::Audience::for_turn(rt.store.as_ref(), asker.as_ref(), &record.channel).await?;
    // Leading mentions only address the agent: as words they would match
    // every message that ever called it, so recall looks for the rest.
    let question = super::wake::without_mentions(&trigger);
    let recalled = recalled::for_turn(rt, &turn, &audience, &question).await;
    let pinned = rt.recall.pinned(&audience, turn.channel_id, 20).await?;
    // Skipper's turns: the whole thread, its own identity and tools, and
    // the channels the person who asked may see.
    let inputs = ContextInputs {
        record: &record,
        thread: &thread,
        artifacts: &artifacts,
        recalled: &recalled,
        pinned: &pinned,
    };
    let system = if skipper {
        let escalation = match turn.escalation_id {
            Some(id) => Some(rt.store.escalation(id).await?),
            None => None,
        };
        // The channels named in the prompt are the ones this thread's
        // readers may all hear of; Skipper's tools still reach any channel
        // the asker may see.
        let channels = match &asker {
            Some(user) => rt
                .authority
                .visible_channels(Some(user), false)
                .await?
                .into_iter()
                .filter(|r| audience.sees_channel(r.channel.id))
                .collect(),
            None => Vec::new(),
        };
        let mut prompt = super::skipper::system_prompt(
            &record,
            &thread.title,
            escalation.as_ref(),
            asker.as_ref(),
            &channels,
        );
        prompt.push_str(&context::memory_section_for(&inputs));
        prompt
    } else {
        system_prompt(&inputs)
    };
    let (registry, problems) = rt.registry_for(&record, skipper).await?;
    for (server, problem) in problems {
        if rt
            .mcp
            .first_report(turn.channel_id, &server, &problem)
            .await
        {
            rt.store
                .post_note(
                    turn.channel_id,
                    Some(turn.thread_id),
                    format!(
                        "The tools of MCP server {server} are not available this turn: {problem}"
                    ),
                )
                .await?;
        }
    }
    let specs = registry.functions();
    // Shared with each step's request; copied only if a provider still
    // holds the last request when a tool's result is added.
    // What earlier replies did with their tools, told before each of them.
    let notes = ToolNotes::new(
        &rt.store.thread_turns(turn.thread_id).await?,
        &rt.store
            .tool_actions(
                turn.channel_id,
                Some(turn.thread_id),
                None,
                TOOL_NOTES_CALLS,
            )
            .await?,
        turn.id,
    );
    let mut conversation = Arc::new(transcript(
        messages,
        omitted,
        turn.agent_id,
        budget_tokens,
        &notes,
    ));
    let computer = rt.computers.computer_of(&record).await?;
    let executor = rt.computers.executor_of(&computer).await?;
    let services = ToolServices::new(rt.clone(), executor);
    // Skipper acts as itself, read afresh (its name may have changed).
    let home = if skipper {
        let name = crate::model::ChannelName::parse(crate::model::HOME_CHANNEL)?;
        Some(rt.store.channel(&ChannelRef::Name(name)).await?)
    } else {
        None
    };
    let acting = home.as_ref().map_or(&record.agent, |home| &home.agent);
    let tool_context = ToolContext::new(
        &record,
        &turn,
        acting,
        asker.as_ref(),
        &audience,
        &computer,
        &services,
    )
    .cancelled_by(cancel);

    let mut reply = ReplyBuffer {
        text: String::new(),
        pending: String::new(),
        last_flush: Instant::now(),
    };
    let mut usage = Usage::default();
    let mut steps = 0u32;
    let ending = loop {
        if let Some(ending) = halted(rt, &turn, cancel, reason).await? {
            break ending;
        }
        if steps >= rt.options.max_steps {
            break Ending {
                state: TurnState::Completed,
                error: None,
                note: Some(format!(
                    "The agent stopped after {steps} steps, the limit for one turn; ask it to \
                     continue if there is more to do."
                )),
            };
        }
        steps += 1;
        if !reply.text.is_empty() && !reply.text.ends_with("\n\n") {
            reply.push("\n\n");
        }
        let request = ChatRequest {
            model: model.clone(),
            system: system.clone(),
            messages: Arc::clone(&conversation),
            tools: specs.clone(),
            max_tokens: Some(rt.options.max_tokens),
            temperature: None,
        };
        let step = tokio::select! {
            biased;
            _ = cancel.cancelled() => break stopped(reason),
            step = stream_step(rt, &turn, provider.as_ref(), request, &mut reply, cancel) => step,
        };
        let step = match step {
            Ok(Some(step)) => step,
            Ok(None) => break stopped(reason),
            Err(e) => break failed(&e),
        };
        if let Some(u) = step.usage {
            usage.input_tokens += u.input_tokens;
            usage.output_tokens += u.output_tokens;
        }
        if step.cut {
            break Ending {
                state: TurnState::Completed,
                error: None,
                note: Some(format!(
                    "The reply was cut at {} bytes, the most one reply may hold.",
                    rt.options.max_reply_bytes
                )),
            };
        }
        if step.tool_calls.is_empty() {
            break Ending {
                state: TurnState::Completed,
                error: None,
                note: match step.finish {
                    Some(FinishReason::Length) => {
                        Some("The reply was cut off at the model's output limit.".to_string())
                    }
                    _ => None,
                },
            };
        }
        Arc::make_mut(&mut conversation).push(ChatMessage::Assistant {
            content: step.text,
            tool_calls: step.tool_calls.clone(),
        });
        // Between tool steps the turn looks again whether it may go on: a
        // stop, a shutdown or its channel being archived ends it before the
        // next tool runs.
        let mut halt = None;
        for call in &step.tool_calls {
            if let Some(ending) = halted(rt, &turn, cancel, reason).await? {
                halt = Some(ending);
                break;
            }
            let output = registry
                .run_journaled(&tool_context, call, steps, cancel)
                .await?;
            Arc::make_mut(&mut conversation).push(ChatMessage::Tool {
                call_id: call.id.clone(),
                content: output.content,
                is_error: output.is_error,
            });
        }
        if let Some(ending) = halt {
            break ending;
        }
    };
    let text = reply.text.trim_end().to_string();
    finish(rt, &turn, &text, steps, usage, ending).await
}

async fn finish(
    rt: &Runtime,
    turn: &Turn,
    reply: &str,
    steps: u32,
    usage: Usage,
    ending: Ending,
) -> Result<()> {
    rt.store
        .finish_turn(
            turn.id,
            TurnFinish {
                state: ending.state,
                reply: reply.to_string(),
                error: ending.error,
                note: ending.note,
                steps,
                usage,
            },
        )
        .await?;
    Ok(())
}

/// Whether the turn must end now rather than take its next step: it was
/// cancelled, or its channel was archived (perhaps by another process,
/// which cannot reach this one's cancellation).
async fn halted(
    rt: &Runtime,
    turn: &Turn,
    cancel: &CancellationToken,
    reason: &Arc<Mutex<Option<StopReason>>>,
) -> Result<Option<Ending>> {
    if cancel.is_cancelled() {
        return Ok(Some(stopped(reason)));
    }
    let record = rt.store.channel(&ChannelRef::Id(turn.channel_id)).await?;
    if record.channel.status == ChannelStatus::Archived {
        return Ok(Some(Ending {
            state: TurnState::Cancelled,
            error: None,
            note: Some(format!(
                "This turn was cancelled: {} was archived while it ran. Restoring the channel \
                 does not run it again; ask again then.",
                record.channel.name
            )),
        }));
    }
    Ok(None)
}

fn stopped(reason: &Arc<Mutex<Option<StopReason>>>) -> Ending {
    let reason = reason.lock().ok().and_then(|r| r.clone());
    match reason {
        Some(StopReason::ChannelClosed(note)) => Ending {
            state: TurnState::Cancelled,
            error: None,
            note: Some(note),
        },
        // Interrupted, as when the process dies: nobody chose to end the
        // work, so the person may run it again (Retry), and the reply keeps
        // what was written.
        Some(StopReason::Shutdown) => Ending {
            state: TurnState::Interrupted,
            error: Some("Helm shut down while this turn was running".into()),
            note: Some(
                "This turn was interrupted: Helm shut down while it was running. It was not \
                 restarted, because its actions may already have happened; retry it, or ask \
                 again, to continue."
                    .into(),
            ),
        },
        Some(StopReason::Stopped(by)) => Ending {
            state: TurnState::Stopped,
            error: None,
            note: Some(format!("Stopped by {by}.")),
        },
        None => Ending {
            state: TurnState::Stopped,
            error: None,
            note: Some("Stopped.".into()),
        },
    }
}

fn failed(e: &Error) -> Ending {
    Ending {
        state: TurnState::Failed,
        error: Some(e.to_string()),
        note: Some(format!("{FAILED_TURN_NOTE}{e}")),
    }
}

/// One model call's outcome.
struct Step {
    text: String,
    tool_calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
    /// The text reached the reply size limit and the stream was dropped.
    cut: bool,
}

/// Up to this size a reply is written as it streams (every flush interval
/// or 4 KiB); beyond it, only when the text waiting is at least a
/// 32nd of what is written, so the writes (each of which rewrites the
/// stored reply) stay linear in the reply's size however fast it streams.
const EAGER_REPLY_BYTES: usize = 256 * 1024;

/// Whether the text waiting in `reply` should be written now.
fn flush_due(reply: &ReplyBuffer, interval: std::time::Duration) -> bool {
    let due = reply.pending.len() >= 4096 || reply.last_flush.elapsed() >= interval;
    due && (reply.text.len() <= EAGER_REPLY_BYTES || reply.pending.len() * 32 >= reply.text.len())
}

/// Streams one model call into the reply. `Ok(None)` means it was cancelled.
async fn stream_step(
    rt: &Runtime,
    turn: &Turn,
    provider: &dyn Provider,
    request: ChatRequest,
    reply: &mut ReplyBuffer,
    cancel: &CancellationToken,
) -> Result<Option<Step>> {
    let mut stream = provider.stream(request).await?;
    let mut step = Step {
        text: String::new(),
        tool_calls: Vec::new(),
        usage: None,
        finish: None,
        cut: false,
    };
    let interval = rt.options.flush_interval;
    let limit = rt.options.max_reply_bytes;
    loop {
        let deadline = reply.last_flush + interval;
        let has_pending = !reply.pending.is_empty();
        let event = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                flush(rt, turn, reply).await?;
                return Ok(None);
            }
            _ = tokio::time::sleep_until(deadline.into()), if has_pending => {
                if flush_due(reply, interval) {
                    flush(rt, turn, reply).await?;
                } else {
                    reply.last_flush = Instant::now();
                }
                continue;
            }
            event = next(&mut stream) => event,
        };
        match event {
            None => break,
            Some(Err(e)) => {
                flush(rt, turn, reply).await?;
                return Err(e);
            }
            Some(Ok(StreamEvent::TextDelta { text })) => {
                // A NUL is nothing a person reads, and PostgreSQL refuses it
                // in text: dropped, a reply holding one completes alike on
                // both stores (it failed the turn on PostgreSQL).
                let text = if text.contains('\0') {
                    text.replace('\0', "")
                } else {
                    text
                };
                let room = limit.saturating_sub(reply.text.len());
                if text.len() > room {
                    // Keep what fits (on a character boundary) and stop
                    // reading: dropping the stream closes the connection.
                    let mut cut = room;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    step.text.push_str(&text[..cut]);
                    reply.push(&text[..cut]);
                    step.cut = true;
                    break;
                }
                step.text.push_str(&text);
                reply.push(&text);
                if flush_due(reply, interval) {
                    flush(rt, turn, reply).await?;
                }
            }
            Some(Ok(StreamEvent::ToolCallComplete { call, .. })) => step.tool_calls.push(call),
            Some(Ok(StreamEvent::Usage { usage })) => step.usage = Some(usage),
            Some(Ok(StreamEvent::Finish { reason })) => step.finish = Some(reason),
            Some(Ok(_)) => {}
        }
    }
    drop(stream);
    flush(rt, turn, reply).await?;
    if step.cut {
        return Ok(Some(step));
    }
    if step.finish.is_none() {
        return Err(Error::provider(
            turn.served_by
                .as_ref()
                .map(|m| m.provider.as_str())
                .unwrap_or("provider"),
            ProviderFailure::MalformedStream,
            "the response ended without saying it was finished",
        ));
    }
    if step.text.trim().is_empty() && step.tool_calls.is_empty() {
        return Err(Error::provider(
            turn.served_by
                .as_ref()
                .map(|m| m.provider.as_str())
                .unwrap_or("provider"),
            ProviderFailure::MalformedStream,
            "the model's response held no text and no tool call",
        ));
    }
    Ok(Some(step))
}

async fn flush(rt: &Runtime, turn: &Turn, reply: &mut ReplyBuffer) -> Result<()> {
    reply.last_flush = Instant::now();
    if reply.pending.is_empty() {
        return Ok(());
    }
    let delta = std::mem::take(&mut reply.pending);
    rt.store.append_reply(turn.id, delta).await?;
    Ok(())
}

//! One turn, start to end: resolve the model, claim the turn, assemble the
//! context, then loop model call → tool calls → model call until the model
//! answers, the step limit is reached, the turn is stopped, or something
//! fails. Streamed text is written to the reply in small batches; the
//! finalizer records how it ended.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::context::{
    self as context, ContextInputs, MEMORY_HITS, estimate_tokens, system_prompt, transcript,
};
use super::summary::SummaryTrigger;
use super::tools::{self, ToolContext, builtin_specs, input_summary};
use super::{Runtime, StopReason};
use crate::error::{Error, ProviderFailure, Result};
use crate::model::{ChannelRef, ChannelStatus, ToolStatus, Turn, TurnState};
use crate::provider::{
    ChatMessage, ChatRequest, FinishReason, Provider, StreamEvent, ToolCall, Usage, next,
};
use crate::store::{NewToolAction, ToolActionOutcome, TurnFinish};

/// What the loop ended with, before the finalizer writes it.
struct Ending {
    state: TurnState,
    error: Option<String>,
    note: Option<String>,
}

/// How long a cancelled tool call gets to stop by itself and report.
const TOOL_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Skipper sees the whole thread; this bounds it only against the absurd.
const SKIPPER_TRANSCRIPT_TOKENS: usize = 200_000;

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

    let messages = rt
        .store
        .thread_messages(turn.thread_id, Some(turn.trigger_message_id))
        .await?;
    // A transcript that no longer fits is compacted: the session summary
    // (brought up to date first) stands in for what is left out.
    let size: usize = messages.iter().map(|m| estimate_tokens(&m.content)).sum();
    if size > rt.options.transcript_budget_tokens
        && !rt.store.summary_is_current(turn.thread_id).await?
        && let Err(e) = rt
            .summarize(turn.thread_id, SummaryTrigger::Compaction)
            .await
    {
        tracing::warn!(turn = %turn.id, error = %e, "could not summarise a long thread");
    }
    let thread = rt.store.thread(turn.thread_id).await?;
    let artifacts = rt
        .store
        .artifacts(turn.channel_id, Some(turn.thread_id))
        .await?;
    let trigger = messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let recalled = recall_for_turn(rt, &turn, &trigger).await;
    let pinned = rt
        .store
        .list_memory(
            turn.channel_id,
            crate::store::MemoryFilter {
                limit: 20,
                ..Default::default()
            },
        )
        .await?
        .into_iter()
        .filter(|m| m.pinned)
        .collect::<Vec<_>>();
    // Skipper's turns: the whole thread, its own identity and tools, and
    // the channels the person who asked may see.
    let home = rt
        .store
        .channel(&ChannelRef::Name(crate::model::ChannelName::parse(
            crate::model::HOME_CHANNEL,
        )?))
        .await?;
    let skipper = turn.agent_id == home.agent.id;
    let asker = match turn.requested_by {
        Some(user) => rt.store.user(user).await.ok(),
        None => None,
    };
    let inputs = ContextInputs {
        record: &record,
        own_agent: turn.agent_id,
        thread: &thread,
        transcript: &messages,
        artifacts: &artifacts,
        recalled: &recalled,
        pinned: &pinned,
        budget_tokens: if skipper {
            SKIPPER_TRANSCRIPT_TOKENS
        } else {
            rt.options.transcript_budget_tokens
        },
    };
    let (system, specs, handle) = if skipper {
        let escalation = match turn.escalation_id {
            Some(id) => Some(rt.store.escalation(id).await?),
            None => None,
        };
        let channels = match (crate::Helm::from_weak(&rt.facade), &asker) {
            (Some(helm), Some(user)) => {
                helm.visible_channels(user, crate::store::ChannelFilter::default())
                    .await?
            }
            _ => Vec::new(),
        };
        let mut prompt = super::skipper::system_prompt(
            &record,
            &thread.title,
            escalation.as_ref(),
            asker.as_ref(),
            &channels,
        );
        prompt.push_str(&context::memory_section_for(&inputs));
        (
            prompt,
            super::skipper::skipper_specs(),
            home.agent.handle.to_string(),
        )
    } else {
        (
            system_prompt(&inputs),
            builtin_specs(),
            record.agent.handle.to_string(),
        )
    };
    let mut conversation = transcript(&inputs);
    let computer = rt.computers.computer_of(&record).await?;
    let executor: std::sync::Arc<dyn crate::exec::Executor> = rt.computers.executor().await?;
    let tool_context = ToolContext {
        rt: rt.clone(),
        turn: turn.clone(),
        files: crate::exec::ConfinedFs::new(&computer),
        executor,
        computer,
        record: record.clone(),
        agent_handle: handle,
        asker,
        skipper,
        cancel: cancel.clone(),
    };

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
            messages: conversation.clone(),
            tools: specs.clone(),
            max_tokens: None,
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
        conversation.push(ChatMessage::Assistant {
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
            let result = run_tool(rt, &turn, &tool_context, call, cancel).await?;
            conversation.push(ChatMessage::Tool {
                call_id: call.id.clone(),
                content: result.0,
                is_error: result.1,
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
        Some(StopReason::Shutdown) => Ending {
            state: TurnState::Cancelled,
            error: None,
            note: Some("This turn was cancelled because Helm is shutting down.".into()),
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
        note: Some(format!("The turn failed: {e}")),
    }
}

/// What the channel's memory says about the message that started the turn:
/// records and earlier threads, not this thread (its transcript is there).
/// Recall trouble never stops a turn.
async fn recall_for_turn(
    rt: &Runtime,
    turn: &Turn,
    question: &str,
) -> Vec<crate::memory::recall::RecallHit> {
    if question.trim().is_empty() {
        return Vec::new();
    }
    let mut query = crate::memory::recall::RecallQuery::new(question);
    query.limit = MEMORY_HITS + 6;
    match rt.recall.recall(turn.channel_id, &query).await {
        Ok(hits) => {
            // Raw messages come only from threads no summary stands in for:
            // a summarised thread speaks through its records, not its transcript.
            let mut kept = Vec::new();
            for hit in hits {
                let keep = match (&hit.thread, hit.kind.as_str()) {
                    (Some(t), "message") if t.id == turn.thread_id => false,
                    (Some(t), "message") => rt
                        .store
                        .thread(t.id)
                        .await
                        .map(|th| th.summary.trim().is_empty())
                        .unwrap_or(false),
                    _ => true,
                };
                if keep {
                    kept.push(hit);
                }
                if kept.len() == MEMORY_HITS {
                    break;
                }
            }
            kept
        }
        Err(e) => {
            tracing::warn!(turn = %turn.id, error = %e, "recall for the turn's context failed");
            Vec::new()
        }
    }
}

/// One model call's outcome.
struct Step {
    text: String,
    tool_calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
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
    };
    let interval = rt.options.flush_interval;
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
                flush(rt, turn, reply).await?;
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
                step.text.push_str(&text);
                reply.push(&text);
                if reply.pending.len() >= 4096 || reply.last_flush.elapsed() >= interval {
                    flush(rt, turn, reply).await?;
                }
            }
            Some(Ok(StreamEvent::ToolCallComplete { call, .. })) => step.tool_calls.push(call),
            Some(Ok(StreamEvent::Usage { usage })) => step.usage = Some(usage),
            Some(Ok(StreamEvent::Finish { reason })) => step.finish = Some(reason),
            Some(Ok(_)) => {}
        }
    }
    flush(rt, turn, reply).await?;
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

/// Runs one tool call with its journal entry; returns the text for the model
/// and whether it is an error.
async fn run_tool(
    rt: &Runtime,
    turn: &Turn,
    tools_ctx: &ToolContext,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> Result<(String, bool)> {
    let action = rt
        .store
        .start_tool_action(NewToolAction {
            agent_id: turn.agent_id,
            channel_id: turn.channel_id,
            thread_id: Some(turn.thread_id),
            turn_id: Some(turn.id),
            tool: call.name.clone(),
            input_summary: input_summary(call),
        })
        .await?;
    let started = Instant::now();
    let running = tools::execute(tools_ctx, call);
    tokio::pin!(running);
    let (outcome, cut_short) = tokio::select! {
        biased;
        outcome = &mut running => (Some(outcome), false),
        // Cancelled: the tool sees it too (a command is killed and waited
        // for), so give it a moment to end and report; one that does not
        // is dropped, which stops it as well.
        _ = cancel.cancelled() => (
            tokio::time::timeout(TOOL_STOP_GRACE, &mut running).await.ok(),
            true,
        ),
    };
    let duration_ms = started.elapsed().as_millis() as i64;
    match outcome {
        Some(outcome) => {
            let (status, summary) = if cut_short {
                (
                    ToolStatus::Cancelled,
                    format!("cancelled with its turn: {}", outcome.summary),
                )
            } else {
                (outcome.status, outcome.summary.clone())
            };
            rt.store
                .finish_tool_action(
                    action.id,
                    ToolActionOutcome {
                        status,
                        result_summary: summary,
                        duration_ms: Some(duration_ms),
                        isolation: outcome.isolation.clone(),
                    },
                )
                .await?;
            Ok((outcome.content, outcome.is_error))
        }
        None => {
            rt.store
                .finish_tool_action(
                    action.id,
                    ToolActionOutcome {
                        status: ToolStatus::Cancelled,
                        result_summary: "cancelled with its turn".into(),
                        duration_ms: Some(duration_ms),
                        isolation: None,
                    },
                )
                .await?;
            Ok(("cancelled".into(), true))
        }
    }
}

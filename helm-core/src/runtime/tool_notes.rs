//! What an earlier reply of the thread did with its tools, told to the
//! model just before that reply. Messages alone lose it: a follow-up turn
//! (or Skipper, called in) would read "Ran it." without the command, its
//! exit code or what it printed. The journal keeps each call's input, its
//! result and (cut) what it gave back, so later turns see the work itself.

use std::collections::HashMap;
use std::fmt::Write;

use crate::model::{MessageId, ToolAction, Turn};

/// How much of one call's kept output a note carries.
const OUTPUT_PER_CALL: usize = 800;
/// The most one reply's note carries (its later calls are counted, not told).
const NOTE_BYTES: usize = 4 * 1024;

/// The note for each reply message of the thread that used tools.
#[derive(Debug, Default)]
pub struct ToolNotes(HashMap<MessageId, String>);

impl ToolNotes {
    /// Notes from the thread's `turns` and its tool journal (`actions`,
    /// oldest first); the turn now running (`current`) gets none: its
    /// calls are in its own conversation.
    pub fn new(turns: &[Turn], actions: &[ToolAction], current: crate::model::TurnId) -> Self {
        let reply_of: HashMap<_, _> = turns
            .iter()
            .filter(|t| t.id != current)
            .map(|t| (t.id, t.reply_message_id))
            .collect();
        let mut calls: HashMap<MessageId, Vec<&ToolAction>> = HashMap::new();
        for action in actions {
            if let Some(reply) = action.turn_id.and_then(|t| reply_of.get(&t)) {
                calls.entry(*reply).or_default().push(action);
            }
        }
        ToolNotes(
            calls
                .into_iter()
                .map(|(reply, calls)| (reply, note(&calls)))
                .collect(),
        )
    }

    /// The note to put before `message`, if its reply used tools.
    pub fn before(&self, message: MessageId) -> Option<&str> {
        self.0.get(&message).map(String::as_str)
    }
}

/// "[helm] The tool calls behind the next reply: …", one call a line, each
/// with what it gave back, indented.
fn note(calls: &[&ToolAction]) -> String {
    let mut text =
        String::from("[helm] The tool calls behind the next reply, and what they gave back:");
    for (told, call) in calls.iter().enumerate() {
        if text.len() >= NOTE_BYTES {
            let _ = write!(text, "\n- … and {} more calls", calls.len() - told);
            break;
        }
        let _ = write!(
            text,
            "\n- {} ({}): {}",
            call.input_summary, call.status, call.result_summary
        );
        if let Some(output) = call.output.as_deref() {
            for line in crate::tool::clip_bytes(output, OUTPUT_PER_CALL).lines() {
                text.push_str("\n    ");
                text.push_str(line);
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AgentId, ChannelId, ThreadId, ToolActionId, ToolStatus, TurnId};

    fn call(id: i64, turn: i64, input: &str, output: Option<&str>) -> ToolAction {
        ToolAction {
            id: ToolActionId(id),
            agent_id: AgentId(7),
            channel_id: ChannelId(1),
            thread_id: Some(ThreadId(1)),
            turn_id: Some(TurnId(turn)),
            tool: "run_command".into(),
            input_summary: input.into(),
            result_summary: "exit code 0".into(),
            output: output.map(Into::into),
            status: ToolStatus::Ok,
            duration_ms: Some(3),
            isolation: None,
            created: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_reply_is_told_with_its_calls_and_what_they_printed_indented() {
        let calls = [
            call(
                1,
                1,
                "run_command ls",
                Some("exit code 0\nstdout:\nplan.md"),
            ),
            call(2, 1, "run_command true", None),
        ];
        let text = note(&calls.iter().collect::<Vec<_>>());
        assert_eq!(
            text,
            "[helm] The tool calls behind the next reply, and what they gave back:\n\
             - run_command ls (ok): exit code 0\n    exit code 0\n    stdout:\n    plan.md\n\
             - run_command true (ok): exit code 0"
        );
        // A long run is counted, not told, past the note's size.
        let many: Vec<ToolAction> = (0..40)
            .map(|i| call(i, 1, "run_command cat big", Some(&"x".repeat(700))))
            .collect();
        let text = note(&many.iter().collect::<Vec<_>>());
        assert!(text.len() < NOTE_BYTES + 1024, "{}", text.len());
        assert!(text.ends_with("more calls"), "{text}");
    }
}

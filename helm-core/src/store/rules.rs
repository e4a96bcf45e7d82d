//! What every store decides and says the same way, whatever its database:
//! the status a thread takes when a turn ends, and the visible notes and
//! audit outcomes the stores' transactions write. Both stores call these,
//! so what people read cannot drift apart between SQLite and Postgres.

use crate::model::{
    Actor, Approval, ApprovalStatus, ChannelName, EscalationId, EscalationStatus, ThreadStatus,
    TurnId, TurnState,
};
use crate::store::types::{CapabilityChange, ChannelRecord};

/// Skipper's first words in `#main`, read by everyone who ever joins: a
/// greeting to the workspace, not to whoever was Captain at bootstrap
/// (whose name, before the first-run page, is still a placeholder).
pub(crate) const SKIPPER_WELCOME: &str = "Welcome aboard. I'm @skipper, the workspace \
    operator. Create a channel for anything and it comes with its own agent, computer and \
    memory; mention @skipper in any thread when something needs broader authority.";

/// What a thread's status becomes when its latest turn ends in `state`:
/// failed after a failure or an interruption, waiting when the agent waits
/// on a person, open again after an answer or a stop. A thread resolved or
/// archived by hand stays so.
pub(crate) fn thread_status_after(state: TurnState, current: ThreadStatus) -> Option<ThreadStatus> {
    if matches!(current, ThreadStatus::Resolved | ThreadStatus::Archived) {
        return None;
    }
    let next = match state {
        TurnState::Failed | TurnState::Interrupted => ThreadStatus::Failed,
        TurnState::Waiting => ThreadStatus::Waiting,
        TurnState::Completed | TurnState::Stopped => ThreadStatus::Open,
        _ => return None,
    };
    (next != current).then_some(next)
}

/// The note a queued turn leaves when archiving its channel cancels it.
pub(crate) fn archived_turn_note(channel: &ChannelName, actor: &Actor) -> String {
    format!(
        "This turn was cancelled before it started: {channel} was archived by {actor}. \
         Restoring the channel does not run it; ask again then."
    )
}

/// The card an approval request posts: approved at once when the asker may
/// approve it, otherwise what is asked, why, and when it lapses.
pub(crate) fn approval_card(approval: &Approval) -> String {
    match approval.status {
        ApprovalStatus::Approved => format!(
            "Approval {}: {} ({}) — approved, since the person who asked may approve it.",
            approval.id, approval.summary, approval.action
        ),
        _ => format!(
            "Approval needed ({id}): {summary}\nWhy: {reason}\nThe Captain or an admin approves \
             or denies approval {id}. Undecided, it is denied at {expires}.",
            id = approval.id,
            summary = approval.summary,
            reason = approval.reason,
            expires = approval.expires.strftime("%H:%M UTC"),
        ),
    }
}

/// The note a decided approval posts, with the decider's note if any.
pub(crate) fn approval_decided_note(
    id: i64,
    status: ApprovalStatus,
    who: Option<&str>,
    note: Option<&str>,
) -> String {
    let who = who.unwrap_or("?");
    let text = match status {
        ApprovalStatus::Approved => format!("Approval {id} approved by {who}."),
        ApprovalStatus::Denied => format!("Approval {id} denied by {who}."),
        _ => format!("Approval {id} expired undecided, so it is denied."),
    };
    match note {
        Some(n) if !n.trim().is_empty() => format!("{text} Note: {n}"),
        _ => text,
    }
}

/// The note that opens a call for Skipper.
pub(crate) fn call_opened_note(reason: &str) -> String {
    format!("Calling @skipper: {reason}")
}

/// The note that adds to the call already open in a thread.
pub(crate) fn call_added_note(reason: &str) -> String {
    format!("Also for @skipper (the call already open here): {reason}")
}

/// The audit outcome of opening a call.
pub(crate) fn call_opened_outcome(id: EscalationId, turn: TurnId) -> String {
    format!("escalation {id} open; turn {turn} queued for @skipper")
}

/// The audit outcome of adding to a call (`turn`: Skipper's new turn, or
/// none while its earlier one still waits).
pub(crate) fn call_added_outcome(id: EscalationId, turn: Option<TurnId>) -> String {
    match turn {
        Some(turn) => format!("added to escalation {id}; turn {turn} queued for @skipper"),
        None => format!("added to escalation {id}; @skipper's turn is still queued"),
    }
}

/// The journal's words for `person` leaving `channel` (or being removed
/// from it by someone else, `by`).
pub(crate) fn member_removed_entry(
    person: &str,
    channel: &str,
    by: &Actor,
    by_self: bool,
) -> String {
    if by_self {
        format!("{person} left {channel}")
    } else {
        format!("{person} was removed from {channel} by {by}")
    }
}

/// Who imports a history, for deciding whom its authors may be: an author
/// named as a workspace person is that person only when the importer is
/// them, the Captain or an admin (or Helm itself, `None`); any other name
/// is kept as a guest's. A member who manages a channel cannot put words
/// in another person's mouth by naming them in a file.
pub(crate) fn importer(actor: &Actor) -> Option<crate::model::UserId> {
    acting_person(actor)
}

/// How many turns one member may have waiting to start in a channel: the
/// Captain's provider pays for every turn, so a member (or a script with
/// their token) cannot queue hundreds at once. The Captain and admins are
/// not held to it.
pub(crate) const MAX_QUEUED_PER_PERSON: i64 = 10;

/// Refuses a post that would queue one turn more than
/// [`MAX_QUEUED_PER_PERSON`] for `author` (`queued`: theirs waiting now).
pub(crate) fn check_queued(author: &crate::model::User, queued: i64) -> crate::error::Result<()> {
    if author.role.is_admin() || queued < MAX_QUEUED_PER_PERSON {
        return Ok(());
    }
    Err(crate::error::Error::Refused(format!(
        "you already have {queued} requests waiting for this channel's agent; wait for them to \
         start, or stop some, before asking for more"
    )))
}

/// The person an actor is, if a person.
pub(crate) fn acting_person(actor: &Actor) -> Option<crate::model::UserId> {
    match actor {
        Actor::User { id, .. } => Some(*id),
        _ => None,
    }
}

/// Why an approval is expired when the turn waiting for it has ended
/// (approving it then would do nothing).
pub(crate) const APPROVAL_TURN_ENDED: &str = "the turn that asked for it ended before a decision";

/// The audit log's outcome when the Captain (or an admin) answers a call
/// Skipper handed to her, by writing in its thread.
pub(crate) fn call_answered_outcome(id: crate::model::EscalationId, by: &str) -> String {
    format!("escalation {id} answered by {by} in its thread")
}

/// The note a settled call posts.
pub(crate) fn call_settled_note(status: EscalationStatus, outcome: &str) -> String {
    match status {
        EscalationStatus::HandedToCaptain => format!("@skipper asks the Captain: {outcome}"),
        _ => format!("@skipper resolved the call: {outcome}"),
    }
}

/// The note a capability grant or revocation posts.
pub(crate) fn capability_note(change: &CapabilityChange, record: &ChannelRecord) -> String {
    let verb = if change.revoke { "revoked" } else { "granted" };
    format!(
        "{} {verb} {} for {} ({}).",
        change.by, change.description, record.channel.name, record.agent.handle
    )
}

/// A turn's stored token counts as its usage: none when both are 0, since
/// every model call that reports usage reports input tokens, and turns
/// whose calls reported nothing keep the columns' default.
pub(crate) fn stored_usage(input: i64, output: i64) -> Option<crate::provider::Usage> {
    (input > 0 || output > 0).then(|| crate::provider::Usage {
        input_tokens: u64::try_from(input).unwrap_or(0),
        output_tokens: u64::try_from(output).unwrap_or(0),
    })
}

/// Helm's note in a thread when a person runs a failed turn again: what
/// wakes the agent, and who asked, for everyone reading the thread.
pub(crate) fn retry_note(by: &str, agent: &crate::model::Handle) -> String {
    format!("{by} asked {agent} to try again.")
}

/// Why `turn` cannot run again, if it cannot: it did not end failed or
/// interrupted, or its thread went on after it (`latest` is the thread's
/// newest turn).
pub(crate) fn retry_refusal(turn: &crate::model::Turn, latest: TurnId) -> Option<String> {
    if !matches!(turn.state, TurnState::Failed | TurnState::Interrupted) {
        return Some(format!(
            "turn {} is {}; only a failed or interrupted turn can run again",
            turn.id, turn.state
        ));
    }
    (latest != turn.id).then(|| {
        format!(
            "thread {} went on after turn {}; ask the agent again in the thread instead",
            turn.thread_id, turn.id
        )
    })
}

/// How Helm's note about a failed turn begins: the reply already says it
/// failed, so clients show the note's reason with the reply, not as a reply
/// of its own, and a thread's reply count leaves it out.
pub(crate) const FAILED_TURN_NOTE: &str = "The turn failed: ";

/// The same note when Helm itself, not the model, failed the turn.
pub(crate) const FAILED_INSIDE_NOTE: &str = "This turn failed inside Helm: ";

/// SQL (both stores) that holds for a message that counts as a reply in a
/// thread: anything but Helm's notes about failed turns.
pub(crate) const COUNTS_AS_REPLY: &str = "NOT (author_kind = 'system' \
    AND (content LIKE 'The turn failed: %' OR content LIKE 'This turn failed inside Helm: %'))";

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQL spells out the two notes' openings (a `const` cannot format
    /// them in): it must say exactly what the notes begin with.
    #[test]
    fn the_reply_count_leaves_out_exactly_the_failure_notes() {
        for note in [FAILED_TURN_NOTE, FAILED_INSIDE_NOTE] {
            assert!(
                COUNTS_AS_REPLY.contains(&format!("LIKE '{note}%'")),
                "{note:?} in {COUNTS_AS_REPLY}"
            );
        }
    }
}

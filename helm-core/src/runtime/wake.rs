//! When a human message wakes an agent, and how mentions are read. Pure
//! functions, so the rules are stated once and tested on their own.

use crate::model::Handle;

/// Whether a human message wakes the channel's resident agent: when it
/// mentions the agent, or when it continues a thread in which the agent has
/// a reply (`agent_replied`: of any status, so a reply still streaming, one
/// that failed and one that was stopped count: the person is talking to the
/// agent, and a follow-up after a failure is how they try again) while only
/// one human speaks there. Once a second human
/// speaks in a thread, only mentions wake the agent, so people can talk to
/// each other without the agent butting in. A message that calls @skipper
/// without mentioning the agent is for Skipper alone, so the two never
/// answer the same line.
pub fn should_wake(
    mentions_agent: bool,
    calls_skipper: bool,
    agent_replied: bool,
    humans_in_thread: usize,
) -> bool {
    mentions_agent || (!calls_skipper && agent_replied && humans_in_thread <= 1)
}

/// What [`should_wake`] says from the message alone: `Some` when it
/// mentions the agent or calls @skipper; `None` when the thread decides
/// (has the agent replied, has a second human spoken), so the store reads
/// those facts only then.
pub fn decided_by_message(mentions_agent: bool, calls_skipper: bool) -> Option<bool> {
    (mentions_agent || calls_skipper).then_some(mentions_agent)
}

/// The handles mentioned in `text` (`@launch-agent`), lowercased, in order,
/// without duplicates. A mention must start the text or follow a character
/// that cannot be part of an e-mail address (`bob@launch-agent.io` is not one).
pub fn mentions(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i] == '@'
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || "._-+".contains(chars[i - 1])));
        if starts {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '-') {
                j += 1;
            }
            // Trailing hyphens are punctuation ("@launch-agent-, can you…").
            let mut end = j;
            while end > i + 1 && chars[end - 1] == '-' {
                end -= 1;
            }
            if end > i + 1 {
                let handle: String = chars[i + 1..end].iter().collect::<String>().to_lowercase();
                if !found.contains(&handle) {
                    found.push(handle);
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found
}

/// The people's names mentioned in `text` (`@ada`, `@ada.lovelace`),
/// lowercased, in order, without duplicates. Like [`mentions`], but a
/// person's name may also hold `.` and `_`; trailing punctuation is not part
/// of it ("thanks @ada." names `ada`).
pub fn person_mentions(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i] == '@'
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || "._-+".contains(chars[i - 1])));
        if starts {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || "-_.".contains(chars[j]))
            {
                j += 1;
            }
            let mut end = j;
            while end > i + 1 && "-_.".contains(chars[end - 1]) {
                end -= 1;
            }
            if end > i + 1 {
                let name: String = chars[i + 1..end].iter().collect::<String>().to_lowercase();
                if !found.contains(&name) {
                    found.push(name);
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found
}

/// Whether `text` mentions `handle`.
pub fn mentions_handle(text: &str, handle: &Handle) -> bool {
    mentions(text).iter().any(|m| m == handle.as_str())
}

/// `text` addressed to a channel's resident agent, for frontends where a
/// message is always for an agent (`ask`, MCP's `send_message`, the
/// OpenAI-compatible endpoint): the resident's handle goes in front unless
/// the text names it, or names Skipper (then it is for Skipper alone, as in
/// a thread). Empty text is refused, as posting it would be, rather than
/// sent as a bare mention.
pub fn addressed(text: &str, resident: &Handle) -> crate::Result<String> {
    if text.trim().is_empty() {
        return Err(crate::Error::invalid("message", "it is empty"));
    }
    Ok(
        if mentions_handle(text, resident) || mentions_handle(text, &Handle::skipper()) {
            text.to_string()
        } else {
            format!("{resident} {text}")
        },
    )
}

/// The text without its leading mentions, as the reason of a call for
/// Skipper ("@skipper please install ffmpeg" → "please install ffmpeg").
pub fn without_mentions(text: &str) -> String {
    let trimmed: Vec<&str> = text
        .split_whitespace()
        .skip_while(|w| w.starts_with('@'))
        .collect();
    let reason = trimmed.join(" ");
    if reason.is_empty() {
        text.trim().to_string()
    } else {
        reason
    }
}

/// A thread's title from its first message: the first line, without leading
/// mentions, at most 80 characters.
pub fn thread_title(text: &str) -> String {
    let first_line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut words = first_line.split_whitespace().peekable();
    while words.peek().is_some_and(|w| w.starts_with('@')) {
        words.next();
    }
    let title = words.collect::<Vec<_>>().join(" ");
    let title = if title.is_empty() {
        first_line.to_string()
    } else {
        title
    };
    if title.chars().count() <= 80 {
        if title.is_empty() {
            "(untitled)".to_string()
        } else {
            title
        }
    } else {
        let mut short: String = title.chars().take(79).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_are_mentioned_by_their_whole_name() {
        assert_eq!(
            person_mentions("thanks @ada.lovelace, and @Bob_2. cc @ada.lovelace"),
            vec!["ada.lovelace", "bob_2"]
        );
        assert_eq!(
            person_mentions("mail ada@example.org or @"),
            Vec::<String>::new()
        );
        assert_eq!(person_mentions("(@grace)"), vec!["grace"]);
    }

    #[test]
    fn wake_rules() {
        assert!(should_wake(true, false, false, 3), "a mention always wakes");
        assert!(
            should_wake(false, false, true, 1),
            "a one-person session continues"
        );
        assert!(
            !should_wake(false, false, true, 2),
            "a second human needs a mention"
        );
        assert!(
            !should_wake(false, false, false, 1),
            "a fresh thread needs a mention"
        );
        assert!(
            !should_wake(false, true, true, 1),
            "a call for @skipper alone is for Skipper"
        );
        assert!(
            should_wake(true, true, true, 1),
            "mentioning both wakes both"
        );
    }

    #[test]
    fn the_message_alone_decides_only_what_no_thread_fact_changes() {
        for (mentions, skipper) in [(false, false), (true, false), (false, true), (true, true)] {
            let decided = decided_by_message(mentions, skipper);
            assert_eq!(decided.is_none(), !mentions && !skipper);
            for (replied, humans) in [(false, 1), (true, 1), (true, 2), (false, 3)] {
                if let Some(wake) = decided {
                    assert_eq!(wake, should_wake(mentions, skipper, replied, humans));
                }
            }
        }
    }

    #[test]
    fn mentions_are_read_like_people_write_them() {
        assert_eq!(mentions("@launch-agent write a plan"), ["launch-agent"]);
        assert_eq!(
            mentions("hi @Launch-Agent, and @skipper!"),
            ["launch-agent", "skipper"]
        );
        assert_eq!(mentions("(@ops-agent) @ops-agent-"), ["ops-agent"]);
        assert!(mentions("mail bob@launch-agent.io").is_empty());
        assert!(mentions("@ alone").is_empty());
    }

    #[test]
    fn titles_skip_mentions_and_are_short() {
        assert_eq!(
            thread_title("@launch-agent write the launch plan\nmore"),
            "write the launch plan"
        );
        assert_eq!(thread_title("@launch-agent"), "@launch-agent");
        assert_eq!(thread_title(&"x".repeat(100)).chars().count(), 80);
    }
}

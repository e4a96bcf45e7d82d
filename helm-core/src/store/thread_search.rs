//! Searching a channel's threads by what was said in them, over the word
//! index recall already keeps (SQLite's FTS5 table, PostgreSQL's `words`
//! tsvectors) plus the threads' titles and summaries: no second index.
//!
//! Written once against [`Store`], so every store searches alike and the
//! store conformance suite checks each.

use std::collections::HashMap;

use crate::error::Result;
use crate::memory::query;
use crate::memory::recall::{DEPTH, WORD_WALK};
use crate::model::{ChannelId, MessageId, Thread, ThreadId, ThreadStatus};
use crate::store::{Store, ThreadPage};

/// Where a thread matched a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedIn {
    /// Its title.
    Title,
    /// Its rolling summary.
    Summary,
    /// One of its messages.
    Message,
}

impl MatchedIn {
    /// Its name on the wire: `title`, `summary` or `message`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedIn::Title => "title",
            MatchedIn::Summary => "summary",
            MatchedIn::Message => "message",
        }
    }
}

/// A thread a search found, with where.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadMatch {
    /// The thread.
    pub thread: Thread,
    /// Where the snippet comes from.
    pub matched_in: MatchedIn,
    /// The best-matching message, when the words were found in a message.
    pub message_id: Option<MessageId>,
    /// A short excerpt around the first matched word (whitespace folded).
    pub snippet: String,
}

/// Threads whose title matched rank first (more of the query's words
/// first), then by how well their best message matched (BM25, as recall
/// scores it), then the most recently active.
struct Ranked {
    title_words: usize,
    score: f64,
    hit: ThreadMatch,
}

/// The threads of `channel` matching `text`: its words (stop words and
/// dates left out, as recall reads a question) in a thread's title or
/// summary (as written) or in its messages (stemmed, through the word
/// index). `archived` filters as [`ThreadPage::archived`]. No words, no
/// threads.
pub async fn search_threads(
    store: &dyn Store,
    channel: ChannelId,
    text: &str,
    archived: Option<bool>,
    limit: usize,
) -> Result<Vec<ThreadMatch>> {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let terms = query::parse(text, today).terms;
    if terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let mut found: HashMap<ThreadId, Ranked> = HashMap::new();
    // Each word's newest titles apart: asked for all the words at once, a
    // common one ("session" in fifty "Weekly sync session N") would fill
    // the page and leave out the older thread whose title has every word.
    let mut titled: Vec<Thread> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for term in &terms {
        let page = store
            .thread_page(
                channel,
                ThreadPage {
                    before: None,
                    archived,
                    titled: vec![term.clone()],
                    limit: DEPTH,
                },
            )
            .await?;
        titled.extend(page.into_iter().filter(|t| seen.insert(t.id)));
    }
    for thread in titled {
        let title_words = count_words(&thread.title, &terms);
        let (matched_in, snippet) = if title_words > 0 {
            (MatchedIn::Title, snippet(&thread.title, &terms))
        } else {
            (MatchedIn::Summary, snippet(&thread.summary, &terms))
        };
        found.insert(
            thread.id,
            Ranked {
                title_words,
                score: 0.0,
                hit: ThreadMatch {
                    thread,
                    matched_in,
                    message_id: None,
                    snippet,
                },
            },
        );
    }

    // The word index ranks messages and memory records; only this
    // channel's messages speak for its threads, each thread by its best.
    let hits = store
        .recall_lexical(channel, &terms, DEPTH, Some(WORD_WALK))
        .await?;
    let scores: HashMap<_, f64> = hits
        .iter()
        .filter(|(key, _)| key.message_id().is_some())
        .map(|(key, score)| (*key, *score))
        .collect();
    let items = store
        .recall_items(hits.iter().map(|(key, _)| *key).collect())
        .await?;
    let mut best: HashMap<ThreadId, (f64, MessageId, String)> = HashMap::new();
    for item in items {
        let (Some(thread), Some(message), Some(score)) = (
            item.thread_id,
            item.key.message_id(),
            scores.get(&item.key).copied(),
        ) else {
            continue;
        };
        if item.channel_id != channel {
            continue;
        }
        let better = best.get(&thread).is_none_or(|(s, _, _)| score > *s);
        if better {
            best.insert(thread, (score, message, item.content));
        }
    }
    for (id, (score, message, content)) in best {
        let ranked = match found.get_mut(&id) {
            Some(ranked) => ranked,
            None => {
                let thread = store.thread(id).await?;
                let is_archived = thread.status == ThreadStatus::Archived;
                if thread.channel_id != channel || archived.is_some_and(|a| a != is_archived) {
                    continue;
                }
                found.entry(id).or_insert(Ranked {
                    title_words: 0,
                    score: 0.0,
                    hit: ThreadMatch {
                        thread,
                        matched_in: MatchedIn::Message,
                        message_id: None,
                        snippet: String::new(),
                    },
                })
            }
        };
        ranked.score = score;
        ranked.hit.message_id = Some(message);
        // A message says more about where the words are than the title
        // that already heads the result.
        ranked.hit.matched_in = MatchedIn::Message;
        ranked.hit.snippet = snippet(&content, &terms);
    }

    let mut ranked: Vec<Ranked> = found.into_values().collect();
    ranked.sort_by(|a, b| {
        b.title_words
            .cmp(&a.title_words)
            .then(b.score.total_cmp(&a.score))
            .then(b.hit.thread.updated_at.cmp(&a.hit.thread.updated_at))
            .then(b.hit.thread.id.cmp(&a.hit.thread.id))
    });
    ranked.truncate(limit);
    Ok(ranked.into_iter().map(|r| r.hit).collect())
}

/// How many of `terms` appear in `text`, case-insensitively.
fn count_words(text: &str, terms: &[String]) -> usize {
    let lower = text.to_lowercase();
    terms.iter().filter(|t| lower.contains(t.as_str())).count()
}

/// Characters kept before and after the first matched word.
const BEFORE: usize = 60;
const AFTER: usize = 120;

/// An excerpt of `text` around the first of `terms` found in it, with `…`
/// where it was cut. The word index matches stems ("hiking" finds
/// "hikes"), so a term not found as written is looked for as the index
/// found it, by its stem, then by its first letters; a text where none is
/// found is excerpted from its start.
pub fn snippet(text: &str, terms: &[String]) -> String {
    let folded: Vec<char> = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let lower: Vec<char> = folded.iter().flat_map(|c| c.to_lowercase()).collect();
    // Lowercasing may change the length of some scripts; excerpt from the
    // start then rather than at a position that does not line up.
    let at = if lower.len() == folded.len() {
        first_match(&lower, terms).unwrap_or(0)
    } else {
        0
    };
    let start = at.saturating_sub(BEFORE);
    let end = (at + AFTER).min(folded.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&folded[start..end]);
    if end < folded.len() {
        out.push('…');
    }
    out
}

fn first_match(lower: &[char], terms: &[String]) -> Option<usize> {
    let find = |needle: &[char]| {
        if needle.is_empty() || needle.len() > lower.len() {
            return None;
        }
        lower.windows(needle.len()).position(|w| w == needle)
    };
    let exact = terms
        .iter()
        .filter_map(|t| find(&t.chars().collect::<Vec<_>>()))
        .min();
    exact.or_else(|| first_by_stem(lower, terms)).or_else(|| {
        terms
            .iter()
            .filter_map(|t| {
                let chars: Vec<char> = t.chars().collect();
                let stem = chars.len().saturating_sub(2).max(3).min(chars.len());
                find(&chars[..stem])
            })
            .min()
    })
}

/// Where the first word of `lower` whose English stem is a term's starts.
fn first_by_stem(lower: &[char], terms: &[String]) -> Option<usize> {
    let stems: Vec<String> = terms
        .iter()
        .map(|t| super::stems::english(&t.to_lowercase()).into_owned())
        .collect();
    let mut at = 0;
    while at < lower.len() {
        if !lower[at].is_alphanumeric() {
            at += 1;
            continue;
        }
        let end = lower[at..]
            .iter()
            .position(|c| !c.is_alphanumeric())
            .map_or(lower.len(), |n| at + n);
        let word: String = lower[at..end].iter().collect();
        if stems.iter().any(|s| *s == super::stems::english(&word)) {
            return Some(at);
        }
        at = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::snippet;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_snippet_centres_on_the_first_matched_word() {
        let text = format!(
            "{} the zebra   crossing {}",
            "a ".repeat(100),
            "b ".repeat(100)
        );
        let s = snippet(&text, &terms(&["zebra"]));
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("the zebra crossing"), "{s}");
    }

    #[test]
    fn a_snippet_finds_a_word_by_its_stem_as_the_index_does() {
        // The index found "runs" in "running" (both stem to "run"); the
        // first letters "run" are also inside "brunch", far before it.
        let text = format!(
            "{}we had brunch {}then the dogs were running {}",
            "x ".repeat(40),
            "y ".repeat(80),
            "z ".repeat(80)
        );
        let s = snippet(&text, &terms(&["runs"]));
        assert!(s.contains("were running"), "{s}");
        assert!(!s.contains("brunch"), "{s}");
    }

    #[test]
    fn a_snippet_finds_a_stemmed_word_by_its_first_letters() {
        let s = snippet("we went hiking on sunday", &terms(&["hikes"]));
        assert_eq!(s, "we went hiking on sunday");
        let long = format!("{}went hiking", "x ".repeat(80));
        assert!(snippet(&long, &terms(&["hikes"])).contains("hiking"));
    }
}

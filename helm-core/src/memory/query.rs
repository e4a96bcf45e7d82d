//! Reading a recall query: the words worth matching, and the times it names
//! (read by [`when`]).
//!
//! The words are runs of letters and digits only, so punctuation and any
//! search engine's operators (`AND`, `NEAR`, `*`, `"`) in a question are
//! kept out; each store turns them into its own query syntax.

use jiff::civil::Date;

use super::when::{self, TimeSpan};

/// Words that carry no meaning for matching.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "been",
    "being",
    "but",
    "by",
    "for",
    "from",
    "has",
    "have",
    "had",
    "he",
    "her",
    "hers",
    "him",
    "his",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "me",
    "my",
    "myself",
    "of",
    "on",
    "or",
    "our",
    "ours",
    "she",
    "so",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "us",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "do",
    "does",
    "did",
    "doing",
    "done",
    "can",
    "could",
    "should",
    "shall",
    "may",
    "might",
    "must",
    "about",
    "after",
    "again",
    "against",
    "all",
    "any",
    "before",
    "below",
    "between",
    "both",
    "down",
    "during",
    "each",
    "few",
    "further",
    "here",
    "how",
    "just",
    "more",
    "most",
    "no",
    "nor",
    "not",
    "now",
    "off",
    "once",
    "only",
    "other",
    "over",
    "own",
    "same",
    "some",
    "such",
    "up",
    "very",
    "s",
    "t",
    "don",
    "ll",
    "re",
    "ve",
    "d",
    "m",
    "o",
    "y",
    "am",
    "ever",
    "also",
    "like",
    "get",
    "got",
    "go",
    "going",
    "went",
    "kind",
];

/// The most distinct words used from one query.
pub const MAX_TERMS: usize = 32;

/// A query, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuery {
    /// The distinct words worth matching, lowercased, in query order (at
    /// most [`MAX_TERMS`]); each is letters and digits only.
    pub terms: Vec<String>,
    /// The times the query names (see [`when`]).
    pub dates: Vec<TimeSpan>,
}

/// Reads a query; `today` anchors relative times such as "last week".
pub fn parse(query: &str, today: Date) -> ParsedQuery {
    // Words: runs of letters and digits (any script); ISO dates are read first.
    let lower = query.to_lowercase();
    let mut dates = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    for raw in lower.split(|c: char| !(c.is_alphanumeric() || c == '-')) {
        if raw.is_empty() {
            continue;
        }
        let parts: Vec<&str> = raw.split('-').filter(|p| !p.is_empty()).collect();
        if parts.len() == 3
            && parts[0].len() == 4
            && let (Ok(y), Ok(m), Ok(d)) = (
                parts[0].parse::<i16>(),
                parts[1].parse::<i8>(),
                parts[2].parse::<i8>(),
            )
            && let Ok(date) = Date::new(y, m, d)
        {
            dates.push(TimeSpan::Days(date, date));
            continue;
        }
        words.extend(parts);
    }

    // Spoken dates and times: "13 October 2023", "in May", "last week".
    let (spoken, used) = when::read(&words, today);
    dates.extend(spoken);

    let mut terms: Vec<&str> = Vec::new();
    for (word, used) in words.iter().zip(used) {
        if used || STOPWORDS.contains(word) || terms.contains(word) {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    ParsedQuery {
        terms: terms.into_iter().map(str::to_string).collect(),
        dates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: Date = Date::constant(2026, 1, 1);

    fn date(y: i16, m: i8, d: i8) -> Date {
        Date::new(y, m, d).unwrap_or_default()
    }

    #[test]
    fn operators_and_punctuation_are_left_out_of_the_words() {
        let q = parse(
            "What did Caroline say about the \"adoption\" AND NEAR agency*?",
            TODAY,
        );
        assert_eq!(q.terms, ["caroline", "say", "adoption", "near", "agency"]);
        assert!(parse("?!... ***", TODAY).terms.is_empty());
        assert!(parse("the of and", TODAY).terms.is_empty());
    }

    #[test]
    fn dates_are_read_and_removed_from_the_words() {
        let q = parse(
            "What happened on 13 October, 2023 and on May 7th 2023 and in July 2023, 2023-01-02?",
            TODAY,
        );
        assert_eq!(
            q.dates,
            vec![
                TimeSpan::Days(date(2023, 1, 2), date(2023, 1, 2)),
                TimeSpan::Days(date(2023, 10, 13), date(2023, 10, 13)),
                TimeSpan::Days(date(2023, 5, 7), date(2023, 5, 7)),
                TimeSpan::Days(date(2023, 7, 1), date(2023, 7, 31)),
            ]
        );
        assert_eq!(q.terms, ["happened"]);
    }

    #[test]
    fn huge_queries_are_capped() {
        let text: String = (0..1000).map(|i| format!("word{i} ")).collect();
        let q = parse(&text, TODAY);
        assert_eq!(q.terms.len(), MAX_TERMS);
    }
}

//! Reading a recall query: the words worth matching (as a safe FTS5 `OR`
//! query), and the dates it names.
//!
//! Every word is quoted, so punctuation and FTS5 operators (`AND`, `NEAR`,
//! `*`, `"`) in a question are matched as words, never parsed as syntax.

use jiff::civil::Date;

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
const MAX_TERMS: usize = 32;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A query, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedQuery {
    /// The FTS5 expression (quoted words joined by `OR`), if any word is left.
    pub fts: Option<String>,
    /// The days or months the query names, as inclusive date ranges.
    pub dates: Vec<(Date, Date)>,
}

fn month_number(word: &str) -> Option<i8> {
    let w = word.trim_end_matches('.');
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| {
            m.starts_with(w) && (w.len() == 3 || *m == w || (w == "sept" && *m == "september"))
        })
        .map(|i| i as i8 + 1)
}

fn day_number(word: &str) -> Option<i8> {
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))
        .unwrap_or(word);
    let day: i8 = digits.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

fn year_number(word: &str) -> Option<i16> {
    (word.len() == 4)
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

fn month_range(year: i16, month: i8) -> Option<(Date, Date)> {
    let start = Date::new(year, month, 1).ok()?;
    let end = start.last_of_month();
    Some((start, end))
}

/// Reads a query.
pub fn parse(query: &str) -> ParsedQuery {
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
            && let (Some(y), Ok(m), Ok(d)) = (
                year_number(parts[0]),
                parts[1].parse::<i8>(),
                parts[2].parse::<i8>(),
            )
            && let Ok(date) = Date::new(y, m, d)
        {
            dates.push((date, date));
            continue;
        }
        words.extend(parts);
    }

    // Spoken dates: "13 October 2023", "October 13th, 2023", "July 2023".
    let mut used = vec![false; words.len()];
    let mut i = 0;
    while i < words.len() {
        let w = |k: usize| words.get(k).copied().unwrap_or("");
        if let (Some(d), Some(m), Some(y)) = (
            day_number(w(i)),
            month_number(w(i + 1)),
            year_number(w(i + 2)),
        ) && let Ok(date) = Date::new(y, m, d)
        {
            dates.push((date, date));
            used[i..i + 3].iter_mut().for_each(|u| *u = true);
            i += 3;
            continue;
        }
        if let (Some(m), Some(d), Some(y)) = (
            month_number(w(i)),
            day_number(w(i + 1)),
            year_number(w(i + 2)),
        ) && let Ok(date) = Date::new(y, m, d)
        {
            dates.push((date, date));
            used[i..i + 3].iter_mut().for_each(|u| *u = true);
            i += 3;
            continue;
        }
        if let (Some(m), Some(y)) = (month_number(w(i)), year_number(w(i + 1)))
            && let Some(range) = month_range(y, m)
        {
            dates.push(range);
            used[i..i + 2].iter_mut().for_each(|u| *u = true);
            i += 2;
            continue;
        }
        i += 1;
    }

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
    let fts = (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    });
    ParsedQuery { fts, dates }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i16, m: i8, d: i8) -> Date {
        Date::new(y, m, d).unwrap_or_default()
    }

    #[test]
    fn words_are_quoted_and_operators_are_words() {
        let q = parse("What did Caroline say about the \"adoption\" AND NEAR agency*?");
        assert_eq!(
            q.fts.as_deref(),
            Some("\"caroline\" OR \"say\" OR \"adoption\" OR \"near\" OR \"agency\"")
        );
        assert_eq!(parse("?!... ***").fts, None);
        assert_eq!(parse("the of and").fts, None);
    }

    #[test]
    fn dates_are_read_and_removed_from_the_words() {
        let q = parse(
            "What happened on 13 October, 2023 and on May 7th 2023 and in July 2023, 2023-01-02?",
        );
        assert_eq!(
            q.dates,
            vec![
                (date(2023, 1, 2), date(2023, 1, 2)),
                (date(2023, 10, 13), date(2023, 10, 13)),
                (date(2023, 5, 7), date(2023, 5, 7)),
                (date(2023, 7, 1), date(2023, 7, 31)),
            ]
        );
        assert_eq!(q.fts.as_deref(), Some("\"happened\""));
    }

    #[test]
    fn huge_queries_are_capped() {
        let text: String = (0..1000).map(|i| format!("word{i} ")).collect();
        let q = parse(&text);
        assert_eq!(
            q.fts.map(|f| f.matches(" OR ").count() + 1),
            Some(MAX_TERMS)
        );
    }
}

//! The times a recall query names, read so they can be matched against
//! when things were said: "on 13 October 2023", "in May", "the week before
//! 16 November 2023", "between August 11 and August 15 2023", "last week",
//! "three days ago".
//!
//! Recall lifts items said within a named time (see `fusion`): a question
//! about "what Nate made on 9 November" is about what was said then, which
//! its words alone rarely single out. Times relative to now ("yesterday",
//! "last month") are read against the query's clock, so a caller can ask as
//! of another day. A date without a year ("in May", "on August 11") matches
//! that day in any year: the conversation, not the calendar, decides.

use jiff::ToSpan;
use jiff::civil::{Date, Weekday};

/// A stretch of days a query names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpan {
    /// These days, both ends included.
    Days(Date, Date),
    /// These days of one month in any year (`month` 1–12, days 1–31, both
    /// ends included).
    EveryYear {
        /// The month.
        month: i8,
        /// The first day.
        from: i8,
        /// The last day.
        to: i8,
    },
}

impl TimeSpan {
    /// Whether `date` falls within the span, with a day of slack before and
    /// two after: "on the 13th" is often the evening before, and people
    /// speak of a day a little after it.
    pub fn covers(&self, date: Date) -> bool {
        match *self {
            TimeSpan::Days(from, to) => {
                let from = from.saturating_sub(1.day());
                let to = to.saturating_add(2.days());
                from <= date && date <= to
            }
            TimeSpan::EveryYear { month, from, to } => {
                // The same slack, applied in the date's own year.
                let Ok(start) = Date::new(date.year(), month, from.min(days_in(date, month)))
                else {
                    return false;
                };
                let Ok(end) = Date::new(date.year(), month, to.min(days_in(date, month))) else {
                    return false;
                };
                TimeSpan::Days(start, end).covers(date)
            }
        }
    }
}

fn days_in(date: Date, month: i8) -> i8 {
    Date::new(date.year(), month, 1)
        .map(|d| d.days_in_month())
        .unwrap_or(28)
}

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

/// Words that make a bare month name ("May", "March") mean the month.
const MONTH_LEADS: &[&str] = &[
    "in", "of", "during", "since", "early", "late", "mid", "last", "this", "until", "by",
];

/// A month's number from its name or abbreviation (`Oct`, `Sept.`).
pub fn month_number(word: &str) -> Option<i8> {
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

fn small_number(word: &str) -> Option<i64> {
    const WORDS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return Some(i as i64 + 1);
    }
    match word {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" => Some(3),
        _ => word.parse().ok().filter(|n| (1..=400).contains(n)),
    }
}

/// A date the words at `i` spell, how many words it took, and whether it
/// had a year.
#[derive(Debug, Clone, Copy)]
enum Spelled {
    Day(Date),
    Month(Date, Date),
    YearlessDay(i8, i8),
    YearlessMonth(i8),
}

fn spelled_at(words: &[&str], i: usize) -> Option<(Spelled, usize)> {
    let w = |k: usize| words.get(k).copied().unwrap_or("");
    // "13 October 2023", "13 October"
    if let (Some(d), Some(m)) = (day_number(w(i)), month_number(w(i + 1))) {
        if let Some(y) = year_number(w(i + 2))
            && let Ok(date) = Date::new(y, m, d)
        {
            return Some((Spelled::Day(date), 3));
        }
        return Some((Spelled::YearlessDay(m, d), 2));
    }
    let m = month_number(w(i))?;
    // "October 13th, 2023", "October 13"
    if let Some(d) = day_number(w(i + 1)) {
        if let Some(y) = year_number(w(i + 2))
            && let Ok(date) = Date::new(y, m, d)
        {
            return Some((Spelled::Day(date), 3));
        }
        return Some((Spelled::YearlessDay(m, d), 2));
    }
    // "July 2023"
    if let Some(y) = year_number(w(i + 1))
        && let Ok(start) = Date::new(y, m, 1)
    {
        return Some((Spelled::Month(start, start.last_of_month()), 2));
    }
    // "in May": a bare month name only after a word that makes it one.
    let lead = i.checked_sub(1).map(w).unwrap_or("");
    MONTH_LEADS
        .contains(&lead)
        .then_some((Spelled::YearlessMonth(m), 1))
}

fn span_of(s: Spelled) -> TimeSpan {
    match s {
        Spelled::Day(d) => TimeSpan::Days(d, d),
        Spelled::Month(a, b) => TimeSpan::Days(a, b),
        Spelled::YearlessDay(m, d) => TimeSpan::EveryYear {
            month: m,
            from: d,
            to: d,
        },
        Spelled::YearlessMonth(m) => TimeSpan::EveryYear {
            month: m,
            from: 1,
            to: 31,
        },
    }
}

/// The day a spelled date ends on, if it has a year.
fn anchor(s: Spelled) -> Option<Date> {
    match s {
        Spelled::Day(d) => Some(d),
        Spelled::Month(_, end) => Some(end),
        _ => None,
    }
}

/// The times named in `words` (lower-case, in order), and which words they
/// took (so they are not also matched as words). `today` anchors relative
/// times.
pub fn read(words: &[&str], today: Date) -> (Vec<TimeSpan>, Vec<bool>) {
    let mut spans = Vec::new();
    let mut used = vec![false; words.len()];
    let w = |k: usize| words.get(k).copied().unwrap_or("");
    let mut i = 0;
    while i < words.len() {
        let mark = |from: usize, n: usize, used: &mut Vec<bool>| {
            for u in used.iter_mut().skip(from).take(n) {
                *u = true;
            }
        };
        // "between August 11 and August 15 2023": the year of the second
        // date serves the first.
        if w(i) == "between"
            && let Some((first, n1)) = spelled_at(words, i + 1)
            && w(i + 1 + n1) == "and"
            && let Some((second, n2)) = spelled_at(words, i + 2 + n1)
            && let Some(end) = anchor(second)
        {
            let start = match first {
                Spelled::Day(d) | Spelled::Month(d, _) => Some(d),
                Spelled::YearlessDay(m, d) => Date::new(end.year(), m, d).ok(),
                Spelled::YearlessMonth(m) => Date::new(end.year(), m, 1).ok(),
            };
            if let Some(start) = start.filter(|s| *s <= end) {
                spans.push(TimeSpan::Days(start, end));
                mark(i, 3 + n1 + n2, &mut used);
                i += 2 + n1 + n2;
                continue;
            }
        }
        // "the week before 16 November 2023", "the Sunday after 3 May 2022".
        if let Some((length, direction)) = window_before_after(w(i), w(i + 1))
            && let Some((date, n)) = spelled_at(words, i + 2)
            && let Some(day) = anchor(date)
        {
            let span = if direction == "before" {
                TimeSpan::Days(day.saturating_sub(length.days()), day)
            } else {
                TimeSpan::Days(day, day.saturating_add(length.days()))
            };
            spans.push(span);
            mark(i, 2 + n, &mut used);
            i += 2 + n;
            continue;
        }
        // "the second week of November"
        if let Some(nth) = ordinal(w(i))
            && w(i + 1) == "week"
            && w(i + 2) == "of"
            && let Some((month, n)) = spelled_at(words, i + 3)
        {
            let from = (nth - 1) * 7 + 1;
            let span = match month {
                Spelled::Month(start, _) => start
                    .with()
                    .day(from)
                    .build()
                    .ok()
                    .map(|d| TimeSpan::Days(d, d.saturating_add(6.days()))),
                Spelled::YearlessMonth(m) => Some(TimeSpan::EveryYear {
                    month: m,
                    from,
                    to: from + 6,
                }),
                _ => None,
            };
            if let Some(span) = span {
                spans.push(span);
                mark(i, 3 + n, &mut used);
                i += 3 + n;
                continue;
            }
        }
        if let Some((date, n)) = spelled_at(words, i) {
            spans.push(span_of(date));
            mark(i, n, &mut used);
            i += n;
            continue;
        }
        // "in 2022"
        if matches!(w(i.wrapping_sub(1)), "in" | "during")
            && let Some(y) = year_number(w(i))
            && let (Ok(a), Ok(b)) = (Date::new(y, 1, 1), Date::new(y, 12, 31))
        {
            spans.push(TimeSpan::Days(a, b));
            mark(i, 1, &mut used);
            i += 1;
            continue;
        }
        if let Some((span, n)) = relative(words, i, today) {
            spans.push(span);
            mark(i, n, &mut used);
            i += n;
            continue;
        }
        i += 1;
    }
    (spans, used)
}

/// `week before` → (7, "before"); also weekend, weekday names, day, month.
fn window_before_after(unit: &str, direction: &str) -> Option<(i64, &'static str)> {
    let direction = match direction {
        "before" => "before",
        "after" => "after",
        _ => return None,
    };
    let length = match unit {
        "day" => 1,
        "weekend" | "week" => 8,
        "month" => 31,
        other if weekday(other).is_some() => 7,
        _ => return None,
    };
    Some((length, direction))
}

fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return None,
    })
}

fn ordinal(word: &str) -> Option<i8> {
    Some(match word {
        "first" | "1st" => 1,
        "second" | "2nd" => 2,
        "third" | "3rd" => 3,
        "fourth" | "4th" => 4,
        _ => return None,
    })
}

/// Times relative to `today`: "yesterday", "last week", "this month",
/// "three days ago", "last Friday".
fn relative(words: &[&str], i: usize, today: Date) -> Option<(TimeSpan, usize)> {
    let w = |k: usize| words.get(k).copied().unwrap_or("");
    let back = |n: i64| today.saturating_sub(n.days());
    let days = |a: Date, b: Date| TimeSpan::Days(a, b);
    match (w(i), w(i + 1)) {
        ("yesterday", _) => return Some((days(back(1), back(1)), 1)),
        ("today" | "tonight", _) => return Some((days(today, today), 1)),
        ("last" | "past", "week") => return Some((days(back(13), back(1)), 2)),
        ("last", "weekend") => return Some((days(back(9), back(1)), 2)),
        ("this", "week") => return Some((days(back(6), today), 2)),
        ("last" | "past", "month") => {
            let first = today.first_of_month().saturating_sub(1.month());
            return Some((days(first, first.last_of_month()), 2));
        }
        ("this", "month") => return Some((days(today.first_of_month(), today), 2)),
        ("last" | "past", "year") => {
            let y = today.year() - 1;
            let a = Date::new(y, 1, 1).ok()?;
            return Some((days(a, a.last_of_year()), 2));
        }
        ("this", "year") => return Some((days(today.first_of_year(), today), 2)),
        ("last", day) if weekday(day).is_some() => {
            let wd = weekday(day)?;
            let mut d = back(1);
            while d.weekday() != wd {
                d = d.saturating_sub(1.day());
            }
            return Some((days(d, d), 2));
        }
        _ => {}
    }
    // "three days ago", "a couple of weeks ago"
    let (n, unit_at) = match (small_number(w(i)), w(i + 1)) {
        (Some(2), "of") if w(i) == "couple" => (2, i + 2),
        (Some(n), _) => (n, i + 1),
        _ => return None,
    };
    let (unit, ago) = (w(unit_at), w(unit_at + 1));
    if ago != "ago" {
        return None;
    }
    let center = match unit.trim_end_matches('s') {
        "day" => back(n),
        "week" => back(7 * n),
        "month" => today.saturating_sub(n.months()),
        "year" => today.saturating_sub(n.years()),
        _ => return None,
    };
    // The further back, the vaguer: half a unit on either side.
    let slack = match unit.trim_end_matches('s') {
        "day" => 0,
        "week" => 3,
        "month" => 15,
        _ => 182,
    };
    let span = days(
        center.saturating_sub(slack.days()),
        center.saturating_add(slack.days()),
    );
    Some((span, unit_at + 2 - i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i16, m: i8, d: i8) -> Date {
        Date::new(y, m, d).unwrap_or_default()
    }

    fn spans(text: &str, today: Date) -> Vec<TimeSpan> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        read(&words, today).0
    }

    #[test]
    fn absolute_dates_months_and_years() {
        let today = date(2026, 1, 1);
        assert_eq!(
            spans("What did Nate make on 9 November, 2022?", today),
            [TimeSpan::Days(date(2022, 11, 9), date(2022, 11, 9))]
        );
        assert_eq!(
            spans(
                "What did Tim read on December 1,2023 and in July 2023?",
                today
            ),
            [
                TimeSpan::Days(date(2023, 12, 1), date(2023, 12, 1)),
                TimeSpan::Days(date(2023, 7, 1), date(2023, 7, 31)),
            ]
        );
        assert_eq!(
            spans("What deal did John get in December? And in 2022?", today),
            [
                TimeSpan::EveryYear {
                    month: 12,
                    from: 1,
                    to: 31
                },
                TimeSpan::Days(date(2022, 1, 1), date(2022, 12, 31)),
            ]
        );
        // "may" the verb is not a month.
        assert!(spans("What may Caroline do next?", today).is_empty());
    }

    #[test]
    fn windows_around_a_date() {
        let today = date(2026, 1, 1);
        assert_eq!(
            spans("Where was Tim in the week before 16 November 2023?", today),
            [TimeSpan::Days(date(2023, 11, 8), date(2023, 11, 16))]
        );
        assert_eq!(
            spans(
                "Where was John between August 11 and August 15 2023?",
                today
            ),
            [TimeSpan::Days(date(2023, 8, 11), date(2023, 8, 15))]
        );
        assert_eq!(
            spans(
                "Which country did Tim visit in the second week of November?",
                today
            ),
            [TimeSpan::EveryYear {
                month: 11,
                from: 8,
                to: 14
            }]
        );
    }

    #[test]
    fn relative_times_are_read_against_today() {
        let today = date(2024, 3, 20); // a Wednesday
        assert_eq!(
            spans("what did we decide yesterday", today),
            [TimeSpan::Days(date(2024, 3, 19), date(2024, 3, 19))]
        );
        assert_eq!(
            spans("the plan from last month", today),
            [TimeSpan::Days(date(2024, 2, 1), date(2024, 2, 29))]
        );
        assert_eq!(
            spans("what did Ann say three days ago", today),
            [TimeSpan::Days(date(2024, 3, 17), date(2024, 3, 17))]
        );
        assert_eq!(
            spans("the call last Friday", today),
            [TimeSpan::Days(date(2024, 3, 15), date(2024, 3, 15))]
        );
    }

    #[test]
    fn spans_cover_their_days_with_slack() {
        let day = TimeSpan::Days(date(2023, 5, 8), date(2023, 5, 8));
        assert!(day.covers(date(2023, 5, 7)));
        assert!(day.covers(date(2023, 5, 10)));
        assert!(!day.covers(date(2023, 5, 11)));
        let may = TimeSpan::EveryYear {
            month: 5,
            from: 1,
            to: 31,
        };
        assert!(may.covers(date(2019, 5, 20)));
        assert!(!may.covers(date(2019, 7, 2)));
        let feb30 = TimeSpan::EveryYear {
            month: 2,
            from: 29,
            to: 31,
        };
        assert!(feb30.covers(date(2023, 2, 28)));
    }
}

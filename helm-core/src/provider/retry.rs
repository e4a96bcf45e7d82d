//! When to try a model request again, and how long to wait first.
//!
//! The HTTP plumbing ([`super::http`]) retries rate limits, server errors and
//! failed connections, but only before the first stream event reached the
//! caller: a half-streamed answer is never replayed. The waits grow
//! exponentially with jitter, so that many clients refused at once do not
//! return at once, and a server's `Retry-After` is honoured up to a cap.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use reqwest::header::HeaderMap;

use super::http::HttpOptions;

/// The exponential backoff before retry number `retry` (0 for the first
/// retry): the initial backoff doubled per retry, capped at the maximum, then
/// scaled into its upper half by `jitter` (in `0.0..1.0`).
pub(crate) fn backoff_delay(retry: u32, options: &HttpOptions, jitter: f64) -> Duration {
    let doubled = options
        .initial_backoff
        .saturating_mul(2u32.saturating_pow(retry.min(31)));
    let base = doubled.min(options.max_backoff);
    // "Equal jitter": never less than half the base, so the backoff still grows.
    base.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
}

/// How long to wait before retry number `retry`, or `None` when the server
/// asked for a longer wait than [`HttpOptions::max_retry_after`] allows (then
/// retrying sooner would only be refused again, so the caller gives up).
pub(crate) fn retry_delay(
    retry: u32,
    retry_after: Option<Duration>,
    options: &HttpOptions,
    jitter: f64,
) -> Option<Duration> {
    let backoff = backoff_delay(retry, options, jitter);
    match retry_after {
        Some(asked) if asked > options.max_retry_after => None,
        Some(asked) => Some(asked.max(backoff)),
        None => Some(backoff),
    }
}

/// The wait a response asks for: OpenAI's `retry-after-ms`, or `Retry-After`
/// as seconds or as an HTTP date (relative to `now`).
pub(crate) fn retry_after(headers: &HeaderMap, now: jiff::Timestamp) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(millis) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && millis.is_finite()
        && millis >= 0.0
    {
        return Some(Duration::from_secs_f64(millis / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    // HTTP-date (IMF-fixdate) is RFC 2822 with the zone written "GMT".
    let date = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .ok()?;
    let wait = now.duration_until(date);
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// A random number in `0.0..1.0` for jitter. Each `RandomState` is seeded
/// from the OS once per thread and then varied, which is plenty for spreading
/// retries and saves a dependency on a random-number crate.
pub(crate) fn jitter() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn options() -> HttpOptions {
        HttpOptions {
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            ..HttpOptions::default()
        }
    }

    #[test]
    fn backoff_doubles_from_the_initial_delay_up_to_the_cap() {
        let full: Vec<u128> = (0..7)
            .map(|retry| backoff_delay(retry, &options(), 1.0).as_millis())
            .collect();
        assert_eq!(full, vec![500, 1000, 2000, 4000, 8000, 8000, 8000]);
        assert_eq!(
            backoff_delay(u32::MAX, &options(), 1.0),
            Duration::from_secs(8)
        );
    }

    #[test]
    fn jitter_keeps_the_backoff_within_its_upper_half() {
        assert_eq!(
            backoff_delay(2, &options(), 0.0),
            Duration::from_millis(1000)
        );
        assert_eq!(
            backoff_delay(2, &options(), 0.5),
            Duration::from_millis(1500)
        );
        for _ in 0..100 {
            let delay = backoff_delay(1, &options(), jitter());
            assert!(delay >= Duration::from_millis(500) && delay <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn jitter_varies_and_stays_in_range() {
        let samples: Vec<f64> = (0..50).map(|_| jitter()).collect();
        assert!(samples.iter().all(|j| (0.0..1.0).contains(j)));
        assert!(samples.windows(2).any(|w| w[0] != w[1]), "{samples:?}");
    }

    #[test]
    fn retry_after_is_honoured_when_longer_than_the_backoff() {
        let wait = retry_delay(0, Some(Duration::from_secs(3)), &options(), 1.0);
        assert_eq!(wait, Some(Duration::from_secs(3)));
        let short = retry_delay(3, Some(Duration::from_millis(10)), &options(), 1.0);
        assert_eq!(short, Some(Duration::from_secs(4)));
    }

    #[test]
    fn retry_after_beyond_the_cap_means_giving_up() {
        assert_eq!(
            retry_delay(0, Some(Duration::from_secs(61)), &options(), 0.5),
            None
        );
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            if let Ok(value) = HeaderValue::from_str(value) {
                map.insert(*name, value);
            }
        }
        map
    }

    #[test]
    fn reads_retry_after_in_seconds_milliseconds_and_http_dates() -> Result<(), jiff::Error> {
        let now: jiff::Timestamp = "2026-01-05T10:00:00Z".parse()?;
        let read = |pairs: &[(&'static str, &str)]| retry_after(&headers(pairs), now);
        assert_eq!(read(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            read(&[("retry-after", " 1.5 ")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            read(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            read(&[("retry-after", "Mon, 05 Jan 2026 10:00:07 GMT")]),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            read(&[("retry-after", "Mon, 05 Jan 2026 09:59:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(read(&[("retry-after", "soon")]), None);
        assert_eq!(read(&[("retry-after", "-3")]), None);
        assert_eq!(read(&[]), None);
        Ok(())
    }
}

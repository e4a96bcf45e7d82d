//! Rate limits for signing in: token buckets keyed by client address (every
//! attempt counts) and by account (failures count), so neither one address
//! guessing many accounts nor many addresses guessing one account gets far.
//! Also applied, by address, to the other endpoints that hash a password
//! (setup, accepting an invitation), which are costly on purpose.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::RateLimit;

/// Above this many tracked keys, full buckets are forgotten.
const MAX_KEYS: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// The login limiter of one server.
#[derive(Debug)]
pub struct LoginLimiter {
    per_ip: RateLimit,
    per_account: RateLimit,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl LoginLimiter {
    /// A limiter with these rules.
    pub fn new(per_ip: RateLimit, per_account: RateLimit) -> Self {
        LoginLimiter {
            per_ip,
            per_account,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Counts an attempt from `ip`; `Err(seconds)` when it must wait.
    pub fn attempt_from(&self, ip: &str) -> Result<(), u64> {
        self.take(&format!("ip:{ip}"), self.per_ip, true)
    }

    /// Whether `account` may try now; `Err(seconds)` when it must wait.
    pub fn account_allowed(&self, account: &str) -> Result<(), u64> {
        self.take(&format!("account:{account}"), self.per_account, false)
    }

    /// Counts a failed sign-in for `account`.
    pub fn account_failed(&self, account: &str) {
        let _ = self.take(&format!("account:{account}"), self.per_account, true);
    }

    fn take(&self, key: &str, rule: RateLimit, consume: bool) -> Result<(), u64> {
        let now = Instant::now();
        let capacity = f64::from(rule.burst.max(1));
        let per_sec = f64::from(rule.per_minute.max(1)) / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > MAX_KEYS {
            buckets.retain(|_, b| {
                b.tokens + now.duration_since(b.updated).as_secs_f64() * per_sec < capacity
            });
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: capacity,
            updated: now,
        });
        let refilled = (bucket.tokens + now.duration_since(bucket.updated).as_secs_f64() * per_sec)
            .min(capacity);
        bucket.tokens = refilled;
        bucket.updated = now;
        if refilled < 1.0 {
            return Err(((1.0 - refilled) / per_sec).ceil() as u64);
        }
        if consume {
            bucket.tokens -= 1.0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_run_out_and_name_a_wait() {
        let limiter = LoginLimiter::new(
            RateLimit {
                burst: 2,
                per_minute: 1,
            },
            RateLimit {
                burst: 1,
                per_minute: 1,
            },
        );
        assert!(limiter.attempt_from("1.2.3.4").is_ok());
        assert!(limiter.attempt_from("1.2.3.4").is_ok());
        let wait = limiter.attempt_from("1.2.3.4");
        assert!(matches!(wait, Err(s) if (1..=60).contains(&s)), "{wait:?}");
        assert!(limiter.attempt_from("5.6.7.8").is_ok());
        assert!(limiter.account_allowed("mira").is_ok());
        limiter.account_failed("mira");
        assert!(limiter.account_allowed("mira").is_err());
        assert!(limiter.account_allowed("tom").is_ok());
    }
}

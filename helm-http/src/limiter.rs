//! Rate limits for signing in: token buckets keyed by client address (every
//! attempt counts) and by account (failures count), so neither one address
//! guessing many accounts nor many addresses guessing one account gets far.
//! An account's failures count per address first: wrong passwords from one
//! address lock that address out of the account, not its owner elsewhere;
//! the account as a whole locks only after [`ACCOUNT_SPREAD`] times as many
//! failures from many addresses.
//! Also applied, by address, to the other endpoints that hash a password
//! (setup, accepting an invitation), which are costly on purpose.
//!
//! The map of buckets is bounded: at most `MAX_KEYS`; past that, full
//! buckets go first, then the least recently used, so a flood of source
//! addresses costs a bounded amount of memory (and IPv6 clients are keyed
//! by their /64, which one host gets whole). Not `governor`: its keyed
//! limiters cannot ask whether a key may go without spending a token, and
//! the per-account rule counts failures only, after the password check.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::config::RateLimit;

/// Above this many tracked keys, full buckets are forgotten.
const MAX_KEYS: usize = 10_000;

/// How many times the per-address rule an account takes, from all
/// addresses together, before it locks for everyone.
pub const ACCOUNT_SPREAD: u32 = 10;

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
        self.take(&format!("ip:{}", address_key(ip)), self.per_ip, true)
    }

    /// How many keys are tracked.
    pub fn tracked(&self) -> usize {
        self.buckets.lock().map(|b| b.len()).unwrap_or(0)
    }

    /// Whether `account` may be tried from `ip` now; `Err(seconds)` when it
    /// must wait.
    pub fn account_allowed(&self, account: &str, ip: &str) -> Result<(), u64> {
        self.take(&self.account_from(account, ip), self.per_account, false)?;
        self.take(&format!("account:{account}"), self.spread(), false)
    }

    /// Counts a failed sign-in for `account` from `ip`.
    pub fn account_failed(&self, account: &str, ip: &str) {
        let _ = self.take(&self.account_from(account, ip), self.per_account, true);
        let _ = self.take(&format!("account:{account}"), self.spread(), true);
    }

    fn account_from(&self, account: &str, ip: &str) -> String {
        format!("account:{account}@{}", address_key(ip))
    }

    /// The per-account rule for all addresses together.
    fn spread(&self) -> RateLimit {
        RateLimit {
            burst: self.per_account.burst.saturating_mul(ACCOUNT_SPREAD),
            per_minute: self.per_account.per_minute.saturating_mul(ACCOUNT_SPREAD),
        }
    }

    fn take(&self, key: &str, rule: RateLimit, consume: bool) -> Result<(), u64> {
        let now = Instant::now();
        let capacity = f64::from(rule.burst.max(1));
        let per_sec = f64::from(rule.per_minute.max(1)) / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            // Full buckets remember nothing worth keeping.
            buckets.retain(|_, b| {
                b.tokens + now.duration_since(b.updated).as_secs_f64() * per_sec < capacity
            });
            if buckets.len() >= MAX_KEYS {
                // Still full: drop the least recently used tenth (one pass,
                // then room for many new keys before the next).
                let mut ages: Vec<Instant> = buckets.values().map(|b| b.updated).collect();
                let cut = ages.len() / 10;
                ages.select_nth_unstable(cut);
                let oldest = ages[cut];
                buckets.retain(|_, b| b.updated > oldest);
            }
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

/// The key for a client address: IPv4 as is, IPv6 by its /64.
fn address_key(ip: &str) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Ok(std::net::IpAddr::V6(v6)) => v6
            .to_ipv4_mapped()
            .map(|v4| v4.to_string())
            .unwrap_or_default(),
        _ => ip.to_string(),
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
        assert!(limiter.account_allowed("mira", "1.2.3.4").is_ok());
        limiter.account_failed("mira", "1.2.3.4");
        assert!(limiter.account_allowed("mira", "1.2.3.4").is_err());
        assert!(limiter.account_allowed("tom", "1.2.3.4").is_ok());
    }

    #[test]
    fn wrong_passwords_from_one_address_do_not_lock_the_owner_out_elsewhere() {
        let rule = RateLimit {
            burst: 5,
            per_minute: 1,
        };
        let limiter = LoginLimiter::new(rule, rule);
        for _ in 0..5 {
            limiter.account_failed("ada", "127.0.0.9");
        }
        assert!(limiter.account_allowed("ada", "127.0.0.9").is_err());
        assert!(limiter.account_allowed("ada", "127.0.0.10").is_ok());
        // Many addresses together still lock the account, at ten times
        // the failures.
        for n in 0..45 {
            limiter.account_failed("ada", &format!("10.0.{}.{}", n / 5, n % 5));
        }
        assert!(limiter.account_allowed("ada", "127.0.0.10").is_err());
    }

    #[test]
    fn a_flood_of_addresses_keeps_the_map_bounded() {
        let rule = RateLimit {
            burst: 3,
            per_minute: 1,
        };
        let limiter = LoginLimiter::new(rule, rule);
        for i in 0..(3 * MAX_KEYS as u32) {
            let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i).to_string();
            let _ = limiter.attempt_from(&ip);
        }
        assert!(limiter.tracked() <= MAX_KEYS, "{}", limiter.tracked());
        // One IPv6 host trying many addresses of its /64 is one client.
        for i in 0..10u16 {
            let _ = limiter.attempt_from(&format!("2001:db8:1:2::{i:x}"));
        }
        assert!(limiter.attempt_from("2001:db8:1:2::ffff").is_err());
    }
}

//! A token-bucket rate limiter that hits its rate exactly, as a pure state machine fed with `now`.
//!
//! A limiter that forwards a sample when "at least 1/rate has passed since the last one" loses
//! time whenever input jitter makes a sample arrive a little early: from a 30 Hz stream a 10 Hz
//! limit of that kind gives 7.5–9 Hz, because the sample just before the deadline is refused
//! and the next one is a whole input period late. A token bucket keeps the fraction of a token
//! that the refused sample did not need, so over any long stretch it forwards exactly `rate`
//! samples per second (up to one), as long as the input is at least that fast. The bucket holds
//! up to `burst` tokens; it must be more than one for the carried-over fraction not to be cut off.

use crate::Nanos;

/// Forwards at most `rate` samples per second on average, at most `burst` back to back.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_hz: f64,
    burst: f64,
    tokens: f64,
    last: Option<Nanos>,
}

impl TokenBucket {
    /// A bucket that starts full enough to pass the first sample at once.
    ///
    /// `burst` below 1 is raised to 1 (a bucket that can never hold a whole token passes nothing).
    pub fn new(rate_hz: f64, burst: f64) -> Self {
        Self { rate_hz: rate_hz.max(0.0), burst: burst.max(1.0), tokens: 1.0, last: None }
    }

    /// The current rate limit in samples per second.
    pub fn rate_hz(&self) -> f64 {
        self.rate_hz
    }

    /// Changes the rate from now on; tokens already earned at the old rate are kept.
    pub fn set_rate(&mut self, rate_hz: f64, now: Nanos) {
        self.refill(now);
        self.rate_hz = rate_hz.max(0.0);
    }

    fn refill(&mut self, now: Nanos) {
        if let Some(last) = self.last {
            let dt = now.saturating_sub(last) as f64 / 1e9;
            self.tokens = (self.tokens + dt * self.rate_hz).min(self.burst);
        }
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
    }

    /// Whether a sample arriving at `now` may be forwarded; takes a token if so.
    pub fn admit(&mut self, now: Nanos) -> bool {
        self.refill(now);
        // A hair under one token counts as one: float sums of 1/3 land on 0.9999999.
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Nanos = 1_000_000_000;

    /// A deterministic pseudo-random jitter in ±`amplitude` ns (SplitMix64).
    fn jitter(i: u64, amplitude: u64) -> i64 {
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % (2 * amplitude + 1)) as i64 - amplitude as i64
    }

    /// Feeds `input_hz` for `seconds` with ±`jitter_ns` and returns the samples admitted.
    fn run(bucket: &mut TokenBucket, input_hz: f64, seconds: u64, jitter_ns: u64) -> u64 {
        let period = (1e9 / input_hz) as u64;
        let n = seconds * SECOND / period;
        (0..n)
            .filter(|&i| {
                let t = (10 * SECOND + i * period).saturating_add_signed(jitter(i, jitter_ns));
                bucket.admit(t)
            })
            .count() as u64
    }

    #[test]
    fn ten_hz_from_jittery_thirty_hz_is_ten_hz() {
        // 60 s of 30 Hz with ±5 ms of jitter: a "1/rate since the last one" limiter loses
        // whole input periods here; the bucket must give 600 (one more for the first sample).
        let mut b = TokenBucket::new(10.0, 2.0);
        let out = run(&mut b, 30.0, 60, 5_000_000);
        assert!((600..=601).contains(&out), "{out} samples in 60 s");
    }

    #[test]
    fn three_hz_from_thirty_hz_is_three_hz() {
        let mut b = TokenBucket::new(3.0, 2.0);
        let out = run(&mut b, 30.0, 100, 5_000_000);
        assert!((300..=301).contains(&out), "{out} samples in 100 s");
    }

    #[test]
    fn a_burst_of_one_loses_rate_under_jitter() {
        // Why `burst` must exceed one: the carried-over fraction is cut off otherwise.
        let mut b = TokenBucket::new(10.0, 1.0);
        let out = run(&mut b, 30.0, 60, 5_000_000);
        assert!(out < 590, "{out}: a burst of one should show the naive limiter's loss");
    }

    #[test]
    fn slower_input_passes_untouched() {
        let mut b = TokenBucket::new(10.0, 2.0);
        assert_eq!(run(&mut b, 5.0, 20, 2_000_000), 100);
    }

    #[test]
    fn a_quiet_spell_allows_at_most_burst_back_to_back() {
        let mut b = TokenBucket::new(10.0, 2.0);
        assert!(b.admit(0));
        let t = 60 * SECOND;
        let passed = (0..10).filter(|i| b.admit(t + i)).count();
        assert_eq!(passed, 2);
    }

    #[test]
    fn a_rate_change_applies_from_now() {
        let mut b = TokenBucket::new(10.0, 2.0);
        let out_fast = run(&mut b, 30.0, 10, 0);
        b.set_rate(3.0, 20 * SECOND);
        let period = SECOND / 30;
        let out_slow = (0..300).filter(|i| b.admit(20 * SECOND + i * period)).count();
        assert!((100..=101).contains(&out_fast), "{out_fast}");
        // The bucket may carry up to `burst` tokens over the change.
        assert!((30..=32).contains(&out_slow), "{out_slow}");
    }

    #[test]
    fn a_zero_rate_passes_only_what_was_already_earned() {
        let mut b = TokenBucket::new(0.0, 2.0);
        assert!(b.admit(0), "the first sample passes on the starting token");
        assert!(!b.admit(SECOND));
        assert!(!b.admit(100 * SECOND));
    }
}

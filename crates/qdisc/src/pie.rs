//! The PIE control law (RFC 8033, Proportional Integral controller Enhanced).
//!
//! Every `t_update` the drop probability moves by `alpha·(delay − target) +
//! beta·(delay − previous delay)`, with the RFC's auto-tuning that scales the step
//! down while the probability is small, so that light congestion gets gentle
//! drops and heavy congestion gets a fast response. The caller measures the queue
//! delay (from timestamps or from backlog over departure rate) and calls
//! [`PieController::update`] on schedule; the drop itself is the caller's.

use std::time::Duration;

/// PIE's parameters; the defaults are RFC 8033's.
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    /// QDELAY_REF: the queue delay the controller steers to (RFC default 15 ms).
    pub target: Duration,
    /// T_UPDATE: how often `update` is called (RFC default 15 ms).
    pub t_update: Duration,
    /// alpha, per second of delay error (RFC default 0.125).
    pub alpha: f64,
    /// beta, per second of delay change (RFC default 1.25).
    pub beta: f64,
    /// MAX_BURST: how long a burst passes untouched after a quiet period (RFC default 150 ms).
    pub max_burst: Duration,
}

impl Default for PieConfig {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
        }
    }
}

/// Queue delay above which the RFC adds a fixed 2 % per update, whatever the law says.
const HIGH_DELAY: Duration = Duration::from_millis(250);

/// The state of one PIE controller.
#[derive(Clone, Debug)]
pub struct PieController {
    config: PieConfig,
    drop_prob: f64,
    qdelay_old: Duration,
    burst_allowance: Duration,
}

impl PieController {
    /// A controller at rest: probability 0, a full burst allowance.
    pub fn new(config: PieConfig) -> Self {
        let burst_allowance = config.max_burst;
        Self { config, drop_prob: 0.0, qdelay_old: Duration::ZERO, burst_allowance }
    }

    /// The configuration.
    pub fn config(&self) -> &PieConfig {
        &self.config
    }

    /// The controller's probability (before the enqueue-time exemptions).
    pub fn probability(&self) -> f64 {
        self.drop_prob
    }

    /// The queue delay seen at the previous update.
    pub fn last_delay(&self) -> Duration {
        self.qdelay_old
    }

    /// One step of the control law with the current queue delay (RFC 8033 §4.2, §4.3).
    pub fn update(&mut self, qdelay: Duration) -> f64 {
        let c = &self.config;
        let error = qdelay.as_secs_f64() - c.target.as_secs_f64();
        let trend = qdelay.as_secs_f64() - self.qdelay_old.as_secs_f64();
        let mut delta = c.alpha * error + c.beta * trend;
        // Auto-tuning: scale the step with the size of the probability (§4.2).
        let p = self.drop_prob;
        let scale = match p {
            p if p < 0.000_001 => 1.0 / 2048.0,
            p if p < 0.000_01 => 1.0 / 512.0,
            p if p < 0.000_1 => 1.0 / 128.0,
            p if p < 0.001 => 1.0 / 32.0,
            p if p < 0.01 => 1.0 / 8.0,
            p if p < 0.1 => 1.0 / 2.0,
            _ => 1.0,
        };
        delta *= scale;
        // Above 10 % the probability rises at most 2 % per update, to avoid oscillation.
        if p >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        if qdelay > HIGH_DELAY {
            self.drop_prob += 0.02;
        }
        // Decay while the queue is empty (§4.3).
        if qdelay.is_zero() && self.qdelay_old.is_zero() {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);

        self.burst_allowance = self.burst_allowance.saturating_sub(c.t_update);
        let half = c.target / 2;
        if self.drop_prob == 0.0 && qdelay < half && self.qdelay_old < half {
            self.burst_allowance = c.max_burst;
        }
        self.qdelay_old = qdelay;
        self.drop_prob
    }

    /// The probability to apply to arriving packets now, after the RFC's enqueue
    /// exemptions (§4.1): none during a burst allowance, none while the delay is
    /// below half the target and the probability is under 20 %, none while fewer
    /// than two packets wait.
    pub fn effective_probability(&self, backlog_packets: u64) -> f64 {
        let half = self.config.target / 2;
        if !self.burst_allowance.is_zero() || (self.qdelay_old < half && self.drop_prob < 0.2) || backlog_packets < 2 {
            0.0
        } else {
            self.drop_prob
        }
    }

    /// Whether a burst allowance is running.
    pub fn in_burst_allowance(&self) -> bool {
        !self.burst_allowance.is_zero()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn probability_rises_while_delay_is_above_target_and_falls_below() {
        let mut pie = PieController::new(PieConfig::default());
        let mut last = 0.0;
        for _ in 0..200 {
            let p = pie.update(ms(40));
            assert!(p >= last, "monotone rise under a standing 40 ms queue");
            last = p;
        }
        assert!(last > 0.1, "a standing queue 25 ms over target drives p past 10 %: {last}");
        for _ in 0..200 {
            pie.update(ms(2));
        }
        assert!(pie.probability() < last / 2.0, "below target the probability falls");
    }

    #[test]
    fn the_first_step_is_auto_tuned_down_by_2048() {
        let mut pie = PieController::new(PieConfig::default());
        // delay 15 ms over target, no trend term on a second equal sample.
        pie.update(ms(30));
        let p1 = pie.probability();
        let expected = (0.125 * 0.015 + 1.25 * 0.030) / 2048.0;
        assert!((p1 - expected).abs() < 1e-12, "{p1} vs {expected}");
    }

    #[test]
    fn above_ten_percent_steps_are_capped_at_two_percent() {
        let mut pie = PieController::new(PieConfig::default());
        while pie.probability() < 0.1 {
            pie.update(ms(100));
        }
        let before = pie.probability();
        let after = pie.update(ms(200)); // big error and big trend: uncapped this would be +0.14
        assert!((after - before - 0.02).abs() < 1e-9, "{before} -> {after}");
    }

    #[test]
    fn an_empty_queue_decays_the_probability_by_two_percent() {
        let mut pie = PieController::new(PieConfig::default());
        while pie.probability() < 0.05 {
            pie.update(ms(100));
        }
        pie.update(Duration::ZERO);
        let p = pie.probability();
        let q = pie.update(Duration::ZERO);
        // With both samples at zero: p + alpha*(-target) scaled, then * 0.98.
        let expected = ((p + 0.125 * -0.015 / 2.0) * 0.98).max(0.0);
        assert!((q - expected).abs() < 1e-9, "{q} vs {expected}");
    }

    #[test]
    fn bursts_pass_during_the_allowance_and_small_queues_are_never_dropped() {
        let mut pie = PieController::new(PieConfig::default());
        assert!(pie.in_burst_allowance());
        // A sudden deep queue: the probability rises, but the first 150 ms are a burst.
        for _ in 0..(150 / 15) - 1 {
            pie.update(ms(300));
            assert_eq!(pie.effective_probability(50), 0.0);
        }
        pie.update(ms(300));
        assert!(!pie.in_burst_allowance());
        assert!(pie.effective_probability(50) > 0.0);
        assert_eq!(pie.effective_probability(1), 0.0, "fewer than two packets waiting");
    }

    #[test]
    fn low_delay_and_low_probability_exempt_arrivals() {
        let mut pie = PieController::new(PieConfig::default());
        for _ in 0..20 {
            pie.update(ms(60));
        }
        assert!(pie.probability() > 0.0 && pie.probability() < 0.2);
        pie.update(ms(5)); // below target/2 with p < 0.2
        assert_eq!(pie.effective_probability(50), 0.0);
    }
}

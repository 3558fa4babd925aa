//! The PIE control law (RFC 8033, Proportional Integral controller Enhanced).
//!
//! Every `t_update` the drop probability moves by `alpha·(delay − target) +
//! beta·(delay − previous delay)`, with the RFC's auto-tuning that scales the step
//! down while the probability is small, so that light congestion gets gentle
//! drops and heavy congestion gets a fast response. The caller measures the queue
//! delay (from timestamps or from backlog over departure rate) and calls
//! [`PieController::update`] on schedule; the drop itself is the caller's. The
//! userspace shaper uses the controller alone; [`Pie`] below is the queue
//! discipline built on it, and FQ-PIE runs the same per-queue state in every flow.

use std::time::Duration;

use crate::codel::nanos;
use crate::queue::PacketQueue;
use crate::rng::SplitMix64;
use crate::{Nanos, Packet, Qdisc, Verdict};

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

    /// The probability to apply to a packet arriving at a queue of
    /// `backlog_packets`, after the RFC's enqueue exemptions (§4.1): none during a
    /// burst allowance, none while the delay is below half the target and the
    /// probability is under 20 %, and none while at most two packets wait — the
    /// RFC's `qlen <= 2 * MEAN_PKTSIZE` counted in packets, as ns-3 does for a
    /// packet-limited queue. The one rule for both the [`Pie`] queue and the
    /// userspace shaper.
    pub fn effective_probability(&self, backlog_packets: u64) -> f64 {
        let half = self.config.target / 2;
        if !self.burst_allowance.is_zero() || (self.qdelay_old < half && self.drop_prob < 0.2) || backlog_packets <= 2 {
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

/// The PIE state of one queue: the controller, the latest queue-delay sample,
/// and when its next `t_update` tick is due.
///
/// The queue delay is measured from timestamps, as Linux (since 5.2) and ns-3 do
/// by default: the sojourn time of the last packet dequeued, or zero once the
/// queue is empty. RFC 8033's alternative, backlog over an estimated departure
/// rate, needs a rate-measurement cycle that only pays off where timestamps are
/// unavailable. The control law ticks every `t_update` from the queue's first
/// packet, with no timer of its own: each enqueue or dequeue first runs the ticks
/// that fell due since the last one, which is exact because the delay sample only
/// changes at a dequeue.
///
/// `pub` only as the per-flow state of [`crate::FqPie`]; the module is private, so
/// nothing outside the crate can name or build one.
#[derive(Clone, Debug)]
pub struct PieQueueState {
    controller: PieController,
    qdelay: Nanos,
    t_update: Nanos,
    next_update: Option<Nanos>,
}

impl PieQueueState {
    /// A queue at rest.
    ///
    /// # Panics
    /// If `t_update` is zero.
    pub(crate) fn new(config: PieConfig) -> Self {
        let t_update = nanos(config.t_update);
        assert!(t_update > 0, "PIE needs a non-zero t_update");
        Self { controller: PieController::new(config), qdelay: 0, t_update, next_update: None }
    }

    /// The controller.
    pub(crate) fn controller(&self) -> &PieController {
        &self.controller
    }

    /// The latest queue-delay sample.
    pub(crate) fn queue_delay(&self) -> Duration {
        Duration::from_nanos(self.qdelay)
    }

    /// Runs every control-law tick due by `now`.
    fn tick(&mut self, now: Nanos) {
        let t_update = self.t_update;
        let next = self.next_update.get_or_insert(now.saturating_add(t_update));
        while *next <= now {
            // With an empty queue, a zero previous delay and a zero probability,
            // one update leaves the state at its fixed point (probability 0, full
            // burst allowance): the remaining ticks of an idle spell change
            // nothing and are skipped.
            let idle =
                self.qdelay == 0 && self.controller.probability() == 0.0 && self.controller.last_delay().is_zero();
            self.controller.update(Duration::from_nanos(self.qdelay));
            *next += t_update;
            if idle && *next <= now {
                *next += (now - *next) / t_update * t_update + t_update;
            }
        }
    }

    /// Whether an arrival at `now` into a queue of `queued` packets is admitted
    /// (RFC 8033 §4.1, §4.4): dropped with [`PieController::effective_probability`],
    /// which already holds every exemption, after the control-law ticks due by `now`.
    pub(crate) fn admit(&mut self, queued: usize, now: Nanos, rng: &mut SplitMix64) -> bool {
        self.tick(now);
        let p = self.controller.effective_probability(queued as u64);
        p <= 0.0 || rng.next_f64() >= p
    }

    /// Takes the head of `queue` at `now` and samples its sojourn time.
    pub(crate) fn dequeue(&mut self, queue: &mut PacketQueue, now: Nanos) -> Option<Packet> {
        self.tick(now);
        let packet = queue.pop_front()?;
        self.qdelay = if queue.is_empty() { 0 } else { now.saturating_sub(packet.enqueued_at) };
        Some(packet)
    }
}

/// The configuration of a [`Pie`] queue.
#[derive(Clone, Debug, PartialEq)]
pub struct PieQdiscConfig {
    /// The control law (RFC 8033 defaults: target 15 ms, t_update 15 ms, alpha
    /// 0.125, beta 1.25, max burst 150 ms).
    pub pie: PieConfig,
    /// Packet limit; arrivals beyond it are dropped (1000, Linux's default; ns-3's
    /// PieQueueDisc uses 25).
    pub limit: usize,
    /// Seeds the drop decisions, so a run replays exactly.
    pub seed: u64,
}

impl Default for PieQdiscConfig {
    fn default() -> Self {
        Self { pie: PieConfig::default(), limit: 1000, seed: 0 }
    }
}

/// A single FIFO managed by PIE (RFC 8033): arrivals are dropped at random with
/// the controller's probability, steering the queue delay to the target.
#[derive(Clone, Debug)]
pub struct Pie {
    queue: PacketQueue,
    state: PieQueueState,
    limit: usize,
    rng: SplitMix64,
    drops: Vec<Packet>,
}

impl Pie {
    /// An empty PIE queue.
    ///
    /// # Panics
    /// If the limit or `t_update` is zero.
    pub fn new(config: PieQdiscConfig) -> Self {
        assert!(config.limit > 0, "PIE needs room for at least one packet");
        Self {
            queue: PacketQueue::default(),
            state: PieQueueState::new(config.pie),
            limit: config.limit,
            rng: SplitMix64::new(config.seed),
            drops: Vec::new(),
        }
    }

    /// The control law's state, as of the last enqueue or dequeue.
    pub fn controller(&self) -> &PieController {
        self.state.controller()
    }

    /// The latest queue-delay sample.
    pub fn queue_delay(&self) -> Duration {
        self.state.queue_delay()
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        if self.queue.len() >= self.limit || !self.state.admit(self.queue.len(), now, &mut self.rng) {
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        self.queue.push_back(packet);
        Verdict::Queued
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
        self.state.dequeue(&mut self.queue, now)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn drain_drops(&mut self, out: &mut Vec<Packet>) {
        out.append(&mut self.drops);
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
        assert_eq!(pie.effective_probability(2), 0.0, "at most two packets waiting");
        assert!(pie.effective_probability(3) > 0.0, "a third packet waiting meets the probability");
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

#[cfg(test)]
mod qdisc_tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// A PIE queue on a link that sends one 1000-byte packet per ms, fed `arrive`
    /// packets per ms; records when each drop happened.
    struct Bench {
        q: Pie,
        next_id: u64,
        drop_times: Vec<(Nanos, u64)>,
    }

    impl Bench {
        fn new(seed: u64) -> Self {
            let config = PieQdiscConfig { limit: 100_000, seed, ..PieQdiscConfig::default() };
            Self { q: Pie::new(config), next_id: 0, drop_times: Vec::new() }
        }

        /// From `from` to `until` inclusive, every 1 ms: arrivals, then one service.
        fn run(&mut self, from: Nanos, until: Nanos, arrive: usize) {
            let mut t = from;
            while t <= until {
                for _ in 0..arrive {
                    self.q.enqueue(Packet::new(self.next_id, 1000, 0, 0), t);
                    self.next_id += 1;
                }
                self.q.dequeue(t);
                let mut drops = Vec::new();
                self.q.drain_drops(&mut drops);
                self.drop_times.extend(drops.iter().map(|p| (t, p.id)));
                t += MS;
            }
        }
    }

    #[test]
    fn a_burst_passes_untouched_for_the_first_150_ms() {
        let mut b = Bench::new(1);
        // Three arrivals per departure: the delay passes the target within 25 ms.
        b.run(0, 149 * MS, 3);
        assert!(b.q.queue_delay() > Duration::from_millis(50));
        assert!(b.q.controller().probability() > 0.0, "the law runs during the burst");
        assert!(b.drop_times.is_empty(), "but nothing is dropped: {:?}", b.drop_times.first());
        b.run(150 * MS, 2_000 * MS, 3);
        let (first, _) = b.drop_times[0];
        assert!((150 * MS..1_000 * MS).contains(&first), "drops start after the allowance: {first}");
    }

    #[test]
    fn probability_rises_under_a_standing_queue_and_decays_once_it_empties() {
        let mut b = Bench::new(1);
        b.run(0, 3_000 * MS, 2);
        let p = b.q.controller().probability();
        assert!(p > 0.1, "two arrivals per departure need a drop rate near 1/2: {p}");
        assert!(b.drop_times.len() > 500);
        // The sender stops; the link drains the queue and goes idle.
        let mut t = 3_001 * MS;
        while b.q.dequeue(t).is_some() {
            t += MS;
        }
        assert_eq!(b.q.queue_delay(), Duration::ZERO);
        let p_empty = b.q.controller().probability();
        // Idle time is only seen at the next event; a second later the probability
        // has decayed (×0.98 per 15 ms tick, minus the law's own pull) ...
        b.q.dequeue(t + 1_000 * MS);
        let p_later = b.q.controller().probability();
        assert!(p_later < p_empty * 0.5, "{p_empty} -> {p_later}");
        // ... and after a long idle spell it is back to 0 with the burst allowance restored.
        b.q.dequeue(t + 60_000 * MS);
        assert_eq!(b.q.controller().probability(), 0.0);
        assert!(b.q.controller().in_burst_allowance());
    }

    #[test]
    fn lazy_ticks_equal_a_tick_driven_by_every_millisecond() {
        // One queue sees an event every ms, the other only at the workload's events
        // with long gaps: same control law state at the end.
        let mut dense = Bench::new(3);
        let mut sparse = Bench::new(3);
        for b in [&mut dense, &mut sparse] {
            b.run(0, 500 * MS, 2);
        }
        let mut t = 501 * MS;
        while dense.q.dequeue(t).is_some() | sparse.q.dequeue(t).is_some() {
            t += MS;
        }
        for k in 1..=200 {
            dense.q.dequeue(t + k * MS);
        }
        sparse.q.dequeue(t + 200 * MS);
        assert!(dense.q.controller().probability() > 0.0, "still decaying: a real comparison");
        assert_eq!(dense.q.controller().probability(), sparse.q.controller().probability());
        assert_eq!(dense.q.controller().last_delay(), sparse.q.controller().last_delay());
        assert_eq!(dense.q.controller().in_burst_allowance(), sparse.q.controller().in_burst_allowance());
    }

    #[test]
    fn never_drops_while_at_most_two_packets_wait() {
        let mut b = Bench::new(5);
        b.run(0, 3_000 * MS, 2);
        let t = 3_001 * MS;
        while b.q.dequeue(t).is_some() {}
        assert!(b.q.controller().effective_probability(10) > 0.2, "still a high drop probability");
        let drops_before = b.drop_times.len();
        // At the same instant (no tick in between): keep the queue at ≤ 2 packets.
        for _ in 0..1_000 {
            for _ in 0..3 {
                assert_eq!(b.q.enqueue(Packet::new(0, 1000, 0, 0), t), Verdict::Queued);
            }
            while b.q.dequeue(t).is_some() {}
        }
        // A fourth packet finds three waiting and meets the probability.
        let mut dropped = 0;
        for _ in 0..100 {
            for _ in 0..4 {
                b.q.enqueue(Packet::new(0, 1000, 0, 0), t);
            }
            while b.q.dequeue(t).is_some() {}
            let mut drops = Vec::new();
            b.q.drain_drops(&mut drops);
            dropped += drops.len();
        }
        assert_eq!(b.drop_times.len(), drops_before);
        assert!(dropped > 20, "{dropped} of 100 fourth packets");
    }

    #[test]
    fn the_same_seed_replays_the_same_drops_and_another_seed_differs() {
        let drops = |seed| {
            let mut b = Bench::new(seed);
            b.run(0, 2_000 * MS, 2);
            b.drop_times
        };
        let a = drops(7);
        assert!(a.len() > 100);
        assert_eq!(a, drops(7));
        assert_ne!(a, drops(8));
    }

    #[test]
    fn drop_tail_at_the_limit() {
        let mut q = Pie::new(PieQdiscConfig { limit: 2, ..PieQdiscConfig::default() });
        assert_eq!(q.enqueue(Packet::new(0, 100, 0, 0), 0), Verdict::Queued);
        assert_eq!(q.enqueue(Packet::new(1, 100, 0, 0), 0), Verdict::Queued);
        assert_eq!(q.enqueue(Packet::new(2, 100, 0, 0), 0), Verdict::Dropped);
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops[0].id, 2);
    }
}

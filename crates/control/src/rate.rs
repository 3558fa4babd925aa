//! `rate: auto`'s control law: following a link whose rate changes, from the
//! round-trip times of delay probes.
//!
//! When the bottleneck is downstream (a modem's deep buffer), Bauxite cannot see its
//! queue; it sees the queue's delay. The shaper (and the simulator) send small probes
//! every few milliseconds to a reflector on the far side and feed each answer's
//! round-trip time to the [`RateController`], which follows the cake-autorate design:
//! it tracks the baseline RTT; when several recent probes see the RTT grow past the
//! threshold (the modem's buffer filling), it drops the shaped rate to a fraction of
//! the rate actually achieved, then waits for the queue to drain; while the link is
//! loaded and the delay stays low, it raises the rate a little every probe.

use std::collections::VecDeque;
use std::time::Duration;

use bauxite_core::{AutoRatePolicy, BitRate};

/// Probes in the window that decides whether the queue is growing.
const DETECTION_WINDOW: usize = 4;
/// Delayed probes in the window that count as a growing queue.
const DETECTION_THRESHOLD: usize = 2;
/// Near the ceiling an increase is this power of the normal step (1/50: a link that
/// was at its limit is probed at 0.5 %/s instead of 28 %/s)…
const NEAR_CEILING_STEP: f64 = 0.02;
/// …from this fraction of the ceiling…
const NEAR_CEILING: f64 = 0.9;
/// …up to this multiple of it, beyond which the link has evidently grown.
const PAST_CEILING: f64 = 1.1;
/// A standing queue deeper than this is drained at [`DRAIN_FRACTION`] of the link.
const DEEP_QUEUE: Duration = Duration::from_millis(50);
/// The fraction of the link rate a deep queue is drained at.
const DRAIN_FRACTION: f64 = 0.5;
/// RTT samples the queue's growth rate is fitted over (about 160 ms at 20 ms probes).
const SLOPE_SAMPLES: usize = 8;
/// Decreases closer together than this belong to one episode of a growing queue.
const EPISODE_GAP: Duration = Duration::from_secs(2);
/// Samples this soon after a drain begins still show the rate before it (packets in
/// flight, the achieved-rate average catching up); the drain's slope ignores them.
const DRAIN_SETTLE: Duration = Duration::from_millis(100);
/// How long after a drain the achieved rate still reflects the drain (a few of the
/// daemon's rate-averaging time constants).
const POST_DRAIN: Duration = Duration::from_millis(500);
/// How fast the baseline follows a lower RTT (1 = at once).
const BASELINE_DOWN: f64 = 0.9;
/// How fast the baseline follows a higher RTT that is not a queue.
const BASELINE_UP: f64 = 0.001;

/// The rate controller: pure logic, fed with RTT samples and the achieved rate.
#[derive(Clone, Debug)]
pub struct RateController {
    policy: AutoRatePolicy,
    rate: BitRate,
    baseline: Option<Duration>,
    window: VecDeque<bool>,
    last_decrease: Option<Duration>,
    /// While draining a deep queue: since when, until when at the latest, and the
    /// rate to resume at (lowered if the drain reveals a slower link).
    drain: Option<(Duration, Duration, BitRate)>,
    /// When the last drain ended: for a while after, the achieved rate still shows
    /// the drain, not the link.
    resumed_at: Option<Duration>,
    /// The fraction of the rate the shaper actually sends at (the profile's headroom).
    headroom: f64,
    /// The latest (probe send time, RTT, delayed) samples, for the slope of a
    /// growing or draining queue. The send time is the right axis: a probe's RTT is
    /// the queue it met when it was sent; on the answer's arrival time, a queue's
    /// growth shows up flattened (answers bunch up behind it).
    recent: VecDeque<(Duration, Duration, bool)>,
    /// The rate at which the queue last grew: increases slow down near it, as the
    /// link is likely still there, and speed up again once clearly past it.
    ceiling: Option<BitRate>,
}

impl RateController {
    /// A controller starting at the policy's base rate.
    pub fn new(policy: &AutoRatePolicy) -> Self {
        Self {
            policy: policy.clone(),
            rate: policy.base_rate,
            baseline: None,
            window: VecDeque::new(),
            last_decrease: None,
            ceiling: None,
            recent: VecDeque::new(),
            drain: None,
            resumed_at: None,
            headroom: 1.0,
        }
    }

    /// Tells the controller that the shaper sends at `headroom` × its rate, so that
    /// the rate a drain runs at is known without waiting for the measured average.
    pub fn with_headroom(mut self, headroom: f64) -> Self {
        self.headroom = headroom;
        self
    }

    /// The link rate the controller believes in now.
    pub fn rate(&self) -> BitRate {
        self.rate
    }

    /// The baseline (unloaded) RTT, once known.
    pub fn baseline(&self) -> Option<Duration> {
        self.baseline
    }

    /// Takes one RTT sample at `now` with the rate the shaper achieved recently;
    /// returns the new rate if it changed.
    pub fn on_rtt(&mut self, now: Duration, rtt: Duration, achieved: BitRate) -> Option<BitRate> {
        if let Some((since, until, resume)) = self.drain {
            return self.draining(now, rtt, achieved, since, until, resume);
        }
        let baseline = *self.baseline.get_or_insert(rtt);
        let delayed = rtt.saturating_sub(baseline) > self.policy.delay_threshold;
        let next = if rtt < baseline {
            baseline.as_secs_f64() - BASELINE_DOWN * (baseline - rtt).as_secs_f64()
        } else if !delayed {
            baseline.as_secs_f64() + BASELINE_UP * (rtt - baseline).as_secs_f64()
        } else {
            baseline.as_secs_f64()
        };
        self.baseline = Some(Duration::from_secs_f64(next.max(0.0)));
        self.window.push_back(delayed);
        if self.window.len() > DETECTION_WINDOW {
            self.window.pop_front();
        }
        self.recent.push_back((now.saturating_sub(rtt), rtt, delayed));
        if self.recent.len() > SLOPE_SAMPLES {
            self.recent.pop_front();
        }
        if self.window.iter().filter(|d| **d).count() >= DETECTION_THRESHOLD {
            self.decrease(now, achieved)
        } else if !delayed && achieved.bps() as f64 > self.policy.load_threshold * self.rate.bps() as f64 {
            // Within the hold after a queue grew, the rate it grew at is a hard cap.
            let cap = self
                .ceiling
                .filter(|_| self.last_decrease.is_some_and(|t| now.saturating_sub(t) < self.policy.ceiling_hold));
            let near_ceiling = self.ceiling.is_some_and(|c| {
                let r = self.rate.bps() as f64;
                r >= NEAR_CEILING * c.bps() as f64 && r <= PAST_CEILING * c.bps() as f64
            });
            let step = if near_ceiling {
                self.policy.increase_factor.powf(NEAR_CEILING_STEP)
            } else {
                self.policy.increase_factor
            };
            let up = self.rate.scaled(step);
            self.set(cap.map_or(up, |c| up.min(c).max(self.rate)))
        } else {
            None
        }
    }

    /// One RTT sample while a deep queue drains: ends the drain when the queue is gone
    /// (or its time is up) and resumes at 90 % of the link rate the drain revealed
    /// (the planned rate if it revealed nothing). A queue shrinking at slope −s while we send
    /// at `achieved` leaves at achieved/(1 − s): the link's rate, measured without
    /// overfilling it, which corrects an estimate taken too early in the episode.
    fn draining(
        &mut self,
        now: Duration,
        rtt: Duration,
        achieved: BitRate,
        since: Duration,
        until: Duration,
        resume: BitRate,
    ) -> Option<BitRate> {
        // Probes sent before the drain took effect still show the old rate.
        let sent_at = now.saturating_sub(rtt);
        if sent_at >= since + DRAIN_SETTLE {
            self.recent.push_back((sent_at, rtt, true));
            if self.recent.len() > SLOPE_SAMPLES {
                self.recent.pop_front();
            }
        }
        let baseline = self.baseline.unwrap_or(rtt);
        let queue_gone = rtt.saturating_sub(baseline) <= self.policy.delay_threshold;
        if now < until && !queue_gone {
            return None;
        }
        self.drain = None;
        self.window.clear();
        self.resumed_at = Some(now);
        let revealed = self
            .delay_slope_since(since + DRAIN_SETTLE)
            .filter(|slope| (-0.95..-0.02).contains(slope))
            .map(|slope| achieved.min(self.rate.scaled(self.headroom)).scaled(1.0 / (1.0 + slope)));
        // A steady drain measures the link better than the queue's first growth,
        // which is fitted over a few bunched probes while the sending rate (a burst,
        // and its lagging average) is uncertain: its estimate replaces that one.
        match revealed {
            Some(link) => {
                self.ceiling = Some(link);
                self.set(link.scaled(self.policy.decrease_factor))
            }
            None => self.set(resume),
        }
    }

    /// No answer to probes for a while: the far side's queue is so full that probes
    /// drown in it (or the path is down); treat it as a growing queue.
    /// While a deep queue drains, silence is expected (probes wait behind the queue)
    /// and the drain is already the answer.
    pub fn on_silence(&mut self, now: Duration, achieved: BitRate) -> Option<BitRate> {
        if self.drain.is_some() {
            return None;
        }
        self.decrease(now, achieved)
    }

    fn decrease(&mut self, now: Duration, achieved: BitRate) -> Option<BitRate> {
        if self.last_decrease.is_some_and(|t| now.saturating_sub(t) < self.policy.decrease_holdoff) {
            return None;
        }
        // A queue growing at slope s (seconds of delay per second) means what goes in
        // leaves at 1/(1+s) of its rate: the link's rate, in one step.
        let drained = match self.delay_slope() {
            // At most a quarter of what went in per step: a burst is not a link.
            Some(slope) if slope > 0.05 => achieved.scaled(1.0 / (1.0 + slope.min(3.0))),
            _ => achieved,
        };
        // Just after a drain the achieved rate is the drain's, half the link: a queue
        // still there calls for less than the resumed rate, not for the drain rate.
        let after_drain = self.resumed_at.is_some_and(|t| now.saturating_sub(t) < POST_DRAIN);
        let from = if after_drain { self.rate } else { self.rate.min(drained.max(self.policy.min_rate)) };
        // The ceiling is the lowest link estimate of an episode of a growing queue
        // (estimates taken just after a drain excepted): the first one may come before
        // the queue's growth can be fitted and is only an upper bound.
        let new_episode = self.last_decrease.is_none_or(|t| now.saturating_sub(t) > EPISODE_GAP);
        if new_episode {
            self.ceiling = Some(from);
        } else if !after_drain {
            self.ceiling = Some(self.ceiling.map_or(from, |c| c.min(from)));
        }
        self.last_decrease = Some(now);
        self.window.clear();
        let target = from.scaled(self.policy.decrease_factor);
        // A deep standing queue drains at only (link − rate): at 90 % of the link, half
        // a second of queue takes five. Run at half the link until it is gone instead.
        let standing = self
            .recent
            .back()
            .map_or(Duration::ZERO, |(_, rtt, _)| rtt.saturating_sub(self.baseline.unwrap_or_default()));
        if standing > DEEP_QUEUE {
            self.recent.clear();
            // The probes report the queue as it was one RTT ago and it has grown
            // since: the drain ends when a probe finds it gone, at the latest after
            // twice the time the queue seen last would take.
            let longest = standing.mul_f64(2.0 / (1.0 - DRAIN_FRACTION));
            self.drain = Some((now, now + longest, target));
            return self.set(from.scaled(DRAIN_FRACTION));
        }
        self.set(target)
    }

    /// The least-squares slope of the RTT over time since the queue began to grow:
    /// the trailing delayed samples and the one before them.
    fn delay_slope(&self) -> Option<f64> {
        let delayed_run = self.recent.iter().rev().take_while(|(_, _, d)| *d).count();
        let growth: Vec<_> = self.recent.iter().skip(self.recent.len().saturating_sub(delayed_run + 1)).collect();
        slope(&growth)
    }

    /// The least-squares slope of the RTT over the recent samples from `since` on.
    fn delay_slope_since(&self, since: Duration) -> Option<f64> {
        let samples: Vec<_> = self.recent.iter().filter(|(t, _, _)| *t >= since).collect();
        slope(&samples)
    }
}

/// The least-squares slope (seconds of RTT per second) of (time, RTT) samples: at
/// least three, spanning at least 30 ms.
fn slope(growth: &[&(Duration, Duration, bool)]) -> Option<f64> {
    let n = growth.len();
    let (first, last) = (growth.first()?.0, growth.last()?.0);
    if n < 3 || last.saturating_sub(first) < Duration::from_millis(30) {
        return None;
    }
    let xs: Vec<f64> = growth.iter().map(|(t, _, _)| t.as_secs_f64()).collect();
    let ys: Vec<f64> = growth.iter().map(|(_, r, _)| r.as_secs_f64()).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / n as f64, ys.iter().sum::<f64>() / n as f64);
    let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let var: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    (var > 0.0).then(|| cov / var)
}

impl RateController {
    fn set(&mut self, rate: BitRate) -> Option<BitRate> {
        let rate = rate.clamp(self.policy.min_rate, self.policy.max_rate);
        (rate != self.rate).then(|| {
            self.rate = rate;
            rate
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn policy() -> AutoRatePolicy {
        AutoRatePolicy { base_rate: BitRate::from_bps(10_000_000), ..Default::default() }
    }

    fn mbit(v: f64) -> BitRate {
        BitRate::from_bps((v * 1e6) as u64)
    }

    #[test]
    fn a_delay_spike_drops_the_rate_below_what_the_link_achieved() {
        let mut c = RateController::new(&policy());
        for i in 0..20 {
            c.on_rtt(i * 20 * MS, 2 * MS, mbit(3.5));
        }
        assert_eq!(c.rate(), mbit(10.0), "a lightly loaded link keeps its rate");
        // The link drops to 1.5 Mbit/s: the RTT grows, the achieved rate falls to 1.5.
        // Two delayed probes without a growth trend (too few to fit): 90 % of what got through.
        c.on_rtt(400 * MS, 40 * MS, mbit(1.5));
        let changed = c.on_rtt(405 * MS, 40 * MS, mbit(1.5));
        assert_eq!(changed, Some(mbit(1.35)), "two delayed probes: 90 % of the achieved rate");
        // Still delayed while the queue drains: no new decrease inside the hold-off.
        assert_eq!(c.on_rtt(440 * MS, 80 * MS, mbit(1.35)), None);
        assert_eq!(c.on_rtt(460 * MS, 80 * MS, mbit(1.35)), None);
    }

    #[test]
    fn a_growing_queue_reveals_the_link_rate_in_one_step() {
        let mut c = RateController::new(&policy());
        for i in 0..10 {
            c.on_rtt(i * 20 * MS, 2 * MS, mbit(3.5));
        }
        // 3.5 Mbit/s into a 1.5 Mbit/s link: the queue grows by 4/3 s per second. A
        // probe sent at s meets that queue and is answered one RTT later.
        let mut last = None;
        for i in 0..6u64 {
            let sent = 0.2 + 0.02 * i as f64;
            let rtt = 0.002 + 0.02 * i as f64 * 4.0 / 3.0;
            let at = Duration::from_secs_f64(sent + rtt);
            last = c.on_rtt(at, Duration::from_secs_f64(rtt), mbit(3.5)).or(last);
        }
        // The queue is already deep: drain at half the estimated link, then 90 % of it.
        let rate = last.expect("decreased").bps() as f64;
        assert!((rate - 0.5 * 1.5e6).abs() < 0.06e6, "draining at half the link: {rate}");
        let resumed = c.on_rtt(Duration::from_secs(2), 2 * MS, mbit(0.75)).expect("resumes").bps() as f64;
        assert!((resumed - 0.9 * 1.5e6).abs() < 0.1e6, "then 90 % of the link: {resumed}");
    }

    #[test]
    fn a_deep_queue_is_drained_at_half_the_link_then_the_rate_resumes() {
        let mut c = RateController::new(&policy());
        for i in 0..10 {
            c.on_rtt(i * 20 * MS, 2 * MS, mbit(1.5));
        }
        c.on_rtt(200 * MS, 302 * MS, mbit(1.5));
        let drain = c.on_rtt(205 * MS, 302 * MS, mbit(1.5)).expect("a decrease");
        assert_eq!(drain, mbit(0.75), "half the link while 300 ms of queue drain");
        assert_eq!(c.on_rtt(700 * MS, 100 * MS, mbit(0.75)), None, "still draining: no further cut");
        // 300 ms of queue at half the link take 600 ms.
        assert_eq!(c.on_rtt(806 * MS, 2 * MS, mbit(0.75)), Some(mbit(1.35)), "then 90 % of the link");
    }

    #[test]
    fn the_rate_creeps_up_only_while_loaded_and_fast() {
        let mut c = RateController::new(&AutoRatePolicy { base_rate: mbit(2.0), ..policy() });
        assert_eq!(
            c.on_rtt(Duration::ZERO, 2 * MS, mbit(1.9)),
            Some(BitRate::from_bps(2_010_000)),
            "loaded and fast: a step up"
        );
        assert_eq!(c.on_rtt(20 * MS, 2 * MS, mbit(1.9)), Some(BitRate::from_bps(2_020_050)));
        assert_eq!(c.on_rtt(40 * MS, 2 * MS, mbit(0.5)), None, "idle: no evidence for more");
    }

    #[test]
    fn increases_slow_down_near_the_rate_where_the_queue_last_grew() {
        let gain_of_20_probes = |c: &mut RateController, t0: u64| {
            let from = c.rate().bps() as f64;
            for i in 0..20 {
                c.on_rtt(Duration::from_millis(t0 + 20 * i), 2 * MS, c.rate());
            }
            c.rate().bps() as f64 / from
        };
        let mut fresh = RateController::new(&AutoRatePolicy { base_rate: mbit(1.0), ..policy() });
        assert!(gain_of_20_probes(&mut fresh, 0) > 1.1, "far from any ceiling: full steps");

        let mut c = RateController::new(&AutoRatePolicy { base_rate: mbit(2.0), ..policy() });
        c.on_rtt(Duration::ZERO, 2 * MS, mbit(1.0));
        c.on_rtt(20 * MS, 30 * MS, mbit(2.0));
        c.on_rtt(25 * MS, 30 * MS, mbit(2.0)); // the queue grew at 2 Mbit/s (no trend to fit)
        assert_eq!(c.rate(), mbit(1.8));
        c.on_rtt(1_000 * MS, 2 * MS, mbit(1.8)); // one full step reaches 90 % of 2 Mbit/s
        let slow = gain_of_20_probes(&mut c, 1_020);
        assert!(slow < 1.0021, "near the ceiling twenty probes gain about 0.2 %: {slow}");
    }

    #[test]
    fn after_a_queue_grew_the_rate_holds_at_that_rate_for_the_hold_time() {
        // Big steps (0.1 % per probe near the ceiling) so the climb back is quick.
        let policy = AutoRatePolicy {
            base_rate: mbit(2.0),
            increase_factor: 1.05,
            ceiling_hold: Duration::from_secs(10),
            ..policy()
        };
        let mut c = RateController::new(&policy);
        c.on_rtt(Duration::ZERO, 2 * MS, mbit(1.0));
        c.on_rtt(20 * MS, 30 * MS, mbit(2.0));
        c.on_rtt(25 * MS, 30 * MS, mbit(2.0)); // the queue grew at 2 Mbit/s
        assert_eq!(c.rate(), mbit(1.8));
        let mut t = 1_000;
        while c.rate() < mbit(2.0) {
            c.on_rtt(t * MS, 2 * MS, c.rate()); // climbs back to the ceiling…
            t += 20;
        }
        assert_eq!(c.rate(), mbit(2.0), "…and stops there");
        assert!(t < 8_000, "the climb took {t} ms");
        while t < 9_900 {
            c.on_rtt(t * MS, 2 * MS, c.rate());
            t += 20;
        }
        assert_eq!(c.rate(), mbit(2.0), "held while the hold lasts ({t} ms)");
        while t < 11_000 {
            c.on_rtt(t * MS, 2 * MS, c.rate());
            t += 20;
        }
        assert!(c.rate() > mbit(2.0), "probing again after the hold");
    }

    /// A closed loop: the controller's rate (with the daemon's 0.95 headroom) feeds a
    /// modem FIFO whose link drops from 50 to 1.5 Mbit/s at 5 s; the probes' RTT is the
    /// base RTT plus that FIFO's delay. Returns (time s, queue delay s, rate) per probe.
    /// `tau` is the time constant of the achieved-rate average: the longer, the more
    /// the first estimate after the drop overshoots.
    fn closed_loop(policy: &AutoRatePolicy, seconds: f64, tau: f64) -> Vec<(f64, f64, f64)> {
        let (base_rtt, demand, headroom) = (0.002, 3.6e6f64, 0.95);
        let mut c = RateController::new(policy).with_headroom(headroom);
        let (mut backlog_bits, mut achieved, mut trace) = (0.0f64, 0.0f64, Vec::new());
        let dt = 0.001;
        // Probes in flight: (arrival time, RTT); each met the queue of its send time.
        let mut in_flight: VecDeque<(f64, f64)> = VecDeque::new();
        for step in 0..(seconds / dt) as u64 {
            let t = step as f64 * dt;
            let link = if t < 5.0 { 50e6 } else { 1.5e6 };
            let sent = demand.min(headroom * c.rate().bps() as f64);
            achieved += (1.0 - (-dt / tau).exp()) * (sent - achieved);
            // The modem's 100 KB FIFO: what does not fit is lost.
            backlog_bits = (backlog_bits + (sent - link) * dt).clamp(0.0, 800e3);
            let queue = backlog_bits / link;
            if step % 20 == 0 {
                let rtt = base_rtt + queue;
                let at = t + rtt;
                let pos = in_flight.iter().position(|(a, _)| *a > at).unwrap_or(in_flight.len());
                in_flight.insert(pos, (at, rtt));
                trace.push((t, queue, c.rate().bps() as f64));
            }
            while in_flight.front().is_some_and(|(a, _)| *a <= t) {
                let (_, rtt) = in_flight.pop_front().expect("front");
                let achieved = BitRate::from_bps(achieved as u64);
                c.on_rtt(Duration::from_secs_f64(t), Duration::from_secs_f64(rtt), achieved);
            }
        }
        trace
    }

    #[test]
    fn after_a_rate_drop_the_rate_settles_under_the_link_without_a_standing_queue() {
        let policy = AutoRatePolicy { delay_threshold: 3 * MS, ..policy() };
        for tau in [0.05, 0.1, 0.2, 0.4] {
            let trace = closed_loop(&policy, 40.0, tau);
            let settled: Vec<_> = trace.iter().filter(|(t, _, _)| *t >= 7.0).collect();
            let worst = settled.iter().map(|(_, q, _)| *q).fold(0.0, f64::max);
            assert!(worst < 0.002, "tau {tau}: queue delay after settling: {:.1} ms", worst * 1e3);
            let (low, high) = settled.iter().fold((f64::INFINITY, 0.0f64), |(l, h), (_, _, r)| (l.min(*r), h.max(*r)));
            assert!(low > 0.8 * 1.5e6 && high * 0.95 <= 1.5e6, "tau {tau}: rate between {low} and {high}");
        }
    }

    #[test]
    fn the_baseline_follows_lower_rtts_quickly_and_queues_not_at_all() {
        let mut c = RateController::new(&policy());
        c.on_rtt(Duration::ZERO, 10 * MS, mbit(1.0));
        c.on_rtt(20 * MS, 2 * MS, mbit(1.0));
        assert!(c.baseline().unwrap() < Duration::from_micros(2_900));
        let before = c.baseline().unwrap();
        c.on_rtt(40 * MS, 200 * MS, mbit(1.0));
        assert_eq!(c.baseline().unwrap(), before, "a queue is not learnt as the baseline");
    }

    #[test]
    fn silence_while_draining_changes_nothing() {
        let mut c = RateController::new(&policy());
        for i in 0..10 {
            c.on_rtt(i * 20 * MS, 2 * MS, mbit(1.5));
        }
        c.on_rtt(200 * MS, 302 * MS, mbit(1.5));
        assert_eq!(c.on_rtt(205 * MS, 302 * MS, mbit(1.5)), Some(mbit(0.75)), "draining");
        assert_eq!(c.on_silence(600 * MS, mbit(0.7)), None, "probes drown in the queue being drained");
        assert_eq!(c.rate(), mbit(0.75));
    }

    #[test]
    fn rates_stay_within_the_policy_bounds() {
        let mut c = RateController::new(&policy());
        for i in 0..100u32 {
            c.on_silence(Duration::from_secs(u64::from(i)), mbit(0.1));
        }
        assert_eq!(c.rate(), policy().min_rate);
    }
}

//! `rate: auto`: following a link whose rate changes, from delay probes.
//!
//! When the bottleneck is downstream (a modem's deep buffer), Bauxite cannot see its
//! queue; it sees the queue's delay. The daemon sends small UDP probes every few
//! milliseconds to a reflector on the far side (`bauxite reflect`) and measures their
//! round-trip time. The [`RateController`] follows the cake-autorate design: it tracks
//! the baseline RTT; when several recent probes see the RTT grow past the threshold
//! (the modem's buffer filling), it drops the shaped rate to a fraction of the rate
//! actually achieved, then waits for the queue to drain; while the link is loaded and
//! the delay stays low, it raises the rate a little every probe.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use bauxite_core::{AutoRatePolicy, BitRate};
use bauxite_ebpf::monotonic_ns;

/// Probes start with this, so the reflector answers nothing else.
pub const PROBE_MAGIC: [u8; 4] = *b"BXR1";
const PROBE_LEN: usize = 16;
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
    /// While draining a deep queue: until when, and the rate to resume at.
    drain: Option<(Duration, BitRate)>,
    /// The latest (time, RTT) samples, for the slope of a growing queue.
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
        }
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
        if let Some((until, resume)) = self.drain {
            if now < until {
                return None;
            }
            self.drain = None;
            self.window.clear();
            return self.set(resume);
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
        self.recent.push_back((now, rtt, delayed));
        if self.recent.len() > SLOPE_SAMPLES {
            self.recent.pop_front();
        }
        if self.window.iter().filter(|d| **d).count() >= DETECTION_THRESHOLD {
            self.decrease(now, achieved)
        } else if !delayed && achieved.bps() as f64 > self.policy.load_threshold * self.rate.bps() as f64 {
            let near_ceiling = self.ceiling.is_some_and(|c| {
                let r = self.rate.bps() as f64;
                r >= NEAR_CEILING * c.bps() as f64 && r <= PAST_CEILING * c.bps() as f64
            });
            let step = if near_ceiling {
                self.policy.increase_factor.powf(NEAR_CEILING_STEP)
            } else {
                self.policy.increase_factor
            };
            self.set(self.rate.scaled(step))
        } else {
            None
        }
    }

    /// No answer to probes for a while: the far side's queue is so full that probes
    /// drown in it (or the path is down); treat it as a growing queue.
    pub fn on_silence(&mut self, now: Duration, achieved: BitRate) -> Option<BitRate> {
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
        let from = self.rate.min(drained.max(self.policy.min_rate));
        // The first decrease of an episode sees the queue begin: what got through then
        // is the link's rate. Later ones only drain the queue and say nothing about it.
        let new_episode = self.last_decrease.is_none_or(|t| now.saturating_sub(t) > EPISODE_GAP);
        if new_episode {
            self.ceiling = Some(from);
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
            self.drain = Some((now + standing.mul_f64(1.0 / (1.0 - DRAIN_FRACTION)), target));
            return self.set(from.scaled(DRAIN_FRACTION));
        }
        self.set(target)
    }

    /// The least-squares slope of the RTT over time since the queue began to grow:
    /// the trailing delayed samples and the one before them.
    fn delay_slope(&self) -> Option<f64> {
        let delayed_run = self.recent.iter().rev().take_while(|(_, _, d)| *d).count();
        let growth: Vec<_> = self.recent.iter().skip(self.recent.len().saturating_sub(delayed_run + 1)).collect();
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

    fn set(&mut self, rate: BitRate) -> Option<BitRate> {
        let rate = rate.clamp(self.policy.min_rate, self.policy.max_rate);
        (rate != self.rate).then(|| {
            self.rate = rate;
            rate
        })
    }
}

/// One probe's round trip.
#[derive(Clone, Copy, Debug)]
pub struct RttSample {
    /// When the answer arrived (`CLOCK_MONOTONIC` ns).
    pub received_ns: u64,
    /// The round-trip time.
    pub rtt: Duration,
}

/// Sends probes to `reflector` every `interval` and reports each answer's RTT on
/// `samples`, until `stop`. Runs two threads; returns at once.
pub fn start_prober(
    reflector: SocketAddr,
    interval: Duration,
    samples: Sender<RttSample>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let socket = UdpSocket::bind(if reflector.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" })?;
    socket.connect(reflector)?;
    socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    let sender = socket.try_clone()?;
    let send_stop = Arc::clone(&stop);
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut seq = 0u32;
        while !send_stop.load(Ordering::Relaxed) {
            if let Some(wait) = (start + interval * seq).checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let mut probe = [0u8; PROBE_LEN];
            probe[..4].copy_from_slice(&PROBE_MAGIC);
            probe[4..8].copy_from_slice(&seq.to_be_bytes());
            probe[8..16].copy_from_slice(&monotonic_ns().to_be_bytes());
            let _ = sender.send(&probe); // a refused or full path shows up as silence
            seq = seq.wrapping_add(1);
        }
    });
    std::thread::spawn(move || {
        let mut buffer = [0u8; 64];
        while !stop.load(Ordering::Relaxed) {
            match socket.recv(&mut buffer) {
                Ok(n) if n >= PROBE_LEN && buffer[..4] == PROBE_MAGIC => {
                    let now = monotonic_ns();
                    let sent = u64::from_be_bytes(buffer[8..16].try_into().expect("8 bytes"));
                    let sample = RttSample { received_ns: now, rtt: Duration::from_nanos(now.saturating_sub(sent)) };
                    if samples.send(sample).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::ConnectionRefused
                    ) => {}
                Err(_) => return,
            }
        }
    });
    Ok(())
}

/// `bauxite reflect`: echoes every probe back to its sender until `stop`.
pub fn run_reflector(socket: &UdpSocket, stop: &AtomicBool) -> std::io::Result<u64> {
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut buffer = [0u8; 64];
    let mut answered = 0;
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(&mut buffer) {
            Ok((n, from)) if n >= PROBE_LEN && buffer[..4] == PROBE_MAGIC => match socket.send_to(&buffer[..n], from) {
                Ok(_) => answered += 1,
                // An unreachable sender or a full buffer loses one answer, not the reflector.
                Err(e) => tracing::debug!("answering {from}: {e}"),
            },
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(answered)
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
        // 3.5 Mbit/s into a 1.5 Mbit/s link: the queue grows by 4/3 s per second.
        let mut last = None;
        for i in 0..6u64 {
            let t = 200 + 20 * i;
            let rtt = Duration::from_secs_f64(0.002 + (20 * i) as f64 / 1000.0 * 4.0 / 3.0);
            last = c.on_rtt(Duration::from_millis(t), rtt, mbit(3.5)).or(last);
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
    fn rates_stay_within_the_policy_bounds() {
        let mut c = RateController::new(&policy());
        for i in 0..100u32 {
            c.on_silence(Duration::from_secs(u64::from(i)), mbit(0.1));
        }
        assert_eq!(c.rate(), policy().min_rate);
    }
}

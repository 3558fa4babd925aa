//! From what a phase measured to the demo's figures (`summary.json`'s keys, and
//! issue 11's for links that vary): pure functions.
//!
//! Windows follow the demo: latency figures from one second after the first drop
//! (the time the shaper is given to adapt) to the end; throughput, utilisation and
//! frame delay from the drop itself. A link without timed changes has its "drop" at
//! 0. Excess is latency minus the link's own floor (the latency the message would
//! have had alone on the link). Time to protect is judged on the excess beyond one
//! full packet's serialisation (the link never preempts the packet it carries, so a
//! message may always find one ahead of it), so that neither a trace's wait for its
//! next delivery opportunity nor that physical floor is counted against the shaper.

use serde::{Deserialize, Serialize};

use bauxite_core::link::{LinkChange, LinkConfig, LinkRate, OPPORTUNITY_BYTES, Timeline};
use bauxite_core::stats::Summary;
pub use bauxite_core::stats::{LatencyMs, UpdateDelayMs};

use super::{BIN_NS, CriticalMessage, PhaseTrace};

const NS: f64 = 1e9;
const MS: f64 = 1e6;
/// Excess under this counts as protected (the seed's 2 ms critical-latency target).
const PROTECTED_EXCESS_MS: f64 = 2.0;
/// Messages are protected once a whole window of this length stays under the target.
const PROTECTED_FOR_NS: u64 = 1_000_000_000;

/// Excess over the link's floor, ms: `critical_excess_ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExcessMs {
    /// Mean.
    pub mean: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

/// Video frame delay, capture to complete arrival, ms: `frame_delay_ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameDelayMs {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// One phase's figures, pooled over seeds: the demo's keys, then issue 11's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// Critical messages sent in the settled window (arrived or lost).
    pub critical_messages: usize,
    /// Of those, the ones that arrived.
    pub critical_received: usize,
    /// Corrections the control loop consumed in the settled window.
    pub updates: usize,
    /// Critical latency from one second after the drop.
    pub critical_latency_ms: LatencyMs,
    /// Critical latency from the drop itself.
    pub critical_latency_from_drop_ms: LatencyMs,
    /// Correction update delay from one second after the drop.
    pub update_delay_ms: UpdateDelayMs,
    /// Critical messages lost in the settled window (%).
    pub critical_loss_pct: f64,
    /// Video throughput after the drop (Mbit/s, frames that arrived whole).
    pub bulk_throughput_mbps: f64,
    /// Bulk packets discarded early by the shaper.
    pub bulk_dropped_packets: u64,
    /// Video frames delivered per second after the drop.
    pub video_fps: f64,
    /// Protected phase: from the first drop until critical excess (beyond one full
    /// packet ahead) stayed under 2 ms for a second (ms, mean over seeds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_protect_ms: Option<f64>,
    /// Critical latency minus the link's floor, in the settled window.
    pub critical_excess_ms: ExcessMs,
    /// Critical messages (settled window) with more than 10 ms of excess (%).
    pub critical_over_10ms_pct: f64,
    /// Video bytes delivered after the drop over the capacity the link offered beyond
    /// the other traffic delivered; `null` on an unlimited link.
    pub bulk_utilization: Option<f64>,
    /// Video frames captured after the drop: capture to complete arrival.
    pub frame_delay_ms: FrameDelayMs,
    /// Time to protect after each capacity drop (ms, every seed's, in time order).
    pub time_to_protect_after_drops_ms: Vec<f64>,
    /// Frames the encoder skipped (%).
    pub video_skipped_pct: f64,
}

/// What the figures need to know about the link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkFacts {
    /// Capacity per [`BIN_NS`] bin, bytes (infinite where the link is unlimited).
    pub capacity_bytes: Vec<f64>,
    /// When capacity dropped (ns): the timeline's rate cuts and a trace's falls.
    pub drops_ns: Vec<u64>,
    /// The first timed change (ns), 0 without one: where the demo's windows start.
    pub drop_at_ns: u64,
    /// The senders' run time (ns).
    pub duration_ns: u64,
}

impl LinkFacts {
    /// The facts of `link` changed by `timeline`, over `duration_ns`.
    pub fn of(link: &LinkConfig, timeline: &Timeline, duration_ns: u64) -> Self {
        let capacity_bytes = capacity_bins(link, timeline, duration_ns);
        let mut drops_ns = timeline_drops(link, timeline);
        drops_ns.extend(trace_drops(&capacity_bytes, link, timeline));
        drops_ns.sort_unstable();
        drops_ns.dedup_by(|a, b| a.abs_diff(*b) < PROTECTED_FOR_NS);
        drops_ns.retain(|&d| d < duration_ns);
        let drop_at_ns = timeline.steps.first().map_or(0, |(at, _)| at.as_nanos() as u64).min(duration_ns);
        Self { capacity_bytes, drops_ns, drop_at_ns, duration_ns }
    }

    /// The mean capacity over the run, Mbit/s (`None` if unlimited).
    pub fn mean_capacity_mbps(&self) -> Option<f64> {
        let total: f64 = self.capacity_bytes.iter().sum();
        total.is_finite().then(|| total * 8.0 / (self.duration_ns as f64 / NS) / 1e6)
    }
}

/// The link's rate in force from each change on: (ns, rate).
fn rate_segments(link: &LinkConfig, timeline: &Timeline) -> Vec<(u64, LinkRate)> {
    let mut segments = vec![(0, link.rate.clone())];
    for (at, change) in &timeline.steps {
        if let LinkChange::Rate(rate) = change {
            segments.push((at.as_nanos() as u64, rate.clone()));
        }
    }
    segments
}

fn mean_bps(rate: &LinkRate) -> f64 {
    match rate {
        LinkRate::Unlimited => f64::INFINITY,
        LinkRate::Constant(r) => r.bps() as f64,
        LinkRate::Trace(t) => t.mean_bps(),
    }
}

/// Bytes the link could carry in each bin.
fn capacity_bins(link: &LinkConfig, timeline: &Timeline, duration_ns: u64) -> Vec<f64> {
    let segments = rate_segments(link, timeline);
    let bins = duration_ns.div_ceil(BIN_NS) as usize;
    let mut out = vec![0.0; bins];
    for (i, (start, rate)) in segments.iter().enumerate() {
        let end = segments.get(i + 1).map_or(duration_ns, |(s, _)| *s).min(duration_ns);
        for (b, slot) in out.iter_mut().enumerate() {
            let (b0, b1) = (b as u64 * BIN_NS, (b as u64 + 1) * BIN_NS);
            let (from, to) = (b0.max(*start), b1.min(end));
            if from >= to {
                continue;
            }
            *slot += match rate {
                LinkRate::Unlimited => f64::INFINITY,
                LinkRate::Constant(r) => r.bps() as f64 / 8.0 * (to - from) as f64 / NS,
                LinkRate::Trace(trace) => {
                    // Opportunities in (from, to], counted from the trace's start.
                    let count = trace.first_after_ns(to - start) - trace.first_after_ns(from - start);
                    (count * u64::from(OPPORTUNITY_BYTES)) as f64
                }
            };
        }
    }
    out
}

/// Timeline steps that cut the rate by more than a third.
fn timeline_drops(link: &LinkConfig, timeline: &Timeline) -> Vec<u64> {
    let segments = rate_segments(link, timeline);
    segments.windows(2).filter(|w| mean_bps(&w[1].1) < mean_bps(&w[0].1) * 2.0 / 3.0).map(|w| w[1].0).collect()
}

/// Where a trace's capacity falls: the next half second carries less than half of
/// what the two seconds before carried (at most one drop per two seconds).
fn trace_drops(capacity: &[f64], link: &LinkConfig, timeline: &Timeline) -> Vec<u64> {
    let has_trace = rate_segments(link, timeline).iter().any(|(_, r)| matches!(r, LinkRate::Trace(_)));
    if !has_trace {
        return Vec::new();
    }
    let (before, after) = (20, 5);
    let mut drops = Vec::new();
    let mut last: Option<usize> = None;
    for b in before..capacity.len().saturating_sub(after) {
        let prior = capacity[b - before..b].iter().sum::<f64>() / before as f64;
        let next = capacity[b..b + after].iter().sum::<f64>() / after as f64;
        if prior.is_finite() && prior > 0.0 && next < 0.5 * prior && last.is_none_or(|l| b - l >= 20) {
            drops.push(b as u64 * BIN_NS);
            last = Some(b);
        }
    }
    drops
}

/// Milliseconds from `drop_ns` until a whole second of critical messages arrived
/// with less than 2 ms of excess; the rest of the run if that never happened.
fn time_to_protect(trace: &PhaseTrace, drop_ns: u64, end_ns: u64) -> f64 {
    let after: Vec<(u64, bool)> = trace
        .critical
        .iter()
        .filter(|m| m.sent_ns >= drop_ns && m.sent_ns < end_ns)
        .map(|m| (m.sent_ns, m.latency_ns.is_some_and(|l| avoidable_ms(m, l) < PROTECTED_EXCESS_MS)))
        .collect();
    // From the end: how far a run of fast messages reaches from each message.
    let mut bad_after: Vec<Option<u64>> = vec![None; after.len()];
    let mut next_bad = None;
    for (i, &(t, fast)) in after.iter().enumerate().rev() {
        if !fast {
            next_bad = Some(t);
        }
        bad_after[i] = next_bad;
    }
    for (i, &(t, fast)) in after.iter().enumerate() {
        if t + PROTECTED_FOR_NS > end_ns {
            break;
        }
        if fast && bad_after[i].is_none_or(|bad| bad >= t + PROTECTED_FOR_NS) {
            return (t - drop_ns) as f64 / MS;
        }
    }
    end_ns.saturating_sub(drop_ns) as f64 / MS
}

/// Excess beyond the link's floor and one full packet ahead on the link (ms).
fn avoidable_ms(m: &CriticalMessage, latency_ns: u64) -> f64 {
    (excess_ms(latency_ns, m.floor_ns) - m.head_of_line_ns as f64 / MS).max(0.0)
}

fn excess_ms(latency_ns: u64, floor_ns: u64) -> f64 {
    (latency_ns as f64 - floor_ns as f64).max(0.0) / MS
}

/// Update delays (ms) of the base's control loop, ticking at `hz` from 0, for
/// ticks in `[from_ns, to_ns)`: each tick consumes the newest correction if it is new.
fn update_delays(trace: &PhaseTrace, hz: f64, from_ns: u64, to_ns: u64) -> Vec<f64> {
    let mut arrivals = trace.corrections.clone();
    arrivals.sort_unstable();
    let period = NS / hz;
    let (mut next, mut newest, mut consumed) = (0usize, None::<(u32, u64)>, None::<u32>);
    let mut delays = Vec::new();
    let mut k = 0u64;
    loop {
        let tick = (k as f64 * period) as u64;
        if tick >= to_ns {
            break;
        }
        k += 1;
        while next < arrivals.len() && arrivals[next].0 <= tick {
            let (_, seq, sent) = arrivals[next];
            if newest.is_none_or(|(s, _)| seq > s) {
                newest = Some((seq, sent));
            }
            next += 1;
        }
        if let Some((seq, sent)) = newest
            && consumed.is_none_or(|c| seq > c)
        {
            consumed = Some(seq);
            if tick >= from_ns {
                delays.push((tick - sent) as f64 / MS);
            }
        }
    }
    delays
}

/// Pools phases (one per seed) into the figures; `protected` adds time to protect.
pub fn summarize(phases: &[&PhaseTrace], link: &LinkFacts, control_loop_hz: f64, protected: bool) -> PhaseSummary {
    let (drop_at, end) = (link.drop_at_ns, link.duration_ns);
    let settled = drop_at + PROTECTED_FOR_NS;
    let (mut latencies, mut from_drop, mut excess, mut delays, mut frame_delays) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut sent, mut lost, mut frame_bytes, mut frames, mut dropped) = (0usize, 0usize, 0u64, 0usize, 0u64);
    let (mut video_wire, mut offered, mut skipped, mut video_offered) = (0u64, 0.0f64, 0u32, 0u32);
    let (mut protect, mut after_drops) = (Vec::new(), Vec::new());
    for trace in phases {
        for m in trace.critical.iter().filter(|m| m.sent_ns < end) {
            if m.sent_ns >= drop_at
                && let Some(l) = m.latency_ns
            {
                from_drop.push(l as f64 / MS);
            }
            if m.sent_ns >= settled {
                sent += 1;
                match m.latency_ns {
                    Some(l) => {
                        latencies.push(l as f64 / MS);
                        excess.push(excess_ms(l, m.floor_ns));
                    }
                    None => lost += 1,
                }
            }
        }
        delays.extend(update_delays(trace, control_loop_hz, settled, end));
        for f in trace.frames.iter().filter(|f| f.arrived_ns >= drop_at && f.arrived_ns < end) {
            frame_bytes += u64::from(f.bytes);
            frames += 1;
        }
        frame_delays.extend(
            trace
                .frames
                .iter()
                .filter(|f| f.capture_ns >= drop_at && f.capture_ns < end)
                .map(|f| (f.arrived_ns - f.capture_ns) as f64 / MS),
        );
        let bins = (drop_at / BIN_NS) as usize..(end.div_ceil(BIN_NS)) as usize;
        let sum = |v: &[u64]| bins.clone().map(|b| v.get(b).copied().unwrap_or(0)).sum::<u64>();
        video_wire += sum(&trace.video_bytes);
        let capacity: f64 = bins.clone().map(|b| link.capacity_bytes.get(b).copied().unwrap_or(0.0)).sum();
        offered += capacity - sum(&trace.other_bytes) as f64;
        dropped += trace.bulk_dropped_packets;
        skipped += trace.video_skipped;
        video_offered += trace.video_offered;
        if let Some(&first) = link.drops_ns.first() {
            protect.push(time_to_protect(trace, first, end));
        }
        after_drops.extend(link.drops_ns.iter().map(|&d| time_to_protect(trace, d, end)));
    }
    let seconds = (end.saturating_sub(drop_at) as f64 / NS * phases.len() as f64).max(1e-9);
    let excess_summary = Summary::of(&excess);
    let frame_summary = Summary::of(&frame_delays);
    PhaseSummary {
        critical_messages: sent,
        critical_received: latencies.len(),
        updates: delays.len(),
        critical_latency_ms: LatencyMs::of(&latencies),
        critical_latency_from_drop_ms: LatencyMs::of(&from_drop),
        update_delay_ms: UpdateDelayMs::of(&delays),
        critical_loss_pct: if sent == 0 { 0.0 } else { 100.0 * lost as f64 / sent as f64 },
        bulk_throughput_mbps: frame_bytes as f64 * 8.0 / seconds / 1e6,
        bulk_dropped_packets: dropped,
        video_fps: frames as f64 / seconds,
        time_to_protect_ms: (protected && !protect.is_empty())
            .then(|| protect.iter().sum::<f64>() / protect.len() as f64),
        critical_excess_ms: ExcessMs {
            mean: excess_summary.mean,
            p95: excess_summary.p95,
            p99: excess_summary.p99,
            max: excess_summary.max,
        },
        critical_over_10ms_pct: if excess.is_empty() {
            0.0
        } else {
            100.0 * excess.iter().filter(|&&e| e > 10.0).count() as f64 / excess.len() as f64
        },
        bulk_utilization: (offered.is_finite() && offered > 0.0).then(|| video_wire as f64 / offered),
        frame_delay_ms: FrameDelayMs { p50: frame_summary.p50, p95: frame_summary.p95 },
        time_to_protect_after_drops_ms: if protected { after_drops } else { Vec::new() },
        video_skipped_pct: if video_offered == 0 { 0.0 } else { 100.0 * f64::from(skipped) / f64::from(video_offered) },
    }
}

/// The link as `summary.json` describes it: `link`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// The `--link` value (or the seed's step drop).
    pub spec: String,
    /// Mean capacity over the run, Mbit/s (`null` if unlimited).
    pub mean_capacity_mbps: Option<f64>,
    /// The first timed change, s: where the demo's windows start.
    pub drop_at_s: f64,
    /// Every capacity drop that time to protect is measured from, s.
    pub drops_s: Vec<f64>,
}

/// Both phases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// The standard stack: every packet straight into the modem's FIFO.
    pub standard: PhaseSummary,
    /// Bauxite: the profile's lanes, early drop and rate.
    pub protected: PhaseSummary,
}

/// One phase of one seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// The seed.
    pub seed: u64,
    /// 1 (standard stack) or 2 (Bauxite).
    pub phase: u32,
    /// Its own figures.
    pub summary: PhaseSummary,
}

/// `summary.json` of `bauxite sim robot`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RobotSummary {
    /// Seeds run (each ran both phases).
    pub seeds: u32,
    /// The profile's name.
    pub profile: String,
    /// The link.
    pub link: LinkSummary,
    /// The protected phase's rate: a rate (`1.5mbit`) or `auto`.
    pub protected_rate: String,
    /// Simulated seconds per phase.
    pub duration_s: f64,
    /// The video's TCP model.
    pub tcp_model: String,
    /// Each phase's figures, pooled over seeds.
    pub phases: Phases,
    /// Each phase of each seed.
    pub runs: Vec<RunEntry>,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use bauxite_core::BitRate;
    use bauxite_core::link::DeliveryTrace;

    use super::*;

    #[test]
    fn capacity_follows_the_timeline_and_the_trace() {
        let link = LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(8_000_000)), ..LinkConfig::default() };
        let timeline = Timeline::of_rates(&[(Duration::from_millis(250), BitRate::from_bps(800_000))]);
        let facts = LinkFacts::of(&link, &timeline, 500_000_000);
        assert_eq!(facts.capacity_bytes, [100_000.0, 100_000.0, 55_000.0, 10_000.0, 10_000.0]);
        assert_eq!((facts.drops_ns.clone(), facts.drop_at_ns), (vec![250_000_000], 250_000_000));
        // One opportunity every millisecond: 100 per bin.
        let trace = Arc::new(DeliveryTrace::parse("1\n").unwrap());
        let link = LinkConfig { rate: LinkRate::Trace(trace), ..LinkConfig::default() };
        let facts = LinkFacts::of(&link, &Timeline::default(), 300_000_000);
        assert_eq!(facts.capacity_bytes, [150_400.0; 3]);
    }

    #[test]
    fn time_to_protect_waits_for_a_whole_fast_second() {
        let mut trace = PhaseTrace::default();
        for i in 0..300u64 {
            let sent_ns = i * 10_000_000;
            let latency = if (100..150).contains(&i) || i == 170 { 50_000_000 } else { 500_000 };
            trace.critical.push(CriticalMessage {
                sent_ns,
                latency_ns: Some(latency),
                floor_ns: 0,
                head_of_line_ns: 0,
            });
        }
        // Drop at 1 s; slow until 1.5 s, one slow message at 1.7 s: protected from 1.71 s.
        assert!((time_to_protect(&trace, 1_000_000_000, 3_000_000_000) - 710.0).abs() < 1e-9);
    }

    #[test]
    fn the_control_loop_consumes_each_new_correction_once() {
        let trace = PhaseTrace {
            corrections: vec![(3_000_000, 0, 1_000_000), (55_000_000, 1, 51_000_000)],
            ..PhaseTrace::default()
        };
        let delays = update_delays(&trace, 100.0, 0, 100_000_000);
        assert_eq!(delays, [9.0, 9.0]);
    }
}

//! Issue 11's figures for a link that varies, shared by `bauxite sim robot` and
//! `bauxite demo --link` so that both write the same `summary.json` keys from one
//! type ([`PhaseSummary`]) and compute them with one set of pure functions.
//!
//! Windows follow the demo: latency figures from one second after the first timed
//! change (the time the shaper is given to adapt) to the end; throughput,
//! utilisation and frame delay from that change itself. A link without timed
//! changes has its "drop" at 0. Excess is latency minus the link's own floor (the
//! latency the message would have had alone on the link). Time to protect is judged
//! on the excess beyond one full packet's serialisation (the link never preempts
//! the packet it carries, so a message may always find one ahead of it), so that
//! neither a trace's wait for its next delivery opportunity nor that physical floor
//! is counted against the shaper.
//!
//! Times are ns from the start of the phase (the moment the link's rate and the
//! senders start together).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::link::{LinkChange, LinkConfig, LinkModel, LinkRate, OPPORTUNITY_BYTES, Timeline};
use crate::stats::{LatencyMs, Summary, UpdateDelayMs};

const NS: f64 = 1e9;
const MS: f64 = 1e6;
/// The time the shaper is given to adapt after the drop: latency figures start this
/// long after it (the seed demo's windows; `bauxite demo`'s `Scenario::SETTLE`).
pub const SETTLE: Duration = Duration::from_secs(1);
/// Messages are protected once a whole window of this length stays under the target.
const PROTECTED_FOR_NS: u64 = 1_000_000_000;
/// Time bins of capacity and delivered bytes (ns): 100 ms, fine enough to see an
/// outage, coarse enough to hold several full packets at 1 Mbit/s.
pub const BIN_NS: u64 = 100_000_000;
/// The largest packet the link carries whole (bytes): one full-size frame ahead of
/// a message is the wait no scheduler avoids.
pub const FULL_PACKET_BYTES: u32 = 1500;

/// A critical message (one of the profile's first lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CriticalMessage {
    /// When it was sent (ns from the start).
    pub sent_ns: u64,
    /// Its latency; `None` if it was lost.
    pub latency_ns: Option<u64>,
    /// The link's own floor for it when it was sent: the latency it would have had alone.
    pub floor_ns: u64,
    /// How much longer a full-size packet just ahead of it on the link would hold it
    /// (one MTU's serialisation): the wait no scheduler avoids, as the link never
    /// preempts a packet it carries.
    pub head_of_line_ns: u64,
}

/// A video frame that arrived complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameDelivery {
    /// When the camera captured it (ns).
    pub capture_ns: u64,
    /// When its last byte arrived at the base (ns).
    pub arrived_ns: u64,
    /// Its size.
    pub bytes: u32,
}

/// What one phase measured, as the figures need it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTrace {
    /// Every critical message, in send order.
    pub critical: Vec<CriticalMessage>,
    /// Corrections as they arrived: (arrival ns, seq, send ns).
    pub corrections: Vec<(u64, u32, u64)>,
    /// Frames delivered, in arrival order.
    pub frames: Vec<FrameDelivery>,
    /// Frames the camera produced.
    pub video_offered: u32,
    /// Of those, frames the encoder skipped.
    pub video_skipped: u32,
    /// Bulk packets the shaper discarded early.
    pub bulk_dropped_packets: u64,
    /// UDP messages lost anywhere.
    pub lost_messages: u64,
    /// The shaper's link rate estimate: (ns, bit/s) at each change (empty for the standard stack).
    pub link_rate: Vec<(u64, u64)>,
    /// What `rate: auto`'s law was doing: (ns, the phase's name) at each change (empty
    /// unless the rate is `auto` and the driver can see the law, as `sim robot` does).
    pub rate_phase: Vec<(u64, &'static str)>,
    /// Video bytes (on the wire) delivered per [`BIN_NS`] bin.
    pub video_bytes: Vec<u64>,
    /// Other bytes (messages, probes) delivered per bin.
    pub other_bytes: Vec<u64>,
}

/// The floor of a critical message of `len` bytes entering `link` at `now_ns`, and
/// the head-of-line wait a full packet just ahead of it would add (both ns).
pub fn critical_floor(link: &LinkModel, now_ns: u64, len: u32) -> (u64, u64) {
    let floor_ns = link.floor_ns(now_ns, len);
    (floor_ns, link.floor_ns(now_ns, len + FULL_PACKET_BYTES).saturating_sub(floor_ns))
}

/// The link's floor over a run, for a driver that does not run the model itself
/// (the demo, whose packets cross a real emulator): the empty link at every time.
#[derive(Clone, Debug)]
pub struct LinkFloor {
    /// The empty link from each change on: (from ns, model), in time order.
    models: Vec<(u64, LinkModel)>,
}

impl LinkFloor {
    /// The floor of `link` changed by `timeline`, from 0.
    pub fn new(link: &LinkConfig, timeline: &Timeline) -> Self {
        let mut model = LinkModel::new(link, 0);
        let mut models = vec![(0, model.clone())];
        for (at, change) in &timeline.steps {
            let at = duration_ns(*at);
            model.apply(change.clone(), at);
            models.push((at, model.clone()));
        }
        Self { models }
    }

    /// [`critical_floor`] at `now_ns` (ns from the start).
    pub fn at(&self, now_ns: u64, len: u32) -> (u64, u64) {
        let i = self.models.partition_point(|(from, _)| *from <= now_ns).saturating_sub(1);
        critical_floor(&self.models[i].1, now_ns, len)
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

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

/// The figures of a link that varies (issue 11), judged against the link's floor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkFigures {
    /// Critical latency minus the link's floor, in the settled window.
    pub critical_excess_ms: ExcessMs,
    /// Critical messages (settled window) with more than 10 ms of excess (%).
    pub critical_over_10ms_pct: f64,
    /// Video bytes delivered after the drop over the capacity the link offered beyond
    /// the other traffic delivered; `null` on an unlimited link.
    pub bulk_utilization: Option<f64>,
    /// Video frames captured after the drop: capture to complete arrival.
    pub frame_delay_ms: FrameDelayMs,
    /// Time to protect after each capacity drop (ms, every phase's, in time order);
    /// empty for the standard stack.
    pub time_to_protect_after_drops_ms: Vec<f64>,
    /// Frames the encoder skipped (%).
    pub video_skipped_pct: f64,
    /// After each rise of the link's rate, until the shaper's estimate found the new
    /// rate or 10 Mbit/s ([`RECOVERED_BPS`]) (ms, every phase's, in time order);
    /// empty for the standard stack and links that never rise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_to_follow_rises_ms: Vec<f64>,
}

/// One phase's figures, pooled over trials or seeds: one phase of `summary.json`
/// for `bauxite demo` and `bauxite sim robot` alike, and what `bauxite audit`
/// recomputes from a recording (compared with `==`).
///
/// The seed demo's keys first; on a link given with `--link` (and always in the
/// simulator) issue 11's keys follow at the same level ([`LinkFigures`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// Critical messages sent in the settled window (arrived or lost).
    pub critical_messages: usize,
    /// Of those, the ones that arrived: the latency figures' sample count.
    pub critical_received: usize,
    /// Corrections the control loop consumed in the settled window.
    pub updates: usize,
    /// Critical latency from one second after the drop.
    pub critical_latency_ms: LatencyMs,
    /// Critical latency from the drop itself, without the second given to adapt:
    /// what a known link rate (`--rate`) must hold too.
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
    /// Protected phase only: from the drop until critical messages were protected
    /// for a whole second (ms, mean over trials or seeds). The seed demo holds raw
    /// latency to the run's p99 target; with a link's figures, the excess (beyond one
    /// full packet ahead) to 2 ms after the first capacity drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_protect_ms: Option<f64>,
    /// Issue 11's figures, when the link is described by a `--link` value.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkFigures>,
}

/// What the figures need to know about the link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LinkFacts {
    /// Capacity per [`BIN_NS`] bin, bytes (infinite where the link is unlimited,
    /// written `null`).
    #[serde(with = "infinite_as_null")]
    #[schemars(with = "Vec<Option<f64>>")]
    pub capacity_bytes: Vec<f64>,
    /// When capacity dropped (ns): the timeline's rate cuts and a trace's falls.
    pub drops_ns: Vec<u64>,
    /// When the timeline raised the rate by half or more, and the rate it raised it
    /// to (ns, bit/s): where a shaper must find the room again.
    #[serde(default)]
    pub rises: Vec<(u64, f64)>,
    /// The first timed change (ns), 0 without one: where the demo's windows start.
    pub drop_at_ns: u64,
    /// The senders' run time (ns).
    pub duration_ns: u64,
}

/// JSON has no infinity: an unlimited bin is written `null` and read back as one.
mod infinite_as_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        v.iter().map(|x| x.is_finite().then_some(*x)).collect::<Vec<_>>().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?.into_iter().map(|x| x.unwrap_or(f64::INFINITY)).collect())
    }
}

impl LinkFacts {
    /// The facts of `link` changed by `timeline`, over `duration_ns`.
    pub fn of(link: &LinkConfig, timeline: &Timeline, duration_ns: u64) -> Self {
        let capacity_bytes = capacity_bins(link, timeline, duration_ns);
        let mut drops_ns = timeline_drops(link, timeline);
        // A trace's fall whose look-back window holds a timeline drop is that drop.
        let window = TRACE_DROP_BEFORE_BINS as u64 * BIN_NS;
        let own = |d: &u64| !drops_ns.iter().any(|t| *t <= *d && *d - *t < window);
        let trace_only: Vec<u64> = trace_drops(&capacity_bytes, link, timeline).into_iter().filter(own).collect();
        drops_ns.extend(trace_only);
        drops_ns.sort_unstable();
        drops_ns.dedup_by(|a, b| a.abs_diff(*b) < PROTECTED_FOR_NS);
        drops_ns.retain(|&d| d < duration_ns);
        let drop_at_ns = timeline.steps.first().map_or(0, |(at, _)| duration_ns_of(*at)).min(duration_ns);
        let rises = timeline_rises(link, timeline).into_iter().filter(|(at, _)| *at < duration_ns).collect();
        Self { capacity_bytes, drops_ns, rises, drop_at_ns, duration_ns }
    }

    /// The mean capacity over the run, Mbit/s (`None` if unlimited).
    pub fn mean_capacity_mbps(&self) -> Option<f64> {
        let total: f64 = self.capacity_bytes.iter().sum();
        total.is_finite().then(|| total * 8.0 / (self.duration_ns as f64 / NS) / 1e6)
    }

    /// `link` in `summary.json`, labelled with the `--link` value `spec`.
    pub fn summary(&self, spec: &str) -> LinkSummary {
        LinkSummary {
            spec: spec.to_string(),
            mean_capacity_mbps: self.mean_capacity_mbps(),
            drop_at_s: self.drop_at_ns as f64 / NS,
            drops_s: self.drops_ns.iter().map(|&d| d as f64 / NS).collect(),
        }
    }
}

fn duration_ns_of(d: Duration) -> u64 {
    duration_ns(d)
}

/// The link as `summary.json` describes it: `link`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// The `--link` value (or the seed's step drop).
    pub spec: String,
    /// Mean capacity over the run, Mbit/s (`null` if unlimited).
    pub mean_capacity_mbps: Option<f64>,
    /// The first timed change, s: where the windows start.
    pub drop_at_s: f64,
    /// Every capacity drop that time to protect is measured from, s.
    pub drops_s: Vec<f64>,
}

/// The link's rate in force from each change on: (ns, rate).
fn rate_segments(link: &LinkConfig, timeline: &Timeline) -> Vec<(u64, LinkRate)> {
    let mut segments = vec![(0, link.rate.clone())];
    for (at, change) in &timeline.steps {
        if let LinkChange::Rate(rate) = change {
            segments.push((duration_ns(*at), rate.clone()));
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

/// The link's capacity over time, from its description and timeline: what it could
/// carry between any two instants. The figures' capacity bins and `sim robot`'s
/// clairvoyant reference read the same schedule.
#[derive(Clone, Debug)]
pub struct CapacitySchedule {
    segments: Vec<(u64, LinkRate)>,
}

impl CapacitySchedule {
    /// The schedule of `link` changed by `timeline` (a trace starts where it is applied).
    pub fn new(link: &LinkConfig, timeline: &Timeline) -> Self {
        Self { segments: rate_segments(link, timeline) }
    }

    /// Bytes the link could carry in `[from_ns, to_ns)` (infinite where unlimited).
    pub fn bytes_between(&self, from_ns: u64, to_ns: u64) -> f64 {
        let mut bytes = 0.0;
        for (i, (start, rate)) in self.segments.iter().enumerate() {
            let end = self.segments.get(i + 1).map_or(u64::MAX, |(s, _)| *s);
            let (from, to) = (from_ns.max(*start), to_ns.min(end));
            if from >= to {
                continue;
            }
            bytes += match rate {
                LinkRate::Unlimited => f64::INFINITY,
                LinkRate::Constant(r) => r.bps() as f64 / 8.0 * (to - from) as f64 / NS,
                LinkRate::Trace(trace) => {
                    // Opportunities in (from, to], counted from the trace's start.
                    let count = trace.first_after_ns(to - start) - trace.first_after_ns(from - start);
                    (count * u64::from(OPPORTUNITY_BYTES)) as f64
                }
            };
        }
        bytes
    }
}

/// Bytes the link could carry in each bin.
fn capacity_bins(link: &LinkConfig, timeline: &Timeline, duration_ns: u64) -> Vec<f64> {
    let schedule = CapacitySchedule::new(link, timeline);
    let bins = duration_ns.div_ceil(BIN_NS);
    (0..bins).map(|b| schedule.bytes_between(b * BIN_NS, ((b + 1) * BIN_NS).min(duration_ns))).collect()
}

/// Timeline steps that cut the rate by more than a third.
fn timeline_drops(link: &LinkConfig, timeline: &Timeline) -> Vec<u64> {
    let segments = rate_segments(link, timeline);
    segments.windows(2).filter(|w| mean_bps(&w[1].1) < mean_bps(&w[0].1) * 2.0 / 3.0).map(|w| w[1].0).collect()
}

/// Timeline steps that raise the rate by half or more: (ns, the new mean bit/s).
fn timeline_rises(link: &LinkConfig, timeline: &Timeline) -> Vec<(u64, f64)> {
    let segments = rate_segments(link, timeline);
    segments
        .windows(2)
        .filter(|w| mean_bps(&w[1].1) > mean_bps(&w[0].1) * 1.5)
        .map(|w| (w[1].0, mean_bps(&w[1].1)))
        .collect()
}

/// The link rate a shaper counts as having found a risen link at: the new rate, or
/// 10 Mbit/s (the default `auto_rate.base_rate`, what an unloaded link relaxes up
/// to) if that is less. Issue 11's target: video may use 10 Mbit/s again.
pub const RECOVERED_BPS: f64 = 10e6;

/// Milliseconds from `rise_ns` until the shaper's link-rate estimate reached
/// `min(new_bps, RECOVERED_BPS)`; the rest of the run if it never did.
pub fn time_to_follow(trace: &PhaseTrace, rise_ns: u64, new_bps: f64, end_ns: u64) -> f64 {
    let goal = new_bps.min(RECOVERED_BPS);
    let before = trace.link_rate.iter().rev().find(|(t, _)| *t <= rise_ns).map_or(0.0, |(_, r)| *r as f64);
    let reached = if before >= goal {
        Some(rise_ns)
    } else {
        trace.link_rate.iter().find(|(t, r)| *t > rise_ns && *r as f64 >= goal).map(|(t, _)| *t)
    };
    (reached.unwrap_or(end_ns).min(end_ns) - rise_ns) as f64 / MS
}

/// The look-back of a trace's drop detector: two seconds of bins.
const TRACE_DROP_BEFORE_BINS: usize = 20;

/// Where a trace's capacity falls: the next half second carries less than half of
/// what the two seconds before carried (at most one drop per two seconds).
fn trace_drops(capacity: &[f64], link: &LinkConfig, timeline: &Timeline) -> Vec<u64> {
    let has_trace = rate_segments(link, timeline).iter().any(|(_, r)| matches!(r, LinkRate::Trace(_)));
    if !has_trace {
        return Vec::new();
    }
    let (before, after) = (TRACE_DROP_BEFORE_BINS, 5);
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
/// with less than `target_ms` of avoidable excess (the profile's critical-latency
/// p99 target, 2 ms for the robot); the rest of the run if that never happened.
pub fn time_to_protect(trace: &PhaseTrace, drop_ns: u64, end_ns: u64, target_ms: f64) -> f64 {
    let after: Vec<(u64, bool)> = trace
        .critical
        .iter()
        .filter(|m| m.sent_ns >= drop_ns && m.sent_ns < end_ns)
        .map(|m| (m.sent_ns, m.latency_ns.is_some_and(|l| avoidable_ms(m, l) < target_ms)))
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

/// Time to protect (against `target_ms`) after the first capacity drop, mean over
/// `phases`; `None` without a drop.
pub fn time_to_protect_first_drop(phases: &[&PhaseTrace], link: &LinkFacts, target_ms: f64) -> Option<f64> {
    let first = *link.drops_ns.first()?;
    let times: Vec<f64> = phases.iter().map(|t| time_to_protect(t, first, link.duration_ns, target_ms)).collect();
    crate::stats::mean(&times)
}

/// Excess beyond the link's floor and one full packet ahead on the link (ms).
fn avoidable_ms(m: &CriticalMessage, latency_ns: u64) -> f64 {
    (excess_ms(latency_ns, m.floor_ns) - m.head_of_line_ns as f64 / MS).max(0.0)
}

fn excess_ms(latency_ns: u64, floor_ns: u64) -> f64 {
    (latency_ns as f64 - floor_ns as f64).max(0.0) / MS
}

/// Pools phases (one per trial or seed) into issue 11's figures. The protected
/// phase gives its critical-latency target (`protect_target_ms`): time to protect
/// after each drop is judged against it.
pub fn link_figures(phases: &[&PhaseTrace], link: &LinkFacts, protect_target_ms: Option<f64>) -> LinkFigures {
    let (drop_at, end) = (link.drop_at_ns, link.duration_ns);
    let settled = drop_at + duration_ns(SETTLE);
    let (mut excess, mut frame_delays, mut after_drops, mut after_rises) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut video_wire, mut offered, mut skipped, mut video_offered) = (0u64, 0.0f64, 0u32, 0u32);
    let bins = (drop_at / BIN_NS) as usize..(end.div_ceil(BIN_NS)) as usize;
    let sum = |v: &[u64]| bins.clone().map(|b| v.get(b).copied().unwrap_or(0)).sum::<u64>();
    let capacity: f64 = bins.clone().map(|b| link.capacity_bytes.get(b).copied().unwrap_or(0.0)).sum();
    for trace in phases {
        let settled_messages = trace.critical.iter().filter(|m| m.sent_ns >= settled && m.sent_ns < end);
        excess.extend(settled_messages.filter_map(|m| Some(excess_ms(m.latency_ns?, m.floor_ns))));
        frame_delays.extend(
            trace
                .frames
                .iter()
                .filter(|f| f.capture_ns >= drop_at && f.capture_ns < end)
                .map(|f| f.arrived_ns.saturating_sub(f.capture_ns) as f64 / MS),
        );
        video_wire += sum(&trace.video_bytes);
        offered += capacity - sum(&trace.other_bytes) as f64;
        skipped += trace.video_skipped;
        video_offered += trace.video_offered;
        if let Some(target) = protect_target_ms {
            after_drops.extend(link.drops_ns.iter().map(|&d| time_to_protect(trace, d, end, target)));
            after_rises.extend(link.rises.iter().map(|&(at, bps)| time_to_follow(trace, at, bps, end)));
        }
    }
    let excess_summary = Summary::of(&excess);
    let frame_summary = Summary::of(&frame_delays);
    LinkFigures {
        critical_excess_ms: ExcessMs {
            mean: excess_summary.mean,
            p95: excess_summary.p95,
            p99: excess_summary.p99,
            max: excess_summary.max,
        },
        critical_over_10ms_pct: percent(excess.iter().filter(|&&e| e > 10.0).count(), excess.len()),
        bulk_utilization: (offered.is_finite() && offered > 0.0).then(|| video_wire as f64 / offered),
        frame_delay_ms: FrameDelayMs { p50: frame_summary.p50, p95: frame_summary.p95 },
        time_to_protect_after_drops_ms: after_drops,
        video_skipped_pct: percent(skipped as usize, video_offered as usize),
        time_to_follow_rises_ms: after_rises,
    }
}

/// `part` of `whole` in %, 0 of nothing.
pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::BitRate;
    use crate::link::DeliveryTrace;

    fn message(sent_ns: u64, latency_ms: f64, floor_ms: f64) -> CriticalMessage {
        CriticalMessage {
            sent_ns,
            latency_ns: Some((latency_ms * MS) as u64),
            floor_ns: (floor_ms * MS) as u64,
            head_of_line_ns: 0,
        }
    }

    #[test]
    fn time_to_follow_a_rise_is_until_the_estimate_reaches_the_new_rate_or_10_mbit() {
        let s = 1_000_000_000u64;
        let trace = PhaseTrace {
            link_rate: vec![
                (0, 10_000_000),
                (5 * s, 200_000),
                (5 * s + s / 4, 1_500_000),
                (17 * s, 9_000_000),
                (18 * s, 10_000_000),
            ],
            ..Default::default()
        };
        assert_eq!(time_to_follow(&trace, 15 * s, 50e6, 25 * s), 3_000.0, "10 Mbit/s reached at 18 s");
        assert_eq!(time_to_follow(&trace, 15 * s, 9e6, 25 * s), 2_000.0, "a rise to 9 Mbit/s is found at 17 s");
        assert_eq!(time_to_follow(&trace, 2 * s, 5e6, 25 * s), 0.0, "already above");
        let never = PhaseTrace { link_rate: vec![(0, 1_500_000)], ..Default::default() };
        assert_eq!(time_to_follow(&never, 15 * s, 50e6, 25 * s), 10_000.0, "never: the rest of the run");
        let link =
            LinkConfig { rate: LinkRate::Constant(crate::BitRate::from_bps(50_000_000)), ..LinkConfig::default() };
        let timeline = Timeline::of_rates(&[
            (Duration::from_secs(5), crate::BitRate::from_bps(1_500_000)),
            (Duration::from_secs(15), crate::BitRate::from_bps(50_000_000)),
        ]);
        assert_eq!(LinkFacts::of(&link, &timeline, 25 * s).rises, [(15 * s, 50e6)]);
    }

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
        assert_eq!(facts.drop_at_ns, 0, "a link without timeline has its drop at 0");
    }

    #[test]
    fn a_trace_that_goes_silent_is_a_drop() {
        // 2.5 s of one opportunity per ms, then 1 s of nothing (the trace's last line at 3.5 s).
        let text: String = (1..=2500).map(|ms| format!("{ms}\n")).chain(["3500\n".to_string()]).collect();
        let link =
            LinkConfig { rate: LinkRate::Trace(Arc::new(DeliveryTrace::parse(&text).unwrap())), ..Default::default() };
        let facts = LinkFacts::of(&link, &Timeline::default(), 3_400_000_000);
        // Detected where the next half second carries under half the two before.
        assert_eq!(facts.drops_ns, [2_300_000_000]);
        // A timeline's cut on a trace is one drop, not also the trace's fall after it.
        let timeline = Timeline::of_rates(&[(Duration::from_secs(1), BitRate::from_bps(100_000))]);
        assert_eq!(LinkFacts::of(&link, &timeline, 3_400_000_000).drops_ns, [1_000_000_000]);
        let json = serde_json::to_string(&facts).unwrap();
        assert_eq!(serde_json::from_str::<LinkFacts>(&json).unwrap(), facts, "facts survive a recording");
        let unlimited = LinkFacts::of(&LinkConfig::default(), &Timeline::default(), 100_000_000);
        let json = serde_json::to_string(&unlimited).unwrap();
        assert!(json.contains("[null]"), "{json}");
        assert_eq!(serde_json::from_str::<LinkFacts>(&json).unwrap().capacity_bytes, [f64::INFINITY]);
    }

    #[test]
    fn time_to_protect_waits_for_a_whole_fast_second() {
        let mut trace = PhaseTrace::default();
        for i in 0..300u64 {
            let latency = if (100..150).contains(&i) || i == 170 { 50.0 } else { 0.5 };
            trace.critical.push(message(i * 10_000_000, latency, 0.0));
        }
        // Drop at 1 s; slow until 1.5 s, one slow message at 1.7 s: protected from 1.71 s.
        assert!((time_to_protect(&trace, 1_000_000_000, 3_000_000_000, 2.0) - 710.0).abs() < 1e-9);
        // A floor of 49 ms (1 ms of excess) makes the slow ones fast: protected at once.
        trace.critical.iter_mut().for_each(|m| m.floor_ns = 49_000_000.min(m.latency_ns.unwrap()));
        assert_eq!(time_to_protect(&trace, 1_000_000_000, 3_000_000_000, 2.0), 0.0);
        // Judged against the run's own target: 60 ms makes every message fast.
        trace.critical.iter_mut().for_each(|m| m.floor_ns = 0);
        assert_eq!(time_to_protect(&trace, 1_000_000_000, 3_000_000_000, 60.0), 0.0);
    }

    #[test]
    fn excess_utilisation_and_frame_delay_on_hand_built_phases() {
        // 2 s on a constant 8 Mbit/s link (100 kB per bin); no timed change: windows from 0.
        let link = LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(8_000_000)), ..LinkConfig::default() };
        let facts = LinkFacts::of(&link, &Timeline::default(), 2_000_000_000);
        let mut trace = PhaseTrace {
            // Settled window from 1 s: excess 1, 2, ..., 100 ms over a 5 ms floor.
            critical: (0..200u64).map(|i| message(i * 10_000_000, 5.0 + (i % 100 + 1) as f64, 5.0)).collect(),
            frames: vec![
                FrameDelivery { capture_ns: 0, arrived_ns: 40_000_000, bytes: 1000 },
                FrameDelivery { capture_ns: 100_000_000, arrived_ns: 120_000_000, bytes: 1000 },
            ],
            video_offered: 10,
            video_skipped: 1,
            // Video 50 kB and others 10 kB per bin: 50 of the 90 kB left.
            video_bytes: vec![50_000; 20],
            other_bytes: vec![10_000; 20],
            ..PhaseTrace::default()
        };
        trace.critical[150].latency_ns = None;
        let f = link_figures(&[&trace], &facts, Some(2.0));
        assert_eq!(f.critical_excess_ms.max, 100.0);
        assert!((f.critical_excess_ms.mean - (5050.0 - 51.0) / 99.0).abs() < 1e-9, "{:?}", f.critical_excess_ms);
        assert_eq!(f.critical_over_10ms_pct, 100.0 * 89.0 / 99.0, "11..=100 ms, less the lost 51 ms one");
        assert!((f.bulk_utilization.unwrap() - 50.0 / 90.0).abs() < 1e-12);
        assert_eq!((f.frame_delay_ms.p50, f.frame_delay_ms.p95), (20.0, 40.0), "nearest rank");
        assert_eq!(f.video_skipped_pct, 10.0);
        assert!(f.time_to_protect_after_drops_ms.is_empty(), "a constant link has no drop");
        let unlimited = LinkFacts::of(&LinkConfig::default(), &Timeline::default(), 2_000_000_000);
        assert_eq!(link_figures(&[&trace], &unlimited, None).bulk_utilization, None);
    }

    #[test]
    fn the_floor_follows_the_timeline() {
        let link = LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(8_000_000)),
            delay: Duration::from_millis(10),
            ..LinkConfig::default()
        };
        let floor = LinkFloor::new(&link, &Timeline::of_rates(&[(Duration::from_secs(1), BitRate::from_bps(800_000))]));
        // 100 bytes: 0.1 ms at 8 Mbit/s, 1 ms at 0.8; a full packet ahead adds 1.5 and 15 ms.
        assert_eq!(floor.at(500_000_000, 100), (10_100_000, 1_500_000));
        assert_eq!(floor.at(1_500_000_000, 100), (11_000_000, 15_000_000));
    }

    #[test]
    fn a_summary_without_link_figures_keeps_the_seed_keys_only() {
        let summary = PhaseSummary {
            critical_messages: 1,
            critical_received: 1,
            updates: 0,
            critical_latency_ms: LatencyMs::of(&[1.0]),
            critical_latency_from_drop_ms: LatencyMs::of(&[1.0]),
            update_delay_ms: UpdateDelayMs::of(&[]),
            critical_loss_pct: 0.0,
            bulk_throughput_mbps: 1.0,
            bulk_dropped_packets: 0,
            video_fps: 30.0,
            time_to_protect_ms: None,
            link: None,
        };
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 10);
        assert_eq!(serde_json::from_value::<PhaseSummary>(json).unwrap(), summary);
        let with =
            PhaseSummary { link: Some(LinkFigures { bulk_utilization: Some(0.5), ..Default::default() }), ..summary };
        let json = serde_json::to_value(&with).unwrap();
        for key in ["critical_excess_ms", "critical_over_10ms_pct", "bulk_utilization", "frame_delay_ms"] {
            assert!(json.get(key).is_some(), "{key} at the phase's level: {json}");
        }
        assert_eq!(serde_json::from_value::<PhaseSummary>(json).unwrap(), with);
    }
}

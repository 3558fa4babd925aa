//! From what a phase measured to the seed's figures: pure functions, no I/O.

pub use bauxite_core::figures::PhaseSummary;
use bauxite_core::figures::{
    BIN_NS, CriticalMessage, FrameDelivery, LinkFacts, PhaseTrace, link_figures, percent, time_to_protect_first_drop,
};
use bauxite_core::stats;
pub use bauxite_core::stats::{LatencyMs, UpdateDelayMs};
use bauxite_telemetry::messages::{LinkUsage, RunInfo};

use crate::Scenario;

/// What one phase of one trial measured, in times relative to the phase start (s).
///
/// Built from integer timestamps by the same methods whether the measurements come
/// live from the workload or back from a recording, so `bauxite audit` recomputes a
/// recording's figures exactly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseData {
    /// When the phase started (`CLOCK_MONOTONIC` ns).
    pub start_ns: u64,
    /// Critical messages (navigation and steering): (send time, latency ms, or None if lost).
    pub critical: Vec<(f64, Option<f64>)>,
    /// The control loop's update delays: (tick time, delay ms).
    pub updates: Vec<(f64, f64)>,
    /// Video frames delivered: (arrival time, bytes).
    pub frames: Vec<(f64, u32)>,
    /// Bulk packets discarded early by Bauxite.
    pub bulk_dropped_packets: u64,
    /// When the link rate dropped.
    pub drop_at: f64,
    /// The phase's length.
    pub duration: f64,
    /// The profile's critical-latency target (p99, ms) the run is held to: time to
    /// protect counts until critical latency stays under it.
    pub target_p99_ms: f64,
    /// On an emulated `--link` link: issue 11's figures' inputs.
    pub link: Option<LinkData>,
}

/// What a run on an emulated `--link` link measures beyond the seed's figures, in
/// core's shape ([`PhaseTrace`], ns from the start), so that `bauxite sim robot` and
/// the demo compute issue 11's figures with the same code.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkData {
    /// The link's capacity, drops and windows.
    pub facts: LinkFacts,
    /// What the phase measured.
    pub trace: PhaseTrace,
    /// Each periodic stream's message size on the link, by port.
    wire_bytes: Vec<(u16, u32)>,
    /// Bytes the link delivered robot → base per bin.
    uplink_bytes: Vec<u64>,
}

impl PhaseData {
    /// An empty phase of the run `info` describes, started at `start_ns`.
    pub fn new(start_ns: u64, info: &RunInfo) -> Self {
        Self {
            start_ns,
            drop_at: info.drop_at_ns as f64 / 1e9,
            duration: info.duration_ns as f64 / 1e9,
            target_p99_ms: info.target_critical_latency_p99_ms,
            link: info.link.as_ref().map(|l| LinkData {
                facts: l.facts.clone(),
                trace: PhaseTrace::default(),
                wire_bytes: l.stream_wire_bytes.iter().map(|s| (s.port, s.bytes)).collect(),
                uplink_bytes: Vec::new(),
            }),
            ..Self::default()
        }
    }

    fn rel_ns(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.start_ns)
    }

    fn at(&self, ns: u64) -> f64 {
        ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// The link rate dropped at `t_ns` (as it happened, which may be a little after
    /// the plan): the figures' windows start from here.
    pub fn dropped(&mut self, t_ns: u64) {
        self.drop_at = self.at(t_ns);
    }

    /// A critical message sent at `sent_ns` arrived at `received_ns`; on a `--link`
    /// link, `floor` is its (floor, head-of-line) wait in ns (see [`CriticalMessage`]).
    pub fn arrived(&mut self, sent_ns: u64, received_ns: u64, floor: Option<(u64, u64)>) {
        self.critical.push((self.at(sent_ns), Some(received_ns.saturating_sub(sent_ns) as f64 / 1e6)));
        let sent = self.rel_ns(sent_ns);
        if let (Some(link), Some((floor_ns, head_of_line_ns))) = (self.link.as_mut(), floor) {
            let latency_ns = Some(received_ns.saturating_sub(sent_ns));
            link.trace.critical.push(CriticalMessage { sent_ns: sent, latency_ns, floor_ns, head_of_line_ns });
        }
    }

    /// A critical message due at `due_ns` (see [`due_ns`]) never arrived.
    pub fn lost(&mut self, due_ns: u64) {
        self.critical.push((self.at(due_ns), None));
        let sent_ns = self.rel_ns(due_ns);
        if let Some(link) = self.link.as_mut() {
            link.trace.critical.push(CriticalMessage { sent_ns, latency_ns: None, floor_ns: 0, head_of_line_ns: 0 });
        }
    }

    /// A message of the periodic stream to `port` (any lane) arrived at
    /// `received_ns`: on a `--link` link, bytes the video did not use.
    pub fn message(&mut self, port: u16, received_ns: u64) {
        let bin = (self.rel_ns(received_ns) / BIN_NS) as usize;
        if let Some(link) = self.link.as_mut()
            && let Some(&(_, bytes)) = link.wire_bytes.iter().find(|(p, _)| *p == port)
        {
            add_at(&mut link.trace.other_bytes, bin, u64::from(bytes));
        }
    }

    /// The shaper reported its link rate at `t_ns`: kept at each change, for the charts.
    pub fn shaper_rate(&mut self, t_ns: u64, bps: u64) {
        let t = self.rel_ns(t_ns);
        if let Some(link) = self.link.as_mut()
            && link.trace.link_rate.last().is_none_or(|(_, last)| *last != bps)
        {
            link.trace.link_rate.push((t, bps));
        }
    }

    /// The link's and the video's totals, written at the end of a `--link` run.
    pub fn usage(&mut self, usage: &LinkUsage) {
        if let Some(link) = self.link.as_mut() {
            link.uplink_bytes.clone_from(&usage.uplink_bytes);
            link.trace.video_offered = usage.video_offered;
            link.trace.video_skipped = usage.video_skipped;
        }
    }

    /// The control loop's tick at `tick_ns` consumed a correction sent at `sent_ns`.
    pub fn updated(&mut self, tick_ns: u64, sent_ns: u64) {
        self.updates.push((self.at(tick_ns), tick_ns.saturating_sub(sent_ns) as f64 / 1e6));
    }

    /// A video frame of `bytes`, its first byte sent at `sent_ns` (when known),
    /// arrived at `received_ns`.
    pub fn frame(&mut self, received_ns: u64, bytes: u32, sent_ns: Option<u64>) {
        self.frames.push((self.at(received_ns), bytes));
        let (capture_ns, arrived_ns) = (sent_ns.map(|s| self.rel_ns(s)), self.rel_ns(received_ns));
        if let (Some(link), Some(capture_ns)) = (self.link.as_mut(), capture_ns) {
            link.trace.frames.push(FrameDelivery { capture_ns, arrived_ns, bytes });
        }
    }

    /// Puts every series in time order, so that sums (and so the figures) do not
    /// depend on the order measurements were added in.
    pub fn finish(&mut self) {
        let by_time = |a: &(f64, Option<f64>), b: &(f64, Option<f64>)| {
            a.0.total_cmp(&b.0).then(a.1.unwrap_or(f64::INFINITY).total_cmp(&b.1.unwrap_or(f64::INFINITY)))
        };
        self.critical.sort_by(by_time);
        self.updates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        self.frames.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if let Some(link) = self.link.as_mut() {
            let trace = &mut link.trace;
            trace.critical.sort_by_key(|m| (m.sent_ns, m.latency_ns.unwrap_or(u64::MAX)));
            trace.frames.sort_by_key(|f| (f.arrived_ns, f.capture_ns, f.bytes));
            trace.bulk_dropped_packets = self.bulk_dropped_packets;
            // The video is what the link delivered beyond the periodic streams (the
            // shaper's probes, a few hundred bytes a second, count as video).
            trace.video_bytes = (link.uplink_bytes.iter().enumerate())
                .map(|(b, total)| total.saturating_sub(trace.other_bytes.get(b).copied().unwrap_or(0)))
                .collect();
        }
    }
}

fn add_at(bins: &mut Vec<u64>, bin: usize, bytes: u64) {
    if bins.len() <= bin {
        bins.resize(bin + 1, 0);
    }
    bins[bin] += bytes;
}

/// When message `seq` of a stream sending at `rate_hz` was due, for a message that
/// was lost and so carries no send time of its own.
pub fn due_ns(start_ns: u64, seq: u32, rate_hz: f64) -> u64 {
    start_ns + (f64::from(seq) / rate_hz * 1e9) as u64
}

/// The window the seed's figures are measured over: from [`Scenario::SETTLE`] after
/// the drop to the end.
fn settled(data: &PhaseData) -> (f64, f64) {
    (data.drop_at + Scenario::SETTLE.as_secs_f64(), data.duration)
}

/// Pools the trials of one phase.
pub fn summarize(trials: &[PhaseData], protected: bool) -> PhaseSummary {
    let mut latencies = Vec::new();
    let mut from_drop = Vec::new();
    let mut delays = Vec::new();
    let (mut sent, mut lost, mut bytes, mut frames, mut dropped, mut seconds) =
        (0usize, 0usize, 0u64, 0usize, 0u64, 0.0);
    let mut protect = Vec::new();
    for data in trials {
        let (from, to) = settled(data);
        from_drop.extend(
            data.critical.iter().filter(|(t, _)| (data.drop_at..to).contains(t)).filter_map(|(_, latency)| *latency),
        );
        for (t, latency) in &data.critical {
            if (from..to).contains(t) {
                sent += 1;
                match latency {
                    Some(ms) => latencies.push(*ms),
                    None => lost += 1,
                }
            }
        }
        delays.extend(data.updates.iter().filter(|(t, _)| (from..to).contains(t)).map(|(_, d)| *d));
        let after_drop = data.frames.iter().filter(|(t, _)| (data.drop_at..data.duration).contains(t));
        for (_, b) in after_drop {
            bytes += u64::from(*b);
            frames += 1;
        }
        seconds += data.duration - data.drop_at;
        dropped += data.bulk_dropped_packets;
        protect.push(time_to_protect(data) * 1e3);
    }
    let summary = PhaseSummary {
        critical_messages: sent,
        critical_received: latencies.len(),
        updates: delays.len(),
        critical_latency_ms: LatencyMs::of(&latencies),
        critical_latency_from_drop_ms: LatencyMs::of(&from_drop),
        update_delay_ms: UpdateDelayMs::of(&delays),
        critical_loss_pct: percent(lost, sent),
        bulk_throughput_mbps: bytes as f64 * 8.0 / seconds.max(1e-9) / 1e6,
        bulk_dropped_packets: dropped,
        video_fps: frames as f64 / seconds.max(1e-9),
        time_to_protect_ms: protected.then(|| stats::mean(&protect).unwrap_or(0.0)),
        link: None,
    };
    with_link_figures(summary, trials, protected)
}

/// On a `--link` link, issue 11's figures (core's, as `bauxite sim robot` computes
/// them), and time to protect judged on the excess over the link's floor after its
/// first capacity drop instead of raw latency.
fn with_link_figures(mut summary: PhaseSummary, trials: &[PhaseData], protected: bool) -> PhaseSummary {
    let links: Option<Vec<&LinkData>> = trials.iter().map(|d| d.link.as_ref()).collect();
    let Some(facts) = links.as_ref().and_then(|l| l.first()).map(|l| &l.facts) else { return summary };
    let traces: Vec<&PhaseTrace> = links.iter().flatten().map(|l| &l.trace).collect();
    // The run's own critical-latency target (review S4), as the seed's figures use it.
    let target = protected.then(|| trials[0].target_p99_ms);
    summary.link = Some(link_figures(&traces, facts, target));
    summary.time_to_protect_ms = target.and_then(|t| time_to_protect_first_drop(&traces, facts, t));
    summary
}

/// Seconds from the drop until critical latency is back under the run's p99 target
/// (2 ms for the seed): the send time of the first message after the drop from which
/// a whole second of critical messages arrived under it. The phase's length if that
/// never happened.
pub fn time_to_protect(data: &PhaseData) -> f64 {
    let mut after: Vec<&(f64, Option<f64>)> = data.critical.iter().filter(|(t, _)| *t >= data.drop_at).collect();
    after.sort_by(|a, b| a.0.total_cmp(&b.0));
    let fast = |l: &Option<f64>| l.is_some_and(|ms| ms < data.target_p99_ms);
    for (i, (t, latency)) in after.iter().enumerate() {
        if *t + 1.0 > data.duration {
            break;
        }
        if fast(latency) && after[i..].iter().take_while(|(s, _)| *s < t + 1.0).all(|(_, l)| fast(l)) {
            return t - data.drop_at;
        }
    }
    data.duration - data.drop_at
}

/// The appendix checkpoints (s).
pub const CHECKPOINTS: [f64; 11] = [0.0, 2.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0];

/// Critical latency around checkpoint `t` (messages sent in [t, t+1) s, or the last
/// second before the end), mean per trial, then mean and sample sd across trials
/// (sd 0 for one trial: no spread measured). `None` when no trial has a sample.
pub fn checkpoint(trials: &[PhaseData], t: f64) -> Option<(f64, f64)> {
    let per_trial: Vec<f64> = trials
        .iter()
        .filter_map(|data| {
            let (from, to) = if t + 1.0 <= data.duration { (t, t + 1.0) } else { (data.duration - 1.0, data.duration) };
            let v: Vec<f64> =
                data.critical.iter().filter(|(s, _)| (from..to).contains(s)).filter_map(|(_, l)| *l).collect();
            stats::mean(&v)
        })
        .collect();
    Some((stats::mean(&per_trial)?, stats::sd(&per_trial).unwrap_or(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(latency_after_drop: f64) -> PhaseData {
        let critical = (0..1400)
            .map(|i| {
                let t = i as f64 * 0.01;
                (t, Some(if t < 5.0 { 0.2 } else { latency_after_drop }))
            })
            .collect();
        PhaseData {
            start_ns: 0,
            critical,
            updates: (0..280).map(|i| (i as f64 * 0.05, 5.0)).collect(),
            frames: (0..420).map(|i| (i as f64 / 30.0, 10_000)).collect(),
            bulk_dropped_packets: 7,
            drop_at: 5.0,
            duration: 14.0,
            target_p99_ms: 2.0,
            link: None,
        }
    }

    /// A `--link` phase built with the methods the live run and the audit use: core's
    /// figures from the floors, the link's usage and the frames' send times.
    #[test]
    fn an_emulated_link_adds_the_figures_over_its_floor() {
        use bauxite_core::BitRate;
        use bauxite_core::link::{LinkConfig, LinkRate, Timeline};
        use bauxite_telemetry::messages::{LinkRun, StreamBytes};
        const MS: u64 = 1_000_000;
        let start = 1_000 * MS;
        let config = LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(8_000_000)), ..LinkConfig::default() };
        let info = RunInfo {
            trial: 1,
            phase: 2,
            protected: true,
            duration_ns: 3_000 * MS,
            drop_at_ns: 0,
            link_before_bps: 0,
            link_after_bps: 0,
            critical_streams: Vec::new(),
            shaper_rate: Some("auto".into()),
            target_critical_latency_mean_ms: 2.0,
            target_critical_latency_p99_ms: 2.0,
            target_update_delay_mean_ms: 10.0,
            target_critical_loss_pct: 1.0,
            link: Some(LinkRun {
                spec: "rate=8mbit".into(),
                facts: LinkFacts::of(&config, &Timeline::default(), 3_000 * MS),
                stream_wire_bytes: vec![StreamBytes { port: 7400, bytes: 1_000 }],
            }),
        };
        let mut data = PhaseData::new(start, &info);
        for i in 0..300 {
            let sent = start + i * 10 * MS;
            // 3 ms of latency over a 1 ms floor, and one slow message at 2.5 s.
            let latency = if i == 250 { 30 * MS } else { 3 * MS };
            data.arrived(sent, sent + latency, Some((MS, 0)));
            data.message(7400, sent + latency);
        }
        data.frame(start + 500 * MS, 10_000, Some(start + 400 * MS));
        // 100 kB per 100 ms bin is the whole 8 Mbit/s: 60 kB delivered, 10 kB of it messages.
        data.usage(&LinkUsage { uplink_bytes: vec![60_000; 30], video_offered: 4, video_skipped: 1 });
        data.finish();
        let s = summarize(&[data], true);
        let l = s.link.expect("a --link phase has issue 11's figures");
        assert_eq!((l.critical_excess_ms.p95, l.critical_excess_ms.max), (2.0, 29.0));
        assert!((l.bulk_utilization.unwrap() - 0.5 / 0.9).abs() < 1e-9, "{:?}", l.bulk_utilization);
        assert_eq!((l.frame_delay_ms.p50, l.video_skipped_pct), (100.0, 25.0));
        assert_eq!(s.time_to_protect_ms, None, "a constant link has no capacity drop");
        assert!(summarize(&[phase(1.0)], true).link.is_none(), "the seed's link has none");
    }

    #[test]
    fn figures_come_from_one_second_after_the_drop() {
        let s = summarize(&[phase(400.0), phase(400.0)], false);
        assert_eq!(s.critical_latency_ms.mean, 400.0);
        assert_eq!(s.critical_latency_ms.p99, 400.0);
        assert_eq!(s.update_delay_ms.mean, 5.0);
        assert_eq!(s.critical_loss_pct, 0.0);
        assert_eq!(s.bulk_dropped_packets, 14);
        assert!((s.video_fps - 30.0).abs() < 0.2, "{}", s.video_fps);
        assert!((s.bulk_throughput_mbps - 2.4).abs() < 0.02, "{}", s.bulk_throughput_mbps);
        assert!(s.time_to_protect_ms.is_none());
    }

    #[test]
    fn losses_and_time_to_protect_are_counted() {
        let mut p = phase(0.5);
        p.critical[600].1 = None; // lost at 6.0 s
        p.critical[520].1 = Some(30.0); // slow at 5.2 s
        let s = summarize(&[p.clone()], true);
        assert_eq!(s.critical_latency_from_drop_ms.max, 30.0, "the drop's own second counts here");
        assert_eq!(s.critical_latency_ms.max, 0.5, "but not in the settled window");
        let in_window = p.critical.iter().filter(|(t, _)| (6.0..14.0).contains(t)).count();
        assert!((s.critical_loss_pct - 100.0 / in_window as f64).abs() < 1e-9);
        // Slow at 5.2 s, lost at 6.0 s: the first clean second starts right after the loss.
        assert!((s.time_to_protect_ms.unwrap() - 1010.0).abs() < 1e-6, "{:?}", s.time_to_protect_ms);
    }

    /// Review S4: protected means under the run's own target, not a fixed 2 ms.
    #[test]
    fn time_to_protect_is_held_to_the_runs_target() {
        let mut p = phase(3.0);
        assert_eq!(time_to_protect(&p), 9.0, "3 ms is never under a 2 ms target");
        p.target_p99_ms = 5.0;
        assert_eq!(time_to_protect(&p), 0.0, "3 ms is under a 5 ms target from the drop");
    }

    #[test]
    fn checkpoints_average_each_trial_then_across_trials() {
        let (mean, sd) = checkpoint(&[phase(100.0), phase(300.0)], 6.0).unwrap();
        assert!((mean - 200.0).abs() < 1e-9 && (sd - 141.421).abs() < 0.01, "{mean} {sd}");
        let (mean, sd) = checkpoint(&[phase(100.0)], 20.0).unwrap();
        assert_eq!((mean, sd), (100.0, 0.0), "past the end: the last second; one trial has no spread");
    }
}

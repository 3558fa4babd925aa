//! From what a phase measured to the seed's figures: pure functions, no I/O.

use serde::{Deserialize, Serialize};

use bauxite_core::stats;
pub use bauxite_core::stats::{LatencyMs, UpdateDelayMs};
use bauxite_telemetry::messages::RunInfo;

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
}

impl PhaseData {
    /// An empty phase of the run `info` describes, started at `start_ns`.
    pub fn new(start_ns: u64, info: &RunInfo) -> Self {
        Self {
            start_ns,
            drop_at: info.drop_at_ns as f64 / 1e9,
            duration: info.duration_ns as f64 / 1e9,
            target_p99_ms: info.target_critical_latency_p99_ms,
            ..Self::default()
        }
    }

    fn at(&self, ns: u64) -> f64 {
        ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// The link rate dropped at `t_ns` (as it happened, which may be a little after
    /// the plan): the figures' windows start from here.
    pub fn dropped(&mut self, t_ns: u64) {
        self.drop_at = self.at(t_ns);
    }

    /// A critical message sent at `sent_ns` arrived at `received_ns`.
    pub fn arrived(&mut self, sent_ns: u64, received_ns: u64) {
        self.critical.push((self.at(sent_ns), Some(received_ns.saturating_sub(sent_ns) as f64 / 1e6)));
    }

    /// A critical message due at `due_ns` (see [`due_ns`]) never arrived.
    pub fn lost(&mut self, due_ns: u64) {
        self.critical.push((self.at(due_ns), None));
    }

    /// The control loop's tick at `tick_ns` consumed a correction sent at `sent_ns`.
    pub fn updated(&mut self, tick_ns: u64, sent_ns: u64) {
        self.updates.push((self.at(tick_ns), tick_ns.saturating_sub(sent_ns) as f64 / 1e6));
    }

    /// A video frame of `bytes` arrived at `received_ns`.
    pub fn frame(&mut self, received_ns: u64, bytes: u32) {
        self.frames.push((self.at(received_ns), bytes));
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
    }
}

/// When message `seq` of a stream sending at `rate_hz` was due, for a message that
/// was lost and so carries no send time of its own.
pub fn due_ns(start_ns: u64, seq: u32, rate_hz: f64) -> u64 {
    start_ns + (f64::from(seq) / rate_hz * 1e9) as u64
}

/// A phase's figures, pooled over trials: one phase of `summary.json`, one run's
/// `summary` there, and what `bauxite audit` recomputes from a recording (compared
/// with `==`: the audit reproduces the live figures exactly).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// Critical messages sent in the window (arrived or lost).
    pub critical_messages: usize,
    /// Of those, the ones that arrived: the latency figures' sample count.
    pub critical_received: usize,
    /// Corrections the control loop consumed in the window.
    pub updates: usize,
    /// Critical latency from one second after the drop.
    pub critical_latency_ms: LatencyMs,
    /// Critical latency from the drop itself, without the second given to adapt:
    /// what a known link rate (`--rate`) must hold too.
    pub critical_latency_from_drop_ms: LatencyMs,
    /// Update delay from one second after the drop.
    pub update_delay_ms: UpdateDelayMs,
    /// Critical messages lost from one second after the drop (%).
    pub critical_loss_pct: f64,
    /// Video throughput after the drop (Mbit/s).
    pub bulk_throughput_mbps: f64,
    /// Bulk packets discarded early (all trials).
    pub bulk_dropped_packets: u64,
    /// Video frames delivered per second after the drop.
    pub video_fps: f64,
    /// Phase 2 only: from the drop until critical latency stayed under the p99 target (ms,
    /// mean over trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_protect_ms: Option<f64>,
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
    PhaseSummary {
        critical_messages: sent,
        critical_received: latencies.len(),
        updates: delays.len(),
        critical_latency_ms: LatencyMs::of(&latencies),
        critical_latency_from_drop_ms: LatencyMs::of(&from_drop),
        update_delay_ms: UpdateDelayMs::of(&delays),
        critical_loss_pct: if sent == 0 { 0.0 } else { 100.0 * lost as f64 / sent as f64 },
        bulk_throughput_mbps: bytes as f64 * 8.0 / seconds.max(1e-9) / 1e6,
        bulk_dropped_packets: dropped,
        video_fps: frames as f64 / seconds.max(1e-9),
        time_to_protect_ms: protected.then(|| stats::mean(&protect).unwrap_or(0.0)),
    }
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
        }
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

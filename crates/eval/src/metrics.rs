//! The paper's metrics (section V-D), from the timestamps in the samples: latency is the
//! receive time minus the header stamp, the publisher's rate counts its successful
//! publications in 5 s windows, and the classifier's transitions and states come from the
//! bridge's own recording (`/bauxite/bridge/classifier`).
//!
//! Figures cover the run after its settling time (discovery, the classifier's first verdict);
//! transitions and the toggle's detection and recovery cover the whole run.

use std::collections::BTreeMap;

use bauxite_core::stats::percentile;
use serde::Serialize;

use crate::peer::PeerEvent;
use crate::run::RunRecord;

/// The rate window of the paper.
pub const RATE_WINDOW_NS: u64 = 5_000_000_000;
/// Sliding windows move by this much.
const RATE_STEP_NS: u64 = 1_000_000_000;

/// Latency percentiles, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// A classifier state change of the slow subscriber.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateChange {
    /// CLOCK_REALTIME.
    pub time_ns: u64,
    /// The state left.
    pub from: String,
    /// The state entered.
    pub to: String,
}

/// Everything measured in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunMetrics {
    /// Successful publications per second over the measured span.
    pub publisher_rate_hz: f64,
    /// Standard deviation of the 5 s sliding windows' rates.
    pub publisher_rate_sd_hz: f64,
    /// Publish attempts per second (a failing write still counts here).
    pub publisher_attempt_rate_hz: f64,
    /// Attempts whose write failed.
    pub publish_errors: usize,
    /// The longest write call, ms.
    pub publish_call_max_ms: f64,
    /// The critical subscriber's latency.
    pub critical_latency_ms: Percentiles,
    /// Samples it received in the span.
    pub critical_samples: usize,
    /// Published in the span but never received by it.
    pub critical_lost: usize,
    /// What the slow (noncritical) subscriber received per second.
    pub noncritical_rate_hz: f64,
    /// What the bridge wrote on the noncritical path per second (its own reports): the
    /// classifier's rate limit, before the slow path's losses.
    pub noncritical_forwarded_hz: Option<f64>,
    /// Its latency.
    pub noncritical_latency_ms: Percentiles,
    /// Classifier state changes over the whole run.
    pub transitions: usize,
    /// Seconds from impairment on to the demotion (every impaired run).
    pub detect_s: Option<f64>,
    /// Toggle: seconds from impairment off to the promotion.
    pub recover_s: Option<f64>,
    /// The bridge's CPU, percent of one core.
    pub bridge_cpu_pct: Option<f64>,
    /// Its peak resident memory, MiB.
    pub bridge_rss_mib: Option<f64>,
    /// The span measured, s.
    pub measured_s: f64,
    /// A failover run's takeovers, one per SIGKILL of the active bridge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub takeovers: Vec<Takeover>,
    /// Samples the critical subscriber received more than once (over the whole run).
    pub critical_duplicates: usize,
    /// The emulator's frame loss toward the slow subscriber and back, percent.
    pub link_loss_pct: Option<(f64, f64)>,
    /// Bytes the emulator delivered toward the slow subscriber over the whole run, per sample
    /// published: with the bridge, its noncritical copies (at most 10 Hz of the 30) and control
    /// traffic. A critical stream multicast onto the segment would cross the impaired link too
    /// and add about a whole 8.7 kB sample each (see README, "Evaluation (seed 004)").
    pub slow_link_bytes_per_sample: Option<f64>,
}

/// The measured span: from `settle` after the start to the publisher's last attempt.
pub fn span(record: &RunRecord, settle_ns: u64) -> (u64, u64) {
    let from = record.start_ns + settle_ns;
    let last = record.published.iter().filter_map(pub_time).max().unwrap_or(from);
    (from, last.max(from))
}

/// A publish attempt's time.
pub fn pub_time(e: &PeerEvent) -> Option<u64> {
    match e {
        PeerEvent::Pub { t_ns, .. } => Some(*t_ns),
        _ => None,
    }
}

/// (stamp, latency ns) of each sample first received, by sequence number.
fn receptions(events: &[PeerEvent]) -> BTreeMap<u64, (u64, u64)> {
    let mut by_seq = BTreeMap::new();
    for e in events {
        if let PeerEvent::Recv { seq, stamp_ns, recv_ns } = *e {
            by_seq.entry(seq).or_insert((stamp_ns, recv_ns.saturating_sub(stamp_ns)));
        }
    }
    by_seq
}

/// Nearest-rank percentiles of latencies in ns, as ms.
pub fn percentiles_ms(latencies_ns: &mut [u64]) -> Percentiles {
    latencies_ns.sort_unstable();
    let at = |q| percentile(latencies_ns, q).map_or(0.0, |v| v as f64 / 1e6);
    Percentiles { p50: at(0.5), p95: at(0.95), p99: at(0.99) }
}

/// Rates (Hz) of `times` (ns) in 5 s windows sliding by 1 s across `[from, to]`, each with
/// its end time; one window over the whole span when it is shorter than 5 s.
pub fn sliding_rates(times: &[u64], from: u64, to: u64) -> Vec<(u64, f64)> {
    let count = |a: u64, b: u64| times.iter().filter(|&&t| t >= a && t < b).count() as f64;
    if to.saturating_sub(from) < RATE_WINDOW_NS {
        let secs = (to.saturating_sub(from) as f64 / 1e9).max(1e-9);
        return vec![(to, count(from, to) / secs)];
    }
    let mut out = Vec::new();
    let mut end = from + RATE_WINDOW_NS;
    while end <= to {
        out.push((end, count(end - RATE_WINDOW_NS, end) / (RATE_WINDOW_NS as f64 / 1e9)));
        end += RATE_STEP_NS;
    }
    out
}

fn mean_sd(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
    (mean, var.sqrt())
}

/// What the critical subscriber saw around one SIGKILL of the active bridge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Takeover {
    /// When the bridge was killed, s after the publisher's start.
    pub at_s: f64,
    /// The longest time between two samples received across the kill (the last before it,
    /// the first after it and every one within 2 s after), ms.
    pub gap_ms: f64,
    /// From the kill to the first sample received after it, ms: the takeover as the
    /// subscriber sees it (with up to one publishing period).
    pub first_after_ms: f64,
    /// Samples published from 1 s before the kill to 2 s after it that never arrived.
    pub lost: usize,
}

/// How far around a kill its takeover's figures reach (ns before, after).
const TAKEOVER_WINDOW_NS: (u64, u64) = (1_000_000_000, 2_000_000_000);

/// The takeovers of `kills` (CLOCK_REALTIME): the critical subscriber's receptions (`recv`,
/// time-ordered) and the publisher's successful publications (`published`: seq, time).
pub fn takeovers(kills: &[u64], start_ns: u64, recv: &[(u64, u64)], published: &[(u64, u64)]) -> Vec<Takeover> {
    let (before, after) = TAKEOVER_WINDOW_NS;
    kills
        .iter()
        .map(|&kill| {
            let last_before = recv.iter().rev().find(|(_, t)| *t < kill).map(|(_, t)| *t);
            let times: Vec<u64> = last_before
                .into_iter()
                .chain(recv.iter().map(|(_, t)| *t).filter(|&t| t >= kill && t <= kill + after))
                .collect();
            let gap = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(after);
            let first_after = recv.iter().find(|(_, t)| *t >= kill).map_or(after, |(_, t)| t - kill);
            let lost = published
                .iter()
                .filter(|(_, t)| *t + before >= kill && *t <= kill + after)
                .filter(|(seq, _)| !recv.iter().any(|(s, _)| s == seq))
                .count();
            Takeover {
                at_s: kill.saturating_sub(start_ns) as f64 / 1e9,
                gap_ms: gap as f64 / 1e6,
                first_after_ms: first_after as f64 / 1e6,
                lost,
            }
        })
        .collect()
}

/// Computes a run's metrics; `changes` are the slow subscriber's classifier transitions and
/// `forwarded` the bridge's noncritical rate over the span ([`forwarded_noncritical_hz`]).
pub fn measure(record: &RunRecord, settle_ns: u64, changes: &[StateChange], forwarded: Option<f64>) -> RunMetrics {
    let (from, to) = span(record, settle_ns);
    let secs = ((to - from) as f64 / 1e9).max(1e-9);
    let in_span = |t: u64| t >= from && t <= to;
    let mut ok_times = Vec::new();
    let (mut attempts, mut errors, mut call_max) = (0usize, 0usize, 0u64);
    let mut published_seqs = Vec::new();
    for e in &record.published {
        if let PeerEvent::Pub { seq, t_ns, ok, call_ns } = *e
            && in_span(t_ns)
        {
            attempts += 1;
            call_max = call_max.max(call_ns);
            if ok {
                ok_times.push(t_ns);
                published_seqs.push(seq);
            } else {
                errors += 1;
            }
        }
    }
    let windows: Vec<f64> = sliding_rates(&ok_times, from, to).into_iter().map(|(_, r)| r).collect();
    let critical = receptions(&record.critical);
    let mut critical_arrivals: Vec<(u64, u64)> = record
        .critical
        .iter()
        .filter_map(|e| match *e {
            PeerEvent::Recv { seq, recv_ns, .. } => Some((seq, recv_ns)),
            _ => None,
        })
        .collect();
    critical_arrivals.sort_by_key(|&(_, t)| t);
    let critical_duplicates = critical_arrivals.len() - critical.len();
    let published_all: Vec<(u64, u64)> = record
        .published
        .iter()
        .filter_map(|e| match *e {
            PeerEvent::Pub { seq, t_ns, ok: true, .. } => Some((seq, t_ns)),
            _ => None,
        })
        .collect();
    let mut critical_ns: Vec<u64> = critical.values().filter(|(s, _)| in_span(*s)).map(|(_, l)| *l).collect();
    let critical_lost = published_seqs.iter().filter(|s| !critical.contains_key(s)).count();
    let slow = receptions(&record.slow);
    let mut slow_ns: Vec<u64> = slow.values().filter(|(s, _)| in_span(*s)).map(|(_, l)| *l).collect();
    let (detect_s, recover_s) = toggle_times(&record.switches, changes);
    let link_loss_pct = record.link.as_ref().map(|l| {
        let pct = |lost: u64, arrived: u64| if arrived == 0 { 0.0 } else { lost as f64 * 100.0 / arrived as f64 };
        (pct(l.uplink.lost, l.uplink.arrived), pct(l.downlink.lost, l.downlink.arrived))
    });
    let published_ok = record.published.iter().filter(|e| matches!(e, PeerEvent::Pub { ok: true, .. })).count();
    let slow_link_bytes_per_sample =
        record.link.as_ref().map(|l| l.uplink.delivered_bytes as f64 / published_ok.max(1) as f64);
    RunMetrics {
        publisher_rate_hz: ok_times.len() as f64 / secs,
        publisher_rate_sd_hz: mean_sd(&windows).1,
        publisher_attempt_rate_hz: attempts as f64 / secs,
        publish_errors: errors,
        publish_call_max_ms: call_max as f64 / 1e6,
        critical_samples: critical_ns.len(),
        critical_latency_ms: percentiles_ms(&mut critical_ns),
        critical_lost,
        noncritical_rate_hz: slow_ns.len() as f64 / secs,
        noncritical_forwarded_hz: forwarded,
        noncritical_latency_ms: percentiles_ms(&mut slow_ns),
        transitions: changes.len(),
        detect_s,
        recover_s,
        bridge_cpu_pct: record.bridge_usage.map(|u| u.0),
        bridge_rss_mib: record.bridge_usage.map(|u| u.1),
        measured_s: secs,
        link_loss_pct,
        slow_link_bytes_per_sample,
        takeovers: takeovers(&record.kills, record.start_ns, &critical_arrivals, &published_all),
        critical_duplicates,
    }
}

/// The toggle's time to detect (impairment on → demotion to NONCRITICAL) and to recover
/// (impairment off → promotion to CRITICAL), each the first such change after its switch.
pub fn toggle_times(switches: &[(u64, bool)], changes: &[StateChange]) -> (Option<f64>, Option<f64>) {
    let after = |at: u64, to: &str| {
        changes.iter().find(|c| c.time_ns >= at && c.to == to).map(|c| (c.time_ns - at) as f64 / 1e9)
    };
    let on = switches.iter().find(|(_, on)| *on).map(|(t, _)| *t);
    let off = switches.iter().find(|(t, impaired)| !*impaired && on.is_none_or(|o| *t > o)).map(|(t, _)| *t);
    (on.and_then(|t| after(t, "NONCRITICAL")), off.and_then(|t| after(t, "CRITICAL")))
}

/// The mean of the bridge's per-second noncritical rates (`/bauxite/bridge/paths`) reported
/// within `[from, to]` (CLOCK_REALTIME ns); `None` without reports.
pub fn forwarded_noncritical_hz(recording: &bauxite_telemetry::Recording, from: u64, to: u64) -> Option<f64> {
    let rates: Vec<f64> = recording
        .on("/bauxite/bridge/paths")
        .filter(|m| m.time_ns >= from && m.time_ns <= to)
        .filter_map(|m| m.value["noncritical"]["rate_hz"].as_f64())
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}

/// The slow subscriber's classifier transitions and its state at each evaluation, from the
/// bridge's recording's `/bauxite/bridge/classifier` messages.
pub fn classifier_history(
    recording: &bauxite_telemetry::Recording,
    subscriber: &str,
) -> (Vec<StateChange>, Vec<(u64, String)>) {
    let mut changes = Vec::new();
    let mut states = Vec::new();
    for m in recording.on("/bauxite/bridge/classifier") {
        let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        if let Some(subs) = m.value["subscribers"].as_array() {
            for s in subs.iter().filter(|s| s["name"] == subscriber) {
                states.push((m.time_ns, text(&s["state"])));
            }
        }
        if let Some(ts) = m.value["transitions"].as_array() {
            for t in ts.iter().filter(|t| t["subscriber"] == subscriber) {
                changes.push(StateChange { time_ns: m.time_ns, from: text(&t["from"]), to: text(&t["to"]) });
            }
        }
    }
    (changes, states)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_windows_count_five_seconds_each() {
        let s = 1_000_000_000u64;
        // 30 Hz for 10 s, then 10 Hz for 10 s.
        let mut times: Vec<u64> = (0..300).map(|i| i * s / 30).collect();
        times.extend((0..100).map(|i| 10 * s + i * s / 10));
        let rates = sliding_rates(&times, 0, 20 * s);
        assert_eq!(rates.len(), 16);
        assert!((rates[0].1 - 30.0).abs() < 0.3, "{rates:?}");
        assert!((rates[15].1 - 10.0).abs() < 0.3, "{rates:?}");
        let (mean, sd) = mean_sd(&rates.iter().map(|r| r.1).collect::<Vec<_>>());
        assert!(mean > 10.0 && mean < 30.0 && sd > 5.0, "{mean} {sd}");
        assert_eq!(sliding_rates(&times, 0, 2 * s).len(), 1, "a short span is one window");
    }

    #[test]
    fn toggle_detection_and_recovery_are_the_first_changes_after_each_switch() {
        let c = |t: u64, to: &str| StateChange { time_ns: t * 1_000_000_000, from: String::new(), to: to.into() };
        let changes = [c(2, "CRITICAL"), c(70, "NONCRITICAL"), c(195, "CRITICAL")];
        let switches = [(60_000_000_000, true), (180_000_000_000, false)];
        assert_eq!(toggle_times(&switches, &changes), (Some(10.0), Some(15.0)));
        // Only switched off (impaired from the start): nothing to detect, a recovery to time.
        assert_eq!(toggle_times(&[(180_000_000_000, false)], &changes), (None, Some(15.0)));
        assert_eq!(toggle_times(&[], &changes), (None, None));
    }

    #[test]
    fn a_takeover_is_the_gap_the_first_sample_after_and_what_never_came() {
        let ms = 1_000_000u64;
        let start = 1_000 * ms;
        // 30 Hz from 0 to 6 s; the bridge killed at 3.01 s; samples 91–93 (3.033–3.100 s)
        // never arrive, 94 arrives at 3.150 s (after the takeover), the rest 1 ms after
        // publication.
        let published: Vec<(u64, u64)> = (0..180).map(|i| (i, start + i * 1_000 * ms / 30)).collect();
        let recv: Vec<(u64, u64)> = published
            .iter()
            .filter(|(s, _)| !(91..=93).contains(s))
            .map(|&(s, t)| (s, if s == 94 { start + 3_150 * ms } else { t + ms }))
            .collect();
        let kill = start + 3_010 * ms;
        let t = takeovers(&[kill], start, &recv, &published);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].lost, 3);
        assert!((t[0].at_s - 3.01).abs() < 1e-9);
        // Sample 90 (3.000 s + 1 ms) to sample 94 at 3.150 s.
        assert!((t[0].gap_ms - 149.0).abs() < 1e-6, "{t:?}");
        assert!((t[0].first_after_ms - 140.0).abs() < 1e-6, "{t:?}");
        assert!(takeovers(&[], start, &recv, &published).is_empty());
    }

    #[test]
    fn percentiles_are_nearest_rank_in_ms() {
        let mut ns: Vec<u64> = (1..=100).map(|i| i * 1_000_000).collect();
        assert_eq!(percentiles_ms(&mut ns), Percentiles { p50: 50.0, p95: 95.0, p99: 99.0 });
        assert_eq!(percentiles_ms(&mut []), Percentiles::default());
    }
}

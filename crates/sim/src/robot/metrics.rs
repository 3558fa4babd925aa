//! From what a phase measured to the demo's figures (`summary.json`'s keys, and
//! issue 11's for links that vary). The figures and their one type are core's
//! ([`bauxite_core::figures`], shared with `bauxite demo --link`); this module adds
//! what only the simulator measures: the base's control loop, simulated from the
//! corrections' arrivals.

use serde::{Deserialize, Serialize};

pub use bauxite_core::figures::{
    ExcessMs, FrameDelayMs, LinkFacts, LinkFigures, LinkSummary, PhaseSummary, link_figures, time_to_protect_first_drop,
};
pub use bauxite_core::stats::{LatencyMs, UpdateDelayMs};

use bauxite_core::figures::{SETTLE, percent};

use super::PhaseTrace;

const NS: f64 = 1e9;
const MS: f64 = 1e6;

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

/// Pools phases (one per seed) into the figures; the protected phase gives its
/// critical-latency target (`protect_target_ms`), which time to protect is judged against.
pub fn summarize(
    phases: &[&PhaseTrace],
    link: &LinkFacts,
    control_loop_hz: f64,
    protect_target_ms: Option<f64>,
) -> PhaseSummary {
    let (drop_at, end) = (link.drop_at_ns, link.duration_ns);
    let settled = drop_at + SETTLE.as_nanos() as u64;
    let (mut latencies, mut from_drop, mut delays) = (Vec::new(), Vec::new(), Vec::new());
    let (mut sent, mut lost, mut frame_bytes, mut frames, mut dropped) = (0usize, 0usize, 0u64, 0usize, 0u64);
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
                    Some(l) => latencies.push(l as f64 / MS),
                    None => lost += 1,
                }
            }
        }
        delays.extend(update_delays(trace, control_loop_hz, settled, end));
        for f in trace.frames.iter().filter(|f| f.arrived_ns >= drop_at && f.arrived_ns < end) {
            frame_bytes += u64::from(f.bytes);
            frames += 1;
        }
        dropped += trace.bulk_dropped_packets;
    }
    let seconds = (end.saturating_sub(drop_at) as f64 / NS * phases.len() as f64).max(1e-9);
    PhaseSummary {
        critical_messages: sent,
        critical_received: latencies.len(),
        updates: delays.len(),
        critical_latency_ms: LatencyMs::of(&latencies),
        critical_latency_from_drop_ms: LatencyMs::of(&from_drop),
        update_delay_ms: UpdateDelayMs::of(&delays),
        critical_loss_pct: percent(lost, sent),
        bulk_throughput_mbps: frame_bytes as f64 * 8.0 / seconds / 1e6,
        bulk_dropped_packets: dropped,
        video_fps: frames as f64 / seconds,
        time_to_protect_ms: protect_target_ms.and_then(|target| time_to_protect_first_drop(phases, link, target)),
        link: Some(link_figures(phases, link, protect_target_ms)),
    }
}

/// Both phases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// The standard stack: every packet straight into the modem's FIFO.
    pub standard: PhaseSummary,
    /// Bauxite: the profile's lanes, early drop and rate.
    pub protected: PhaseSummary,
}

/// The references every run is judged against, pooled over seeds like a phase
/// ([`super::Phase::NeverDropped`], [`super::Phase::Clairvoyant`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Oracles {
    /// Only the traffic no shaper may drop, unshaped: what no shaper can avoid.
    pub never_dropped: PhaseSummary,
    /// The protected phase shaped to the link's own capacity over the next base
    /// RTT plus 100 ms.
    pub clairvoyant: PhaseSummary,
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
    /// The references, pooled over seeds.
    pub oracle: Oracles,
    /// Each phase of each seed.
    pub runs: Vec<RunEntry>,
}

#[cfg(test)]
mod tests {
    use super::*;

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

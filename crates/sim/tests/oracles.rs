//! The references `sim robot` judges `rate: auto` against (issue 27): the
//! never-dropped traffic alone, and a controller that reads the link's own capacity
//! ahead. On generated links neither may be beaten by the controller they judge.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bauxite_core::link::{DeliveryTrace, LinkConfig, LinkRate, Timeline};
use bauxite_core::rng::SplitMix64;
use bauxite_core::workload::WorkloadSpec;
use bauxite_core::{BitRate, Profile};
use bauxite_sim::robot::{CLAIRVOYANT_LOOKAHEAD, Phase, RateMode, RobotConfig, run_phase, simulate};
use common::critical_excess;

/// A cellular-like uplink of `seconds`: a new rate between 0.5 and 6 Mbit/s every
/// 200 ms, and a one-second outage every ten seconds, as mahimahi text.
fn generated_trace(seed: u64, seconds: u64) -> Arc<DeliveryTrace> {
    let (mut rng, mut bps) = (SplitMix64::new(seed), 1e6);
    common::trace_of_rates(seconds, |ms| {
        if ms % 200 == 0 {
            bps = 0.5e6 + rng.next_f64() * 5.5e6;
        }
        let outage = ms % 10_000 >= 7_000 && ms % 10_000 < 8_000;
        if outage { 0.0 } else { bps }
    })
}

fn on_trace(trace: Arc<DeliveryTrace>, seconds: u64) -> RobotConfig {
    RobotConfig {
        profile: Profile::robot().validate().unwrap(),
        workload: WorkloadSpec::default(),
        link: LinkConfig { rate: LinkRate::Trace(trace), ..LinkConfig::default() },
        timeline: Timeline::default(),
        reverse_delay: None,
        duration: Duration::from_secs(seconds),
        rate: RateMode::Auto,
        seed: 1,
    }
}

#[test]
fn on_generated_links_the_clairvoyant_is_never_worse_than_auto_nor_the_never_dropped_than_either() {
    for seed in 1..=4 {
        let outcome = simulate(&on_trace(generated_trace(seed, 30), 30), 2, "generated");
        let (auto, clairvoyant, alone) = (
            critical_excess(&outcome.summary.phases.protected),
            critical_excess(&outcome.summary.oracle.clairvoyant),
            critical_excess(&outcome.summary.oracle.never_dropped),
        );
        // Excess is counted in whole milliseconds of a trace's opportunities: 1 ms is
        // the figures' own resolution, not a margin for the controller.
        assert!(clairvoyant.p95 <= auto.p95 + 1.0, "seed {seed}: clairvoyant p95 {clairvoyant:?}, auto {auto:?}");
        assert!(clairvoyant.p99 <= auto.p99 + 1.0, "seed {seed}: clairvoyant p99 {clairvoyant:?}, auto {auto:?}");
        assert!(
            alone.p99 <= clairvoyant.p99 + 1.0,
            "seed {seed}: never-dropped {alone:?}, clairvoyant {clairvoyant:?}"
        );
        let (video, alone_video) = (
            outcome.summary.oracle.clairvoyant.bulk_throughput_mbps,
            outcome.summary.oracle.never_dropped.bulk_throughput_mbps,
        );
        assert!(video > 0.5, "seed {seed}: the clairvoyant carries video ({video} Mbit/s)");
        assert_eq!(alone_video, 0.0, "seed {seed}: the never-dropped reference sends no video");
        let (a, n) = (&outcome.summary.phases.protected, &outcome.summary.oracle.never_dropped);
        assert_eq!(a.critical_messages, n.critical_messages, "seed {seed}: the same critical streams");
    }
}

#[test]
fn the_clairvoyant_has_lowered_its_rate_when_a_drop_arrives() {
    let config = RobotConfig {
        link: LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(50_000_000)), ..LinkConfig::default() },
        timeline: Timeline::of_rates(&[(Duration::from_secs(5), BitRate::from_bps(1_500_000))]),
        reverse_delay: None,
        ..on_trace(generated_trace(1, 1), 8)
    };
    let phase = run_phase(&config, Phase::Clairvoyant);
    let drop_ns = 5_000_000_000u64;
    // The window's mean falls with the share of it past the drop: it is halfway
    // down half the lookahead before, and at the new rate by one poll and one `tc`
    // after (10 + 3 ms), never as late as a probe could tell.
    let rate_at = |t: u64| phase.link_rate.iter().rev().find(|&&(at, _)| at <= t).expect("a rate").1;
    let half_before = drop_ns - CLAIRVOYANT_LOOKAHEAD.as_nanos() as u64 / 4;
    assert!(rate_at(half_before) < 40_000_000, "{} bit/s a quarter lookahead before the drop", rate_at(half_before));
    let lowered = phase.link_rate.iter().find(|&&(_, bps)| bps < 3_000_000).expect("it follows the drop").0;
    assert!(lowered <= drop_ns + 13_000_000, "lowered at {lowered} ns");
    // Reading ahead, it protects critical messages through the drop itself.
    let worst = phase.critical.iter().filter_map(|m| m.latency_ns).max().unwrap();
    assert!(worst < 20_000_000, "the worst critical latency {worst} ns");
    // The never-dropped reference runs the same critical streams, and the probes.
    let alone = run_phase(&config, Phase::NeverDropped);
    assert_eq!(alone.critical.len(), phase.critical.len());
    assert!(alone.frames.is_empty() && alone.video_bytes.iter().all(|&b| b == 0), "no video");
    assert!(alone.other_bytes.iter().sum::<u64>() > phase.other_bytes.iter().sum::<u64>(), "its probes count");
}

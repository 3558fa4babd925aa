//! `sim robot` on the downlink (`direction: down`): the streams go base → robot, the
//! link's FIFO is the far end's, and the shaper sits at the robot's ingress after it, as
//! `bauxite up` runs it on the downlink's IFB device. With the rate known the far FIFO
//! never fills; with `rate: auto` the controller counts what arrives and finds the link;
//! on small generated drives it keeps the steering well under the standard stack's
//! (not yet near the clairvoyant's: the far FIFO drains only as the far sender backs off).

mod common;

use std::sync::Arc;
use std::time::Duration;

use bauxite_core::link::{DEMO_TBF_BURST_BYTES, DeliveryTrace, LinkConfig, LinkRate, Timeline};
use bauxite_core::rng::SplitMix64;
use bauxite_core::workload::WorkloadSpec;
use bauxite_core::{BitRate, Direction, IngressPolicy, Profile, RateSetting};
use bauxite_sim::robot::{RateMode, RobotConfig, simulate};
use common::critical_excess;

/// The robot profile shaping its downlink at `rate` (a reflector named for `auto`: the
/// simulator's is the far end itself).
fn downlink(rate: RateMode, link: LinkConfig, timeline: Timeline, seconds: u64) -> RobotConfig {
    let mut profile = Profile::robot();
    profile.direction = Direction::Down;
    profile.auto_rate.reflector = vec!["192.0.2.1:7399".into()];
    profile.ingress = Some(IngressPolicy::at(match rate {
        RateMode::Auto => RateSetting::Auto,
        RateMode::Fixed(r) => RateSetting::Fixed(r),
    }));
    RobotConfig {
        profile: profile.validate().unwrap(),
        workload: WorkloadSpec::default(),
        link,
        timeline,
        reverse_delay: None,
        duration: Duration::from_secs(seconds),
        rate,
        seed: 1,
    }
}

/// The seed's step on the demo's TBF (its bucket included), as the far end's FIFO.
fn step() -> (LinkConfig, Timeline) {
    let link = LinkConfig {
        rate: LinkRate::Constant(BitRate::from_bps(50_000_000)),
        burst_bytes: Some(DEMO_TBF_BURST_BYTES),
        ..LinkConfig::default()
    };
    (link, Timeline::of_rates(&[(Duration::from_secs(5), BitRate::from_bps(1_500_000))]))
}

#[test]
fn with_the_downlinks_rate_known_the_far_fifo_never_fills() {
    let (link, timeline) = step();
    let outcome = simulate(&downlink(RateMode::Fixed(BitRate::from_bps(1_500_000)), link, timeline, 15), 2, "step");
    let (s, p) = (&outcome.summary.phases.standard, &outcome.summary.phases.protected);
    // The standard stack: the far FIFO (100 KB at 1.5 Mbit/s, 533 ms) full of the video.
    assert!(s.critical_latency_ms.p99 > 400.0, "standard {:?}", s.critical_latency_ms);
    // Shaped at the robot to 90 % of the downlink, the video never fills the far FIFO:
    // the steering waits at most for a packet in transmission there (8 ms).
    assert!(p.critical_latency_ms.p99 <= 10.0, "protected {:?}", p.critical_latency_ms);
    assert_eq!(p.critical_loss_pct, 0.0);
    assert!(p.bulk_dropped_packets > 0, "the robot's lanes dropped the video early, not the far FIFO");
    let share = p.bulk_throughput_mbps / s.bulk_throughput_mbps;
    assert!(share >= 0.8, "the video keeps {:.0} % of the standard stack's", 100.0 * share);
}

#[test]
fn with_rate_auto_the_downlink_is_found_from_what_arrives() {
    let (link, timeline) = step();
    let outcome = simulate(&downlink(RateMode::Auto, link, timeline, 20), 3, "step");
    let (s, p) = (&outcome.summary.phases.standard, &outcome.summary.phases.protected);
    // The far FIFO the step filled drains only as the far sender backs off from the
    // robot's drops (the namespaces: 117 ms p99 from the drop, 2 s to protect); after
    // it the steering is far from the standard stack's 530 ms.
    assert!(p.critical_latency_ms.p99 <= 150.0, "protected {:?}", p.critical_latency_ms);
    assert!(p.critical_latency_ms.mean <= 20.0, "protected {:?}", p.critical_latency_ms);
    assert!(s.critical_latency_ms.p99 > 400.0, "standard {:?}", s.critical_latency_ms);
    // The estimate settles near the 1.5 Mbit/s link: neither the base rate (10 Mbit/s)
    // nor min_rate; the video keeps most of what the standard stack got.
    let share = p.bulk_throughput_mbps / s.bulk_throughput_mbps;
    assert!(share >= 0.55, "the video keeps {:.0} % of the standard stack's", 100.0 * share);
}

/// A small generated drive: the rate moves between 1 and 6 Mbit/s every 400 ms, with a
/// 600 ms outage every 10 s.
fn drive(seed: u64, seconds: u64) -> Arc<DeliveryTrace> {
    let (mut rng, mut bps) = (SplitMix64::new(seed), 3e6);
    common::trace_of_rates(seconds, |ms| {
        if ms % 400 == 0 {
            bps = 1e6 + rng.next_f64() * 5e6;
        }
        if ms % 10_000 >= 7_000 && ms % 10_000 < 7_600 { 0.0 } else { bps }
    })
}

#[test]
fn on_generated_downlink_drives_auto_keeps_the_steering_well_below_the_standard_stacks() {
    for seed in [21, 22] {
        let link = LinkConfig { rate: LinkRate::Trace(drive(seed, 30)), ..LinkConfig::default() };
        let outcome = simulate(&downlink(RateMode::Auto, link, Timeline::default(), 30), 2, "drive");
        let s = &outcome.summary;
        let (auto, standard) = (critical_excess(&s.phases.protected), critical_excess(&s.phases.standard));
        // Issue 30 asks an excess p95 of at most 50 ms on a downlink trace: met on the
        // Verizon trace in the namespaces, not on these drives, whose rate falls sixfold
        // within 400 ms (seed 21: p95 157 ms, the clairvoyant's 21, the standard stack's
        // 381; docs/results/demo.md says why). This holds what is met: a fraction of the
        // standard stack's.
        assert!(
            auto.p95 * 2.0 < standard.p95,
            "seed {seed}: excess p95 {} against the standard's {}",
            auto.p95,
            standard.p95
        );
        assert!(auto.mean * 4.0 < standard.mean, "seed {seed}: excess mean {} against {}", auto.mean, standard.mean);
        assert!(s.phases.protected.bulk_throughput_mbps > 0.2, "seed {seed}: the video flowed");
    }
}

#[test]
fn a_downlink_seed_replays_exactly() {
    let link = LinkConfig { rate: LinkRate::Trace(drive(5, 10)), ..LinkConfig::default() };
    let config = downlink(RateMode::Auto, link, Timeline::default(), 10);
    assert_eq!(simulate(&config, 1, "drive").summary, simulate(&config, 1, "drive").summary);
}

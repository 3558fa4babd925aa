//! `sim robot` end to end on small links: what a shaper that knows the rate keeps,
//! what the standard stack suffers, that a trace's capacity bounds what is
//! delivered, and that a seed replays exactly.

use std::sync::Arc;
use std::time::Duration;

use bauxite_core::link::{DeliveryTrace, LinkConfig, LinkRate, QueueLimit, Timeline};
use bauxite_core::workload::WorkloadSpec;
use bauxite_core::{BitRate, Profile};
use bauxite_sim::robot::{BIN_NS, Phase, RateMode, RobotConfig, run_phase, simulate};

const MBIT: u64 = 1_000_000;

/// The seed's step drop: 50 -> 1.5 Mbit/s at 5 s behind the modem's 100 KB buffer.
fn step_drop(rate: RateMode, seconds: u64) -> RobotConfig {
    RobotConfig {
        profile: Profile::robot().validate().unwrap(),
        workload: WorkloadSpec::default(),
        link: LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(50 * MBIT)), ..LinkConfig::default() },
        timeline: Timeline::of_rates(&[(Duration::from_secs(5), BitRate::from_bps(1_500_000))]),
        reverse_delay: None,
        duration: Duration::from_secs(seconds),
        rate,
        seed: 1,
    }
}

#[test]
fn a_shaper_that_knows_the_rate_keeps_critical_excess_to_one_packet_on_the_link() {
    let outcome = simulate(&step_drop(RateMode::Fixed(BitRate::from_bps(1_500_000)), 15), 1, "step");
    let p = &outcome.summary.phases.protected;
    let l = p.link.as_ref().expect("the simulator's figures carry the link's");
    // The link never preempts the packet it carries: a critical message may find a
    // 1500-byte video packet just starting, 8 ms at 1.5 Mbit/s. Beyond that, only what
    // HTB lets a lane within its own guarantee send while the shaped rate's bucket is
    // in debt: at most that bucket, 1 ms of the rate (`paced_burst_bytes`), early.
    let one_packet_ms = 1500.0 * 8.0 / 1.5e6 * 1e3;
    let bucket_ms = 1.0;
    assert!(l.critical_excess_ms.max <= one_packet_ms + bucket_ms + 0.5, "{:?}", l.critical_excess_ms);
    assert!(l.critical_excess_ms.mean < (one_packet_ms + bucket_ms) / 2.0, "{:?}", l.critical_excess_ms);
    assert_eq!(l.critical_over_10ms_pct, 0.0);
    assert_eq!(p.critical_loss_pct, 0.0);
    assert!(p.time_to_protect_ms.unwrap() < 100.0, "protected from the drop: {:?}", p.time_to_protect_ms);
    // The video still gets most of what critical and telemetry leave.
    assert!(l.bulk_utilization.unwrap() > 0.8, "{:?}", l.bulk_utilization);
}

#[test]
fn without_shaping_critical_latency_grows_to_the_modem_buffers_drain_time() {
    let outcome = simulate(&step_drop(RateMode::Fixed(BitRate::from_bps(1_500_000)), 15), 1, "step");
    let s = &outcome.summary.phases.standard;
    // 100 KB drain at 1.5 Mbit/s in 533 ms: the video keeps the FIFO full.
    let drain_ms = 100_000.0 * 8.0 / 1.5e6 * 1e3;
    let p99 = s.critical_latency_ms.p99;
    assert!(p99 > 0.9 * drain_ms && p99 < drain_ms + 10.0, "p99 {p99} ms against a drain of {drain_ms} ms");
    let l = s.link.as_ref().expect("the simulator's figures carry the link's");
    assert!(l.critical_over_10ms_pct > 90.0, "{}", l.critical_over_10ms_pct);
}

/// A trace that alternates 1 s at 4 Mbit/s and 1 s at 1 Mbit/s.
fn two_speed_trace() -> Arc<DeliveryTrace> {
    let fast = DeliveryTrace::constant(4 * MBIT, 1000);
    let slow = DeliveryTrace::constant(MBIT, 1000);
    let mut text = String::new();
    for k in 0..fast.len() as u64 {
        text += &format!("{}\n", fast.opportunity_ns(k) / 1_000_000);
    }
    for k in 0..slow.len() as u64 {
        text += &format!("{}\n", 1000 + slow.opportunity_ns(k) / 1_000_000);
    }
    Arc::new(DeliveryTrace::parse(&text).unwrap())
}

#[test]
fn a_traces_capacity_bounds_what_is_delivered_and_is_used() {
    let config = RobotConfig {
        link: LinkConfig {
            rate: LinkRate::Trace(two_speed_trace()),
            queue: QueueLimit { bytes: Some(60_000), packets: None },
            delay: Duration::from_millis(10),
            ..LinkConfig::default()
        },
        timeline: Timeline::default(),
        ..step_drop(RateMode::Auto, 12)
    };
    let outcome = simulate(&config, 1, "two-speed trace");
    let capacity = &outcome.link.capacity_bytes;
    assert_eq!(
        outcome.link.drops_ns.len(),
        5,
        "a drop every 2 s, from 3 s (two seconds of history are needed): {:?}",
        outcome.link.drops_ns
    );
    for (name, phase) in [("standard", &outcome.runs[0].standard), ("protected", &outcome.runs[0].protected)] {
        let delivered =
            |b: usize| phase.video_bytes.get(b).copied().unwrap_or(0) + phase.other_bytes.get(b).copied().unwrap_or(0);
        // Over every second (10 bins), delivered bytes never exceed the opportunities
        // offered in it (shifted by the 10 ms delay: one bin's worth of slack).
        for b in 0..capacity.len() - 11 {
            let offered: f64 = capacity[b..b + 11].iter().sum();
            let got: u64 = (b..b + 10).map(|i| delivered(i + 1)).sum();
            assert!(
                got as f64 <= offered,
                "{name}: {got} bytes delivered in the second from bin {b}, {offered} offered"
            );
        }
    }
    // The standard stack (a greedy TCP behind a deep FIFO) fills the link.
    let s = &outcome.summary.phases.standard;
    let utilization = s.link.as_ref().and_then(|l| l.bulk_utilization);
    assert!(utilization.unwrap() > 0.9, "{utilization:?}");
    let seconds = 12.0;
    let mean_mbps = capacity.iter().sum::<f64>() * 8.0 / seconds / 1e6;
    assert!((mean_mbps - 2.5).abs() < 0.05, "the trace averages 2.5 Mbit/s: {mean_mbps}");
    assert_eq!(BIN_NS, 100_000_000, "the bins the test reasons in");
}

#[test]
fn the_same_seed_gives_the_same_summary_and_another_seed_another() {
    let config = step_drop(RateMode::Auto, 10);
    let json = |seed| {
        let outcome = simulate(&RobotConfig { seed, ..config.clone() }, 2, "step");
        serde_json::to_string(&outcome.summary).unwrap()
    };
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
    let again = run_phase(&config, Phase::Protected);
    assert_eq!(run_phase(&config, Phase::Protected), again, "phase by phase, packet by packet");
}

/// 1 s at 2 Mbit/s, then an outage of 1.5 s, over and over (a radio link that fades
/// out), as mahimahi text.
fn fading_trace(cycles: u64) -> Arc<DeliveryTrace> {
    let on = DeliveryTrace::constant(2 * MBIT, 1000);
    let text: String = (0..cycles)
        .flat_map(|c| (0..on.len() as u64).map(move |k| (c, k)))
        .map(|(c, k)| format!("{}\n", c * 2500 + on.opportunity_ns(k) / 1_000_000))
        .collect();
    Arc::new(DeliveryTrace::parse(&text).unwrap())
}

/// Outages make the video's timeouts long and the answers after them short: a timer
/// already due when the timeout shrinks fires at once. (It was scheduled in the past,
/// and the simulated world ran backwards: caught by the event queue's debug check,
/// which these test builds keep.)
#[test]
fn a_fading_link_never_runs_the_world_backwards() {
    let config = RobotConfig {
        link: LinkConfig { rate: LinkRate::Trace(fading_trace(24)), ..LinkConfig::default() },
        timeline: Timeline::default(),
        reverse_delay: None,
        ..step_drop(RateMode::Auto, 60)
    };
    let outcome = simulate(&config, 4, "fading trace");
    for run in &outcome.runs {
        for phase in [&run.standard, &run.protected] {
            let sent: Vec<u64> = phase.critical.iter().map(|m| m.sent_ns).collect();
            assert!(sent.windows(2).all(|w| w[0] <= w[1]), "seed {}: messages out of time order", run.seed);
        }
    }
}

/// The daemon takes the probes' answers at its polls and changes HTB's rate by
/// running `tc` there, sleeping its poll interval after it: one change per poll at
/// most, and polls after a change come `tc`'s time later (10 + 3 ms apart).
#[test]
fn the_link_rate_changes_at_most_once_per_poll_and_tc() {
    let config = step_drop(RateMode::Auto, 8);
    let poll = config.profile.profile().congestion.poll_interval.as_nanos() as u64;
    let phase = run_phase(&config, Phase::Protected);
    let changes: Vec<u64> = phase.link_rate.iter().skip(1).map(|&(t, _)| t).collect();
    assert!(changes.len() > 5, "the drop moves the estimate: {changes:?}");
    let closest = changes.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(closest >= poll + 3_000_000, "two changes {closest} ns apart: {changes:?}");
}

/// `--link up=…,down=…`: the other way's delay is the return path's. On a fast link with
/// no delay of its own, the first key frame (several initial windows of segments) takes
/// a few ACK round trips, so the return path's 200 ms shows in its delivery, and
/// without it the frame arrives within a few milliseconds.
#[test]
fn the_return_paths_delay_is_the_other_ways() {
    let fast = LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(50 * MBIT)), ..LinkConfig::default() };
    let config = |reverse_delay| RobotConfig {
        link: fast.clone(),
        timeline: Timeline::default(),
        reverse_delay,
        ..step_drop(RateMode::Fixed(BitRate::from_bps(50 * MBIT)), 2)
    };
    let first_frame_ms = |reverse_delay| {
        let trace = run_phase(&config(reverse_delay), Phase::Standard);
        let frame = trace.frames.first().expect("a frame arrives");
        (frame.arrived_ns - frame.capture_ns) as f64 / 1e6
    };
    let (alone, behind_200ms) = (first_frame_ms(None), first_frame_ms(Some(Duration::from_millis(200))));
    assert!(alone < 20.0, "no delay either way: {alone} ms");
    assert!(behind_200ms >= 200.0, "at least one round trip of 200 ms: {behind_200ms} ms");
}

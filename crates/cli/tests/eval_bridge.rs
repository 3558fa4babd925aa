//! `bauxite eval bridge --quick` end to end (root: network namespaces), with RustDDS, Cyclone DDS
//! and ROS 2 on Fast DDS as peers, and the three checks read from its summary.json:
//!
//! 1. the baseline with a collapsing writer (KEEP_ALL, max_samples 10) under strong bursty loss
//!    shows the backpressure: the publisher below 25 Hz or the critical p95 over 1 s, with at
//!    least two of the three implementations (a writer whose implementation drops the slow reader
//!    when its lease expires publishes 30 Hz again: `backpressure_check` in the harness);
//! 2. the bridge keeps the publisher at 30 Hz at every severity with every implementation, and
//!    the critical p95 under 2 ms with at least two of the three (see Latency, below);
//! 3. the ablation's critical latency matches the bridge's at moderate, while the classifier cuts
//!    the noncritical rate (to 3 Hz where the impairment keeps it demoted: strong).
//!
//! Margins, so that it does not flake on a loaded 2-core machine: measured here (load 4–5, test
//! build), the collapsing baselines published 0–19 Hz over 12 s of figures (limit 25), but
//! Cyclone's writer recovers between fades and publishes in bursts: over the paper-length run
//! 8.8 % of its 12 s windows averaged above 25 Hz, none of its 24 or 36 s windows (at most
//! 23.2 and 21.8 Hz), so the quick baseline now gives 32 s of figures (RustDDS's and ROS 2's
//! writers stay collapsed for tens of seconds: 0–13 Hz); the bridge runs hold 30.0 Hz
//! (limit 29: a starved timer skips a tick now and then); a demoted subscriber's noncritical rate
//! is at most 3 Hz by construction (its limiter) and the ablation's 10 Hz (limits 3.5 and 8, on
//! the rate the bridge writes, from its own reports, not on what the faded path delivers). The
//! severities are fades of every frame, frequent enough that 30 measured seconds see several.
//!
//! Latency: the bound is a critical p95 under 2 ms at every severity with at least two
//! implementations, asserted from the harness's verdict (`checks[]`, `crates/eval/src/report.rs`).
//! It rests on the evaluation's real-time scheduling (`Scheduling::Realtime`, the default): the
//! critical path (publisher, bridge, critical subscriber) under SCHED_FIFO, as a robot runs its
//! control loop (the test asserts the kernel reported it for every bridge run), and idle CPUs
//! polling (a `cpu_dma_latency` request of 0 µs). As ordinary processes (nice -10,
//! `--no-realtime`) the bound had no margin on this 2-core virtual machine: six runs of this test
//! gave Cyclone's worst severity 1.25–2.07 ms (the 2.07 on a quiet machine, a landing check),
//! and with two busy loops saturating both cores RustDDS 3.54 and Cyclone 2.94 ms. Two causes,
//! measured with quick bridge runs (README, *Evaluation*): contention (the slow subscriber
//! decodes the same scan at the same instant as the critical one; SCHED_FIFO took two busy
//! loops' worst p95 from 8.94 / 6.98 ms to 1.15 / 1.29 ms, RustDDS / Cyclone), and a halted
//! virtual CPU's wake-up through the hypervisor, once per process a sample crosses (on a quiet
//! machine SCHED_FIFO alone gave 1.71 / 1.89 ms, with idle CPUs polling 1.04 / 1.37 ms). This
//! test with both, on a quiet machine: worst p95 RustDDS 1.07, Cyclone 1.17, ROS 2 1.76 ms, all
//! three under the bound, where two are needed; with SCHED_FIFO alone it had been 1.42, 1.93 and
//! 2.64 ms. Margin: 0.8 ms over the second best implementation's worst severity, and the third
//! implementation as a spare. What no priority removes is the host slowing the whole machine
//! (a hypervisor's steal). Every implementation, the third too, keeps its p95 under 50 ms
//! (asserted), the collapse's scale: a critical sample queued behind a blocked writer waits at
//! least its max_blocking_time (100 ms).
//!
//! The classifier's cut to 3 Hz is asserted at strong, where the way back's 60 ± 10 ms keeps
//! every reading above the 50 ms demotion RTT, so the demotion is sustained, and it comes before
//! the figures start (16 s) even when no fade helps: the RTT alone demotes by 14 s (see
//! `Lengths::QUICK`; a landing check failed when the figures began at 13 s and a demotion
//! without an early fade came at 13.0 s: 3.67 Hz). At moderate the
//! demotion rests on loss alone, and bursty loss can clear the classifier's window: promotion
//! takes 12 s without a lost probe (a 10 s window, three evaluations), and at moderate's fades
//! of 10 frames every 100, on the quiet path a demoted subscriber leaves (3 Hz of 6-fragment
//! samples, 5 Hz probes, answers alone on the way back), a Monte Carlo of that chain finds such
//! a clean stretch about once every 80 s. A run of this test saw it: 6.5 Hz forwarded at moderate
//! (demoted, promoted, demoted). So at moderate the test asserts only that the classifier cut
//! the rate below the ablation's 8 Hz floor: above it, the subscriber would have spent over
//! 21.4 of the 30 measured seconds (16–46 s) at 10 Hz, which needs a demotion later than 37 s
//! (the impairment starts at 3 s, and at 10 Hz the fades come every 1.5 s or so) or promotions
//! whose 10 Hz stretches add up to that, each after 12 s without a lost probe.
//!
//! It also checks that the critical stream stays off the slow subscriber's impaired link (the
//! emulator's bytes toward it per published sample, see `slow_link_carries_no_critical_stream`).
//!
//! Without root, or without the Python peers, it skips with a message; under `CI=true` it fails.

use std::path::Path;
use std::process::Command;

use bauxite_sys::root_or_skip;

mod peers;

use peers::Implementation::{Cyclone, Ros2FastDds};

fn run(out: &Path) -> serde_json::Value {
    let status = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["eval", "bridge", "--quick", "--rmw", "rustdds,cyclonedds,ros2-fastdds", "--out"])
        .arg(out)
        .status()
        .expect("run bauxite eval bridge");
    assert!(status.success(), "bauxite eval bridge --quick failed: {status}");
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

fn f(run: &serde_json::Value, key: &str) -> f64 {
    run[key].as_f64().unwrap_or_else(|| panic!("{key} in {run}"))
}

fn p95(run: &serde_json::Value) -> f64 {
    run["critical_latency_ms"]["p95"].as_f64().unwrap_or_else(|| panic!("critical_latency_ms.p95 in {run}"))
}

/// The bridge's critical stream goes to its critical subscriber alone: what crosses the slow
/// subscriber's link is the noncritical copies (at most 10 of 30 Hz, about 3 kB per published
/// sample) and control traffic. Multicast onto the segment, the critical stream crossed it
/// too: about 8 kB more per published sample at strong's 23 % loss (from a capture, before RustDDS
/// sent to a single reader by unicast).
fn slow_link_carries_no_critical_stream(run: &serde_json::Value) {
    let bytes = f(run, "slow_link_bytes_per_sample");
    assert!(bytes < 6000.0, "{} bytes per sample toward the slow subscriber: {run}", bytes.round());
}

#[test]
fn quick_evaluation_shows_the_collapse_the_protection_and_the_ablation() {
    if !root_or_skip("quick_evaluation_shows_the_collapse_the_protection_and_the_ablation")
        || !peers::peers_or_skip(
            "quick_evaluation_shows_the_collapse_the_protection_and_the_ablation",
            &[Cyclone, Ros2FastDds],
        )
    {
        return;
    }
    let out = std::env::temp_dir().join(format!("bauxite-eval-test-{}", std::process::id()));
    let summary = run(&out);
    let runs = summary["runs"].as_array().expect("runs");
    // The shape.
    for r in runs {
        for key in ["name", "implementation", "bridge", "classifier", "severity", "publisher_rate_hz"] {
            assert!(!r[key].is_null(), "{key} missing in {r}");
        }
        for key in ["publisher_rate_sd_hz", "noncritical_rate_hz", "transitions"] {
            assert!(r[key].is_number(), "{key} missing in {r}");
        }
        for key in ["p50", "p95", "p99"] {
            assert!(r["critical_latency_ms"][key].is_number(), "critical_latency_ms.{key} missing in {r}");
        }
    }
    let of = |name: &str, implementation: &str| {
        runs.iter()
            .find(|r| r["name"] == name && r["implementation"] == implementation)
            .unwrap_or_else(|| panic!("no {name} run for {implementation}"))
    };
    let implementations = ["rustdds", "cyclonedds", "ros2-fastdds"];
    for i in implementations {
        // 1. Backpressure without the bridge: the harness's check below (two implementations).
        // 2. The bridge at every severity.
        for severity in ["clean", "mild", "moderate", "strong"] {
            let r = of(&format!("bridge-{severity}"), i);
            assert!(f(r, "publisher_rate_hz") >= 29.0, "{i} bridge-{severity}: publisher {r}");
            assert!(p95(r) < 50.0, "{i} bridge-{severity}: critical p95 {r}");
            assert_eq!(r["critical_path_fifo"], true, "{i} bridge-{severity}: not under SCHED_FIFO: {r}");
            slow_link_carries_no_critical_stream(r);
        }
        // 3. The ablation: the same critical protection, without the classifier's rate cut.
        let (bridge, ablation) = (of("bridge-moderate", i), of("ablation-moderate", i));
        assert!(p95(ablation) < 50.0, "{i}: ablation critical p95 {ablation}");
        slow_link_carries_no_critical_stream(ablation);
        // The rate the bridge writes (its own reports): what the slow subscriber receives also
        // carries the fades and its implementation's fragment reassembly (Cyclone's
        // BEST_EFFORT reader once took 2.5 of the ablation's 10 Hz).
        let (classified, static_split) =
            (f(bridge, "noncritical_forwarded_hz"), f(ablation, "noncritical_forwarded_hz"));
        assert!(static_split >= 8.0, "{i}: the ablation forwards {static_split} Hz, not 10");
        assert!(classified < 8.0, "{i}: the classifier never cut the moderate path ({classified} Hz): {bridge}");
        // The 3 Hz itself where the demotion is sustained (see the module's comment).
        let strong = f(of("bridge-strong", i), "noncritical_forwarded_hz");
        assert!(strong <= 3.5, "{i}: the classifier's noncritical rate at strong is {strong} Hz, not 3 Hz");
    }
    // The harness's own verdicts on the checks.
    let checks = summary["checks"].as_array().expect("checks");
    for c in checks {
        eprintln!("{}: {} ({})", c["name"], c["pass"], c["detail"]);
    }
    assert_eq!(checks.len(), 4, "{checks:?}");
    for c in &checks[..3] {
        assert_eq!(c["pass"], true, "{}: {}", c["name"], c["detail"]);
    }
    // The failover check (issue 31) is judged only when `bridge-failover` runs, which the
    // quick set leaves out (`crates/cli/tests/bridge.rs` takes a hot standby through three
    // takeovers with margins for CI).
    assert_eq!(checks[3]["pass"], serde_json::Value::Null, "{}", checks[3]["detail"]);
    for file in ["summary.md", "charts/rustdds-critical-latency.png", "charts/cyclonedds-classifier-state.svg"] {
        assert!(out.join(file).exists(), "{file} missing");
    }
    assert!(out.join("cyclonedds/bridge-strong/run.mcap").exists(), "the run's recording");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_flags_are_named_and_nothing_is_created() {
    let out = std::env::temp_dir().join(format!("bauxite-eval-bad-{}", std::process::id()));
    for (flags, expected) in [
        (
            vec!["--rmw", "rustdds,opendds"],
            "--rmw: no implementation `opendds` (known: rustdds, cyclonedds, ros2-fastdds)",
        ),
        (vec!["--rmw", "rustdds,rustdds"], "--rmw: `rustdds` is named twice"),
        (vec!["--scenario", "bridge-awful"], "--scenario: no scenario `bridge-awful`"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["eval", "bridge"])
            .args(&flags)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run bauxite");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flags:?} was accepted");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert!(!out.exists(), "{flags:?} created {}", out.display());
    }
}

//! `bauxite demo --link`: the demo on the userspace link emulator, on a trace and a
//! timeline the test generates (one short trial; needs root), and its bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

use bauxite_sys::root_or_skip;

/// A directory of the test's own, with a trace of 6 Mbit/s (one 1504-byte
/// opportunity every 2 ms, looping) and a timeline that cuts the link to 1.5 Mbit/s
/// at 1 s.
fn link_files(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(bauxite_sys::unique_name(name));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("six.up");
    let lines: String = (1..=500).map(|i| format!("{}\n", i * 2)).collect();
    std::fs::write(&trace, lines).unwrap();
    let timeline = dir.join("drop.yaml");
    std::fs::write(&timeline, "- {at: 1s, rate: 1.5mbit}\n").unwrap();
    (dir, trace, timeline)
}

fn bauxite(args: &[&str], extra: &[&Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bauxite")).args(args).args(extra).output().expect("run bauxite")
}

fn number(v: &serde_json::Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

#[test]
fn a_demo_on_an_emulated_link_reports_excess_over_its_floor_and_its_audit_agrees() {
    if !root_or_skip("a_demo_on_an_emulated_link_reports_excess_over_its_floor_and_its_audit_agrees") {
        return;
    }
    let (dir, trace, timeline) = link_files("demo-link");
    let out = dir.join("out");
    let spec = format!("trace={},queue=100kb", trace.display());
    // 4 s: the drop at 1 s, a second to adapt, two measured.
    let run = bauxite(
        &["demo", "--trials", "1", "--duration", "4", "--link", &spec, "--timeline"],
        &[&timeline, Path::new("--out"), &out],
    );
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("| Critical excess over the link's floor, mean |"), "{stdout}");

    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let link = &summary["link"];
    assert!(link["spec"].as_str().unwrap().contains("timeline="), "{link}");
    assert_eq!((link["drop_at_s"].clone(), link["drops_s"].clone()), (1.0.into(), serde_json::json!([1.0])));
    let (standard, protected) = (&summary["phases"]["standard"], &summary["phases"]["protected"]);
    for (name, phase) in [("standard", standard), ("protected", protected)] {
        let excess = &phase["critical_excess_ms"];
        let [mean, p95, p99, max] = ["mean", "p95", "p99", "max"].map(|k| number(&excess[k], k));
        assert!(0.0 <= mean && mean <= max && p95 <= p99 && p99 <= max, "{name}: {excess}");
        let over = number(&phase["critical_over_10ms_pct"], "critical_over_10ms_pct");
        assert!((0.0..=100.0).contains(&over), "{name}: {over}");
        // Video bytes over what the link offered beyond the other traffic: some, and
        // never more than the link carried (5 % for probes counted as video).
        let utilization = number(&phase["bulk_utilization"], "bulk_utilization");
        assert!(utilization > 0.05 && utilization < 1.05, "{name}: utilization {utilization}");
        let frames = &phase["frame_delay_ms"];
        let (p50, p95) = (number(&frames["p50"], "p50"), number(&frames["p95"], "p95"));
        assert!(0.0 < p50 && p50 <= p95, "{name}: {frames}");
    }
    // Physics, not load: with no shaper the video keeps the modem's 100 KB FIFO full,
    // and messages wait ~530 ms to drain at 1.5 Mbit/s, far above the link's floor.
    let standard_p99 = number(&standard["critical_excess_ms"]["p99"], "standard excess p99");
    assert!(standard_p99 > 100.0, "the standard stack buries critical traffic: {standard_p99} ms");
    assert_eq!(protected["time_to_protect_after_drops_ms"].as_array().map(Vec::len), Some(1), "{protected}");
    assert!(standard.get("time_to_protect_after_drops_ms").is_some_and(|t| t == &serde_json::json!([])));
    for name in ["rates.png", "rates.svg", "critical_latency_floor.png", "critical_latency.png", "summary.md"] {
        assert!(out.join(name).metadata().is_ok_and(|m| m.len() > 0), "{name} written");
    }

    // The audit recomputes every figure from the recording alone, and judges excess.
    for run in summary["runs"].as_array().unwrap() {
        let file = out.join(run["recording"].as_str().unwrap());
        let audit = bauxite(&["audit", "--json"], &[&file]);
        let report: serde_json::Value = serde_json::from_slice(&audit.stdout).expect("audit --json prints JSON");
        assert_eq!(report["summary"], run["summary"], "{}: audit reproduces the live figures", file.display());
        let names: Vec<&str> = report["checks"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
        assert!(names.contains(&"critical excess over the link's floor, p99"), "{names:?}");
    }
    for a in summary["audit"].as_array().unwrap() {
        assert_eq!(a["reproduces_live_figures"], true, "{a}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_bad_link_names_what_and_where_and_creates_nothing() {
    let (dir, trace, timeline) = link_files("demo-link-bad");
    let out = dir.join("out");
    std::fs::write(dir.join("bad.up"), "1\n2\nten\n").unwrap();
    std::fs::write(dir.join("bad.yaml"), "- {at: 1s, rate: 1.5mbit}\n- {at: 2s, jitter: 20s}\n").unwrap();
    let cases = [
        (format!("trace={}", dir.join("bad.up").display()), None, "bad.up:3"),
        ("rate=fast".to_string(), None, "rate=fast"),
        (format!("trace={}", trace.display()), Some(dir.join("bad.yaml")), "bad.yaml:2"),
        (format!("trace={},timeline={}", trace.display(), timeline.display()), Some(timeline.clone()), "not both"),
        ("up=rate=fast,down=rate=1mbit".to_string(), None, "up=: link `rate=fast`"),
        ("rate=1mbit,up=rate=2mbit".to_string(), None, "every key belongs to one"),
    ];
    for (spec, timeline, expected) in cases {
        let mut args = vec!["demo", "--trials", "1", "--duration", "4", "--link", &spec];
        let timeline = timeline.map(|t| t.display().to_string());
        if let Some(t) = &timeline {
            args.extend(["--timeline", t]);
        }
        let run = bauxite(&args, &[Path::new("--out"), &out]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success() && stderr.contains(expected), "{spec} {timeline:?}: {stderr}");
        assert!(!out.exists(), "{spec}: nothing created");
    }
    // `bauxite sim robot` takes the same SPEC and timeline: the same drop.
    let sim_out = dir.join("sim");
    let run = bauxite(
        &["sim", "robot", "--duration", "4", "--link", &format!("trace={}", trace.display()), "--timeline"],
        &[&timeline, Path::new("--out"), &sim_out],
    );
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sim_out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["link"]["drops_s"], serde_json::json!([1.0]));
    // Each way's link (`up=…,down=…`): `--direction down` measures the downlink's trace
    // (about 6 Mbit/s, then 1.5 from the timeline's drop at 1 s), not the uplink's 2 Mbit/s.
    let pair_out = dir.join("sim-pair");
    let pair = format!("up=rate=2mbit,delay=30ms,down=trace={},queue=100kb", trace.display());
    let run = bauxite(
        &["sim", "robot", "--duration", "4", "--direction", "down", "--link", &pair, "--timeline"],
        &[&timeline, Path::new("--out"), &pair_out],
    );
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pair_out.join("summary.json")).unwrap()).unwrap();
    let mean = number(&summary["link"]["mean_capacity_mbps"], "mean_capacity_mbps");
    assert!((2.5..2.8).contains(&mean), "(6 + 3 x 1.5) / 4 Mbit/s: {mean}");
    assert_eq!(summary["link"]["drops_s"], serde_json::json!([1.0]));
    std::fs::remove_dir_all(dir).ok();
}

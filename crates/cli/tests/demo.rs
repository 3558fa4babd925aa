//! `bauxite demo` end to end, one short trial (needs root).

use std::process::Command;

use bauxite_netlab::root_or_skip;

#[test]
fn a_short_demo_writes_its_results_and_shows_the_difference() {
    if !root_or_skip("a_short_demo_writes_its_results_and_shows_the_difference") {
        return;
    }
    let out = std::env::temp_dir().join(bauxite_netlab::unique_name("demo"));
    let run = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["demo", "--trials", "1", "--duration", "10", "--rate", "1.5mbit", "--out"])
        .arg(&out)
        .output()
        .expect("run bauxite demo");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).contains("| Critical latency, mean |"));

    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["trials"], 1);
    let (standard, protected) = (&summary["phases"]["standard"], &summary["phases"]["protected"]);
    for phase in [standard, protected] {
        for key in ["mean", "p50", "p95", "p99", "max"] {
            assert!(phase["critical_latency_ms"][key].is_number(), "{key} in {phase}");
        }
        for key in ["critical_loss_pct", "bulk_throughput_mbps", "bulk_dropped_packets", "video_fps"] {
            assert!(phase[key].is_number(), "{key} in {phase}");
        }
        assert!(phase["update_delay_ms"]["mean"].is_number() && phase["update_delay_ms"]["p99"].is_number());
    }
    assert!(protected["time_to_protect_ms"].is_number() && standard.get("time_to_protect_ms").is_none());
    let (plain, shaped) = (
        standard["critical_latency_ms"]["mean"].as_f64().unwrap(),
        protected["critical_latency_ms"]["mean"].as_f64().unwrap(),
    );
    assert!(plain > 100.0, "the standard stack buries critical traffic: {plain} ms");
    assert!(shaped < 1.5, "Bauxite keeps it fast: {shaped} ms");
    assert_eq!(protected["critical_loss_pct"], 0.0);
    for name in ["summary.md", "telemetry.json"] {
        assert!(out.join(name).exists(), "{name}");
    }

    // Every channel of both recordings validates against its schema.
    for phase in ["phase1.mcap", "phase2.mcap"] {
        let recording = bauxite_telemetry::read(&out.join("trial-01").join(phase)).unwrap();
        assert_eq!(recording.damage, None, "{phase}");
        for topic in [
            "/bauxite/lanes/critical/latency",
            "/bauxite/lanes/critical/counters",
            "/bauxite/shaper/state",
            "/bauxite/video/frames",
            "/bauxite/demo/phase",
        ] {
            let schema = recording.schemas.get(topic).unwrap_or_else(|| panic!("{phase}: no channel {topic}"));
            let validator = jsonschema::validator_for(schema).unwrap();
            let mut n = 0;
            for m in recording.on(topic) {
                assert!(validator.is_valid(&m.value), "{phase} {topic}: {}", m.value);
                n += 1;
            }
            assert!(n > 0, "{phase}: {topic} is empty");
        }
    }
    std::fs::remove_dir_all(out).ok();
}

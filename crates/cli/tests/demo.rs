//! `bauxite demo` end to end, one short trial (needs root).

use std::process::Command;

use bauxite_netlab::testbed::ROBOT_IFACE;
use bauxite_sys::root_or_skip;

/// One demo at a time: each loads both cores with its traffic, and a demo's latency
/// figures are what the first test checks.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_short_demo_writes_its_results_and_shows_the_difference() {
    if !root_or_skip("a_short_demo_writes_its_results_and_shows_the_difference") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(bauxite_sys::unique_name("demo"));
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
    // The two bounds sit far apart on purpose. The standard stack's figure is physics: the
    // modem's 100 KB FIFO drains at 1.5 Mbit/s in 533 ms. Bauxite's is 0.1–0.6 ms on a quiet
    // machine; 10 ms leaves room for a loaded 2-core machine (a wake-up can wait a CFS
    // period, ~12 ms on 2 CPUs, but a mean over hundreds of messages cannot be dominated
    // by a few such waits).
    assert!(plain > 100.0, "the standard stack buries critical traffic: {plain} ms");
    assert!(shaped < 10.0, "Bauxite keeps it fast: {shaped} ms");
    assert_eq!(protected["critical_loss_pct"], 0.0);
    let from_drop = protected["critical_latency_from_drop_ms"]["p99"].as_f64().unwrap();
    // 0.2 ms on a quiet machine; an unknown rate gives hundreds of milliseconds here (the
    // FIFO fills before any estimate can follow the drop), so 20 ms still tells the two apart
    // while leaving a p99's room for scheduling delays on a loaded 2-core machine.
    assert!(from_drop < 20.0, "with the rate known, protected from the drop itself: p99 {from_drop} ms");
    for name in [
        "summary.md",
        "telemetry.json",
        "foxglove_layout.json",
        "critical_latency.png",
        "critical_latency.svg",
        "update_delay.png",
        "update_delay.svg",
        "bulk_throughput.png",
        "bulk_throughput.svg",
    ] {
        assert!(out.join(name).metadata().is_ok_and(|m| m.len() > 0), "{name} written");
    }

    // Every channel of both recordings validates against its schema, and the
    // channels the demo promises are all there.
    let mut fields_by_topic = std::collections::BTreeMap::new();
    for phase in ["phase1.mcap", "phase2.mcap"] {
        let recording = bauxite_telemetry::read(&out.join("trial-01").join(phase)).unwrap();
        assert_eq!(recording.damage, None, "{phase}");
        for topic in [
            "/bauxite/demo/run",
            "/bauxite/demo/phase",
            "/bauxite/lanes/critical/latency",
            "/bauxite/lanes/critical/counters",
            "/bauxite/lanes/bulk/counters",
            "/bauxite/control/update_delay",
            "/bauxite/shaper/state",
            "/bauxite/video/frames",
        ] {
            assert!(recording.on(topic).next().is_some(), "{phase}: {topic} is empty");
        }
        for (topic, schema) in &recording.schemas {
            let validator = jsonschema::validator_for(schema).unwrap();
            for m in recording.on(topic) {
                assert!(validator.is_valid(&m.value), "{phase} {topic}: {}", m.value);
            }
            let mut fields: Vec<String> = schema["properties"].as_object().unwrap().keys().cloned().collect();
            // Fields of nested types (`lanes[:]{…}.drop_probability`), by their own name.
            for def in schema["$defs"].as_object().into_iter().flat_map(|d| d.values()) {
                let nested = def["properties"].as_object().into_iter().flat_map(|p| p.keys());
                fields.extend(nested.map(|f| format!(".{f}")));
            }
            fields_by_topic.insert(topic.clone(), fields);
        }
    }

    // The Foxglove layout reads only channels and fields the recordings have.
    let layout: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("foxglove_layout.json")).unwrap()).unwrap();
    for (id, panel) in layout["configById"].as_object().unwrap() {
        let paths: Vec<&str> = match panel.get("topicPath") {
            Some(topic) => vec![topic.as_str().unwrap()],
            None => panel["paths"].as_array().unwrap().iter().map(|p| p["value"].as_str().unwrap()).collect(),
        };
        for path in paths {
            let (topic, field) = path.split_once('.').unwrap_or((path, ""));
            let fields = fields_by_topic.get(topic).unwrap_or_else(|| panic!("{id}: no channel {topic}"));
            // `lanes[:]{droppable==true}.drop_probability`: `lanes` here, and
            // `drop_probability` in the type of its items.
            let (head, nested) = match field.split_once('[') {
                Some((head, rest)) => (head, rest.rsplit_once('.').map(|(_, leaf)| format!(".{leaf}"))),
                None => (field, None),
            };
            assert!(head.is_empty() || fields.iter().any(|f| f == head), "{id}: {topic} has no field {field}");
            if let Some(leaf) = nested {
                assert!(fields.contains(&leaf), "{id}: {topic} has no nested field {field}");
            }
        }
    }

    // Phase 3: the audit recomputes each recording's figures exactly as the live run
    // reported them, and its verdict is its checks': phase 1 fails (the FIFO's hundreds
    // of milliseconds are physics), exit 1. Phase 2's latency checks hold the profile's
    // targets (p99 2 ms), which a quiet machine meets with a wide margin but a loaded
    // 2-core one can miss by a scheduler period; so the test holds phase 2 to what
    // cannot depend on load (no critical loss, a complete recording, a verdict that
    // agrees with its checks and its exit code), and the mean bound above.
    let mut verdicts = std::collections::BTreeMap::new();
    for run in summary["runs"].as_array().unwrap() {
        let file = out.join(run["recording"].as_str().unwrap());
        let audit = Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["audit", "--json"])
            .arg(&file)
            .output()
            .expect("run bauxite audit");
        let report: serde_json::Value = serde_json::from_slice(&audit.stdout).expect("audit --json prints JSON");
        assert_eq!(report["summary"], run["summary"], "{}: audit reproduces the live figures", file.display());
        let checks = report["checks"].as_array().expect("checks");
        let all_hold = checks.iter().all(|c| c["pass"] == true);
        assert_eq!(report["pass"], all_hold, "{}: the verdict is its checks': {report}", file.display());
        assert_eq!(audit.status.code(), Some(if all_hold { 0 } else { 1 }), "{}", file.display());
        if run["phase"] == 2 {
            let loss = checks.iter().find(|c| c["name"] == "critical loss").expect("a loss check");
            assert_eq!(loss["pass"], true, "{}: no critical message lost: {report}", file.display());
        } else {
            assert_eq!(report["pass"], false, "{}: the standard stack fails the targets", file.display());
        }
        verdicts.insert(run["recording"].as_str().unwrap().to_string(), report["pass"].clone());
    }

    // The demo ran phase 3 itself: the same verdicts, the same figures.
    for a in summary["audit"].as_array().unwrap() {
        assert_eq!(a["reproduces_live_figures"], true, "{a}");
        assert_eq!(Some(&a["pass"]), verdicts.get(a["recording"].as_str().unwrap()), "{a}");
    }
    assert!(std::fs::read_to_string(out.join("summary.md")).unwrap().contains("## Phase 3: audit"));

    // A recording cut in half is audited as far as it goes, and fails.
    let whole = std::fs::read(out.join("trial-01/phase2.mcap")).unwrap();
    let cut = out.join("cut.mcap");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let audit = Command::new(env!("CARGO_BIN_EXE_bauxite")).arg("audit").arg(&cut).output().unwrap();
    let text = String::from_utf8_lossy(&audit.stdout);
    assert_eq!(audit.status.code(), Some(1), "{text}");
    assert!(text.contains("damaged") && text.contains("messages covering"), "{text}");
    assert!(text.contains("[FAIL] recording complete"), "{text}");

    std::fs::remove_dir_all(out).ok();
}

/// `--direction down`: the steering and the video go base → robot, phase 2 shapes the
/// robot's ingress; the steering is protected from the far end's FIFO, the audit of phase
/// 2's recording reproduces its figures, and the shaper's state recorded is the ingress
/// device's.
#[test]
fn a_downlink_demo_protects_the_steering_from_the_robots_ingress() {
    if !root_or_skip("a_downlink_demo_protects_the_steering_from_the_robots_ingress") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(bauxite_sys::unique_name("demo-down"));
    let run = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["demo", "--direction", "down", "--trials", "1", "--duration", "10", "--rate", "1.5mbit", "--out"])
        .arg(&out)
        .output()
        .expect("run bauxite demo");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let markdown = String::from_utf8_lossy(&run.stdout);
    assert!(markdown.contains("on the robot's ingress (the streams go base → robot)"), "{markdown}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["direction"], "down");
    let (standard, protected) = (&summary["phases"]["standard"], &summary["phases"]["protected"]);
    let p99 = |phase: &serde_json::Value| phase["critical_latency_ms"]["p99"].as_f64().unwrap();
    // The same bounds and reasons as the uplink's demo test above: physics for the FIFO,
    // a loaded machine's room for Bauxite (0.1 ms on a quiet one).
    assert!(p99(standard) > 100.0, "the far FIFO buries the steering: {standard}");
    assert!(p99(protected) < 20.0, "ingress shaping keeps it short: {protected}");
    assert_eq!(protected["critical_loss_pct"], 0.0);
    assert!(protected["bulk_dropped_packets"].as_u64().unwrap() > 0, "the download was dropped early: {protected}");
    // The recording holds what the live run measured (whether it passes the 2 ms target
    // depends on the machine's load, as the uplink's does).
    let phase2 = summary["audit"].as_array().unwrap().iter().find(|a| a["recording"] == "trial-01/phase2.mcap");
    let reproduced = phase2.map(|a| &a["reproduces_live_figures"]);
    assert_eq!(reproduced, Some(&serde_json::Value::Bool(true)), "{}", summary["audit"]);
    let recording = bauxite_telemetry::read(&out.join("trial-01/phase2.mcap")).unwrap();
    let states: Vec<&serde_json::Value> = recording.on("/bauxite/shaper/state").map(|m| &m.value).collect();
    let device = bauxite_shaper::ingress::device_name(bauxite_netlab::testbed::ROBOT_IFACE);
    assert!(
        !states.is_empty() && states.iter().all(|s| s["iface"] == device.as_str()),
        "phase 2 recorded the ingress device's shaper: {:?}",
        states.first()
    );
    std::fs::remove_dir_all(out).ok();
}

/// `--direction both`: the seed's streams go up and the operator's go down at once, over
/// a link that drops both ways; one `bauxite up` with `direction: both` protects each
/// way's critical streams, and each way's results, recordings and audits stand alone in
/// `up/` and `down/`.
#[test]
fn a_demo_both_ways_protects_each_way_at_once() {
    if !root_or_skip("a_demo_both_ways_protects_each_way_at_once") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(bauxite_sys::unique_name("demo-both"));
    let run = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["demo", "--direction", "both", "--trials", "1", "--duration", "10", "--rate", "1.5mbit", "--out"])
        .arg(&out)
        .output()
        .expect("run bauxite demo");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let markdown = String::from_utf8_lossy(&run.stdout);
    assert!(markdown.contains("## Uplink") && markdown.contains("## Downlink"), "{markdown}");
    let both: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(both["direction"], "both");
    let profile = std::fs::read_to_string(out.join("trial-01/profile.yaml")).unwrap();
    assert!(profile.contains("direction: both"), "one shaper for both ways: {profile}");
    for (way, device) in [("up", ROBOT_IFACE.to_string()), ("down", bauxite_shaper::ingress::device_name(ROBOT_IFACE))]
    {
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(way).join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["direction"], way);
        assert_eq!(both[way], summary, "the top summary holds each way's");
        let (standard, protected) = (&summary["phases"]["standard"], &summary["phases"]["protected"]);
        let p99 = |phase: &serde_json::Value, figure: &str| phase[figure]["p99"].as_f64().unwrap();
        // The bounds and reasons of the one-way tests above: each way's FIFO buries its
        // critical stream after the drop, and Bauxite keeps it short with the other way
        // loaded too. (Later the uplink's FIFO may hold less than alone: its video's ACKs
        // wait in the downlink's FIFO, which slows its window; 87 ms at p99 was seen.)
        let buried = p99(standard, "critical_latency_from_drop_ms");
        assert!(buried > 100.0, "{way}: the FIFO buries the critical streams: {standard}");
        assert!(p99(protected, "critical_latency_ms") < 20.0, "{way}: Bauxite keeps them short: {protected}");
        assert_eq!(protected["critical_loss_pct"], 0.0, "{way}");
        for audit in summary["audit"].as_array().unwrap() {
            assert_eq!(audit["reproduces_live_figures"], true, "{way}: {audit}");
        }
        let recording = bauxite_telemetry::read(&out.join(way).join("trial-01/phase2.mcap")).unwrap();
        let states: Vec<&serde_json::Value> = recording.on("/bauxite/shaper/state").map(|m| &m.value).collect();
        assert!(
            !states.is_empty() && states.iter().all(|s| s["iface"] == device.as_str()),
            "{way}: phase 2 recorded the shaper of {device}: {:?}",
            states.first()
        );
        assert!(out.join(way).join("critical_latency.png").exists(), "{way}: its charts");
    }
    std::fs::remove_dir_all(out).ok();
}

#[test]
fn an_interrupted_demo_removes_its_namespaces_and_daemons() {
    if !root_or_skip("an_interrupted_demo_removes_its_namespaces_and_daemons") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(bauxite_sys::unique_name("demo-int"));
    let mut demo = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["demo", "--trials", "1", "--duration", "10", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start bauxite demo");
    // The demo's namespaces are named `bx-<its pid>-…`.
    let ours = format!("bx-{}-", demo.id());
    let namespaces = || {
        let list = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
        String::from_utf8_lossy(&list.stdout).lines().filter(|l| l.starts_with(&ours)).count()
    };
    // Wait until phase 1 is under way, then Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while namespaces() < 3 {
        assert!(std::time::Instant::now() < deadline, "the demo built no testbed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    #[allow(unsafe_code)]
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(demo.id() as i32, libc::SIGINT);
    }
    let status = demo.wait().expect("the demo exits");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut demo.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "an interrupted demo reports failure");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(namespaces(), 0, "the interrupted demo left namespaces behind");
    std::fs::remove_dir_all(out).ok();
}

#[test]
fn a_killed_demo_keeps_what_it_recorded() {
    if !root_or_skip("a_killed_demo_keeps_what_it_recorded") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = std::env::temp_dir().join(bauxite_sys::unique_name("demo-kill"));
    let mut demo = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["demo", "--trials", "1", "--duration", "10", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start bauxite demo");
    let recording = out.join("trial-01/phase1.mcap");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !recording.exists() {
        assert!(std::time::Instant::now() < deadline, "no recording started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Three and a half seconds into phase 1: three one-second chunks are closed.
    std::thread::sleep(std::time::Duration::from_millis(3500));
    demo.kill().expect("SIGKILL the demo");
    demo.wait().unwrap();
    // A killed process cleans nothing up: remove its namespaces (named `bx-<pid>-…`).
    let ours = format!("bx-{}-", demo.id());
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for name in String::from_utf8_lossy(&list.stdout).lines().filter_map(|l| l.split_whitespace().next()) {
        if name.starts_with(&ours) {
            Command::new("ip").args(["netns", "del", name]).status().unwrap();
        }
    }

    let read = bauxite_telemetry::read(&recording).expect("a killed demo's recording is still MCAP");
    let latencies: Vec<_> = read.on("/bauxite/lanes/critical/latency").collect();
    assert!(read.on("/bauxite/demo/run").next().is_some(), "the run's description survived");
    let span_s = latencies.last().map_or(0, |m| m.time_ns - latencies[0].time_ns) as f64 / 1e9;
    assert!(latencies.len() > 100 && span_s > 1.5, "{} samples over {span_s} s survived", latencies.len());
    let audit = Command::new(env!("CARGO_BIN_EXE_bauxite")).arg("audit").arg(&recording).output().unwrap();
    let text = String::from_utf8_lossy(&audit.stdout);
    assert_eq!(audit.status.code(), Some(1), "cut short, it cannot pass: {text}");
    std::fs::remove_dir_all(out).ok();
}

//! `bauxite sim` end to end: a short run writes its files; bad flags write nothing.

use std::path::PathBuf;
use std::process::{Command, Output};

fn out_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bauxite-sim-cli-{name}-{}", std::process::id()))
}

fn bauxite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bauxite")).args(args).output().expect("run bauxite")
}

#[test]
fn a_short_run_writes_its_tables_summaries_and_charts() {
    let out = out_dir("run");
    let _ = std::fs::remove_dir_all(&out);
    let run = bauxite(&[
        "sim",
        "run",
        "--scheduler",
        "fq-codel",
        "--dscp",
        "off",
        "--followers",
        "4",
        "--bg-mbps",
        "12",
        "--duration",
        "3",
        "--png",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("M events/s"), "{stdout}");
    let classes = std::fs::read_to_string(out.join("classes.csv")).unwrap();
    assert!(classes.starts_with(
        "family,scheduler,dscp,followers,bg_mbps,class,flows,tx_packets,rx_packets,loss_pct,delay_ms,jitter_ms,\
         throughput_mbps,jain_throughput,jain_inverse_delay"
    ));
    assert!(classes.contains("\nrun,fq-codel,off,4,12,control,4,"));
    assert!(std::fs::read_to_string(out.join("flows.csv")).unwrap().lines().count() > 18);
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["runs"], 1);
    assert!(summary["events_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["comparison"][0]["scheduler"], "fq-codel");
    assert!(std::fs::read_to_string(out.join("summary.md")).unwrap().contains("| FQ-CoDel | off |"));
    for chart in ["control_delay", "control_loss", "heatmap_delay", "heatmap_loss"] {
        for ext in ["png", "svg"] {
            let file = out.join(format!("{chart}.{ext}"));
            assert!(file.metadata().is_ok_and(|m| m.len() > 0), "{} written", file.display());
        }
    }
    let heat = std::fs::read_to_string(out.join("heatmap_delay.svg")).unwrap();
    assert!(heat.contains("FQ-CoDel") && heat.contains("telemetry"), "the heatmap labels its rows and columns");
    // Fairness prints Jain's index with two decimals (FQ-CoDel shares control
    // exactly among the four followers).
    let fairness = std::fs::read_to_string(out.join("fairness_throughput.svg")).unwrap();
    assert!(fairness.contains("\n1.00\n"), "Jain indices with two decimals, no unit");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_flags_name_the_flag_and_write_nothing() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--scheduler", "wfq"], "--scheduler"),
        (&["run", "--scheduler", "fifo", "--bottleneck-mbps", "0"], "--bottleneck-mbps"),
        (&["run", "--scheduler", "fifo", "--duration", "-5"], "--duration"),
        (&["run", "--scheduler", "fifo", "--duration", "0"], "--duration"),
        (&["run", "--scheduler", "fifo", "--bg-mbps", "0"], "--bg-mbps"),
        (&["run", "--scheduler", "fifo", "--followers", "0"], "--followers"),
        (&["study", "--family", "everything"], "--family"),
        (&["study", "--seeds", "0"], "--seeds"),
        // Values that used to hang the simulator (a background interval that rounds
        // to 0 ps), overflow its clock (a delay saturated to u64::MAX ns), exhaust
        // memory or wrap the source ports.
        (&["run", "--scheduler", "fifo", "--bg-mbps", "1e11"], "--bg-mbps"),
        (&["run", "--scheduler", "fifo", "--bottleneck-delay-ms", "1e300"], "--bottleneck-delay-ms"),
        (&["run", "--scheduler", "fifo", "--access-delay-ms", "1e20"], "--access-delay-ms"),
        (&["run", "--scheduler", "fifo", "--followers", "4294967295"], "--followers"),
        (&["run", "--scheduler", "fifo", "--followers", "16001"], "--followers"),
        (&["run", "--scheduler", "fifo", "--bg-flows", "8001"], "--bg-flows"),
        (&["study", "--follower-counts", "4,100000"], "--followers"),
        (&["run", "--scheduler", "fifo", "--limit-mode", "per-queue"], "--limit-mode"),
        // Several seeds without start jitter would repeat one run and call it an interval.
        (&["study", "--seeds", "3", "--start-jitter-ms", "0"], "--start-jitter-ms"),
        (&["study", "--shard", "3/3"], "--shard"),
        (&["study", "--shard", "1"], "--shard"),
        (&["study", "--family", "compare", "--schedulers", "fifo", "--shard", "0/5"], "--shard"),
    ];
    for (i, (args, flag)) in cases.iter().enumerate() {
        let out = out_dir(&format!("bad-{i}"));
        let _ = std::fs::remove_dir_all(&out);
        let mut full = vec!["sim"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let run = bauxite(&full);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{args:?} should fail");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} created {}", out.display());
    }
}

/// `sim study --shard K/N` then `sim merge`: the same files, byte for byte, as the
/// unsharded study (summary.json differs only in wall-clock figures).
#[test]
fn sharded_study_merges_into_the_unsharded_files() {
    let root = out_dir("shards");
    let _ = std::fs::remove_dir_all(&root);
    let study = |extra: &[&str], dir: &std::path::Path| {
        let mut args = vec!["sim", "study", "--family", "compare", "--schedulers", "fifo,fq-codel", "--seeds", "2"];
        args.extend_from_slice(&["--duration", "2", "--out", dir.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let run = bauxite(&args);
        assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
        String::from_utf8_lossy(&run.stdout).into_owned()
    };
    study(&[], &root.join("whole"));
    let shards: Vec<PathBuf> = (0..3).map(|k| root.join(format!("shard{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let stdout = study(&["--shard", &format!("{k}/3")], dir);
        assert!(stdout.contains(&format!("shard {k}/3: runs ")), "{stdout}");
    }
    let merged = root.join("merged");
    let mut args = vec!["sim", "merge"];
    args.extend(shards.iter().rev().map(|d| d.to_str().unwrap()));
    args.extend_from_slice(&["--out", merged.to_str().unwrap(), "--png"]);
    let run = bauxite(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for file in ["flows.csv", "classes.csv", "summary.md", "control_delay.svg", "heatmap_loss.svg"] {
        let whole = std::fs::read(root.join("whole").join(file)).unwrap();
        assert!(std::fs::read(merged.join(file)).unwrap() == whole, "{file} differs");
    }
    // Charts are SVG unless --png asks for PNG too (the merge did, the study did not).
    assert!(merged.join("control_delay.png").metadata().is_ok_and(|m| m.len() > 0), "merge --png writes PNG");
    assert!(!root.join("whole").join("control_delay.png").exists(), "a study without --png writes no PNG");
    let run = bauxite(&["sim", "merge", shards[0].to_str().unwrap(), "--out", merged.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && stderr.contains("missing [1/3, 2/3]"), "{stderr}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn sim_robot_writes_the_demos_figures_for_a_generated_trace() {
    let out = out_dir("robot");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // 2 Mbit/s as a mahimahi trace: one 1504-byte opportunity every 6 ms.
    let trace = out.join("two.up");
    std::fs::write(&trace, (1..=1000).map(|k| format!("{}\n", 6 * k)).collect::<String>()).unwrap();
    let link = format!("trace={},queue=50kb,delay=10ms", trace.display());
    let results = out.join("results");
    let run = bauxite(&["sim", "robot", "--link", &link, "--duration", "6", "--out", results.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["protected_rate"], "auto");
    assert!((summary["link"]["mean_capacity_mbps"].as_f64().unwrap() - 2.005).abs() < 0.01, "{}", summary["link"]);
    for phase in ["standard", "protected"] {
        let p = &summary["phases"][phase];
        for key in ["critical_latency_ms", "critical_excess_ms", "frame_delay_ms", "update_delay_ms"] {
            assert!(p[key].is_object(), "{phase}.{key}");
        }
        for key in ["critical_over_10ms_pct", "bulk_utilization", "bulk_throughput_mbps", "video_fps"] {
            assert!(p[key].is_number(), "{phase}.{key}: {}", p[key]);
        }
    }
    for file in
        ["summary.md", "timeseries.csv", "rates.png", "rates.svg", "critical_latency.png", "critical_latency.svg"]
    {
        assert!(results.join(file).metadata().is_ok_and(|m| m.len() > 0), "{file} written");
    }
    // Each 100 ms bin names what `rate: auto`'s law was doing: a 2 Mbit/s link under a
    // base rate of 10 is a drop at the start, drained once measured; then the link's
    // rate is held, and probed upwards now and then.
    let csv = std::fs::read_to_string(results.join("timeseries.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",auto_phase"), "{csv}");
    let phases: Vec<&str> = lines.map(|line| line.rsplit(',').next().unwrap()).collect();
    assert_eq!(phases.len(), 60, "one row per bin");
    let known = ["silent", "stopped", "draining", "repaying", "knee", "doubling", "holding", "resting"];
    assert!(phases.iter().all(|p| known.contains(p)), "{phases:?}");
    assert!(
        phases[..10].contains(&"draining") && phases.contains(&"holding") && phases.contains(&"knee"),
        "{phases:?}"
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn sim_robot_refuses_a_bad_link_rate_or_sweep_before_writing_anything() {
    let out = out_dir("robot-bad");
    let _ = std::fs::remove_dir_all(&out);
    let out_arg = out.to_str().unwrap();
    for (args, says) in [
        (&["--link", "bandwidth=3mbit"][..], "--link: link: unknown key `bandwidth`"),
        (&["--link", "trace=/nonexistent/up"][..], "/nonexistent/up"),
        (&["--rate", "fast"][..], "--rate"),
        (&["--sweep", "auto_rate.nope=1,2"][..], "--sweep: auto_rate.nope=1: no such key"),
        (&["--link", "rate=1mbit", "--link", "rate=2mbit"][..], "several links need --sweep"),
        (&["--seeds", "0"][..], "--seeds"),
        (&["--video-rate", "lots"][..], "--video-rate"),
        (&["--video-rate", "20gbit"][..], "--video-rate: 20gbit is not between 64kbit and 10gbit"),
    ] {
        let mut all = vec!["sim", "robot"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--out", out_arg]);
        let run = bauxite(&all);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success() && stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
}

/// `--video-rate` sets the encoder's rate: under a 2 Mbit/s link the video sends what it
/// has, far above it the video takes what the standard stack's TCP gets of the link.
#[test]
fn sim_robot_video_rate_sets_what_the_encoder_offers() {
    let out = out_dir("robot-video-rate");
    let _ = std::fs::remove_dir_all(&out);
    let video = |rate: &str| {
        let results = out.join(rate);
        let args = ["sim", "robot", "--link", "rate=2mbit", "--rate", "1.5mbit", "--duration", "8"];
        let run = bauxite(&[&args[..], &["--video-rate", rate, "--out", results.to_str().unwrap()]].concat());
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(results.join("summary.json")).unwrap()).unwrap();
        summary["phases"]["standard"]["bulk_throughput_mbps"].as_f64().unwrap()
    };
    let (slow, elastic) = (video("1mbit"), video("100mbit"));
    assert!((0.8..=1.1).contains(&slow), "a 1 Mbit/s encoder sent {slow} Mbit/s");
    assert!(elastic >= 1.4 * slow, "a 100 Mbit/s encoder behind a 2 Mbit/s link sent {elastic} Mbit/s ({slow} at 1)");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn sim_robot_sweeps_an_auto_rate_key_over_links_into_a_frontier() {
    let out = out_dir("robot-sweep");
    let _ = std::fs::remove_dir_all(&out);
    let run = bauxite(&[
        "sim",
        "robot",
        "--sweep",
        "auto_rate.delay_threshold=5ms,10ms",
        "--link",
        "rate=1.5mbit",
        "--link",
        "rate=3mbit,delay=20ms",
        "--duration",
        "6",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["key"], "auto_rate.delay_threshold");
    let points = summary["points"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> =
        points.iter().map(|p| (p["value"].as_str().unwrap(), p["link"].as_str().unwrap())).collect();
    assert_eq!(
        pairs,
        [
            ("5ms", "rate=1.5mbit"),
            ("5ms", "rate=3mbit,delay=20ms"),
            ("10ms", "rate=1.5mbit"),
            ("10ms", "rate=3mbit,delay=20ms")
        ]
    );
    assert!(points.iter().all(|p| p["bulk_throughput_mbps"].as_f64().unwrap() > 0.0));
    for file in ["summary.md", "frontier.png", "frontier.svg"] {
        assert!(out.join(file).metadata().is_ok_and(|m| m.len() > 0), "{file} written");
    }
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn sim_agree_compares_runs_of_one_link_and_refuses_anything_else() {
    let out = out_dir("agree");
    let _ = std::fs::remove_dir_all(&out);
    let dir = |name: &str| out.join(name).to_str().unwrap().to_string();
    let (auto, known, other_link, longer) = (dir("auto"), dir("known"), dir("other-link"), dir("longer"));
    for args in [
        &["--seeds", "3", "--duration", "8", "--out", &auto][..],
        &["--seeds", "3", "--duration", "8", "--rate", "1.5mbit", "--out", &known][..],
        &["--seeds", "1", "--duration", "8", "--link", "rate=2mbit", "--out", &other_link][..],
        // The same drop, two seconds more of the slow link after it.
        &["--seeds", "1", "--duration", "10", "--out", &longer][..],
    ] {
        let run = bauxite(&[&["sim", "robot"][..], args].concat());
        assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
    }
    let agree = |dirs: &[&str]| bauxite(&[&["sim", "agree"][..], dirs].concat());

    // A run agrees with itself; a shaper told the rate protects at once, auto-rate
    // about 0.25 s after the drop: far beyond 50 ms.
    let same = agree(&[&auto, &auto, &auto, &known]);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    let table = String::from_utf8_lossy(&same.stdout);
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("| Bauxite |")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows[0].ends_with("excess yes, video yes, protect yes |"), "{table}");
    assert!(rows[1].contains("protect no"), "{table}");

    std::fs::write(out.join("corrupt.json"), "{\"runs\": [").unwrap();
    std::fs::create_dir_all(out.join("corrupt")).unwrap();
    std::fs::rename(out.join("corrupt.json"), out.join("corrupt/summary.json")).unwrap();
    let (corrupt, missing) = (dir("corrupt"), dir("missing"));
    let (auto, other_link, longer) = (auto.as_str(), other_link.as_str(), longer.as_str());
    for (dirs, says) in [
        (&[auto][..], "required"),
        (&[auto, auto, auto][..], "3 directories given: they come in pairs"),
        (&[auto, &missing][..], "missing/summary.json"),
        (&[&corrupt, auto][..], "corrupt/summary.json: not a summary.json"),
        (&[auto, other_link][..], "is not the simulator's (rate=2mbit"),
        (&[auto, longer][..], "mean capacity 25.750 Mbit/s)"),
    ] {
        let run = agree(dirs);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success() && stderr.contains(says), "{dirs:?}: {stderr}");
        assert!(run.stdout.is_empty(), "{dirs:?}: nothing printed");
    }
    std::fs::remove_dir_all(&out).ok();
}

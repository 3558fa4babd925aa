//! `bauxite audit` on hand-made recordings: figures, verdicts and bad input.

use std::path::PathBuf;

use bauxite_demo::{AuditError, audit};
use bauxite_telemetry::Recorder;
use bauxite_telemetry::messages::{LatencySample, LostMessage, RunInfo, StreamRate, UpdateDelay, VideoFrame, topic};

const START: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bauxite-audit-{}-{name}.mcap", std::process::id()))
}

fn info() -> RunInfo {
    RunInfo {
        trial: 1,
        phase: 2,
        protected: true,
        duration_ns: 10_000 * MS,
        drop_at_ns: 2_000 * MS,
        link_before_bps: 50_000_000,
        link_after_bps: 1_500_000,
        critical_streams: vec![StreamRate { port: 7401, rate_hz: 100.0 }],
        shaper_rate: Some("1.5mbit".into()),
        target_critical_latency_mean_ms: 1.5,
        target_critical_latency_p99_ms: 2.0,
        target_update_delay_mean_ms: 10.0,
        target_critical_loss_pct: 0.0,
    }
}

/// A 10 s run with a message every 10 ms of latency `latency(i)` ms; with `lose`,
/// every 50th is lost.
fn recording(name: &str, latency: impl Fn(u64) -> u64, lose: bool) -> PathBuf {
    let path = temp(name);
    let mut rec = Recorder::create(&path).unwrap();
    let run = rec.channel::<RunInfo>(&topic("demo", "run")).unwrap();
    let samples = rec.channel::<LatencySample>(&topic("lanes", "critical/latency")).unwrap();
    let lost = rec.channel::<LostMessage>(&topic("lanes", "critical/lost")).unwrap();
    let updates = rec.channel::<UpdateDelay>(&topic("control", "update_delay")).unwrap();
    rec.write(run, START, &info()).unwrap();
    for i in 0..1000u64 {
        let sent = START + i * 10 * MS;
        if lose && i % 50 == 49 {
            rec.write(lost, sent, &LostMessage { lane: "critical".into(), stream: 7401, seq: i as u32 }).unwrap();
            continue;
        }
        let received = sent + latency(i) * MS;
        let sample =
            LatencySample { lane: "critical".into(), stream: 7401, seq: i as u32, sent_ns: sent, latency_ms: 0.0 };
        rec.write(samples, received, &sample).unwrap();
        rec.write(updates, received + 4 * MS, &UpdateDelay { seq: i as u32, sent_ns: sent, delay_ms: 0.0 }).unwrap();
    }
    rec.finish().unwrap();
    path
}

#[test]
fn figures_come_from_the_recording_after_the_settling_second() {
    // 300 ms before the drop, 1 ms after it: only the settled window (from 3 s) counts.
    let path = recording("pass", |i| if i < 200 { 300 } else { 1 }, false);
    let report = audit(&path).unwrap();
    assert_eq!(report.summary.critical_messages, 700, "from 3 s (drop at 2 s + 1 s) to 10 s");
    assert_eq!(report.summary.critical_latency_ms["mean"], 1.0);
    assert_eq!(report.summary.update_delay_ms["mean"], 5.0, "latency 1 ms + 4 ms to the tick");
    assert!(report.pass, "{report}");
    std::fs::remove_file(path).ok();
}

#[test]
fn missed_targets_fail_with_the_failing_checks_named() {
    let path = recording("fail", |i| if i % 10 == 0 { 5 } else { 1 }, true);
    let report = audit(&path).unwrap();
    assert!(!report.pass);
    let failed: Vec<&str> = report.checks.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["critical latency, p99", "critical loss"], "{report}");
    assert!((report.summary.critical_loss_pct - 2.0).abs() < 1e-9);
    std::fs::remove_file(path).ok();
}

#[test]
fn a_window_where_everything_was_lost_fails_every_check() {
    let path = recording("all-lost", |_| 1, false);
    // Rewrite it with every message after the drop lost.
    let mut rec = Recorder::create(&path).unwrap();
    let run = rec.channel::<RunInfo>(&topic("demo", "run")).unwrap();
    let lost = rec.channel::<LostMessage>(&topic("lanes", "critical/lost")).unwrap();
    rec.write(run, START, &info()).unwrap();
    for i in 0..1000u64 {
        rec.write(lost, START + i * 10 * MS, &LostMessage { lane: "critical".into(), stream: 7401, seq: i as u32 })
            .unwrap();
    }
    rec.finish().unwrap();
    let report = audit(&path).unwrap();
    assert_eq!((report.summary.critical_messages, report.summary.critical_received), (700, 0));
    assert!(report.checks.iter().all(|c| !c.pass), "nothing arrived, nothing passes: {report}");
    assert!(report.to_string().contains("mean — "), "no latency figures are printed: {report}");
    std::fs::remove_file(path).ok();
}

#[test]
fn bad_files_are_errors_that_name_the_problem() {
    let not_mcap = temp("garbage");
    std::fs::write(&not_mcap, b"not a recording").unwrap();
    let e = audit(&not_mcap).unwrap_err().to_string();
    assert!(e.contains("not an MCAP file"), "{e}");

    let no_run = temp("norun");
    let mut rec = Recorder::create(&no_run).unwrap();
    let frames = rec.channel::<VideoFrame>(&topic("video", "frames")).unwrap();
    rec.write(frames, START, &VideoFrame { frame: 0, key: true, bytes: 1, latency_ms: 1.0 }).unwrap();
    rec.finish().unwrap();
    assert!(matches!(audit(&no_run), Err(AuditError::NoRun { messages: 1, .. })));

    // A channel whose messages do not have the shape audit expects.
    let odd = temp("odd");
    let mut rec = Recorder::create(&odd).unwrap();
    let run = rec.channel::<RunInfo>(&topic("demo", "run")).unwrap();
    let wrong = rec.channel::<VideoFrame>(&topic("lanes", "critical/latency")).unwrap();
    rec.write(run, START, &info()).unwrap();
    rec.write(wrong, START + MS, &VideoFrame { frame: 0, key: true, bytes: 1, latency_ms: 1.0 }).unwrap();
    rec.finish().unwrap();
    let e = audit(&odd).unwrap_err();
    assert!(
        matches!(&e, AuditError::Malformed { topic, time_ns, .. }
            if topic == "/bauxite/lanes/critical/latency" && *time_ns == START + MS),
        "{e}"
    );
    for p in [not_mcap, no_run, odd] {
        std::fs::remove_file(p).ok();
    }
}

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
        link: None,
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
        let sample = LatencySample {
            lane: "critical".into(),
            stream: 7401,
            seq: i as u32,
            sent_ns: sent,
            latency_ms: 0.0,
            floor_ns: None,
            head_of_line_ns: None,
        };
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
    assert_eq!(report.summary.critical_latency_ms.mean, 1.0);
    assert_eq!(report.summary.update_delay_ms.mean, 5.0, "latency 1 ms + 4 ms to the tick");
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
    rec.write(frames, START, &VideoFrame { frame: 0, key: true, bytes: 1, latency_ms: 1.0, sent_ns: None }).unwrap();
    rec.finish().unwrap();
    assert!(matches!(audit(&no_run), Err(AuditError::NoRun { messages: 1, .. })));

    // A channel whose messages do not have the shape audit expects.
    let odd = temp("odd");
    let mut rec = Recorder::create(&odd).unwrap();
    let run = rec.channel::<RunInfo>(&topic("demo", "run")).unwrap();
    let wrong = rec.channel::<VideoFrame>(&topic("lanes", "critical/latency")).unwrap();
    rec.write(run, START, &info()).unwrap();
    rec.write(wrong, START + MS, &VideoFrame { frame: 0, key: true, bytes: 1, latency_ms: 1.0, sent_ns: None })
        .unwrap();
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

/// The top-level records of a recording's data section: (opcode, start, end), ending with
/// the data end record.
fn data_section_records(bytes: &[u8]) -> Vec<(u8, usize, usize)> {
    let mut records = Vec::new();
    let mut at = 8; // the magic
    loop {
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        records.push((bytes[at], at, at + 9 + len));
        if bytes[at] == 0x0F {
            return records;
        }
        at += 9 + len;
    }
}

const CHUNK: u8 = 0x06;

/// Audits `bytes` written to a file: whether it passed, and the damage reported.
fn audit_bytes(name: &str, bytes: &[u8]) -> (bool, String) {
    let path = temp(name);
    std::fs::write(&path, bytes).unwrap();
    let outcome = match audit(&path) {
        Ok(report) => (report.pass, format!("{report}")),
        // Unreadable (exit 2) never passes either.
        Err(e) => (false, e.to_string()),
    };
    std::fs::remove_file(path).ok();
    outcome
}

/// `bytes` with the data end record's CRC set to 0 ("not stored"), so that only the
/// checks that do not rely on it can catch what was done to the data section.
fn without_data_crc(mut bytes: Vec<u8>) -> Vec<u8> {
    let (_, start, _) = *data_section_records(&bytes).last().unwrap();
    bytes[start + 9..start + 13].fill(0);
    bytes
}

#[test]
fn a_bit_flip_in_any_chunk_is_damage_and_never_passes() {
    let path = recording("flips", |_| 1, false);
    let intact = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let (pass, report) = audit_bytes("flips-intact", &intact);
    assert!(pass, "the intact recording passes: {report}");

    let chunks: Vec<(usize, usize)> =
        data_section_records(&intact).into_iter().filter(|r| r.0 == CHUNK).map(|(_, s, e)| (s, e)).collect();
    assert!(chunks.len() >= 10, "a chunk per second of the 10 s run: {}", chunks.len());
    let mut flips = 0;
    for (start, end) in chunks {
        // The opcode, the length, the chunk's times, sizes and CRC, then its records.
        let header = [0, 1, 9, 17, 25, 33, 37].map(|at| start + at);
        let records = (1..8).map(|k| start + 41 + k * (end - start - 41) / 8);
        for at in header.into_iter().chain(records).chain([end - 1]) {
            for bit in [0, 5] {
                let mut flipped = intact.clone();
                flipped[at] ^= 1 << bit;
                let (pass, report) = audit_bytes("flip", &flipped);
                assert!(!pass, "bit {bit} of byte {at} (chunk at {start}) flipped and the audit passed: {report}");
                assert!(
                    report.contains("corrupt") || report.contains("truncated") || report.contains("not an MCAP"),
                    "byte {at}: the damage is reported as damage: {report}"
                );
                flips += 1;
            }
        }
    }
    assert!(flips >= 300, "{flips} flips tried");
}

#[test]
fn a_duplicated_data_section_is_damage_even_without_its_crc() {
    let path = recording("dup-section", |_| 1, false);
    let intact = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let records = data_section_records(&intact);
    let (_, data_end, _) = *records.last().unwrap();
    // Everything between the magic and the data end record, twice.
    let doubled = [&intact[..data_end], &intact[8..data_end], &intact[data_end..]].concat();
    for (what, bytes) in [("with its CRC", doubled.clone()), ("CRC zeroed", without_data_crc(doubled))] {
        let (pass, report) = audit_bytes("dup-section", &bytes);
        assert!(!pass, "{what}: {report}");
        assert!(report.contains("corrupt") && report.contains("[FAIL] recording intact"), "{what}: {report}");
        assert!(report.contains("\n  2001 messages covering"), "{what}: the copy is not counted: {report}");
    }
}

#[test]
fn a_duplicated_chunk_is_damage_even_without_the_data_crc() {
    let path = recording("dup-chunk", |_| 1, false);
    let intact = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let chunks: Vec<_> = data_section_records(&intact).into_iter().filter(|r| r.0 == CHUNK).collect();
    for (_, start, end) in [chunks[0], chunks[chunks.len() / 2], chunks[chunks.len() - 1]] {
        let doubled = [&intact[..end], &intact[start..end], &intact[end..]].concat();
        for (what, bytes) in [("with the data CRC", doubled.clone()), ("CRC zeroed", without_data_crc(doubled))] {
            let (pass, report) = audit_bytes("dup-chunk", &bytes);
            assert!(!pass, "chunk at {start} twice, {what}: {report}");
            assert!(report.contains("[FAIL] recording intact"), "chunk at {start} twice, {what}: {report}");
        }
    }
    // A chunk cut out instead, with the data CRC zeroed: only the summary can tell.
    let (_, start, end) = chunks[chunks.len() / 2];
    let (pass, report) = audit_bytes("cut-chunk", &without_data_crc([&intact[..start], &intact[end..]].concat()));
    assert!(!pass && report.contains("corrupt: summary"), "chunk at {start} cut out: {report}");
}

#[test]
fn a_truncated_recording_is_audited_up_to_its_last_chunk_and_fails_completeness() {
    let path = recording("cut", |_| 1, false);
    let intact = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let cut = temp("cut-half");
    std::fs::write(&cut, &intact[..intact.len() / 2]).unwrap();
    let report = audit(&cut).unwrap();
    std::fs::remove_file(cut).ok();
    assert!(report.damage.as_deref().is_some_and(|d| d.starts_with("truncated")), "{report}");
    assert!(report.messages > 500, "the chunks before the cut are read: {report}");
    let failed: Vec<&str> = report.checks.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["recording complete (seconds missing)"], "{report}");
}

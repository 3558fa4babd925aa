//! Recordings round-trip, validate against their schemas, and survive being cut short.

use std::path::PathBuf;

use bauxite_core::{DaemonState, LaneSnapshot, ShaperSnapshot};
use bauxite_telemetry::messages::{LaneCounters, LatencySample, PhaseMark, VideoFrame, topic};
use bauxite_telemetry::{Recorder, read};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bauxite-telemetry-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("run.mcap")
}

/// Five seconds of every kind of message, 100 latency samples per second.
fn record(recorder: &mut Recorder, seconds: u64) {
    let latency = recorder.channel::<LatencySample>(&topic("lanes", "critical/latency")).unwrap();
    let counters = recorder.channel::<LaneCounters>(&topic("lanes", "critical/counters")).unwrap();
    let shaper = recorder.channel::<ShaperSnapshot>(&topic("shaper", "state")).unwrap();
    let video = recorder.channel::<VideoFrame>(&topic("video", "frames")).unwrap();
    let phase = recorder.channel::<PhaseMark>(&topic("demo", "phase")).unwrap();
    recorder
        .write(phase, 0, &PhaseMark { phase: 2, event: "link 50 Mbit/s".into(), link_rate_bps: Some(50_000_000) })
        .unwrap();
    for i in 0..seconds * 100 {
        let t = i * 10_000_000;
        let sample = LatencySample {
            lane: "critical".into(),
            stream: 7401,
            seq: i as u32,
            sent_ns: t,
            latency_ms: 0.1,
            floor_ns: None,
            head_of_line_ns: None,
        };
        recorder.write(latency, t, &sample).unwrap();
        if i % 10 == 0 {
            let c =
                LaneCounters { lane: "critical".into(), sent: i, received: i, not_received: 0, bitrate_bps: 42_400.0 };
            recorder.write(counters, t, &c).unwrap();
            let bulk = LaneSnapshot {
                name: "bulk".into(),
                droppable: true,
                drop_probability: 0.1,
                early_drops: i,
                ..Default::default()
            };
            let s = ShaperSnapshot {
                daemon: DaemonState::Running,
                congested: i > 300,
                link_rate_bps: 1_500_000,
                lanes: vec![bulk],
                ..ShaperSnapshot::down("eth0")
            };
            recorder.write(shaper, t, &s).unwrap();
            let f =
                VideoFrame { frame: i as u32 / 3, key: i % 300 == 0, bytes: 14_000, latency_ms: 30.0, sent_ns: None };
            recorder.write(video, t, &f).unwrap();
        }
    }
}

#[test]
fn every_message_validates_against_its_channels_schema() {
    let path = temp("schemas");
    let mut recorder = Recorder::create(&path).unwrap();
    record(&mut recorder, 5);
    recorder.finish().unwrap();

    let recording = read(&path).unwrap();
    assert_eq!(recording.damage, None);
    assert_eq!(recording.messages.len(), 1 + 500 + 3 * 50);
    assert_eq!(recording.schemas.len(), 5, "{:?}", recording.schemas.keys());
    for (topic, schema) in &recording.schemas {
        let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{topic}: bad schema: {e}"));
        let mut n = 0;
        for m in recording.on(topic) {
            assert!(validator.is_valid(&m.value), "{topic}: {} fails {schema}", m.value);
            n += 1;
        }
        assert!(n > 0, "{topic} has messages");
        // The schema is strict: a message with a missing field would fail.
        let mut broken = recording.on(topic).next().unwrap().value.clone();
        let key = broken.as_object().unwrap().keys().next().unwrap().clone();
        broken.as_object_mut().unwrap().remove(&key);
        assert!(!validator.is_valid(&broken), "{topic} without `{key}` must fail");
    }
    let times: Vec<u64> = recording.on("/bauxite/lanes/critical/latency").map(|m| m.time_ns).collect();
    assert_eq!(times[1] - times[0], 10_000_000, "log times are the events' own times");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn a_killed_writer_leaves_everything_up_to_the_last_chunk_readable() {
    let path = temp("killed");
    let mut recorder = Recorder::create(&path).unwrap();
    record(&mut recorder, 5);
    // What is on disk now is what a SIGKILL would leave: no summary, no footer.
    let snapshot = std::fs::read(&path).unwrap();
    let cut = path.with_file_name("cut.mcap");
    std::fs::write(&cut, &snapshot).unwrap();
    drop(recorder);

    let recording = read(&cut).unwrap();
    let latencies = recording.on("/bauxite/lanes/critical/latency").count();
    assert!(latencies >= 400, "at most the last second is lost: {latencies} of 500 samples readable");
    assert!(recording.damage.is_some(), "the missing end is reported");

    // Cut in the middle of a chunk: what precedes it is read, the rest reported, no panic.
    let half = path.with_file_name("half.mcap");
    std::fs::write(&half, &snapshot[..snapshot.len() / 2]).unwrap();
    let recording = read(&half).unwrap();
    assert!(recording.damage.is_some());
    assert!(recording.messages.len() < 651);

    let junk = path.with_file_name("junk.mcap");
    std::fs::write(&junk, b"this is not a recording").unwrap();
    assert!(read(&junk).unwrap_err().to_string().contains("not an MCAP file"));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn a_stamp_far_ahead_does_not_hold_back_the_chunks_after_it() {
    let path = temp("ahead");
    let mut recorder = Recorder::create(&path).unwrap();
    // A mark stamped five seconds ahead, written first, as a planned event would be.
    let phase = recorder.channel::<PhaseMark>(&topic("demo", "phase")).unwrap();
    let ahead = PhaseMark { phase: 2, event: "link drops".into(), link_rate_bps: Some(1_500_000) };
    recorder.write(phase, 5_000_000_000, &ahead).unwrap();
    record(&mut recorder, 4);
    let snapshot = std::fs::read(&path).unwrap();
    let cut = path.with_file_name("cut.mcap");
    std::fs::write(&cut, &snapshot).unwrap();
    drop(recorder);
    let latencies = read(&cut).unwrap().on("/bauxite/lanes/critical/latency").count();
    assert!(latencies >= 300, "at most the last second is lost: {latencies} of 400 samples readable");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

//! The seed's workload on an uncongested testbed (needs root): every stream arrives
//! complete and the control loop consumes each correction within one tick.

use std::time::Duration;

use bauxite_netlab::workload::{RunningWorkload, WorkloadEvent, WorkloadSpec};
use bauxite_netlab::{ChainOptions, ChainTestbed, Summary, root_or_skip};

#[test]
fn the_workload_arrives_complete_on_a_fast_link() {
    if !root_or_skip("the_workload_arrives_complete_on_a_fast_link") {
        return;
    }
    let tb = ChainTestbed::create(&ChainOptions::default()).expect("testbed");
    let spec = WorkloadSpec::default();
    let (tap, live) = std::sync::mpsc::channel();
    let running = RunningWorkload::start(&tb, &spec, Some(tap)).expect("start the workload");
    std::thread::sleep(Duration::from_secs(3));
    let result = running.stop(Duration::from_millis(300));

    for ((stream, arrivals), sent) in spec.streams.iter().zip(&result.arrivals).zip(&result.sent) {
        let expected = (stream.rate_hz * 3.0) as u32;
        assert!(sent.abs_diff(expected) <= 2, "{}: sent {sent}, expected about {expected}", stream.name);
        assert_eq!(arrivals.len() as u32, *sent, "{}: nothing lost on a fast link", stream.name);
        let latency = Summary::of(&arrivals.iter().map(|a| a.latency_ms()).collect::<Vec<_>>());
        // Uncongested: milliseconds at worst (a busy 2-core machine schedules late),
        // where a saturated link gives hundreds.
        assert!(latency.p99 < 20.0, "{}: {latency}", stream.name);
    }
    assert!(result.video.skipped == 0 && result.video.sent >= 88, "{:?}", result.video);
    assert_eq!(result.frames.len() as u32, result.video.sent, "every frame delivered");

    // Every correction is consumed once, at the first 100 Hz tick after it arrives.
    let corrections = &result.arrivals[0];
    assert!(
        result.updates.len() + 1 >= corrections.len(),
        "{} updates for {} corrections",
        result.updates.len(),
        corrections.len()
    );
    for update in &result.updates {
        let arrival = corrections.iter().find(|a| a.header.seq == update.seq).expect("consumed corrections arrived");
        let wait_ms = update.tick_ns as f64 / 1e6 - arrival.received_ns as f64 / 1e6;
        assert!((-0.5..12.0).contains(&wait_ms), "correction {} waited {wait_ms} ms for a 10 ms tick", update.seq);
        assert_eq!(update.sent_ns, arrival.header.sent_ns, "the consumed correction's own send time");
    }
    let delay = Summary::of(&result.updates.iter().map(|u| u.delay_ms()).collect::<Vec<_>>());
    assert!(delay.max < 12.0, "update delay {delay}");
    assert!(result.updates.windows(2).all(|w| w[1].seq > w[0].seq), "each correction consumed once, in order");

    // The tap saw every measurement as it happened, exactly once.
    let (mut messages, mut frames, mut updates) = (vec![0usize; spec.streams.len()], 0, 0);
    for event in live.try_iter() {
        match event {
            WorkloadEvent::Message { stream, arrival } => {
                assert!(result.arrivals[stream].contains(&arrival), "a tapped arrival is in the result");
                messages[stream] += 1;
            }
            WorkloadEvent::Frame(_) => frames += 1,
            WorkloadEvent::Update(_) => updates += 1,
        }
    }
    assert_eq!(messages, result.arrivals.iter().map(Vec::len).collect::<Vec<_>>());
    assert_eq!((frames, updates), (result.frames.len(), result.updates.len()));
}

//! The bridge forwards bytes as they came: same payload, same data representation (here
//! big-endian CDR and XCDR2, which a decoding bridge on a little-endian host would rewrite), and
//! the publisher's source timestamp. RustDDS on both sides, in this process, over loopback.

use std::time::{Duration, Instant};

use bauxite_bridge::raw::{RawAdapter, RawSample};
use bauxite_bridge::{Bridge, dds};
use futures::StreamExt;
use rustdds::bytes::Bytes;
use rustdds::{RepresentationIdentifier, Timestamp, TopicKind};

const CONFIG: &str = "\
dds: {domain_id: 64, interfaces: [127.0.0.1]}
topics:
  - {name: Raw, type: RawType, ros2: false, critical: RawOut, noncritical: RawSlow}
classifier: {enabled: false}
";

#[test]
fn payload_representation_and_source_time_pass_through_unchanged() {
    let config = bauxite_bridge::parse(CONFIG, "passthrough.yaml".as_ref()).unwrap();
    let bridge = Bridge::start(config.clone()).unwrap();
    let p = dds::participant(&config.dds).unwrap();
    let qos = dds::reader_qos(bauxite_bridge::config::Reliability::Reliable, 16);
    let topic = |name: &str| p.create_topic(name.into(), "RawType".into(), &qos, TopicKind::NoKey).unwrap();
    let writer = p
        .create_publisher(&qos)
        .unwrap()
        .create_datawriter_no_key::<RawSample, RawAdapter>(
            &topic("Raw"),
            Some(dds::critical_writer_qos(16, 16, Duration::from_secs(1))),
        )
        .unwrap();
    let reader = p
        .create_subscriber(&qos)
        .unwrap()
        .create_datareader_no_key::<RawSample, RawAdapter>(&topic("RawOut"), None)
        .unwrap();
    // Samples come to this thread through a channel, with their source timestamps.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stream = reader.async_sample_stream();
        futures::executor::block_on(async {
            while let Some(Ok(s)) = stream.next().await {
                let ts = s.sample_info().source_timestamp();
                if tx.send((s.into_value(), ts)).is_err() {
                    return;
                }
            }
        })
    });
    let hello = || RawSample { representation: RepresentationIdentifier::CDR_LE, payload: Bytes::from_static(&[0xff]) };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "nothing came through the bridge in 30 s");
        bauxite_bridge::raw::write(&writer, hello(), None).unwrap();
        if rx.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let hello_bytes = hello().payload;

    // Issue 31: the shared-buffer path, from an empty payload to a 1 MB one (800 fragments).
    let pattern = |size: usize| (0..size).map(|i| (i * 7 % 253) as u8).collect::<Vec<u8>>();
    let samples = [
        (RepresentationIdentifier::CDR_BE, vec![0, 0, 0, 42, 0xde, 0xad, 0xbe, 0xef]),
        (RepresentationIdentifier::CDR2_LE, vec![7, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
        (RepresentationIdentifier::CDR_LE, (0..=255).collect()),
        (RepresentationIdentifier::CDR_LE, Vec::new()),
        (RepresentationIdentifier::CDR_LE, vec![0x5a]),
        (RepresentationIdentifier::CDR_LE, pattern(64 * 1024)),
        (RepresentationIdentifier::CDR_LE, pattern(1024 * 1024)),
    ];
    let stamp = Timestamp::now();
    for (rep, bytes) in &samples {
        let s = RawSample { representation: *rep, payload: Bytes::from(bytes.clone()) };
        bauxite_bridge::raw::write(&writer, s, Some(stamp)).unwrap();
    }
    let mut got = Vec::new();
    while got.len() < samples.len() {
        let (s, ts) = rx.recv_timeout(Duration::from_secs(10)).expect("a forwarded sample within 10 s");
        if s.payload != hello_bytes {
            got.push((s, ts));
        }
    }
    for (i, (sample, ts)) in got.iter().enumerate() {
        assert_eq!(sample.representation, samples[i].0, "sample {i}");
        assert!(
            sample.payload.as_ref() == samples[i].1.as_slice(),
            "sample {i}: {} B differ: got {} B {:?}",
            samples[i].1.len(),
            sample.payload.len(),
            &sample.payload[..sample.payload.len().min(8)]
        );
        assert_eq!(*ts, Some(stamp), "sample {i}: the source timestamp is the publisher's");
    }
    // Idle, the bridge sleeps: its threads (and this test's) use a few percent of a core at most.
    let cpu = || bauxite_sys::ProcStat::read(std::process::id()).unwrap().cpu_time();
    let before = cpu();
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu() - before;
    assert!(used < Duration::from_millis(300), "{used:?} of CPU in 2 idle seconds: something spins");
    let status = bridge.stop().unwrap();
    assert!(status.mode_changes.is_empty(), "{:?}", status.mode_changes);
}

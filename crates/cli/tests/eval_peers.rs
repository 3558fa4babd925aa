//! Seed 004's evaluation peers (`crates/eval/peers/`, protocol in its README) on loopback:
//! Cyclone DDS (PyPI `cyclonedds`) and a real ROS 2 node (rclpy on Fast DDS 2.14, from the
//! venv `scripts/install-deps` makes), each publishing to itself, to the other, and through
//! `bauxite bridge`; and the backpressure each implementation's collapsing writer shows when
//! its RELIABLE reader stops acknowledging. Each test has its own DDS domain.
//!
//! Without the Python packages these tests skip with a message; under `CI=true` they fail.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod common;
mod peers;

use common::output_within;

use bauxite_sys::Netns;
use peers::Implementation::{self, Cyclone, Ros2FastDds};
use peers::{Peer, arrivals, attempts, peers_or_skip};

/// How long a peer may take to start (Python, rclpy and a DDS participant) on a loaded
/// 2-core machine; unloaded it takes about a second.
const START: Duration = Duration::from_secs(30);
const HZ: f64 = 30.0;
/// Seconds each stream runs: discovery (up to 7 s, see `check_stream`) and then samples.
const RUN_S: u32 = 9;

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// Where a peer runs: a network namespace, and the address of the interface it is confined to
/// (`--interface`; `None`: the peers' loopback default).
#[derive(Clone, Copy)]
struct Place<'a> {
    ns: &'a Netns,
    interface: Option<&'a str>,
}

/// The test's own namespace, on loopback.
fn here() -> Place<'static> {
    static CURRENT: std::sync::OnceLock<Netns> = std::sync::OnceLock::new();
    Place { ns: CURRENT.get_or_init(Netns::current), interface: None }
}

/// A peer of `implementation` at `place` with `args` plus the place's `--interface`.
fn peer_at(place: Place, name: &str, implementation: Implementation, args: &[&str]) -> Peer {
    let mut args = args.to_vec();
    if let Some(address) = place.interface {
        args.extend(["--interface", address]);
    }
    Peer::spawn_in(place.ns, &format!("{implementation:?} {name}"), implementation, &args)
}

/// A subscriber of `implementation` on `topic`, ready; it runs until SIGTERM (60 s at most).
fn subscriber(implementation: Implementation, domain: &str, topic: &str) -> Peer {
    subscriber_at(here(), implementation, domain, topic)
}

fn subscriber_at(place: Place, implementation: Implementation, domain: &str, topic: &str) -> Peer {
    let args = ["sub", "--domain", domain, "--topic", topic, "--duration", "60"];
    let mut sub = peer_at(place, "subscriber", implementation, &args);
    sub.wait_ready(START);
    sub
}

/// Publishes LaserScans at 30 Hz for `seconds` from `publisher` to `subscriber` (already
/// ready) on `rt/scan`, and checks the stream the protocol promises.
fn stream(publisher: Implementation, domain: &str, seconds: u32, sub: Peer) {
    stream_from(here(), publisher, domain, seconds, sub);
}

/// As `stream`, with the publisher at `place`; returns how many samples arrived.
fn stream_from(place: Place, publisher: Implementation, domain: &str, seconds: u32, sub: Peer) -> usize {
    let duration = seconds.to_string();
    let args = ["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--duration", &duration];
    let mut publisher_peer = peer_at(place, "publisher", publisher, &args);
    publisher_peer.wait_ready(START);
    let published = attempts(&publisher_peer.finish(Duration::from_secs(u64::from(seconds) + 30)));
    // The publisher waits for acknowledgements before it exits; the subscriber may still be
    // printing the last of them.
    std::thread::sleep(Duration::from_millis(500));
    let received = arrivals(&sub.terminate(Duration::from_secs(15)));
    let what = format!("{publisher:?} publisher on domain {domain}");
    check_stream(&what, &published, &received, f64::from(seconds));
    received.len()
}

fn check_stream(what: &str, published: &[(u64, u64, bool, u64)], received: &[(u64, u64, u64)], seconds: f64) {
    let n = published.len() as u64;
    let seqs: Vec<u64> = published.iter().map(|p| p.0).collect();
    assert_eq!(seqs, (0..n).collect::<Vec<_>>(), "one attempt per sequence number, in order");
    assert!(published.iter().all(|p| p.2), "every write succeeded with a reader that keeps up");
    // A 30 Hz timer: most attempts are one period apart. The median gap shows the period
    // whatever the load does to single ticks (a tick the process was starved through is
    // skipped, leaving one 67 ms gap).
    let mut gaps_ms: Vec<f64> = published.windows(2).map(|w| (w[1].1 - w[0].1) as f64 / 1e6).collect();
    gaps_ms.sort_by(f64::total_cmp);
    let median_gap = gaps_ms[gaps_ms.len() / 2];
    assert!((30.0..=37.0).contains(&median_gap), "median gap between attempts {median_gap:.2} ms, not 33.3");
    // Never more attempts than the run's ticks (+1 for a tick at each end); at least 60% of
    // them: starved ticks are skipped, and a loaded run measured 79% (peers niced under cargo,
    // started alongside other tests' peers).
    let ticks = seconds * HZ;
    assert!(n as f64 >= 0.6 * ticks && n as f64 <= ticks + 2.0, "{n} attempts in {seconds} s at 30 Hz");
    let span_s = (published[published.len() - 1].1 - published[0].1) as f64 / 1e9;
    assert!((0.95 * (n - 1) as f64 / HZ..seconds + 0.5).contains(&span_s), "{n} attempts over {span_s:.2} s");

    // Reliable delivery: every sample from the first that arrived to the last published, once,
    // in order, carrying the stamp its attempt reported. Discovery may cost the first samples
    // (the protocol's publisher does not wait for readers): well under a second unloaded, but
    // Fast DDS repeats its announcement only every 3 s after its first few, so a match missed
    // under load costs 3 s (measured: 2.4-3.0 s in about half the loaded runs between two Fast
    // DDS peers). The last 2 s of the run must arrive, which allows two misses in a 9 s run.
    let first = received.first().unwrap_or_else(|| panic!("nothing arrived of {n} samples")).0;
    let discovery_s = (published[first as usize].1 - published[0].1) as f64 / 1e9;
    let allowed_s = seconds - 2.0;
    assert!(discovery_s <= allowed_s, "the first sample to arrive was {first} of {n}, {discovery_s:.1} s in");
    let got: Vec<u64> = received.iter().map(|r| r.0).collect();
    assert_eq!(got, (first..n).collect::<Vec<_>>(), "samples lost, repeated or reordered");
    for &(seq, stamp_ns, recv_ns) in received {
        assert_eq!(stamp_ns, published[seq as usize].1, "sample {seq}: header.stamp is the attempt's t_ns");
        assert!(recv_ns >= stamp_ns, "sample {seq} arrived before it was stamped");
    }
    let mut latency_ms: Vec<f64> = received.iter().map(|r| (r.2 - r.1) as f64 / 1e6).collect();
    latency_ms.sort_by(f64::total_cmp);
    let p50 = latency_ms[latency_ms.len() / 2];
    eprintln!(
        "{what}: {n} attempts (median gap {median_gap:.2} ms), {} arrived, latency p50 {p50:.3} ms",
        received.len()
    );
    // Loopback delivery takes well under a millisecond; 20 ms only tells "prompt" from queued
    // behind something on a loaded machine.
    assert!(p50 < 20.0, "latency p50 {p50:.2} ms");
}

/// Each peer script is self-contained (`bauxite eval bridge` embeds them one by one), so the
/// protocol's shared part is a copy in each: the copies must not drift apart.
#[test]
fn the_protocols_shared_part_is_the_same_in_every_peer_script() {
    let shared = |script: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/peers").join(script);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let begin =
            text.find("# --- The protocol's shared part").unwrap_or_else(|| panic!("{script}: no start marker"));
        let end =
            text.find("# --- End of the protocol's shared part").unwrap_or_else(|| panic!("{script}: no end marker"));
        text[begin..end].to_string()
    };
    let cyclone = shared("cyclonedds_peer.py");
    assert!(cyclone.contains("def emit(") && cyclone.contains("def wait_for_interface("), "{cyclone}");
    assert_eq!(cyclone, shared("ros2_peer.py"), "the shared part differs between the peer scripts");
}

/// Bad flags are refused before any DDS entity exists, with exit status 2 and a message
/// naming the flag (the peers parse before they start DDS, so this takes an interpreter start).
#[test]
fn bad_flags_are_refused_naming_the_flag() {
    if !peers_or_skip("eval_peers_bad_flags", &[Cyclone, Ros2FastDds]) {
        return;
    }
    let cases: [(Implementation, &[&str], &str); 6] = [
        (Ros2FastDds, &["pub", "--topic", "rt/scan"], "pub needs --duration"),
        (Ros2FastDds, &["sub", "--topic", "scan", "--duration", "1"], "--topic scan: a ROS 2 topic's DDS name"),
        (Ros2FastDds, &["pub", "--topic", "rt/scan", "--duration", "1", "--hz", "0"], "--hz 0.0: must be positive"),
        (
            Cyclone,
            &["sub", "--topic", "rt/scan", "--duration", "1", "--count", "3"],
            "--count: not a flag of the protocol",
        ),
        (
            Cyclone,
            &["sub", "--topic", "rt/scan", "--max-samples", "3"],
            "--max-samples: not a flag of the bridge tests",
        ),
        (Cyclone, &["pub", "--topic", "rt/scan", "--duration", "1", "--depth", "0"], "--depth 0: must be positive"),
    ];
    for (implementation, args, message) in cases {
        let (python, script) = implementation.command();
        let out = output_within(Command::new(&python).arg(&script).args(args), Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{implementation:?} {args:?}: {err}");
        assert!(err.contains(message), "{implementation:?} {args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{implementation:?} {args:?} printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Checks the Cyclone peer's LaserScan codec against Cyclone's own (de)serializer; run with the
/// script's path as its argument, it prints how many scans it compared.
const CYCLONE_CODEC_CHECK: &str = r#"
import array, importlib.util, sys
from cyclonedds.idl._support import Endianness
spec = importlib.util.spec_from_file_location("peer", sys.argv[1])
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
idl = peer.LaserScan_.__idl__

def fields(s):
    h = s.header
    scalars = (s.angle_min, s.angle_max, s.angle_increment, s.time_increment, s.scan_time, s.range_min, s.range_max)
    return (h.stamp.sec, h.stamp.nanosec, h.frame_id, scalars, list(s.ranges), list(s.intensities))

checked = 0
for n in (0, 1, 3, 1081):
    for seq in (0, 7, 123, 4567, 1234567):
        scan = peer.laser_scan(seq, 1_790_000_000_123_456_789 + seq, array.array("f", [0.1 * i for i in range(n)]), 1 / 30)
        generic = idl.serialize(scan)
        assert scan.serialize() == generic, f"{n} ranges, seq {seq}: the bytes differ from Cyclone's"
        decoded = peer.LaserScan_.deserialize(generic)
        assert type(decoded.ranges) is array.array, type(decoded.ranges)
        assert fields(decoded) == fields(idl.deserialize(generic)), f"{n} ranges, seq {seq}: decoded differently"
        big = scan.serialize(endianness=Endianness.Big)
        assert big == idl.serialize(scan, endianness=Endianness.Big), "big-endian: not Cyclone's bytes"
        assert fields(peer.LaserScan_.deserialize(big)) == fields(decoded), "big-endian: decoded differently"
        checked += 1
print(f"checked {checked} scans")
"#;

/// The Cyclone peer encodes and decodes its LaserScans by hand, for speed (see the script): the
/// bytes must be Cyclone's own serializer's, little- and big-endian, and a decoded scan must
/// carry every field as Cyclone's deserializer reads it.
#[test]
fn the_cyclone_peers_laser_scan_codec_matches_cyclones_own() {
    if !peers_or_skip("eval_peers_cyclone_codec", &[Cyclone]) {
        return;
    }
    let (python, script) = Cyclone.command();
    let out =
        output_within(Command::new(&python).arg("-c").arg(CYCLONE_CODEC_CHECK).arg(&script), Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the codec check failed: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "checked 20 scans", "{stderr}");
}

#[test]
fn cyclone_publisher_to_cyclone_subscriber_speaks_the_protocol() {
    if peers_or_skip("eval_peers_cyclone_loopback", &[Cyclone]) {
        stream(Cyclone, "80", RUN_S, subscriber(Cyclone, "80", "rt/scan"));
    }
}

#[test]
fn ros2_publisher_to_ros2_subscriber_speaks_the_protocol() {
    if peers_or_skip("eval_peers_ros2_loopback", &[Ros2FastDds]) {
        stream(Ros2FastDds, "81", RUN_S, subscriber(Ros2FastDds, "81", "rt/scan"));
    }
}

/// Both are ROS 2 LaserScans on `rt/scan`: each implementation reads the other's samples.
#[test]
fn ros2_and_cyclone_read_each_others_laser_scans() {
    if !peers_or_skip("eval_peers_cross", &[Cyclone, Ros2FastDds]) {
        return;
    }
    let cyclone_reads = subscriber(Cyclone, "82", "rt/scan");
    let ros2_reads = subscriber(Ros2FastDds, "83", "rt/scan");
    let (ros2_writes, cyclone_writes) = (
        std::thread::spawn(move || stream(Ros2FastDds, "82", RUN_S, cyclone_reads)),
        std::thread::spawn(move || stream(Cyclone, "83", RUN_S, ros2_reads)),
    );
    ros2_writes.join().expect("ros2 publisher -> cyclone subscriber");
    cyclone_writes.join().expect("cyclone publisher -> ros2 subscriber");
}

/// `bauxite bridge` as a process, its stderr lines on a channel.
struct Bridge {
    child: Child,
    stderr: mpsc::Receiver<String>,
}

impl Bridge {
    fn start(config: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["bridge", "--config"])
            .arg(config)
            .env("RUST_LOG", "info,rustdds=error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bauxite bridge");
        let (tx, stderr) = mpsc::channel();
        let pipe = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stderr }
    }

    fn wait_stderr(&self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            match self.stderr.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.contains(needle) => return,
                Ok(_) => {}
                Err(_) => panic!("bauxite bridge: no `{needle}` within {timeout:?}"),
            }
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The evaluation's bridge path with real ROS 2 nodes: an rclpy publisher on /scan, the
/// bridge, an rclpy RELIABLE subscriber on /scan/critical, which gets the whole stream, and an
/// rclpy BEST_EFFORT subscriber on /scan/noncritical, which gets the bridge's 10 Hz of it.
#[test]
fn a_ros2_publisher_reaches_a_ros2_critical_subscriber_through_the_bridge() {
    if !peers_or_skip("eval_peers_bridge", &[Ros2FastDds]) {
        return;
    }
    let domain = "84";
    let dir = std::env::temp_dir().join(format!("bauxite-eval-peers-bridge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bridge.yaml");
    std::fs::write(
        &config,
        format!(
            "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
             topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n"
        ),
    )
    .unwrap();
    let bridge = Bridge::start(&config);
    let critical = subscriber(Ros2FastDds, domain, "rt/scan/critical");
    let args = ["sub", "--domain", domain, "--topic", "rt/scan/noncritical", "--best-effort", "--duration", "60"];
    let mut noncritical = peer_at(here(), "noncritical subscriber", Ros2FastDds, &args);
    noncritical.wait_ready(START);
    bridge.wait_stderr("rt/scan/critical: 1 matched reader(s)", START);
    bridge.wait_stderr("rt/scan/noncritical: 1 matched reader(s)", START);
    stream(Ros2FastDds, domain, RUN_S, critical);
    drop(bridge);
    let received = arrivals(&noncritical.terminate(Duration::from_secs(15)));
    let seqs: Vec<u64> = received.iter().map(|r| r.0).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "noncritical samples repeated or reordered: {seqs:?}");
    assert!(received.iter().all(|r| r.2 >= r.1), "a noncritical sample arrived before it was stamped");
    // The run at the bridge's 10 Hz, less discovery (the last 2 s at least, as for the critical
    // path); the token bucket keeps the rate, so 8-12 Hz only allows for the ends.
    assert!(received.len() >= 15, "{} noncritical samples", received.len());
    let span_s = (received[received.len() - 1].2 - received[0].2) as f64 / 1e9;
    let rate = (received.len() - 1) as f64 / span_s;
    eprintln!("noncritical: {} samples at {rate:.2} Hz", received.len());
    assert!((8.0..=12.0).contains(&rate), "noncritical {rate:.1} Hz ({} samples in {span_s:.1} s)", received.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a publisher did while its only RELIABLE reader was frozen.
struct Frozen {
    /// Attempts per second while the reader was frozen (after its buffers filled).
    rate_hz: f64,
    /// Attempts that failed then, and in the whole run.
    failed: usize,
    failed_in_run: usize,
    /// The shortest failed call and the longest call of all, in ms.
    shortest_failed_ms: f64,
    longest_ms: f64,
    /// Whether every attempt in the run's last two seconds (reader thawed) succeeded.
    recovered: bool,
}

/// Runs `implementation`'s publisher (`writer` flags) against its own subscriber, freezes the
/// subscriber (SIGSTOP) for 5 s mid-run, and reports the publisher's attempts meanwhile.
fn freeze_reader(implementation: Implementation, domain: &str, writer: &[&str]) -> Frozen {
    let mut sub = subscriber(implementation, domain, "rt/scan");
    let mut args = vec!["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--duration", "12"];
    args.extend_from_slice(writer);
    let mut publisher = Peer::spawn("publisher", implementation, &args);
    publisher.wait_ready(START);
    sub.wait_recv(START);
    std::thread::sleep(Duration::from_secs(1));
    sub.signal("STOP");
    let frozen_at = now_ns();
    std::thread::sleep(Duration::from_secs(5));
    sub.signal("CONT");
    let thawed_at = now_ns();
    let published = attempts(&publisher.finish(Duration::from_secs(60)));
    sub.terminate(Duration::from_secs(15));

    // The first 1.5 s of the freeze fill the socket buffers and the writer's history.
    let from = frozen_at + 1_500_000_000;
    let window: Vec<_> = published.iter().filter(|p| (from..thawed_at).contains(&p.1)).collect();
    let failed: Vec<_> = window.iter().filter(|p| !p.2).collect();
    let end = published.last().expect("attempts").1;
    Frozen {
        rate_hz: window.len() as f64 / ((thawed_at - from) as f64 / 1e9),
        failed: failed.len(),
        failed_in_run: published.iter().filter(|p| !p.2).count(),
        shortest_failed_ms: failed.iter().map(|p| p.3 as f64 / 1e6).fold(f64::INFINITY, f64::min),
        longest_ms: published.iter().map(|p| p.3 as f64 / 1e6).fold(0.0, f64::max),
        recovered: published.iter().filter(|p| p.1 + 2_000_000_000 >= end).all(|p| p.2),
    }
}

/// The seed's collapse and its absence, for one implementation: KEEP_ALL with a 10-sample
/// limit, and KEEP_LAST 10, each against a reader frozen for 5 s (two domains at once).
fn backpressure(implementation: Implementation, domains: [&'static str; 2]) {
    let collapsing = ["--history", "keep_all", "--max-samples", "10"];
    let keep_last = ["--history", "keep_last", "--depth", "10"];
    let other = std::thread::spawn(move || freeze_reader(implementation, domains[1], &keep_last));
    let full = freeze_reader(implementation, domains[0], &collapsing);
    let last = other.join().expect("the KEEP_LAST run");
    for (name, f) in [("KEEP_ALL max_samples 10", &full), ("KEEP_LAST 10", &last)] {
        eprintln!(
            "{implementation:?} {name}, reader frozen: {:.1} attempts/s, {} failed (shortest {:.1} ms), \
             longest call {:.1} ms, recovered {}",
            f.rate_hz, f.failed, f.shortest_failed_ms, f.longest_ms, f.recovered
        );
    }
    // Collapse: writes block for the reliability's max_blocking_time (100 ms in both
    // implementations) and then fail, so attempts fall to about 10-15/s (measured). Load can
    // only lower the rate further; 20/s is well clear of the 30 Hz a healthy writer keeps.
    assert!(full.rate_hz < 20.0, "KEEP_ALL + limits kept {:.1} attempts/s", full.rate_hz);
    assert!(full.failed >= 3, "KEEP_ALL + limits: {} failed writes", full.failed);
    // A timed wait never ends early; 90 ms allows for the clocks' granularity.
    assert!(full.shortest_failed_ms >= 90.0, "a write failed after {:.1} ms", full.shortest_failed_ms);
    assert!(full.recovered, "KEEP_ALL + limits: writes still failed after the reader thawed");
    // No collapse: KEEP_LAST replaces the oldest sample instead of waiting. 24/s (80% of the
    // ticks) leaves a loaded machine room.
    assert_eq!(last.failed_in_run, 0, "KEEP_LAST 10 failed writes");
    assert!(last.rate_hz >= 24.0, "KEEP_LAST 10 fell to {:.1} attempts/s", last.rate_hz);
}

#[test]
fn cyclone_keep_all_with_limits_collapses_on_a_frozen_reader_and_keep_last_does_not() {
    if peers_or_skip("eval_peers_cyclone_backpressure", &[Cyclone]) {
        backpressure(Cyclone, ["85", "86"]);
    }
}

#[test]
fn fast_dds_keep_all_with_limits_collapses_on_a_frozen_reader_and_keep_last_does_not() {
    if peers_or_skip("eval_peers_ros2_backpressure", &[Ros2FastDds]) {
        backpressure(Ros2FastDds, ["87", "88"]);
    }
}

/// Bytes a sample's `ranges` and `intensities` take on the wire (1081 floats each).
const SCAN_PAYLOAD: u64 = 2 * 1081 * 4;

fn tx_bytes(ns: &Netns, iface: &str) -> u64 {
    let text = ns.exec("cat", &[&format!("/sys/class/net/{iface}/statistics/tx_bytes")]).unwrap();
    text.trim().parse().unwrap_or_else(|e| panic!("tx_bytes of {iface}: {text:?}: {e}"))
}

/// Root: the peers never use shared memory, which would hide traffic from a link emulator
/// between namespaces (the namespaces share /dev/shm, so shared memory would work). Each
/// implementation talks to itself, the only case its shared memory could serve, across a
/// veth: Fast DDS from namespace A to B and Cyclone from B to A, at once, each confined to its
/// veth address (multicast discovery there). Every sample that arrived crossed the veth.
#[test]
fn every_sample_of_both_implementations_crosses_a_veth_between_namespaces() {
    use bauxite_netlab::connect;
    use bauxite_sys::{root_or_skip, unique_name};
    let test = "every_sample_of_both_implementations_crosses_a_veth_between_namespaces";
    if !root_or_skip(test) || !peers_or_skip(test, &[Cyclone, Ros2FastDds]) {
        return;
    }
    let a = Netns::create(&unique_name("peers-a")).unwrap();
    let b = Netns::create(&unique_name("peers-b")).unwrap();
    let id = std::process::id() % 100_000;
    let (a_if, b_if) = (format!("bxpa{id}"), format!("bxpb{id}"));
    connect(&a, &a_if, "10.78.0.1/24", &b, &b_if, "10.78.0.2/24").unwrap();
    let at_a = Place { ns: &a, interface: Some("10.78.0.1") };
    let at_b = Place { ns: &b, interface: Some("10.78.0.2") };
    let (a_before, b_before) = (tx_bytes(&a, &a_if), tx_bytes(&b, &b_if));
    let (fast_dds, cyclone) = std::thread::scope(|scope| {
        let fast_dds = scope
            .spawn(|| stream_from(at_a, Ros2FastDds, "89", RUN_S, subscriber_at(at_b, Ros2FastDds, "89", "rt/scan")));
        let cyclone =
            scope.spawn(|| stream_from(at_b, Cyclone, "90", RUN_S, subscriber_at(at_a, Cyclone, "90", "rt/scan")));
        (fast_dds.join().expect("Fast DDS A -> B"), cyclone.join().expect("Cyclone B -> A"))
    });
    let (a_sent, b_sent) = (tx_bytes(&a, &a_if) - a_before, tx_bytes(&b, &b_if) - b_before);
    eprintln!("veth A sent {a_sent} bytes ({fast_dds} Fast DDS samples arrived), B sent {b_sent} ({cyclone} Cyclone)");
    // Each direction also carries the other stream's acknowledgements and discovery, a few kB.
    assert!(a_sent >= fast_dds as u64 * SCAN_PAYLOAD, "Fast DDS: {fast_dds} samples arrived, {a_sent} bytes crossed");
    assert!(b_sent >= cyclone as u64 * SCAN_PAYLOAD, "Cyclone: {cyclone} samples arrived, {b_sent} bytes crossed");
}

//! The shaper end to end, through the `bauxite` binary, on the robot — link — base
//! testbed (needs root: network namespaces and eBPF).

use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::{Child, Command, Output};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bauxite_core::{BitRate, Profile, RateSetting};
use bauxite_netlab::monotonic_ns;
use bauxite_netlab::testbed::{BASE_ADDR, ROBOT_IFACE};
use bauxite_netlab::traffic::{self, StopFlag, UdpStream};
use bauxite_netlab::{Bottleneck, ChainOptions, ChainTestbed, Namespace, Summary, root_or_skip};

/// These tests measure latency: run them one at a time so they do not load each other.
static SERIAL: Mutex<()> = Mutex::new(());

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");
const CRITICAL_PORT: u16 = 7401;
const VIDEO_PORT: u16 = 8080;

fn bauxite(ns: &Namespace, args: &[&str]) -> Output {
    Command::new("ip").args(["netns", "exec", ns.name(), BIN]).args(args).output().expect("run bauxite")
}

/// A running `bauxite up`, killed if the test fails before it stops it.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            Command::new("pkill").args(["-TERM", "-f", &format!("{BIN} up --iface {ROBOT_IFACE}")]).status().ok();
            let _ = self.0.wait();
        }
    }
}

fn spawn_up(ns: &Namespace, args: &[&str]) -> Daemon {
    let daemon = Daemon(
        Command::new("ip")
            .args(["netns", "exec", ns.name(), BIN, "up", "--iface", ROBOT_IFACE])
            .args(args)
            .spawn()
            .expect("start bauxite up"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = bauxite(ns, &["status", "--iface", ROBOT_IFACE, "--json"]);
        if String::from_utf8_lossy(&out.stdout).contains("\"daemon\": \"running\"") {
            return daemon;
        }
        assert!(Instant::now() < deadline, "bauxite up did not come up: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Critical UDP at 50 Hz and a TCP flood from robot to base for `warmup + window`;
/// returns the critical latencies (ms) sent during the window, the messages sent in
/// it, and the bulk throughput over it.
struct Measurement {
    latencies_ms: Vec<f64>,
    sent_in_window: usize,
    bulk_bps: f64,
}

fn measure(tb: &ChainTestbed, warmup: Duration, window: Duration) -> Measurement {
    let stop: StopFlag = Arc::new(false.into());
    let udp_rx = tb.base.run(|| UdpSocket::bind((BASE_ADDR, CRITICAL_PORT)).expect("bind UDP"));
    let tcp_rx = tb.base.run(|| TcpListener::bind((BASE_ADDR, VIDEO_PORT)).expect("bind TCP"));
    let (s1, s2, s3, s4) = (stop.clone(), stop.clone(), stop.clone(), stop.clone());
    let receiver = tb.base.spawn(move || traffic::receive_udp(&udp_rx, &s1));
    let sink = tb.base.spawn(move || traffic::tcp_sink(tcp_rx, &s2));
    let flood = tb.robot.spawn(move || {
        let stream = TcpStream::connect((BASE_ADDR, VIDEO_PORT)).expect("connect TCP");
        traffic::set_congestion_control(&stream, traffic::STANDARD_CONGESTION_CONTROL).expect("use CUBIC");
        traffic::tcp_flood(stream, &s3)
    });
    let sender = tb.robot.spawn(move || {
        let socket = UdpSocket::bind("0.0.0.0:0").expect("bind UDP sender");
        let spec = UdpStream {
            stream: CRITICAL_PORT,
            dst: SocketAddr::from((BASE_ADDR, CRITICAL_PORT)),
            rate_hz: 50.0,
            size: 64,
        };
        traffic::send_udp(&socket, &spec, &s4)
    });
    std::thread::sleep(warmup);
    let from = monotonic_ns();
    std::thread::sleep(window);
    let to = monotonic_ns();
    // Let messages sent at the end of the window arrive (the unshaped queue holds ~0.5 s).
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();
    flood.join().unwrap();
    let (arrivals, _) = receiver.join().unwrap();
    let log = sink.join().unwrap();
    let sent_in_window = (window.as_secs_f64() * 50.0).round() as usize;
    let latencies_ms =
        arrivals.iter().filter(|a| a.header.sent_ns >= from && a.header.sent_ns < to).map(|a| a.latency_ms()).collect();
    Measurement { latencies_ms, sent_in_window, bulk_bps: log.throughput_bps(from, to) }
}

fn testbed(rate_bps: u64) -> ChainTestbed {
    ChainTestbed::create(&ChainOptions { rate: BitRate::from_bps(rate_bps), buffer_bytes: 100_000 }).expect("testbed")
}

/// The robot's own radio interface is the 1.5 Mbit/s bottleneck: first as a plain
/// deep FIFO (the standard stack), then with Bauxite's lanes in its place.
#[test]
fn critical_latency_under_a_tcp_flood_with_and_without_bauxite() {
    if !root_or_skip("critical_latency_under_a_tcp_flood_with_and_without_bauxite") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let rate = BitRate::from_bps(1_500_000);
    Bottleneck::install(&tb.robot, ROBOT_IFACE, rate, 100_000).expect("bottleneck on the robot's egress");

    let plain = measure(&tb, Duration::from_secs(4), Duration::from_secs(6));
    let plain_summary = Summary::of(&plain.latencies_ms);
    eprintln!("without bauxite: critical {plain_summary} ms, bulk {:.3} Mbit/s", plain.bulk_bps / 1e6);
    assert!(plain_summary.p99 > 100.0, "the modem's FIFO should bury critical traffic: {plain_summary}");

    // Bauxite owns the bottleneck here, so it shapes at the full link rate.
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Fixed(rate);
    profile.headroom = 1.0;
    let config = std::env::temp_dir().join(format!("{}.yaml", bauxite_netlab::unique_name("robot")));
    std::fs::write(&config, serde_json::to_string(&profile).unwrap()).unwrap(); // JSON is YAML
    let mut daemon = spawn_up(&tb.robot, &["--config", config.to_str().unwrap()]);
    let shaped = measure(&tb, Duration::from_secs(4), Duration::from_secs(10));
    let shaped_summary = Summary::of(&shaped.latencies_ms);
    let status = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    eprintln!(
        "with bauxite: critical {shaped_summary} ms, bulk {:.3} Mbit/s\n{}\nlink: {}",
        shaped.bulk_bps / 1e6,
        String::from_utf8_lossy(&status.stdout),
        tb.link.tc(&["-s", "qdisc", "show", "dev", "to-base"]).unwrap()
    );
    assert!(shaped_summary.p99 < 1.0, "critical p99 with Bauxite: {shaped_summary}");
    assert_eq!(shaped.latencies_ms.len(), shaped.sent_in_window, "no critical message lost");
    // The link minus the critical stream (64 B payload + 42 B of headers at 50 Hz).
    let leftover = 1_500_000.0 - 50.0 * (64.0 + 42.0) * 8.0;
    assert!(shaped.bulk_bps >= 0.8 * leftover, "bulk got {:.3} Mbit/s of {:.3}", shaped.bulk_bps / 1e6, leftover / 1e6);

    // SIGTERM: the daemon takes everything off and exits cleanly.
    Command::new("kill").args(["-TERM", &daemon.0.id().to_string()]).status().unwrap();
    assert!(daemon.0.wait().unwrap().success(), "bauxite up exits 0 on SIGTERM");
    let qdisc = tb.robot.tc(&["qdisc", "show", "dev", ROBOT_IFACE]).unwrap();
    assert!(!qdisc.contains("htb"), "the HTB tree is gone after SIGTERM: {qdisc}");
    let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("daemon down"));
    std::fs::remove_file(config).ok();
}

#[test]
fn a_killed_daemon_leaves_traffic_flowing_and_down_cleans_up() {
    if !root_or_skip("a_killed_daemon_leaves_traffic_flowing_and_down_cleans_up") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(1_500_000);
    let daemon = spawn_up(&tb.robot, &["--rate", "1.5mbit"]);

    // Kill it while the link is saturated.
    let stop: StopFlag = Arc::new(false.into());
    let tcp_rx = tb.base.run(|| TcpListener::bind((BASE_ADDR, VIDEO_PORT)).expect("bind TCP"));
    let (s1, s2) = (stop.clone(), stop.clone());
    let sink = tb.base.spawn(move || traffic::tcp_sink(tcp_rx, &s1));
    let flood = tb.robot.spawn(move || traffic::tcp_flood(TcpStream::connect((BASE_ADDR, VIDEO_PORT)).unwrap(), &s2));
    std::thread::sleep(Duration::from_secs(3));
    Command::new("kill").args(["-KILL", &daemon.0.id().to_string()]).status().unwrap();
    // `ip netns exec` forwards nothing: kill the daemon itself, then reap the wrapper.
    Command::new("pkill").args(["-KILL", "-f", &format!("{BIN} up --iface {ROBOT_IFACE}")]).status().ok();
    std::thread::sleep(Duration::from_millis(1500)); // past the 1 s lease

    // The radio recovers to 50 Mbit/s: a leftover shaper must not hold traffic at 1.5.
    tb.set_rate(BitRate::from_bps(50_000_000)).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let from = monotonic_ns();
    std::thread::sleep(Duration::from_secs(3));
    let to = monotonic_ns();
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    let log = sink.join().unwrap();
    let after_kill = log.throughput_bps(from, to);
    eprintln!("TCP after the daemon was killed and the link recovered: {:.1} Mbit/s", after_kill / 1e6);
    assert!(after_kill > 10e6, "traffic must flow at the link's speed, not the dead shaper's: {after_kill}");

    let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("daemon dead"), "{text}");

    let out = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed"));
    let qdisc = tb.robot.tc(&["qdisc", "show", "dev", ROBOT_IFACE]).unwrap();
    assert!(!qdisc.contains("htb"), "{qdisc}");
    let gso = tb.robot.ip(&["-d", "link", "show", ROBOT_IFACE]).unwrap();
    assert!(gso.contains("gso_max_size 65536"), "gso_max_size restored: {gso}");
    let again = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(again.status.success() && String::from_utf8_lossy(&again.stdout).contains("nothing"));
    let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("daemon down"));
}

#[test]
fn bad_input_is_named_and_changes_nothing() {
    if !root_or_skip("bad_input_is_named_and_changes_nothing") {
        return;
    }
    let ns = Namespace::create(&bauxite_netlab::unique_name("bad")).unwrap();
    let out = bauxite(&ns, &["up", "--iface", "nonesuch0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no network interface called `nonesuch0`"));

    let dir = std::env::temp_dir().join(bauxite_netlab::unique_name("cfg"));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad.yaml");
    std::fs::write(&config, "name: x\nrate: 2mbit\nlanes:\n  - {name: a, share: 0.5}\nrules: []\ndefault_lane: b\n")
        .unwrap();
    let out = bauxite(&ns, &["up", "--iface", "lo", "--config", config.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("bad.yaml:6") && err.contains("default_lane"), "{err}");
    let qdisc = ns.tc(&["qdisc", "show", "dev", "lo"]).unwrap();
    assert!(!qdisc.contains("htb"), "a bad config changes nothing: {qdisc}");
    std::fs::remove_dir_all(dir).ok();
}

//! Issue 14 item 1 for the shaper: a real Prometheus (Debian's) scrapes `bauxite up` (the
//! profile's `metrics:` key, `rate: auto` against `bauxite reflect` on the base) inside the
//! robot's network namespace, and its HTTP API shows the critical lane's packet and byte
//! counters (telemetry lane) and the probe RTT histogram rising while traffic flows through the shaped interface.
//!
//! Root (network namespaces, eBPF) and `/usr/bin/prometheus` (`scripts/install-deps`); without
//! them the test skips, and under `CI=true` it fails instead. Also: `bauxite reflect --metrics`
//! counts answers and refusals (loopback, no root).

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bauxite_core::BitRate;
use bauxite_netlab::testbed::{BASE_ADDR, ROBOT_IFACE};
use bauxite_netlab::{ChainOptions, ChainTestbed};
use bauxite_sys::{ChildGuard, Netns, root_or_skip, unique_name};

mod prometheus;
use prometheus::{PROMETHEUS, free_port, prom_query, prom_until, prometheus_or_skip};

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");

/// Waits until the daemon in `ns` runs (a loaded machine attaches in about a second; 30 s
/// only bounds a hang).
fn wait_running(ns: &Netns, daemon: &mut ChildGuard) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = ns.command(BIN, &["status", "--iface", ROBOT_IFACE, "--json"]).output().unwrap();
        if String::from_utf8_lossy(&out.stdout).contains("\"daemon\": \"running\"") {
            return;
        }
        assert!(daemon.try_wait().unwrap().is_none(), "bauxite up exited: {}", String::from_utf8_lossy(&out.stderr));
        assert!(Instant::now() < deadline, "bauxite up did not come up");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_real_prometheus_sees_the_shapers_lane_counters_rise_while_traffic_flows() {
    let test = "shaper_prometheus";
    if !root_or_skip(test) || !prometheus_or_skip(test) {
        return;
    }
    let tb = ChainTestbed::create(&ChainOptions { rate: BitRate::from_bps(10_000_000), ..Default::default() })
        .expect("testbed");
    let (metrics_port, prom_port) = tb.robot.run(|| (free_port(), free_port()));
    let dir = std::env::temp_dir().join(unique_name("prometheus"));
    std::fs::create_dir_all(&dir).unwrap();
    // The profile's `metrics:` key (the bridge's test uses `--metrics`), on loopback.
    // `rate: auto`, probing `bauxite reflect` on the base, so the probe RTT histogram fills.
    let _reflector = ChildGuard::new(
        tb.base
            .command(BIN, &["reflect", "--bind", &BASE_ADDR.to_string()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start bauxite reflect"),
        Duration::from_secs(10),
    );
    let mut robot = bauxite_core::Profile::robot();
    robot.rate = bauxite_core::RateSetting::Auto;
    robot.auto_rate.reflector = vec![format!("{BASE_ADDR}:7399")];
    robot.metrics = Some(metrics_port.to_string().parse().unwrap());
    let config = dir.join("robot.yaml");
    std::fs::write(&config, serde_json::to_string(&robot).unwrap()).unwrap();
    let mut daemon = ChildGuard::new(
        tb.robot
            .command(BIN, &["up", "--iface", ROBOT_IFACE, "--config", config.to_str().unwrap()])
            .spawn()
            .expect("start bauxite up"),
        Duration::from_secs(20),
    );
    wait_running(&tb.robot, &mut daemon);
    let target = format!("127.0.0.1:{metrics_port}");
    std::fs::write(dir.join("prometheus.yml"), prometheus::scrape_config("bauxite_up", &target)).unwrap();
    let mut prom = ChildGuard::new(
        tb.robot
            .command(PROMETHEUS, &[])
            .args(prometheus::args(&dir, prom_port))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start prometheus"),
        Duration::from_secs(10),
    );
    // Prometheus and the daemon live in the robot's namespace: so do the queries.
    let query = |q: &'static str, ok: fn(f64) -> bool| tb.robot.run(move || prom_until(prom_port, q, LIMIT, ok));
    query("up{job=\"bauxite_up\"}", |v| v == 1.0);
    query("bauxite_shaper_running{iface=\"to-link\"}", |v| v == 1.0);
    let link = query("bauxite_link_rate_bits_per_second", |v| v > 0.0);
    let shaped = query("bauxite_shaped_rate_bits_per_second", |v| v > 0.0);
    assert!(shaped <= link, "shaped {shaped} under the link estimate {link} (headroom)");
    // Probes go every 20 ms: the RTT histogram's count rises scrape after scrape.
    let probes = "bauxite_probe_rtt_seconds_count{iface=\"to-link\"}";
    let counted = query(probes, |v| v > 0.0);
    tb.robot.run(move || prom_until(prom_port, probes, LIMIT, move |v| v > counted));
    // The testbed's link adds no delay: most round trips take under 50 ms.
    let fast = query("bauxite_probe_rtt_seconds_bucket{iface=\"to-link\",le=\"0.05\"}", |v| v > 0.0);
    assert!(fast > 0.0);

    // Telemetry UDP (port 7410; the probes ride the critical lane) at 200 packets a second
    // until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let sender = tb.robot.spawn(move || {
        let socket = UdpSocket::bind("0.0.0.0:0").unwrap();
        let mut sent = 0u64;
        while !flag.load(Ordering::Relaxed) {
            let _ = socket.send_to(&[0u8; 200], (BASE_ADDR, 7410));
            sent += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
        sent
    });
    let packets = "bauxite_lane_packets_total{iface=\"to-link\",lane=\"telemetry\"}";
    let first = query(packets, |v| v > 0.0);
    let second = tb.robot.run(move || prom_until(prom_port, packets, LIMIT, move |v| v > first));
    let bytes = query("bauxite_lane_bytes_total{iface=\"to-link\",lane=\"telemetry\"}", |v| v > 0.0);
    assert!(!sender.is_finished(), "the rise ({first} → {second}) is seen while the traffic flows");
    stop.store(true, Ordering::Relaxed);
    let sent = sender.join().unwrap();
    assert!(sent > 0);
    // Mostly 228-byte packets (200 bytes of payload; the lane also takes the odd ARP frame).
    assert!(bytes >= 200.0 * first, "{bytes} bytes for at least {first} packets");
    let rate = tb.robot.run(move || prom_query(prom_port, "rate(bauxite_lane_packets_total{lane=\"telemetry\"}[5s])"));
    assert!(rate.is_some(), "Prometheus computes a rate from the counter");
    query("bauxite_congested{iface=\"to-link\"}", |v| v == 0.0);

    let _ = prom.stop();
    daemon.stop().expect("stop bauxite up");
    let _ = std::fs::remove_dir_all(&dir);
}

/// How long Prometheus gets to show a value: it scrapes every second; a minute only bounds a
/// hang on a loaded machine.
const LIMIT: Duration = Duration::from_secs(60);

/// `bauxite reflect --metrics PORT` counts what it answers and what it refuses, by reason, on
/// loopback (no root needed: the reflector listens on 127.0.0.1 by default).
#[test]
fn the_reflector_counts_answers_and_refusals() {
    use bauxite_core::wire::probe::{self, Kind};
    let metrics_port = free_port();
    let udp_port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut reflector = ChildGuard::new(
        std::process::Command::new(BIN)
            .args(["reflect", "--port", &udp_port.to_string(), "--metrics", &metrics_port.to_string()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start bauxite reflect"),
        Duration::from_secs(10),
    );
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let request =
        probe::Repr { kind: Kind::EchoRequest, tagged: false, stream: 0, seq: 1, sent_ns: 1, receive_time_ns: None }
            .to_vec(64);
    // The reflector may still be starting: send until one answer comes (bounded: 30 s).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = [0u8; 256];
    loop {
        client.send_to(&request, ("127.0.0.1", udp_port)).unwrap();
        if client.recv_from(&mut buf).is_ok() {
            break;
        }
        assert!(reflector.try_wait().unwrap().is_none(), "bauxite reflect exited");
        assert!(Instant::now() < deadline, "no answer from the reflector");
    }
    client.send_to(b"not a probe", ("127.0.0.1", udp_port)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = prometheus::http_get(metrics_port, "/metrics").unwrap_or_default();
        let answered = text.lines().find_map(|l| l.strip_prefix("bauxite_reflector_answered_total "));
        let malformed =
            text.lines().find_map(|l| l.strip_prefix("bauxite_reflector_refused_total{reason=\"malformed\"} "));
        if let (Some(a), Some("1")) = (answered, malformed) {
            assert!(a.parse::<u64>().unwrap() >= 1, "{text}");
            assert!(text.contains("bauxite_reflector_refused_total{reason=\"bad_tag\"} 0\n"), "{text}");
            break;
        }
        assert!(Instant::now() < deadline, "metrics never showed the answer and the refusal:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
    reflector.stop().expect("stop bauxite reflect");
}

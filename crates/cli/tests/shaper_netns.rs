//! The shaper end to end, through the `bauxite` binary, on the robot — link — base
//! testbed (needs root: network namespaces and eBPF).
//!
//! The tests that depend on how the classifier is attached run once per mode
//! ([`in_both_attach_modes!`]): tcx, what `auto` picks on this 6.x kernel, and clsact,
//! what robots' kernels before 6.6 get (a filter that outlives its daemon).

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bauxite_core::link::{LinkConfig, LinkRate};
use bauxite_core::stats::Summary;
use bauxite_core::{BitRate, Dscp, Profile, RateSetting};
use bauxite_netlab::emulator::Direction;
use bauxite_netlab::testbed::{BASE_ADDR, BASE_IFACE, LINK_TO_ROBOT, ROBOT_ADDR, ROBOT_IFACE};
use bauxite_netlab::traffic::{self, StopFlag, UdpStream};
use bauxite_netlab::tun::{TUN_BASE_V4, TUN_BASE_V6, TUN_IFACE};
use bauxite_netlab::workload::{RunningWorkload, WorkloadSpec};
use bauxite_netlab::{Bottleneck, ChainOptions, ChainTestbed, TunTestbed, become_a_link};
use bauxite_sys::{ChildGuard, Netns, monotonic_ns, root_or_skip, unique_name};

/// These tests measure latency: run them one at a time so they do not load each other.
static SERIAL: Mutex<()> = Mutex::new(());

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");
const CRITICAL_PORT: u16 = 7401;
const VIDEO_PORT: u16 = 8080;

fn bauxite(ns: &Netns, args: &[&str]) -> Output {
    ns.command(BIN, args).output().expect("run bauxite")
}

/// How a test's `bauxite up` attaches the classifier (`--attach`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attach {
    Tcx,
    Clsact,
}

impl Attach {
    fn word(self) -> &'static str {
        match self {
            Attach::Tcx => "tcx",
            Attach::Clsact => "clsact",
        }
    }

    /// `up`'s arguments: `args` and `--attach MODE`.
    fn with<'a>(self, args: &[&'a str]) -> Vec<&'a str> {
        [args, &["--attach", self.word()]].concat()
    }

    /// The clsact filters a daemon in this mode keeps on its interface: one filter
    /// (never two) in clsact mode, none with a tcx link.
    fn filters(self) -> u64 {
        u64::from(self == Attach::Clsact)
    }
}

/// Runs each named test function (taking an [`Attach`]) as two tests, `NAME::tcx`
/// and `NAME::clsact`.
macro_rules! in_both_attach_modes {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            #[test]
            fn tcx() {
                super::$test(super::Attach::Tcx);
            }
            #[test]
            fn clsact() {
                super::$test(super::Attach::Clsact);
            }
        }
    )*};
}

in_both_attach_modes!(
    critical_latency_under_a_tcp_flood_with_and_without_bauxite,
    a_killed_daemon_leaves_traffic_flowing_and_down_cleans_up,
    the_xdp_gateway_drops_bulk_before_it_is_forwarded,
    down_removes_the_clsact_qdisc_only_when_up_added_it,
    a_killed_ingress_shaper_leaves_both_directions_flowing_and_down_removes_its_device,
);

/// Whether `iface` in `ns` has a clsact qdisc.
fn has_clsact(ns: &Netns, iface: &str) -> bool {
    ns.tc(&["qdisc", "show", "dev", iface]).unwrap().lines().any(|l| l.starts_with("qdisc clsact "))
}

/// In clsact mode `up` adds the clsact qdisc when there is none, and both a stopped
/// daemon and `down` after a killed one take it away again; one that was there before `up`
/// stays, in either mode (a tcx link needs no qdisc, so tcx never adds one).
fn down_removes_the_clsact_qdisc_only_when_up_added_it(attach: Attach) {
    if !root_or_skip("down_removes_the_clsact_qdisc_only_when_up_added_it") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(1_500_000);
    let (ns, iface) = (&tb.robot, ROBOT_IFACE);
    let up = |ns: &Netns| spawn_up(ns, iface, &attach.with(&["--rate", "1.5mbit"]));
    assert!(!has_clsact(ns, iface), "a fresh veth has no clsact qdisc");

    // None before: the daemon's own exit, and `down` after a SIGKILL, remove what `up` added.
    let mut daemon = up(ns);
    assert_eq!(has_clsact(ns, iface), attach == Attach::Clsact, "clsact mode adds the qdisc, tcx does not");
    assert!(daemon.stop().unwrap().success());
    assert!(!has_clsact(ns, iface), "{attach:?}: a stopped daemon leaves no clsact qdisc it added");
    let mut daemon = up(ns);
    daemon.kill().unwrap();
    let out = bauxite(ns, &["down", "--iface", iface]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        text(&out).contains("removed the clsact qdisc it had added"),
        attach == Attach::Clsact,
        "{}",
        text(&out)
    );
    assert!(!has_clsact(ns, iface), "{attach:?}: down after SIGKILL leaves no clsact qdisc up added");

    // One before: the operator's, which neither a stopped daemon nor `down` touches.
    ns.tc(&["qdisc", "add", "dev", iface, "clsact"]).unwrap();
    let mut daemon = up(ns);
    assert!(daemon.stop().unwrap().success());
    assert!(has_clsact(ns, iface), "{attach:?}: the operator's clsact qdisc outlives a stopped daemon");
    let mut daemon = up(ns);
    daemon.kill().unwrap();
    let out = bauxite(ns, &["down", "--iface", iface]);
    assert!(out.status.success() && !text(&out).contains("clsact qdisc"), "{}", text(&out));
    assert!(has_clsact(ns, iface), "{attach:?}: the operator's clsact qdisc outlives down");
    assert_eq!(tc_egress_filters(ns, iface), 0, "the classifier's filter is gone all the same");
}

/// `bauxite status --json` of `iface` in `ns`.
fn status_json(ns: &Netns, iface: &str) -> serde_json::Value {
    let out = bauxite(ns, &["status", "--iface", iface, "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("status --json: {e}: {}", text(&out)))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The classifier's filters on `iface`'s clsact egress hook, as `tc` lists them (one
/// line each, which names the program twice: as the filter's and the program's name).
fn tc_egress_filters(ns: &Netns, iface: &str) -> usize {
    let out = ns.tc(&["filter", "show", "dev", iface, "egress"]).unwrap_or_default();
    out.lines().filter(|line| line.contains("bauxite_tc")).count()
}

/// How long a daemon gets after SIGTERM (`ip netns exec` execs its command: the
/// child is the daemon) before the test's guard kills it.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// Starts `bauxite up --iface IFACE ARGS…` in `ns` and waits until it runs; it is
/// stopped if the test fails before it does.
fn spawn_up(ns: &Netns, iface: &str, args: &[&str]) -> ChildGuard {
    let daemon = ChildGuard::new(
        ns.command(BIN, &["up", "--iface", iface]).args(args).spawn().expect("start bauxite up"),
        STOP_GRACE,
    );
    wait_running(ns, iface);
    daemon
}

/// [`spawn_up`] with the daemon's log (stderr) written to `log`.
fn spawn_up_logged(ns: &Netns, iface: &str, args: &[&str], log: &std::path::Path) -> ChildGuard {
    let file = std::fs::File::create(log).expect("create the daemon's log");
    let daemon = ChildGuard::new(
        ns.command(BIN, &["up", "--iface", iface]).args(args).stderr(file).spawn().expect("start bauxite up"),
        STOP_GRACE,
    );
    wait_running(ns, iface);
    daemon
}

/// Waits until `bauxite status` says a daemon runs on `iface`.
fn wait_running(ns: &Netns, iface: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = bauxite(ns, &["status", "--iface", iface, "--json"]);
        if String::from_utf8_lossy(&out.stdout).contains("\"daemon\": \"running\"") {
            return;
        }
        assert!(Instant::now() < deadline, "bauxite up did not come up: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sends SIGHUP (a reload) to the daemon `pid`, which the test started and still holds.
fn sighup(pid: i32) {
    #[allow(unsafe_code)]
    // SAFETY: kill(2) with SIGHUP to a process of the test's own.
    unsafe {
        libc::kill(pid, libc::SIGHUP);
    }
}

/// Waits until the daemon's log at `log` is `done`, at most 10 s (a reload is logged
/// within a poll, 10 ms; the bound leaves a loaded machine room), failing with `what`.
fn wait_for_log(log: &Path, what: &str, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(&std::fs::read_to_string(log).unwrap()) {
        assert!(Instant::now() < deadline, "{what}:\n{}", std::fs::read_to_string(log).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes `profile` as a config file (JSON is YAML) that `--config` reads.
fn write_config(profile: &Profile) -> PathBuf {
    let path = std::env::temp_dir().join(format!("{}.yaml", unique_name("profile")));
    std::fs::write(&path, serde_json::to_string(profile).unwrap()).unwrap();
    path
}

/// Critical UDP at 50 Hz and a TCP flood from `robot` to `base_addr` in `base` for
/// `warmup + window`; returns the critical latencies (ms) sent during the window, the
/// messages sent in it, and the bulk throughput over it. The critical sender and
/// receiver run at a real-time priority ([`become_a_link`]), so that the latency is the
/// network path's and not the wake-up of a thread that a loaded machine's scheduler let
/// wait (a CFS period is ~12 ms on 2 busy CPUs; a real-time thread preempts at once).
struct Measurement {
    latencies_ms: Vec<f64>,
    /// Messages missing between the first and the last one that arrived in the window.
    lost_in_window: usize,
    bulk_bps: f64,
}

fn measure(robot: &Netns, base: &Netns, base_addr: IpAddr, warmup: Duration, window: Duration) -> Measurement {
    let stop: StopFlag = Arc::new(false.into());
    let udp_rx = base.run(move || UdpSocket::bind((base_addr, CRITICAL_PORT)).expect("bind UDP"));
    let tcp_rx = base.run(move || TcpListener::bind((base_addr, VIDEO_PORT)).expect("bind TCP"));
    let (s1, s2, s3, s4) = (stop.clone(), stop.clone(), stop.clone(), stop.clone());
    let receiver = base.spawn(move || {
        become_a_link();
        traffic::receive_udp(&udp_rx, &s1)
    });
    let sink = base.spawn(move || traffic::tcp_sink(tcp_rx, &s2));
    let flood = robot.spawn(move || {
        let stream = TcpStream::connect((base_addr, VIDEO_PORT)).expect("connect TCP");
        traffic::set_congestion_control(&stream, traffic::STANDARD_CONGESTION_CONTROL).expect("use CUBIC");
        traffic::tcp_flood(stream, &s3)
    });
    let sender = robot.spawn(move || {
        become_a_link();
        let any: IpAddr = if base_addr.is_ipv4() { [0, 0, 0, 0].into() } else { [0u16; 8].into() };
        let socket = UdpSocket::bind((any, 0)).expect("bind UDP sender");
        let spec = UdpStream {
            stream: CRITICAL_PORT,
            dst: SocketAddr::from((base_addr, CRITICAL_PORT)),
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
    let (arrivals, _) = receiver.join().unwrap().expect("receive UDP");
    let log = sink.join().unwrap().expect("TCP sink");
    let in_window: Vec<_> = arrivals.iter().filter(|a| a.header.sent_ns >= from && a.header.sent_ns < to).collect();
    let seqs = in_window.iter().map(|a| a.header.seq);
    let span = match (seqs.clone().min(), seqs.max()) {
        (Some(first), Some(last)) => (last - first + 1) as usize,
        _ => 0,
    };
    Measurement {
        latencies_ms: in_window.iter().map(|a| a.latency_ms()).collect(),
        lost_in_window: span - in_window.len(),
        bulk_bps: log.throughput_bps(from, to),
    }
}

fn testbed(rate_bps: u64) -> ChainTestbed {
    ChainTestbed::create(&ChainOptions { rate: BitRate::from_bps(rate_bps), ..Default::default() }).expect("testbed")
}

/// The robot's downlink as the bottleneck: a 50 Mbit/s testbed whose link sends toward
/// the robot through the seed's modem (1.5 Mbit/s, a 100 KB FIFO, the demo TBF's bucket),
/// at the far end of the downlink.
fn downlink_testbed() -> ChainTestbed {
    let tb = testbed(50_000_000);
    let burst = bauxite_core::link::DEMO_TBF_BURST_BYTES as u32;
    Bottleneck::install(&tb.link, LINK_TO_ROBOT, BitRate::from_bps(1_500_000), 100_000, burst)
        .expect("the downlink's bottleneck");
    tb
}

/// The robot's own radio interface is the 1.5 Mbit/s bottleneck: first as a plain
/// deep FIFO (the standard stack), then with Bauxite's lanes in its place.
fn critical_latency_under_a_tcp_flood_with_and_without_bauxite(attach: Attach) {
    if !root_or_skip("critical_latency_under_a_tcp_flood_with_and_without_bauxite") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let rate = BitRate::from_bps(1_500_000);
    // The standard stack does not depend on the attach mode: measured once (16 s saved).
    if attach == Attach::Tcx {
        Bottleneck::install(&tb.robot, ROBOT_IFACE, rate, 100_000, 1514).expect("bottleneck on the robot's egress");
        let plain = measure(&tb.robot, &tb.base, BASE_ADDR.into(), Duration::from_secs(4), Duration::from_secs(6));
        let plain_summary = Summary::of(&plain.latencies_ms);
        eprintln!("without bauxite: critical {plain_summary} ms, bulk {:.3} Mbit/s", plain.bulk_bps / 1e6);
        assert!(plain_summary.p99 > 100.0, "the modem's FIFO should bury critical traffic: {plain_summary}");

        // Bauxite will not replace a root qdisc someone configured: it says so and changes nothing.
        let refused = bauxite(&tb.robot, &["up", "--iface", ROBOT_IFACE, "--rate", "1.5mbit"]);
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success() && err.contains("root qdisc `tbf"), "{err}");
        assert!(tb.robot.tc(&["qdisc", "show", "dev", ROBOT_IFACE]).unwrap().contains("tbf"));
        tb.robot.tc(&["qdisc", "del", "dev", ROBOT_IFACE, "root"]).unwrap();
    }

    // Bauxite owns the bottleneck here, so it shapes at the full link rate.
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Fixed(rate);
    profile.headroom = 1.0;
    let config = write_config(&profile);
    let mut daemon = spawn_up(&tb.robot, ROBOT_IFACE, &attach.with(&["--config", config.to_str().unwrap()]));
    let json = status_json(&tb.robot, ROBOT_IFACE);
    assert_eq!(json["attach_mode"], attach.word(), "{json}");
    assert!(json["attach_reason"].as_str().unwrap().contains(&format!("--attach {}", attach.word())), "{json}");
    assert_eq!(json["clsact_filters"], attach.filters(), "{json}");
    assert_eq!(tc_egress_filters(&tb.robot, ROBOT_IFACE) as u64, attach.filters(), "tc agrees with status");
    let shaped = measure(&tb.robot, &tb.base, BASE_ADDR.into(), Duration::from_secs(4), Duration::from_secs(10));
    let shaped_summary = Summary::of(&shaped.latencies_ms);
    let status = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    eprintln!(
        "with bauxite: critical {shaped_summary} ms, bulk {:.3} Mbit/s\n{}\nlink: {}",
        shaped.bulk_bps / 1e6,
        String::from_utf8_lossy(&status.stdout),
        tb.link.tc(&["-s", "qdisc", "show", "dev", "to-base"]).unwrap()
    );
    // 0.2–0.3 ms on a quiet machine against > 100 ms without Bauxite (asserted above). The
    // bound leaves room for a loaded 2-core machine, where a p99 can include a wake-up that
    // waited a scheduler period (~12 ms on 2 CPUs); queueing behind the flood would be > 100 ms.
    assert!(shaped_summary.p99 < 20.0, "critical p99 with Bauxite: {shaped_summary}");
    assert!(shaped.latencies_ms.len() >= 490, "critical messages flowed all window long");
    assert_eq!(shaped.lost_in_window, 0, "no critical message lost");
    // The link minus the critical stream (64 B payload + 42 B of headers at 50 Hz).
    let leftover = 1_500_000.0 - 50.0 * (64.0 + 42.0) * 8.0;
    assert!(shaped.bulk_bps >= 0.8 * leftover, "bulk got {:.3} Mbit/s of {:.3}", shaped.bulk_bps / 1e6, leftover / 1e6);

    // SIGTERM: the daemon takes everything off and exits cleanly.
    assert!(daemon.stop().unwrap().success(), "bauxite up exits 0 on SIGTERM");
    let qdisc = tb.robot.tc(&["qdisc", "show", "dev", ROBOT_IFACE]).unwrap();
    assert!(!qdisc.contains("htb"), "the HTB tree is gone after SIGTERM: {qdisc}");
    assert_eq!(tc_egress_filters(&tb.robot, ROBOT_IFACE), 0, "and so is the classifier's filter");
    let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("daemon down"));
    std::fs::remove_file(config).ok();
}

/// The daemon's lease (`UpOptions::new`'s default): how long the classifier obeys a
/// daemon that stopped renewing it.
const LEASE: Duration = Duration::from_secs(1);

/// When the TCP sink's throughput first reached `bps` over a 100 ms window at or after
/// `from_ns`, measured from `from_ns`.
fn first_window_at(log: &traffic::SinkLog, from_ns: u64, bps: f64) -> Option<Duration> {
    const WINDOW: u64 = 100_000_000;
    let reads = log.reads.iter().filter(|(t, _)| *t >= from_ns);
    reads
        .map(|(t, _)| *t)
        .find(|&t| log.throughput_bps(t, t + WINDOW) >= bps)
        .map(|t| Duration::from_nanos(t - from_ns))
}

/// SIGKILL under a flood, with the radio recovered to 50 Mbit/s while the daemon still
/// shaped to 1.5: traffic must be back at the link's speed once the lease expires (at
/// once with tcx, whose link dies with the daemon; within the lease with clsact, whose
/// filter stays and steps aside). Then status names what was left, the next `up` takes
/// it over without stacking a second filter, and `down` removes everything.
fn a_killed_daemon_leaves_traffic_flowing_and_down_cleans_up(attach: Attach) {
    if !root_or_skip("a_killed_daemon_leaves_traffic_flowing_and_down_cleans_up") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(1_500_000);
    let mut daemon = spawn_up(&tb.robot, ROBOT_IFACE, &attach.with(&["--rate", "1.5mbit"]));

    // Kill it while the link is saturated.
    let stop: StopFlag = Arc::new(false.into());
    let tcp_rx = tb.base.run(|| TcpListener::bind((BASE_ADDR, VIDEO_PORT)).expect("bind TCP"));
    let (s1, s2) = (stop.clone(), stop.clone());
    let sink = tb.base.spawn(move || traffic::tcp_sink(tcp_rx, &s1));
    let flood = tb.robot.spawn(move || traffic::tcp_flood(TcpStream::connect((BASE_ADDR, VIDEO_PORT)).unwrap(), &s2));
    std::thread::sleep(Duration::from_secs(2));
    // The radio recovers to 50 Mbit/s: only the shaper holds traffic at 1.5 now.
    tb.set_rate(BitRate::from_bps(50_000_000)).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let killed = monotonic_ns();
    daemon.kill().unwrap(); // SIGKILL
    std::thread::sleep(LEASE + Duration::from_secs(3));
    let to = monotonic_ns();
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    let log = sink.join().unwrap().expect("TCP sink");
    let before = log.throughput_bps(killed - 1_000_000_000, killed);
    let after = log.throughput_bps(killed + (LEASE + Duration::from_secs(1)).as_nanos() as u64, to);
    let recovered = first_window_at(&log, killed, 10e6);
    eprintln!(
        "{attach:?}: TCP {:.2} Mbit/s in the second before SIGKILL, {:.1} Mbit/s from 1 s after the lease; \
         first 100 ms at 10 Mbit/s or more {recovered:?} after SIGKILL (lease {LEASE:?})",
        before / 1e6,
        after / 1e6
    );
    assert!(before < 2e6, "the live daemon held bulk at the shaped 1.5 Mbit/s: {before}");
    assert!(after > 10e6, "traffic must flow at the link's speed, not the dead shaper's: {after}");
    // Quiet runs: about 10 ms (tcx) and the lease plus about 10 ms (clsact). The bound
    // adds a second to the lease for a loaded 2-core machine (TCP's ramp-up waits on
    // the sender's and the sink's wake-ups); a filter that never stepped aside fails it.
    let recovered = recovered.expect("traffic reached 10 Mbit/s after SIGKILL");
    assert!(recovered < LEASE + Duration::from_secs(1), "{recovered:?}");

    let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    let status = text(&out);
    assert!(out.status.success() && status.contains("daemon dead"), "{status}");
    assert_eq!(status.contains("leftover: 1 clsact filter"), attach == Attach::Clsact, "{status}");
    assert_eq!(tc_egress_filters(&tb.robot, ROBOT_IFACE) as u64, attach.filters(), "the filter outlives its daemon");

    // The next `up` takes the leftovers over: one filter, never two; and a second `up`
    // beside a live one is refused without adding any.
    let mut next = spawn_up(&tb.robot, ROBOT_IFACE, &attach.with(&["--rate", "1.5mbit"]));
    assert_eq!(status_json(&tb.robot, ROBOT_IFACE)["clsact_filters"], attach.filters());
    let second = bauxite(&tb.robot, &attach.with(&["up", "--iface", ROBOT_IFACE, "--rate", "1.5mbit"]));
    assert!(!second.status.success() && text(&second).contains("already runs"), "{}", text(&second));
    assert_eq!(tc_egress_filters(&tb.robot, ROBOT_IFACE) as u64, attach.filters(), "no stacked filter");
    next.kill().unwrap();

    let out = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("removed the HTB tree") && text.contains("restored gso_max_size 65536"), "{text}");
    assert_eq!(text.contains("removed the clsact filter"), attach == Attach::Clsact, "{text}");
    assert_eq!(tc_egress_filters(&tb.robot, ROBOT_IFACE), 0);
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
    let ns = Netns::create(&unique_name("bad")).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups", BIN, "up", "--iface", "lo"])
        .output()
        .expect("run setpriv (util-linux)");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("run it as root"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = bauxite(&ns, &["up", "--iface", "nonesuch0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no network interface called `nonesuch0`"));

    let dir = std::env::temp_dir().join(unique_name("cfg"));
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

/// `rate: auto` on the robot, the modem's bottleneck downstream: the link drops from
/// 50 to 1.5 Mbit/s under a 3.5 Mbit/s video stream; the rate estimate must follow
/// and critical traffic must get its low latency back.
#[test]
fn auto_rate_follows_a_drop_from_50_to_1_5_mbit() {
    if !root_or_skip("auto_rate_follows_a_drop_from_50_to_1_5_mbit") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    // Probes signed with a shared key: the reflector answers only those (issue 10 #1).
    let key = std::env::temp_dir().join(format!("{}.key", unique_name("probe-key")));
    std::fs::write(&key, "a probe key shared by robot and reflector\n").unwrap();
    let reflect = ["reflect", "--bind", &BASE_ADDR.to_string(), "--key-file", key.to_str().unwrap()];
    let _reflector = ChildGuard::new(tb.base.command(BIN, &reflect).spawn().expect("start the reflector"), STOP_GRACE);
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Auto;
    profile.auto_rate.reflector = vec![format!("{BASE_ADDR}:{}", bauxite_core::DEFAULT_REFLECTOR_PORT)];
    profile.auto_rate.key_file = Some(key.clone());
    let config = write_config(&profile);
    let _daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()]);
    let workload =
        RunningWorkload::start(&tb, Direction::Uplink, &WorkloadSpec::default(), None).expect("start the workload");

    std::thread::sleep(Duration::from_secs(5));
    let drop_ns = monotonic_ns();
    tb.set_rate(BitRate::from_bps(1_500_000)).unwrap();
    let (mut reaction, mut settled_estimates) = (None, Vec::new());
    while monotonic_ns() - drop_ns < 15_000_000_000 {
        let out = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE, "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let link = json["link_rate_bps"].as_u64().unwrap_or(u64::MAX);
        if reaction.is_none() && link <= 1_500_000 {
            reaction = Some(Duration::from_nanos(monotonic_ns() - drop_ns));
        }
        if monotonic_ns() - drop_ns >= 5_000_000_000 && link != u64::MAX {
            settled_estimates.push(link as f64);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let final_status = bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]);
    let result = workload.stop(Duration::from_millis(500)).expect("stop the workload");
    std::fs::remove_file(config).ok();
    std::fs::remove_file(key).ok();
    let arrivals = &result.arrivals[1]; // steering, UDP 7401

    let after = |from_s: f64| -> Vec<f64> {
        let from = drop_ns + (from_s * 1e9) as u64;
        arrivals.iter().filter(|a| a.header.sent_ns >= from).map(|a| a.latency_ms()).collect()
    };
    let last_slow = arrivals
        .iter()
        .filter(|a| a.header.sent_ns >= drop_ns && a.latency_ms() >= 2.0)
        .map(|a| a.header.sent_ns)
        .max();
    let protect = last_slow.map_or(Duration::ZERO, |t| Duration::from_nanos(t - drop_ns));
    let settled = Summary::of(&after(5.0));
    let late_frames = result.frames.iter().filter(|f| f.sent_ns >= drop_ns + 5_000_000_000).count();
    let sent = result.video;
    eprintln!(
        "auto rate: estimate at or under 1.5 Mbit/s {reaction:?} after the drop; last critical message over 2 ms {protect:?} after the drop; \
         critical from 5 s after the drop: {settled} ms; video {sent:?}, {late_frames} frames delivered in the last 10 s\n{}",
        String::from_utf8_lossy(&final_status.stdout)
    );
    let reaction = reaction.expect("the rate estimate followed the drop");
    // Tens of milliseconds on a quiet machine (README's benchmarks track the figure).
    // Here the behaviour is checked: the estimate follows the drop within seconds, not
    // never or after a minute. Under a load average of 10-13 (other builds on the 2
    // cores) engineers saw up to 1.5 s with the previous controller, so the bound is 5 s.
    assert!(reaction < Duration::from_secs(5), "{reaction:?}");
    // Once settled, the estimate rests at the capacity the probes measured, leaving it
    // for upward probes (1.2x for `ramp_time`, 0.8 s of every 1.8 s or more) and short
    // drains (`min_rate`, tens of ms): the median is the resting value. Quiet runs
    // measure 1.45-1.6 Mbit/s (packet-train dispersion through TBF); the bounds allow a
    // loaded machine's late polls a quarter either way and still tell a collapsed
    // estimate (`min_rate`, 0.2 Mbit/s) or a missed drop (10 Mbit/s) apart.
    settled_estimates.sort_by(f64::total_cmp);
    let median = bauxite_core::stats::percentile(&settled_estimates, 0.5).expect("estimates were read");
    assert!(
        median > 0.75 * 1.5e6 && median <= 1.25 * 1.5e6,
        "the estimate rests near the link's 1.5 Mbit/s: median {median} of {settled_estimates:?}"
    );
    // Probing upward for a recovered link briefly overfills the modem now and then,
    // which shows in the last percents; the bulk of critical traffic stays fast.
    // Quiet-machine figures are a mean under 1 ms and a p50 near 0.1 ms; an unshaped FIFO gives
    // hundreds. The bounds leave a loaded 2-core machine's scheduling delays room (see above).
    assert!(settled.mean < 10.0 && settled.p50 < 5.0, "critical latency once the estimate settled: {settled}");
}

/// Issue 30's first deployment, the far end is the operator's: the robot's downlink
/// (the link's egress toward the robot, a 1.5 Mbit/s TBF with the modem's 100 KB FIFO)
/// carries steering (UDP 7401) beside a TCP download (port 8080). `bauxite up` runs on
/// the base's interface toward the robot, with the robot profile unchanged and
/// `rate: auto` probing `bauxite reflect` on the robot: the steering stays fast, where
/// the plain downlink buries it.
#[test]
fn far_end_shaping_with_rate_auto_protects_the_robots_downlink() {
    if !root_or_skip("far_end_shaping_with_rate_auto_protects_the_robots_downlink") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = downlink_testbed();
    let plain = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(4), Duration::from_secs(6));
    let plain_summary = Summary::of(&plain.latencies_ms);
    eprintln!("plain downlink: steering {plain_summary} ms, download {:.3} Mbit/s", plain.bulk_bps / 1e6);
    assert!(plain_summary.p99 > 100.0, "the downlink's FIFO should bury the steering: {plain_summary}");

    let reflect = ["reflect", "--bind", &ROBOT_ADDR.to_string()];
    let _reflector = ChildGuard::new(tb.robot.command(BIN, &reflect).spawn().expect("start the reflector"), STOP_GRACE);
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Auto;
    profile.auto_rate.reflector = vec![format!("{ROBOT_ADDR}:{}", bauxite_core::DEFAULT_REFLECTOR_PORT)];
    let config = write_config(&profile);
    let _daemon = spawn_up(&tb.base, BASE_IFACE, &["--config", config.to_str().unwrap()]);
    // 5 s to find the downlink's rate from the base rate (10 Mbit/s): about one on a quiet machine.
    let shaped = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(5), Duration::from_secs(10));
    let shaped_summary = Summary::of(&shaped.latencies_ms);
    let status = bauxite(&tb.base, &["status", "--iface", BASE_IFACE]);
    eprintln!(
        "far-end shaping: steering {shaped_summary} ms, download {:.3} Mbit/s\n{}",
        shaped.bulk_bps / 1e6,
        String::from_utf8_lossy(&status.stdout)
    );
    std::fs::remove_file(config).ok();
    // Under 1 ms on a quiet machine (tens of microseconds at the median) against > 100 ms
    // plain; the bound leaves a loaded 2-core machine's scheduling delays room (see
    // `critical_latency_under_a_tcp_flood_with_and_without_bauxite`), and queueing
    // behind the download would still be over 100 ms.
    assert!(shaped_summary.p99 < 20.0, "steering p99 with far-end shaping: {shaped_summary}");
    assert!(shaped.latencies_ms.len() >= 490 && shaped.lost_in_window == 0, "steering flowed, nothing lost");
    // `rate: auto` shapes to 95 % of what it measures and its probes ride the link too:
    // about 80 % of the leftover on a quiet machine; a collapsed estimate (`min_rate`)
    // would leave the download about 10 %.
    let leftover = 1_500_000.0 - 50.0 * (64.0 + 42.0) * 8.0;
    assert!(shaped.bulk_bps >= 0.6 * leftover, "download {:.3} Mbit/s of {:.3}", shaped.bulk_bps / 1e6, leftover / 1e6);
}

/// `rate: auto` with a `bauxite reflect` address nobody serves first and the base's
/// kernel answering ICMP echo as the standby: the probes move to the standby once the
/// first is silent, ride the critical lane by their DSCP, and the estimate follows a
/// drop through them as through `bauxite reflect`.
#[test]
fn auto_rate_moves_to_an_icmp_standby_when_its_reflector_is_silent_and_follows_a_drop() {
    if !root_or_skip("auto_rate_moves_to_an_icmp_standby_when_its_reflector_is_silent_and_follows_a_drop") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let silent = format!("{BASE_ADDR}:{}", bauxite_core::DEFAULT_REFLECTOR_PORT); // no `bauxite reflect`
    let standby = format!("icmp:{BASE_ADDR}");
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Auto;
    profile.auto_rate.reflector = vec![silent.clone(), standby.clone()];
    let config = write_config(&profile);
    let log = std::env::temp_dir().join(format!("{}.log", unique_name("standby")));
    let _daemon = spawn_up_logged(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()], &log);
    // Nothing but the probes for 3 s: the critical lane holds only them.
    std::thread::sleep(Duration::from_secs(3));
    let idle = status_json(&tb.robot, ROBOT_IFACE);
    let workload =
        RunningWorkload::start(&tb, Direction::Uplink, &WorkloadSpec::default(), None).expect("start the workload");
    std::thread::sleep(Duration::from_secs(3));
    let before = status_json(&tb.robot, ROBOT_IFACE);
    let drop_ns = monotonic_ns();
    tb.set_rate(BitRate::from_bps(1_500_000)).unwrap();
    let mut reaction = None;
    while reaction.is_none() && monotonic_ns() - drop_ns < 10_000_000_000 {
        let link = status_json(&tb.robot, ROBOT_IFACE)["link_rate_bps"].as_u64().unwrap_or(u64::MAX);
        if link <= 1_500_000 {
            reaction = Some(Duration::from_nanos(monotonic_ns() - drop_ns));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    workload.stop(Duration::from_millis(500)).expect("stop the workload");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    std::fs::remove_file(config).ok();
    std::fs::remove_file(log).ok();

    eprintln!(
        "standby: critical lane {} packets in the first 3 s; estimate at or under 1.5 Mbit/s {reaction:?} after the drop",
        idle["lanes"][0]["packets"]
    );
    assert_eq!(before["reflector"], standby.as_str(), "the probes moved to the standby: {before}\n{logged}");
    assert_eq!(before["link_estimate_failing"], false, "{before}");
    assert!(logged.contains(&format!("probing the standby {standby}")), "{logged}");
    assert!(!logged.contains("NOT PROTECTED"), "a standby answered: the link was never unprotected\n{logged}");
    // Probes every 10 ms: to the silent reflector for the 1 s a first answer may take
    // (`FIRST_ANSWER`; thinned to 5 a second once silent), to the standby for the 2 s
    // after: some 250. Unless the ICMP echo requests, marked CS6, were classified into
    // the critical lane, it counts some 60 (half the polls of a loaded machine late
    // still gives more than 150).
    let critical = idle["lanes"][0]["packets"].as_u64().unwrap();
    assert!(critical >= 150, "critical lane packets {critical} in the first 3 s: {idle}");
    // The same bound as through `bauxite reflect` (auto_rate_follows_a_drop_from_50_to_1_5_mbit).
    let reaction = reaction.expect("the rate estimate followed the drop through the ICMP reflector");
    assert!(reaction < Duration::from_secs(5), "{reaction:?}");
}

/// The gateway option: Bauxite on a forwarding box (the `link` namespace), shaping its
/// egress toward the base and discarding bulk with XDP as it arrives from the robot.
fn the_xdp_gateway_drops_bulk_before_it_is_forwarded(attach: Attach) {
    if !root_or_skip("the_xdp_gateway_drops_bulk_before_it_is_forwarded") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    // The gateway box is the bottleneck now: Bauxite's lanes replace the modem's FIFO.
    tb.link.tc(&["qdisc", "del", "dev", "to-base", "root"]).unwrap();
    let _daemon = spawn_up(&tb.link, "to-base", &attach.with(&["--gateway-iface", "to-robot", "--rate", "1.5mbit"]));
    let m = measure(&tb.robot, &tb.base, BASE_ADDR.into(), Duration::from_secs(3), Duration::from_secs(6));
    let summary = Summary::of(&m.latencies_ms);
    let out = bauxite(&tb.link, &["status", "--iface", "to-base", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bulk = &json["lanes"][2];
    eprintln!("gateway: critical {summary} ms, bulk {:.3} Mbit/s; bulk lane {bulk}", m.bulk_bps / 1e6);
    assert_eq!(json["gateway_iface"], "to-robot");
    assert_eq!(
        (json["attach_mode"].as_str(), json["clsact_filters"].as_u64()),
        (Some(attach.word()), Some(attach.filters()))
    );
    assert!(bulk["gateway_packets"].as_u64().unwrap() > 100, "the XDP program sees the robot's video");
    assert!(bulk["gateway_drops"].as_u64().unwrap() > 0, "and discards some of it early");
    assert_eq!(json["lanes"][0]["gateway_drops"], 0, "never critical traffic");
    // 0.1–0.2 ms on a quiet machine; the margin is the loaded-machine one explained above.
    assert!(summary.p99 < 20.0, "critical through the gateway: {summary}");
    assert_eq!(m.lost_in_window, 0, "no critical message lost");

    // `down` while the daemon runs: it asks the daemon to stop and the daemon cleans up.
    let out = bauxite(&tb.link, &["down", "--iface", "to-base"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stopped daemon"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let qdisc = tb.link.tc(&["qdisc", "show", "dev", "to-base"]).unwrap();
    assert!(!qdisc.contains("htb"), "{qdisc}");
    let xdp = tb.link.ip(&["link", "show", "to-robot"]).unwrap();
    assert!(!xdp.contains("xdp"), "the XDP program left with its daemon: {xdp}");
    assert_eq!(tc_egress_filters(&tb.link, "to-base"), 0, "and so did the classifier");
}

/// Two profiles a reload alternates between: the robot's at 1.5 Mbit/s, and one
/// with other shares, a shorter bulk queue, 1.2 Mbit/s and a fourth lane (whose
/// HTB class a reload creates and the next one deletes).
fn reload_profiles() -> (Profile, Profile) {
    let mut a = Profile::robot();
    a.rate = RateSetting::Fixed(BitRate::from_bps(1_500_000));
    a.headroom = 1.0;
    let mut b = a.clone();
    b.name = "robot-b".into();
    b.rate = RateSetting::Fixed(BitRate::from_bps(1_200_000));
    for (lane, share) in b.lanes.iter_mut().zip([0.4, 0.1, 0.4]) {
        lane.share = share;
    }
    b.lanes[2].queue_limit = 32;
    let mut extra = b.lanes[1].clone();
    extra.name = "background".into();
    extra.share = 0.1;
    b.lanes.push(extra);
    let mut rule = b.rules[1].clone();
    rule.lane = "background".into();
    if let bauxite_core::Match::Port { ports, .. } = &mut rule.matches {
        (ports.first, ports.last) = (7420, 7420);
    }
    b.rules.push(rule);
    (a, b)
}

/// The calling thread, and every thread and process it starts while this lives, at
/// SCHED_FIFO priority 10: the test's senders, receivers and daemon then wait for
/// no `nice`d build on a loaded 2-core machine, so a latency bound measures the
/// shaper's queues and not the CPU scheduler. (The kernel's RT throttling keeps 5 %
/// of each CPU for everything else; every thread here blocks or sleeps.)
struct RealTime;

impl RealTime {
    fn enter() -> Self {
        Self::set(libc::SCHED_FIFO, 10);
        RealTime
    }

    fn set(policy: libc::c_int, priority: libc::c_int) {
        let param = libc::sched_param { sched_priority: priority };
        #[allow(unsafe_code)]
        // SAFETY: sched_setscheduler(2) on the calling thread (0) with a valid param.
        let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
        assert_eq!(rc, 0, "sched_setscheduler: {}", std::io::Error::last_os_error());
    }
}

impl Drop for RealTime {
    fn drop(&mut self) {
        Self::set(libc::SCHED_OTHER, 0);
    }
}

/// `SIGHUP` (what `systemctl reload` sends) six times under a TCP flood, between
/// two profiles that differ in rate, shares, queue limits and lane count: every
/// reload applies, and critical traffic never loses its lane. Then a bad file: it
/// is named with its line and key, and the running profile stays.
#[test]
fn a_reload_under_a_flood_keeps_critical_traffic_protected() {
    if !root_or_skip("a_reload_under_a_flood_keeps_critical_traffic_protected") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _real_time = RealTime::enter();
    let tb = testbed(50_000_000);
    let dir = std::env::temp_dir().join(unique_name("reload"));
    std::fs::create_dir_all(&dir).unwrap();
    let (config, log) = (dir.join("robot.yaml"), dir.join("up.log"));
    let (a, b) = reload_profiles();
    let write = |p: &Profile| std::fs::write(&config, serde_json::to_string_pretty(p).unwrap()).unwrap();
    write(&a);
    let mut daemon = spawn_up_logged(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()], &log);
    let pid = daemon.id() as i32;
    let reloader = std::thread::spawn({
        let (config, a, b) = (config.clone(), a.clone(), b.clone());
        move || {
            std::thread::sleep(Duration::from_secs(4));
            for k in 0..6 {
                let p = if k % 2 == 0 { &b } else { &a };
                std::fs::write(&config, serde_json::to_string_pretty(p).unwrap()).unwrap();
                sighup(pid);
                std::thread::sleep(Duration::from_millis(1500));
            }
        }
    });
    // The six reloads fall in the 10 s window (from 4 s to 11.5 s after the flood starts).
    let m = measure(&tb.robot, &tb.base, BASE_ADDR.into(), Duration::from_secs(3), Duration::from_secs(10));
    reloader.join().unwrap();
    let summary = Summary::of(&m.latencies_ms);
    let text = std::fs::read_to_string(&log).unwrap();
    eprintln!("critical across six reloads: {summary} ms, bulk {:.3} Mbit/s", m.bulk_bps / 1e6);
    assert_eq!(text.matches("profile reloaded").count(), 6, "every reload applied:\n{text}");
    // A gap in protection queues the critical messages it meets behind the flood's 48-packet
    // FIFO: up to 480 ms at 1.2 Mbit/s, over 100 ms once ten packets wait. So no message may
    // take 100 ms (one message in a gap fails the test, which a p99 would let pass), and the
    // median and p99 hold the lane itself. Measured on this 2-core machine at load average 4.5
    // (other builds), at SCHED_FIFO (above): p99 0.13–0.15 ms, max 0.8 ms; at normal priority
    // p99 1.0–3.0 ms across reloads and 3.4 ms without any, so the tail is the CPU
    // scheduler's, not the reload's. Issue 16's 5 ms p99 is this printout's figure; the
    // bounds are 25 ms (p99) and 100 ms (max) because a loaded CI machine has given 10 times
    // this machine's tail on a path like this one (the raw-IP test below), and a real-time
    // thread is stalled for 100 ms by nothing but a gap.
    assert!(summary.p50 < 2.0, "critical p50 across reloads: {summary}");
    assert!(summary.p99 < 25.0, "critical p99 across reloads: {summary}");
    assert!(summary.max < 100.0, "a critical message waited behind the flood across a reload: {summary}");
    assert!(m.latencies_ms.len() >= 490, "critical messages flowed all window long");
    assert_eq!(m.lost_in_window, 0, "no critical message lost across reloads");
    let status =
        String::from_utf8_lossy(&bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE, "--json"]).stdout).into_owned();
    assert!(status.contains("\"profile\": \"robot\""), "the last reload put profile a back: {status}");
    let classes = tb.robot.tc(&["class", "show", "dev", ROBOT_IFACE]).unwrap();
    assert!(!classes.contains("ba:13"), "the fourth lane's class went with profile b: {classes}");
    assert!(classes.contains("ba:10") && classes.contains("rate 450Kbit"), "profile a's critical class: {classes}");

    // A bad file: named with its line and key; the running profile stays, and so does the daemon.
    std::fs::write(&config, "name: x\nrate: 2mbit\nlanes:\n  - {name: a, share: 0.5}\nrules: []\ndefault_lane: b\n")
        .unwrap();
    sighup(pid);
    wait_for_log(&log, "no refusal logged", |text| text.contains("reload refused"));
    let text = std::fs::read_to_string(&log).unwrap();
    let refusal = text.lines().find(|l| l.contains("reload refused")).unwrap();
    assert!(refusal.contains("robot.yaml:6") && refusal.contains("default_lane"), "{refusal}");
    assert!(refusal.contains("keeping the running profile `robot`"), "{refusal}");
    assert!(daemon.try_wait().unwrap().is_none(), "a bad file ends nothing");
    let status =
        String::from_utf8_lossy(&bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE, "--json"]).stdout).into_owned();
    assert!(status.contains("\"profile\": \"robot\"") && status.contains("\"daemon\": \"running\""), "{status}");

    // 100 SIGHUPs in a second with the running profile's file: nothing changes but the log.
    write(&a);
    let classes = tb.robot.tc(&["class", "show", "dev", ROBOT_IFACE]).unwrap();
    for _ in 0..100 {
        sighup(pid);
        std::thread::sleep(Duration::from_millis(10));
    }
    wait_for_log(&log, "no reload logged", |text| text.contains("is unchanged"));
    std::thread::sleep(Duration::from_millis(500));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("profile reloaded").count(), 6, "an unchanged profile is not applied again:\n{text}");
    assert_eq!(tb.robot.tc(&["class", "show", "dev", ROBOT_IFACE]).unwrap(), classes, "the lanes after the storm");
    assert!(daemon.try_wait().unwrap().is_none(), "the storm ends nothing");
    assert!(daemon.stop().unwrap().success(), "bauxite up exits 0 on SIGTERM after reloads");
    std::fs::remove_dir_all(dir).ok();
}

/// A robot whose uplink is a raw-IP device (an LTE modem in raw-IP mode, a tunnel): its
/// packets start at the IP header. Bauxite owns the bottleneck: it shapes the TUN
/// device at the link's 1.5 Mbit/s (the forwarder carries packets on at once) and
/// rewrites DSCP on the way; critical traffic stays fast under a TCP flood over IPv4
/// and over IPv6, and every packet reaches the far side with right checksums. (A modem
/// modelled behind the profile's headroom adds its own serialisation and HTB's bursts
/// to the figures: README gives them; this test holds the shaper's part.)
#[test]
fn a_raw_ip_uplink_keeps_critical_fast_over_ipv4_and_ipv6_with_right_checksums() {
    if !root_or_skip("a_raw_ip_uplink_keeps_critical_fast_over_ipv4_and_ipv6_with_right_checksums") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rate = BitRate::from_bps(1_500_000);
    let mut tb =
        TunTestbed::create(LinkConfig { rate: LinkRate::Unlimited, ..LinkConfig::default() }).expect("TUN testbed");
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Fixed(rate);
    profile.headroom = 1.0;
    let (ef, cs1) = (Dscp::EF, Dscp::new(8).unwrap());
    profile.lanes[0].dscp_mark = Some(ef);
    profile.lanes[2].dscp_mark = Some(cs1);
    let config = write_config(&profile);
    let mut daemon = spawn_up(&tb.robot, TUN_IFACE, &["--config", config.to_str().unwrap()]);
    std::fs::remove_file(config).ok();

    for base_addr in [IpAddr::from(TUN_BASE_V4), IpAddr::from(TUN_BASE_V6)] {
        let m = measure(&tb.robot, &tb.base, base_addr, Duration::from_secs(3), Duration::from_secs(6));
        let summary = Summary::of(&m.latencies_ms);
        eprintln!("raw IP to {base_addr}: critical {summary} ms, bulk {:.3} Mbit/s", m.bulk_bps / 1e6);
        // Quiet-machine p99: a fraction of a millisecond; queueing behind the flood would be
        // tens to hundreds (one 1500-byte packet is 8 ms at 1.5 Mbit/s, and the flood keeps
        // HTB's FIFO full), at the median as much as at the tail. The sender, the receiver
        // and the forwarder run at a real-time priority, but the TUN's softirqs fall to
        // ksoftirqd, which a loaded machine schedules late: a CI run gave p99 4.9 and
        // 5.5 ms (mean 0.6, max 14.6) where this machine gives 0.2-0.5. So the median holds
        // the shaping (CI: 0.26 ms against 2) and the p99 holds the tail to under three
        // packets' wait (CI: 5.5 ms against 25); issue 16's 5 ms figure is README's, from
        // this test's printout.
        assert!(summary.p50 < 2.0, "critical p50 over the raw-IP uplink to {base_addr}: {summary}");
        assert!(summary.p99 < 25.0, "critical p99 over the raw-IP uplink to {base_addr}: {summary}");
        assert!(m.latencies_ms.len() >= 290, "critical messages flowed all window long to {base_addr}");
        assert_eq!(m.lost_in_window, 0, "no critical message lost to {base_addr}");
        let leftover = profile.headroom * rate.bps() as f64 - 50.0 * (64.0 + 62.0) * 8.0;
        assert!(m.bulk_bps >= 0.7 * leftover, "bulk to {base_addr} got {:.3} Mbit/s", m.bulk_bps / 1e6);
    }
    let json = status_json(&tb.robot, TUN_IFACE);
    assert_eq!(json["lanes"][0]["odd_packets"], 0, "the raw-IP parse read every critical packet: {json}");
    assert!(daemon.stop().unwrap().success(), "bauxite up exits 0 on SIGTERM");

    let uplink = tb.stop_forwarder().expect("the forwarder's report");
    eprintln!("raw IP uplink: {uplink:?}");
    assert!(uplink.ipv4 > 500 && uplink.ipv6 > 500, "both families crossed the TUN link: {uplink:?}");
    assert!(uplink.l4_checked > 1000, "TCP and UDP checksums were checked: {uplink:?}");
    assert_eq!((uplink.bad_ipv4_header, uplink.bad_l4), (0, 0), "every checksum right after the DSCP rewrite");
    let marked = |d: Dscp| uplink.by_dscp.get(&d.value()).copied().unwrap_or(0);
    assert!(marked(ef) >= 580, "critical rewritten to EF: {uplink:?}");
    assert!(marked(cs1) > 500, "bulk rewritten to CS1: {uplink:?}");
}

/// The Python of the ROS 2 venv `scripts/install-deps` makes (rclpy and
/// diagnostic_msgs from PyPI): `BAUXITE_ROS2_VENV`, by default /opt/bauxite/ros2-venv.
fn ros2_python() -> PathBuf {
    let venv = std::env::var_os("BAUXITE_ROS2_VENV").unwrap_or_else(|| "/opt/bauxite/ros2-venv".into());
    PathBuf::from(venv).join("bin/python")
}

/// Whether rclpy imports in that venv; panics under CI=true if not.
fn ros2_or_skip(test: &str) -> bool {
    let ok = Command::new(ros2_python())
        .args(["-c", "import rclpy, diagnostic_msgs.msg"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs rclpy in {} (scripts/install-deps), and CI=true: not a skip", ros2_python().display());
    }
    if !ok {
        eprintln!("skipping {test}: no rclpy in {}; run scripts/install-deps", ros2_python().display());
    }
    ok
}

/// `bauxite up` with a `diagnostics:` key, heard by a real ROS 2 node (rclpy over Fast
/// DDS, in the robot's namespace, on loopback): OK with the lanes' counters while idle,
/// WARN while a TCP flood congests the link, ERROR under `rate: auto` when no reflector
/// answers. (ERROR for an expired lease, which needs a hung control loop, is checked on
/// the status itself in `bauxite_shaper::diagnostics`.)
#[test]
fn shaper_diagnostics_reach_a_ros2_subscriber() {
    if !root_or_skip("shaper_diagnostics_reach_a_ros2_subscriber")
        || !ros2_or_skip("shaper_diagnostics_reach_a_ros2_subscriber")
    {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Fixed(BitRate::from_bps(1_500_000));
    profile.headroom = 1.0;
    profile.diagnostics = Some(bauxite_core::diagnostics::DiagnosticsSettings {
        period: Duration::from_millis(200),
        domain_id: 71,
        ..Default::default()
    });
    let config = write_config(&profile);
    let mut daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ros2/diagnostics_sub.py");
    let mut command =
        tb.robot.command(ros2_python().to_str().unwrap(), &[script.to_str().unwrap(), "--seconds", "120"]);
    command.env("ROS_DOMAIN_ID", "71").env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    let mut child = command.stdout(std::process::Stdio::piped()).spawn().expect("start the rclpy subscriber");
    let stdout = child.stdout.take().unwrap();
    let _subscriber = ChildGuard::new(child, Duration::from_secs(2));
    let (tx, statuses) = std::sync::mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    let name = format!("bauxite_shaper: {ROBOT_IFACE}");
    let wait_for = |level: u64, within: Duration| -> serde_json::Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let status =
                statuses.recv_timeout(left).unwrap_or_else(|_| panic!("no level {level} status in {within:?}"));
            if status["name"] == name.as_str() && status["level"] == level {
                return status;
            }
        }
    };
    // Discovery between RustDDS and Fast DDS takes a few seconds.
    let ok = wait_for(0, Duration::from_secs(30));
    assert_eq!(ok["message"], "shaping");
    assert_eq!(ok["values"]["profile"], "robot");
    for key in ["critical.packets", "telemetry.bytes", "bulk.early_drops", "bulk.backlog_packets", "link_rate_bps"] {
        assert!(ok["values"][key].is_string(), "{key} in {}", ok["values"]);
    }
    assert_eq!(ok["values"]["link_rate_bps"], "1500000");
    std::thread::scope(|scope| {
        // A TCP flood for 8 s (with critical UDP beside it).
        let flood = scope
            .spawn(|| measure(&tb.robot, &tb.base, BASE_ADDR.into(), Duration::from_secs(2), Duration::from_secs(6)));
        let warn = wait_for(1, Duration::from_secs(20));
        assert!(warn["message"].as_str().unwrap().starts_with("congested"), "{warn}");
        assert_eq!(warn["values"]["congested"], "true");
        flood.join().unwrap();
    });
    assert!(daemon.stop().unwrap().success());
    std::fs::remove_file(config).ok();

    // `rate: auto` towards a reflector that does not answer: the link estimate fails.
    profile.rate = RateSetting::Auto;
    profile.auto_rate.reflector = vec![format!("{BASE_ADDR}:{}", bauxite_core::DEFAULT_REFLECTOR_PORT)];
    let config = write_config(&profile);
    let _daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()]);
    let error = wait_for(2, Duration::from_secs(30));
    assert!(error["message"].as_str().unwrap().starts_with("link estimate failing"), "{error}");
    assert_eq!(error["values"]["rate_mode"], "auto");
    std::fs::remove_file(config).ok();
}

/// The robot's own ingress shaped (`up --ingress`), for a far end that is not the robot's
/// (a cloud): the downlink's 1.5 Mbit/s FIFO at the far end carries steering (UDP 7401)
/// beside a TCP download (port 8080). Shaping the redirected ingress a little under the
/// downlink, with the download in a droppable lane, keeps the far FIFO short, so the
/// steering behind it is too; the standard stack lets the download fill it.
#[test]
fn robot_side_ingress_shaping_protects_the_steering_against_a_download() {
    if !root_or_skip("robot_side_ingress_shaping_protects_the_steering_against_a_download") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = downlink_testbed();
    let plain = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(4), Duration::from_secs(6));
    let plain_summary = Summary::of(&plain.latencies_ms);

    let device = bauxite_shaper::ingress::device_name(ROBOT_IFACE);
    let mut daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--rate", "50mbit", "--ingress", "1.5mbit"]);
    wait_running(&tb.robot, &device);
    let shaped = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(5), Duration::from_secs(10));
    let shaped_summary = Summary::of(&shaped.latencies_ms);
    let ingress = status_json(&tb.robot, &device);
    eprintln!(
        "downlink steering: plain {plain_summary} ms, download {:.3} Mbit/s; robot-side ingress shaping \
         {shaped_summary} ms, download {:.3} Mbit/s\n{ingress}",
        plain.bulk_bps / 1e6,
        shaped.bulk_bps / 1e6
    );
    assert!(plain_summary.p99 > 100.0, "the downlink's FIFO should bury the steering: {plain_summary}");
    // Issue 30's targets: p99 at most 20 ms and ten times better than the standard stack's.
    // On a quiet machine a few ms (the far FIFO holds a packet or two of the download);
    // queueing behind the download would be hundreds.
    assert!(shaped_summary.p99 <= 20.0, "steering p99 with ingress shaping: {shaped_summary}");
    assert!(plain_summary.p99 >= 10.0 * shaped_summary.p99, "{plain_summary} against {shaped_summary}");
    assert!(shaped.latencies_ms.len() >= 490 && shaped.lost_in_window == 0, "steering flowed, nothing lost");
    // Shaped to 90 % of the downlink (`ingress.headroom`): 88-89 % of the plain download
    // on a quiet machine (issue 30's target is 80 %, which README's demo figure holds);
    // 75 % leaves a loaded machine room, and a shaper that collapsed would give far less.
    assert!(
        shaped.bulk_bps >= 0.75 * plain.bulk_bps,
        "download {:.3} of the plain {:.3} Mbit/s",
        shaped.bulk_bps / 1e6,
        plain.bulk_bps / 1e6
    );
    let status = text(&bauxite(&tb.robot, &["status", "--iface", ROBOT_IFACE]));
    assert!(status.contains(&format!("shaped on {device}")), "status names the downlink's device: {status}");
    // The steering and the download went through the IFB's lanes.
    let packets = |lane: usize| ingress["lanes"][lane]["packets"].as_u64().unwrap_or(0);
    assert!(packets(0) >= 500 && packets(2) >= 500, "critical and bulk lanes of {device}: {ingress}");

    // A daemon's own exit takes the redirect and the device with it.
    daemon.stop().unwrap();
    assert!(tb.robot.ip(&["link", "show", "dev", &device]).is_err(), "{device} removed on exit");
    assert!(!redirects(&tb.robot, ROBOT_IFACE), "the redirect removed on exit");
}

/// Whether `iface`'s ingress hook has a filter at Bauxite's redirect preference.
fn redirects(ns: &Netns, iface: &str) -> bool {
    let pref = format!(" pref {} ", bauxite_shaper::ingress::REDIRECT_PREF);
    ns.tc(&["filter", "show", "dev", iface, "ingress"]).unwrap_or_default().contains(&pref)
}

/// How long after the lease both directions may take to flow at the link's speed again once
/// a daemon shaping the downlink died. New packets pass unshaped as soon as the classifier
/// steps aside (at once with tcx, after the lease with clsact); what the lanes hold then
/// still drains at their shaped rate, nobody being left to change it, and arrives late (the
/// telemetry lane's 64 packets of these floods, 470 ms at 1.35 Mbit/s). Measured with UDP,
/// which no sender slows, so the figure is the datapath's: 0 ms (tcx) and 950 ms (clsact)
/// after SIGKILL. The bound leaves a loaded 2-core machine 1.5 s beyond the lease, and a
/// classifier that never stepped aside fails it all the same. (A TCP download recovers
/// later, 0.1-3.9 s after SIGKILL in clsact mode, its retransmission timer's backoff
/// deciding.)
const INGRESS_DRAIN_BOUND: Duration = Duration::from_millis(1_500);

/// A [`udp_flood`]'s payload per datagram, bytes: 2000 a second make 20 Mbit/s.
const FLOOD_PAYLOAD: usize = 1250;

/// A UDP flood of 20 Mbit/s from `from` to `to_addr` in `to` (unresponsive: the datapath's
/// fail-open is measured, not a sender's recovery), until `stop`; returns its arrivals.
fn udp_flood(from: &Netns, to: &Netns, to_addr: IpAddr, stop: &StopFlag) -> UdpFlood {
    let socket = to.run(move || UdpSocket::bind((to_addr, VIDEO_PORT)).expect("bind the flood's sink"));
    let (s1, s2) = (stop.clone(), stop.clone());
    let sink = to.spawn(move || traffic::receive_udp(&socket, &s1).expect("the flood's sink").0);
    let sender = from.spawn(move || {
        let socket = UdpSocket::bind("0.0.0.0:0").expect("bind the flood");
        let spec = UdpStream {
            stream: VIDEO_PORT,
            dst: SocketAddr::from((to_addr, VIDEO_PORT)),
            rate_hz: 2000.0,
            size: FLOOD_PAYLOAD,
        };
        traffic::send_udp(&socket, &spec, &s2)
    });
    UdpFlood { sender, sink }
}

/// A running [`udp_flood`].
struct UdpFlood {
    sender: std::thread::JoinHandle<u32>,
    sink: std::thread::JoinHandle<Vec<traffic::Arrival>>,
}

impl UdpFlood {
    /// Its arrivals, once the caller has set the stop flag.
    fn arrivals(self) -> Vec<traffic::Arrival> {
        self.sender.join().unwrap();
        self.sink.join().unwrap()
    }
}

/// Bits per second of `arrivals` ([`FLOOD_PAYLOAD`] each) received in `[from_ns, to_ns)`.
fn arrival_rate(arrivals: &[traffic::Arrival], from_ns: u64, to_ns: u64) -> f64 {
    let n = arrivals.iter().filter(|a| (from_ns..to_ns).contains(&a.received_ns)).count();
    (n * FLOOD_PAYLOAD) as f64 * 8.0 / ((to_ns - from_ns) as f64 / 1e9)
}

/// SIGKILL with both directions shaped to 1.5 Mbit/s on a 50 Mbit/s link, under a
/// 20 Mbit/s flood each way: both must flow at the link's speed once the lease expires
/// and the lanes drained (the redirect and the IFB stay, the IFB's tree passes
/// everything unshaped). Then `down` removes the redirect and the device, and says so; a
/// second `down` finds nothing; a device or filter of Bauxite's names that is not
/// Bauxite's is refused by `up` and left by `down`.
fn a_killed_ingress_shaper_leaves_both_directions_flowing_and_down_removes_its_device(attach: Attach) {
    if !root_or_skip("a_killed_ingress_shaper_leaves_both_directions_flowing_and_down_removes_its_device") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let device = bauxite_shaper::ingress::device_name(ROBOT_IFACE);
    let mut daemon = spawn_up(&tb.robot, ROBOT_IFACE, &attach.with(&["--rate", "1.5mbit", "--ingress", "1.5mbit"]));
    wait_running(&tb.robot, &device);

    let stop: StopFlag = Arc::new(false.into());
    let upload = udp_flood(&tb.robot, &tb.base, BASE_ADDR.into(), &stop);
    let download = udp_flood(&tb.base, &tb.robot, ROBOT_ADDR.into(), &stop);
    std::thread::sleep(Duration::from_secs(3));
    let killed = monotonic_ns();
    daemon.kill().unwrap(); // SIGKILL
    std::thread::sleep(LEASE + INGRESS_DRAIN_BOUND + Duration::from_secs(2));
    let to = monotonic_ns();
    stop.store(true, Ordering::Relaxed);
    let flows = [("upload", upload.arrivals()), ("download", download.arrivals())];
    for (direction, arrivals) in &flows {
        let before = arrival_rate(arrivals, killed - 1_000_000_000, killed);
        let after = arrival_rate(arrivals, killed + (LEASE + INGRESS_DRAIN_BOUND).as_nanos() as u64, to);
        let recovered = (killed..to)
            .step_by(10_000_000)
            .find(|&t| arrival_rate(arrivals, t, t + 100_000_000) >= 10e6)
            .map(|t| Duration::from_nanos(t - killed));
        eprintln!(
            "{attach:?} {direction}: {:.2} Mbit/s in the second before SIGKILL, {:.1} Mbit/s from the bound on, \
             10 Mbit/s or more {recovered:?} after SIGKILL",
            before / 1e6,
            after / 1e6
        );
        assert!(before < 2e6, "{attach:?} {direction}: the live daemon held it at the shaped 1.5 Mbit/s: {before}");
        assert!(
            after > 10e6,
            "{attach:?} {direction}: it must flow at the link's speed after the daemon died: {after}"
        );
        let recovered = recovered.unwrap_or_else(|| panic!("{direction} reached 10 Mbit/s after SIGKILL"));
        assert!(recovered < LEASE + INGRESS_DRAIN_BOUND, "{attach:?} {direction}: {recovered:?}");
    }
    assert!(redirects(&tb.robot, ROBOT_IFACE), "the redirect outlives its daemon (and passes traffic)");
    assert_eq!(tc_egress_filters(&tb.robot, &device) as u64, attach.filters(), "{attach:?}: the IFB's classifier");

    let out = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("removed the ingress redirect") && said.contains(&format!("ingress device {device}")),
        "{said}"
    );
    assert!(tb.robot.ip(&["link", "show", "dev", &device]).is_err(), "{device} removed");
    assert!(!redirects(&tb.robot, ROBOT_IFACE) && !has_clsact(&tb.robot, ROBOT_IFACE), "nothing left on the ingress");
    let again = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(again.status.success() && text(&again).contains("nothing"), "{}", text(&again));

    // Someone else's IFB (no Bauxite alias) under Bauxite's device name.
    tb.robot.ip(&["link", "add", &device, "type", "ifb"]).unwrap();
    let refused = bauxite(&tb.robot, &["up", "--iface", ROBOT_IFACE, "--rate", "1.5mbit", "--ingress", "1.5mbit"]);
    assert!(!refused.status.success() && text(&refused).contains("is not Bauxite's"), "{}", text(&refused));
    assert!(!redirects(&tb.robot, ROBOT_IFACE), "a refused up redirects nothing");
    let down = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(down.status.success() && tb.robot.ip(&["link", "show", "dev", &device]).is_ok(), "{}", text(&down));
    tb.robot.ip(&["link", "del", "dev", &device]).unwrap();

    // Someone else's filter at the redirect's preference: refused, and left.
    let pref = bauxite_shaper::ingress::REDIRECT_PREF.to_string();
    tb.robot.tc(&["qdisc", "add", "dev", ROBOT_IFACE, "clsact"]).unwrap();
    let filter = ["filter", "add", "dev", ROBOT_IFACE, "ingress", "pref", &pref, "protocol", "all", "u32", "match"];
    tb.robot.tc(&[&filter[..], &["u32", "0", "0", "classid", "1:1"]].concat()).unwrap();
    let refused = bauxite(&tb.robot, &["up", "--iface", ROBOT_IFACE, "--rate", "1.5mbit", "--ingress", "1.5mbit"]);
    assert!(!refused.status.success() && text(&refused).contains("not Bauxite's redirect"), "{}", text(&refused));
    let down = bauxite(&tb.robot, &["down", "--iface", ROBOT_IFACE]);
    assert!(down.status.success() && redirects(&tb.robot, ROBOT_IFACE), "the foreign filter stays: {}", text(&down));
}

/// Ingress shaping on a raw-IP interface (an LTE modem in raw-IP mode): the redirected
/// packets reach the IFB device without an Ethernet header, and the IFB's classifier parses
/// them as the interface's, not as the IFB's Ethernet. Steering to the robot lands in the
/// critical lane and a download in the bulk lane, over IPv4 and IPv6, and the download is
/// held to the ingress rate.
#[test]
fn ingress_shaping_classifies_a_raw_ip_interfaces_downlink_over_ipv4_and_ipv6() {
    if !root_or_skip("ingress_shaping_classifies_a_raw_ip_interfaces_downlink_over_ipv4_and_ipv6") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb =
        TunTestbed::create(LinkConfig { rate: LinkRate::Unlimited, ..LinkConfig::default() }).expect("TUN testbed");
    let mut daemon = spawn_up(&tb.robot, TUN_IFACE, &["--rate", "100mbit", "--ingress", "1.5mbit"]);
    let device = bauxite_shaper::ingress::device_name(TUN_IFACE);
    wait_running(&tb.robot, &device);
    for robot_addr in [IpAddr::from(bauxite_netlab::tun::TUN_ROBOT_V4), IpAddr::from(bauxite_netlab::tun::TUN_ROBOT_V6)]
    {
        let m = measure(&tb.base, &tb.robot, robot_addr, Duration::from_secs(3), Duration::from_secs(5));
        let summary = Summary::of(&m.latencies_ms);
        eprintln!("raw-IP downlink to {robot_addr}: steering {summary} ms, download {:.3} Mbit/s", m.bulk_bps / 1e6);
        // The IFB's HTB is the only queue: the download waits there, the steering does not
        // (the same bound and reason as the raw-IP uplink's test above).
        assert!(summary.p50 < 2.0 && summary.p99 < 25.0, "steering to {robot_addr}: {summary}");
        assert!(m.latencies_ms.len() >= 240 && m.lost_in_window == 0, "steering flowed to {robot_addr}");
        // Held to 90 % of 1.5 Mbit/s less the steering, where nothing else would hold it.
        assert!((0.9e6..1.4e6).contains(&m.bulk_bps), "download to {robot_addr}: {:.3} Mbit/s", m.bulk_bps / 1e6);
    }
    let json = status_json(&tb.robot, &device);
    let lane = |i: usize, key: &str| json["lanes"][i][key].as_u64().unwrap_or(0);
    assert!(lane(0, "packets") >= 500 && lane(2, "packets") >= 500, "steering critical, download bulk: {json}");
    assert_eq!(lane(0, "odd_packets") + lane(2, "odd_packets"), 0, "raw IP parsed as raw IP: {json}");
    assert!(daemon.stop().unwrap().success(), "bauxite up exits 0 on SIGTERM");
    assert!(tb.robot.ip(&["link", "show", "dev", &device]).is_err(), "{device} removed on exit");
}

/// What ingress shaping cannot do: an unresponsive UDP flood (3 Mbit/s into the 1.5 Mbit/s
/// downlink) fills the far end's FIFO whatever the robot drops after it, so the steering
/// behind that FIFO waits as long as it would unshaped. README and the guide say so; this
/// keeps them true.
#[test]
fn ingress_shaping_cannot_empty_a_far_queue_an_unresponsive_flood_fills() {
    if !root_or_skip("ingress_shaping_cannot_empty_a_far_queue_an_unresponsive_flood_fills") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = downlink_testbed();
    let device = bauxite_shaper::ingress::device_name(ROBOT_IFACE);
    let _daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--rate", "50mbit", "--ingress", "1.5mbit"]);
    wait_running(&tb.robot, &device);
    let stop: StopFlag = Arc::new(false.into());
    let (s1, s2) = (stop.clone(), stop.clone());
    let flood_rx = tb.robot.run(|| UdpSocket::bind((ROBOT_ADDR, VIDEO_PORT)).expect("bind the flood's sink"));
    let sink = tb.robot.spawn(move || traffic::receive_udp(&flood_rx, &s1));
    let flood = tb.base.spawn(move || {
        let socket = UdpSocket::bind((BASE_ADDR, 0)).expect("bind the flood");
        let spec = UdpStream {
            stream: VIDEO_PORT,
            dst: SocketAddr::from((ROBOT_ADDR, VIDEO_PORT)),
            rate_hz: 250.0,
            size: 1472,
        };
        traffic::send_udp(&socket, &spec, &s2)
    });
    let steering = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(3), Duration::from_secs(4));
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    sink.join().unwrap().expect("the flood's sink");
    let summary = Summary::of(&steering.latencies_ms);
    eprintln!("downlink steering beside a 3 Mbit/s UDP flood, ingress shaped: {summary} ms");
    // 100 KB at 1.5 Mbit/s is 530 ms; the FIFO stays full, so the median waits most of it.
    assert!(summary.p50 > 200.0, "the far FIFO, full of the flood, delays the steering: {summary}");
}

/// A reload (`SIGHUP`) of a profile shaping both directions: a new `ingress.rate` is put on
/// the downlink's device in place, the uplink's classes stay as they were, and a change of
/// `direction` is refused (it needs a restart) with both shapers left running.
#[test]
fn a_reload_changes_the_downlinks_rate_in_place_and_refuses_a_new_direction() {
    if !root_or_skip("a_reload_changes_the_downlinks_rate_in_place_and_refuses_a_new_direction") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = testbed(50_000_000);
    let device = bauxite_shaper::ingress::device_name(ROBOT_IFACE);
    let mut profile = Profile::robot();
    profile.direction = bauxite_core::Direction::Both;
    profile.ingress = Some(bauxite_core::IngressPolicy::at(RateSetting::Fixed(BitRate::from_bps(2_000_000))));
    let config = write_config(&profile);
    let log = std::env::temp_dir().join(format!("{}.log", unique_name("reload-ingress")));
    let mut daemon = spawn_up_logged(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap()], &log);
    wait_running(&tb.robot, &device);
    let rate = |iface: &str| status_json(&tb.robot, iface)["rate_bps"].as_u64().unwrap_or(0);
    assert_eq!((rate(ROBOT_IFACE), rate(&device)), (1_425_000, 1_800_000), "95 % of 1.5, 90 % of 2 Mbit/s");

    profile.ingress = Some(bauxite_core::IngressPolicy::at(RateSetting::Fixed(BitRate::from_bps(4_000_000))));
    std::fs::write(&config, serde_json::to_string(&profile).unwrap()).unwrap();
    sighup(daemon.id() as i32);
    let deadline = Instant::now() + Duration::from_secs(10);
    while rate(&device) != 3_600_000 {
        assert!(
            Instant::now() < deadline,
            "the downlink's rate was not reloaded:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(rate(ROBOT_IFACE), 1_425_000, "the uplink kept its rate");
    let classes = tb.robot.tc(&["class", "show", "dev", &device]).unwrap();
    assert!(classes.contains("ba:1 ") && classes.contains("rate 3600Kbit"), "the link class in place: {classes}");

    profile.direction = bauxite_core::Direction::Down;
    std::fs::write(&config, serde_json::to_string(&profile).unwrap()).unwrap();
    sighup(daemon.id() as i32);
    wait_for_log(&log, "no refusal logged", |text| {
        text.lines().any(|l| l.contains("reload refused") && l.contains("direction"))
    });
    assert!(daemon.try_wait().unwrap().is_none(), "a refused reload ends nothing");
    assert_eq!((rate(ROBOT_IFACE), rate(&device)), (1_425_000, 3_600_000), "both kept what they ran");
    std::fs::remove_file(config).ok();
    std::fs::remove_file(log).ok();
}

/// `--ingress auto`: the robot measures its downlink with probes to a reflector at the
/// far end, from the bytes that arrive over it, and shapes its ingress under it. Behind
/// the far end's 1.5 Mbit/s FIFO the steering stays fast beside a TCP download, and the
/// download keeps most of the link.
#[test]
fn ingress_shaping_with_rate_auto_finds_the_downlink_and_protects_the_steering() {
    if !root_or_skip("ingress_shaping_with_rate_auto_finds_the_downlink_and_protects_the_steering") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tb = downlink_testbed();
    let reflect = ["reflect", "--bind", &BASE_ADDR.to_string()];
    let _reflector = ChildGuard::new(tb.base.command(BIN, &reflect).spawn().expect("start the reflector"), STOP_GRACE);
    let mut profile = Profile::robot();
    profile.rate = RateSetting::Fixed(BitRate::from_bps(50_000_000));
    profile.auto_rate.reflector = vec![format!("{BASE_ADDR}:{}", bauxite_core::DEFAULT_REFLECTOR_PORT)];
    let config = write_config(&profile);
    let device = bauxite_shaper::ingress::device_name(ROBOT_IFACE);
    let _daemon = spawn_up(&tb.robot, ROBOT_IFACE, &["--config", config.to_str().unwrap(), "--ingress", "auto"]);
    wait_running(&tb.robot, &device);
    // 5 s to find the downlink from the base rate (10 Mbit/s): about one on a quiet machine.
    let m = measure(&tb.base, &tb.robot, ROBOT_ADDR.into(), Duration::from_secs(5), Duration::from_secs(10));
    let summary = Summary::of(&m.latencies_ms);
    let ingress = status_json(&tb.robot, &device);
    eprintln!(
        "downlink with --ingress auto: steering {summary} ms, download {:.3} Mbit/s\n{ingress}",
        m.bulk_bps / 1e6
    );
    std::fs::remove_file(config).ok();
    assert_eq!(ingress["rate_mode"], "auto", "{ingress}");
    // From the robot's side the shaper cannot reorder the far FIFO: each upward probe lets
    // the far TCP sender grow into it for an RTT before the ingress drops reach it, which
    // is the tail. Measured p99 0.2-44 ms over runs (CI 2026-12-06: 44 ms; the demo's
    // trials 0.24-36.5 ms), p50 under 0.1 ms. The median tells a working shaper apart on
    // any machine; the p99 bound, 3x above the worst run seen, still tells it from the
    // unshaped far FIFO (100 KB at 1.5 Mbit/s: 530 ms).
    assert!(summary.p50 < 5.0, "steering median with the downlink measured: {summary}");
    assert!(summary.p99 < 150.0, "steering p99 with the downlink measured: {summary}");
    assert!(m.latencies_ms.len() >= 490 && m.lost_in_window == 0, "steering flowed, nothing lost");
    // Shaped to 90 % of what it measures, with its probes on the link too: about 80 % of
    // the leftover on a quiet machine; an estimate collapsed to `min_rate` would leave
    // the download about 10 %.
    let leftover = 1_500_000.0 - 50.0 * (64.0 + 42.0) * 8.0;
    assert!(m.bulk_bps >= 0.6 * leftover, "download {:.3} Mbit/s of {:.3}", m.bulk_bps / 1e6, leftover / 1e6);
}

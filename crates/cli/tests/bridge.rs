//! End-to-end tests of `bauxite bridge` with an independent DDS implementation on every other
//! side: a Cyclone DDS publisher (PyPI `cyclonedds`, `crates/eval/peers/cyclonedds_peer.py`)
//! sends ROS 2 LaserScans at 30 Hz, the bridge (RustDDS) runs as its own process, and Cyclone
//! subscribers read its outputs — all over loopback, each test in its own DDS domain.
//!
//! Without Python's `cyclonedds` these tests skip with a message; under `CI=true` they fail
//! instead (`scripts/install-deps` installs it).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;
mod prometheus;

use common::output_within;
use prometheus::{PROMETHEUS, free_port, prom_query, prom_until, prometheus_or_skip};

fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/peers/cyclonedds_peer.py")
}

/// Whether Cyclone DDS for Python is importable; panics under CI=true if not.
fn cyclone_or_skip(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import cyclonedds.domain"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs Python's cyclonedds (scripts/install-deps installs it), and CI=true: not a skip");
    }
    eprintln!("skipping {test}: `python3 -c 'import cyclonedds'` fails; run scripts/install-deps");
    false
}

/// A child process killed when the test ends, however it ends; its stdout and stderr lines
/// arrive on channels.
struct Proc {
    child: Child,
    name: String,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    /// Stderr lines read so far.
    log: std::cell::RefCell<Vec<String>>,
}

fn lines(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Proc {
    fn spawn(name: &str, cmd: &mut Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        let stdout = lines(child.stdout.take().expect("piped"));
        let stderr = lines(child.stderr.take().expect("piped"));
        Self { child, name: name.to_string(), stdout, stderr, log: Default::default() }
    }

    fn peer(name: &str, args: &[&str]) -> Self {
        Self::spawn(name, Command::new("python3").arg(peer_script()).args(args))
    }

    /// Waits until some stderr line (seen before or arriving now) contains `needle`.
    fn wait_stderr(&self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut log = self.log.borrow_mut();
        if log.iter().any(|l| l.contains(needle)) {
            return;
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(needle);
                    log.push(line);
                    if hit {
                        return;
                    }
                }
                Err(_) => panic!("{}: no `{needle}` within {timeout:?}; its log:\n{}", self.name, log.join("\n")),
            }
        }
    }

    /// Waits for a stdout line equal to `line`.
    fn wait_stdout(&self, line: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(l) if l == line => return,
                Ok(_) => {}
                Err(_) => panic!("{}: no `{line}` within {timeout:?}", self.name),
            }
        }
    }

    /// Waits for the process to exit by itself; returns its remaining stdout.
    fn finish(mut self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let err: Vec<String> = self.stderr.try_iter().collect();
                assert!(status.success(), "{} failed ({status}):\n{}", self.name, err.join("\n"));
                std::thread::sleep(Duration::from_millis(100));
                return self.stdout.try_iter().collect();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} did not finish within {timeout:?}", self.name);
    }

    /// SIGTERM; returns its remaining stdout (for peers, which print there).
    fn terminate_stdout(mut self) -> Vec<String> {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && self.child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(100));
        self.stdout.try_iter().collect()
    }

    /// SIGTERM; returns all its stderr.
    fn terminate(mut self) -> Vec<String> {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                let mut log = self.log.take();
                log.extend(self.stderr.try_iter());
                assert!(status.success(), "{} exited with {status}:\n{}", self.name, log.join("\n"));
                return log;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} ignored SIGTERM", self.name);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One sample as a Cyclone subscriber printed it.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    seq: u64,
    recv_ns: u64,
    latency_ns: i64,
}

fn arrivals(lines: &[String]) -> Vec<Arrival> {
    lines
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            Arrival {
                seq: v["seq"].as_u64().expect("seq"),
                recv_ns: v["recv_ns"].as_u64().expect("recv_ns"),
                latency_ns: v["latency_ns"].as_i64().expect("latency_ns"),
            }
        })
        .collect()
}

/// Arrivals per second between `from_ns` and `to_ns` (wall clock).
fn rate(a: &[Arrival], from_ns: u64, to_ns: u64) -> f64 {
    let n = a.iter().filter(|x| x.recv_ns >= from_ns && x.recv_ns < to_ns).count();
    n as f64 / ((to_ns - from_ns) as f64 / 1e9)
}

fn bridge(dir: &Path, config: &str) -> Proc {
    let path = dir.join("bridge.yaml");
    std::fs::write(&path, config).unwrap();
    Proc::spawn(
        "bauxite bridge",
        Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["bridge", "--config"])
            .arg(&path)
            .env("RUST_LOG", "info,rustdds=error"),
    )
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bauxite-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SETTLE: Duration = Duration::from_secs(30);

#[test]
fn cyclone_publisher_to_cyclone_subscribers_every_critical_sample_and_ten_hz_noncritical() {
    let test = "bridge_cyclone_forwarding";
    if !cyclone_or_skip(test) {
        return;
    }
    let domain = "61";
    let dir = temp_dir(test);
    let mcap = dir.join("bridge.mcap");
    let config = format!(
        "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
         telemetry: {{status_every: 1s, record: {}}}\n",
        mcap.display()
    );
    let bridge = bridge(&dir, &config);
    let critical = Proc::peer("critical subscriber", &["sub", "--domain", domain, "--topic", "rt/scan/critical"]);
    let noncritical = Proc::peer(
        "noncritical subscriber",
        &["sub", "--domain", domain, "--topic", "rt/scan/noncritical", "--best-effort"],
    );
    critical.wait_stdout("ready", SETTLE);
    noncritical.wait_stdout("ready", SETTLE);
    bridge.wait_stderr("rt/scan/critical: 1 matched reader(s)", SETTLE);
    bridge.wait_stderr("rt/scan/noncritical: 1 matched reader(s)", SETTLE);

    let n = 300; // 10 s at 30 Hz
    let publisher = Proc::peer(
        "publisher",
        &["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--count", &n.to_string()],
    );
    let published = publisher.finish(Duration::from_secs(60));
    let crit = arrivals(&critical.finish(Duration::from_secs(30)));
    let non = arrivals(&noncritical.finish(Duration::from_secs(30)));
    let log = bridge.terminate().join("\n");

    // Every sample on the critical path, in order, once.
    let seqs: Vec<u64> = crit.iter().map(|a| a.seq).collect();
    assert_eq!(seqs, (0..n).collect::<Vec<u64>>(), "critical path lost or reordered samples; publisher: {published:?}");
    // Noncritical: 10 Hz of the 30 Hz input (the token bucket, not 7.5–9 Hz).
    assert!((95..=102).contains(&non.len()), "{} noncritical samples of {n} at 30 Hz; bridge log:\n{log}", non.len());
    let (first, last) = (non.first().unwrap().recv_ns, non.last().unwrap().recv_ns);
    let r = rate(&non, first + 1_000_000_000, last - 1_000_000_000);
    assert!((9.5..=10.5).contains(&r), "noncritical rate {r:.2} Hz");
    // Samples arrive intact (the Cyclone reader decoded them) and promptly.
    let mut lat: Vec<i64> = crit.iter().map(|a| a.latency_ns).collect();
    lat.sort_unstable();
    let p50_ms = lat[lat.len() / 2] as f64 / 1e6;
    assert!(p50_ms < 20.0, "critical p50 {p50_ms:.2} ms");

    // Status lines and the recording carry the rates.
    assert!(log.contains("rt/scan in "), "no status line:\n{log}");
    let rec = bauxite_telemetry::read(&mcap).unwrap();
    let paths: Vec<&serde_json::Value> =
        rec.messages.iter().filter(|m| m.topic == "/bauxite/bridge/paths").map(|m| &m.value).collect();
    assert!(paths.len() >= 8, "{} path reports", paths.len());
    let busiest = paths.iter().map(|p| p["critical"]["rate_hz"].as_f64().unwrap()).fold(0.0, f64::max);
    // 30 Hz; a publisher starved across a 1 s report boundary catches up in the next report,
    // so one report can show up to a few samples more on a loaded machine.
    assert!((28.0..=40.0).contains(&busiest), "recorded critical rate {busiest}");
    assert!(rec.messages.iter().any(|m| m.topic == "/bauxite/bridge/supervisor"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_slow_probe_responder_is_demoted_and_the_noncritical_path_drops_to_three_hz() {
    let test = "bridge_cyclone_classifier";
    if !cyclone_or_skip(test) {
        return;
    }
    let domain = "62";
    let dir = temp_dir(test);
    let mcap = dir.join("bridge.mcap");
    let config = format!(
        "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
         subscribers:\n  - {{name: far_logger, topics: [/scan]}}\n\
         telemetry: {{status_every: 1s, record: {}}}\n",
        mcap.display()
    );
    let bridge = bridge(&dir, &config);
    // The noncritical subscriber's host answers probes 80 ms late: above the 50 ms demotion RTT.
    let responder = Proc::spawn(
        "probe responder",
        Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["probe-responder", "--name", "far_logger", "--answer-delay", "80ms", "--config"])
            .arg(dir.join("bridge.yaml")),
    );
    let critical = Proc::peer("critical subscriber", &["sub", "--domain", domain, "--topic", "rt/scan/critical"]);
    let noncritical = Proc::peer(
        "noncritical subscriber",
        &["sub", "--domain", domain, "--topic", "rt/scan/noncritical", "--best-effort"],
    );
    critical.wait_stdout("ready", SETTLE);
    noncritical.wait_stdout("ready", SETTLE);
    bridge.wait_stderr("rt/scan/noncritical: 1 matched reader(s)", SETTLE);
    bridge.wait_stderr("rt/scan/critical: 1 matched reader(s)", SETTLE);
    // Three consecutive bad evaluations (1 s apart, after 10 probes) demote it.
    bridge.wait_stderr("subscriber far_logger: UNKNOWN → NONCRITICAL", SETTLE);
    bridge.wait_stderr("/scan: critical on, noncritical 3 Hz", Duration::from_secs(5));

    let n = 300;
    let publisher = Proc::peer(
        "publisher",
        &["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--count", &n.to_string()],
    );
    publisher.finish(Duration::from_secs(60));
    let crit = arrivals(&critical.finish(Duration::from_secs(30)));
    let non = arrivals(&noncritical.finish(Duration::from_secs(30)));
    drop(responder);
    let log = bridge.terminate().join("\n");

    assert_eq!(crit.len() as u64, n, "the critical path is untouched by the classification");
    // 3 Hz of a 30 Hz input for 10 s: 30 samples (one more for a token carried over).
    assert!((28..=32).contains(&non.len()), "{} noncritical samples; log:\n{log}", non.len());
    assert!(!log.contains("NONCRITICAL → CRITICAL"), "no flapping:\n{log}");
    // The recording has every evaluation, and the one transition with the reading behind it.
    let rec = bauxite_telemetry::read(&mcap).unwrap();
    let evaluations: Vec<&serde_json::Value> =
        rec.messages.iter().filter(|m| m.topic == "/bauxite/bridge/classifier").map(|m| &m.value).collect();
    assert!(evaluations.len() >= 10, "{} evaluations recorded", evaluations.len());
    let transitions: Vec<&serde_json::Value> =
        evaluations.iter().flat_map(|e| e["transitions"].as_array().unwrap()).collect();
    assert_eq!(transitions.len(), 1, "{transitions:?}");
    assert_eq!(transitions[0]["to"], "NONCRITICAL");
    let rtt = transitions[0]["reading"]["rtt_ms"].as_f64().unwrap();
    // 80 ms of deliberate delay plus loopback and scheduling; a mean over the window's probes.
    assert!((80.0..160.0).contains(&rtt), "recorded RTT {rtt} ms for 80 ms answers");
    let last = evaluations.last().unwrap();
    assert_eq!(last["subscribers"][0]["state"], "NONCRITICAL");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_frozen_critical_reader_never_stalls_the_publisher_and_the_bridge_recovers_by_itself() {
    let test = "bridge_cyclone_frozen_reader";
    if !cyclone_or_skip(test) {
        return;
    }
    let domain = "63";
    let dir = temp_dir(test);
    // A 32-sample window (about 1 s at 30 Hz) fills long before the frozen reader's lease ends.
    let config = format!(
        "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan, qos: {{critical_window: 32}}}}\n\
         telemetry: {{status_every: 1s}}\n"
    );
    let bridge = bridge(&dir, &config);
    let idle = ["--idle", "60", "--timeout", "90"];
    let sub = |name: &str, topic: &str, extra: &[&str]| {
        let mut args = vec!["sub", "--domain", domain, "--topic", topic];
        args.extend_from_slice(&idle);
        args.extend_from_slice(extra);
        Proc::peer(name, &args)
    };
    let healthy = sub("healthy critical subscriber", "rt/scan/critical", &[]);
    let frozen = sub("frozen critical subscriber", "rt/scan/critical", &[]);
    let noncritical = sub("noncritical subscriber", "rt/scan/noncritical", &["--best-effort"]);
    let diag = Proc::peer(
        "diagnostics subscriber",
        &["diag", "--domain", domain, "--topic", "rt/diagnostics", "--timeout", "60"],
    );
    for p in [&healthy, &frozen, &noncritical, &diag] {
        p.wait_stdout("ready", SETTLE);
    }
    bridge.wait_stderr("rt/scan/critical: 2 matched reader(s)", SETTLE);
    bridge.wait_stderr("rt/scan/noncritical: 1 matched reader(s)", SETTLE);

    let n = 900; // 30 s at 30 Hz
    let publisher = Proc::peer(
        "publisher",
        &["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--count", &n.to_string()],
    );
    std::thread::sleep(Duration::from_secs(3));
    // A reader that stops acknowledging: the critical writer's window fills and writes block.
    let _ = Command::new("kill").arg("-STOP").arg(frozen.child.id().to_string()).status();
    bridge.wait_stderr("supervisor: NORMAL → DEGRADED", Duration::from_secs(10));
    bridge.wait_stderr("supervisor: DEGRADED → EMERGENCY", Duration::from_secs(15));
    // Cyclone's 10 s lease runs out for the frozen participant; the bridge steps down by itself.
    bridge.wait_stderr("supervisor: EMERGENCY → DEGRADED", Duration::from_secs(30));
    bridge.wait_stderr("supervisor: DEGRADED → NORMAL", Duration::from_secs(15));

    let published: serde_json::Value = serde_json::from_str(&publisher.finish(Duration::from_secs(60))[0]).unwrap();
    let seconds = published["seconds"].as_f64().unwrap();
    // The publisher paces on absolute times (29.97 s for 900 samples), so scheduling delays do
    // not accumulate; a publisher held back by the frozen reader would lose seconds (the 10 s
    // lease), so 33 s leaves a loaded machine room without hiding that.
    assert!(seconds < 33.0, "the publisher was held back: {n} samples took {seconds:.1} s");
    drop(frozen);
    let log = bridge.terminate().join("\n");
    let ok = arrivals(&healthy.terminate_stdout());
    let non = arrivals(&noncritical.terminate_stdout());
    let diag: Vec<serde_json::Value> = diag
        .terminate_stdout()
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    // The healthy critical reader gets the stream back once the frozen one is gone, to the end.
    let last = ok.last().map_or(0, |a| a.seq);
    assert_eq!(last, n - 1, "the healthy critical reader did not recover; log:\n{log}");
    let after_recovery = ok.iter().filter(|a| a.seq >= n - 150).count();
    assert!(after_recovery >= 145, "only {after_recovery} of the last 150 samples reached the healthy reader");
    // Noncritical was suspended in DEGRADED and EMERGENCY, and forwards at 10 Hz again after.
    assert!(non.iter().any(|a| a.seq >= n - 30), "noncritical did not resume");
    // Diagnostics told a ROS 2 (Cyclone) reader about each mode, EMERGENCY as ERROR.
    let levels: Vec<u64> = diag.iter().map(|d| d["level"].as_u64().unwrap()).collect();
    assert!(levels.contains(&2), "no ERROR diagnostics: {levels:?}");
    assert!(levels.contains(&1), "no WARN diagnostics: {levels:?}");
    assert_eq!(levels.last(), Some(&0), "diagnostics do not end OK: {levels:?}");
    let emergency = diag.iter().find(|d| d["level"] == 2).unwrap();
    assert_eq!(emergency["values"]["mode"], "EMERGENCY");
    assert!(emergency["message"].as_str().unwrap().contains("forwarding stopped"), "{emergency}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` (`-STOP`, `-CONT`) to a process.
fn signal(p: &Proc, signal: &str) {
    let _ = Command::new("kill").arg(signal).arg(p.child.id().to_string()).status();
}

/// Issue 31: two bridges of one hot-standby group on one host, a Cyclone publisher at 30 Hz
/// and a RELIABLE Cyclone subscriber on the critical output. The active bridge is SIGKILLed
/// and restarted (it rejoins as the standby), the bridge then active is SIGSTOPped past its
/// lease and resumed (split brain: it must stand down to the one that took over), and the
/// one active after that is SIGKILLed: three takeovers. The subscriber must see every sample
/// at most once and in order, at most three lost per takeover (the one being written when
/// the active bridge died is the only one the design can lose), and no gap beyond 600 ms.
/// The gap's target is 200 ms (`bauxite eval bridge --scenario bridge-failover` measures it);
/// the takeover itself comes one 80 ms lease after the last heartbeat, and 600 ms leaves a
/// loaded 2-core machine, with this binary's other tests and four Python and Rust DDS
/// processes beside it, room for a late publisher, subscriber or election thread.
#[test]
fn a_hot_standby_takes_over_on_kill_and_pause_with_no_duplicates_and_few_losses() {
    let test = "bridge_hot_standby";
    if !cyclone_or_skip(test) {
        return;
    }
    let domain = "65";
    let config = format!(
        "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
         telemetry: {{status_every: 1s}}\n\
         redundancy: {{group: {test}}}\n"
    );
    let dirs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|n| temp_dir(&format!("{test}-{n}"))).collect();
    let first = bridge(&dirs[0], &config);
    first.wait_stderr("role active", SETTLE);
    let second = bridge(&dirs[1], &config);
    second.wait_stderr("role standby", SETTLE);
    let critical = Proc::peer(
        "critical subscriber",
        &["sub", "--domain", domain, "--topic", "rt/scan/critical", "--timeout", "120", "--idle", "5"],
    );
    critical.wait_stdout("ready", SETTLE);
    for b in [&first, &second] {
        b.wait_stderr("rt/scan/critical: 1 matched reader(s)", SETTLE);
    }
    let n = 900; // 30 s at 30 Hz: the three takeovers take about 12 s, discovery included
    let publisher = Proc::peer(
        "publisher",
        &["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--count", &n.to_string()],
    );
    std::thread::sleep(Duration::from_secs(4));
    // 1. The active bridge is killed; the standby takes over; the killed one comes back.
    drop(first);
    second.wait_stderr("role active: took over", Duration::from_secs(5));
    let third = bridge(&dirs[2], &config);
    third.wait_stderr("role standby", SETTLE);
    third.wait_stderr("rt/scan/critical: 1 matched reader(s)", SETTLE);
    std::thread::sleep(Duration::from_secs(2));
    // 2. Split brain: the active bridge is paused past its lease and resumed.
    signal(&second, "-STOP");
    third.wait_stderr("role active: took over", Duration::from_secs(5));
    signal(&second, "-CONT");
    // It stands down on the first heartbeat it hears (having written nothing since its gate
    // closed, half a lease after its last heartbeat).
    second.wait_stderr("role standby: stood down", Duration::from_secs(5));
    std::thread::sleep(Duration::from_secs(3));
    // 3. The active bridge is killed again; the one paused before takes over.
    drop(third);
    second.wait_stderr("term 4,", Duration::from_secs(5));
    publisher.finish(Duration::from_secs(60));
    let got = arrivals(&critical.finish(Duration::from_secs(30)));
    let log = second.terminate().join("\n");

    let seqs: Vec<u64> = got.iter().map(|a| a.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "a sample twice or out of order: {seqs:?}\n{log}");
    let lost = n as usize - seqs.len();
    assert!(lost <= 9, "{lost} samples lost over three takeovers: {seqs:?}\n{log}");
    let worst_gap_ms = got.windows(2).map(|w| (w[1].recv_ns - w[0].recv_ns) as f64 / 1e6).fold(0.0, f64::max);
    eprintln!("hot standby: {} of {n} received, {lost} lost, worst gap {worst_gap_ms:.0} ms", seqs.len());
    assert!(worst_gap_ms <= 600.0, "worst gap {worst_gap_ms:.0} ms\n{log}");
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_bad_config_names_file_line_and_key_and_starts_nothing() {
    let dir = temp_dir("bridge_bad_config");
    let path = dir.join("bridge.yaml");
    std::fs::write(&path, "topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\npolicy:\n  degraded_hz: 30\n")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bauxite")).args(["bridge", "--config"]).arg(&path).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bridge.yaml:4: `policy.degraded_hz`: must not exceed noncritical_hz"), "{err}");
    assert!(!err.contains("forwarding"), "nothing may start from a bad file: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `bauxite` with `args` (and `env`) and waits at most `limit` for it to exit; kills it and
/// panics if it does not.
fn run_within(args: &[&std::ffi::OsStr], env: &[(&str, &str)], limit: Duration) -> std::process::Output {
    output_within(Command::new(env!("CARGO_BIN_EXE_bauxite")).args(args).envs(env.iter().copied()), limit)
}

/// Issue 10 #2: a panic in a worker thread used to leave the process alive with no sockets.
/// The fault is injected (debug builds only, `BAUXITE_BRIDGE_FAULT`) since no config can
/// cause one any more. The 30 s limit only bounds a hang: the bridge starts three DDS
/// participants on loopback (well under a second unloaded) before the control thread panics.
#[test]
fn a_panicking_worker_thread_ends_the_process_with_a_failure() {
    let dir = temp_dir("bridge_worker_panic");
    let path = dir.join("bridge.yaml");
    std::fs::write(
        &path,
        "dds: {domain_id: 64, interfaces: [127.0.0.1]}\n\
         topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\n",
    )
    .unwrap();
    let out = run_within(
        &["bridge".as_ref(), "--config".as_ref(), path.as_os_str()],
        &[("BAUXITE_BRIDGE_FAULT", "control-panic")],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "exited with {}:\n{err}", out.status);
    // The panic hook aborts at once (SIGABRT), rather than waiting for anyone to notice.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "exited with {}:\n{err}", out.status);
    assert!(err.contains("panicked") && err.contains("injected fault"), "{err}");
    assert!(err.contains("bx-control"), "the panic names its thread:\n{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10 #10: an unwritable recording is refused before any DDS participant exists.
#[test]
fn an_unwritable_recording_is_refused_before_dds_starts() {
    let dir = temp_dir("bridge_bad_record");
    let path = dir.join("bridge.yaml");
    let record = dir.join("no-such-dir/bridge.mcap");
    std::fs::write(
        &path,
        format!(
            "dds: {{domain_id: 65, interfaces: [127.0.0.1]}}\n\
             topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
             telemetry: {{record: {}}}\n",
            record.display()
        ),
    )
    .unwrap();
    let out = run_within(&["bridge".as_ref(), "--config".as_ref(), path.as_os_str()], &[], Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&record.display().to_string()), "the error names the recording:\n{err}");
    assert!(!err.contains("forwarding"), "nothing may start: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10 #10: `bridge bench --out` that cannot be written fails before any measuring.
#[test]
fn an_unwritable_bench_output_is_refused_before_the_benchmark() {
    let dir = temp_dir("bridge_bad_bench_out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out_dir = file.join("out");
    let out = run_within(
        &["bridge".as_ref(), "bench".as_ref(), "--out".as_ref(), out_dir.as_os_str()],
        &[],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("creating the output directory"), "{err}");
    assert!(!file.join("out").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10 #7: with `interfaces: [127.0.0.1]` every socket used to bind 0.0.0.0, and
/// datagrams from another network namespace reached them. The bridge runs in a namespace of
/// its own, joined to a second one by a veth pair; each of its ports, probed from the second
/// namespace at the veth address, must be closed (ICMP port unreachable, seen as
/// ECONNREFUSED: the datagram arrived and no socket took it).
#[test]
fn dds_interfaces_binds_every_socket_to_that_address_and_nothing_else_hears() {
    use bauxite_netlab::connect;
    use bauxite_sys::{Netns, root_or_skip, unique_name};
    if !root_or_skip("dds_interfaces_binds_every_socket_to_that_address_and_nothing_else_hears") {
        return;
    }
    let bridge_ns = Netns::create(&unique_name("bridge")).unwrap();
    let other_ns = Netns::create(&unique_name("other")).unwrap();
    let id = std::process::id() % 100_000;
    let (bridge_if, other_if) = (format!("bxb{id}"), format!("bxo{id}"));
    connect(&bridge_ns, &bridge_if, "10.77.0.1/24", &other_ns, &other_if, "10.77.0.2/24").unwrap();
    // Answer every closed port: the kernel's ICMP rate limit would otherwise drop some answers.
    bridge_ns.sysctl("net.ipv4.icmp_ratelimit", "0").unwrap();

    let dir = temp_dir("bridge_interfaces");
    let path = dir.join("bridge.yaml");
    std::fs::write(
        &path,
        "dds: {domain_id: 66, interfaces: [127.0.0.1]}\n\
         topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\n",
    )
    .unwrap();
    let bridge = Proc::spawn(
        "bauxite bridge",
        bridge_ns.command(env!("CARGO_BIN_EXE_bauxite"), &["bridge", "--config"]).arg(&path),
    );
    bridge.wait_stderr("bridge running", SETTLE);

    // `ip netns exec` execs the command, so the child's pid is the bridge's.
    let sockets: Vec<std::net::SocketAddr> =
        bauxite_sys::udp_sockets(bridge.child.id()).unwrap().iter().map(|s| s.local).collect();
    assert!(sockets.len() >= 6, "the bridge's UDP sockets: {sockets:?}");
    let loopback: std::net::IpAddr = [127, 0, 0, 1].into();
    assert!(sockets.iter().all(|s| s.ip() == loopback), "every socket binds 127.0.0.1: {sockets:?}");

    let ports: Vec<u16> = sockets.iter().map(std::net::SocketAddr::port).collect();
    let answers = other_ns.run(move || {
        ports
            .into_iter()
            .map(|port| {
                let socket = std::net::UdpSocket::bind("10.77.0.2:0").unwrap();
                socket.connect(("10.77.0.1", port)).unwrap();
                socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                socket.send(b"RTPS\x02\x05\x01\x0f not for you").unwrap();
                (port, socket.recv(&mut [0; 64]).map_err(|e| e.kind()))
            })
            .collect::<Vec<_>>()
    });
    for (port, answer) in answers {
        assert_eq!(answer, Err(std::io::ErrorKind::ConnectionRefused), "port {port} from the other namespace");
    }
    bridge.terminate();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10 #9: a FIFO used to block `bauxite bridge --config` forever, and `/dev/zero` to
/// grow it without end. Both go through core's `read_config` (regular files only, size
/// capped), for the bridge and the probe responder alike. The refusal reads nothing, so it
/// takes a process start; the 10 s limit only tells a refusal from the old hang on a loaded
/// machine.
#[test]
fn a_fifo_or_dev_zero_as_config_is_refused_at_once() {
    let dir = temp_dir("bridge_special_config");
    let fifo = dir.join("bridge.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    for (path, kind) in [(fifo.as_path(), "a FIFO"), (Path::new("/dev/zero"), "a device")] {
        for command in ["bridge", "probe-responder"] {
            let out =
                run_within(&[command.as_ref(), "--config".as_ref(), path.as_os_str()], &[], Duration::from_secs(10));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{command} --config {}: {err}", path.display());
            assert!(err.contains(&path.display().to_string()) && err.contains(kind), "{command}: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 14 item 1: a real Prometheus (Debian's) scrapes `bauxite bridge --metrics` on loopback
/// every second, and its HTTP API shows the forwarded-samples counter rising while a Cyclone
/// publisher's samples flow, then holding exactly the number published.
#[test]
fn a_real_prometheus_scrapes_the_bridge_and_sees_its_counters_rise() {
    let test = "bridge_prometheus";
    if !cyclone_or_skip(test) || !prometheus_or_skip(test) {
        return;
    }
    let domain = "71";
    let dir = temp_dir(test);
    let (metrics_port, prom_port) = (free_port(), free_port());
    let config = format!(
        "dds: {{domain_id: {domain}, interfaces: [127.0.0.1]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
         telemetry: {{status_every: 1s}}\n"
    );
    std::fs::write(dir.join("bridge.yaml"), &config).unwrap();
    let bridge = Proc::spawn(
        "bauxite bridge",
        Command::new(env!("CARGO_BIN_EXE_bauxite"))
            .args(["bridge", "--metrics", &metrics_port.to_string(), "--config"])
            .arg(dir.join("bridge.yaml"))
            .env("RUST_LOG", "info,rustdds=error"),
    );
    // A bare port serves on loopback only.
    bridge.wait_stderr(&format!("metrics on http://127.0.0.1:{metrics_port}/metrics"), SETTLE);
    let target = format!("127.0.0.1:{metrics_port}");
    std::fs::write(dir.join("prometheus.yml"), prometheus::scrape_config("bauxite_bridge", &target)).unwrap();
    let _prometheus = Proc::spawn("prometheus", Command::new(PROMETHEUS).args(prometheus::args(&dir, prom_port)));
    let limit = Duration::from_secs(60);
    prom_until(prom_port, "up{job=\"bauxite_bridge\"}", limit, |v| v == 1.0);
    let forwarded = "bauxite_bridge_samples_forwarded_total{topic=\"/scan\",path=\"critical\"}";
    assert_eq!(prom_until(prom_port, forwarded, limit, |_| true), 0.0, "nothing published yet");
    prom_until(prom_port, "bauxite_bridge_supervisor_mode{mode=\"normal\"}", limit, |v| v == 1.0);

    let critical = Proc::peer("critical subscriber", &["sub", "--domain", domain, "--topic", "rt/scan/critical"]);
    critical.wait_stdout("ready", SETTLE);
    bridge.wait_stderr("rt/scan/critical: 1 matched reader(s)", SETTLE);
    let n = 450; // 15 s at 30 Hz: a dozen scrapes while samples flow
    let publisher = Proc::peer(
        "publisher",
        &["pub", "--domain", domain, "--topic", "rt/scan", "--hz", "30", "--count", &n.to_string()],
    );
    // While samples flow, Prometheus sees the counter rise, scrape after scrape.
    let first = prom_until(prom_port, forwarded, limit, |v| v > 0.0);
    let second = prom_until(prom_port, forwarded, limit, |v| v > first);
    assert!(second < n as f64, "{second} of {n} already: the rise was not seen while samples flowed");
    publisher.finish(Duration::from_secs(60));
    critical.finish(Duration::from_secs(30));
    // Then it holds exactly what was forwarded: every sample, once.
    prom_until(prom_port, forwarded, limit, |v| v == n as f64);
    let received = "bauxite_bridge_samples_received_total{topic=\"/scan\"}";
    prom_until(prom_port, received, limit, |v| v == n as f64);
    let latency = "bauxite_bridge_forward_latency_seconds_count{topic=\"/scan\",path=\"critical\"}";
    prom_until(prom_port, latency, limit, |v| v == n as f64);
    let rate = "rate(bauxite_bridge_samples_forwarded_total{path=\"critical\"}[10s])";
    assert!(prom_query(prom_port, rate).is_some(), "Prometheus computes a rate from the series");
    drop(_prometheus);
    bridge.terminate();
    let _ = std::fs::remove_dir_all(&dir);
}

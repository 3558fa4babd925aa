//! Seed 004's evaluation peers (`crates/eval/peers/`) as test processes: one per DDS
//! implementation, each speaking the peer protocol of `crates/eval/peers/README.md`
//! (`pub`/`sub`, one `{"ev": ...}` JSON line per event on stdout).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bauxite_sys::Netns;

/// A DDS implementation with a peer script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implementation {
    /// Eclipse Cyclone DDS through PyPI's `cyclonedds`, run with `python3`.
    Cyclone,
    /// rclpy on rmw_fastrtps_cpp (Fast DDS 2.14), from the ROS 2 venv.
    Ros2FastDds,
}

impl Implementation {
    /// The interpreter and the script of this implementation's peer.
    pub fn command(self) -> (PathBuf, PathBuf) {
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/peers");
        match self {
            Self::Cyclone => ("python3".into(), peers.join("cyclonedds_peer.py")),
            Self::Ros2FastDds => (ros2_python(), peers.join("ros2_peer.py")),
        }
    }

    /// What must import for the peer to run, and who installs it.
    fn probe(self) -> (&'static str, &'static str) {
        match self {
            Self::Cyclone => ("import cyclonedds.domain", "Python's cyclonedds"),
            Self::Ros2FastDds => ("import rclpy, sensor_msgs.msg", "rclpy and sensor_msgs in the ROS 2 venv"),
        }
    }
}

/// The Python of the ROS 2 venv `scripts/install-deps` makes: `BAUXITE_ROS2_VENV`, by default
/// /opt/bauxite/ros2-venv.
pub fn ros2_python() -> PathBuf {
    let venv = std::env::var_os("BAUXITE_ROS2_VENV").unwrap_or_else(|| "/opt/bauxite/ros2-venv".into());
    PathBuf::from(venv).join("bin/python")
}

/// Whether every implementation in `needed` can run; panics under CI=true if one cannot.
pub fn peers_or_skip(test: &str, needed: &[Implementation]) -> bool {
    for &implementation in needed {
        let (python, _) = implementation.command();
        let (probe, what) = implementation.probe();
        let ok = Command::new(&python)
            .args(["-c", probe])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            continue;
        }
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "{test} needs {what} ({}; scripts/install-deps installs it), and CI=true: not a skip",
                python.display()
            );
        }
        eprintln!("skipping {test}: no {what} ({}); run scripts/install-deps", python.display());
        return false;
    }
    true
}

/// One line of the peer protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The peer's DDS entities exist.
    Ready,
    /// One publish attempt: its sequence number, wall-clock time (the sample's stamp), whether
    /// the write succeeded and how long the call took.
    Pub { seq: u64, t_ns: u64, ok: bool, call_ns: u64 },
    /// One sample received: its sequence number, its header stamp and the wall-clock arrival.
    Recv { seq: u64, stamp_ns: u64, recv_ns: u64 },
}

impl Event {
    /// Parses one stdout line; anything that is not a protocol line is an error naming it.
    pub fn parse(line: &str) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{line:?}: not JSON: {e}"))?;
        let field = |k: &str| v[k].as_u64().ok_or_else(|| format!("{line:?}: no integer `{k}`"));
        match v["ev"].as_str() {
            Some("ready") => Ok(Self::Ready),
            Some("pub") => Ok(Self::Pub {
                seq: field("seq")?,
                t_ns: field("t_ns")?,
                ok: v["ok"].as_bool().ok_or_else(|| format!("{line:?}: no boolean `ok`"))?,
                call_ns: field("call_ns")?,
            }),
            Some("recv") => {
                Ok(Self::Recv { seq: field("seq")?, stamp_ns: field("stamp_ns")?, recv_ns: field("recv_ns")? })
            }
            _ => Err(format!("{line:?}: `ev` is not ready, pub or recv")),
        }
    }
}

/// A running peer, killed when dropped however the test ends.
pub struct Peer {
    child: Child,
    name: String,
    lines: mpsc::Receiver<String>,
    events: Vec<Event>,
    /// Stderr, read on a thread all along (a full pipe would block the peer), whole at exit.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Peer {
    /// Starts `implementation`'s peer with `args` (`pub ...` or `sub ...`).
    pub fn spawn(name: &str, implementation: Implementation, args: &[&str]) -> Self {
        Self::spawn_in(&Netns::current(), name, implementation, args)
    }

    /// Starts `implementation`'s peer with `args` in network namespace `ns` (`ip netns exec`
    /// execs the peer, so signals reach it).
    pub fn spawn_in(ns: &Netns, name: &str, implementation: Implementation, args: &[&str]) -> Self {
        let (python, script) = implementation.command();
        let mut child = ns
            .command(&python, &[])
            .arg(&script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name} ({} {}): {e}", python.display(), script.display()));
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut pipe = child.stderr.take().expect("piped");
        let stderr = std::thread::spawn(move || {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut err);
            err
        });
        Self { child, name: name.to_string(), lines, events: Vec::new(), stderr: Some(stderr) }
    }

    fn take_line(&mut self, line: &str) {
        let event = Event::parse(line).unwrap_or_else(|e| panic!("{}: {e}", self.name));
        self.events.push(event);
    }

    /// Waits for the `ready` line, which must come first.
    pub fn wait_ready(&mut self, timeout: Duration) {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.take_line(&line);
                assert_eq!(self.events, [Event::Ready], "{}: the first line is ready", self.name);
            }
            Err(_) => {
                let err = self.stderr_now();
                panic!("{}: not ready within {timeout:?}:\n{err}", self.name)
            }
        }
    }

    /// Waits for the first `recv` line: the subscriber has matched a writer and samples flow.
    pub fn wait_recv(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.events.iter().any(|e| matches!(e, Event::Recv { .. })) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.take_line(&line),
                Err(_) => {
                    let err = self.stderr_now();
                    panic!("{}: no sample within {timeout:?}:\n{err}", self.name)
                }
            }
        }
    }

    /// Sends `signal` (e.g. "STOP", "CONT", "TERM") to the peer.
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill").arg(format!("-{signal}")).arg(self.child.id().to_string()).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill -{signal} {}", self.name);
    }

    /// Waits up to `timeout` for the peer to exit by itself, which must be with status 0, and
    /// returns every event it printed.
    pub fn finish(mut self, timeout: Duration) -> Vec<Event> {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "{} still ran after {timeout:?}", self.name);
            std::thread::sleep(Duration::from_millis(50));
        };
        let err = self.stderr_now();
        assert!(status.success(), "{} exited with {status}:\n{err}", self.name);
        // The reader thread ends at EOF, which follows the exit.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.take_line(&line);
        }
        std::mem::take(&mut self.events)
    }

    /// SIGTERM, then as `finish`: the protocol's peers flush and exit 0 on it.
    pub fn terminate(self, timeout: Duration) -> Vec<Event> {
        self.signal("TERM");
        self.finish(timeout)
    }

    /// Whatever the peer wrote to stderr, once it has exited (empty while it runs).
    fn stderr_now(&mut self) -> String {
        if self.child.try_wait().ok().flatten().is_none() {
            return String::new();
        }
        self.stderr.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The publish attempts among `events`, as (seq, t_ns, ok, call_ns).
pub fn attempts(events: &[Event]) -> Vec<(u64, u64, bool, u64)> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Pub { seq, t_ns, ok, call_ns } => Some((seq, t_ns, ok, call_ns)),
            _ => None,
        })
        .collect()
}

/// The samples received among `events`, as (seq, stamp_ns, recv_ns).
pub fn arrivals(events: &[Event]) -> Vec<(u64, u64, u64)> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Recv { seq, stamp_ns, recv_ns } => Some((seq, stamp_ns, recv_ns)),
            _ => None,
        })
        .collect()
}

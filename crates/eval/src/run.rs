//! One run: a fresh testbed, the bridge and its probe responder (bridge and ablation runs),
//! the two subscribers and the publisher, each a process in its namespace; the toggle's
//! switches; then everything stopped and its lines collected.
//!
//! Every process is held by a [`ChildGuard`] and the namespaces by the [`Testbed`], so an
//! error, a panic or Ctrl-C (the `stop` flag) stops the processes (SIGTERM, then SIGKILL) and
//! deletes the namespaces.

use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bauxite_netlab::emulator::EmulatorReport;
use bauxite_sys::{ChildGuard, Netns, ProcStat};

use crate::EvalError;
use crate::implementation::{Implementation, PeerLauncher};
use crate::peer::PeerEvent;
use crate::scenario::{Lengths, Scenario, Setup, Severity, Timing};
use crate::testbed::{BRIDGE_ADDR, CRITICAL_ADDR, PUB_ADDR, SLOW_ADDR, Testbed};

/// The DDS domain of every run (the namespaces keep runs apart from anything else).
pub const DOMAIN: u16 = 13;
/// How long a peer may take to print `ready` (Python imports on a loaded machine).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long subscribers keep reading after the publisher stops (RELIABLE repairs).
const DRAIN: Duration = Duration::from_secs(1);
/// SIGTERM's grace before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);
/// Every process off the critical path runs at this niceness (and, under
/// [`Scheduling::Niced`], every process), so that other work on the machine (builds, at the
/// default 0 or nicer) does not enter the figures: the paper's harness had its machine to
/// itself. `nice` and `chrt` exec the program, so the pid a guard holds is the program's.
const NICENESS: &str = "-10";
/// The SCHED_FIFO priority of the critical path under [`Scheduling::Realtime`]: the middle of
/// 1–99, where ROS 2's real-time guidance puts control threads, above every SCHED_OTHER task
/// and below the kernel's own real-time threads (99).
const FIFO_PRIORITY: &str = "50";

/// How the run's processes are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduling {
    /// The critical path (publisher, bridge, critical subscriber) under SCHED_FIFO, and idle
    /// CPUs polling rather than halting (`CpuLatencyRequest` of 0 µs, held by
    /// [`crate::evaluate`]), as a robot runs its control loop; the slow subscriber and the
    /// probe responder at nice -10. On a 2-core machine the slow subscriber decodes the same
    /// scan at the same instant as the critical one, and the link emulator relays its frames;
    /// on a quiet virtual machine every process a sample crosses wakes a halted CPU through
    /// the hypervisor: without this, the critical latency measures the testbed, not the bridge.
    Realtime,
    /// Every process at nice -10, as ordinary processes.
    Niced,
}

impl Scheduling {
    /// For the summary: how the critical path ran.
    pub fn describe(self) -> String {
        match self {
            Self::Realtime => format!(
                "publisher, bridge and critical subscriber under SCHED_FIFO {FIFO_PRIORITY}; slow subscriber and probe responder at nice {NICENESS}; idle CPUs polling (cpu_dma_latency 0)"
            ),
            Self::Niced => format!("every process at nice {NICENESS}"),
        }
    }

    /// A command running `program args` in `ns`, scheduled for its place in the run.
    fn command(self, ns: &Netns, on_critical_path: bool, program: &Path, args: &[&str]) -> std::process::Command {
        let program = program.to_string_lossy();
        let (launcher, mut line) = match (self, on_critical_path) {
            (Self::Realtime, true) => ("chrt", vec!["--fifo", FIFO_PRIORITY]),
            _ => ("nice", vec!["-n", NICENESS]),
        };
        line.push(&program);
        line.extend_from_slice(args);
        ns.command(launcher, &line)
    }
}

/// What one run produced: the peers' lines and the bridge's recording, as they came.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The scenario.
    pub scenario: Scenario,
    /// The implementation of the three peers.
    pub implementation: Implementation,
    /// Its timing.
    pub timing: Timing,
    /// CLOCK_REALTIME when the publisher became ready.
    pub start_ns: u64,
    /// The publisher's attempts.
    pub published: Vec<PeerEvent>,
    /// The critical subscriber's samples.
    pub critical: Vec<PeerEvent>,
    /// The slow (noncritical) subscriber's samples.
    pub slow: Vec<PeerEvent>,
    /// CLOCK_REALTIME of each switch of the impairment: (time, impaired after it); every run
    /// starts clean.
    pub switches: Vec<(u64, bool)>,
    /// CLOCK_REALTIME of each SIGKILL of the active bridge (failover runs).
    pub kills: Vec<u64>,
    /// The bridge's MCAP recording, when a bridge ran.
    pub bridge_recording: Option<PathBuf>,
    /// The bridge's CPU over its life (percent of one core) and peak resident memory (MiB).
    pub bridge_usage: Option<(f64, f64)>,
    /// What the emulator carried and lost each way.
    pub link: Option<EmulatorReport>,
    /// Whether the publisher, the bridge (if any) and the critical subscriber ran under
    /// SCHED_FIFO, as the kernel reported once all were ready.
    pub critical_path_fifo: bool,
    /// The run's directory (logs, configs).
    pub dir: PathBuf,
}

/// A peer process and the thread reading its lines.
struct Peer {
    name: String,
    log: PathBuf,
    guard: ChildGuard,
    ready: mpsc::Receiver<()>,
    lines: Option<JoinHandle<Vec<PeerEvent>>>,
}

impl Peer {
    /// Starts `line` in `ns`, scheduled by `scheduling` for its place; stderr goes to
    /// `<dir>/<name>.log`.
    fn spawn(
        ns: &Netns,
        (scheduling, on_critical_path): (Scheduling, bool),
        line: &[String],
        dir: &Path,
        name: &str,
    ) -> Result<Self, EvalError> {
        let log = dir.join(format!("{name}.log"));
        let stderr = std::fs::File::create(&log).map_err(EvalError::io(format!("creating {}", log.display())))?;
        let args: Vec<&str> = line[1..].iter().map(String::as_str).collect();
        let mut child = scheduling
            .command(ns, on_critical_path, Path::new(&line[0]), &args)
            .env("ROS_DOMAIN_ID", DOMAIN.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(EvalError::io(format!("starting the {name} peer ({})", line.join(" "))))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let guard = ChildGuard::new(child, GRACE);
        let (tx, ready) = mpsc::channel();
        let lines = std::thread::spawn(move || {
            let mut events = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match serde_json::from_str::<PeerEvent>(&line) {
                    Ok(PeerEvent::Ready) => {
                        let _ = tx.send(());
                    }
                    Ok(event) => events.push(event),
                    Err(_) => tracing::debug!("a peer printed a line outside the protocol: {line}"),
                }
            }
            events
        });
        Ok(Self { name: name.to_string(), log, guard, ready, lines: Some(lines) })
    }

    /// Waits for `ready`; an exit or a timeout is an error naming the peer and its log.
    fn wait_ready(&mut self, stop: &AtomicBool) -> Result<(), EvalError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match self.ready.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => return Ok(()),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(self.failed("exited before it was ready")),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if stop.load(Ordering::Relaxed) {
                return Err(EvalError::Interrupted);
            }
            if Instant::now() > deadline {
                return Err(self.failed(&format!("was not ready within {} s", READY_TIMEOUT.as_secs())));
            }
        }
    }

    fn failed(&self, what: &str) -> EvalError {
        let tail = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        EvalError::Peer(format!("the {} peer {what} (log {}): {}", self.name, self.log.display(), tail.join(" | ")))
    }

    /// Stops the process (SIGTERM) and returns its lines.
    fn finish(mut self) -> Vec<PeerEvent> {
        if let Err(e) = self.guard.stop() {
            tracing::warn!("stopping the {} peer: {e}", self.name);
        }
        self.lines.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }

    /// Whether it has exited.
    fn exited(&mut self) -> bool {
        matches!(self.guard.try_wait(), Ok(Some(_)))
    }
}

/// The bridges (oldest first, each with its recording) and the probe responder, running.
struct BridgeProcesses<'a> {
    bridges: Vec<(ChildGuard, PathBuf)>,
    responder: ChildGuard,
    started: Instant,
    launcher: BridgeLauncher<'a>,
}

/// SCHED_FIFO in `/proc/PID/stat`'s policy field.
const SCHED_FIFO: u32 = 1;

/// The scheduling policy of `pid` as the kernel reports it; `None` once it has gone. Read
/// rather than assumed, so the summary says how the critical path really ran.
fn scheduling_policy(pid: u32) -> Option<u32> {
    ProcStat::read(pid).map(|stat| stat.policy())
}

fn realtime_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The bridge's config: `/scan` split into `rt/scan/critical` and `rt/scan/noncritical`, the
/// slow subscriber known by name, the classifier on (bridge) or off (ablation), in a
/// hot-standby group (failover). `interfaces` is where it runs: the bridge's address, or the
/// slow namespace's for its probe responder.
fn bridge_config(classifier: bool, interfaces: Ipv4Addr, record: &Path, standby: bool) -> String {
    let group = if standby { "redundancy: {group: eval}\n" } else { "" };
    format!(
        "dds: {{domain_id: {DOMAIN}, interfaces: [{interfaces}]}}\n\
         topics:\n  - {{name: /scan, type: sensor_msgs/msg/LaserScan}}\n\
         subscribers:\n  - {{name: slow, topics: [/scan]}}\n\
         classifier: {{enabled: {classifier}}}\n\
         diagnostics: {{enabled: false}}\n\
         telemetry: {{status_every: 1s, record: {}}}\n{group}",
        record.display()
    )
}

/// Starts bridges (each `bauxite bridge` with its own config, log and recording) in the
/// bridge namespace; a failover run starts a third when it kills the first.
struct BridgeLauncher<'a> {
    exe: &'a Path,
    scheduling: Scheduling,
    ns: &'a Netns,
    dir: &'a Path,
    classifier: bool,
    standby: bool,
    started: usize,
}

impl BridgeLauncher<'_> {
    /// The next bridge: `bridge` alone, or `bridge-a`, `bridge-b`, ... in a group. Returns
    /// it and its recording.
    fn start(&mut self) -> Result<(ChildGuard, PathBuf), EvalError> {
        let name = if self.standby {
            format!("bridge-{}", char::from(b'a' + self.started as u8))
        } else {
            "bridge".to_string()
        };
        self.started += 1;
        let recording = self.dir.join(format!("{name}.mcap"));
        let yaml = write_file(
            self.dir,
            &format!("{name}.yaml"),
            bridge_config(self.classifier, BRIDGE_ADDR, &recording, self.standby),
        )?;
        let child = spawn_logged(
            self.scheduling,
            self.ns,
            true,
            self.exe,
            &["bridge", "--config", &yaml],
            &self.dir.join(format!("{name}.log")),
        )?;
        Ok((child, recording))
    }
}

fn write_file(dir: &Path, name: &str, text: String) -> Result<String, EvalError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(EvalError::io(format!("writing {}", path.display())))?;
    Ok(path.display().to_string())
}

/// Starts `exe args` in `ns`, its stderr to `log`.
fn spawn_logged(
    scheduling: Scheduling,
    ns: &Netns,
    on_critical_path: bool,
    exe: &Path,
    args: &[&str],
    log: &Path,
) -> Result<ChildGuard, EvalError> {
    let stderr = std::fs::File::create(log).map_err(EvalError::io(format!("creating {}", log.display())))?;
    let child = scheduling
        .command(ns, on_critical_path, exe, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(EvalError::io(format!("starting `bauxite {}`", args[0])))?;
    Ok(ChildGuard::new(child, GRACE))
}

/// Starts the probe responder and the bridge (two of a hot-standby group, `launcher.standby`).
fn start_bridges<'a>(mut launcher: BridgeLauncher<'a>, slow: &Netns) -> Result<BridgeProcesses<'a>, EvalError> {
    let responder_yaml = write_file(
        launcher.dir,
        "responder.yaml",
        bridge_config(launcher.classifier, SLOW_ADDR, &launcher.dir.join("unused.mcap"), false),
    )?;
    let responder = spawn_logged(
        launcher.scheduling,
        slow,
        false,
        launcher.exe,
        &["probe-responder", "--config", &responder_yaml, "--name", "slow"],
        &launcher.dir.join("responder.log"),
    )?;
    let mut bridges = vec![launcher.start()?];
    if launcher.standby {
        bridges.push(launcher.start()?);
    }
    Ok(BridgeProcesses { bridges, responder, started: Instant::now(), launcher })
}

impl BridgeProcesses<'_> {
    /// Kills the longest-running bridge (SIGKILL: a crash) and starts another at once, which
    /// joins the group as a standby.
    fn kill_oldest_and_restart(&mut self) -> Result<(), EvalError> {
        let (mut oldest, _) = self.bridges.remove(0);
        oldest.kill().map_err(EvalError::io("killing a bridge"))?;
        let next = self.launcher.start()?;
        self.bridges.push(next);
        Ok(())
    }

    /// Reads the last bridge's CPU and peak memory, then stops them all (each closes its
    /// recording); returns the last one's recording.
    fn finish(mut self) -> Result<(Option<(f64, f64)>, PathBuf), EvalError> {
        let (last, recording) = self.bridges.last_mut().expect("a bridge runs");
        let usage = bauxite_bridge::bench::proc_usage(last.id()).map(|(cpu, _, peak)| {
            let wall = self.started.elapsed().as_secs_f64().max(1e-3);
            (cpu.as_secs_f64() / wall * 100.0, peak as f64 / (1024.0 * 1024.0))
        });
        let recording = recording.clone();
        for (bridge, _) in &mut self.bridges {
            if let Ok(Some(status)) = bridge.try_wait() {
                return Err(EvalError::Peer(format!("a bridge exited during the run ({status}); see its log")));
            }
        }
        for (bridge, _) in &mut self.bridges {
            let _ = bridge.stop();
        }
        let _ = self.responder.stop();
        Ok((usage, recording))
    }
}

/// What a run needs besides its scenario.
pub struct RunContext<'a> {
    /// The `bauxite` binary (bridge, responder, RustDDS peer).
    pub exe: &'a Path,
    /// Starts the peers.
    pub launcher: &'a PeerLauncher,
    /// Run lengths.
    pub lengths: &'a Lengths,
    /// How the processes are scheduled.
    pub scheduling: Scheduling,
    /// Set by SIGINT/SIGTERM.
    pub stop: &'a AtomicBool,
}

/// The peers' protocol arguments.
fn sub_args(topic: &str, best_effort: bool, duration: Duration, interface: Ipv4Addr) -> Vec<String> {
    let mut a = vec!["sub".into(), "--topic".into(), topic.into(), "--depth".into(), "10".into()];
    if best_effort {
        a.push("--best-effort".into());
    }
    a.extend(["--duration".into(), format!("{}", duration.as_secs() + 60), "--domain".into(), DOMAIN.to_string()]);
    a.extend(["--interface".into(), interface.to_string()]);
    a
}

/// Runs `scenario` with `implementation`'s peers, its files in `dir`.
pub fn run_one(
    ctx: &RunContext<'_>,
    scenario: &Scenario,
    implementation: Implementation,
    dir: &Path,
) -> Result<RunRecord, EvalError> {
    std::fs::create_dir_all(dir).map_err(EvalError::io(format!("creating {}", dir.display())))?;
    let timing = scenario.timing(ctx.lengths);
    let seed = scenario.name.bytes().fold(0x004u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    // Clean until the run's timing switches the impairment on (after discovery).
    let mut tb = Testbed::create(&Severity::CLEAN, seed)?;
    let launcher = |classifier, standby| BridgeLauncher {
        exe: ctx.exe,
        scheduling: ctx.scheduling,
        ns: &tb.bridge,
        dir,
        classifier,
        standby,
        started: 0,
    };
    let mut bridge = match scenario.setup {
        Setup::Baseline => None,
        Setup::Bridge => Some(start_bridges(launcher(true, false), &tb.slow)?),
        Setup::Ablation => Some(start_bridges(launcher(false, false), &tb.slow)?),
        Setup::Failover => Some(start_bridges(launcher(true, true), &tb.slow)?),
    };
    let (critical_topic, slow_topic, slow_best_effort) = match bridge {
        None => ("rt/scan", "rt/scan", false),
        Some(_) => ("rt/scan/critical", "rt/scan/noncritical", true),
    };
    let line = |args: Vec<String>| ctx.launcher.command_line(implementation, &args);
    let mut critical = Peer::spawn(
        &tb.critical,
        (ctx.scheduling, true),
        &line(sub_args(critical_topic, false, timing.duration, CRITICAL_ADDR))?,
        dir,
        "critical",
    )?;
    let slow_args = sub_args(slow_topic, slow_best_effort, timing.duration, SLOW_ADDR);
    let mut slow = Peer::spawn(&tb.slow, (ctx.scheduling, false), &line(slow_args)?, dir, "slow")?;
    critical.wait_ready(ctx.stop)?;
    slow.wait_ready(ctx.stop)?;
    let mut pub_args = vec![
        "pub".to_string(),
        "--topic".into(),
        "rt/scan".into(),
        "--hz".into(),
        "30".into(),
        "--duration".into(),
        timing.duration.as_secs().to_string(),
        "--ranges".into(),
        "1081".into(),
        "--domain".into(),
        DOMAIN.to_string(),
        "--interface".into(),
        PUB_ADDR.to_string(),
    ];
    pub_args.extend(scenario.writer(implementation).flags());
    let mut publisher = Peer::spawn(&tb.publisher, (ctx.scheduling, true), &line(pub_args)?, dir, "publisher")?;
    publisher.wait_ready(ctx.stop)?;
    let start_ns = realtime_ns();
    let mut critical_path = vec![publisher.guard.id(), critical.guard.id()];
    critical_path.extend(bridge.iter().flat_map(|b| b.bridges.iter().map(|(g, _)| g.id())));
    let critical_path_fifo = critical_path.into_iter().all(|pid| scheduling_policy(pid) == Some(SCHED_FIFO));
    let (switches, kills) = drive(&tb, scenario, &timing, &mut publisher, bridge.as_mut(), ctx.stop)?;
    std::thread::sleep(DRAIN);
    let published = publisher.finish();
    let (critical, slow) = (critical.finish(), slow.finish());
    let (bridge_usage, bridge_recording) = match bridge {
        Some(b) => {
            let (usage, recording) = b.finish()?;
            (usage, Some(recording))
        }
        None => (None, None),
    };
    let link = tb.stop()?;
    Ok(RunRecord {
        scenario: scenario.clone(),
        implementation,
        timing,
        start_ns,
        published,
        critical,
        slow,
        switches,
        kills,
        bridge_recording,
        bridge_usage,
        link,
        critical_path_fifo,
        dir: dir.to_path_buf(),
    })
}

/// The impairment's switches: (CLOCK_REALTIME, impaired after it).
type Switches = Vec<(u64, bool)>;

/// Waits for the publisher to finish, switching the impairment on and off at the toggle's
/// times and killing the active bridge at a failover's; returns the switches and the kills
/// (CLOCK_REALTIME).
fn drive(
    tb: &Testbed,
    scenario: &Scenario,
    timing: &Timing,
    publisher: &mut Peer,
    mut bridges: Option<&mut BridgeProcesses<'_>>,
    stop: &AtomicBool,
) -> Result<(Switches, Vec<u64>), EvalError> {
    let started = Instant::now();
    let mut switches = Vec::new();
    let mut kills = Vec::new();
    let mut kill_at = scenario.kills(timing).into_iter().peekable();
    let mut now_on = false;
    // A publisher that outlives its duration by this much is hung.
    let deadline = timing.duration + Duration::from_secs(30);
    while !publisher.exited() {
        if stop.load(Ordering::Relaxed) {
            return Err(EvalError::Interrupted);
        }
        let elapsed = started.elapsed();
        if elapsed > deadline {
            return Err(publisher.failed(&format!("did not stop within {} s of its duration", 30)));
        }
        let on = timing.impaired_from.is_some_and(|from| elapsed >= from)
            && timing.impaired_until.is_none_or(|until| elapsed < until);
        if on != now_on {
            tb.impair(if on { &scenario.severity } else { &Severity::CLEAN });
            switches.push((realtime_ns(), on));
            now_on = on;
        }
        if let Some(b) = bridges.as_deref_mut()
            && kill_at.next_if(|&at| elapsed >= at).is_some()
        {
            kills.push(realtime_ns());
            b.kill_oldest_and_restart()?;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok((switches, kills))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The critical path runs under SCHED_FIFO and the rest as ordinary processes, as the
    /// kernel reports them; `--no-realtime` runs everything as ordinary processes.
    #[test]
    fn the_critical_path_alone_runs_under_sched_fifo() {
        if !bauxite_sys::root_or_skip("the_critical_path_alone_runs_under_sched_fifo") {
            return;
        }
        let here = Netns::current();
        let policy = |scheduling: Scheduling, on_critical_path: bool| {
            let child =
                scheduling.command(&here, on_critical_path, Path::new("sleep"), &["30"]).spawn().expect("start sleep");
            let mut guard = ChildGuard::new(child, Duration::from_secs(1));
            // `chrt` and `nice` set the policy before they exec `sleep`: wait for the exec.
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::fs::read_to_string(format!("/proc/{}/comm", guard.id())).unwrap_or_default().trim() != "sleep" {
                assert!(Instant::now() < deadline, "sleep did not start");
                std::thread::sleep(Duration::from_millis(10));
            }
            let policy = scheduling_policy(guard.id());
            guard.stop().expect("stop sleep");
            policy
        };
        assert_eq!(policy(Scheduling::Realtime, true), Some(SCHED_FIFO));
        assert_eq!(policy(Scheduling::Realtime, false), Some(0));
        assert_eq!(policy(Scheduling::Niced, true), Some(0));
        assert_eq!(scheduling_policy(u32::MAX), None, "no such process");
    }
}

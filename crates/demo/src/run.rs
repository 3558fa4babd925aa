//! Running the demo: for each trial, phase 1 (standard stack) and phase 2 (Bauxite)
//! on a fresh robot — link — base testbed, each recorded to MCAP.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bauxite_core::{BitRate, DEFAULT_REFLECTOR_PORT, Profile, RateSetting, Targets};
use bauxite_netlab::testbed::{BASE_ADDR, ROBOT_IFACE};
use bauxite_netlab::workload::{RunningWorkload, WorkloadResult, WorkloadSpec};
use bauxite_netlab::{ChainOptions, ChainTestbed, Namespace, monotonic_ns};
use bauxite_shaper::state::ShaperStatus;
use bauxite_telemetry::Recorder;
use bauxite_telemetry::messages::{
    LaneCounters, LatencySample, LostMessage, PhaseMark, RunInfo, ShaperState, StreamRate, UpdateDelay, VideoFrame,
    topic,
};

use crate::analysis::{PhaseData, due_ns};

/// What to run.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Trials (each runs both phases).
    pub trials: u32,
    /// Length of each phase.
    pub duration: Duration,
    /// When the link drops.
    pub drop_at: Duration,
    /// The link before the drop.
    pub fast: BitRate,
    /// The link after the drop.
    pub slow: BitRate,
    /// Phase 2's shaper rate; `None` finds it with `rate: auto`.
    pub rate: Option<BitRate>,
    /// Where results go.
    pub out: PathBuf,
    /// The `bauxite` binary phase 2 runs (`up`, `reflect`).
    pub exe: PathBuf,
    /// Set (by SIGINT/SIGTERM) to stop: the phase under way ends early, its testbed
    /// and daemons are torn down and the demo returns [`DemoError::Interrupted`].
    pub stop: Arc<AtomicBool>,
}

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The testbed could not be built.
    #[error("testbed: {0}")]
    Testbed(#[from] bauxite_shaper::tc::CommandError),
    /// Files or sockets.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// Recording.
    #[error(transparent)]
    Record(#[from] bauxite_telemetry::RecordError),
    /// A recording could not be audited.
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
    /// A chart could not be drawn.
    #[error(transparent)]
    Chart(#[from] bauxite_telemetry::chart::ChartError),
    /// Stopped by a signal; everything the run built has been removed.
    #[error("interrupted; the testbed and the daemons were removed")]
    Interrupted,
    /// The shaper did not start.
    #[error("bauxite up did not start in the robot namespace: {0}")]
    Shaper(String),
}

/// A child process stopped with SIGTERM (so the daemon cleans up) when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGTERM);
        }
        let _ = self.0.wait();
    }
}

fn in_ns(ns: &Namespace, exe: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns.name()]).arg(exe).args(args);
    c
}

/// A log file in the trial's directory for a child's stderr, so the daemons' logs
/// are kept with the run instead of interleaving with the demo's own output.
fn log(dir: &Path, name: &str) -> Result<std::fs::File, DemoError> {
    let path = dir.join(name);
    std::fs::File::create(&path).map_err(|e| DemoError::Io(path.display().to_string(), e))
}

fn shaper_status(ns: &Namespace, exe: &Path) -> serde_json::Value {
    in_ns(ns, exe, &["status", "--iface", ROBOT_IFACE, "--json"])
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or_default()
}

/// The profile phase 2 runs with.
pub fn protected_profile(rate: Option<BitRate>) -> Profile {
    let mut profile = Profile::robot();
    match rate {
        Some(r) => profile.rate = RateSetting::Fixed(r),
        None => {
            profile.rate = RateSetting::Auto;
            profile.auto_rate.reflector = Some(format!("{BASE_ADDR}:{DEFAULT_REFLECTOR_PORT}"));
            // The emulated link's RTT jitter is about a millisecond; 3 ms catches a
            // queue of one frame (8 ms at 1.5 Mbit/s).
            profile.auto_rate.delay_threshold = Duration::from_millis(3);
        }
    }
    profile
}

/// Runs one phase of one trial; writes its recording to `mcap`.
pub fn run_phase(
    options: &DemoOptions,
    trial: u32,
    phase: u32,
    dir: &Path,
    mcap: &Path,
) -> Result<PhaseData, DemoError> {
    let tb = ChainTestbed::create(&ChainOptions { rate: options.fast, ..Default::default() })?;
    let mut processes = Vec::new();
    if phase == 2 {
        let profile = protected_profile(options.rate);
        let config = dir.join("profile.yaml");
        std::fs::write(&config, serde_json::to_vec_pretty(&profile).expect("a profile serializes"))
            .map_err(|e| DemoError::Io(config.display().to_string(), e))?;
        if options.rate.is_none() {
            let reflector = in_ns(&tb.base, &options.exe, &["reflect"]).stderr(log(dir, "reflect.log")?).spawn();
            processes.push(Process(reflector.map_err(|e| DemoError::Io("starting bauxite reflect".into(), e))?));
        }
        let up = in_ns(&tb.robot, &options.exe, &["up", "--iface", ROBOT_IFACE, "--config"])
            .arg(&config)
            .stderr(log(dir, "up.log")?)
            .spawn();
        processes.push(Process(up.map_err(|e| DemoError::Io("starting bauxite up".into(), e))?));
        let deadline = Instant::now() + Duration::from_secs(20);
        while shaper_status(&tb.robot, &options.exe)["daemon"] != "running" {
            if Instant::now() > deadline {
                return Err(DemoError::Shaper("no status after 20 s".into()));
            }
            if options.stop.load(Ordering::Relaxed) {
                return Err(DemoError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    let mut spec = WorkloadSpec::default();
    // Spread the control loop's phase over trials (golden-ratio steps): a robot's loop
    // is not synchronised with its corrections, and one fixed phase would bias the
    // update delay. Both phases of a trial use the same, so they compare fairly.
    let period = 1.0 / spec.control_loop_hz;
    spec.control_loop_phase = Duration::from_secs_f64((f64::from(trial) * 0.618_034).fract() * period);
    let start_ns = monotonic_ns();
    let started = Instant::now();
    let workload = RunningWorkload::start(&tb, &spec).map_err(|e| DemoError::Io("starting the workload".into(), e))?;
    let mut shaper_states = Vec::new();
    let mut dropped = false;
    while started.elapsed() < options.duration {
        if options.stop.load(Ordering::Relaxed) {
            return Err(DemoError::Interrupted);
        }
        if !dropped && started.elapsed() >= options.drop_at {
            tb.set_rate(options.slow)?;
            dropped = true;
        }
        let now = monotonic_ns();
        let state = if phase == 2 { shaper_state(&tb.robot, &options.exe) } else { ShaperState::inactive() };
        shaper_states.push((now, state));
        std::thread::sleep(Duration::from_millis(100));
    }
    let final_state = if phase == 2 { shaper_state(&tb.robot, &options.exe) } else { ShaperState::inactive() };
    shaper_states.push((monotonic_ns(), final_state));
    let result = workload.stop(Duration::from_secs(1));
    drop(processes);

    let info = RunInfo {
        trial,
        phase,
        protected: phase == 2,
        duration_ns: options.duration.as_nanos() as u64,
        drop_at_ns: options.drop_at.as_nanos() as u64,
        link_before_bps: options.fast.bps(),
        link_after_bps: options.slow.bps(),
        critical_streams: critical_streams(&spec)
            .map(|i| StreamRate { port: spec.streams[i].port, rate_hz: spec.streams[i].rate_hz })
            .collect(),
        shaper_rate: (phase == 2).then(|| options.rate.map_or("auto".into(), |r| r.to_string())),
        ..targets(&Profile::robot().targets)
    };
    record(mcap, &info, &spec, &result, &shaper_states, start_ns, options)
}

/// A run's targets in the recording's units; the rest of the run's description is the caller's.
fn targets(t: &Targets) -> RunInfo {
    RunInfo {
        trial: 0,
        phase: 0,
        protected: false,
        duration_ns: 0,
        drop_at_ns: 0,
        link_before_bps: 0,
        link_after_bps: 0,
        critical_streams: Vec::new(),
        shaper_rate: None,
        target_critical_latency_mean_ms: t.critical_latency_mean.as_secs_f64() * 1e3,
        target_critical_latency_p99_ms: t.critical_latency_p99.as_secs_f64() * 1e3,
        target_update_delay_mean_ms: t.update_delay_mean.as_secs_f64() * 1e3,
        target_critical_loss_pct: t.critical_loss_pct,
    }
}

/// The shaper's state as `bauxite status --json` reports it in the robot namespace.
fn shaper_state(ns: &Namespace, exe: &Path) -> ShaperState {
    let s = shaper_status(ns, exe);
    let status: Option<ShaperStatus> = serde_json::from_value(s["shaper"].clone()).ok();
    let bulk = status.as_ref().and_then(|st| st.lanes.iter().find(|l| l.name == "bulk"));
    ShaperState {
        active: s["daemon"] == "running",
        congested: status.as_ref().is_some_and(|st| st.congested),
        link_rate_bps: status.as_ref().map_or(0, |st| st.link_rate_bps),
        bulk_drop_probability: bulk.map_or(0.0, |l| l.drop_probability),
        bulk_early_drops: bulk.map_or(0, |l| l.early_drops),
    }
}

/// Indices of the critical streams (navigation and steering) in the workload.
fn critical_streams(spec: &WorkloadSpec) -> impl Iterator<Item = usize> + '_ {
    spec.streams.iter().enumerate().filter(|(_, s)| s.port == 7400 || s.port == 7401).map(|(i, _)| i)
}

/// The lane a workload stream travels in under the robot profile.
fn lane_of(port: u16) -> &'static str {
    if port == 7410 { "telemetry" } else { "critical" }
}

/// Writes the phase's recording and returns what it measured. Both come from one
/// walk over the same events, and [`crate::audit`] rebuilds the measurement from the
/// recording with the same [`PhaseData`] methods.
fn record(
    path: &Path,
    info: &RunInfo,
    spec: &WorkloadSpec,
    result: &WorkloadResult,
    shaper_states: &[(u64, ShaperState)],
    start_ns: u64,
    options: &DemoOptions,
) -> Result<PhaseData, DemoError> {
    let mut data = PhaseData::new(start_ns, info.drop_at_ns, info.duration_ns);
    let mut rec = Recorder::create(path)?;
    let run = rec.channel::<RunInfo>(&topic("demo", "run"))?;
    let marks = rec.channel::<PhaseMark>(&topic("demo", "phase"))?;
    let state = rec.channel::<ShaperState>(&topic("shaper", "state"))?;
    let frames = rec.channel::<VideoFrame>(&topic("video", "frames"))?;
    let updates = rec.channel::<UpdateDelay>(&topic("control", "update_delay"))?;
    rec.write(run, start_ns, info)?;
    let name = if info.protected { "bauxite" } else { "standard stack" };
    let phase = info.phase;
    rec.write(marks, start_ns, &PhaseMark { phase, event: format!("{name}: link {}", options.fast) })?;
    let drop_ns = start_ns + info.drop_at_ns;
    rec.write(marks, drop_ns, &PhaseMark { phase, event: format!("link drops to {}", options.slow) })?;

    // Every event in time order, so chunks close as the run went.
    let mut events: Vec<(u64, Event)> = Vec::new();
    for (i, stream) in spec.streams.iter().enumerate() {
        let lane = lane_of(stream.port);
        let mut arrived = vec![false; result.sent[i] as usize];
        for a in &result.arrivals[i] {
            events.push((a.received_ns, Event::Latency(lane, *a)));
            if let Some(slot) = arrived.get_mut(a.header.seq as usize) {
                *slot = true;
            }
        }
        for seq in arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(seq, _)| seq as u32) {
            let lost = LostMessage { lane: lane.into(), stream: stream.port, seq };
            events.push((due_ns(start_ns, seq, stream.rate_hz), Event::Lost(lost)));
        }
    }
    events.extend(shaper_states.iter().map(|(t, s)| (*t, Event::State(s.clone()))));
    events.extend(result.frames.iter().map(|f| (f.received_ns, Event::Frame(*f))));
    events.extend(result.updates.iter().map(|u| (u.tick_ns, Event::Update(*u))));
    events.sort_by_key(|(t, _)| *t);

    let mut latency = std::collections::BTreeMap::new();
    let mut lost = std::collections::BTreeMap::new();
    let mut counters = std::collections::BTreeMap::new();
    for lane in ["critical", "telemetry"] {
        latency.insert(lane, rec.channel::<LatencySample>(&topic("lanes", &format!("{lane}/latency")))?);
        lost.insert(lane, rec.channel::<LostMessage>(&topic("lanes", &format!("{lane}/lost")))?);
    }
    for lane in ["critical", "telemetry", "bulk"] {
        counters.insert(lane, rec.channel::<LaneCounters>(&topic("lanes", &format!("{lane}/counters")))?);
    }
    // Per lane: messages (video frames for bulk) received so far, bytes this interval.
    let mut received: std::collections::BTreeMap<&str, (u64, u64)> =
        ["critical", "telemetry", "bulk"].into_iter().map(|lane| (lane, (0, 0))).collect();
    let mut next_counters = start_ns + 100_000_000;
    for (t, event) in events {
        while t >= next_counters {
            for (lane, (count, bytes)) in &mut received {
                let sent = sent_by(spec, lane, next_counters - start_ns);
                let c = LaneCounters {
                    lane: lane.to_string(),
                    sent,
                    received: *count,
                    dropped: sent.saturating_sub(*count),
                    bitrate_bps: *bytes as f64 * 8.0 / 0.1,
                };
                rec.write(counters[lane], next_counters, &c)?;
                *bytes = 0;
            }
            next_counters += 100_000_000;
        }
        match event {
            Event::Latency(lane, a) => {
                let entry = received.entry(lane).or_default();
                entry.0 += 1;
                let size = spec.streams.iter().find(|s| s.port == a.header.stream).map_or(0, |s| s.size);
                entry.1 += size as u64;
                let sample = LatencySample {
                    lane: lane.into(),
                    stream: a.header.stream,
                    seq: a.header.seq,
                    sent_ns: a.header.sent_ns,
                    latency_ms: a.latency_ms(),
                };
                rec.write(latency[lane], t, &sample)?;
                if lane == "critical" {
                    data.arrived(a.header.sent_ns, t);
                }
            }
            Event::Lost(l) => {
                if l.lane == "critical" {
                    data.lost(t);
                }
                rec.write(lost[l.lane.as_str()], t, &l)?;
            }
            Event::Update(u) => {
                data.updated(t, u.sent_ns);
                rec.write(updates, t, &UpdateDelay { seq: u.seq, sent_ns: u.sent_ns, delay_ms: u.delay_ms() })?;
            }
            Event::State(s) => {
                data.bulk_dropped_packets = s.bulk_early_drops;
                rec.write(state, t, &s)?;
            }
            Event::Frame(f) => {
                let entry = received.entry("bulk").or_default();
                entry.0 += 1;
                entry.1 += u64::from(f.bytes);
                data.frame(t, f.bytes);
                let v = VideoFrame { frame: f.frame, key: f.key, bytes: f.bytes, latency_ms: f.latency_ms() };
                rec.write(frames, t, &v)?;
            }
        }
    }
    rec.finish()?;
    data.finish();
    Ok(data)
}

/// Messages a lane's streams had sent `elapsed_ns` into the phase (by their schedule).
/// For the bulk lane, video frames the camera had produced.
fn sent_by(spec: &WorkloadSpec, lane: &str, elapsed_ns: u64) -> u64 {
    let by_rate = |hz: f64| (elapsed_ns as f64 / 1e9 * hz) as u64 + 1;
    if lane == "bulk" {
        return by_rate(f64::from(spec.video.fps));
    }
    spec.streams.iter().filter(|s| lane_of(s.port) == lane).map(|s| by_rate(s.rate_hz)).sum()
}

enum Event {
    Latency(&'static str, bauxite_netlab::traffic::Arrival),
    Lost(LostMessage),
    Update(bauxite_netlab::workload::ControlUpdate),
    State(ShaperState),
    Frame(bauxite_netlab::video::FrameArrival),
}

//! Running the demo: for each trial, phase 1 (standard stack) and phase 2 (Bauxite)
//! on a fresh robot — link — base testbed, each recorded to MCAP.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use bauxite_core::{BitRate, DEFAULT_REFLECTOR_PORT, Profile, RateSetting};
use bauxite_netlab::testbed::{BASE_ADDR, ROBOT_IFACE};
use bauxite_netlab::workload::{RunningWorkload, WorkloadResult, WorkloadSpec};
use bauxite_netlab::{ChainOptions, ChainTestbed, Namespace, monotonic_ns};
use bauxite_telemetry::Recorder;
use bauxite_telemetry::messages::{LaneCounters, LatencySample, PhaseMark, ShaperState, VideoFrame, topic};

use crate::analysis::PhaseData;

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
            let reflector = in_ns(&tb.base, &options.exe, &["reflect"]).spawn();
            processes.push(Process(reflector.map_err(|e| DemoError::Io("starting bauxite reflect".into(), e))?));
        }
        let up = in_ns(&tb.robot, &options.exe, &["up", "--iface", ROBOT_IFACE, "--config"]).arg(&config).spawn();
        processes.push(Process(up.map_err(|e| DemoError::Io("starting bauxite up".into(), e))?));
        let deadline = Instant::now() + Duration::from_secs(20);
        while shaper_status(&tb.robot, &options.exe)["daemon"] != "running" {
            if Instant::now() > deadline {
                return Err(DemoError::Shaper("no status after 20 s".into()));
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
        if !dropped && started.elapsed() >= options.drop_at {
            tb.set_rate(options.slow)?;
            dropped = true;
        }
        let now = monotonic_ns();
        let state = if phase == 2 {
            let s = shaper_status(&tb.robot, &options.exe);
            ShaperState {
                active: s["daemon"] == "running",
                congested: s["shaper"]["congested"].as_bool().unwrap_or(false),
                link_rate_bps: s["shaper"]["link_rate_bps"].as_u64().unwrap_or(0),
                bulk_drop_probability: s["shaper"]["lanes"][2]["drop_probability"].as_f64().unwrap_or(0.0),
            }
        } else {
            ShaperState { active: false, congested: false, link_rate_bps: 0, bulk_drop_probability: 0.0 }
        };
        shaper_states.push((now, state));
        std::thread::sleep(Duration::from_millis(100));
    }
    let final_status = if phase == 2 { shaper_status(&tb.robot, &options.exe) } else { serde_json::Value::Null };
    let result = workload.stop(Duration::from_secs(1));
    drop(processes);

    let bulk_dropped = final_status["shaper"]["lanes"][2]["early_drops"].as_u64().unwrap_or(0);
    let data = phase_data(&spec, &result, start_ns, options, bulk_dropped);
    record(mcap, phase, &spec, &result, &shaper_states, start_ns, options)?;
    Ok(data)
}

fn rel(ns: u64, start_ns: u64) -> f64 {
    ns.saturating_sub(start_ns) as f64 / 1e9
}

/// Indices of the critical streams (navigation and steering) in the workload.
fn critical_streams(spec: &WorkloadSpec) -> impl Iterator<Item = usize> + '_ {
    spec.streams.iter().enumerate().filter(|(_, s)| s.port == 7400 || s.port == 7401).map(|(i, _)| i)
}

fn phase_data(
    spec: &WorkloadSpec,
    result: &WorkloadResult,
    start_ns: u64,
    options: &DemoOptions,
    bulk_dropped: u64,
) -> PhaseData {
    let mut critical = Vec::new();
    for i in critical_streams(spec) {
        let rate = spec.streams[i].rate_hz;
        let mut by_seq = vec![None; result.sent[i] as usize];
        for a in &result.arrivals[i] {
            if let Some(slot) = by_seq.get_mut(a.header.seq as usize) {
                *slot = Some(a);
            }
        }
        for (seq, arrival) in by_seq.into_iter().enumerate() {
            critical.push(match arrival {
                Some(a) => (rel(a.header.sent_ns, start_ns), Some(a.latency_ms())),
                // A lost message was sent on the stream's schedule.
                None => (seq as f64 / rate, None),
            });
        }
    }
    PhaseData {
        critical,
        updates: result.updates.iter().map(|u| (rel(u.tick_ns, start_ns), u.delay_ms)).collect(),
        frames: result.frames.iter().map(|f| (rel(f.received_ns, start_ns), f.bytes)).collect(),
        bulk_dropped_packets: bulk_dropped,
        drop_at: options.drop_at.as_secs_f64(),
        duration: options.duration.as_secs_f64(),
    }
}

fn record(
    path: &Path,
    phase: u32,
    spec: &WorkloadSpec,
    result: &WorkloadResult,
    shaper_states: &[(u64, ShaperState)],
    start_ns: u64,
    options: &DemoOptions,
) -> Result<(), DemoError> {
    let mut rec = Recorder::create(path)?;
    let marks = rec.channel::<PhaseMark>(&topic("demo", "phase"))?;
    let state = rec.channel::<ShaperState>(&topic("shaper", "state"))?;
    let frames = rec.channel::<VideoFrame>(&topic("video", "frames"))?;
    let name = if phase == 1 { "standard stack" } else { "bauxite" };
    rec.write(marks, start_ns, &PhaseMark { phase, event: format!("{name}: link {}", options.fast) })?;
    let drop_ns = start_ns + options.drop_at.as_nanos() as u64;
    rec.write(marks, drop_ns, &PhaseMark { phase, event: format!("link drops to {}", options.slow) })?;

    // Every event in time order, so chunks close as the run went.
    let mut events: Vec<(u64, Event)> = Vec::new();
    for (i, stream) in spec.streams.iter().enumerate() {
        let lane = if stream.port == 7410 { "telemetry" } else { "critical" };
        for a in &result.arrivals[i] {
            events.push((a.received_ns, Event::Latency(lane, *a)));
        }
    }
    events.extend(shaper_states.iter().map(|(t, s)| (*t, Event::State(s.clone()))));
    events.extend(result.frames.iter().map(|f| (f.received_ns, Event::Frame(*f))));
    events.sort_by_key(|(t, _)| *t);

    let mut latency = std::collections::BTreeMap::new();
    let mut counters = std::collections::BTreeMap::new();
    for lane in ["critical", "telemetry"] {
        latency.insert(lane, rec.channel::<LatencySample>(&topic("lanes", &format!("{lane}/latency")))?);
        counters.insert(lane, rec.channel::<LaneCounters>(&topic("lanes", &format!("{lane}/counters")))?);
    }
    let mut received: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
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
            }
            Event::State(s) => rec.write(state, t, &s)?,
            Event::Frame(f) => {
                let v = VideoFrame { frame: f.frame, key: f.key, bytes: f.bytes, latency_ms: f.latency_ms() };
                rec.write(frames, t, &v)?;
            }
        }
    }
    rec.finish()?;
    Ok(())
}

/// Messages a lane's streams had sent `elapsed_ns` into the phase (by their schedule).
fn sent_by(spec: &WorkloadSpec, lane: &str, elapsed_ns: u64) -> u64 {
    spec.streams
        .iter()
        .filter(|s| (s.port == 7410) == (lane == "telemetry"))
        .map(|s| (elapsed_ns as f64 / 1e9 * s.rate_hz) as u64 + 1)
        .sum()
}

enum Event {
    Latency(&'static str, bauxite_netlab::traffic::Arrival),
    State(ShaperState),
    Frame(bauxite_netlab::video::FrameArrival),
}

//! Running the demo: for each trial, phase 1 (standard stack) and phase 2 (Bauxite)
//! on a fresh robot — link — base testbed, each recorded to MCAP.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use bauxite_core::figures::{BIN_NS, LinkFacts};
use bauxite_core::link::{LinkChange, LinkRate, Timeline};
use bauxite_core::{
    BitRate, DEFAULT_REFLECTOR_PORT, DaemonState, Profile, ProfileError, Protocol, RateSetting, ShaperSnapshot,
    ValidatedProfile,
};
use bauxite_netlab::emulator::{Direction, EmulatorConfig, EmulatorReport, Fate};
use bauxite_netlab::testbed::{BASE_ADDR, ROBOT_IFACE};
use bauxite_netlab::workload::{RunningWorkload, WorkloadEvent, WorkloadResult, WorkloadSpec};
use bauxite_netlab::{ChainOptions, ChainTestbed, NetlabError};
use bauxite_shaper::StatusReader;
use bauxite_sys::{ChildGuard, monotonic_ns};
use bauxite_telemetry::messages::{LinkRun, LinkUsage, RunInfo, StreamBytes, StreamRate};

use crate::analysis::PhaseData;
use crate::live::{LINK_OVERHEAD_BYTES, LiveRecording, lane_of};
use crate::scenario::Scenario;

/// Which direction of the robot's link the demo's streams take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DemoDirection {
    /// The seed's: corrections, steering and video from the robot to the base, Bauxite on
    /// the robot's egress.
    #[default]
    Up,
    /// The operator's steering and a download from the base to the robot, Bauxite on the
    /// robot's ingress (`direction: down`, at `--rate` or with `rate: auto`). Bauxite at
    /// the far end (the base's egress) is `Up` with the ends' names exchanged.
    Down,
    /// Both at once, Bauxite on the robot's egress and ingress (`direction: both`): each
    /// way measured as the two above measure it, with the other way loaded beside it.
    Both,
}

impl DemoDirection {
    /// The ways whose streams run and are measured, in the order of the results.
    pub fn ways(self) -> &'static [Direction] {
        match self {
            Self::Up => &[Direction::Uplink],
            Self::Down => &[Direction::Downlink],
            Self::Both => &[Direction::Uplink, Direction::Downlink],
        }
    }

    /// `up` or `down`: how results name a way.
    pub fn name_of(way: Direction) -> &'static str {
        match way {
            Direction::Uplink => "up",
            Direction::Downlink => "down",
        }
    }
}

impl std::str::FromStr for DemoDirection {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "up" => Ok(Self::Up),
            "down" => Ok(Self::Down),
            "both" => Ok(Self::Both),
            other => Err(format!("`{other}` is not a direction: up, down or both")),
        }
    }
}

impl std::fmt::Display for DemoDirection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::Both => "both",
        })
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Trials (each runs both phases).
    pub trials: u32,
    /// What each phase runs on: its length and the link's timeline.
    pub scenario: Scenario,
    /// Phase 2's shaper rate; `None` finds it with `rate: auto`.
    pub rate: Option<BitRate>,
    /// Which way the streams go, and where phase 2's shaper runs.
    pub direction: DemoDirection,
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
    /// The testbed could not be built or its link changed.
    #[error("testbed")]
    Testbed(#[from] NetlabError),
    /// The workload could not start or stopped receiving.
    #[error("the workload")]
    Workload(#[source] NetlabError),
    /// Files, or starting the daemons.
    #[error("{what}")]
    Io {
        /// What was being done, naming the file or program.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Phase 2's profile is invalid (a `--rate` the shaper cannot take).
    #[error("phase 2's profile")]
    Profile(#[from] ProfileError),
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
    /// The shaper's status could not be read in the robot namespace.
    #[error("reading the shaper's status in the robot namespace")]
    ShaperStatus(#[source] bauxite_shaper::ShaperError),
    /// The shaper did not report running in time.
    #[error("bauxite up did not report running in the robot namespace within {waited:?}; see {log}")]
    ShaperNotRunning {
        /// How long the demo waited.
        waited: Duration,
        /// The daemon's log.
        log: PathBuf,
    },
}

impl DemoError {
    /// Wraps an I/O error with what was being done, for `map_err`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}

/// How long a daemon gets to clean up after SIGTERM before it is killed (the shaper
/// fails open, and its namespace is removed with the testbed anyway).
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long `bauxite up` gets to report running.
const SHAPER_START_TIMEOUT: Duration = Duration::from_secs(20);

/// A log file in the trial's directory for a child's stderr, so the daemons' logs
/// are kept with the run instead of interleaving with the demo's own output.
fn log(dir: &Path, name: &str) -> Result<std::fs::File, DemoError> {
    let path = dir.join(name);
    std::fs::File::create(&path).map_err(DemoError::io(path.display().to_string()))
}

/// The profile phase 2 runs with (`rate: auto` without a `rate`, probing the base);
/// an error for a `rate` the shaper cannot take.
pub fn protected_profile(rate: Option<BitRate>, direction: DemoDirection) -> Result<ValidatedProfile, ProfileError> {
    let mut profile = Profile::robot();
    let setting = rate.map_or(RateSetting::Auto, RateSetting::Fixed);
    if rate.is_none() {
        profile.auto_rate.reflector = vec![format!("{BASE_ADDR}:{DEFAULT_REFLECTOR_PORT}")];
    }
    match direction {
        DemoDirection::Up => profile.rate = setting,
        DemoDirection::Down => {
            // The uplink carries only the download's ACKs: left unshaped at the robot's rate.
            profile.rate = rate.map_or(profile.rate, RateSetting::Fixed);
            profile.direction = bauxite_core::Direction::Down;
            profile.ingress = Some(bauxite_core::IngressPolicy::at(setting));
        }
        DemoDirection::Both => {
            profile.rate = setting;
            profile.direction = bauxite_core::Direction::Both;
            profile.ingress = Some(bauxite_core::IngressPolicy::at(setting));
        }
    }
    profile.validate()
}

/// Runs one phase of one trial; writes each way's recording to its path in `mcaps`
/// (in the order of [`DemoDirection::ways`]) and returns each way's figures.
///
/// Set up (testbed, and in phase 2 the shaper), run the workload on the scenario's
/// timeline while recording it live, then collect the results and tear down.
/// Everything the phase built is removed on every way out: the daemons and the
/// testbed stop when dropped.
pub fn run_phase(
    options: &DemoOptions,
    trial: u32,
    phase: u32,
    dir: &Path,
    mcaps: &[PathBuf],
) -> Result<Vec<PhaseData>, DemoError> {
    let ways = options.direction.ways();
    let mut tb = ChainTestbed::create(&chain_options(&options.scenario, ways))?;
    // Phase 1 runs no shaper; its recording is still checked against the same targets.
    let profile = protected_profile(options.rate, options.direction)?;
    // Phase 2's shaper state is read in-process (netlink and the state file) by readers
    // opened in the robot's namespace, one per way: no process per sample.
    let (daemons, mut readers) = match phase {
        2 => start_shaper(options, &tb, &profile, dir)?,
        _ => (Vec::new(), Vec::new()),
    };

    let spec = WorkloadSpec::for_trial(u64::from(trial));
    let start_ns = monotonic_ns();
    let started = Instant::now();
    if let (Some(emulator), Some(link)) = (tb.emulator(), &options.scenario.link) {
        // The links' rates (a trace from its first line) start with the senders: the
        // figures' capacity and floors count from here.
        for way in [Direction::Uplink, Direction::Downlink] {
            emulator.apply_to(way, LinkChange::Rate(link.of(way).rate.clone()));
        }
    }
    let mut views = Vec::new();
    let mut workloads = Vec::new();
    for (&way, mcap) in ways.iter().zip(mcaps) {
        let scenario = options.scenario.measuring(way);
        let info = run_info(options, &scenario, trial, phase, &spec, &profile);
        let recording = LiveRecording::create(mcap, &info, &spec, &profile, start_ns, &scenario)?;
        let (tap, live) = std::sync::mpsc::channel();
        workloads.push(RunningWorkload::start(&tb, way, &spec, Some(tap)).map_err(DemoError::Workload)?);
        views.push(View { way, recording, live });
    }
    let mut states = shaper_sampler(&mut readers, ways.len());
    record_live(options, &tb, &mut views, &mut states, started)?;

    let last_states = states();
    let results = RunningWorkload::stop_all(workloads, Duration::from_secs(1)).map_err(DemoError::Workload)?;
    drop(daemons);
    let report = tb.stop_emulator()?;
    let mut measured = Vec::new();
    for ((view, result), last_state) in views.into_iter().zip(results).zip(last_states) {
        let View { way, mut recording, live } = view;
        recording.write(live.try_iter(), last_state)?;
        let usage = report.as_ref().map(|r| link_usage(r, way, &result, start_ns, scenario_ns(options)));
        measured.push(recording.finish(&result, usage)?);
    }
    Ok(measured)
}

/// One way's recording while the phase runs, and the workload's measurements on their way to it.
struct View<'a> {
    way: Direction,
    recording: LiveRecording<'a>,
    live: Receiver<WorkloadEvent>,
}

/// The length of each phase, ns.
fn scenario_ns(options: &DemoOptions) -> u64 {
    options.scenario.duration.as_nanos() as u64
}

/// The testbed of `scenario` for streams going `ways`: TBF at the seed's rate on
/// each way measured (the uplink always has one: on the downlink demo it carries
/// the ACKs at the seed's first rate), or the emulator running the `--link` links,
/// recording every packet's fate.
fn chain_options(scenario: &Scenario, ways: &[Direction]) -> ChainOptions {
    match &scenario.link {
        None => ChainOptions {
            rate: scenario.initial_rate,
            downlink_rate: ways.contains(&Direction::Downlink).then_some(scenario.initial_rate),
            ..Default::default()
        },
        Some(link) => ChainOptions {
            emulated: Some(EmulatorConfig {
                uplink: link.uplink.clone(),
                downlink: link.downlink.clone(),
                timeline: Timeline::default(),
                record_fates: true,
                ..EmulatorConfig::default()
            }),
            ..Default::default()
        },
    }
}

/// What the emulated link delivered on `way` per bin of the phase (from every
/// packet's recorded fate), and what the video's encoder offered and skipped.
fn link_usage(
    report: &EmulatorReport,
    way: Direction,
    result: &WorkloadResult,
    start_ns: u64,
    duration_ns: u64,
) -> LinkUsage {
    let mut uplink_bytes = vec![0u64; duration_ns.div_ceil(BIN_NS) as usize];
    for fate in report.fates.iter().filter(|f| f.direction == way) {
        if let Fate::Delivered { sent_ns, .. } = fate.fate
            && let Some(slot) = sent_ns.checked_sub(start_ns).and_then(|t| uplink_bytes.get_mut((t / BIN_NS) as usize))
        {
            *slot += u64::from(fate.len);
        }
    }
    LinkUsage { uplink_bytes, video_offered: result.video.offered, video_skipped: result.video.skipped }
}

/// Phase 2's daemons: writes the profile to `dir`, starts `bauxite reflect` on the
/// base (for `rate: auto`) and `bauxite up` on the robot, and waits until the shaper
/// runs; returns them with a status reader per way (in [`DemoDirection::ways`]'s
/// order): the robot's interface for the uplink, its IFB device for the downlink. The
/// daemons stop when the returned guards are dropped.
fn start_shaper(
    options: &DemoOptions,
    tb: &ChainTestbed,
    profile: &Profile,
    dir: &Path,
) -> Result<(Vec<ChildGuard>, Vec<StatusReader>), DemoError> {
    let mut daemons = Vec::new();
    let config = dir.join("profile.yaml");
    std::fs::write(&config, serde_yaml_ng::to_string(profile).expect("a profile serializes"))
        .map_err(DemoError::io(config.display().to_string()))?;
    if options.rate.is_none() {
        let reflector = (tb.base)
            .command(&options.exe, &["reflect", "--bind", &BASE_ADDR.to_string()])
            .stderr(log(dir, "reflect.log")?)
            .spawn();
        daemons.push(ChildGuard::new(reflector.map_err(DemoError::io("starting bauxite reflect"))?, STOP_GRACE));
    }
    let up = (tb.robot)
        .command(&options.exe, &["up", "--iface", ROBOT_IFACE, "--config"])
        .arg(&config)
        .stderr(log(dir, "up.log")?)
        .spawn();
    daemons.push(ChildGuard::new(up.map_err(DemoError::io("starting bauxite up"))?, STOP_GRACE));
    let mut readers = Vec::new();
    for &way in options.direction.ways() {
        let shaped = match way {
            Direction::Uplink => ROBOT_IFACE.to_string(),
            Direction::Downlink => bauxite_shaper::ingress::device_name(ROBOT_IFACE),
        };
        let mut reader = tb.robot.run(move || StatusReader::new(&shaped)).map_err(DemoError::ShaperStatus)?;
        wait_until_running(options, &mut reader, dir)?;
        readers.push(reader);
    }
    Ok((daemons, readers))
}

/// Waits until `bauxite up` reports running, at most [`SHAPER_START_TIMEOUT`].
fn wait_until_running(options: &DemoOptions, reader: &mut StatusReader, dir: &Path) -> Result<(), DemoError> {
    let deadline = Instant::now() + SHAPER_START_TIMEOUT;
    while reader.read().map_or(true, |s| s.daemon != DaemonState::Running) {
        if Instant::now() > deadline {
            return Err(DemoError::ShaperNotRunning { waited: SHAPER_START_TIMEOUT, log: dir.join("up.log") });
        }
        if options.stop.load(Ordering::Relaxed) {
            return Err(DemoError::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// What the recording says about its run: the link's timeline, the critical
/// streams and the targets it is checked against.
fn run_info(
    options: &DemoOptions,
    scenario: &Scenario,
    trial: u32,
    phase: u32,
    spec: &WorkloadSpec,
    profile: &ValidatedProfile,
) -> RunInfo {
    let targets = &profile.targets;
    let duration_ns = scenario.duration.as_nanos() as u64;
    let link = scenario.link.as_ref().map(|link| LinkRun {
        spec: link.spec.clone(),
        facts: LinkFacts::of(link.config(), &scenario.timeline, duration_ns),
        stream_wire_bytes: (spec.streams.iter())
            .map(|s| StreamBytes { port: s.port, bytes: s.size as u32 + LINK_OVERHEAD_BYTES })
            .collect(),
    });
    let (before, after) = match link {
        Some(_) => (0, 0),
        None => (scenario.initial_rate.bps(), scenario.drop().1.bps()),
    };
    RunInfo {
        trial,
        phase,
        protected: phase == 2,
        duration_ns,
        drop_at_ns: scenario.drop_at().as_nanos() as u64,
        link_before_bps: before,
        link_after_bps: after,
        critical_streams: spec
            .streams
            .iter()
            // The profile's first lane is its most urgent.
            .filter(|s| lane_of(profile, Protocol::Udp, s.port) == 0)
            .map(|s| StreamRate { port: s.port, rate_hz: s.rate_hz })
            .collect(),
        shaper_rate: (phase == 2).then(|| options.rate.map_or("auto".into(), |r| r.to_string())),
        target_critical_latency_mean_ms: targets.critical_latency_mean.as_secs_f64() * 1e3,
        target_critical_latency_p99_ms: targets.critical_latency_p99.as_secs_f64() * 1e3,
        target_update_delay_mean_ms: targets.update_delay_mean.as_secs_f64() * 1e3,
        target_critical_loss_pct: targets.critical_loss_pct,
        link,
    }
}

/// A sample of the shaper's state, stamped when taken; `None` when it could not be
/// read (the sample is skipped).
type StateSample = Option<(u64, ShaperSnapshot)>;

/// Where the phase's shaper samples come from, one per way: the daemon's status in
/// phase 2 (a sample that could not be read is skipped, not recorded as no shaper); in
/// phase 1 (no `readers`), no shaper.
fn shaper_sampler(readers: &mut [StatusReader], ways: usize) -> impl FnMut() -> Vec<StateSample> + '_ {
    move || {
        let now = monotonic_ns();
        match readers.is_empty() {
            true => (0..ways).map(|_| Some((now, ShaperSnapshot::down(ROBOT_IFACE)))).collect(),
            false => readers.iter_mut().map(|r| r.read().ok().map(|s| (monotonic_ns(), s))).collect(),
        }
    }
}

/// Runs the scenario's timeline until its duration is over (or a signal stops it):
/// changes the measured ways' links when the timeline says and writes what each way's
/// workload measured, with a shaper sample, every 100 ms. Written as it happens: if
/// the demo is killed, the recordings keep everything up to their last closed chunk.
fn record_live(
    options: &DemoOptions,
    tb: &ChainTestbed,
    views: &mut [View],
    states: &mut impl FnMut() -> Vec<StateSample>,
    started: Instant,
) -> Result<(), DemoError> {
    let scenario = &options.scenario;
    let mut changes = scenario.timeline.steps.iter().peekable();
    while started.elapsed() < scenario.duration {
        if options.stop.load(Ordering::Relaxed) {
            return Err(DemoError::Interrupted);
        }
        while let Some((_, change)) = changes.next_if(|(at, _)| started.elapsed() >= *at) {
            for view in views.iter_mut() {
                apply_step(tb, view, change)?;
            }
        }
        for (view, state) in views.iter_mut().zip(states()) {
            view.recording.write(view.live.try_iter(), state)?;
        }
        // Wake for the next link change on time, else every 100 ms.
        let next = started.elapsed() + Duration::from_millis(100);
        let next = changes.peek().map_or(next, |(at, _)| next.min(*at));
        std::thread::sleep(next.saturating_sub(started.elapsed()));
    }
    Ok(())
}

/// One step of the timeline on one measured way, now: the emulator takes any change;
/// TBF (the seed's link) a constant rate, whose time as it happened starts the seed's
/// windows.
fn apply_step(tb: &ChainTestbed, view: &mut View, change: &LinkChange) -> Result<(), DemoError> {
    match (tb.emulator(), change) {
        (Some(emulator), _) => {
            emulator.apply_to(view.way, change.clone());
            view.recording.link_stepped(monotonic_ns(), change)
        }
        (None, LinkChange::Rate(LinkRate::Constant(rate))) => {
            tb.set_rate_of(view.way, *rate)?;
            // The change as it happened (the figures' windows start at the drop), not as planned.
            view.recording.link_changed(monotonic_ns(), *rate)
        }
        // Scenario::validate admits nothing else on TBF.
        (None, _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn errors_keep_their_causes() {
        let e = DemoError::io("writing summary.json")(std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "writing summary.json");
        assert_eq!(e.source().map(ToString::to_string).as_deref(), Some("disk full"));

        let unavailable = NetlabError::CongestionControlUnavailable {
            name: "cubic".into(),
            source: std::io::Error::other("no such file"),
        };
        let e = DemoError::Workload(unavailable);
        let mut chain = vec![e.to_string()];
        let mut cause = e.source();
        while let Some(c) = cause {
            chain.push(c.to_string());
            cause = c.source();
        }
        assert_eq!(chain, ["the workload", "congestion control cubic unavailable: modprobe tcp_cubic", "no such file"]);
    }
}

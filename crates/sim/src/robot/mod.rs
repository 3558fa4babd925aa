//! `bauxite sim robot`: the robot's profile, the shaper's control laws and a
//! trace-driven link in simulated time.
//!
//! The topology is seed 000's demo: robot → its egress → the modem's link → base,
//! with a return path for ACKs and probe answers. Each run has the demo's two
//! phases: the **standard** stack (every packet straight into the modem's FIFO) and
//! the **protected** one (the profile's lanes, the shaper's congested state with
//! PIE early drop, and its rate, fixed or `rate: auto`).
//!
//! - The workload is `bauxite_core::workload`'s, the one netlab's namespaces run:
//!   periodic UDP streams, and the video whose encoder skips frames while its
//!   socket holds unsent bytes.
//! - The link is `bauxite_core::link::LinkModel`, the emulator's own (drop-tail
//!   queue, constant rate or a mahimahi trace, loss, delay and jitter, a timeline).
//!   The return path is uncongested and takes the link's configured delay, or the
//!   other direction's ([`RobotConfig::reverse_delay`]).
//! - The lanes ([`egress`]) are HTB's: strict priority with guaranteed shares,
//!   bounded queues; early drop is `bauxite_control::Controller` (PIE) polled every
//!   `congestion.poll_interval` with the lanes' counters, as the daemon polls netlink.
//! - `rate: auto` is `bauxite_control::RateController`, fed with probes that ride
//!   the critical lane to a reflector at the base.
//! - The video's TCP is CUBIC with SACK-like loss detection and TCP small queues ([`tcp`]
//!   says what it leaves out).
//!
//! Nothing reads a clock: the same configuration and seed give the same
//! [`RobotSummary`], byte for byte.

pub mod agree;
pub mod egress;
pub mod metrics;
pub mod output;
pub mod sweep;
mod world;

use std::time::Duration;

use bauxite_core::link::{LinkConfig, Timeline};
use bauxite_core::workload::WorkloadSpec;
use bauxite_core::{BitRate, ValidatedProfile};

pub use metrics::{PhaseSummary, RobotSummary};
pub use world::{CLAIRVOYANT_LOOKAHEAD, DRAIN};

/// The shaper's rate in the protected phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateMode {
    /// A rate known to the shaper (`--rate 1.5mbit`), for the whole phase.
    Fixed(BitRate),
    /// `rate: auto`: estimated from probes by the shaper's own controller.
    Auto,
}

impl std::fmt::Display for RateMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RateMode::Fixed(rate) => rate.fmt(f),
            RateMode::Auto => f.write_str("auto"),
        }
    }
}

/// Which run of a seed: the demo's two phases, and the two references issue 27
/// judges `rate: auto` against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Every packet straight into the modem's FIFO.
    Standard,
    /// The profile's lanes, early drop and the configured rate.
    Protected,
    /// Only what no shaper may drop (the never-dropped lanes' streams and, with
    /// `rate: auto`, its probes) on the link, unshaped: the critical figures no
    /// shaper can beat.
    NeverDropped,
    /// The protected phase with a controller that reads the link's own capacity over
    /// the next base RTT plus 100 ms ([`CLAIRVOYANT_LOOKAHEAD`]) and shapes to
    /// it: the best a rate controller can do without seeing the future's packets.
    Clairvoyant,
}

/// One simulated run's inputs.
#[derive(Clone, Debug)]
pub struct RobotConfig {
    /// The lanes and the control laws' policies.
    pub profile: ValidatedProfile,
    /// What the robot sends.
    pub workload: WorkloadSpec,
    /// The link at the start.
    pub link: LinkConfig,
    /// The link's changes.
    pub timeline: Timeline,
    /// The return path's delay (ACKs, probe answers): the other direction's link's, from
    /// `--link up=…,down=…`; `None`: the link's own. The return path is never congested.
    pub reverse_delay: Option<Duration>,
    /// How long the senders run (the network drains for [`DRAIN`] after).
    pub duration: Duration,
    /// The protected phase's rate.
    pub rate: RateMode,
    /// Start offsets, the link's randomness (added to its own seed), early drops.
    pub seed: u64,
}

impl RobotConfig {
    /// The return path's delay: [`RobotConfig::reverse_delay`], else the link's own.
    pub fn return_delay(&self) -> Duration {
        self.reverse_delay.unwrap_or(self.link.delay)
    }
}

pub use bauxite_core::figures::{BIN_NS, CriticalMessage, FrameDelivery, PhaseTrace};

/// Both phases of one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedRun {
    /// The seed.
    pub seed: u64,
    /// The standard stack.
    pub standard: PhaseTrace,
    /// Bauxite.
    pub protected: PhaseTrace,
    /// The never-dropped reference ([`Phase::NeverDropped`]).
    pub never_dropped: PhaseTrace,
    /// The clairvoyant reference ([`Phase::Clairvoyant`]).
    pub clairvoyant: PhaseTrace,
}

/// Runs both phases of `config` and both references.
pub fn run_seed(config: &RobotConfig) -> SeedRun {
    SeedRun {
        seed: config.seed,
        standard: world::run_phase(config, Phase::Standard),
        protected: world::run_phase(config, Phase::Protected),
        never_dropped: world::run_phase(config, Phase::NeverDropped),
        clairvoyant: world::run_phase(config, Phase::Clairvoyant),
    }
}

/// Runs one phase, or one reference.
pub fn run_phase(config: &RobotConfig, phase: Phase) -> PhaseTrace {
    world::run_phase(config, phase)
}

/// The video's TCP model, as `summary.json` states it.
pub const TCP_MODEL: &str = "CUBIC (RFC 9438: beta 0.7, C 0.4, Reno-friendly region, fast convergence) with \
SACK-like loss detection and ACK clocking, one ACK per segment, RTO >= 200 ms; a segment the robot's egress refuses \
stays unsent and reduces the window (Linux's CWR); a reduction follows the ACKs down to its target (proportional rate \
reduction, RFC 6937); TCP small queues: at most 2 packets of the socket wait in the \
shaper's lane; F-RTO undoes spurious timeouts; HyStart (ACK train and delay) ends slow start; the window grows only \
while it limits and is kept while ACKs arrive (Linux's snd_cwnd_stamp); CUBIC's clock stops while idle. Left out: \
delayed ACKs, Nagle, TSO/GSO, pacing, receive windows.";

/// Everything one `sim robot` run produced.
#[derive(Clone, Debug)]
pub struct RobotOutcome {
    /// `summary.json`.
    pub summary: RobotSummary,
    /// What the link offered.
    pub link: metrics::LinkFacts,
    /// Both phases of every seed, in seed order.
    pub runs: Vec<SeedRun>,
}

/// Runs seeds `base.seed .. base.seed + seeds` (in parallel; results in seed order)
/// and pools their figures. `link_text` and `profile_name` label the summary.
pub fn simulate(base: &RobotConfig, seeds: u32, link_text: &str) -> RobotOutcome {
    use rayon::prelude::*;
    let runs: Vec<SeedRun> = (0..u64::from(seeds))
        .into_par_iter()
        .map(|k| run_seed(&RobotConfig { seed: base.seed + k, ..base.clone() }))
        .collect();
    let duration_ns = u64::try_from(base.duration.as_nanos()).unwrap_or(u64::MAX);
    let link = metrics::LinkFacts::of(&base.link, &base.timeline, duration_ns);
    let hz = base.workload.control_loop_hz;
    let target = Some(base.profile.targets.critical_latency_p99.as_secs_f64() * 1e3);
    let standard: Vec<&PhaseTrace> = runs.iter().map(|r| &r.standard).collect();
    let protected: Vec<&PhaseTrace> = runs.iter().map(|r| &r.protected).collect();
    let never_dropped: Vec<&PhaseTrace> = runs.iter().map(|r| &r.never_dropped).collect();
    let clairvoyant: Vec<&PhaseTrace> = runs.iter().map(|r| &r.clairvoyant).collect();
    let mut entries = Vec::new();
    for r in &runs {
        entries.push(metrics::RunEntry {
            seed: r.seed,
            phase: 1,
            summary: metrics::summarize(&[&r.standard], &link, hz, None),
        });
        entries.push(metrics::RunEntry {
            seed: r.seed,
            phase: 2,
            summary: metrics::summarize(&[&r.protected], &link, hz, target),
        });
    }
    let summary = RobotSummary {
        seeds,
        profile: base.profile.profile().name.clone(),
        link: link.summary(link_text),
        protected_rate: base.rate.to_string(),
        duration_s: base.duration.as_secs_f64(),
        tcp_model: TCP_MODEL.to_string(),
        phases: metrics::Phases {
            standard: metrics::summarize(&standard, &link, hz, None),
            protected: metrics::summarize(&protected, &link, hz, target),
        },
        oracle: metrics::Oracles {
            never_dropped: metrics::summarize(&never_dropped, &link, hz, target),
            clairvoyant: metrics::summarize(&clairvoyant, &link, hz, target),
        },
        runs: entries,
    };
    RobotOutcome { summary, link, runs }
}

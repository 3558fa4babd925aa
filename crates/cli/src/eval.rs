//! `bauxite eval bridge` (seed 004's evaluation) and the hidden `bauxite eval peer` (its RustDDS
//! peer): argument parsing and wiring; the work is in `bauxite-eval`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use bauxite_eval::peer::{HistoryKind, PubOptions, SubOptions};
use bauxite_eval::{EvalOptions, Implementation, Lengths, Scenario, Scheduling};

/// `bauxite eval`.
#[derive(clap::Subcommand)]
pub enum EvalCommand {
    /// Seed 004's evaluation of the adaptive bridge: baseline, bridge, ablation and toggle runs
    /// with real DDS peers in network namespaces, the slow subscriber behind bursty loss.
    Bridge {
        /// A scenario, several separated by commas, or `all` (default: all; with --quick, the
        /// six the checks need).
        #[arg(long, value_name = "NAME|all")]
        scenario: Option<String>,
        /// DDS implementations, separated by commas: rustdds, cyclonedds, ros2-fastdds.
        #[arg(long, value_name = "IMPL[,IMPL...]", default_value = "rustdds,cyclonedds")]
        rmw: String,
        /// Short runs for CI (46 s each, the impaired baseline 48 s, figures after 16 s) instead
        /// of the paper's (180 s, 120 s, 240 s toggle).
        #[arg(long)]
        quick: bool,
        /// Run the critical path (publisher, bridge, critical subscriber) as ordinary processes
        /// at nice -10, like the rest, and let idle CPUs halt, instead of SCHED_FIFO and idle
        /// CPUs polling as a robot runs its control loop: the figures then include the
        /// testbed's contention for the machine's cores and the CPUs' wake-ups.
        #[arg(long)]
        no_realtime: bool,
        /// Where summary.json, summary.md, charts and each run's recording and logs go.
        #[arg(long)]
        out: PathBuf,
    },
    /// The RustDDS peer of the evaluation (the protocol of crates/eval/peers).
    #[command(hide = true)]
    Peer {
        #[command(subcommand)]
        role: PeerRole,
    },
}

/// The peer's two roles.
#[derive(clap::Subcommand)]
pub enum PeerRole {
    /// Publish LaserScans from a fixed-period timer.
    Pub {
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 30.0)]
        hz: f64,
        /// Seconds.
        #[arg(long)]
        duration: f64,
        #[arg(long, default_value_t = 1081)]
        ranges: usize,
        #[arg(long)]
        best_effort: bool,
        #[arg(long, value_enum, default_value = "keep_last")]
        history: HistoryKind,
        #[arg(long, default_value_t = 10)]
        depth: usize,
        #[arg(long)]
        max_samples: Option<usize>,
        /// The DDS domain (default: ROS_DOMAIN_ID, else 0).
        #[arg(long)]
        domain: Option<u16>,
        /// The address of the one interface to use (default: the multicast route's).
        #[arg(long)]
        interface: Option<std::net::IpAddr>,
    },
    /// Read LaserScans and print each one's stamp and arrival.
    Sub {
        #[arg(long)]
        topic: String,
        #[arg(long)]
        best_effort: bool,
        #[arg(long, default_value_t = 10)]
        depth: usize,
        /// Seconds (until a signal otherwise).
        #[arg(long)]
        duration: Option<f64>,
        /// The DDS domain (default: ROS_DOMAIN_ID, else 0).
        #[arg(long)]
        domain: Option<u16>,
        /// The address of the one interface to use (default: the multicast route's).
        #[arg(long)]
        interface: Option<std::net::IpAddr>,
    },
}

fn seconds(flag: &str, s: f64) -> Result<Duration> {
    anyhow::ensure!(s.is_finite() && s > 0.0 && s < 1e7, "{flag} must be a positive number of seconds, not {s}");
    Ok(Duration::from_secs_f64(s))
}

/// Runs `bauxite eval …`.
pub fn run(command: EvalCommand) -> Result<()> {
    match command {
        EvalCommand::Bridge { scenario, rmw, quick, no_realtime, out } => {
            let scheduling = if no_realtime { Scheduling::Niced } else { Scheduling::Realtime };
            bridge(scenario, &rmw, quick, scheduling, out)
        }
        EvalCommand::Peer { role } => peer(role),
    }
}

fn bridge(scenario: Option<String>, rmw: &str, quick: bool, scheduling: Scheduling, out: PathBuf) -> Result<()> {
    let scenarios = Scenario::select(scenario.as_deref(), quick)?;
    let mut implementations = Vec::new();
    for name in rmw.split(',').map(str::trim) {
        let i = Implementation::parse(name)?;
        anyhow::ensure!(!implementations.contains(&i), "--rmw: `{name}` is named twice");
        implementations.push(i);
    }
    bauxite_shaper::daemon::require_root("`bauxite eval bridge` builds network namespaces")?;
    bauxite_core::ensure_writable_dir(&out).context("--out")?;
    let options = EvalOptions {
        exe: std::env::current_exe().context("locating the bauxite binary")?,
        out: out.clone(),
        scenarios,
        implementations,
        lengths: if quick { Lengths::QUICK } else { Lengths::PAPER },
        scheduling,
        stop: super::stop_on_signals()?,
    };
    let total = (options.scenarios.len() * options.implementations.len()) as u64;
    let bar = super::progress::bar(total, "runs");
    let summary = bauxite_eval::evaluate(&options, |done, _, next| {
        bar.set_position(done as u64);
        bar.set_message(next.to_string());
    })?;
    bar.finish_and_clear();
    print!("{}", bauxite_eval::report::markdown(&summary));
    eprintln!("bauxite eval bridge: results in {}", out.display());
    Ok(())
}

/// `--domain`, else `ROS_DOMAIN_ID` as ROS 2 reads it, else 0.
fn domain(flag: Option<u16>) -> Result<u16> {
    match (flag, std::env::var("ROS_DOMAIN_ID")) {
        (Some(d), _) => Ok(d),
        (None, Ok(text)) => text.trim().parse().with_context(|| format!("ROS_DOMAIN_ID={text} is not a domain id")),
        (None, Err(_)) => Ok(0),
    }
}

fn peer(role: PeerRole) -> Result<()> {
    bauxite_bridge::quiet_dds_logs();
    let stop = super::stop_on_signals()?;
    match role {
        PeerRole::Pub {
            topic,
            hz,
            duration,
            ranges,
            best_effort,
            history,
            depth,
            max_samples,
            domain: domain_flag,
            interface,
        } => {
            anyhow::ensure!(hz.is_finite() && hz > 0.0 && hz <= 10_000.0, "--hz must be in (0, 10000], not {hz}");
            let options = PubOptions {
                topic,
                hz,
                duration: seconds("--duration", duration)?,
                ranges,
                best_effort,
                history,
                depth,
                max_samples,
                domain: domain(domain_flag)?,
                interface,
            };
            bauxite_eval::peer::publish(&options, &stop)?;
        }
        PeerRole::Sub { topic, best_effort, depth, duration, domain: domain_flag, interface } => {
            let duration = duration.map(|d| seconds("--duration", d)).transpose()?;
            let options = SubOptions { topic, best_effort, depth, duration, domain: domain(domain_flag)?, interface };
            bauxite_eval::peer::subscribe(&options, stop)?;
        }
    }
    Ok(())
}

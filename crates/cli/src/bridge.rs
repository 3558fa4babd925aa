//! `bauxite bridge` and `bauxite probe-responder`: argument parsing and wiring; the work is in
//! `bauxite-bridge`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use bauxite_bridge::config::{BridgeConfig, ClassifierConfig, DdsConfig};
use bauxite_core::parse_duration;

/// `bauxite bridge`: run the bridge, or benchmark it.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BridgeArgs {
    /// The bridge's config (YAML): topics, subscribers, classifier, rates, supervisor limits.
    #[arg(long, required = true)]
    config: Option<PathBuf>,
    /// Record classifier, path and supervisor telemetry to this MCAP file (overrides `telemetry.record`).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Serve Prometheus metrics on http://ADDR/metrics (overrides `metrics`): PORT listens on
    /// 127.0.0.1 only; write HOST:PORT to listen elsewhere.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<bauxite_metrics::MetricsAddr>,
    #[command(subcommand)]
    command: Option<BridgeCommand>,
}

#[derive(clap::Subcommand)]
enum BridgeCommand {
    /// Print the JSON Schema of bridge config files, for editors (every key, its default and
    /// bounds; `docs/reference/bridge-config.md` is made from it).
    Schema,
    /// Measure the bridge: added latency against a direct subscription, forwarding capacity, CPU and memory.
    Bench {
        /// Seconds of 30 Hz LaserScan-sized traffic for latency, CPU and memory.
        #[arg(long, default_value_t = 20)]
        duration: u64,
        /// Seconds of back-to-back publishing per capacity size.
        #[arg(long, default_value_t = 5)]
        capacity_duration: u64,
        /// Sample sizes (bytes) for the capacity runs.
        #[arg(long, value_delimiter = ',', default_value = "1024,65536")]
        sizes: Vec<usize>,
        /// The DDS domain to run in (keep it apart from live systems); at most 232, whose RTPS
        /// ports are the last below 65536.
        #[arg(long, default_value_t = 77, value_parser = clap::value_parser!(u16).range(0..=232))]
        domain: u16,
        /// Where `summary.json`, `summary.md` and the bridge's log go.
        #[arg(long, default_value = "bauxite-bridge-bench")]
        out: PathBuf,
    },
}

/// `bauxite probe-responder`: answer a bridge's health probes for one subscriber.
#[derive(clap::Args)]
pub struct ResponderArgs {
    /// The bridge's config file: its `dds` and `classifier` sections give the domain, the
    /// interfaces and the probe topics (defaults without it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The subscriber's name, as the bridge's `subscribers` list knows it (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// Hold every answer this long (e.g. 80ms): emulates a slow link for demos and tests.
    #[arg(long, value_parser = parse_duration)]
    answer_delay: Option<Duration>,
}

/// Runs `bauxite bridge`.
pub fn run_bridge(args: BridgeArgs) -> Result<()> {
    bauxite_bridge::quiet_dds_logs();
    match args.command {
        Some(BridgeCommand::Schema) => {
            println!("{}", serde_json::to_string_pretty(&bauxite_bridge::config::json_schema())?);
        }
        Some(BridgeCommand::Bench { duration, capacity_duration, sizes, domain, out }) => {
            anyhow::ensure!(duration >= 2, "--duration must be at least 2 s");
            anyhow::ensure!(capacity_duration >= 2, "--capacity-duration must be at least 2 s");
            anyhow::ensure!(sizes.iter().all(|&s| s >= 16), "--sizes must be at least 16 bytes each");
            let options = bauxite_bridge::bench::BenchOptions {
                exe: std::env::current_exe().context("locating the bauxite binary")?,
                out: out.clone(),
                latency_duration: Duration::from_secs(duration),
                capacity_duration: Duration::from_secs(capacity_duration),
                sizes,
                domain_id: domain,
            };
            let report = bauxite_bridge::bench::run(&options)?;
            print!("{}", report.markdown());
            eprintln!("bauxite bridge bench: results in {}", out.display());
        }
        None => {
            let path = args.config.context("--config is required")?;
            let mut config = bauxite_bridge::load(&path)?;
            if args.record.is_some() {
                config.telemetry.record = args.record;
            }
            if args.metrics.is_some() {
                config.metrics = args.metrics;
            }
            let stop = super::stop_on_signals()?;
            let status = bauxite_bridge::run(config, &stop)?;
            tracing::info!(mode_changes = status.mode_changes.len(), "bridge stopped");
        }
    }
    Ok(())
}

/// Runs `bauxite probe-responder` until SIGINT/SIGTERM.
pub fn run_responder(args: ResponderArgs) -> Result<()> {
    bauxite_bridge::quiet_dds_logs();
    let (dds, classifier) = match &args.config {
        Some(path) => {
            let BridgeConfig { dds, classifier, .. } = bauxite_bridge::load(path)?;
            (dds, classifier)
        }
        None => (DdsConfig::default(), ClassifierConfig::default()),
    };
    let name = match args.name {
        Some(n) => n,
        None => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .context("no --name, and the host name is unreadable")?,
    };
    bauxite_bridge::classifier::check_subscriber_name(&name)
        .map_err(|e| anyhow::anyhow!("--name (or the host name it defaults to): {e}"))?;
    let participant = bauxite_bridge::dds::participant(&dds)?;
    let options = bauxite_bridge::ResponderOptions { answer_delay: args.answer_delay.unwrap_or_default() };
    let responder = bauxite_bridge::ProbeResponder::start(&participant, &classifier, &name, options)?;
    tracing::info!(name, probe_topic = classifier.probe_topic, "answering bridge probes");
    let stop = super::stop_on_signals()?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    tracing::info!(answered = responder.stop(), "probe responder stopped");
    Ok(())
}

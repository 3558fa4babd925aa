//! The `bauxite` command: argument parsing and wiring; the work is in the crates.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use bauxite_core::{Profile, RateSetting, ValidatedProfile};
use clap::{CommandFactory, Parser, Subcommand};

mod bridge;
mod eval;
mod link;
mod progress;
mod reference;
mod sim;

#[derive(Parser)]
#[command(name = "bauxite", version, about = "Keeps robots' control traffic fast when their network link saturates")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Attach the shaper to an interface and run in the foreground; detach on SIGINT/SIGTERM;
    /// re-read the profile on SIGHUP.
    Up {
        /// The egress interface toward the bottleneck.
        #[arg(long)]
        iface: String,
        /// A built-in profile.
        #[arg(long, default_value = "robot", value_parser = clap::builder::PossibleValuesParser::new(bauxite_core::BUILTIN_PROFILES))]
        profile: String,
        /// A profile file (YAML); overrides --profile.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The link rate (e.g. 1.5mbit, or auto); overrides the profile's.
        #[arg(long)]
        rate: Option<RateSetting>,
        /// Also drop bulk early at this ingress interface with XDP (forwarding boxes).
        #[arg(long)]
        gateway_iface: Option<String>,
        /// How to attach the classifier: tcx links where the kernel has them (6.6+), else a
        /// clsact filter (auto); or force one (tcx is refused on a kernel without it).
        #[arg(long, default_value = "auto", value_name = "auto|tcx|clsact")]
        attach: bauxite_shaper::AttachRequest,
        /// Serve Prometheus metrics on http://ADDR/metrics (overrides the profile's `metrics`):
        /// PORT listens on 127.0.0.1 only; write HOST:PORT to listen elsewhere.
        #[arg(long, value_name = "ADDR")]
        metrics: Option<bauxite_metrics::MetricsAddr>,
        /// Also shape the interface's ingress (the downlink) at this rate, or `auto`, through
        /// an IFB device: the profile's `direction: both` (or `down`) with `ingress.rate` RATE.
        #[arg(long, value_name = "RATE")]
        ingress: Option<RateSetting>,
    },
    /// The seed-000 reference demo: the standard stack against Bauxite on a link that drops to 1.5 Mbit/s.
    Demo {
        /// Trials (each runs both phases).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        trials: u32,
        /// Seconds per phase (at least 8 on the seed's link: it drops at 5 s and figures start
        /// 1 s later; with --link, 3 s after its first timed change).
        #[arg(long, default_value_t = bauxite_demo::Scenario::DEFAULT_DURATION.as_secs())]
        duration: u64,
        /// Phase 2's shaper rate (e.g. 1.5mbit); by default found with `rate: auto`.
        #[arg(long)]
        rate: Option<bauxite_core::BitRate>,
        /// Run on this link, emulated in userspace, instead of the seed's step drop (the same
        /// SPEC as `bauxite sim robot --link`): e.g. `trace=FILE,queue=100kb,delay=20ms` or
        /// `rate=50mbit`, the link of the measured direction(s), the other way uncongested
        /// with its delay; or each way's, `up=trace=A.up,down=trace=A.down`. Figures add the
        /// excess over the link's own floor.
        #[arg(long, value_name = "SPEC")]
        link: Option<String>,
        /// Changes to the --link link of the measured direction(s) at given times (YAML; e.g.
        /// examples/step-drop.yaml, the seed's drop). Without one, figures start at 0.
        #[arg(long, value_name = "FILE", requires = "link")]
        timeline: Option<PathBuf>,
        /// Where results go.
        #[arg(long, default_value = "bauxite-demo")]
        out: PathBuf,
        /// Which way the streams go: up (the seed's, robot → base, Bauxite on the robot's
        /// egress), down (the operator's steering and a download base → robot, Bauxite on
        /// the robot's ingress, at --rate or with rate: auto) or both at once (Bauxite on
        /// both; each way's results in up/ and down/).
        #[arg(long, default_value = "up", value_name = "up|down|both")]
        direction: bauxite_demo::DemoDirection,
    },
    /// Recompute a demo recording's summary from the recording alone and check it against its targets;
    /// exits 1 when a check fails (a truncated file fails the completeness check, a corrupt one
    /// (bad CRC, duplicated records) the integrity check), 2 when the file
    /// cannot be audited at all (not MCAP, not a demo recording, malformed messages).
    Audit {
        /// The recording (`trial-NN/phaseN.mcap`).
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the adaptive DDS bridge (seed 004), or benchmark it (`bauxite bridge bench`).
    Bridge(bridge::BridgeArgs),
    /// Answer an adaptive bridge's health probes for one subscriber; runs until SIGINT/SIGTERM.
    ProbeResponder(bridge::ResponderArgs),
    /// Evaluations: `bauxite eval bridge` runs seed 004's (the adaptive bridge under bursty loss).
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Remove everything Bauxite attached to an interface (idempotent).
    Down {
        /// The interface.
        #[arg(long)]
        iface: String,
    },
    /// The far-side reflector for link-rate probes (`rate: auto`); runs until SIGINT/SIGTERM.
    ///
    /// It answers only well-formed probe requests, never a datagram from a reflector
    /// port, at most 1 000 a second per source (burst 100).
    Reflect {
        /// The UDP port to answer on.
        #[arg(long, default_value_t = bauxite_core::DEFAULT_REFLECTOR_PORT)]
        port: u16,
        /// The address to listen on. Loopback unless given (nothing listens beyond
        /// loopback unless configured to): pass the address the robot's probes reach,
        /// e.g. `--bind 10.0.0.2` (or `--bind 0.0.0.0` for every IPv4 address).
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Answer only these peers (`ADDR` or `ADDR/PREFIX`, repeatable); default: any.
        #[arg(long, num_args = 1.., value_name = "CIDR")]
        allow: Vec<bauxite_shaper::reflect::PeerNet>,
        /// Answer only probes signed with the key in this file (HMAC-SHA256), and sign
        /// the answers; the robot's profile names the same file as `auto_rate.key_file`.
        #[arg(long, value_name = "FILE")]
        key_file: Option<PathBuf>,
        /// Serve Prometheus metrics (answers, refusals by reason) on http://ADDR/metrics:
        /// PORT listens on 127.0.0.1 only; write HOST:PORT to listen elsewhere.
        #[arg(long, value_name = "ADDR")]
        metrics: Option<bauxite_metrics::MetricsAddr>,
    },
    /// Run a command behind an emulated link (as mahimahi's mm-link): `bauxite link --up SPEC
    /// [--down SPEC] -- COMMAND`; `bauxite link trace-stats FILE` describes a trace.
    Link(link::LinkArgs),
    /// Removes what a `bauxite link` that died left behind (started by `bauxite link` itself).
    #[command(hide = true)]
    LinkReap(link::ReapArgs),
    /// Shaper profiles: check a file, or print the JSON Schema of the format.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Writes the pages generated from the code (command line, config keys, metrics, man
    /// pages, completions); `scripts/gen-reference` runs it on the repository.
    #[command(hide = true)]
    Reference(reference::ReferenceArgs),
    /// The scheduler simulator (seed 003): one scenario or the whole study.
    #[command(subcommand)]
    Sim(Box<sim::SimCommand>),
    /// Per-lane packets, bytes, drops, rate, backlog, drop probability and the congested state.
    Status {
        /// The interface.
        #[arg(long)]
        iface: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `bauxite profile`.
#[derive(Subcommand)]
enum ProfileCommand {
    /// Validate a profile file exactly as `bauxite up` would (keys, values, bounds and
    /// relations), print it with every default filled in; exit 1 naming the file, line and
    /// key of the first problem.
    Check {
        /// The profile (YAML).
        file: PathBuf,
    },
    /// Print the JSON Schema of profile files, for editors (e.g. yaml-language-server's
    /// `# yaml-language-server: $schema=FILE`).
    Schema,
}

/// The profile `up` runs, validated once: the file's or the built-in one, with `--rate`.
/// The profile `up` runs: the file or the built-in, with `--rate` and `--ingress` applied.
fn load_profile(
    profile: &str,
    config: Option<&PathBuf>,
    rate: Option<RateSetting>,
    ingress: Option<RateSetting>,
) -> Result<ValidatedProfile> {
    let p = match config {
        Some(path) => bauxite_core::load_profile(path)?,
        None => Profile::builtin(profile)
            .with_context(|| format!("no built-in profile `{profile}`"))?
            .validate()
            .with_context(|| format!("the built-in profile `{profile}`"))?,
    };
    let p = match rate {
        Some(rate) => p.with_rate(rate).context("--rate")?,
        None => p,
    };
    match ingress {
        Some(rate) => p.with_ingress(rate).context("--ingress"),
        None => Ok(p),
    }
}

/// Serves the shaper metrics of `ifaces` (and what is already in `registry`) on `addr` until
/// dropped.
fn serve_shaper_metrics(
    ifaces: &[String],
    addr: bauxite_metrics::MetricsAddr,
    mut registry: bauxite_metrics::Registry,
) -> Result<bauxite_metrics::MetricsServer> {
    bauxite_shaper::metrics::ShaperCollector::new(ifaces)?.register(&mut registry);
    Ok(bauxite_metrics::MetricsServer::start(addr, registry)?)
}

/// Publishes the shaper's state on `iface` as ROS 2 diagnostics every `settings.period`,
/// from a thread of its own (so a hung control loop is still reported), until `stop`.
fn publish_shaper_diagnostics(
    iface: &str,
    settings: bauxite_core::diagnostics::DiagnosticsSettings,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    use std::sync::atomic::Ordering;
    let dds = bauxite_bridge::config::DdsConfig {
        domain_id: settings.domain_id,
        interfaces: Some(settings.interfaces.clone()),
    };
    let participant = bauxite_bridge::dds::participant(&dds).context("diagnostics")?;
    let publisher = bauxite_bridge::diagnostics::DiagnosticsPublisher::start(&participant, &settings.topic)
        .context("diagnostics")?;
    let mut reader = bauxite_shaper::StatusReader::new(iface)?;
    tracing::info!(topic = settings.topic, domain = settings.domain_id, "publishing ROS 2 diagnostics");
    std::thread::Builder::new()
        .name("diagnostics".into())
        .spawn(move || {
            let _participant = participant;
            // Nothing until the daemon first runs: its start-up is not an outage.
            let mut started = false;
            while !stop.load(Ordering::Relaxed) {
                match reader.read() {
                    Ok(snapshot) if !started && snapshot.daemon != bauxite_core::DaemonState::Running => {}
                    Ok(snapshot) => {
                        started = true;
                        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                        let unix_ns = now.map_or(0, |d| d.as_nanos() as u64);
                        publisher.publish(unix_ns, bauxite_shaper::diagnostics::shaper_status(&snapshot));
                    }
                    Err(e) => tracing::debug!("diagnostics: reading the shaper's state: {e}"),
                }
                std::thread::sleep(settings.period);
            }
        })
        .context("starting the diagnostics thread")?;
    Ok(())
}

/// A flag set by SIGINT or SIGTERM, for commands that run until told to stop.
pub(crate) fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).context("installing signal handlers")?;
    }
    Ok(stop)
}

/// `up`'s live reload: a flag set by SIGHUP (`systemctl reload`), and the profile
/// read again exactly as at start (the same file, `--profile` and `--rate`).
fn reload_on_sighup(
    profile: String,
    config: Option<PathBuf>,
    rate: Option<RateSetting>,
    ingress: Option<RateSetting>,
) -> Result<bauxite_shaper::Reload> {
    let requested = Arc::new(AtomicBool::new(false));
    let requested_ingress = Arc::new(AtomicBool::new(false));
    for flag in [&requested, &requested_ingress] {
        signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(flag))
            .context("installing the SIGHUP handler")?;
    }
    let load = move || load_profile(&profile, config.as_ref(), rate, ingress).map_err(|e| format!("{e:#}"));
    Ok(bauxite_shaper::Reload { requested, requested_ingress, load: Arc::new(load) })
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Up { iface, profile, config, rate, gateway_iface, attach, metrics, ingress } => {
            let reload = reload_on_sighup(profile.clone(), config.clone(), rate, ingress)?;
            let profile = load_profile(&profile, config.as_ref(), rate, ingress)?;
            let stop = stop_on_signals()?;
            let metrics = metrics.or(profile.metrics);
            let mut registry = bauxite_metrics::Registry::default();
            let probe_rtt = metrics.map(|_| bauxite_shaper::metrics::probe_rtt_histogram(&mut registry, &iface));
            // The downlink's shaper is on the IFB device, with an `iface` label of its own.
            let mut shaped = vec![iface.clone()];
            if profile.direction.shapes_ingress() {
                shaped.push(bauxite_shaper::ingress::device_name(&iface));
            }
            let _metrics = metrics.map(|addr| serve_shaper_metrics(&shaped, addr, registry)).transpose()?;
            if let Some(settings) = profile.diagnostics.clone() {
                publish_shaper_diagnostics(&iface, settings, Arc::clone(&stop))?;
            }
            let mut options = bauxite_shaper::UpOptions::new(iface, profile);
            options.gateway_iface = gateway_iface;
            options.attach = attach;
            options.probe_rtt = probe_rtt;
            options.reload = Some(reload);
            bauxite_shaper::run_up(options, stop)?;
        }
        Command::Reflect { port, bind, allow, key_file, metrics } => {
            use bauxite_shaper::reflect::{self, ProbeKey, Reflector, ReflectorOptions};
            let key = key_file.as_deref().map(ProbeKey::from_file).transpose()?;
            let socket = reflect::bind_reflector(bind, port)?;
            let local = socket.local_addr().context("reading the reflector's address")?;
            if bind.is_loopback() {
                tracing::warn!(%local, "answering loopback only; pass --bind with the address the robot reaches");
            }
            tracing::info!(%local, signed = key.is_some(), allowed = allow.len(), "reflecting rate probes");
            let mut registry = bauxite_metrics::Registry::default();
            let counters = metrics.map(|_| bauxite_shaper::metrics::ReflectorMetrics::register(&mut registry));
            let _metrics = metrics.map(|addr| bauxite_metrics::MetricsServer::start(addr, registry)).transpose()?;
            let options = ReflectorOptions { port: local.port(), key, allow, metrics: counters, ..Default::default() };
            let stats = reflect::run_reflector(&socket, &mut Reflector::new(options), &*stop_on_signals()?)?;
            tracing::info!(%stats, "reflector stopped");
        }
        Command::Demo { trials, duration, rate, link, timeline, out, direction } => {
            let duration = std::time::Duration::from_secs(duration);
            let scenario = match link {
                None => bauxite_demo::Scenario::seed(duration).context("--duration")?,
                Some(text) => {
                    let (spec, links, timeline) =
                        bauxite_core::link::load_link_directions(&text, timeline.as_deref()).context("--link")?;
                    let ways = direction.ways();
                    let (uplink, downlink) = links.resolve(
                        ways.contains(&bauxite_netlab::emulator::Direction::Uplink),
                        ways.contains(&bauxite_netlab::emulator::Direction::Downlink),
                    );
                    let link = bauxite_demo::EmulatedLink { spec, uplink, downlink, measured: ways[0] };
                    bauxite_demo::Scenario::emulated(link, timeline, duration).context("--duration and --timeline")?
                }
            };
            // Phase 2's profile, checked now rather than after phase 1 has run.
            bauxite_demo::run::protected_profile(rate, direction).context("--rate")?;
            // Root first: a refused run must not leave an empty `--out` behind.
            bauxite_shaper::daemon::require_root(
                "`bauxite demo` builds network namespaces and attaches eBPF programs in them",
            )?;
            bauxite_core::ensure_writable_dir(&out).context("--out")?;
            let options = bauxite_demo::DemoOptions {
                trials,
                scenario,
                rate,
                direction,
                out: out.clone(),
                exe: std::env::current_exe().context("locating the bauxite binary")?,
                stop: stop_on_signals()?,
            };
            let bar = progress::bar(u64::from(trials) * 2, "phases");
            let results = bauxite_demo::run(&options, |done, next| {
                bar.set_position(done);
                bar.set_message(next.to_string());
            })?;
            bar.finish_and_clear();
            print!("{}", results.markdown);
            eprintln!("bauxite demo: results in {}", out.display());
        }
        Command::Audit { file, json } => {
            // Exit 1: a check failed; exit 2: the file could not be audited at all.
            let report = match bauxite_demo::audit(&file) {
                Ok(report) => report,
                Err(e) => {
                    eprintln!("bauxite audit: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{report}");
            }
            if !report.pass {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Profile(ProfileCommand::Check { file }) => {
            let profile = bauxite_core::load_profile(&file)?;
            print!("{}", serde_yaml_ng::to_string(profile.profile()).context("writing the profile")?);
        }
        Command::Profile(ProfileCommand::Schema) => {
            println!("{}", serde_json::to_string_pretty(&bauxite_core::profile::json_schema())?);
        }
        Command::Reference(args) => reference::run(args, Cli::command())?,
        Command::Sim(command) => sim::run(*command)?,
        Command::Link(args) => return link::run(args),
        Command::LinkReap(args) => return link::reap(args),
        Command::Bridge(args) => bridge::run_bridge(args)?,
        Command::ProbeResponder(args) => bridge::run_responder(args)?,
        Command::Eval(command) => eval::run(command)?,
        Command::Down { iface } => {
            let report = bauxite_shaper::down(&iface)?;
            if report.anything() {
                println!("bauxite on {iface}: {report}");
            } else {
                println!("nothing of Bauxite's was on {iface}");
            }
        }
        Command::Status { iface, json } => {
            let report = bauxite_shaper::status(&iface)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{report}");
                if let Some(device) = bauxite_shaper::ingress::shaped_device(&iface) {
                    println!("\nthe downlink (this interface's ingress), shaped on {device}:");
                    print!("{}", bauxite_shaper::status(&device)?);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Makes any panic, in any thread, end the process: a worker thread that died while `main`
/// lived on would look alive to systemd while doing nothing (issue 10 #2). The default hook
/// prints the message (and a backtrace with `RUST_BACKTRACE`), then the process aborts
/// (SIGABRT, a non-zero exit), in debug and release builds alike.
fn abort_on_panic() {
    let print = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        print(info);
        std::process::abort();
    }));
}

/// `e` and its causes, each once: every Bauxite error keeps its cause out of its own
/// message and returns it from `source()`, so the chain joined by `: ` names each once.
fn error_chain(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

fn main() -> ExitCode {
    abort_on_panic();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // netlink-packet-route warns, on every link it parses, about per-family
        // attributes newer than it knows (harmless: Bauxite reads none of them).
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,netlink_packet_route=error".into()),
        )
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bauxite: {}", error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10 #10: OS errors were printed twice, once by the error that wraps them
    /// and once as its source.
    #[test]
    fn each_cause_is_printed_once() {
        let os = std::io::Error::from_raw_os_error(13);
        let out = bauxite_core::OutDirError { dir: "/x".into(), source: os };
        let e = anyhow::Error::new(out).context("--out");
        let text = error_chain(&e);
        assert_eq!(text.matches("os error 13").count(), 1, "{text}");
        assert_eq!(text, format!("--out: cannot write results to /x: {}", std::io::Error::from_raw_os_error(13)));
        let plain = anyhow::Error::new(std::io::Error::from_raw_os_error(2)).context("reading /y");
        assert_eq!(error_chain(&plain), format!("reading /y: {}", std::io::Error::from_raw_os_error(2)));
    }
}

//! `bauxite link`: a command behind an emulated link (`bauxite_netlab::shell`), and
//! `bauxite link trace-stats`.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bauxite_core::figures::{BIN_NS, LinkFacts};
use bauxite_core::link::{DeliveryTrace, LinkConfig, Timeline, load_link};
use bauxite_netlab::emulator::{Direction, EmulatorReport};
use bauxite_netlab::shell::{FateLog, Leftovers, LinkInterval, LinkShell, ShellOptions, intervals, write_record};
use bauxite_sys::ChildGuard;
use bauxite_telemetry::Recorder;
use bauxite_telemetry::foxglove::{Panel, layout};
use bauxite_telemetry::messages::topic;
use clap::{Args, Subcommand};

/// How long the command gets after SIGTERM (forwarded from `bauxite link`) before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct LinkArgs {
    #[command(subcommand)]
    tool: Option<LinkTool>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum LinkTool {
    /// A trace's length, mean rate, percentiles of its one-second rates and its silent
    /// seconds (mahimahi's format, or CSV rows `time_s,rate_mbps`).
    TraceStats {
        /// The trace.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    /// The uplink (the command → the host): the SPEC `demo --link` and `sim robot --link`
    /// take, e.g. `trace=FILE,queue=100kb,delay=20ms` or `rate=1.5mbit`.
    #[arg(long, value_name = "SPEC", required = true)]
    up: Option<String>,
    /// The downlink (the host → the command); unlimited if not given.
    #[arg(long, value_name = "SPEC")]
    down: Option<String>,
    /// Changes to the uplink at given times (YAML, as `demo --timeline` takes them).
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Write every packet's fate (`fates.csv`), the link's figures (`summary.json`), and
    /// per 100 ms each direction's capacity, throughput, queue delay and drops
    /// (`link.mcap`, with `foxglove_layout.json` to view it in Foxglove) here.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Run the command as root even under sudo (by default it runs as the user who ran sudo).
    #[arg(long)]
    as_root: bool,
    /// Put the link between two network namespaces that exist (`ip netns add`), NS_A
    /// sending the uplink, for test beds: each gets an interface `bxl-PID`, an address
    /// and a route to the other's through the link, and nothing else changes. Or
    /// between two interfaces of this namespace that hold no address: every frame is
    /// bridged through the link, and nothing is made. The command, if any, runs in
    /// this namespace (with `BAUXITE_LINK_A` and `BAUXITE_LINK_B` naming the two
    /// namespaces' addresses); without one the link lasts until Ctrl-C or SIGTERM.
    #[arg(long, num_args = 2, value_names = ["NS_A", "NS_B"])]
    between: Option<Vec<String>>,
    /// The command and its arguments (after `--`); `$SHELL` if none (with `--between`: none).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// What the hidden `bauxite link-reap` gets: the leftovers of one `bauxite link` to
/// remove when its standard input closes without a `done` line (its parent died).
#[derive(Args)]
pub struct ReapArgs {
    #[arg(long)]
    netns: Vec<String>,
    #[arg(long)]
    host_iface: Option<String>,
    #[arg(long)]
    nft_table: Option<String>,
    #[arg(long)]
    ip_forward: Option<String>,
}

pub fn run(args: LinkArgs) -> Result<ExitCode> {
    match args.tool {
        Some(LinkTool::TraceStats { file, json }) => {
            let stats = DeliveryTrace::load(&file)?.stats();
            if json {
                println!("{}", serde_json::to_string_pretty(&stats)?);
            } else {
                print!("{stats}");
            }
            Ok(ExitCode::SUCCESS)
        }
        None => run_behind_link(args.run),
    }
}

/// The links of `bauxite link`: the uplink with its timeline, the downlink.
fn links(run: &RunArgs) -> Result<(LinkConfig, Timeline, LinkConfig)> {
    let up = run.up.as_deref().context("--up SPEC is required")?;
    let (_, uplink, timeline) = load_link(up, run.timeline.as_deref()).context("--up")?;
    let downlink = match &run.down {
        None => LinkConfig::default(),
        Some(text) => {
            let (_, config, timeline) = load_link(text, None).context("--down")?;
            if !timeline.steps.is_empty() {
                bail!("--down: a timeline changes the uplink only (give it to --up or --timeline)");
            }
            config
        }
    };
    Ok((uplink, timeline, downlink))
}

fn run_behind_link(run: RunArgs) -> Result<ExitCode> {
    let (uplink, timeline, downlink) = links(&run)?;
    if let Some(dir) = &run.record {
        bauxite_core::ensure_writable_dir(dir).context("--record")?;
    }
    bauxite_shaper::daemon::require_root("`bauxite link` builds network namespaces")?;
    let stop = crate::stop_on_signals()?;
    let timed = !timeline.steps.is_empty();
    let (fate_sender, fates) = run.record.as_ref().map(|_| std::sync::mpsc::channel()).unzip();
    let options = ShellOptions {
        uplink: uplink.clone(),
        downlink: downlink.clone(),
        timeline: timeline.clone(),
        record_fates: run.record.is_some(),
        fate_log: fate_sender,
    };
    let run_id = std::process::id();
    let between = run.between.as_deref();
    // The reaper first: a death halfway through the setup leaves nothing either.
    let planned = if between.is_some() { Leftovers::of_between(run_id) } else { Leftovers::of_run(run_id) };
    let reaper = start_reaper(&planned)?;
    let built = match between {
        Some([a, b]) => LinkShell::between(run_id, a, b, options),
        _ => LinkShell::create(run_id, options),
    };
    let shell = match built {
        Ok(shell) => shell,
        Err(e) => {
            finish_reaper(reaper);
            return Err(e).context("building the link");
        }
    };
    // The fates go to disk while the link runs: a SIGKILL loses a tenth of a second of them.
    let fate_log = match (&run.record, fates, shell.emulator()) {
        (Some(dir), Some(fates), Some(emulator)) => {
            let path = dir.join("fates.csv");
            let log = std::fs::create_dir_all(dir).and_then(|()| FateLog::start(&path, emulator.start_ns(), fates));
            Some(log.with_context(|| format!("--record: writing {}", path.display()))?)
        }
        _ => None,
    };
    let a = shell.addresses;
    let status = match between {
        Some([ns_a, ns_b]) => {
            if shell.bridges_interfaces() {
                eprintln!("bauxite link: bridging interfaces {ns_a} and {ns_b}, {ns_a} sending the uplink");
            } else {
                eprintln!("bauxite link: {ns_a} at {} and {ns_b} at {}, {ns_a} sending the uplink", a.app, a.host);
            }
            if run.command.is_empty() {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(std::process::ExitStatus::from_raw(0))
            } else {
                let mut command = as_user(&run);
                command.env("BAUXITE_LINK_A", a.app.to_string()).env("BAUXITE_LINK_B", a.host.to_string());
                command.spawn().context("starting the command").and_then(|child| wait_or_stop(child, &stop))
            }
        }
        _ => {
            eprintln!(
                "bauxite link: {} behind the link at {} (gateway {}); the host is {}{}",
                shell.app.name().unwrap_or_default(),
                a.app,
                a.gateway,
                a.host,
                if shell.nat { ", and NAT reaches beyond it" } else { " (no nft: nothing beyond it)" }
            );
            command_in(&shell, &run)
                .spawn()
                .context("starting the command")
                .and_then(|child| wait_or_stop(child, &stop))
        }
    };
    let until_ns = bauxite_sys::monotonic_ns();
    let report = shell.stop().context("stopping the link");
    finish_reaper(reaper);
    let (status, report) = (status?, report?);
    if let Some(log) = fate_log {
        log.finish().context("--record: writing fates.csv")?;
    }
    if let Some(dir) = &run.record {
        let summary = write_record(dir, &report, until_ns, [&uplink, &downlink], timed)
            .with_context(|| format!("--record: writing {}", dir.display()))?;
        write_link_mcap(dir, &report, until_ns, (&uplink, &timeline), &downlink)
            .with_context(|| format!("--record: writing {}", dir.join("link.mcap").display()))?;
        eprintln!(
            "bauxite link: uplink {:.3} Mbit/s, downlink {:.3} Mbit/s delivered; record in {}",
            summary.uplink.delivered_mbps,
            summary.downlink.delivered_mbps,
            dir.display()
        );
    }
    Ok(exit_code_of(status))
}

/// `--record`'s `link.mcap`: each direction's [`LinkInterval`] per 100 ms on
/// `/bauxite/link/{uplink,downlink}/interval` (capacity, delivered, queue delay, drops),
/// stamped from the link's start; and `foxglove_layout.json`, which plots them.
fn write_link_mcap(
    dir: &Path,
    report: &EmulatorReport,
    until_ns: u64,
    (uplink, timeline): (&LinkConfig, &Timeline),
    downlink: &LinkConfig,
) -> Result<()> {
    let duration_ns = until_ns.saturating_sub(report.start_ns);
    let mut recorder = Recorder::create(&dir.join("link.mcap"))?;
    let mut columns = Vec::new();
    let steady = Timeline::default();
    for (name, direction, config, timeline) in
        [("uplink", Direction::Uplink, uplink, timeline), ("downlink", Direction::Downlink, downlink, &steady)]
    {
        let capacity = LinkFacts::of(config, timeline, duration_ns).capacity_bytes;
        let topic = topic("link", &format!("{name}/interval"));
        let channel = recorder.channel::<LinkInterval>(&topic)?;
        for (i, interval) in intervals(report, until_ns, direction, &capacity).iter().enumerate() {
            recorder.write(channel, (i as u64 + 1) * BIN_NS, interval)?;
        }
        let paths = |fields: &[&str]| fields.iter().map(|f| format!("{topic}.{f}")).collect();
        columns.push(vec![
            Panel::Plot {
                title: format!("{name}: capacity and delivered, Mbit/s"),
                paths: paths(&["capacity_mbps", "delivered_mbps"]),
            },
            Panel::Plot {
                title: format!("{name}: queue delay, ms"),
                paths: paths(&["queue_delay_p50_ms", "queue_delay_max_ms"]),
            },
            Panel::Plot {
                title: format!("{name}: packets per 100 ms"),
                paths: paths(&["arrived", "queue_full", "lost"]),
            },
        ]);
    }
    recorder.finish()?;
    std::fs::write(dir.join("foxglove_layout.json"), serde_json::to_string_pretty(&layout(&columns))? + "\n")?;
    Ok(())
}

/// The command in the app namespace (`ip netns exec`), as the sudo user unless
/// `--as-root`, with `BAUXITE_LINK_HOST` naming the host's address.
fn command_in(shell: &LinkShell, run: &RunArgs) -> Command {
    let app = shell.app.name().expect("created namespaces are named");
    let user = as_user(run);
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", app])
        .arg(user.get_program())
        .args(user.get_args())
        .env("BAUXITE_LINK_HOST", shell.addresses.host.to_string());
    command
}

/// The command (or `$SHELL`), as the user who ran sudo unless `--as-root` (`setpriv`).
fn as_user(run: &RunArgs) -> Command {
    let mut argv: Vec<String> = Vec::new();
    if let (false, Ok(uid), Ok(gid)) = (run.as_root, std::env::var("SUDO_UID"), std::env::var("SUDO_GID")) {
        argv.extend(["setpriv".into(), format!("--reuid={uid}"), format!("--regid={gid}"), "--init-groups".into()]);
        argv.push("--".into());
    }
    if run.command.is_empty() {
        argv.push(std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into()));
    } else {
        argv.extend(run.command.iter().cloned());
    }
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    command
}

/// Waits for the command; on SIGINT/SIGTERM to `bauxite link`, stops it (SIGTERM,
/// then SIGKILL [`STOP_GRACE`] later).
fn wait_or_stop(child: Child, stop: &AtomicBool) -> Result<std::process::ExitStatus> {
    let mut child = ChildGuard::new(child, STOP_GRACE);
    loop {
        if let Some(status) = child.try_wait().context("waiting for the command")? {
            return Ok(status);
        }
        if stop.load(Ordering::Relaxed) {
            return child.stop().context("stopping the command");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn exit_code_of(status: std::process::ExitStatus) -> ExitCode {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code.clamp(0, 255) as u8),
        (None, Some(signal)) => ExitCode::from((128 + signal).clamp(0, 255) as u8),
        _ => ExitCode::FAILURE,
    }
}

/// Starts `bauxite link-reap` with the leftovers: in its own process group (a
/// terminal's Ctrl-C does not reach it), it waits for its standard input to close
/// and removes them unless told `done` first. So a `bauxite link` killed with SIGKILL
/// leaves nothing behind.
fn start_reaper(leftovers: &Leftovers) -> Result<Child> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().context("locating the bauxite binary")?;
    Command::new(exe)
        .arg("link-reap")
        .args(leftovers.to_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting the reaper of `bauxite link`")
}

/// Tells the reaper all is cleaned up, and waits for it.
fn finish_reaper(mut reaper: Child) {
    if let Some(mut stdin) = reaper.stdin.take() {
        let _ = stdin.write_all(b"done\n");
    }
    let _ = reaper.wait();
}

/// `bauxite link-reap`: waits for standard input to close; removes the leftovers
/// unless it read `done`. Termination signals are ignored meanwhile: the reaper
/// ends when its parent does.
pub fn reap(args: ReapArgs) -> Result<ExitCode> {
    let ignored = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&ignored)).context("installing signal handlers")?;
    }
    let mut said = String::new();
    let _ = std::io::stdin().read_to_string(&mut said);
    if said.trim() != "done" {
        Leftovers {
            netns: args.netns,
            host_iface: args.host_iface,
            nft_table: args.nft_table,
            ip_forward: args.ip_forward,
        }
        .remove();
    }
    Ok(ExitCode::SUCCESS)
}

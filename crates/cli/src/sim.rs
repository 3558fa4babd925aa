//! `bauxite sim`: the scheduler simulator's command line (seed 003). Parsing and
//! wiring only; the simulator, the study and the writers are in `bauxite-sim`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bauxite_sim::output::{check_out_dir, write_outputs};
use bauxite_sim::study::{Family, StudyConfig, default_start_jitter_ms};
use bauxite_sim::{LimitScope, ScenarioConfig, Scheduler, Shard, SimError, StudyResult, run_shard, run_study};
use bauxite_telemetry::chart::Formats;
use clap::{Args, Subcommand};

/// `bauxite sim` subcommands.
#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// Run one scenario and write flows.csv, classes.csv, summary.json and summary.md.
    Run(Box<RunArgs>),
    /// Run scenario families (the seed's study and more) in parallel, or one shard of them.
    Study(Box<StudyArgs>),
    /// Combine the directories of every shard of a study into exactly the files an
    /// unsharded run writes.
    Merge(MergeArgs),
    /// The robot's lanes, the shaper's control laws and a (trace-driven) link in
    /// simulated time: both demo phases, the demo's figures and charts.
    Robot(RobotArgs),
    /// Compare `bauxite demo --link` runs with `sim robot` runs of the same links,
    /// with issue 12's tolerances: one table row per phase and link.
    Agree(AgreeArgs),
}

/// `bauxite sim agree`.
#[derive(Args, Debug)]
pub struct AgreeArgs {
    /// Pairs of output directories: a demo's, then the simulator's of the same link
    /// (`DEMO SIM [DEMO SIM ...]`), each holding its `summary.json`.
    #[arg(required = true, num_args = 2.., value_name = "DEMO SIM")]
    dirs: Vec<PathBuf>,
}

/// `bauxite sim robot`.
#[derive(Args, Debug)]
pub struct RobotArgs {
    /// A built-in profile (robot, orchestrator) or a profile YAML file.
    #[arg(long, default_value = "robot")]
    profile: String,
    /// The link, e.g. `trace=FILE,queue=100kb,delay=20ms` or `rate=1.5mbit`
    /// (default: the seed's step drop, 50 -> 1.5 Mbit/s at 5 s, 100 KB modem buffer, the demo TBF's 7570-byte bucket);
    /// or each way's, `up=trace=A.up,down=trace=A.down`, as `bauxite demo --link` takes them:
    /// --direction picks the one measured, and the other gives the return path its delay
    /// (ACKs and probe answers are never queued). With --sweep, give it several times to
    /// sweep over several links.
    #[arg(long)]
    link: Vec<String>,
    /// Changes to the --link link(s) at given times (YAML; e.g. examples/step-drop.yaml),
    /// as `bauxite demo --timeline` takes them.
    #[arg(long, value_name = "FILE", requires = "link")]
    timeline: Option<PathBuf>,
    /// Sweep one auto-rate parameter: `auto_rate.KEY=v1,v2,...` (rate auto), writing
    /// a table and the throughput/delay frontier instead of one run's figures.
    #[arg(long)]
    sweep: Option<String>,
    /// The protected phase's shaper rate: a rate known to the shaper (1.5mbit) or auto.
    #[arg(long, default_value = "auto")]
    rate: String,
    /// Which way the streams go: up (robot → base, the shaper on the robot's egress) or
    /// down (base → robot over the --link link, the shaper on the robot's ingress after
    /// it, as `bauxite up` with `direction: down` runs it; the references likewise).
    #[arg(long, default_value = "up", value_name = "up|down")]
    direction: String,
    /// Simulated seconds per phase (at most a day).
    #[arg(long, allow_negative_numbers = true, default_value_t = 20.0)]
    duration: f64,
    /// The video encoder's mean bit rate (the seed's stream: 3.5mbit). Far above the
    /// link (e.g. 100mbit) the video is an upload that takes all it is given, as an
    /// iperf3 or a file transfer does: what the shaper leaves unused shows in full.
    #[arg(long, value_name = "RATE")]
    video_rate: Option<String>,
    /// Seeds to run (1 to 1000); figures pool them.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seeds: u32,
    /// First seed; seed k uses seed + k.
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    seed: u64,
    /// Where results go.
    #[arg(long)]
    out: PathBuf,
}

/// `bauxite sim merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' --out directories, each shard of the study once, in any order.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where the merged results go (not one of the shards).
    #[arg(long)]
    out: PathBuf,
    /// Also write each chart as PNG (the SVG is always written). Rasterising is
    /// the costliest output: 7 % of a comparison study's CPU.
    #[arg(long)]
    png: bool,
}

/// `bauxite sim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The bottleneck scheduler: fifo, pfifo-fast, prio, fq-pie, fq-codel, drr, codel, pie.
    #[arg(long)]
    scheduler: String,
    /// DSCP marking of the application classes.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    dscp: String,
    /// Random seed (start offsets, the disciplines' own randomness).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seed: u64,
    /// Application start-time jitter, ms (0: all start together, as in the seed).
    #[arg(long, allow_negative_numbers = true)]
    start_jitter_ms: Option<f64>,
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Where results go.
    #[arg(long)]
    out: PathBuf,
    /// Also write each chart as PNG (the SVG is always written). Rasterising is
    /// the costliest output: 7 % of a comparison study's CPU.
    #[arg(long)]
    png: bool,
}

/// `bauxite sim study`.
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// Families: compare, load, followers, queue, access, burst, deadline, tcp-cross,
    /// wireless, or all (comma-separated).
    #[arg(long, default_value = "all")]
    family: String,
    /// Schedulers to compare (comma-separated); default the seed's five and drr.
    #[arg(long)]
    schedulers: Option<String>,
    /// Repetitions of each point with random start offsets; with more than one,
    /// figures are means with `_ci95` half-widths (and the start jitter must be
    /// above 0, or the repetitions would all be the same run). At most 1000, and
    /// at most a million flow records held over the whole study.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seeds: u32,
    /// Worker threads (default: one per core; at most four per core).
    #[arg(long, allow_negative_numbers = true)]
    jobs: Option<usize>,
    /// First seed; repetition k uses seed + k.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seed: u64,
    /// Start-time jitter, ms (default: 0 for one seed, 100 for several; 0 is
    /// refused with several seeds).
    #[arg(long, allow_negative_numbers = true)]
    start_jitter_ms: Option<f64>,
    /// Background rates of the load sweep, Mbit/s per direction (comma-separated).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    load_bg_mbps: Option<Vec<f64>>,
    /// Follower counts of the follower sweep (comma-separated).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',')]
    follower_counts: Option<Vec<u32>>,
    /// Queue limits of the queue sweep, packets (comma-separated).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',')]
    queue_limits: Option<Vec<u32>>,
    /// The followers' access-link rates of the access sweep, Mbit/s (comma-separated;
    /// default 1,2,5,10,100).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',')]
    access_values: Option<Vec<f64>>,
    /// Burst lengths of the burst sweep, ms (comma-separated; default 1,10,100,1000).
    #[arg(long, allow_negative_numbers = true, value_delimiter = ',')]
    burst_values: Option<Vec<f64>>,
    /// TCP connections per direction of the tcp-cross sweep (comma-separated; default 1,2,4,8).
    #[arg(long, value_delimiter = ',')]
    tcp_values: Option<Vec<u32>>,
    /// The wireless sweep's bottleneck links, `--link` SPECs separated by `;` (default
    /// the seed's 10 Mbit/s and 5 ms without loss, with 1 % loss and with Gilbert–Elliott
    /// bursts: `rate=10mbit,delay=5ms;…,loss=1%;…,ge=1%/25%/80%/0`).
    #[arg(long, value_delimiter = ';', value_name = "SPEC;SPEC")]
    wireless_values: Option<Vec<String>>,
    /// Run only the K-th of N equal, contiguous slices of the study's runs (K from
    /// 0 to N-1) and write that shard's files; `bauxite sim merge` combines them.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Where results go.
    #[arg(long)]
    out: PathBuf,
    /// Also write each chart as PNG (the SVG is always written). Rasterising is
    /// the costliest output: 7 % of a comparison study's CPU.
    #[arg(long)]
    png: bool,
}

/// Every scenario parameter; unset ones keep the seed's values.
#[derive(Args, Debug)]
struct ScenarioArgs {
    /// Followers, at most 16000 (study: the compare, load and queue families' count).
    #[arg(long, allow_negative_numbers = true)]
    followers: Option<u32>,
    /// Background payload rate per direction, Mbit/s (study: all but the load family).
    #[arg(long, allow_negative_numbers = true)]
    bg_mbps: Option<f64>,
    /// Bottleneck queue limit, packets (study: all but the queue family).
    #[arg(long, allow_negative_numbers = true)]
    queue: Option<u32>,
    /// Simulated seconds (applications stop then; the network drains after).
    #[arg(long, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Application start time, s.
    #[arg(long, allow_negative_numbers = true)]
    start: Option<f64>,
    /// Background flows per direction (0: no background; at most 8000).
    #[arg(long, allow_negative_numbers = true)]
    bg_flows: Option<u32>,
    /// Background UDP payload, bytes.
    #[arg(long, allow_negative_numbers = true)]
    bg_payload: Option<u32>,
    /// Background start delay after the other applications, ms.
    #[arg(long, allow_negative_numbers = true)]
    bg_start_offset_ms: Option<f64>,
    /// Whether a priority scheduler's limit is per band or shared: per-band | shared.
    #[arg(long)]
    limit_mode: Option<String>,
    /// Device transmit-queue length under the qdisc, packets (every link).
    #[arg(long, allow_negative_numbers = true)]
    device_queue: Option<u32>,
    /// Drop-tail queue of the access links, packets.
    #[arg(long, allow_negative_numbers = true)]
    access_queue: Option<u32>,
    /// Bottleneck rate, Mbit/s.
    #[arg(long, allow_negative_numbers = true)]
    bottleneck_mbps: Option<f64>,
    /// Bottleneck propagation delay, ms (at most one day).
    #[arg(long, allow_negative_numbers = true)]
    bottleneck_delay_ms: Option<f64>,
    /// Access link rate, Mbit/s (every access link).
    #[arg(long, allow_negative_numbers = true)]
    access_mbps: Option<f64>,
    /// The followers' access links' rate, Mbit/s, if not --access-mbps (study: all but
    /// the access family).
    #[arg(long, allow_negative_numbers = true)]
    follower_access_mbps: Option<f64>,
    /// Access link propagation delay, ms (at most one day).
    #[arg(long, allow_negative_numbers = true)]
    access_delay_ms: Option<f64>,
    /// Control payload, bytes.
    #[arg(long, allow_negative_numbers = true)]
    control_bytes: Option<u32>,
    /// Control packets/s per follower.
    #[arg(long, allow_negative_numbers = true)]
    control_pps: Option<f64>,
    /// Control DSCP.
    #[arg(long, allow_negative_numbers = true)]
    control_dscp: Option<u8>,
    /// Status payload, bytes.
    #[arg(long, allow_negative_numbers = true)]
    status_bytes: Option<u32>,
    /// Status packets/s per follower.
    #[arg(long, allow_negative_numbers = true)]
    status_pps: Option<f64>,
    /// Status DSCP.
    #[arg(long, allow_negative_numbers = true)]
    status_dscp: Option<u8>,
    /// Telemetry payload, bytes.
    #[arg(long, allow_negative_numbers = true)]
    telemetry_bytes: Option<u32>,
    /// Telemetry packets/s per follower.
    #[arg(long, allow_negative_numbers = true)]
    telemetry_pps: Option<f64>,
    /// Telemetry DSCP.
    #[arg(long, allow_negative_numbers = true)]
    telemetry_dscp: Option<u8>,
    /// Bulk payload, bytes.
    #[arg(long, allow_negative_numbers = true)]
    bulk_bytes: Option<u32>,
    /// Bulk packets/s per follower.
    #[arg(long, allow_negative_numbers = true)]
    bulk_pps: Option<f64>,
    /// Bulk DSCP.
    #[arg(long, allow_negative_numbers = true)]
    bulk_dscp: Option<u8>,
    /// The background in on/off bursts of this many ms at twice --bg-mbps, each followed
    /// by a silence as long: the same mean rate (0: steady, the default; study: all but
    /// the burst family).
    #[arg(long, allow_negative_numbers = true, value_name = "MS")]
    bg_burst: Option<f64>,
    /// With --bg-burst: each burst's length and the silence after it drawn from a
    /// Pareto distribution of this shape (> 1; 1.5 is heavy-tailed, self-similar
    /// traffic) with that mean, instead of every one exactly --bg-burst long.
    #[arg(long, allow_negative_numbers = true, value_name = "SHAPE")]
    bg_burst_pareto: Option<f64>,
    /// An application deadline, `CLASS=MS` (control, status, telemetry, bulk; may be
    /// repeated): packets later than it count in `deadline_miss_pct` as lost (study:
    /// the deadline family's, instead of control 10, status 50, telemetry 200).
    #[arg(long, value_name = "CLASS=MS")]
    deadline: Vec<String>,
    /// Bulk TCP connections (CUBIC) per direction between the background endpoints,
    /// beside the UDP background (study: all but the tcp-cross family, which sweeps
    /// them with half the UDP background).
    #[arg(long, value_name = "N")]
    tcp_flows: Option<u32>,
    /// The bottleneck as a radio link: a `--link` SPEC (`trace=FILE`, `rate=`, `loss=`,
    /// `ge=`, `delay=`, `jitter=`, `seed=`) for both directions, or `up=SPEC,down=SPEC`
    /// for the followers' uplink and downlink. Its delay replaces --bottleneck-delay-ms;
    /// the scheduler keeps the queue (study: all but the wireless family).
    #[arg(long, value_name = "SPEC")]
    link: Option<String>,
}

impl ScenarioArgs {
    /// The seed's scenario with every given flag applied.
    fn apply(&self, c: &mut ScenarioConfig) -> Result<()> {
        macro_rules! set {
            ($($flag:ident => $($field:ident).+),* $(,)?) => {
                $(if let Some(v) = self.$flag { c.$($field).+ = v; })*
            };
        }
        set!(
            followers => followers, bg_mbps => bg_mbps, queue => queue_packets, duration => duration_s,
            start => app_start_s, bg_flows => bg_flows, bg_payload => bg_payload_bytes,
            bg_start_offset_ms => bg_start_offset_ms, device_queue => device_queue_packets,
            access_queue => access_queue_packets, bottleneck_mbps => bottleneck_mbps,
            bottleneck_delay_ms => bottleneck_delay_ms, access_mbps => access_mbps,
            access_delay_ms => access_delay_ms, tcp_flows => tcp_flows,
            control_bytes => control.payload_bytes, control_pps => control.pps, control_dscp => control.dscp,
            status_bytes => status.payload_bytes, status_pps => status.pps, status_dscp => status.dscp,
            telemetry_bytes => telemetry.payload_bytes, telemetry_pps => telemetry.pps,
            telemetry_dscp => telemetry.dscp,
            bulk_bytes => bulk.payload_bytes, bulk_pps => bulk.pps, bulk_dscp => bulk.dscp,
        );
        if let Some(rate) = self.follower_access_mbps {
            c.follower_access_mbps = Some(rate);
        }
        if let Some(ms) = self.bg_burst {
            c.bg_burst_ms = ms;
        }
        if let Some(shape) = self.bg_burst_pareto {
            c.bg_burst_pareto = Some(shape);
        }
        if let Some(link) = &self.link {
            c.link = Some(link.clone());
        }
        for text in &self.deadline {
            c.deadlines.set(text)?;
        }
        if let Some(mode) = &self.limit_mode {
            c.limit_mode = mode.parse::<LimitScope>().map_err(|e| SimError::invalid("limit-mode", e.to_string()))?;
        }
        Ok(())
    }
}

/// Runs a `bauxite sim` subcommand.
pub fn run(command: SimCommand) -> Result<()> {
    let (study, out, png) = match command {
        SimCommand::Robot(args) => return robot(&args),
        SimCommand::Merge(args) => return merge(&args),
        SimCommand::Agree(args) => return agree(&args),
        SimCommand::Run(args) => {
            let mut base = ScenarioConfig {
                scheduler: args.scheduler.parse::<Scheduler>()?,
                dscp: args.dscp == "on",
                seed: args.seed,
                start_jitter_ms: args.start_jitter_ms.unwrap_or(0.0),
                ..ScenarioConfig::default()
            };
            // A steady background has no bursts to draw.
            if args.scenario.bg_burst_pareto.is_some() && args.scenario.bg_burst.is_none_or(|ms| ms == 0.0) {
                anyhow::bail!("--bg-burst-pareto: needs --bg-burst MS, the bursts' mean length");
            }
            args.scenario.apply(&mut base)?;
            let study = StudyConfig { families: vec![Family::Run], seeds: 1, jobs: 1, base, ..StudyConfig::default() };
            (study, args.out, args.png)
        }
        SimCommand::Study(args) => {
            let mut study = StudyConfig { families: Family::parse_list(&args.family)?, ..StudyConfig::default() };
            if let Some(list) = &args.schedulers {
                study.schedulers = list.split(',').map(|s| s.parse::<Scheduler>()).collect::<Result<Vec<_>, _>>()?;
            }
            study.seeds = args.seeds;
            study.jobs = match args.jobs {
                Some(0) => anyhow::bail!("--jobs: must be at least 1 (got 0)"),
                Some(n) => n,
                None => 0,
            };
            study.base.seed = args.seed;
            study.base.start_jitter_ms = args.start_jitter_ms.unwrap_or(default_start_jitter_ms(args.seeds));
            args.scenario.apply(&mut study.base)?;
            if let Some(v) = args.load_bg_mbps {
                study.load_bg_mbps = v;
            }
            if let Some(v) = args.follower_counts {
                study.follower_counts = v;
            }
            if let Some(v) = args.queue_limits {
                study.queue_limits = v;
            }
            if let Some(v) = args.access_values {
                study.access_mbps = v;
            }
            if let Some(v) = args.burst_values {
                study.burst_ms = v;
            }
            if let Some(v) = args.tcp_values {
                study.tcp_flow_counts = v;
            }
            if let Some(v) = args.wireless_values {
                study.wireless_links = v;
            }
            if let Some(shard) = &args.shard {
                return execute_shard(&study, shard.parse()?, &args.out);
            }
            (study, args.out, args.png)
        }
    };
    execute(&study, &out, chart_formats(png))
}

/// The study's charts are SVG, and PNG too on `--png`.
fn chart_formats(png: bool) -> Formats {
    if png { Formats::PngAndSvg } else { Formats::Svg }
}

/// Validates everything, runs with a progress bar on a terminal, writes the files.
fn execute(study: &StudyConfig, out: &Path, formats: Formats) -> Result<()> {
    // Every parameter of every run is checked, and --out too, before anything runs
    // or anything is written.
    let total = study.plan()?.len();
    check_out_dir(out)?;
    let bar = crate::progress::bar(total as u64, "runs");
    let cpu_before = bauxite_sys::process_cpu_ns();
    let result: StudyResult = run_study(study, &|p| {
        bar.set_position(p.done as u64);
        bar.set_message(p.run.label());
    })?;
    // CPU time of the runs alone (not of the files and charts written after), the
    // figure that compares with another simulator's on a loaded machine.
    let cpu_s = (bauxite_sys::process_cpu_ns() - cpu_before) as f64 / 1e9;
    bar.finish_and_clear();
    write_outputs(out, &result)?;
    bauxite_sim::charts::write(out, &bauxite_sim::series::chart_data(&result), formats)?;
    print!("{}", bauxite_sim::output::summary_md(&result));
    println!(
        "\nsimulated {} events in {:.2} s ({:.3} CPU-s): {:.2} M events/s ({} runs)",
        result.events,
        result.wall_s,
        cpu_s,
        result.events_per_s() / 1e6,
        result.runs.len()
    );
    eprintln!("bauxite sim: results in {}", out.display());
    Ok(())
}

/// `bauxite sim study --shard K/N`: validates everything, runs the shard's runs,
/// writes its files (no charts: those need the whole study).
fn execute_shard(study: &StudyConfig, shard: Shard, out: &Path) -> Result<()> {
    let total = study.plan_shard(shard)?.len();
    check_out_dir(out)?;
    let bar = crate::progress::bar(total as u64, "runs");
    let cpu_before = bauxite_sys::process_cpu_ns();
    let result = run_shard(study, shard, &|p| {
        bar.set_position(p.done as u64);
        bar.set_message(p.run.label());
    })?;
    let cpu_s = (bauxite_sys::process_cpu_ns() - cpu_before) as f64 / 1e9;
    bar.finish_and_clear();
    bauxite_sim::shard::write_shard(out, &result)?;
    let runs = result.ran.runs.len();
    let events: u64 = result.ran.runs.iter().map(|(_, r)| r.counters.events).sum();
    println!(
        "shard {shard}: runs {} to {} of {}, {events} events in {:.2} s ({cpu_s:.1} CPU-s)",
        result.first_run,
        result.first_run + runs - 1,
        result.total_runs,
        result.ran.wall_s
    );
    eprintln!("bauxite sim: shard {shard} in {} (combine every shard with `bauxite sim merge`)", out.display());
    Ok(())
}

/// `bauxite sim merge`: the merged tables and summaries, then the charts.
fn merge(args: &MergeArgs) -> Result<()> {
    let (result, _) = bauxite_sim::shard::merge(&args.dirs, &args.out)?;
    bauxite_sim::charts::write(&args.out, &bauxite_sim::series::chart_data(&result), chart_formats(args.png))?;
    print!("{}", bauxite_sim::output::summary_md(&result));
    eprintln!("bauxite sim: {} shards merged into {}", args.dirs.len(), args.out.display());
    Ok(())
}

/// `bauxite sim agree`: reads every pair before printing anything.
fn agree(args: &AgreeArgs) -> Result<()> {
    use bauxite_sim::robot::agree::{AGREEMENT_HEADER, agreement_md, check_same_link, link_label, read_summary};
    if !args.dirs.len().is_multiple_of(2) {
        anyhow::bail!("{} directories given: they come in pairs, a demo's then the simulator's", args.dirs.len());
    }
    let mut rows = String::new();
    for pair in args.dirs.chunks(2) {
        let demo = read_summary(&pair[0].join("summary.json"))?;
        let sim = read_summary(&pair[1].join("summary.json"))?;
        check_same_link(&demo, &sim)
            .map_err(|e| anyhow::anyhow!("{} and {}: {e}", pair[0].display(), pair[1].display()))?;
        rows += &agreement_md(&link_label(&demo), &demo, &sim);
    }
    print!("{AGREEMENT_HEADER}{rows}");
    Ok(())
}

/// `bauxite sim robot`: checks every input (and --out) before running anything.
fn robot(args: &RobotArgs) -> Result<()> {
    use bauxite_core::{BitRate, Profile};
    use bauxite_sim::robot::sweep::{SweepSpec, run_sweep, sweep_md, write_sweep};
    use bauxite_sim::robot::{RateMode, RobotConfig, output, simulate};
    use std::time::Duration;

    let profile = match Profile::builtin(&args.profile) {
        Some(p) => p.validate().with_context(|| format!("the built-in profile `{}`", args.profile))?,
        None => bauxite_core::load_profile(Path::new(&args.profile)).context("--profile")?,
    };
    let rate = match args.rate.trim() {
        r if r.eq_ignore_ascii_case("auto") => RateMode::Auto,
        r => RateMode::Fixed(r.parse::<BitRate>().map_err(|e| SimError::invalid("rate", e.to_string()))?),
    };
    let profile = match args.direction.as_str() {
        "up" => profile,
        "down" => {
            let setting = match rate {
                RateMode::Auto => bauxite_core::RateSetting::Auto,
                RateMode::Fixed(r) => bauxite_core::RateSetting::Fixed(r),
            };
            let mut p = profile.into_profile();
            if rate == RateMode::Auto && p.auto_rate.reflector.is_empty() {
                // The simulator's reflector is the far end itself; the profile need not name one.
                p.auto_rate.reflector = vec![format!("192.0.2.1:{}", bauxite_core::DEFAULT_REFLECTOR_PORT)];
            }
            // As `bauxite up --ingress` shapes the downlink, the uplink left alone.
            let mut p = p.validate().and_then(|p| p.with_ingress(setting)).context("--direction down")?.into_profile();
            p.direction = bauxite_core::Direction::Down;
            p.validate().context("--direction down")?
        }
        other => return Err(SimError::invalid("direction", format!("`{other}` is not a direction: up or down")).into()),
    };
    if !(args.duration.is_finite() && args.duration > 0.0 && args.duration <= 86_400.0) {
        return Err(SimError::invalid("duration", format!("{} is not between 0 and 86400 s", args.duration)).into());
    }
    if !(1..=1000).contains(&args.seeds) {
        return Err(SimError::invalid("seeds", format!("{} is not between 1 and 1000", args.seeds)).into());
    }
    let sweep = args.sweep.as_deref().map(str::parse::<SweepSpec>).transpose()?;
    if sweep.is_none() && args.link.len() > 1 {
        return Err(SimError::invalid("link", "given more than once: several links need --sweep").into());
    }
    let measures_down = args.direction == "down";
    let (links, reverse_delay) = if args.link.is_empty() {
        (vec![step_drop()], None)
    } else {
        let parsed = (args.link.iter())
            .map(|text| parse_link(text, args.timeline.as_deref(), measures_down))
            .collect::<Result<Vec<_>, _>>()?;
        if sweep.is_some() && parsed.iter().any(|(_, reverse)| reverse.is_some()) {
            return Err(SimError::invalid("link", "--sweep takes plain SPECs, not up=…,down=…").into());
        }
        let reverse_delay = parsed[0].1;
        (parsed.into_iter().map(|(link, _)| link).collect(), reverse_delay)
    };
    let (label, link, timeline) = links[0].clone();
    let mut workload = bauxite_core::workload::WorkloadSpec::default();
    if let Some(text) = &args.video_rate {
        workload.video.bitrate_bps = video_rate(text)?;
    }
    let config = RobotConfig {
        profile,
        workload,
        link,
        timeline,
        reverse_delay,
        duration: Duration::from_secs_f64(args.duration),
        rate,
        seed: args.seed,
    };
    let configs = sweep.as_ref().map(|s| s.configs(&config)).transpose()?;
    check_out_dir(&args.out)?;
    let first_lane = |port| config.profile.lane_of(&bauxite_core::PacketKey::udp(40_000, port)) == 0;
    if !config.workload.streams.iter().any(|s| first_lane(s.port)) {
        eprintln!(
            "bauxite sim robot: profile `{}` puts none of the workload's UDP streams in its first lane: no critical figures",
            config.profile.profile().name
        );
    }
    let started = std::time::Instant::now();
    // Simulated time is timed alone; drawing the charts comes after.
    let (points, simulated) = match (&sweep, &configs) {
        (Some(spec), Some(configs)) => {
            let bar = crate::progress::bar((configs.len() * links.len()) as u64, "points");
            let result = run_sweep(configs, spec, &links, args.seeds, &|n| bar.set_position(n as u64));
            bar.finish_and_clear();
            let simulated = started.elapsed();
            write_sweep(&args.out, &result)?;
            print!("{}", sweep_md(&result));
            (result.points.len(), simulated)
        }
        _ => {
            let outcome = simulate(&config, args.seeds, &label);
            let simulated = started.elapsed();
            output::write_outputs(&args.out, &outcome.summary, &outcome.runs[0], &outcome.link)?;
            print!("{}", output::summary_md(&outcome.summary));
            (1, simulated)
        }
    };
    println!(
        "\nsimulated {points} point(s) x {} seed(s) x 2 phases x {} s in {:.2} s",
        args.seeds,
        args.duration,
        simulated.as_secs_f64()
    );
    eprintln!("bauxite sim robot: results in {}", args.out.display());
    Ok(())
}

/// `--video-rate`: a bit rate from 64 kbit/s to 10 Gbit/s.
fn video_rate(text: &str) -> Result<f64, SimError> {
    let rate = text.parse::<bauxite_core::BitRate>().map_err(|e| SimError::invalid("video-rate", e.to_string()))?;
    if !(64_000..=10_000_000_000).contains(&rate.bps()) {
        return Err(SimError::invalid("video-rate", format!("{rate} is not between 64kbit and 10gbit")));
    }
    Ok(rate.bps() as f64)
}

/// The seed's step drop: 50 Mbit/s, then 1.5 Mbit/s from 5 s, behind a 100 KB buffer.
fn step_drop() -> bauxite_sim::robot::sweep::SweepLink {
    use bauxite_core::BitRate;
    use bauxite_core::link::{DEMO_TBF_BURST_BYTES, LinkConfig, LinkRate, Timeline};
    // The demo's TBF: a token bucket, not a wire.
    (
        format!("step 50mbit -> 1.5mbit at 5s, queue=100kb, burst={DEMO_TBF_BURST_BYTES}b"),
        LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(50_000_000)),
            burst_bytes: Some(DEMO_TBF_BURST_BYTES),
            ..LinkConfig::default()
        },
        Timeline::of_rates(&[(std::time::Duration::from_secs(5), BitRate::from_bps(1_500_000))]),
    )
}

/// A `--link` value (and `--timeline`), its traces and timeline read: the measured
/// way's link and, when each way is given (`up=…,down=…`), the other's delay.
fn parse_link(
    text: &str,
    timeline: Option<&Path>,
    measures_down: bool,
) -> Result<(bauxite_sim::robot::sweep::SweepLink, Option<std::time::Duration>), SimError> {
    use bauxite_core::link::LinkDirections;
    let invalid = |e: bauxite_core::link::LinkSpecError| SimError::invalid("link", format!("{e}"));
    let (label, links, timeline) = bauxite_core::link::load_link_directions(text, timeline).map_err(invalid)?;
    let (up, down) = links.resolve(!measures_down, measures_down);
    let (measured, other) = if measures_down { (down, up) } else { (up, down) };
    let reverse_delay = matches!(links, LinkDirections::Each { .. }).then_some(other.delay);
    Ok(((label, measured, timeline), reverse_delay))
}

//! The study: scenario families, run in parallel, aggregated over seeds.
//!
//! The seed ran three families — a scheduler comparison at its baseline point (10
//! runs), a background-load sweep (50) and a follower sweep (30) — with one seed
//! each. Bauxite runs the same grid plus DRR (the weighted scheduler the seed left
//! as future work) and a queue-limit sweep, each point `seeds` times with random
//! application start offsets, and reports every figure as a mean with a Student-t
//! 95 % half-width.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use bauxite_core::OrchestratorLane;
use bauxite_core::stats::{self, mean_ci95};

use crate::error::SimError;
use crate::metrics::{ClassRow, FIGURES};
use crate::scenario::{Deadlines, ScenarioConfig, ScenarioResult, run_scenario};
use crate::scheduler::Scheduler;
use crate::util::{first_seen, on_off};

/// A family of runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// Every scheduler × DSCP off/on at the base point (the seed's 10 runs).
    Compare,
    /// Background rate sweep (the seed's 50 runs: 8, 10, 12, 14, 16 Mbit/s).
    Load,
    /// Follower-count sweep (the seed's 30 runs: 4, 8, 16).
    Followers,
    /// Queue-limit sweep (beyond the seed).
    Queue,
    /// The followers' access-link rate swept (the seed's future work): the bottleneck
    /// moves to the edge.
    Access,
    /// The background in on/off bursts of swept lengths at the same mean rate (the
    /// seed's "background burstiness").
    Burst,
    /// The load sweep with each class's application deadline: how many packets each
    /// scheduler delivers too late to use (the seed's "application-level deadlines").
    Deadline,
    /// Bulk TCP connections (CUBIC) beside half the UDP background, their number
    /// swept: cross traffic that fills whatever queue it meets (the seed's "mixed
    /// TCP/UDP cross traffic").
    TcpCross,
    /// The bottleneck as a radio link (`--link` SPECs: loss, Gilbert–Elliott bursts,
    /// a delivery trace), one point per SPEC (the seed's "wireless links").
    Wireless,
    /// The base scenario alone (`bauxite sim run`).
    Run,
}

impl Family {
    /// What `--family all` runs: the seed's three families, the queue sweep and the
    /// seed's future work.
    pub const ALL: [Family; 9] = [
        Family::Compare,
        Family::Load,
        Family::Followers,
        Family::Queue,
        Family::Access,
        Family::Burst,
        Family::Deadline,
        Family::TcpCross,
        Family::Wireless,
    ];

    /// The CSV name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Compare => "compare",
            Family::Load => "load",
            Family::Followers => "followers",
            Family::Queue => "queue",
            Family::Access => "access",
            Family::Burst => "burst",
            Family::Deadline => "deadline",
            Family::TcpCross => "tcp-cross",
            Family::Wireless => "wireless",
            Family::Run => "run",
        }
    }

    /// Parses `compare|load|followers|queue|access|burst|deadline|tcp-cross|wireless|all` (comma-separated lists allowed),
    /// without duplicates, in the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Family>, SimError> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim) {
            let add: Vec<Family> = match part {
                "all" => Self::ALL.to_vec(),
                other => vec![other.parse()?],
            };
            for f in add {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
        Ok(out)
    }
}

impl FromStr for Family {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "compare" => Ok(Family::Compare),
            "load" => Ok(Family::Load),
            "followers" => Ok(Family::Followers),
            "queue" => Ok(Family::Queue),
            "access" => Ok(Family::Access),
            "burst" => Ok(Family::Burst),
            "deadline" => Ok(Family::Deadline),
            "tcp-cross" => Ok(Family::TcpCross),
            "wireless" => Ok(Family::Wireless),
            _ => Err(SimError::invalid(
                "family",
                format!(
                    "unknown family `{s}` (compare, load, followers, queue, access, burst, deadline, tcp-cross, \
                     wireless or all)"
                ),
            )),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Family {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Reads what [`Serialize`] wrote (a shard's `summary.json`), `run` included.
impl<'de> Deserialize<'de> for Family {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        match name.as_str() {
            "run" => Ok(Family::Run),
            other => other.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The start-offset jitter a study uses when the caller gives none: none for one
/// seed (the seed's synchronised start, which its figures need), and 100 ms for
/// several — longer than every application's period (5 to 50 ms) and the
/// background's, so each seed draws independent phases between all the packet
/// trains, at the cost of at most 0.5 % of a 20 s run's sending time.
pub fn default_start_jitter_ms(seeds: u32) -> f64 {
    if seeds > 1 { 100.0 } else { 0.0 }
}

/// The most repetitions of a point (`--seeds`). A study holds every run with its
/// flows until it ends, because its outputs need all of them at once: `flows.csv`
/// and the summaries list runs in plan order while the runs finish in any order on
/// the worker threads, and the charts and tables are drawn from the whole result.
/// Streaming them would mean rewriting every writer; bounding the study costs
/// nothing anyone needs: 1000 seeds narrow a 95 % interval to about 6 % of one
/// run's spread (2/√1000). `--seeds 1000000` grew to 2.1 GB in 5 s before this.
pub const MAX_SEEDS: u32 = 1000;

/// The most flow records a study may hold (runs × flows per run, where a run has
/// four flows per follower and two per background flow). A record costs 0.45 to
/// 0.8 KB with its share of its run (measured as peak RSS growth: the compare family
/// from 250 to 1000 followers, +36 000 records, +16 MB; from 10 to 80 seeds,
/// +15 000 records, +12 MB), so this bounds a study's results to under 800 MB.
/// 1000 seeds of the compare family are 216 000 records; its 12 runs at the most
/// followers a scenario allows (16 000) are 768 000.
pub const MAX_FLOW_RECORDS: u64 = 1_000_000;

/// The most worker threads (`--jobs`) per core. The runs are CPU-bound: threads
/// beyond the cores add a stack and a simulation's memory each and only switch
/// between runs; a few per core are allowed for cores busy elsewhere.
/// `--jobs 100000` started over 3 500 threads before this.
pub const MAX_JOBS_PER_CORE: usize = 4;

/// The most worker threads a study may ask for on this machine.
pub fn max_jobs() -> usize {
    MAX_JOBS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What to run. Serialized into a shard's `summary.json`, so that `bauxite sim
/// merge` knows the study its shards belong to and can plan it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyConfig {
    /// Families, in output order.
    pub families: Vec<Family>,
    /// Schedulers compared in every family, in table order.
    pub schedulers: Vec<Scheduler>,
    /// Repetitions of each point; run `k` (from 0) uses seed `base.seed + k`. More
    /// than one needs a start jitter above 0 (`base.start_jitter_ms`): see
    /// [`StudyConfig::plan`].
    pub seeds: u32,
    /// Every parameter a family does not sweep (and the compare family's point).
    pub base: ScenarioConfig,
    /// Background rates of the load family, Mbit/s per direction.
    pub load_bg_mbps: Vec<f64>,
    /// Follower counts of the followers family.
    pub follower_counts: Vec<u32>,
    /// Queue limits of the queue family, packets.
    pub queue_limits: Vec<u32>,
    /// The followers' access-link rates of the access family, Mbit/s.
    #[serde(default = "default_access_mbps")]
    pub access_mbps: Vec<f64>,
    /// Burst lengths of the burst family, ms.
    #[serde(default = "default_burst_ms")]
    pub burst_ms: Vec<f64>,
    /// TCP connections per direction of the tcp-cross family.
    #[serde(default = "default_tcp_flow_counts")]
    pub tcp_flow_counts: Vec<u32>,
    /// The wireless family's bottleneck links, `--link` SPECs.
    #[serde(default = "default_wireless_links")]
    pub wireless_links: Vec<String>,
    /// Worker threads (0: one per core). Not part of what a study computes, so
    /// shards run with different `--jobs` still merge.
    #[serde(skip)]
    pub jobs: usize,
}

impl Default for StudyConfig {
    fn default() -> Self {
        let mut schedulers = Scheduler::SEED.to_vec();
        schedulers.push(Scheduler::Drr);
        Self {
            families: Family::ALL.to_vec(),
            schedulers,
            seeds: 1,
            base: ScenarioConfig::default(),
            load_bg_mbps: vec![8.0, 10.0, 12.0, 14.0, 16.0],
            follower_counts: vec![4, 8, 16],
            queue_limits: vec![10, 20, 40, 80, 160],
            access_mbps: default_access_mbps(),
            burst_ms: default_burst_ms(),
            tcp_flow_counts: default_tcp_flow_counts(),
            wireless_links: default_wireless_links(),
            jobs: 0,
        }
    }
}

/// The access family's rates: from below the 10 Mbit/s bottleneck to the seed's 100.
fn default_access_mbps() -> Vec<f64> {
    vec![1.0, 2.0, 5.0, 10.0, 100.0]
}

/// The burst family's lengths: a few packets to whole seconds of background.
fn default_burst_ms() -> Vec<f64> {
    vec![1.0, 10.0, 100.0, 1000.0]
}

/// The tcp-cross family's connections per direction: one to as many as iperf3 -P 8.
fn default_tcp_flow_counts() -> Vec<u32> {
    vec![1, 2, 4, 8]
}

/// The wireless family's links: the seed's bottleneck (10 Mbit/s, 5 ms) as a radio
/// with no loss (the reference: the wire's figures), 1 % independent loss, and
/// Gilbert–Elliott bursts of loss (1 % of packets start a burst, a burst lasts 4
/// packets on average and loses 80 % of them: about 3 % lost). Traces are files:
/// `--wireless-values 'trace=FILE,delay=5ms;…'`.
fn default_wireless_links() -> Vec<String> {
    ["rate=10mbit,delay=5ms", "rate=10mbit,delay=5ms,loss=1%", "rate=10mbit,delay=5ms,ge=1%/25%/80%/0"]
        .map(String::from)
        .to_vec()
}

/// One planned run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Its family.
    pub family: Family,
    /// Which repetition (0-based).
    pub seed_index: u32,
    /// The complete scenario.
    pub config: ScenarioConfig,
}

impl RunSpec {
    /// A short label for progress displays.
    pub fn label(&self) -> String {
        let c = &self.config;
        format!(
            "{} {} dscp={} n={} bg={} q={} seed={}",
            self.family,
            c.scheduler,
            on_off(c.dscp),
            c.followers,
            c.bg_mbps,
            c.queue_packets,
            c.seed
        )
    }
}

impl StudyConfig {
    /// Every run, in output order: family, swept value, scheduler, DSCP off/on, seed.
    /// Checks every parameter first; nothing runs on an error.
    ///
    /// Several seeds with no start jitter are refused. The start offsets are the
    /// only thing the seed changes for FIFO, PRIO, pfifo_fast-style, DRR and CoDel,
    /// so their repetitions would be one run copied and their `_ci95` half-widths
    /// a 0 that reads like a measured interval; for the disciplines that do draw
    /// from the seed (PIE, the FQ hash salt) the interval would cover that alone,
    /// not the phase of the packet trains the figures depend on most.
    pub fn plan(&self) -> Result<Vec<RunSpec>, SimError> {
        self.plan_shard(Shard::WHOLE)
    }

    /// The runs of one shard of the study, in output order ([`Shard::range`] of
    /// [`StudyConfig::plan`]'s list), checked as [`StudyConfig::plan`] checks
    /// them; the flow-record bound applies to the shard alone, since that is
    /// what one process holds.
    pub fn plan_shard(&self, shard: Shard) -> Result<Vec<RunSpec>, SimError> {
        let mut runs = self.plan_all()?;
        let range = shard.range(runs.len())?;
        runs.truncate(range.end);
        runs.drain(..range.start);
        check_flow_records(&runs, shard)?;
        Ok(runs)
    }

    /// Every run, checked, but without the flow-record bound: `bauxite sim merge`
    /// plans the whole study without holding any flow.
    pub(crate) fn plan_all(&self) -> Result<Vec<RunSpec>, SimError> {
        if self.seeds == 0 {
            return Err(SimError::invalid("seeds", "must be at least 1 (got 0)"));
        }
        if self.seeds > MAX_SEEDS {
            return Err(SimError::invalid(
                "seeds",
                format!(
                    "{} is more than {MAX_SEEDS}: every run is held in memory until the study ends, and \
                     {MAX_SEEDS} seeds already narrow a 95 % interval to 6 % of one run's spread",
                    self.seeds
                ),
            ));
        }
        if self.jobs > max_jobs() {
            return Err(SimError::invalid(
                "jobs",
                format!(
                    "{} is more than {} ({MAX_JOBS_PER_CORE} per core): the runs are CPU-bound, so more \
                     threads only add memory",
                    self.jobs,
                    max_jobs()
                ),
            ));
        }
        if self.seeds > 1 && self.base.start_jitter_ms == 0.0 {
            return Err(SimError::invalid(
                "start-jitter-ms",
                format!(
                    "0 with --seeds {}: without start jitter every seed starts the packet trains in the same \
                     phase, so the repetitions would not vary and their _ci95 half-widths would not be confidence \
                     intervals; give a jitter above 0 (the default for several seeds is {} ms) or --seeds 1",
                    self.seeds,
                    default_start_jitter_ms(self.seeds)
                ),
            ));
        }
        if self.families.is_empty() {
            return Err(SimError::invalid("family", "no family to run"));
        }
        if self.schedulers.is_empty() && self.families.iter().any(|f| *f != Family::Run) {
            return Err(SimError::invalid("schedulers", "no scheduler to compare"));
        }
        let mut points: Vec<(Family, ScenarioConfig)> = Vec::new();
        let grid = |points: &mut Vec<(Family, ScenarioConfig)>, family, set: &dyn Fn(&mut ScenarioConfig)| {
            for &scheduler in &self.schedulers {
                for dscp in [false, true] {
                    let mut c = self.base.clone();
                    set(&mut c);
                    c.scheduler = scheduler;
                    c.dscp = dscp;
                    points.push((family, c));
                }
            }
        };
        for &family in &self.families {
            match family {
                Family::Run => points.push((Family::Run, self.base.clone())),
                Family::Compare => grid(&mut points, family, &|_| {}),
                Family::Load => {
                    if self.load_bg_mbps.is_empty() {
                        return Err(SimError::invalid("load-bg-mbps", "the load sweep needs at least one rate"));
                    }
                    for &bg in &self.load_bg_mbps {
                        grid(&mut points, family, &|c| c.bg_mbps = bg);
                    }
                }
                Family::Followers => {
                    if self.follower_counts.is_empty() {
                        return Err(SimError::invalid(
                            "follower-counts",
                            "the follower sweep needs at least one count",
                        ));
                    }
                    for &n in &self.follower_counts {
                        grid(&mut points, family, &|c| c.followers = n);
                    }
                }
                Family::Queue => {
                    if self.queue_limits.is_empty() {
                        return Err(SimError::invalid("queue-limits", "the queue sweep needs at least one limit"));
                    }
                    for &q in &self.queue_limits {
                        grid(&mut points, family, &|c| c.queue_packets = q);
                    }
                }
                Family::Access => {
                    if self.access_mbps.is_empty() {
                        return Err(SimError::invalid("access-values", "the access sweep needs at least one rate"));
                    }
                    for &rate in &self.access_mbps {
                        grid(&mut points, family, &|c| c.follower_access_mbps = Some(rate));
                    }
                }
                Family::Burst => {
                    if self.burst_ms.is_empty() {
                        return Err(SimError::invalid("burst-values", "the burst sweep needs at least one length"));
                    }
                    for &ms in &self.burst_ms {
                        grid(&mut points, family, &|c| c.bg_burst_ms = ms);
                    }
                }
                Family::TcpCross => {
                    if self.tcp_flow_counts.is_empty() {
                        return Err(SimError::invalid("tcp-values", "the TCP sweep needs at least one count"));
                    }
                    // Half the base's UDP background: TCP takes what is left of the
                    // link, so the mix has both kinds of cross traffic.
                    for &n in &self.tcp_flow_counts {
                        grid(&mut points, family, &|c| {
                            c.tcp_flows = n;
                            c.bg_mbps = self.base.bg_mbps / 2.0;
                        });
                    }
                }
                Family::Wireless => {
                    if self.wireless_links.is_empty() {
                        return Err(SimError::invalid("wireless-values", "the wireless sweep needs at least one link"));
                    }
                    for link in &self.wireless_links {
                        grid(&mut points, family, &|c| c.link = Some(link.clone()));
                    }
                }
                Family::Deadline => {
                    if self.load_bg_mbps.is_empty() {
                        return Err(SimError::invalid("load-bg-mbps", "the deadline sweep needs at least one rate"));
                    }
                    // The base's deadlines if it has any (`--deadline`), else a robot's.
                    let given = OrchestratorLane::ALL.iter().any(|&c| self.base.deadlines.of(c).is_some());
                    let deadlines = if given { self.base.deadlines } else { Deadlines::ROBOT };
                    for &bg in &self.load_bg_mbps {
                        grid(&mut points, family, &|c| {
                            c.bg_mbps = bg;
                            c.deadlines = deadlines;
                        });
                    }
                }
            }
        }
        for (_, config) in &points {
            config.validate()?;
        }
        let mut runs = Vec::with_capacity(points.len() * self.seeds as usize);
        for (family, config) in points {
            for k in 0..self.seeds {
                let mut config = config.clone();
                config.seed = self.base.seed.wrapping_add(k as u64);
                runs.push(RunSpec { family, seed_index: k, config });
            }
        }
        Ok(runs)
    }
}

/// Fails if `runs` would hold more than [`MAX_FLOW_RECORDS`] flow records.
fn check_flow_records(runs: &[RunSpec], shard: Shard) -> Result<(), SimError> {
    let records: u64 = runs.iter().map(|r| 4 * u64::from(r.config.followers) + 2 * u64::from(r.config.bg_flows)).sum();
    if records > MAX_FLOW_RECORDS {
        let what = if shard == Shard::WHOLE { "this study".to_string() } else { format!("shard {shard}") };
        return Err(SimError::invalid(
            "seeds",
            format!(
                "{what} would hold {records} flow records ({} runs × their flows), more than \
                 {MAX_FLOW_RECORDS} (up to 800 MB): run fewer seeds, families or followers, or split the \
                 study with --shard K/N",
                runs.len()
            ),
        ));
    }
    Ok(())
}

/// One of `count` deterministic slices of a study (`--shard K/N`, `index` K from
/// 0 to N-1, as a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` and a Slurm
/// array's `SLURM_ARRAY_TASK_ID` with `--array=0-(N-1)` count). A shard is a
/// contiguous range of the plan's runs, so `bauxite sim merge` rebuilds
/// `flows.csv` by concatenating the shards' files in order, holding no flow.
/// Shards get equal numbers of runs; runs of one family cost about the same, so
/// they take about the same time (the follower sweep's largest counts are the
/// exception).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K, from 0.
    pub index: u32,
    /// N, at least 1.
    pub count: u32,
}

impl Shard {
    /// The whole study: shard 0/1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// The indices of this shard's runs among `total`: runs `K·total/N` up to
    /// (not including) `(K+1)·total/N`. Fails when there are fewer runs than
    /// shards, which would leave a shard with nothing to do.
    pub fn range(self, total: usize) -> Result<Range<usize>, SimError> {
        let (k, n) = (self.index as usize, self.count as usize);
        if total < n {
            return Err(SimError::invalid(
                "shard",
                format!("{self}: the study has {total} runs, fewer than its {n} shards"),
            ));
        }
        Ok(k * total / n..(k + 1) * total / n)
    }
}

impl FromStr for Shard {
    type Err = SimError;

    /// Parses `K/N` with `0 <= K < N`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| SimError::invalid("shard", format!("`{s}`: {why}"));
        let (k, n) = s.split_once('/').ok_or_else(|| bad("expected K/N, e.g. 0/10"))?;
        let index: u32 = k.trim().parse().map_err(|_| bad("K is not a whole number"))?;
        let count: u32 = n.trim().parse().map_err(|_| bad("N is not a whole number"))?;
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad("K counts from 0 and must be below N"));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A run finished (for progress displays).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Runs finished so far, this one included.
    pub done: usize,
    /// Runs in the study.
    pub total: usize,
    /// The run that finished.
    pub run: &'a RunSpec,
    /// Its result.
    pub result: &'a ScenarioResult,
}

/// A figure over seeds: the mean and, with two or more seeds, the 95 % half-width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Figure {
    /// Mean over the seeds where it is defined.
    pub mean: Option<f64>,
    /// Student-t 95 % confidence half-width.
    pub ci95: Option<f64>,
}

/// One line of `classes.csv`: a class at one point of one family, over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassSummary {
    /// Family.
    pub family: Family,
    /// Scheduler.
    pub scheduler: Scheduler,
    /// DSCP marking on.
    pub dscp: bool,
    /// Followers.
    pub followers: u32,
    /// Background Mbit/s per direction.
    pub bg_mbps: f64,
    /// Queue limit, packets.
    pub queue_packets: u32,
    /// The followers' access-link rate, Mbit/s.
    pub follower_access_mbps: f64,
    /// Background burst length, ms (0: steady).
    pub bg_burst_ms: f64,
    /// TCP connections per direction.
    pub tcp_flows: u32,
    /// The bottleneck's `--link` SPEC (empty: the wire).
    pub link: String,
    /// Class.
    pub class: OrchestratorLane,
    /// Seeds aggregated.
    pub seeds: u32,
    /// Flows in the class (per run).
    pub flows: u64,
    /// Packets sent, mean over seeds.
    pub tx_packets: f64,
    /// Packets received, mean over seeds.
    pub rx_packets: f64,
    /// `loss_pct`, `delay_ms`, `jitter_ms`, `throughput_mbps`, `jain_throughput`,
    /// `jain_inverse_delay`, in [`FIGURES`] order.
    pub figures: [Figure; 6],
    /// Packets lost or later than the class's deadline, percent (none without a deadline).
    pub deadline_miss_pct: Figure,
    /// The class's TCP flows' throughput, Mbit/s (none without TCP flows).
    pub tcp_throughput_mbps: Figure,
}

impl ClassSummary {
    /// The figure named `name` (one of [`FIGURES`]).
    pub fn figure(&self, name: &str) -> Figure {
        let i = FIGURES.iter().position(|f| *f == name).expect("a figure name");
        self.figures[i]
    }
}

/// Everything a study produced.
#[derive(Clone, Debug)]
pub struct StudyResult {
    /// What ran.
    pub config: StudyConfig,
    /// Every run with its result, in plan order.
    pub runs: Vec<(RunSpec, ScenarioResult)>,
    /// Class figures per point, aggregated over seeds, in plan order.
    pub classes: Vec<ClassSummary>,
    /// Wall-clock seconds of the whole study.
    pub wall_s: f64,
    /// Events simulated over all runs.
    pub events: u64,
    /// Worker threads the study ran on.
    pub threads: usize,
}

impl StudyResult {
    /// The study of `runs`, every run of `config`'s plan in plan order: counts
    /// events and aggregates each point over its seeds.
    pub fn from_runs(config: StudyConfig, runs: Vec<(RunSpec, ScenarioResult)>, wall_s: f64, threads: usize) -> Self {
        let events = runs.iter().map(|(_, r)| r.counters.events).sum();
        let classes = aggregate(&runs, config.seeds as usize);
        StudyResult { config, runs, classes, wall_s, events, threads }
    }

    /// Simulated events per wall-clock second over the whole study.
    pub fn events_per_s(&self) -> f64 {
        if self.wall_s > 0.0 { self.events as f64 / self.wall_s } else { 0.0 }
    }

    /// The rows of one family and class, in plan order: what the charts and the
    /// Markdown tables draw (e.g. `("compare", Control)` for the control figures
    /// per scheduler × DSCP, or every class of `compare` with DSCP on for the heatmap).
    pub fn rows(&self, family: Family, class: OrchestratorLane) -> impl Iterator<Item = &ClassSummary> {
        self.classes.iter().filter(move |r| r.family == family && r.class == class)
    }

    /// The families that ran.
    pub fn families(&self) -> Vec<Family> {
        first_seen(self.runs.iter().map(|(spec, _)| spec.family))
    }
}

/// Runs every planned scenario on `config.jobs` threads, calling `progress` after
/// each (from worker threads, in completion order), and aggregates over seeds.
/// Outputs are in plan order whatever the thread count.
pub fn run_study(config: &StudyConfig, progress: &(dyn Fn(Progress<'_>) + Sync)) -> Result<StudyResult, SimError> {
    let ran = run_specs(config, config.plan()?, progress)?;
    Ok(StudyResult::from_runs(config.clone(), ran.runs, ran.wall_s, ran.threads))
}

/// Runs one shard's scenarios as [`run_study`] runs a whole study; nothing is
/// aggregated (a point's seeds may be split between shards).
pub fn run_shard(
    config: &StudyConfig,
    shard: Shard,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<ShardResult, SimError> {
    let specs = config.plan_shard(shard)?;
    let total = config.plan_all()?.len();
    let first_run = shard.range(total)?.start;
    let ran = run_specs(config, specs, progress)?;
    Ok(ShardResult { config: config.clone(), shard, first_run, total_runs: total, ran })
}

/// Runs that finished, in plan order, and how long they took.
#[derive(Clone, Debug)]
pub struct Ran {
    /// Every run with its result, in plan order.
    pub runs: Vec<(RunSpec, ScenarioResult)>,
    /// Wall-clock seconds, all runs.
    pub wall_s: f64,
    /// Worker threads they ran on.
    pub threads: usize,
}

/// What one shard of a study produced.
#[derive(Clone, Debug)]
pub struct ShardResult {
    /// The whole study's configuration.
    pub config: StudyConfig,
    /// Which shard.
    pub shard: Shard,
    /// The plan index of this shard's first run.
    pub first_run: usize,
    /// Runs in the whole study.
    pub total_runs: usize,
    /// This shard's runs.
    pub ran: Ran,
}

/// Runs `specs` on `config.jobs` threads (see [`run_study`]).
fn run_specs(
    config: &StudyConfig,
    specs: Vec<RunSpec>,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Ran, SimError> {
    let began = Instant::now();
    let total = specs.len();
    let done = AtomicUsize::new(0);
    let work = || {
        specs
            .par_iter()
            // One run per task: runs differ in cost by 10x (16 followers vs 4), and
            // rayon's default halving would leave one thread with the expensive tail.
            .with_max_len(1)
            .map(|spec| {
                let result = run_scenario(&spec.config)?;
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(Progress { done: n, total, run: spec, result: &result });
                Ok(result)
            })
            .collect::<Result<Vec<ScenarioResult>, SimError>>()
    };
    let threads = if config.jobs == 0 { rayon::current_num_threads() } else { config.jobs };
    let results = if config.jobs == 0 {
        work()?
    } else {
        rayon::ThreadPoolBuilder::new()
            .num_threads(config.jobs)
            .build()
            .map_err(|e| SimError::invalid("jobs", e.to_string()))?
            .install(work)?
    };
    let wall_s = began.elapsed().as_secs_f64();
    Ok(Ran { runs: specs.into_iter().zip(results).collect(), wall_s, threads })
}

/// The mean over seeds of a packet count (`rows` always holds the first seed's row).
fn mean_count(rows: &[&ClassRow], count: fn(&ClassRow) -> u64) -> f64 {
    let counts: Vec<f64> = rows.iter().map(|r| count(r) as f64).collect();
    stats::mean(&counts).expect("a point has at least one seed")
}

/// Groups consecutive runs of one point (the plan puts a point's seeds together)
/// and summarises each class over them.
fn aggregate(runs: &[(RunSpec, ScenarioResult)], seeds: usize) -> Vec<ClassSummary> {
    let mut out = Vec::new();
    for point in runs.chunks(seeds) {
        let (spec, first) = &point[0];
        for class_row in &first.classes {
            let class = class_row.class;
            let rows: Vec<_> = point.iter().filter_map(|(_, r)| r.classes.iter().find(|c| c.class == class)).collect();
            let mut figures = [Figure::default(); 6];
            for (i, figure) in figures.iter_mut().enumerate() {
                let values: Vec<f64> = rows.iter().filter_map(|r| r.figures()[i]).collect();
                let (mean, ci95) = mean_ci95(&values);
                *figure = Figure { mean, ci95 };
            }
            let of = |figure: fn(&ClassRow) -> Option<f64>| {
                let values: Vec<f64> = rows.iter().filter_map(|r| figure(r)).collect();
                let (mean, ci95) = mean_ci95(&values);
                Figure { mean, ci95 }
            };
            let c = &spec.config;
            out.push(ClassSummary {
                family: spec.family,
                scheduler: c.scheduler,
                dscp: c.dscp,
                followers: c.followers,
                bg_mbps: c.bg_mbps,
                queue_packets: c.queue_packets,
                follower_access_mbps: c.follower_access_mbps.unwrap_or(c.access_mbps),
                bg_burst_ms: c.bg_burst_ms,
                tcp_flows: c.tcp_flows,
                link: c.link.clone().unwrap_or_default(),
                deadline_miss_pct: of(|r| r.deadline_miss_pct),
                tcp_throughput_mbps: of(|r| r.tcp_throughput_mbps),
                class,
                seeds: rows.len() as u32,
                flows: class_row.flows,
                tx_packets: mean_count(&rows, |r| r.tx_packets),
                rx_packets: mean_count(&rows, |r| r.rx_packets),
                figures,
            });
        }
    }
    out
}

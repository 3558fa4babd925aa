//! The figures the seed did not measure: the bridge's added latency against a direct
//! subscription, its forwarding capacity, and its CPU and memory at 30 Hz LaserScan.
//!
//! The bridge runs as its own process (`bauxite bridge --config`), as it would in use, so its
//! CPU time and memory are read from `/proc/<pid>` alone. Publisher and subscribers are RustDDS
//! participants in this process, talking to each other and to the bridge over loopback UDP.
//! Every sample carries its sequence number and its send time (this process's monotonic clock)
//! in its first 16 bytes ([`bauxite_core::wire::bench`]), so latency is receive time minus send time on one clock.
//!
//! 1. **Latency and overhead**: LaserScan-sized samples (1081 ranges and intensities, 8 704
//!    bytes, a common 270° lidar) at 30 Hz; a RELIABLE subscriber on the input topic (direct)
//!    and one on the bridge's critical output, at the same time; p50/p99 of each and of the
//!    difference. The bridge's CPU (user + system time over wall time) and resident memory over
//!    the same run.
//! 2. **Capacity**: for each size, the publisher sends paced steps of doubling rate (from about
//!    8 Mbit/s of payload, `capacity_duration` each) and a critical subscriber counts what arrives
//!    through the bridge; the capacity is the fastest step with under 1 % loss. Flooding instead
//!    would measure how the bridge sheds an overload (drop-oldest), not what it can carry. The
//!    same sweep straight from publisher to subscriber gives the ceiling RustDDS itself sets.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bauxite_core::stats::percentile;
use bauxite_core::wire::bench;
use bauxite_sys::ChildGuard;
use futures::StreamExt;
use rustdds::bytes::Bytes;
use rustdds::{DomainParticipant, RepresentationIdentifier, TopicKind};
use serde::Serialize;

use crate::config::{DdsConfig, Reliability};
use crate::raw::{RawAdapter, RawReader, RawSample, RawWriter};
use crate::{BridgeError, Clock, Nanos, dds};

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The `bauxite` binary (the bridge is started from it).
    pub exe: PathBuf,
    /// Where `summary.json`, `summary.md`, `bridge.yaml` and `bridge.log` go.
    pub out: PathBuf,
    /// Length of the 30 Hz latency and overhead run.
    pub latency_duration: Duration,
    /// Length of each capacity run.
    pub capacity_duration: Duration,
    /// Sample sizes of the capacity runs, bytes.
    pub sizes: Vec<usize>,
    /// The DDS domain.
    pub domain_id: u16,
}

/// Latency percentiles, ms.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// Samples received.
    pub samples: usize,
    /// Samples published but not received.
    pub lost: usize,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Maximum.
    pub max_ms: f64,
}

/// Phase 1's figures.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyReport {
    /// Publish rate.
    pub rate_hz: f64,
    /// Sample size, bytes.
    pub size_bytes: usize,
    /// Seconds measured.
    pub seconds: f64,
    /// A subscriber on the input topic.
    pub direct: Latency,
    /// A subscriber on the critical output.
    pub bridged: Latency,
    /// Bridged minus direct, per sample received by both: p50.
    pub added_p50_ms: f64,
    /// ...and p99.
    pub added_p99_ms: f64,
    /// The bridge's CPU time over wall time, percent of one core.
    pub bridge_cpu_pct: f64,
    /// The bridge's resident memory at the end, MiB.
    pub bridge_rss_mib: f64,
    /// Its peak resident memory, MiB.
    pub bridge_peak_rss_mib: f64,
    /// Where the bridged samples' time went, from the bridge's own stage log.
    pub stages: Option<Stages>,
}

/// Median and 99th percentile of one stage, ms (a stage that ends in another thread than it
/// starts, such as `wire`, can be slightly negative: the subscriber may take a sample before
/// the writer thread notes that its write call returned).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StageTime {
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

/// The bridged path split at the bridge's own timestamps, all on `CLOCK_MONOTONIC`:
/// publish → the bridge's reader has the sample (`receive`: the publisher's write, loopback,
/// RustDDS's reception and the reader's wake-up) → the writer thread takes it from the
/// queue (`queue`) → RustDDS's write returns (`write`) → the subscriber has it (`wire`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Stages {
    /// Samples with every stamp.
    pub samples: usize,
    /// Publish to the bridge's reader.
    pub receive: StageTime,
    /// Reader to writer thread.
    pub queue: StageTime,
    /// The write call.
    pub write: StageTime,
    /// Write returned to the subscriber's reception.
    pub wire: StageTime,
}

/// One size's capacity: the fastest paced rate forwarded with under 1 % loss.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityRow {
    /// Sample size, bytes.
    pub size_bytes: usize,
    /// Samples per second a critical subscriber received through the bridge, at the fastest
    /// step with under 1 % loss.
    pub bridged_per_s: f64,
    /// The same in Mbit/s of payload.
    pub bridged_mbit_s: f64,
    /// The bridge's CPU at that step, percent of one core.
    pub bridge_cpu_pct: f64,
    /// The bridge's CPU per MB (10^6 bytes) of payload it forwarded at that step, ms: what a
    /// forwarded byte costs, whatever the rate.
    pub bridge_cpu_ms_per_mb: f64,
    /// The same measure straight from publisher to subscriber (no bridge).
    pub direct_per_s: f64,
    /// Every step through the bridge.
    pub through: Vec<Step>,
    /// Every step without it.
    pub direct: Vec<Step>,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Phase 1.
    pub latency: LatencyReport,
    /// Phase 2, per size.
    pub capacity: Vec<CapacityRow>,
    /// Cores of the machine.
    pub cores: usize,
}

impl BenchReport {
    /// The report as Markdown tables.
    pub fn markdown(&self) -> String {
        let l = &self.latency;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## Bridge latency at {:.0} Hz, {} B samples ({:.0} s)\n\n| path | samples | lost | p50 (ms) | p99 (ms) | max (ms) |\n|---|---:|---:|---:|---:|---:|",
            l.rate_hz, l.size_bytes, l.seconds
        );
        for (name, x) in [("direct subscription", &l.direct), ("through the bridge (critical)", &l.bridged)] {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {:.3} | {:.3} | {:.3} |",
                x.samples, x.lost, x.p50_ms, x.p99_ms, x.max_ms
            );
        }
        let _ = writeln!(
            s,
            "\nAdded by the bridge: p50 {:.3} ms, p99 {:.3} ms. Bridge process: CPU {:.1} % of one core, RSS {:.1} MiB (peak {:.1} MiB).\n",
            l.added_p50_ms, l.added_p99_ms, l.bridge_cpu_pct, l.bridge_rss_mib, l.bridge_peak_rss_mib
        );
        if let Some(st) = &l.stages {
            let _ = writeln!(
                s,
                "Through the bridge, by stage ({} samples):\n\n| stage | p50 (ms) | p99 (ms) |\n|---|---:|---:|",
                st.samples
            );
            for (name, t) in [
                ("receive (publish → bridge reader)", st.receive),
                ("queue (reader → writer thread)", st.queue),
                ("write (RustDDS write call)", st.write),
                ("wire (write returned → subscriber)", st.wire),
            ] {
                let _ = writeln!(s, "| {name} | {:.3} | {:.3} |", t.p50_ms, t.p99_ms);
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "## Forwarding capacity ({} cores; paced steps of doubling rate, the fastest with under 1 % loss)\n\n| size | through the bridge (samples/s) | Mbit/s | bridge CPU | bridge CPU per MB forwarded | direct, no bridge (samples/s) |\n|---:|---:|---:|---:|---:|---:|",
            self.cores
        );
        for c in &self.capacity {
            let _ = writeln!(
                s,
                "| {} B | {:.0} | {:.1} | {:.0} % | {:.2} ms | {:.0} |",
                c.size_bytes,
                c.bridged_per_s,
                c.bridged_mbit_s,
                c.bridge_cpu_pct,
                c.bridge_cpu_ms_per_mb,
                c.direct_per_s
            );
        }
        for c in &self.capacity {
            let _ = writeln!(
                s,
                "\n{} B steps (target → delivered samples/s, loss; repair in the bench's process: NACK_FRAGs to the publisher / fragments it resent / samples it resent / NACK_FRAGs from the subscriber; datagrams the kernel dropped at full receive buffers: the bridge's sockets / the bench's, and the bridge's by port):\n\n| target | through the bridge | loss | CPU: bridge / bench | repair | socket drops | direct | loss | repair | socket drops | CPU: bench |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
                c.size_bytes
            );
            let mut targets: Vec<f64> = c.through.iter().chain(&c.direct).map(|x| x.target_per_s).collect();
            targets.sort_by(f64::total_cmp);
            targets.dedup();
            for target in targets {
                let at = |steps: &[Step]| steps.iter().position(|x| x.target_per_s == target);
                let (t, d) = (at(&c.through).map(|i| &c.through[i]), at(&c.direct).map(|i| &c.direct[i]));
                let cpu = t.map_or("–".into(), |x| {
                    format!("{:.0} % / {:.0} %", x.bridge_cpu_pct.unwrap_or(f64::NAN), x.bench_cpu_pct)
                });
                let direct_cpu = d.map_or("–".into(), |x| format!("{:.0} %", x.bench_cpu_pct));
                let [t_rate, t_loss, t_repair, t_drops] = step_cells(t);
                let direct = step_cells(d).join(" | ");
                let _ = writeln!(
                    s,
                    "| {target:.0} | {t_rate} | {t_loss} | {cpu} | {t_repair} | {t_drops} | {direct} | {direct_cpu} |"
                );
            }
        }
        s
    }
}

/// One sweep step's cells: delivered rate, loss, repair counters, socket drops (`–` each
/// where the other sweep went further).
fn step_cells(step: Option<&Step>) -> [String; 4] {
    let Some(x) = step else { return std::array::from_fn(|_| "–".to_string()) };
    let r = x.repair;
    let d = &x.socket_drops;
    let by_port: Vec<String> = d.bridge_by_port.iter().map(|(port, n)| format!("{port}: {n}")).collect();
    let by_port = if by_port.is_empty() { String::new() } else { format!(" ({})", by_port.join(", ")) };
    [
        format!("{:.0}", x.delivered_per_s),
        format!("{:.1} %", x.loss_pct),
        format!("{} / {} / {} / {}", r.nackfrags_received, r.frags_resent, r.samples_resent, r.nackfrags_sent),
        format!("{}{by_port} / {}", d.bridge, d.bench),
    ]
}

/// 1081 float32 ranges and intensities plus header fields: a LaserScan from a 270° lidar.
pub const SCAN_BYTES: usize = 8704;
const BENCH_TYPE: &str = "bauxite_msgs::msg::dds_::BenchSample_";

fn io(what: &str) -> impl FnOnce(std::io::Error) -> BridgeError {
    move |e| BridgeError::io(what, e)
}

/// Runs the benchmark and writes its files.
pub fn run(options: &BenchOptions) -> Result<BenchReport, BridgeError> {
    std::fs::create_dir_all(&options.out).map_err(io("creating the output directory"))?;
    let dds_config =
        DdsConfig { domain_id: options.domain_id, interfaces: Some(vec!["127.0.0.1".parse().expect("ip")]) };
    let config_path = options.out.join("bridge.yaml");
    let mut config = format!(
        "dds: {{domain_id: {}, interfaces: [127.0.0.1]}}\ntopics:\n  - {{name: /bench/scan, type: bauxite_msgs/msg/BenchSample}}\n",
        options.domain_id
    );
    for &size in &options.sizes {
        let _ = writeln!(config, "  - {{name: /bench/cap{size}, type: bauxite_msgs/msg/BenchSample}}");
    }
    config.push_str("classifier: {enabled: false}\ndiagnostics: {enabled: false}\n");
    std::fs::write(&config_path, &config).map_err(io("writing bridge.yaml"))?;
    crate::config::load(&config_path)?;

    let log = std::fs::File::create(options.out.join("bridge.log")).map_err(io("creating bridge.log"))?;
    let stage_log = options.out.join("stages.log");
    if stage_log.exists() {
        std::fs::remove_file(&stage_log).map_err(io("removing the previous stages.log"))?;
    }
    let child = Command::new(&options.exe)
        .args(["bridge", "--config"])
        .arg(&config_path)
        .env(crate::forward::STAGE_LOG_ENV, &stage_log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(io("starting the bridge"))?;
    // SIGTERM first, so the bridge shuts down cleanly; killed if it takes over 5 s.
    let mut bridge = ChildGuard::new(child, Duration::from_secs(5));
    let pid = bridge.id();

    let clock = Clock::new();
    let (publisher, subscriber) = participants(&dds_config)?;

    let (mut latency, bridged) = latency_run(options, &publisher, &subscriber, clock, pid)?;
    let mut capacity = Vec::new();
    for &size in &options.sizes {
        capacity.push(capacity_run(options, &publisher, &subscriber, clock, pid, size)?);
    }
    if let Ok(Some(status)) = bridge.try_wait() {
        return Err(BridgeError::Bench(format!("the bridge exited during the benchmark ({status}); see bridge.log")));
    }
    // The bridge writes its stage log as it stops.
    drop(bridge);
    latency.stages = Some(stages(&stage_log, "/bench/scan", &bridged, clock)?);
    let report = BenchReport {
        latency,
        capacity,
        cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
    };
    let json = serde_json::to_string_pretty(&report).map_err(BridgeError::Encode)?;
    std::fs::write(options.out.join("summary.json"), json).map_err(io("writing summary.json"))?;
    std::fs::write(options.out.join("summary.md"), report.markdown()).map_err(io("writing summary.md"))?;
    Ok(report)
}

/// The bench's publisher and subscriber. The subscriber, which holds the direct and the
/// bridged readers alike, gets the bridge input's receive buffer
/// ([`dds::receiving_participant`]): with RustDDS's request, clamped by the kernel, it dropped
/// datagrams of the 64 KB steps that the bridge's input no longer did, so the comparison
/// measured the bench's buffer rather than the bridge.
fn participants(config: &DdsConfig) -> Result<(DomainParticipant, DomainParticipant), BridgeError> {
    let publisher = dds::participant(config)?;
    let subscriber = dds::receiving_participant(config, "bench's subscriber participant")?;
    Ok((publisher, subscriber))
}

/// User + system CPU time of a process, and its resident and peak memory (bytes); `None` once
/// it has gone. The evaluation (`bauxite eval bridge`) reads the bridge's with it too.
pub fn proc_usage(pid: u32) -> Option<(Duration, u64, u64)> {
    let cpu = bauxite_sys::ProcStat::read(pid)?.cpu_time();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    };
    Some((cpu, kib("VmRSS:")? * 1024, kib("VmHWM:")? * 1024))
}

fn raw_topic(p: &DomainParticipant, name: &str) -> Result<rustdds::Topic, BridgeError> {
    let qos = dds::reader_qos(Reliability::Reliable, 10);
    Ok(p.create_topic(name.to_string(), BENCH_TYPE.to_string(), &qos, TopicKind::NoKey)
        .map_err(|e| dds::DdsError::new(format!("topic {name}"), e))?)
}

fn bench_writer(p: &DomainParticipant, name: &str, window: usize) -> Result<RawWriter, BridgeError> {
    let topic = raw_topic(p, name)?;
    let qos = dds::critical_writer_qos(64, window, Duration::from_secs(1));
    Ok(p.create_publisher(&qos)
        .and_then(|pb| pb.create_datawriter_no_key::<RawSample, RawAdapter>(&topic, Some(qos)))
        .map_err(|e| dds::DdsError::new(format!("writer for {name}"), e))?)
}

fn bench_reader(p: &DomainParticipant, name: &str) -> Result<RawReader, BridgeError> {
    let topic = raw_topic(p, name)?;
    let qos = dds::reader_qos(Reliability::Reliable, 64);
    Ok(p.create_subscriber(&qos)
        .and_then(|s| s.create_datareader_no_key::<RawSample, RawAdapter>(&topic, Some(qos)))
        .map_err(|e| dds::DdsError::new(format!("reader for {name}"), e))?)
}

/// (sequence, latency) of every sample a receiver got.
/// (seq, latency, arrival time on the bench's clock) of a sample taken.
type Arrival = (u64, Nanos, Nanos);
type Arrivals = Arc<Mutex<Vec<Arrival>>>;

/// A thread taking samples and noting their sequence number and latency.
struct Receiver {
    arrivals: Arrivals,
    stop: Option<futures::channel::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    fn start(reader: RawReader, clock: Clock) -> Self {
        let arrivals: Arrivals = Arc::default();
        let (tx, mut rx) = futures::channel::oneshot::channel::<()>();
        let sink = arrivals.clone();
        let thread = std::thread::spawn(move || {
            let mut stream = reader.async_sample_stream();
            futures::executor::block_on(async {
                loop {
                    let s = futures::select! {
                        s = stream.select_next_some() => s,
                        _ = rx => return,
                    };
                    let now = clock.now();
                    if let Ok(s) = s
                        && let Ok(h) = bench::Repr::parse_bytes(&s.value().payload)
                    {
                        let latency = now.saturating_sub(h.sent_ns);
                        sink.lock().unwrap_or_else(|e| e.into_inner()).push((h.seq, latency, now));
                    }
                }
            })
        });
        Self { arrivals, stop: Some(tx), thread: Some(thread) }
    }

    fn take(&self) -> Vec<Arrival> {
        std::mem::take(&mut *self.arrivals.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn count(&self) -> usize {
        self.arrivals.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn sample(seq: u64, size: usize, clock: Clock) -> RawSample {
    let bytes = bench::Repr { seq, sent_ns: clock.now() }.to_vec(size);
    RawSample { representation: RepresentationIdentifier::CDR_LE, payload: Bytes::from(bytes) }
}

/// Publishes slowly until every receiver has something, so discovery is over before measuring.
fn warm_up(writer: &RawWriter, receivers: &[&Receiver], size: usize, clock: Clock) -> Result<(), BridgeError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seq = u64::MAX / 2;
    while receivers.iter().any(|r| r.count() == 0) {
        if Instant::now() > deadline {
            return Err(BridgeError::Bench(
                "warm-up: no sample came through in 30 s (is the bridge running? see bridge.log)".into(),
            ));
        }
        let _ = writer.write(sample(seq, size, clock), None);
        seq += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let stragglers of the warm-up arrive, then forget them.
    std::thread::sleep(Duration::from_millis(300));
    for r in receivers {
        r.take();
    }
    Ok(())
}

fn latency_of(arrivals: &[Arrival], published: usize) -> Latency {
    let mut ms: Vec<f64> = arrivals.iter().map(|&(_, l, _)| l as f64 / 1e6).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| percentile(&ms, q).unwrap_or(f64::NAN);
    Latency {
        samples: ms.len(),
        lost: published.saturating_sub(ms.len()),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: at(1.0),
    }
}

fn latency_run(
    options: &BenchOptions,
    publisher: &DomainParticipant,
    subscriber: &DomainParticipant,
    clock: Clock,
    pid: u32,
) -> Result<(LatencyReport, Vec<Arrival>), BridgeError> {
    let writer = bench_writer(publisher, "rt/bench/scan", 64)?;
    let direct = Receiver::start(bench_reader(subscriber, "rt/bench/scan")?, clock);
    let bridged = Receiver::start(bench_reader(subscriber, "rt/bench/scan/critical")?, clock);
    warm_up(&writer, &[&direct, &bridged], SCAN_BYTES, clock)?;
    let rate_hz = 30.0;
    let period = Duration::from_secs_f64(1.0 / rate_hz);
    let n = (options.latency_duration.as_secs_f64() * rate_hz) as u64;
    let before = proc_usage(pid).ok_or_else(|| BridgeError::Bench("the bridge process is gone from /proc".into()))?;
    let start = Instant::now();
    for seq in 0..n {
        if let Some(wait) = (start + period * seq as u32).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let _ = writer.write(sample(seq, SCAN_BYTES, clock), None);
    }
    let wall = start.elapsed();
    let after = proc_usage(pid).ok_or_else(|| BridgeError::Bench("the bridge process is gone from /proc".into()))?;
    std::thread::sleep(Duration::from_millis(500));
    let (d, b) = (direct.take(), bridged.take());
    let direct_by_seq: std::collections::HashMap<u64, Nanos> = d.iter().map(|&(seq, l, _)| (seq, l)).collect();
    let mut added: Vec<f64> =
        b.iter().filter_map(|(seq, l, _)| direct_by_seq.get(seq).map(|dl| (*l as f64 - *dl as f64) / 1e6)).collect();
    added.sort_by(f64::total_cmp);
    let at = |v: &[f64], q: f64| percentile(v, q).unwrap_or(f64::NAN);
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let report = LatencyReport {
        rate_hz,
        size_bytes: SCAN_BYTES,
        seconds: wall.as_secs_f64(),
        direct: latency_of(&d, n as usize),
        bridged: latency_of(&b, n as usize),
        added_p50_ms: at(&added, 0.5),
        added_p99_ms: at(&added, 0.99),
        bridge_cpu_pct: 100.0 * (after.0.saturating_sub(before.0)).as_secs_f64() / wall.as_secs_f64(),
        bridge_rss_mib: mib(after.1),
        bridge_peak_rss_mib: mib(after.2),
        stages: None,
    };
    Ok((report, b))
}

/// Splits each bridged sample's path at the stamps the bridge wrote to `path` for `topic`
/// (see [`crate::forward::STAGE_LOG_ENV`]); `bridged` holds (seq, latency, arrival) on `clock`.
fn stages(
    path: &std::path::Path,
    topic: &str,
    bridged: &[(u64, Nanos, Nanos)],
    clock: Clock,
) -> Result<Stages, BridgeError> {
    let text = std::fs::read_to_string(path).map_err(io("reading the bridge's stages.log"))?;
    let mut stamps = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let numbers: Option<Vec<u64>> = fields.get(1..).and_then(|f| f.iter().map(|x| x.parse().ok()).collect());
        match (fields.first(), numbers.as_deref()) {
            (Some(&t), Some(&[seq, received, dequeued, written])) => {
                if t == topic {
                    stamps.insert(seq, [received, dequeued, written]);
                }
            }
            _ => {
                return Err(BridgeError::Bench(format!(
                    "{}:{}: not `topic seq received dequeued written`",
                    path.display(),
                    n + 1
                )));
            }
        }
    }
    let ms = |from: u64, to: u64| (to as f64 - from as f64) / 1e6;
    let mut columns: [Vec<f64>; 4] = Default::default();
    for &(seq, latency, arrived) in bridged {
        let Some(&[received, dequeued, written]) = stamps.get(&seq) else { continue };
        let sent = clock.monotonic_ns(arrived.saturating_sub(latency));
        let arrived = clock.monotonic_ns(arrived);
        for (column, value) in columns.iter_mut().zip([
            ms(sent, received),
            ms(received, dequeued),
            ms(dequeued, written),
            ms(written, arrived),
        ]) {
            column.push(value);
        }
    }
    let time = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        StageTime { p50_ms: percentile(v, 0.5).unwrap_or(f64::NAN), p99_ms: percentile(v, 0.99).unwrap_or(f64::NAN) }
    };
    let [mut receive, mut queue, mut write, mut wire] = columns;
    Ok(Stages {
        samples: receive.len(),
        receive: time(&mut receive),
        queue: time(&mut queue),
        write: time(&mut write),
        wire: time(&mut wire),
    })
}

/// Publishes at `rate` per second for `duration` (in 1 ms batches), numbering from `first`;
/// returns how many were written and the seconds it took.
fn paced(writer: &RawWriter, size: usize, rate: f64, duration: Duration, first: u64, clock: Clock) -> (u64, f64) {
    let start = Instant::now();
    let mut written = 0u64;
    while start.elapsed() < duration {
        let due = (start.elapsed().as_secs_f64() * rate) as u64;
        while written < due {
            if writer.write(sample(first + written, size, clock), None).is_ok() {
                written += 1;
            } else {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    (written, start.elapsed().as_secs_f64())
}

/// One step of a capacity sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The rate asked for, samples/s.
    pub target_per_s: f64,
    /// Samples/s the publisher got written.
    pub offered_per_s: f64,
    /// Samples/s that arrived.
    pub delivered_per_s: f64,
    /// Share of the written samples that did not arrive, percent.
    pub loss_pct: f64,
    /// The bridge's CPU over the step, percent of one core (through the bridge only).
    pub bridge_cpu_pct: Option<f64>,
    /// This (the bench's) process's CPU over the step, percent of one core: the publisher
    /// and the subscriber, which share the machine's cores with the bridge.
    pub bench_cpu_pct: f64,
    /// Reliable repair in this (the bench's) process over the step: the publisher's writer
    /// and the subscriber's reader.
    pub repair: Repair,
    /// Datagrams the kernel dropped at the receiving sockets over the step.
    pub socket_drops: SocketDrops,
}

/// Datagrams the kernel dropped on their way into a socket over one step, from the `drops`
/// column of `/proc/<pid>/net/udp` for each process's own sockets
/// ([`bauxite_sys::udp_sockets`]): on loopback nearly always a full receive buffer
/// (`SO_RCVBUF`), a loss no DDS counter sees and that only reliable repair makes good.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SocketDrops {
    /// At the bridge process's sockets (all three of its participants).
    pub bridge: u64,
    /// At this (the bench's) process's sockets: the publisher's and the subscriber's.
    pub bench: u64,
    /// The bridge's drops by local port, where any (RTPS: a participant with id `p` in
    /// domain `d` receives user traffic on 7411 + 250 d + 2 p; the bridge logs its
    /// participants' ids at start).
    pub bridge_by_port: Vec<(u16, u64)>,
}

/// Each local port's `drops` of process `pid`'s UDP sockets so far.
fn drops_by_port(pid: u32) -> Result<std::collections::BTreeMap<u16, u64>, BridgeError> {
    let sockets = bauxite_sys::udp_sockets(pid)
        .map_err(|e| BridgeError::Bench(format!("reading the UDP sockets of process {pid}: {e}")))?;
    let mut ports = std::collections::BTreeMap::new();
    for s in sockets {
        *ports.entry(s.local.port()).or_insert(0) += s.drops;
    }
    Ok(ports)
}

/// [`drops_by_port`] of the bridge, then of this process.
type DropsSnapshot = (std::collections::BTreeMap<u16, u64>, std::collections::BTreeMap<u16, u64>);

fn drops_snapshot(bridge_pid: u32) -> Result<DropsSnapshot, BridgeError> {
    Ok((drops_by_port(bridge_pid)?, drops_by_port(std::process::id())?))
}

impl SocketDrops {
    /// Drops since `before`; a socket opened since counts from zero.
    fn since(before: &DropsSnapshot, bridge_pid: u32) -> Result<Self, BridgeError> {
        let now = drops_snapshot(bridge_pid)?;
        let delta = |now: &std::collections::BTreeMap<u16, u64>, before: &std::collections::BTreeMap<u16, u64>| {
            now.iter()
                .map(|(&port, &n)| (port, n.saturating_sub(before.get(&port).copied().unwrap_or(0))))
                .filter(|&(_, n)| n > 0)
                .collect::<Vec<_>>()
        };
        let bridge_by_port = delta(&now.0, &before.0);
        Ok(Self {
            bridge: bridge_by_port.iter().map(|&(_, n)| n).sum(),
            bench: delta(&now.1, &before.1).iter().map(|&(_, n)| n).sum(),
            bridge_by_port,
        })
    }
}

/// Reliable repair over one step, from the vendored RustDDS's process-wide counters
/// (vendor/README.md): what a lost fragment costs shows here.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Repair {
    /// NACK_FRAGs the publisher's writer received (from the bridge's reader, or from the
    /// subscriber on the direct path).
    pub nackfrags_received: u64,
    /// Fragments it sent again for them.
    pub frags_resent: u64,
    /// Samples it sent again for ACKNACKs.
    pub samples_resent: u64,
    /// NACK_FRAGs the subscriber's reader sent (to the bridge's writer, or to the publisher).
    pub nackfrags_sent: u64,
}

impl Repair {
    fn since(before: rustdds::repair_counters::RepairCounters) -> Self {
        let now = rustdds::repair_counters::snapshot();
        Self {
            nackfrags_received: now.nackfrags_received - before.nackfrags_received,
            frags_resent: now.frags_resent - before.frags_resent,
            samples_resent: now.samples_resent - before.samples_resent,
            nackfrags_sent: now.nackfrags_sent - before.nackfrags_sent,
        }
    }
}

/// A loss under this (percent) still counts as keeping up.
const KEEPS_UP_PCT: f64 = 1.0;

/// Doubles the rate from about 8 Mbit/s of payload until losses pass [`KEEPS_UP_PCT`] twice or
/// the publisher cannot offer more, then tries 1.25, 1.5 and 1.75 times the fastest rate that
/// kept up, up to the first that does not: doubling alone could only tell 50 % of the direct
/// rate from 100 %.
/// `bridge_pid` is the bridge's process; `through` says whether the samples pass it (its CPU
/// is reported only then, its socket drops always).
fn sweep(
    writer: &RawWriter,
    receiver: &Receiver,
    size: usize,
    step: Duration,
    bridge: (u32, bool),
    clock: Clock,
) -> Result<Vec<Step>, BridgeError> {
    let mut rate = (1e6 / size as f64).max(1.0).round();
    let mut steps: Vec<Step> = Vec::new();
    let mut first = 0u64;
    let mut failures = 0;
    while failures < 2 && rate <= 2e6 {
        let (s, written) = measure_step(writer, receiver, (size, rate), step, first, bridge, clock)?;
        first += written;
        let publisher_limited = s.offered_per_s < 0.8 * rate;
        if s.loss_pct >= KEEPS_UP_PCT {
            failures += 1;
        }
        steps.push(s);
        if publisher_limited {
            break; // the publisher itself is the limit now
        }
        rate *= 2.0;
    }
    let Some(good) = kept_up(&steps).map(|s| s.target_per_s) else { return Ok(steps) };
    for factor in [1.25, 1.5, 1.75] {
        let (s, written) = measure_step(writer, receiver, (size, (good * factor).round()), step, first, bridge, clock)?;
        first += written;
        let failed = s.loss_pct >= KEEPS_UP_PCT;
        steps.push(s);
        if failed {
            break;
        }
    }
    Ok(steps)
}

/// Publishes `size`-byte samples at `rate` for `step`, numbered from `first`, and counts what
/// arrived; returns the step and how many samples were written.
fn measure_step(
    writer: &RawWriter,
    receiver: &Receiver,
    (size, rate): (usize, f64),
    step: Duration,
    first: u64,
    (bridge_pid, through): (u32, bool),
    clock: Clock,
) -> Result<(Step, u64), BridgeError> {
    wait_quiet(|| receiver.count(), SETTLE_POLL, SETTLE_QUIET_POLLS, SETTLE_MAX_POLLS);
    receiver.take();
    let before = proc_usage(bridge_pid).filter(|_| through);
    let repair_before = rustdds::repair_counters::snapshot();
    let drops_before = drops_snapshot(bridge_pid)?;
    let bench_cpu_before = bauxite_sys::process_cpu_ns();
    let (written, secs) = paced(writer, size, rate, step, first, clock);
    let bench_cpu_ns = bauxite_sys::process_cpu_ns() - bench_cpu_before;
    let after = proc_usage(bridge_pid).filter(|_| through);
    // Let what is in flight arrive before counting.
    std::thread::sleep(Duration::from_millis(500));
    let repair = Repair::since(repair_before);
    let socket_drops = SocketDrops::since(&drops_before, bridge_pid)?;
    let arrived = receiver.take().iter().filter(|(seq, _, _)| (first..first + written).contains(seq)).count() as f64;
    let loss_pct = if written == 0 { 100.0 } else { 100.0 * (1.0 - arrived / written as f64).max(0.0) };
    let step = Step {
        target_per_s: rate,
        offered_per_s: written as f64 / secs,
        delivered_per_s: arrived / secs,
        loss_pct,
        bridge_cpu_pct: before.zip(after).map(|(b, a)| 100.0 * a.0.saturating_sub(b.0).as_secs_f64() / secs),
        bench_cpu_pct: 100.0 * bench_cpu_ns as f64 / 1e9 / secs,
        repair,
        socket_drops,
    };
    Ok((step, written))
}

/// How often [`wait_quiet`] looks at the receiver before a step.
const SETTLE_POLL: Duration = Duration::from_millis(100);
/// Polls without an arrival that make the path quiet (0.3 s).
const SETTLE_QUIET_POLLS: u32 = 3;
/// Polls after which a step starts anyway (10 s).
const SETTLE_MAX_POLLS: u32 = 100;

/// Waits until `count` (samples arrived so far) has not moved for `quiet` polls `poll` apart,
/// or `max` polls have passed. A step must start with the previous step's backlog delivered
/// or dropped: the refinement steps follow an overloaded step, and 0.5 s after it the bridge's
/// critical queue and reliable window still held its samples, so a refinement step through
/// the bridge lost samples that the direct path, measured after a pause, did not (a 4 800/s
/// step lost 4 % right after a 15 360/s one, at a 7 680/s step that had kept up).
fn wait_quiet(count: impl Fn() -> usize, poll: Duration, quiet: u32, max: u32) {
    let mut last = count();
    let mut unchanged = 0;
    for _ in 0..max {
        std::thread::sleep(poll);
        let now = count();
        unchanged = if now == last { unchanged + 1 } else { 0 };
        last = now;
        if unchanged >= quiet {
            return;
        }
    }
}

/// The fastest step that kept up.
fn kept_up(steps: &[Step]) -> Option<&Step> {
    steps.iter().filter(|s| s.loss_pct < KEEPS_UP_PCT).max_by(|a, b| a.delivered_per_s.total_cmp(&b.delivered_per_s))
}

fn capacity_run(
    options: &BenchOptions,
    publisher: &DomainParticipant,
    subscriber: &DomainParticipant,
    clock: Clock,
    pid: u32,
    size: usize,
) -> Result<CapacityRow, BridgeError> {
    // Through the bridge.
    let input = format!("rt/bench/cap{size}");
    let writer = bench_writer(publisher, &input, 256)?;
    let bridged = Receiver::start(bench_reader(subscriber, &format!("{input}/critical"))?, clock);
    warm_up(&writer, &[&bridged], size, clock)?;
    let through = sweep(&writer, &bridged, size, options.capacity_duration, (pid, true), clock)?;
    drop(bridged);
    drop(writer);

    // Straight from publisher to subscriber, on a topic the bridge does not read.
    let direct_topic = format!("rt/bench/direct{size}");
    let writer = bench_writer(publisher, &direct_topic, 256)?;
    let direct = Receiver::start(bench_reader(subscriber, &direct_topic)?, clock);
    warm_up(&writer, &[&direct], size, clock)?;
    let straight = sweep(&writer, &direct, size, options.capacity_duration, (pid, false), clock)?;

    let best = kept_up(&through);
    let bridge_cpu_pct = best.and_then(|s| s.bridge_cpu_pct).unwrap_or(0.0);
    let mb_per_s = best.map_or(0.0, |s| s.delivered_per_s * size as f64 / 1e6);
    Ok(CapacityRow {
        size_bytes: size,
        bridged_per_s: best.map_or(0.0, |s| s.delivered_per_s),
        bridged_mbit_s: mb_per_s * 8.0,
        bridge_cpu_pct,
        bridge_cpu_ms_per_mb: if mb_per_s > 0.0 { bridge_cpu_pct / 100.0 / mb_per_s * 1e3 } else { 0.0 },
        direct_per_s: kept_up(&straight).map_or(0.0, |s| s.delivered_per_s),
        through,
        direct: straight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wait ends only after the count has stood still for `quiet` polls, and a count that
    /// never settles is waited for `max` polls, no longer.
    #[test]
    fn a_step_waits_until_nothing_arrives() {
        use std::cell::Cell;
        let polls = Cell::new(0usize);
        // Arrivals at each of the first 5 looks, then none.
        wait_quiet(
            || {
                polls.set(polls.get() + 1);
                polls.get().min(5)
            },
            Duration::ZERO,
            3,
            100,
        );
        assert_eq!(polls.get(), 5 + 3, "returned after 3 quiet polls once arrivals stopped");
        polls.set(0);
        wait_quiet(
            || {
                polls.set(polls.get() + 1);
                polls.get()
            },
            Duration::ZERO,
            3,
            20,
        );
        assert_eq!(polls.get(), 1 + 20, "a count that never settles: the first look and 20 polls");
    }

    /// The subscriber (direct and bridged readers alike) has the input's receive buffer (as
    /// root, past `net.core.rmem_max`); the publisher keeps RustDDS's request.
    #[test]
    fn the_bench_subscriber_gets_the_inputs_receive_buffer() {
        if !bauxite_sys::root_or_skip("the_bench_subscriber_gets_the_inputs_receive_buffer") {
            return;
        }
        let config = DdsConfig { domain_id: 144, interfaces: Some(vec!["127.0.0.1".parse().expect("ip")]) };
        let (publisher, subscriber) = participants(&config).expect("participants");
        let sub = dds::receive_buffers(144, subscriber.participant_id());
        let publ = dds::receive_buffers(144, publisher.participant_id());
        assert_eq!(sub.len(), 2, "the subscriber's discovery and user sockets: {sub:?}");
        assert!(sub.iter().all(|&b| b >= 2 * dds::INPUT_RECEIVE_BUFFER), "{sub:?}");
        assert_eq!(publ.len(), 2, "{publ:?}");
        assert!(publ.iter().all(|&b| b < 2 * dds::INPUT_RECEIVE_BUFFER), "{publ:?}");
    }

    #[test]
    fn stages_split_each_sample_at_the_bridges_stamps() {
        let dir = std::env::temp_dir().join(format!("bauxite-stages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("stages.log");
        let clock = Clock::new();
        let at = |t: Nanos| clock.monotonic_ns(t);
        // Sample 1: sent at 1 000 000, received +300 µs, dequeued +30 µs, written +10 µs, at
        // the subscriber +80 µs. Sample 2 is another topic's; sample 3 never arrived.
        std::fs::write(
            &path,
            format!(
                "/bench/scan 1 {} {} {}\n/bench/cap 1 0 0 0\n/bench/scan 3 1 2 3\n",
                at(1_300_000),
                at(1_330_000),
                at(1_340_000)
            ),
        )
        .expect("write");
        let bridged = [(1, 420_000, 1_420_000)];
        let st = stages(&path, "/bench/scan", &bridged, clock).expect("parsed");
        assert_eq!(st.samples, 1);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(close(st.receive.p50_ms, 0.3) && close(st.queue.p50_ms, 0.03), "{st:?}");
        assert!(close(st.write.p99_ms, 0.01) && close(st.wire.p50_ms, 0.08), "{st:?}");
        std::fs::write(&path, "/bench/scan 1 2\n").expect("write");
        let e = stages(&path, "/bench/scan", &bridged, clock).expect_err("a short line").to_string();
        assert!(e.contains("stages.log:1:"), "{e}");
        std::fs::remove_dir_all(&dir).expect("remove");
    }
}

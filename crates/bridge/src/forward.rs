//! Forwarding one topic: a reader thread and two writer threads joined by drop-oldest queues.
//!
//! ```text
//!            ┌─ critical queue ──► critical writer thread ──► <out>/critical   (RELIABLE)
//! reader ────┤
//!            └─ token bucket ─► noncritical queue ─► noncritical writer ─► <out>/noncritical (BEST_EFFORT)
//! ```
//!
//! The reader only takes samples and hands them on: it never waits for a writer, so a slow or
//! dead subscriber cannot backpressure the publisher through the bridge. It serves the critical
//! path first, and writes a critical sample itself when nothing is queued ahead of it, the
//! writer is free and the window has room (one thread hop fewer on the critical path, which
//! was 0.026 ms of the added latency at the median): the writer is only tried (`try_lock`)
//! and the write never waits ([`raw::try_write`]); otherwise the sample is queued. The
//! critical writer thread takes the writer before it pops, so a directly written sample never
//! overtakes a popped one. The critical writer thread may block (RELIABLE, a full window) for at most
//! `critical_blocking` per attempt; it retries the same sample while the queue has room and
//! gives it up (drop-oldest, as the queue would) once newer samples have filled it. The
//! noncritical writer never blocks and drops samples older than `max_age` instead of sending
//! them late. What each path may forward is the policy's [`Decision`], set by the control loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::StreamExt;
use rustdds::dds::WriteError;
use rustdds::{DataWriterStatus, DomainParticipant, StatusEvented, Timestamp, TopicKind};
use serde::Serialize;

use crate::config::{PolicyConfig, TopicConfig};
use crate::dds::{self, DdsError, Participants};
use crate::limiter::TokenBucket;
use crate::policy::Decision;
use crate::queue::DropOldest;
use crate::raw::{self, RawAdapter, RawSample, RawWriter};
use crate::redundancy::{Beacon, Kept, Origin, Predecessor};
use crate::{Clock, Nanos};

/// A sample on its way, with the source's timestamp to pass on.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The serialized sample.
    pub raw: RawSample,
    /// The publisher's source timestamp, forwarded unchanged.
    pub source_timestamp: Option<Timestamp>,
    /// The publisher's writer and sequence number: what a hot standby compares.
    pub origin: Option<Origin>,
}

/// Counters of one output path; read by the control loop.
#[derive(Debug, Default)]
pub struct PathStats {
    /// Samples written.
    pub forwarded: AtomicU64,
    /// Samples refused by the rate limiter.
    pub rate_limited: AtomicU64,
    /// Samples not forwarded because the policy suspended the path.
    pub suspended: AtomicU64,
    /// Samples older than `max_age` when their turn came.
    pub stale: AtomicU64,
    /// Samples given up after their write blocked and newer ones filled the queue.
    pub abandoned: AtomicU64,
    /// Writes that failed or timed out (each blocked attempt counts).
    pub errors: AtomicU64,
    /// Readers matched to this path's writer.
    pub matched: AtomicUsize,
    /// Longest arrival-to-written time since the supervisor last looked (ns).
    pub max_lag: AtomicU64,
    /// When the sample now being written arrived (ns on the bridge clock, 0 if none).
    pub in_flight_since: AtomicU64,
    latencies_us: Mutex<Vec<u32>>,
}

/// At most this many latencies are kept between two reports (a few seconds at high rates).
const MAX_LATENCIES: usize = 200_000;

impl PathStats {
    fn record_written(&self, latency: Nanos) {
        self.forwarded.fetch_add(1, Ordering::Relaxed);
        self.max_lag.fetch_max(latency, Ordering::Relaxed);
        let mut l = self.latencies();
        if l.len() < MAX_LATENCIES {
            l.push((latency / 1_000).min(u64::from(u32::MAX)) as u32);
        }
    }

    fn latencies(&self) -> MutexGuard<'_, Vec<u32>> {
        self.latencies_us.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the latencies (µs) recorded since the last call.
    pub fn take_latencies(&self) -> Vec<u32> {
        std::mem::take(&mut *self.latencies())
    }
}

/// What the control loop and the threads of one topic share.
#[derive(Debug)]
pub struct TopicShared {
    /// The topic as configured (the input's ROS 2 or DDS name).
    pub name: String,
    /// Samples taken from the input.
    pub received: AtomicU64,
    /// Samples the reader could not take.
    pub read_errors: AtomicU64,
    /// The critical path.
    pub critical: PathStats,
    /// The noncritical path.
    pub noncritical: PathStats,
    /// The critical writer's queue.
    pub critical_queue: DropOldest<Sample>,
    /// The noncritical writer's queue.
    pub noncritical_queue: DropOldest<Sample>,
    critical_on: AtomicBool,
    /// The noncritical rate in mHz; 0 means suspended.
    noncritical_mhz: AtomicU64,
    stop: AtomicBool,
    /// Where each critical sample's stage times go, for `bridge bench` ([`STAGE_LOG_ENV`]).
    stage_log: Option<StageLog>,
    /// In a hot-standby group: the kept samples and the group's gate ([`crate::redundancy`]).
    replica: Option<Replica>,
}

/// A topic's part in a hot-standby group.
#[derive(Debug)]
struct Replica {
    kept: Kept,
    beacon: Arc<Beacon>,
}

/// Set to a file path, the bridge notes when each critical sample that carries a benchmark
/// header ([`bauxite_core::wire::bench`]) was received, dequeued by the writer thread and
/// written, and appends them to that file when it stops: one line per sample,
/// `topic seq received dequeued written` in `CLOCK_MONOTONIC` nanoseconds. `bridge bench`
/// sets it to break the added latency down by stage; nothing else should.
pub const STAGE_LOG_ENV: &str = "BAUXITE_BRIDGE_STAGE_LOG";

/// The stage times of one topic's critical samples, kept in memory until the bridge stops.
#[derive(Debug)]
struct StageLog {
    path: std::path::PathBuf,
    /// (seq, received, dequeued, written), monotonic ns.
    stamps: Mutex<Vec<[u64; 4]>>,
}

impl StageLog {
    fn from_env() -> Option<Self> {
        let path = std::env::var_os(STAGE_LOG_ENV)?;
        Some(Self { path: path.into(), stamps: Mutex::default() })
    }

    fn record(&self, payload: &[u8], received: Nanos, dequeued: Nanos, clock: Clock) {
        if let Ok(h) = bauxite_core::wire::bench::Repr::parse_bytes(payload) {
            let stamp =
                [h.seq, clock.monotonic_ns(received), clock.monotonic_ns(dequeued), clock.monotonic_ns(clock.now())];
            self.stamps.lock().unwrap_or_else(|e| e.into_inner()).push(stamp);
        }
    }

    /// Appends the lines noted since the last call to the file (topics append one after
    /// another as they stop). Taking them means a second call, as a forwarder stopped and then
    /// dropped makes, appends nothing: every line used to be written twice.
    fn write(&self, topic: &str) -> std::io::Result<()> {
        use std::io::Write as _;
        let stamps = std::mem::take(&mut *self.stamps.lock().unwrap_or_else(|e| e.into_inner()));
        let mut text = String::with_capacity(stamps.len() * 64);
        for [seq, received, dequeued, written] in stamps.iter() {
            text.push_str(&format!("{topic} {seq} {received} {dequeued} {written}\n"));
        }
        std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?.write_all(text.as_bytes())
    }
}

impl TopicShared {
    fn new(name: &str, policy: &PolicyConfig) -> Self {
        Self {
            name: name.to_string(),
            received: AtomicU64::new(0),
            read_errors: AtomicU64::new(0),
            critical: PathStats::default(),
            noncritical: PathStats::default(),
            critical_queue: DropOldest::new(policy.critical_queue),
            noncritical_queue: DropOldest::new(policy.noncritical_queue),
            critical_on: AtomicBool::new(true),
            noncritical_mhz: AtomicU64::new((policy.noncritical_hz * 1e3).round() as u64),
            stop: AtomicBool::new(false),
            stage_log: StageLog::from_env(),
            replica: None,
        }
    }

    /// Whether this bridge may write at `now` (always, unless a standby group says not).
    fn may_write(&self, now: Nanos) -> bool {
        self.replica.as_ref().is_none_or(|r| r.beacon.may_write(now))
    }

    /// Tells the group that this critical sample is about to be written.
    fn announce(&self, sample: &Sample) {
        if let Some(r) = &self.replica {
            r.beacon.announce(&self.name, sample.origin);
        }
    }

    /// Keeps a sample that just arrived; whether this bridge forwards it (always, unless it is
    /// a standby).
    fn keep(&self, sample: &Sample, received: Nanos) -> bool {
        self.replica.as_ref().is_none_or(|r| r.kept.keep(sample, received))
    }

    /// Starts forwarding after a takeover: first the kept samples `from` is not known to have
    /// sent, into the critical queue in their order. Returns how many.
    pub fn take_over(&self, from: Option<&Predecessor>, heartbeat: Nanos) -> usize {
        let Some(r) = &self.replica else { return 0 };
        let missed =
            |s: &Sample, received: Nanos| from.is_some_and(|p| p.missed(&self.name, s.origin, received, heartbeat));
        r.kept.forward_from(missed, |s, received| {
            self.critical_queue.push(s, received);
        })
    }

    /// Stops forwarding (another bridge is active): what waits in the queues is dropped, as
    /// the active bridge writes it.
    pub fn stand_by(&self) {
        if let Some(r) = &self.replica {
            r.kept.stop_forwarding(|| {
                self.critical_queue.clear();
                self.noncritical_queue.clear();
            });
        }
    }

    /// Applies a policy decision from now on.
    pub fn set_decision(&self, d: Decision) {
        self.critical_on.store(d.critical, Ordering::Relaxed);
        let mhz = d.noncritical_hz.map_or(0, |hz| ((hz * 1e3).round() as u64).max(1));
        self.noncritical_mhz.store(mhz, Ordering::Relaxed);
    }

    /// The decision in force.
    pub fn decision(&self) -> Decision {
        let mhz = self.noncritical_mhz.load(Ordering::Relaxed);
        Decision {
            critical: self.critical_on.load(Ordering::Relaxed),
            noncritical_hz: (mhz > 0).then(|| mhz as f64 / 1e3),
        }
    }

    /// The longest any sample of this topic has waited, in flight or queued, at `now`.
    pub fn lag(&self, now: Nanos) -> Nanos {
        let in_flight = |p: &PathStats| match p.in_flight_since.load(Ordering::Relaxed) {
            0 => 0,
            since => now.saturating_sub(since),
        };
        [
            self.critical.max_lag.swap(0, Ordering::Relaxed),
            self.noncritical.max_lag.swap(0, Ordering::Relaxed),
            in_flight(&self.critical),
            in_flight(&self.noncritical),
            self.critical_queue.oldest_wait(now),
            self.noncritical_queue.oldest_wait(now),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// The fuller of the two queues, 0–1.
    pub fn queue_fill(&self) -> f64 {
        self.critical_queue.fill().max(self.noncritical_queue.fill())
    }

    /// Errors so far (reads and both writers).
    pub fn errors(&self) -> u64 {
        self.read_errors.load(Ordering::Relaxed)
            + self.critical.errors.load(Ordering::Relaxed)
            + self.noncritical.errors.load(Ordering::Relaxed)
    }
}

/// The DDS topic names a forwarder uses, for logs and reports.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TopicNames {
    /// The input.
    pub input: String,
    /// The critical output.
    pub critical: String,
    /// The noncritical output.
    pub noncritical: String,
    /// The DDS type.
    pub type_name: String,
}

/// One topic's running threads.
pub struct Forwarder {
    /// Shared counters and controls.
    pub shared: Arc<TopicShared>,
    /// The DDS names.
    pub names: TopicNames,
    stop_reader: Option<futures::channel::oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl Forwarder {
    /// Creates the reader and both writers (all at start-up) and starts their threads. In a
    /// hot-standby group (`group`: its beacon and how many input samples to keep), nothing is
    /// forwarded until the election makes this bridge active.
    pub fn start(
        participants: &Participants,
        topic: &TopicConfig,
        policy: &PolicyConfig,
        group: Option<(&Arc<Beacon>, usize)>,
        clock: Clock,
    ) -> Result<Self, DdsError> {
        let names = TopicNames {
            input: topic.dds_input(),
            critical: topic.dds_critical(),
            noncritical: topic.dds_noncritical(),
            type_name: topic.dds_type(),
        };
        let q = &topic.qos;
        let dds_topic = |participant: &DomainParticipant, name: &str| {
            participant
                .create_topic(
                    name.to_string(),
                    names.type_name.clone(),
                    &dds::reader_qos(q.input, q.depth),
                    TopicKind::NoKey,
                )
                .map_err(|e| DdsError::new(format!("topic {name}"), e))
        };
        let no_qos = rustdds::QosPolicyBuilder::new().build();
        let (input_topic, critical_topic, noncritical_topic) = (
            dds_topic(&participants.input, &names.input)?,
            dds_topic(&participants.critical, &names.critical)?,
            dds_topic(&participants.noncritical, &names.noncritical)?,
        );
        let reader = participants
            .input
            .create_subscriber(&no_qos)
            .and_then(|s| {
                s.create_datareader_no_key::<RawSample, RawAdapter>(
                    &input_topic,
                    Some(dds::reader_qos(q.input, q.depth)),
                )
            })
            .map_err(|e| DdsError::new(format!("reader for {}", names.input), e))?;
        let critical = participants
            .critical
            .create_publisher(&no_qos)
            .and_then(|p| {
                p.create_datawriter_no_key::<RawSample, RawAdapter>(
                    &critical_topic,
                    Some(dds::critical_writer_qos(q.depth, q.critical_window, q.critical_blocking)),
                )
            })
            .map_err(|e| DdsError::new(format!("writer for {}", names.critical), e))?;
        let noncritical = participants
            .noncritical
            .create_publisher(&no_qos)
            .and_then(|p| {
                p.create_datawriter_no_key::<RawSample, RawAdapter>(
                    &noncritical_topic,
                    Some(dds::best_effort_qos(q.depth)),
                )
            })
            .map_err(|e| DdsError::new(format!("writer for {}", names.noncritical), e))?;

        let critical = Arc::new(Mutex::new(critical));
        let mut shared = TopicShared::new(&topic.name, policy);
        shared.replica = group.map(|(beacon, keep)| Replica { kept: Kept::new(keep), beacon: beacon.clone() });
        let shared = Arc::new(shared);
        let (stop_tx, stop_rx) = futures::channel::oneshot::channel();
        let spawn = |what: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(format!("bx-{what}"))
                .spawn(f)
                .map_err(|e| DdsError::new(format!("{what} thread"), e))
        };
        let threads = vec![
            spawn("crit", {
                let (shared, names, critical) = (shared.clone(), names.clone(), critical.clone());
                Box::new(move || critical_loop(&critical, &shared, &names.critical, clock))
            })?,
            spawn("noncrit", {
                let (shared, names, max_age) = (shared.clone(), names.clone(), policy.max_age);
                Box::new(move || noncritical_loop(noncritical, &shared, &names.noncritical, max_age, clock))
            })?,
            spawn("read", {
                let (shared, policy) = (shared.clone(), policy.clone());
                Box::new(move || reader_loop(reader, &critical, &shared, &policy, clock, stop_rx))
            })?,
        ];
        Ok(Self { shared, names, stop_reader: Some(stop_tx), threads })
    }

    /// Stops the threads and waits for them.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(tx) = self.stop_reader.take() {
            let _ = tx.send(());
        }
        self.shared.critical_queue.close();
        self.shared.noncritical_queue.close();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Some(log) = &self.shared.stage_log
            && let Err(e) = log.write(&self.shared.name)
        {
            tracing::warn!(topic = %self.shared.name, "writing {}: {e}", log.path.display());
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn reader_loop(
    reader: raw::RawReader,
    critical: &Mutex<RawWriter>,
    shared: &TopicShared,
    policy: &PolicyConfig,
    clock: Clock,
    stop: futures::channel::oneshot::Receiver<()>,
) {
    let mut samples = reader.async_sample_stream();
    let mut stop = stop;
    let mut limiter = TokenBucket::new(policy.noncritical_hz, policy.burst);
    futures::executor::block_on(async {
        loop {
            let next = futures::select! {
                s = samples.select_next_some() => s,
                _ = stop => return,
            };
            let now = clock.now();
            let sample = match next {
                Ok(s) => {
                    let info = s.sample_info();
                    let id = info.sample_identity();
                    let origin = Origin { writer: id.writer_guid.to_bytes(), seq: id.sequence_number.into() };
                    Sample { source_timestamp: info.source_timestamp(), origin: Some(origin), raw: s.into_value() }
                }
                Err(e) => {
                    shared.read_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(topic = %shared.name, "read error: {e}");
                    continue;
                }
            };
            shared.received.fetch_add(1, Ordering::Relaxed);
            if !shared.keep(&sample, now) {
                continue;
            }
            let decision = shared.decision();
            match decision.noncritical_hz {
                Some(hz) => {
                    if limiter.rate_hz() != hz {
                        limiter.set_rate(hz, now);
                    }
                    // Critical first: the noncritical copy is queued after it.
                    if decision.critical {
                        pass_critical(critical, shared, sample.clone(), now, clock);
                    } else {
                        shared.critical.suspended.fetch_add(1, Ordering::Relaxed);
                    }
                    if limiter.admit(now) {
                        shared.noncritical_queue.push(sample, now);
                    } else {
                        shared.noncritical.rate_limited.fetch_add(1, Ordering::Relaxed);
                    }
                }
                None => {
                    shared.noncritical.suspended.fetch_add(1, Ordering::Relaxed);
                    if decision.critical {
                        pass_critical(critical, shared, sample, now, clock);
                    } else {
                        shared.critical.suspended.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    });
}

/// Hands a critical sample that arrived at `received` on, without ever waiting: written here
/// when the writer is free, nothing is queued ahead and the window has room; queued for the
/// critical writer thread otherwise (also when the window is full, so that thread, which may
/// wait, retries it).
fn pass_critical(writer: &Mutex<RawWriter>, shared: &TopicShared, sample: Sample, received: Nanos, clock: Clock) {
    let Ok(writer) = writer.try_lock() else {
        shared.critical_queue.push(sample, received);
        return;
    };
    if !shared.critical_queue.is_empty() || !shared.may_write(received) {
        shared.critical_queue.push(sample, received);
        return;
    }
    shared.announce(&sample);
    let payload = shared.stage_log.as_ref().map(|_| sample.raw.payload.clone());
    match raw::try_write(&writer, sample.raw, sample.source_timestamp) {
        Ok(()) => {
            shared.critical.record_written(clock.now().saturating_sub(received));
            if let (Some(log), Some(payload)) = (&shared.stage_log, &payload) {
                // Never queued: dequeued when received.
                log.record(payload, received, received, clock);
            }
        }
        Err(WriteError::WouldBlock { data }) => {
            shared.critical_queue.push(Sample { raw: data, ..sample }, received);
        }
        Err(e) => {
            shared.critical.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(topic = %shared.name, "write failed: {e}");
        }
    }
}

/// The writer, waiting for it if another thread holds it (a poisoned lock still holds a
/// usable writer: the panic was elsewhere).
fn lock_writer(writer: &Mutex<RawWriter>) -> MutexGuard<'_, RawWriter> {
    writer.lock().unwrap_or_else(|e| e.into_inner())
}

/// How often the critical writer thread looks again at a closed gate (a standby's).
const GATE_POLL: Duration = Duration::from_millis(1);

/// How often a writer thread with nothing to write refreshes its matched-reader count.
const IDLE_POLL: Duration = Duration::from_millis(200);

fn update_matched(writer: &RawWriter, stats: &PathStats, topic: &str, last_check: &mut Nanos, now: Nanos) {
    if now.saturating_sub(*last_check) < IDLE_POLL.as_nanos() as Nanos {
        return;
    }
    *last_check = now;
    // RustDDS reports matches as status events (its matched-subscriptions call is a stub).
    while let Some(status) = writer.try_recv_status() {
        if let DataWriterStatus::PublicationMatched { current, .. } = status {
            let n = current.count().max(0) as usize;
            stats.matched.store(n, Ordering::Relaxed);
            tracing::info!(topic, readers = n, "{topic}: {n} matched reader(s)");
        }
    }
}

fn critical_loop(writer: &Mutex<RawWriter>, shared: &TopicShared, topic: &str, clock: Clock) {
    let stats = &shared.critical;
    let mut last_check = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        update_matched(&lock_writer(writer), stats, topic, &mut last_check, clock.now());
        if !shared.critical_queue.wait_nonempty(IDLE_POLL) {
            continue;
        }
        // The writer first, then the sample: the reader writes directly only while it holds
        // the writer and nothing is queued, so it cannot overtake the sample popped here.
        let writer = lock_writer(writer);
        if !shared.may_write(clock.now()) {
            // A standby, or a bridge that lost its gate: the samples wait (or are cleared
            // when it stands down).
            drop(writer);
            std::thread::sleep(GATE_POLL);
            continue;
        }
        let Some(queued) = shared.critical_queue.pop(Duration::ZERO) else { continue };
        shared.announce(&queued.item);
        let dequeued = clock.now();
        stats.in_flight_since.store(queued.received.max(1), Ordering::Relaxed);
        let Sample { mut raw, source_timestamp, .. } = queued.item;
        // The payload is reference-counted: keeping a handle for the stage log copies nothing.
        let payload = shared.stage_log.as_ref().map(|_| raw.payload.clone());
        loop {
            match raw::write(&writer, raw, source_timestamp) {
                Ok(()) => {
                    stats.record_written(clock.now().saturating_sub(queued.received));
                    if let (Some(log), Some(payload)) = (&shared.stage_log, &payload) {
                        log.record(payload, queued.received, dequeued, clock);
                    }
                    break;
                }
                Err(WriteError::WouldBlock { data }) => {
                    // The window is full: a reader is slow or gone. Retry while the queue has
                    // room; once newer samples fill it, this oldest one goes, as drop-oldest says.
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    let give_up = shared.stop.load(Ordering::Relaxed)
                        || !shared.decision().critical
                        || shared.critical_queue.is_full();
                    if give_up {
                        stats.abandoned.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    update_matched(&writer, stats, topic, &mut last_check, clock.now());
                    raw = data;
                }
                Err(e) => {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(topic, "write failed: {e}");
                    break;
                }
            }
        }
        stats.in_flight_since.store(0, Ordering::Relaxed);
    }
}

/// How long after its arrival a noncritical copy waits before it is written, so that writing
/// it does not compete for the CPU with the critical copy of the same sample on its way out
/// and into its subscriber.
///
/// The noncritical copy of every third sample (10 of 30 Hz) used to leave at once, and on a
/// 2-core machine the bridge's second writer, the slow subscriber and the link toward it then
/// ran beside the critical sample: over a 105 s run with Cyclone DDS peers (`bauxite eval
/// bridge --scenario bridge-clean`), 90 % of the critical samples at or above the p95 were
/// ones with a noncritical copy (their p95 2.07 ms, the others' 1.56). The critical copy
/// reaches its subscriber well within this (p99 about 1 ms after the bridge received it), and
/// the noncritical path is rate-limited to at most 10 Hz toward a subscriber whose link is the
/// slow one, so 2 ms there costs nothing it is judged by.
pub const NONCRITICAL_DEFER: Duration = Duration::from_millis(2);

/// Waits until [`NONCRITICAL_DEFER`] after `received` (at once if that has passed).
fn yield_to_critical(received: Nanos, clock: Clock) {
    let due = received.saturating_add(NONCRITICAL_DEFER.as_nanos() as Nanos);
    let now = clock.now();
    if due > now {
        std::thread::sleep(Duration::from_nanos(due - now));
    }
}

fn noncritical_loop(writer: RawWriter, shared: &TopicShared, topic: &str, max_age: Duration, clock: Clock) {
    let stats = &shared.noncritical;
    let mut last_check = 0;
    let max_age = max_age.as_nanos() as Nanos;
    while !shared.stop.load(Ordering::Relaxed) {
        update_matched(&writer, stats, topic, &mut last_check, clock.now());
        let Some(queued) = shared.noncritical_queue.pop(IDLE_POLL) else { continue };
        yield_to_critical(queued.received, clock);
        if clock.now().saturating_sub(queued.received) > max_age {
            stats.stale.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        if shared.decision().noncritical_hz.is_none() || !shared.may_write(clock.now()) {
            stats.suspended.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        stats.in_flight_since.store(queued.received.max(1), Ordering::Relaxed);
        match raw::write(&writer, queued.item.raw, queued.item.source_timestamp) {
            Ok(()) => stats.record_written(clock.now().saturating_sub(queued.received)),
            Err(e) => {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(topic, "write failed: {e}");
            }
        }
        stats.in_flight_since.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod yield_to_critical_tests {
    use super::*;

    /// A noncritical copy is not written sooner than [`NONCRITICAL_DEFER`] after its sample
    /// arrived (a lower bound: a loaded machine may only make it later).
    #[test]
    fn a_noncritical_copy_waits_out_the_deferral_from_its_arrival() {
        let clock = Clock::new();
        let received = clock.now();
        yield_to_critical(received, clock);
        let waited = clock.now() - received;
        assert!(waited >= NONCRITICAL_DEFER.as_nanos() as Nanos, "waited {waited} ns");
    }
}

#[cfg(test)]
mod stage_log_tests {
    use super::*;

    #[test]
    fn the_stage_log_notes_benchmark_samples_and_appends_one_line_each() {
        let path = std::env::temp_dir().join(format!("bauxite-stage-log-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = StageLog { path: path.clone(), stamps: Mutex::default() };
        let other = StageLog { path: path.clone(), stamps: Mutex::default() };
        let clock = Clock::new();
        let before = bauxite_sys::monotonic_ns();
        log.record(&bauxite_core::wire::bench::Repr { seq: 7, sent_ns: 1 }.to_vec(64), 10, 20, clock);
        // Not a benchmark sample (too short for the header): not noted.
        log.record(&[0u8; 3], 30, 40, clock);
        let after = bauxite_sys::monotonic_ns();
        other.record(&bauxite_core::wire::bench::Repr { seq: 8, sent_ns: 1 }.to_vec(64), 10, 20, clock);
        log.write("/a").expect("write");
        other.write("/b").expect("append");
        // A forwarder stopped, then dropped, writes twice: the second appends nothing.
        log.write("/a").expect("write again");
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::remove_file(&path).expect("remove");
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!((lines[0][0], lines[0][1], lines[1][0], lines[1][1]), ("/a", "7", "/b", "8"));
        let n = |i: usize| lines[0][i].parse::<u64>().expect("a number");
        assert_eq!((n(2), n(3)), (clock.monotonic_ns(10), clock.monotonic_ns(20)));
        // Written is stamped when noted, on the host's monotonic clock.
        assert!((before..=after).contains(&n(4)), "{before} <= {} <= {after}", n(4));
    }
}

#[cfg(test)]
mod pass_critical_tests {
    use super::*;
    use rustdds::RepresentationIdentifier;
    use rustdds::bytes::Bytes;

    fn sample(byte: u8) -> Sample {
        Sample {
            raw: RawSample { representation: RepresentationIdentifier::CDR_LE, payload: Bytes::from(vec![byte; 8]) },
            source_timestamp: None,
            origin: None,
        }
    }

    /// The reader never waits for the critical writer: held by the writer thread (as in a
    /// write blocked on a full window, here for up to a minute), or with a sample queued ahead,
    /// the reader queues and returns; free, with nothing ahead, it writes itself.
    #[test]
    fn the_reader_queues_behind_a_held_writer_or_a_queued_sample_and_writes_when_free() {
        let config = crate::parse(
            "dds: {domain_id: 66, interfaces: [127.0.0.1]}\ntopics:\n  - {name: /t, type: std_msgs/msg/String}\n",
            "test.yaml".as_ref(),
        )
        .expect("a valid config");
        let participant = dds::participant(&config.dds).expect("a participant on loopback");
        let qos = dds::critical_writer_qos(16, 16, Duration::from_secs(60));
        let topic = participant.create_topic("rt/t".into(), "T".into(), &qos, TopicKind::NoKey).expect("topic");
        let writer = participant
            .create_publisher(&qos)
            .and_then(|p| p.create_datawriter_no_key::<RawSample, raw::RawAdapter>(&topic, Some(qos.clone())))
            .expect("writer");
        let writer = Mutex::new(writer);
        let shared = TopicShared::new("/t", &PolicyConfig::default());
        let clock = Clock::new();
        let queued = |shared: &TopicShared| -> Vec<u8> {
            std::iter::from_fn(|| shared.critical_queue.pop(Duration::ZERO)).map(|q| q.item.raw.payload[0]).collect()
        };

        let held = lock_writer(&writer);
        pass_critical(&writer, &shared, sample(1), clock.now(), clock);
        drop(held);
        // Free now, but sample 1 waits in the queue: sample 2 goes behind it, not past it.
        pass_critical(&writer, &shared, sample(2), clock.now(), clock);
        assert_eq!(shared.critical.forwarded.load(Ordering::Relaxed), 0);
        assert_eq!(queued(&shared), [1, 2]);

        pass_critical(&writer, &shared, sample(3), clock.now(), clock);
        assert_eq!(shared.critical.forwarded.load(Ordering::Relaxed), 1, "written directly");
        assert!(shared.critical_queue.is_empty());
        assert_eq!(shared.critical.take_latencies().len(), 1);
    }
}

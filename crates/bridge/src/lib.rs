//! The adaptive DDS bridge (seed 004): keeps degraded subscribers from backpressuring critical
//! ones.
//!
//! In DDS, one RELIABLE writer serves all its readers from one history: a subscriber that stops
//! acknowledging (a lossy radio link, an overloaded host) fills that history, and the writer —
//! and so the publisher and every other subscriber, safety-critical ones included — stalls. The
//! bridge subscribes to a topic once and republishes it on two writers of its own: RELIABLE
//! `<topic>/critical` for critical subscribers and BEST_EFFORT `<topic>/noncritical` for the
//! rest, each behind its own small queue and thread, so nothing a noncritical reader does can
//! reach the critical path. Samples are forwarded as serialized bytes, never decoded, so the
//! bridge works for any type and any DDS implementation (it is tested against Eclipse Cyclone
//! DDS).
//!
//! Modules, one job each:
//! - [`config`]: the YAML file, checked with file:line:key errors;
//! - [`forward`]: reader → queues → writers for one topic ([`raw`] passes the bytes, [`queue`]
//!   is the drop-oldest queue, [`dds`] holds the QoS);
//! - [`classifier`]: subscriber health from probe RTT and loss, with hysteresis ([`probe`]
//!   sends and answers the probes);
//! - [`limiter`]: token buckets that hit their rate; [`policy`]: what each path forwards;
//! - [`supervisor`]: NORMAL / DEGRADED / EMERGENCY from the bridge's own vital signs, reported
//!   on a ROS 2 diagnostics topic ([`diagnostics`]);
//! - [`telemetry`]: status lines and the MCAP recording; [`metrics`]: Prometheus metrics; [`runtime`]: the running bridge;
//! - [`redundancy`]: hot standby, one active bridge of a group elected by heartbeats;
//! - [`bench`]: the added-latency, capacity and overhead benchmark.
//!
//! The classifier, limiter, policy and supervisor are pure state machines fed with `now`
//! (nanoseconds on the bridge's monotonic [`Clock`]), like the queue disciplines of
//! `bauxite-qdisc`: their tests replay exact timelines.
#![deny(missing_docs)]

pub mod bench;
pub mod classifier;
pub mod config;
pub mod dds;
pub mod diagnostics;
pub mod forward;
pub mod limiter;
pub mod metrics;
pub mod policy;
pub mod probe;
pub mod queue;
pub mod raw;
pub mod redundancy;
pub mod runtime;
pub mod supervisor;
pub mod telemetry;

use std::time::{SystemTime, UNIX_EPOCH};

pub use config::{BridgeConfig, load, parse};
pub use probe::{ProbeResponder, ResponderOptions};
pub use runtime::{Bridge, Status, run};

/// Nanoseconds on the bridge's monotonic clock (the same convention as `bauxite-qdisc`).
pub type Nanos = u64;

/// The bridge's clock: monotonic nanoseconds since start, and their wall-clock time for
/// recordings and diagnostics. It reads `CLOCK_MONOTONIC` ([`bauxite_sys::monotonic_ns`]),
/// one clock for every process of a host, so [`Clock::monotonic_ns`] compares across
/// processes: the benchmark lines up the bridge's stage times with its own.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start_monotonic_ns: u64,
    unix_start_ns: u64,
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Self {
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Self { start_monotonic_ns: bauxite_sys::monotonic_ns(), unix_start_ns: unix }
    }

    /// Nanoseconds since the clock started; never 0 (0 means "no time" in shared counters).
    pub fn now(&self) -> Nanos {
        bauxite_sys::monotonic_ns().saturating_sub(self.start_monotonic_ns).max(1)
    }

    /// `CLOCK_MONOTONIC` time of `t`.
    pub fn monotonic_ns(&self, t: Nanos) -> u64 {
        self.start_monotonic_ns + t
    }

    /// The wall-clock time (ns since the UNIX epoch) of `t`.
    pub fn unix_ns(&self, t: Nanos) -> u64 {
        self.unix_start_ns + t
    }
}

/// Keeps RustDDS's logging to its errors unless `RUST_LOG` asks for more.
///
/// RustDDS reports every discovery step at INFO and every blocked reliable write at WARN through
/// the `log` crate; the bridge counts and reports those itself, so by default they are noise.
/// Call after the tracing subscriber is installed (it sets `log`'s level from its filter).
pub fn quiet_dds_logs() {
    if std::env::var_os("RUST_LOG").is_none() {
        log::set_max_level(log::LevelFilter::Error);
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// Why the bridge could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The config file.
    #[error(transparent)]
    Config(#[from] bauxite_core::ConfigError),
    /// A DDS entity.
    #[error(transparent)]
    Dds(#[from] dds::DdsError),
    /// The MCAP recording.
    #[error(transparent)]
    Record(#[from] bauxite_telemetry::RecordError),
    /// The `/metrics` endpoint.
    #[error(transparent)]
    Metrics(#[from] bauxite_metrics::MetricsError),
    /// A file, thread or process operation; the OS error is the source.
    #[error("{what}")]
    Io {
        /// What was being done (`creating bridge.log`, `starting the control thread`).
        what: String,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The control loop panicked (only seen by library users: the `bauxite` binary aborts on
    /// any panic).
    #[error("the bridge's control loop panicked")]
    ControlPanicked,
    /// The benchmark could not measure (the bridge exited, no sample came through).
    #[error("bridge bench: {0}")]
    Bench(String),
    /// Encoding the benchmark's summary.
    #[error("encoding the benchmark summary")]
    Encode(#[source] serde_json::Error),
}

impl BridgeError {
    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { what: what.into(), source }
    }
}

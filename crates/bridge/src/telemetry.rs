//! What the bridge reports: per-path rates and latencies, classifier states and transitions,
//! the supervisor's mode — as status log lines and, when asked, an MCAP recording with the
//! shared telemetry crate (channels `/bauxite/bridge/paths`, `/bauxite/bridge/classifier`,
//! `/bauxite/bridge/supervisor`; JSON with JSON Schema, so Foxglove plots them as they are).

use std::fmt;
use std::path::Path;

use bauxite_core::stats::percentile;
use bauxite_telemetry::{Channel, RecordError, Recorder};
use serde::Serialize;

use crate::classifier::{SubscriberReport, Transition};
use crate::policy::Decision;
use crate::supervisor::{Mode, ModeChange, Vitals};

/// One output path over one report interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PathReport {
    /// The DDS topic.
    pub topic: String,
    /// Samples written per second.
    pub rate_hz: f64,
    /// Samples written in the interval.
    pub forwarded: u64,
    /// Refused by the rate limiter.
    pub rate_limited: u64,
    /// Not forwarded because the path was suspended.
    pub suspended: u64,
    /// Dropped as stale.
    pub stale: u64,
    /// Dropped from a full queue (including abandoned blocked writes).
    pub overflow: u64,
    /// Failed or blocked writes.
    pub errors: u64,
    /// Readers matched now.
    pub readers: usize,
    /// Arrival-to-written latency percentiles, ms (none without samples).
    pub latency_p50_ms: Option<f64>,
    /// 99th percentile.
    pub latency_p99_ms: Option<f64>,
    /// Maximum.
    pub latency_max_ms: Option<f64>,
}

/// One topic over one report interval (`/bauxite/bridge/paths`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TopicReport {
    /// The input's DDS topic.
    pub input: String,
    /// Samples taken from the input per second.
    pub input_hz: f64,
    /// The critical path.
    pub critical: PathReport,
    /// The noncritical path.
    pub noncritical: PathReport,
    /// What the policy allows now.
    pub decision: Decision,
}

/// Every subscriber after an evaluation (`/bauxite/bridge/classifier`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ClassifierReport {
    /// Each known subscriber.
    pub subscribers: Vec<SubscriberReport>,
    /// The state changes of this evaluation.
    pub transitions: Vec<Transition>,
}

/// The supervisor at one tick (`/bauxite/bridge/supervisor`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SupervisorReport {
    /// The mode after this tick.
    pub mode: Mode,
    /// What it measured.
    pub vitals: Vitals,
    /// The change this tick caused.
    pub change: Option<ModeChange>,
}

/// Percentiles of latencies given in µs: (p50, p99, max) in ms, nearest-rank
/// ([`bauxite_core::stats::percentile`], as every Bauxite figure).
pub fn percentiles(mut us: Vec<u32>) -> Option<(f64, f64, f64)> {
    us.sort_unstable();
    let at = |q: f64| percentile(&us, q).map(|v| f64::from(v) / 1e3);
    Some((at(0.5)?, at(0.99)?, at(1.0)?))
}

impl fmt::Display for TopicReport {
    /// One status line: `rt/scan in 30.0 Hz | critical 30.0 Hz 1 reader p50 0.21 ms ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {:.1} Hz", self.input, self.input_hz)?;
        for (name, p, limit) in
            [("critical", &self.critical, None), ("noncritical", &self.noncritical, Some(self.decision.noncritical_hz))]
        {
            write!(f, " | {name} {} {:.1} Hz, {} reader(s)", p.topic, p.rate_hz, p.readers)?;
            match limit {
                Some(Some(hz)) => write!(f, ", limit {hz} Hz")?,
                Some(None) => write!(f, ", suspended")?,
                None if !self.decision.critical => write!(f, ", stopped")?,
                None => {}
            }
            if let (Some(p50), Some(p99)) = (p.latency_p50_ms, p.latency_p99_ms) {
                write!(f, ", latency p50 {p50:.2} ms p99 {p99:.2} ms")?;
            }
            let dropped = p.stale + p.overflow;
            if dropped + p.errors > 0 {
                write!(f, ", dropped {dropped}, errors {}", p.errors)?;
            }
        }
        Ok(())
    }
}

/// The MCAP recording, when one was asked for.
pub struct Recording {
    recorder: Recorder,
    paths: Channel<TopicReport>,
    classifier: Channel<ClassifierReport>,
    supervisor: Channel<SupervisorReport>,
}

impl Recording {
    /// Creates the file and its channels.
    pub fn create(path: &Path) -> Result<Self, RecordError> {
        let mut recorder = Recorder::create(path)?;
        let paths = recorder.channel("/bauxite/bridge/paths")?;
        let classifier = recorder.channel("/bauxite/bridge/classifier")?;
        let supervisor = recorder.channel("/bauxite/bridge/supervisor")?;
        Ok(Self { recorder, paths, classifier, supervisor })
    }

    /// Records a topic report at `unix_ns`.
    pub fn paths(&mut self, unix_ns: u64, r: &TopicReport) -> Result<(), RecordError> {
        self.recorder.write(self.paths, unix_ns, r)
    }

    /// Records an evaluation at `unix_ns`.
    pub fn classifier(&mut self, unix_ns: u64, r: &ClassifierReport) -> Result<(), RecordError> {
        self.recorder.write(self.classifier, unix_ns, r)
    }

    /// Records a supervisor tick at `unix_ns`.
    pub fn supervisor(&mut self, unix_ns: u64, r: &SupervisorReport) -> Result<(), RecordError> {
        self.recorder.write(self.supervisor, unix_ns, r)
    }

    /// Closes the file.
    pub fn finish(self) -> Result<(), RecordError> {
        self.recorder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_ranks() {
        let us: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        let (p50, p99, max) = percentiles(us).unwrap();
        // Nearest rank: the 50th and 99th of 100 samples.
        assert_eq!((p50, p99, max), (50.0, 99.0, 100.0));
        assert_eq!(percentiles(Vec::new()), None);
    }
}

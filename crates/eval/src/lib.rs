//! `bauxite eval bridge`: seed 004's evaluation of the adaptive bridge.
//!
//! A publisher, the bridge, a critical subscriber on a clean path and a slow subscriber
//! behind bursty (Gilbert–Elliott) loss, each in its own network namespace ([`testbed`]);
//! baseline, bridge, ablation and toggle runs ([`scenario`]); real DDS peers of each
//! implementation ([`implementation`]: Cyclone DDS and ROS 2 on Fast DDS from `peers/`, RustDDS
//! from [`peer`]), one process per role ([`run`]); the paper's metrics ([`metrics`]) and
//! tables, charts and recordings ([`report`]). This crate sits beside `demo`: it depends on
//! `netlab`, `bridge` and `telemetry`, and only `cli` depends on it.
#![deny(missing_docs)]

pub mod implementation;
pub mod metrics;
pub mod peer;
pub mod report;
pub mod run;
pub mod scenario;
pub mod testbed;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use implementation::{Implementation, PeerLauncher};
pub use report::Summary;
pub use run::Scheduling;
pub use scenario::{Lengths, Scenario};

/// Why the evaluation could not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A bad flag or a missing dependency, named.
    #[error("{0}")]
    Usage(String),
    /// The testbed.
    #[error(transparent)]
    Netlab(#[from] bauxite_netlab::NetlabError),
    /// A namespace command.
    #[error(transparent)]
    Sys(#[from] bauxite_sys::SysError),
    /// A RustDDS entity of the RustDDS peer.
    #[error(transparent)]
    Dds(#[from] bauxite_bridge::dds::DdsError),
    /// A peer, the bridge or the responder failed; the message names it and its log.
    #[error("{0}")]
    Peer(String),
    /// Writing a recording.
    #[error(transparent)]
    Record(bauxite_telemetry::RecordError),
    /// Reading the bridge's recording.
    #[error(transparent)]
    Read(#[from] bauxite_telemetry::ReadError),
    /// Drawing a chart.
    #[error(transparent)]
    Chart(#[from] bauxite_telemetry::chart::ChartError),
    /// A file or process operation.
    #[error("{what}")]
    Io {
        /// What was being done, naming the file.
        what: String,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// Encoding `summary.json`.
    #[error("encoding summary.json")]
    Encode(#[source] serde_json::Error),
    /// SIGINT or SIGTERM: the run under way was stopped and cleaned up.
    #[error("interrupted")]
    Interrupted,
}

impl EvalError {
    /// Wraps an I/O error with what was being done, for `map_err`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}

/// What to evaluate.
pub struct EvalOptions {
    /// The `bauxite` binary (bridge, responder and RustDDS peer run from it).
    pub exe: PathBuf,
    /// Where results go.
    pub out: PathBuf,
    /// The scenarios, in order.
    pub scenarios: Vec<Scenario>,
    /// The implementations, each running every scenario.
    pub implementations: Vec<Implementation>,
    /// Run lengths.
    pub lengths: Lengths,
    /// How the processes are scheduled.
    pub scheduling: Scheduling,
    /// Set by SIGINT/SIGTERM: the run under way stops and is cleaned up.
    pub stop: Arc<AtomicBool>,
}

/// Runs every scenario with every implementation and writes the outputs; `progress` hears
/// (runs done, total, the run starting).
pub fn evaluate(options: &EvalOptions, mut progress: impl FnMut(usize, usize, &str)) -> Result<Summary, EvalError> {
    let launcher = PeerLauncher::new(options.exe.clone())?;
    // Held to the end of the evaluation, dropped (the request ended) on any return.
    let _wake_fast = match options.scheduling {
        run::Scheduling::Realtime => Some(bauxite_sys::CpuLatencyRequest::hold(0)?),
        run::Scheduling::Niced => None,
    };
    for i in &options.implementations {
        launcher.check(*i)?;
    }
    std::fs::create_dir_all(&options.out).map_err(EvalError::io(format!("creating {}", options.out.display())))?;
    let ctx = run::RunContext {
        exe: &options.exe,
        launcher: &launcher,
        lengths: &options.lengths,
        scheduling: options.scheduling,
        stop: &options.stop,
    };
    let total = options.scenarios.len() * options.implementations.len();
    let settle_ns = options.lengths.settle.as_nanos() as u64;
    let mut rows = Vec::new();
    let charts_dir = options.out.join("charts");
    std::fs::create_dir_all(&charts_dir).map_err(EvalError::io(format!("creating {}", charts_dir.display())))?;
    for implementation in &options.implementations {
        let mut records = Vec::new();
        for scenario in &options.scenarios {
            let label = format!("{} {}", implementation.name(), scenario.name);
            progress(rows.len(), total, &label);
            let dir = options.out.join(implementation.name()).join(&scenario.name);
            let record = run::run_one(&ctx, scenario, *implementation, &dir)?;
            let (changes, states, forwarded) = match &record.bridge_recording {
                Some(path) if path.exists() => {
                    let recording = bauxite_telemetry::read(path)?;
                    let (from, to) = metrics::span(&record, settle_ns);
                    let (changes, states) = metrics::classifier_history(&recording, "slow");
                    (changes, states, metrics::forwarded_noncritical_hz(&recording, from, to))
                }
                _ => (Vec::new(), Vec::new(), None),
            };
            let m = metrics::measure(&record, settle_ns, &changes, forwarded);
            report::write_recording(&record, &dir.join("run.mcap"))?;
            if let Some(path) = &record.bridge_recording {
                let _ = std::fs::remove_file(path);
            }
            rows.push(report::RunSummary::new(&record, m));
            records.push((record, states));
        }
        let data: Vec<report::ChartData<'_>> =
            records.iter().map(|(record, states)| report::ChartData { record, states: states.clone() }).collect();
        report::charts(&charts_dir, *implementation, &data)?;
    }
    progress(total, total, "done");
    let summary = Summary {
        checks: report::checks(&rows),
        runs: rows,
        lengths: options.lengths,
        scheduling: options.scheduling.describe(),
        severities: scenario::Severity::ALL.iter().map(|s| (s.name.to_string(), s.describe())).collect(),
    };
    let json = serde_json::to_string_pretty(&summary).map_err(EvalError::Encode)?;
    let write = |name: &str, text: &str| {
        let path = options.out.join(name);
        std::fs::write(&path, text).map_err(EvalError::io(format!("writing {}", path.display())))
    };
    write("summary.json", &json)?;
    write("summary.md", &report::markdown(&summary))?;
    Ok(summary)
}

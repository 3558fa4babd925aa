//! A deterministic discrete-event network simulator for seed 003's ns-3 study of
//! queue disciplines, driven by `bauxite-qdisc`'s disciplines.
//!
//! The layers, one module each: [`event`] (the clock), [`packet`] (packets in
//! flight), [`link`] (qdisc → device queue → wire), [`topology`] (nodes and
//! static routes), [`app`] (constant-rate UDP senders), [`monitor`] (ns-3
//! FlowMonitor figures), [`engine`] (the event loop), [`scheduler`] and
//! [`scenario`] (the seed's network), [`metrics`] (class figures and fairness;
//! means and confidence intervals are `bauxite_core::stats`'), [`study`] (the
//! scenario families and their shards), [`shard`] (a shard's files and their
//! merge), [`output`] (CSV, JSON and Markdown files), [`series`] (the data the
//! charts draw), [`charts`] (drawing them, PNG and SVG) and
//! [`util`] (row order and DSCP labels, shared by all of them). Random draws come
//! from `bauxite_qdisc::rng`, the disciplines' own generator. Same inputs and seed,
//! byte-identical outputs.
#![deny(missing_docs)]

pub mod app;
pub mod charts;
pub mod engine;
pub mod error;
pub mod event;
pub mod link;
pub mod metrics;
pub mod monitor;
pub mod output;
pub mod packet;
pub mod reference;
pub mod robot;
pub mod scenario;
pub mod scheduler;
pub mod series;
pub mod shard;
pub mod study;
pub mod tcp;
pub mod topology;
pub mod util;

pub use bauxite_qdisc::LimitScope;
pub use engine::{RunCounters, Simulator};
pub use error::SimError;
pub use metrics::{ClassRow, FlowRecord};
pub use scenario::{ClassSpec, ScenarioConfig, ScenarioResult, lane_of_tag, lane_port, run_scenario};
pub use scheduler::Scheduler;
pub use study::{Family, Shard, StudyConfig, StudyResult, run_shard, run_study};

//! Recordings: MCAP files of JSON messages with JSON Schema, which Foxglove opens
//! and plots as they are, and reading them back for replay and audit.
//!
//! Timestamps are the event's own time, not the time of writing. Every part of
//! Bauxite that records (the demo, the bridge's evaluation) uses this crate.
#![deny(missing_docs)]

pub mod chart;
pub mod foxglove;
pub mod link_charts;
pub mod messages;
pub mod record;
pub mod replay;

pub use record::{Channel, RecordError, Recorder};
pub use replay::{Damage, Message, ReadError, Recording, read, read_bytes};

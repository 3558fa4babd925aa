//! The messages Bauxite records, one type per kind of channel. Each derives a JSON
//! Schema, which the recording carries so Foxglove plots the fields without plugins.
//!
//! Channel names follow `/bauxite/<part>/<what>`; see [`topic`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One message's one-way latency, on `/bauxite/lanes/<lane>/latency`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencySample {
    /// The lane the message travelled in.
    pub lane: String,
    /// The stream (destination port).
    pub stream: u16,
    /// Sequence number in the stream.
    pub seq: u32,
    /// Send time, ns (CLOCK_MONOTONIC).
    pub sent_ns: u64,
    /// One-way latency, ms.
    pub latency_ms: f64,
}

/// A lane's counters over the last interval, on `/bauxite/lanes/<lane>/counters`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaneCounters {
    /// The lane.
    pub lane: String,
    /// Messages sent since the start.
    pub sent: u64,
    /// Messages received since the start.
    pub received: u64,
    /// Messages lost or dropped since the start.
    pub dropped: u64,
    /// Received bit rate over the interval, bit/s.
    pub bitrate_bps: f64,
}

/// The shaper's state, on `/bauxite/shaper/state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShaperState {
    /// Whether the shaper runs at all (phase 1 records `false`).
    pub active: bool,
    /// Whether the link is congested (bulk discarded early).
    pub congested: bool,
    /// The link rate the shaper believes in, bit/s.
    pub link_rate_bps: u64,
    /// The bulk lane's early-drop probability.
    pub bulk_drop_probability: f64,
}

/// One delivered video frame, on `/bauxite/video/frames`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoFrame {
    /// Frame number.
    pub frame: u32,
    /// Whether it is a key frame.
    pub key: bool,
    /// Size, bytes.
    pub bytes: u32,
    /// Frame latency (first byte sent to last byte received), ms.
    pub latency_ms: f64,
}

/// A phase boundary of a run, on `/bauxite/demo/phase`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseMark {
    /// Phase number (1 standard stack, 2 protected).
    pub phase: u32,
    /// What happens from here on, e.g. `link 1.5 Mbit/s`.
    pub event: String,
}

/// The channel name of `what` in `part`: `/bauxite/<part>/<what>`.
pub fn topic(part: &str, what: &str) -> String {
    format!("/bauxite/{part}/{what}")
}

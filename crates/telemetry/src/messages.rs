//! The messages Bauxite records, one type per kind of channel. Each derives a JSON
//! Schema, which the recording carries so Foxglove plots the fields without plugins.
//!
//! Channel names follow `/bauxite/<part>/<what>`; see [`topic`].
//!
//! The shaper's state, on `/bauxite/shaper/state`, is `bauxite_core::ShaperSnapshot`:
//! the one type the shaper publishes and `bauxite status` prints, recorded as is
//! (defined in `core` because this crate and the shaper do not depend on each other).

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
    /// On a `--link` run, a critical message's floor: the latency it would have had
    /// alone on the empty link when it was sent, ns (`bauxite_core::figures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ns: Option<u64>,
    /// With `floor_ns`: the wait a full packet just ahead of it on the link adds, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_of_line_ns: Option<u64>,
}

/// A lane's counters over the last interval, on `/bauxite/lanes/<lane>/counters`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaneCounters {
    /// The lane.
    pub lane: String,
    /// Messages sent since the start (video frames produced, on the bulk lane).
    pub sent: u64,
    /// Messages (frames) received since the start.
    pub received: u64,
    /// Messages (frames) not received: lost, dropped, skipped or still in flight.
    pub not_received: u64,
    /// Received bit rate over the interval, bit/s.
    pub bitrate_bps: f64,
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
    /// When its first byte was sent (the capture), ns (CLOCK_MONOTONIC): frame delay
    /// on a `--link` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_ns: Option<u64>,
}

/// A message that never arrived, on `/bauxite/lanes/<lane>/lost`, stamped with the
/// time it was due to be sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LostMessage {
    /// The lane it should have travelled in.
    pub lane: String,
    /// The stream (destination port).
    pub stream: u16,
    /// Sequence number in the stream.
    pub seq: u32,
}

/// The control loop consuming a new correction, on `/bauxite/control/update_delay`,
/// stamped with the consuming tick.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDelay {
    /// The correction's sequence number.
    pub seq: u32,
    /// When the correction was sent, ns (the message's stamp is the consuming tick).
    pub sent_ns: u64,
    /// Correction sent → consumed, ms.
    pub delay_ms: f64,
}

/// What a recorded run was, on `/bauxite/demo/run`, written once at its start: what
/// `bauxite audit` needs to recompute and check the run from the recording alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    /// Trial number, from 1.
    pub trial: u32,
    /// Phase (1 standard stack, 2 protected).
    pub phase: u32,
    /// Whether Bauxite shaped this run.
    pub protected: bool,
    /// Length of the run, ns.
    pub duration_ns: u64,
    /// When the link rate is planned to drop, ns after the start; the recording's
    /// phase mark with `link_rate_bps` = `link_after_bps` says when it did.
    pub drop_at_ns: u64,
    /// Link rate before the drop, bit/s.
    pub link_before_bps: u64,
    /// Link rate after the drop, bit/s.
    pub link_after_bps: u64,
    /// The critical streams: their messages (on whatever lane) make the figures.
    pub critical_streams: Vec<StreamRate>,
    /// The shaper's rate setting (`auto` or a rate), when protected.
    pub shaper_rate: Option<String>,
    /// Target: mean critical latency, ms.
    pub target_critical_latency_mean_ms: f64,
    /// Target: p99 critical latency, ms.
    pub target_critical_latency_p99_ms: f64,
    /// Target: mean update delay, ms.
    pub target_update_delay_mean_ms: f64,
    /// Target: critical loss, percent.
    pub target_critical_loss_pct: f64,
    /// The link, when the run was on an emulated `--link` link (then `drop_at_ns` is
    /// its first timed change, 0 without one, and `link_*_bps` are 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkRun>,
}

/// An emulated link's run, in its [`RunInfo`]: what `bauxite audit` needs to
/// recompute issue 11's figures (with the floors in the latency samples and the
/// [`LinkUsage`] at the end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkRun {
    /// The `--link` value (with `timeline=FILE` when one was given).
    pub spec: String,
    /// Capacity per bin, drops and windows, from the link and its timeline.
    pub facts: bauxite_core::figures::LinkFacts,
    /// Each periodic stream's message size on the link (IPv4 length + 4), bytes: the
    /// "other" traffic the video's utilisation leaves out.
    pub stream_wire_bytes: Vec<StreamBytes>,
}

/// A periodic stream's message size on the link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamBytes {
    /// Destination port (the stream id).
    pub port: u16,
    /// Bytes on the link per message.
    pub bytes: u32,
}

/// What the emulated link carried and the video offered, on `/bauxite/link/usage`,
/// written once at the end of a `--link` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkUsage {
    /// Bytes (on the link) delivered robot → base per `bauxite_core::figures::BIN_NS`
    /// bin from the start of the run, as the emulator recorded every packet's fate.
    pub uplink_bytes: Vec<u64>,
    /// Frames the camera produced.
    pub video_offered: u32,
    /// Of those, frames the encoder skipped.
    pub video_skipped: u32,
}

/// A periodic stream: its destination port and send rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamRate {
    /// Destination port (the stream id).
    pub port: u16,
    /// Messages per second.
    pub rate_hz: f64,
}

/// A phase boundary of a run, on `/bauxite/demo/phase`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseMark {
    /// Phase number (1 standard stack, 2 protected).
    pub phase: u32,
    /// What happens from here on, e.g. `link drops to 1500kbit`.
    pub event: String,
    /// The link rate from here on, bit/s, when the mark is a change of it.
    pub link_rate_bps: Option<u64>,
}

/// The channel name of `what` in `part`: `/bauxite/<part>/<what>`.
pub fn topic(part: &str, what: &str) -> String {
    format!("/bauxite/{part}/{what}")
}

//! `bauxite audit`: a demo recording's figures, recomputed from the recording alone
//! and checked against the targets it carries.
//!
//! The measurement is rebuilt with the same [`PhaseData`] methods the live run used,
//! from the same integer timestamps, so a complete recording reproduces the live
//! summary exactly. A truncated recording is audited up to its last complete chunk
//! and fails the completeness check; a corrupt one (a bad CRC, a duplicated record, a
//! summary that does not match its data) is audited up to the damage and fails the
//! integrity check, so a recording that cannot be trusted never passes. A file that is
//! not a demo recording is an error.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use bauxite_core::{DaemonState, ShaperSnapshot};
use bauxite_telemetry::messages::{
    LatencySample, LinkUsage, LostMessage, PhaseMark, RunInfo, UpdateDelay, VideoFrame, topic,
};
use bauxite_telemetry::{Damage, Message, Recording};

use crate::analysis::{PhaseData, PhaseSummary, summarize};

/// Why a file could not be audited at all.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// Not readable, or not MCAP.
    #[error(transparent)]
    Read(#[from] bauxite_telemetry::ReadError),
    /// No run description: not a demo recording, or cut before its first chunk.
    #[error(
        "{path}: no {topic} message in the {messages} readable messages{damage}: not a demo recording, or cut before its first chunk"
    )]
    NoRun {
        /// The file.
        path: PathBuf,
        /// The channel that was looked for.
        topic: String,
        /// Messages that could be read.
        messages: usize,
        /// ` (<damage>)` when the file is damaged.
        damage: String,
    },
    /// A message that does not have its channel's shape.
    #[error("{path}: message at {time_ns} ns on {topic}: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Its channel.
        topic: String,
        /// Its timestamp.
        time_ns: u64,
        /// What is wrong.
        message: String,
    },
}

/// One check of a recording against a target.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// The measured value.
    pub measured: f64,
    /// The limit it must not exceed.
    pub limit: f64,
    /// Unit of both.
    pub unit: &'static str,
    /// Whether it held.
    pub pass: bool,
}

/// The audit of one recording.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    /// The file.
    pub file: PathBuf,
    /// Trial and phase, as recorded.
    pub trial: u32,
    /// 1 (standard stack) or 2 (Bauxite).
    pub phase: u32,
    /// Whether Bauxite shaped the run.
    pub protected: bool,
    /// Messages read.
    pub messages: usize,
    /// Seconds of the run the readable messages cover.
    pub covered_s: f64,
    /// Why reading stopped early, for a damaged file.
    pub damage: Option<String>,
    /// The figures, in the shape of one phase of `summary.json`.
    pub summary: PhaseSummary,
    /// Each target and whether it held.
    pub checks: Vec<Check>,
    /// Whether every check held.
    pub pass: bool,
}

/// Audits the recording at `path`.
pub fn audit(path: &Path) -> Result<AuditReport, AuditError> {
    let recording = bauxite_telemetry::read(path)?;
    let run_topic = topic("demo", "run");
    let run = recording.on(&run_topic).next().ok_or_else(|| AuditError::NoRun {
        path: path.to_path_buf(),
        topic: run_topic.clone(),
        messages: recording.messages.len(),
        damage: recording.damage.as_ref().map_or(String::new(), |d| format!(" ({d})")),
    })?;
    let start_ns = run.time_ns;
    let info: RunInfo = decode(path, run)?;
    let data = phase_data(path, &recording, &info, start_ns)?;
    let summary = summarize(std::slice::from_ref(&data), info.protected);
    let last_ns = recording.messages.iter().map(|m| m.time_ns).max().unwrap_or(start_ns);
    let covered_s = last_ns.saturating_sub(start_ns) as f64 / 1e9;

    let mut checks = Vec::new();
    let mut check = |name: &str, measured: f64, limit: f64, unit| {
        checks.push(Check { name: name.into(), measured, limit, unit, pass: measured <= limit })
    };
    // Nothing measured is no evidence: an empty window fails every latency check.
    let figure = |x: f64, n: usize| if n > 0 { x } else { f64::INFINITY };
    let received = summary.critical_received;
    // On an emulated link the link's own floor is no fault of the shaper's: the
    // targets hold the excess over it.
    let (what, mean, p99) = match &summary.link {
        Some(l) => ("critical excess over the link's floor", l.critical_excess_ms.mean, l.critical_excess_ms.p99),
        None => ("critical latency", summary.critical_latency_ms.mean, summary.critical_latency_ms.p99),
    };
    check(&format!("{what}, mean"), figure(mean, received), info.target_critical_latency_mean_ms, "ms");
    check(&format!("{what}, p99"), figure(p99, received), info.target_critical_latency_p99_ms, "ms");
    let update = figure(summary.update_delay_ms.mean, summary.updates);
    check("correction update delay, mean", update, info.target_update_delay_mean_ms, "ms");
    let loss = if summary.critical_messages > 0 { summary.critical_loss_pct } else { f64::INFINITY };
    check("critical loss", loss, info.target_critical_loss_pct, "%");
    match &recording.damage {
        None => {}
        Some(Damage::Truncated(_)) => {
            check(
                "recording complete (seconds missing)",
                (info.duration_ns as f64 / 1e9 - covered_s).max(0.0),
                0.0,
                "s",
            );
            checks.last_mut().expect("just pushed").pass = false;
        }
        Some(Damage::Corrupt(_)) => {
            check("recording intact (CRCs, no repeats, matches its summary)", 1.0, 0.0, "errors")
        }
    }
    let pass = checks.iter().all(|c| c.pass);
    Ok(AuditReport {
        file: path.to_path_buf(),
        trial: info.trial,
        phase: info.phase,
        protected: info.protected,
        messages: recording.messages.len(),
        covered_s,
        damage: recording.damage.as_ref().map(Damage::to_string),
        summary,
        checks,
        pass,
    })
}

/// One message as `T`, read in place (no copy of the JSON tree per message).
fn decode<T: DeserializeOwned>(path: &Path, m: &Message) -> Result<T, AuditError> {
    T::deserialize(&m.value).map_err(|e| AuditError::Malformed {
        path: path.to_path_buf(),
        topic: m.topic.clone(),
        time_ns: m.time_ns,
        message: e.to_string(),
    })
}

/// The measurement, rebuilt from the recording in file (time) order.
fn phase_data(path: &Path, recording: &Recording, info: &RunInfo, start_ns: u64) -> Result<PhaseData, AuditError> {
    let mut data = PhaseData::new(start_ns, info);
    let critical: Vec<u16> = info.critical_streams.iter().map(|s| s.port).collect();
    let (marks, updates, frames, state) =
        (topic("demo", "phase"), topic("control", "update_delay"), topic("video", "frames"), topic("shaper", "state"));
    let usage = topic("link", "usage");
    let lane_topic = |m: &Message, what: &str| m.topic.starts_with("/bauxite/lanes/") && m.topic.ends_with(what);
    for m in &recording.messages {
        let t = m.time_ns;
        if lane_topic(m, "/latency") {
            let sample: LatencySample = decode(path, m)?;
            if critical.contains(&sample.stream) {
                data.arrived(sample.sent_ns, t, sample.floor_ns.zip(sample.head_of_line_ns));
            }
            data.message(sample.stream, t);
        } else if lane_topic(m, "/lost") {
            if critical.contains(&decode::<LostMessage>(path, m)?.stream) {
                data.lost(t);
            }
        } else if m.topic == marks {
            let mark: PhaseMark = decode(path, m)?;
            // On an emulated link the windows come from the link's facts, not from marks.
            if info.link.is_none() && t > start_ns && mark.link_rate_bps == Some(info.link_after_bps) {
                data.dropped(t);
            }
        } else if m.topic == updates {
            data.updated(t, decode::<UpdateDelay>(path, m)?.sent_ns);
        } else if m.topic == frames {
            let frame: VideoFrame = decode(path, m)?;
            data.frame(t, frame.bytes, frame.sent_ns);
        } else if m.topic == state {
            let snapshot: ShaperSnapshot = decode(path, m)?;
            data.bulk_dropped_packets = data.bulk_dropped_packets.max(snapshot.droppable_early_drops());
            if snapshot.daemon == DaemonState::Running {
                data.shaper_rate(t, snapshot.link_rate_bps);
            }
        } else if m.topic == usage {
            data.usage(&decode::<LinkUsage>(path, m)?);
        }
    }
    data.finish();
    Ok(data)
}

impl fmt::Display for AuditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.protected { "Bauxite" } else { "standard stack" };
        writeln!(f, "{}: trial {}, phase {} ({what})", self.file.display(), self.trial, self.phase)?;
        writeln!(f, "  {} messages covering {:.1} s", self.messages, self.covered_s)?;
        if let Some(damage) = &self.damage {
            writeln!(f, "  damaged: {damage}; the figures cover what was readable")?;
        }
        let l = &self.summary.critical_latency_ms;
        let (n, received) = (self.summary.critical_messages, self.summary.critical_received);
        let ms = |v: f64| if received > 0 { format!("{v:.3}") } else { "—".into() };
        writeln!(
            f,
            "  {n} critical messages; latency ms: mean {} p50 {} p95 {} p99 {} max {}",
            ms(l.mean),
            ms(l.p50),
            ms(l.p95),
            ms(l.p99),
            ms(l.max)
        )?;
        writeln!(
            f,
            "  video {:.3} Mbit/s, {:.1} fps, {} bulk packets discarded early",
            self.summary.bulk_throughput_mbps, self.summary.video_fps, self.summary.bulk_dropped_packets
        )?;
        if let Some(l) = &self.summary.link {
            let e = &l.critical_excess_ms;
            writeln!(
                f,
                "  critical excess over the link's floor, ms: mean {} p95 {} p99 {} max {}; {:.2} % over 10 ms",
                ms(e.mean),
                ms(e.p95),
                ms(e.p99),
                ms(e.max),
                l.critical_over_10ms_pct
            )?;
            let utilization = l.bulk_utilization.map_or("—".into(), |u| format!("{:.1} %", 100.0 * u));
            writeln!(
                f,
                "  video {utilization} of what the link offered; frame delay p50 {:.1} p95 {:.1} ms; time to protect after each drop {:?} ms",
                l.frame_delay_ms.p50, l.frame_delay_ms.p95, l.time_to_protect_after_drops_ms
            )?;
        }
        for c in &self.checks {
            let mark = if c.pass { "pass" } else { "FAIL" };
            writeln!(f, "  [{mark}] {}: {:.3} {} (limit {} {})", c.name, c.measured, c.unit, c.limit, c.unit)?;
        }
        write!(f, "verdict: {}", if self.pass { "pass" } else { "FAIL" })
    }
}

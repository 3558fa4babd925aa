//! The daemon's published state: a JSON file per interface under `/run/bauxite`.
//!
//! `status` and `down` read it, also after the daemon was killed: it tells which
//! interface settings to restore and shows the last counters. It is keyed by the
//! network namespace too, since `eth0` in one namespace is not `eth0` in another.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Where state files live.
pub const STATE_ROOT: &str = "/run/bauxite";

/// One lane as `status` shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneStatus {
    /// The lane's name.
    pub name: String,
    /// Its HTB class (`ba:10`).
    pub class: String,
    /// Packets the classifier put in this lane (dropped ones included).
    pub packets: u64,
    /// Bytes the classifier put in this lane.
    pub bytes: u64,
    /// Packets discarded early by the classifier.
    pub early_drops: u64,
    /// Packets the XDP gateway program saw for this lane on the ingress interface.
    pub gateway_packets: u64,
    /// Packets the XDP gateway program discarded before they were forwarded.
    pub gateway_drops: u64,
    /// Packets dropped by the lane's full queue.
    pub queue_drops: u64,
    /// Truncated or unparsable packets that landed here by default.
    pub odd_packets: u64,
    /// Departure rate (bit/s).
    pub rate_bps: f64,
    /// Bytes waiting.
    pub backlog_bytes: u64,
    /// Packets waiting.
    pub backlog_packets: u64,
    /// Estimated queue delay (ms).
    pub queue_delay_ms: f64,
    /// Early-drop probability in force.
    pub drop_probability: f64,
}

/// Everything the daemon publishes about one interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShaperStatus {
    /// The interface.
    pub iface: String,
    /// The daemon's process id.
    pub pid: u32,
    /// The profile's name.
    pub profile: String,
    /// `fixed` or `auto`.
    pub rate_mode: String,
    /// The link's rate (bit/s), configured or estimated.
    pub link_rate_bps: u64,
    /// The rate the lanes are shaped to (bit/s): the link rate times the headroom.
    pub rate_bps: u64,
    /// `tcx` or `clsact`.
    pub attach_mode: String,
    /// The ingress interface of the XDP gateway program, if any.
    pub gateway_iface: Option<String>,
    /// Whether the link is congested.
    pub congested: bool,
    /// Times the link entered the congested state.
    pub congestion_episodes: u64,
    /// The interface's `gso_max_size` before `up` capped it, restored by `down`.
    pub original_gso_max_size: u32,
    /// Wall-clock time of this snapshot (ms since the Unix epoch).
    pub updated_unix_ms: u64,
    /// Lanes, most urgent first.
    pub lanes: Vec<LaneStatus>,
}

impl ShaperStatus {
    /// How long ago this snapshot was written.
    pub fn age(&self) -> Duration {
        Duration::from_millis(unix_ms().saturating_sub(self.updated_unix_ms))
    }

    /// Whether the process that wrote it still runs.
    pub fn daemon_alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/cmdline", self.pid)).is_ok_and(|c| c.contains("bauxite"))
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// This process's network namespace inode, which names its state directory.
fn netns_id() -> String {
    std::fs::read_link("/proc/self/ns/net")
        .ok()
        .and_then(|p| p.to_str().map(|s| s.trim_start_matches("net:[").trim_end_matches(']').to_string()))
        .unwrap_or_else(|| "unknown".into())
}

/// The state file of `iface` in this network namespace.
pub fn state_path(iface: &str) -> PathBuf {
    PathBuf::from(STATE_ROOT).join(netns_id()).join(format!("{iface}.json"))
}

/// Writes the snapshot atomically (write, then rename), so readers never see half a file.
pub fn save(status: &ShaperStatus) -> std::io::Result<()> {
    let path = state_path(&status.iface);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(status)?)?;
    std::fs::rename(tmp, path)
}

/// The last snapshot for `iface`, if there is one.
pub fn load(iface: &str) -> std::io::Result<Option<ShaperStatus>> {
    match std::fs::read(state_path(iface)) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", state_path(iface).display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes the state file of `iface` (no error if there is none).
pub fn remove(iface: &str) -> std::io::Result<()> {
    match std::fs::remove_file(state_path(iface)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

//! One snapshot of the kernel shaper on one interface: the one type that the
//! shaper's state file, `bauxite status` (text and `--json`), the demo's in-process
//! reader and the recordings' `/bauxite/shaper/state` channel all carry.
//!
//! It is plain data here, in `core`, because its producer (`shaper`) and its
//! recorder (`telemetry`, through the demo) must not depend on each other; the
//! JSON Schema derive lets a recording carry it for Foxglove.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::BitRate;

/// Whether a daemon shapes the interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DaemonState {
    /// A daemon runs and renews its lease: the lanes are enforced.
    Running,
    /// The daemon's process exists but its lease has expired (stopped with SIGSTOP,
    /// or hung): the classifier has stepped aside and traffic is not protected.
    Stalled,
    /// The daemon is gone and left its tree or state behind (`bauxite down` cleans up).
    Dead,
    /// Nothing of Bauxite's is on the interface.
    #[default]
    Down,
}

impl DaemonState {
    /// The word `status` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Stalled => "stalled",
            Self::Dead => "dead",
            Self::Down => "down",
        }
    }
}

/// One lane as the shaper last saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaneSnapshot {
    /// The lane's name.
    pub name: String,
    /// Its HTB class (`ba:10`).
    pub class: String,
    /// The profile discards this lane early when the link is congested.
    pub droppable: bool,
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

/// The shaper on one interface. With no daemon ([`DaemonState::Down`]) only
/// `iface`, `daemon` and `htb_installed` mean anything; the rest is zero.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShaperSnapshot {
    /// The interface.
    pub iface: String,
    /// Whether a daemon shapes it.
    pub daemon: DaemonState,
    /// Bauxite's own HTB tree (root `ba:` with its marker class) is on the interface.
    pub htb_installed: bool,
    /// The daemon's process id (0: none).
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
    /// Why that mode: the kernel and `--attach` (`auto: kernel 6.8.0 has tcx links (6.6+)`).
    #[serde(default)]
    pub attach_reason: String,
    /// Clsact filters of the classifier on the interface's egress. One while a daemon
    /// runs in clsact mode; after it died, a leftover: it passes every packet untouched
    /// once the lease expired, and `down` (or the next `up`) removes it.
    #[serde(default)]
    pub clsact_filters: u32,
    /// The ingress interface of the XDP gateway program, if any.
    pub gateway_iface: Option<String>,
    /// Whether the link is congested.
    pub congested: bool,
    /// Times the link entered the congested state.
    pub congestion_episodes: u64,
    /// With `rate: auto`: no probe sent for `auto_rate`'s silence (500 ms) has been
    /// answered, so the link-rate estimate is failing and the droppable lanes are
    /// held at `min_rate` (the fallback) until the reflector answers. Absent from
    /// older state files: false.
    #[serde(default)]
    pub link_estimate_failing: bool,
    /// With `rate: auto`: where the probes go (`ADDR:PORT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reflector: Option<String>,
    /// While the estimate is failing: how long the oldest unanswered probe has waited (ms).
    #[serde(default)]
    pub unanswered_ms: u64,
    /// With `rate: auto`: every lane but the first is held in the robot, the link
    /// silent (it may be out), until answers return or one of them fills its queue.
    /// Absent from older state files: false.
    #[serde(default)]
    pub lanes_held: bool,
    /// How long the kernel programs obey the daemon without a renewal (ms).
    pub lease_ms: u64,
    /// How long ago the daemon last renewed its lease, as of the snapshot it
    /// published (ms); more than `lease_ms` means the classifier stepped aside.
    pub lease_renewed_ms_ago: u64,
    /// Wall-clock time of the daemon's snapshot (ms since the Unix epoch).
    pub updated_unix_ms: u64,
    /// Lanes, most urgent first.
    pub lanes: Vec<LaneSnapshot>,
}

impl ShaperSnapshot {
    /// No shaper on `iface` (what the demo's unprotected phase records).
    pub fn down(iface: impl Into<String>) -> Self {
        Self { iface: iface.into(), ..Self::default() }
    }

    /// Whether the lanes are enforced right now.
    pub fn protecting(&self) -> bool {
        self.daemon == DaemonState::Running
    }

    /// Packets discarded early from the lanes the profile drops when congested.
    pub fn droppable_early_drops(&self) -> u64 {
        self.lanes.iter().filter(|l| l.droppable).map(|l| l.early_drops).sum()
    }

    /// The first droppable lane (the one the demo's bulk video travels in), if any.
    pub fn droppable_lane(&self) -> Option<&LaneSnapshot> {
        self.lanes.iter().find(|l| l.droppable)
    }
}

impl ShaperSnapshot {
    /// The line about clsact filters a dead daemon left behind, if any.
    fn fmt_leftover_filters(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.clsact_filters == 0 {
            return Ok(());
        }
        writeln!(
            f,
            "  leftover: {} clsact filter(s) of the classifier still on the egress, stepped aside (lease expired, \
             every packet passes untouched); `bauxite down --iface {}` or the next `bauxite up` removes it",
            self.clsact_filters, self.iface
        )
    }
}

impl std::fmt::Display for ShaperSnapshot {
    /// What `bauxite status` prints: a `tc -s`-like table.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let iface = &self.iface;
        writeln!(f, "bauxite on {iface}: daemon {}", self.daemon.as_str())?;
        if self.pid == 0 {
            if self.htb_installed {
                writeln!(f, "  Bauxite's HTB tree is still installed; `bauxite down --iface {iface}` removes it")?;
            }
            self.fmt_leftover_filters(f)?;
            return Ok(());
        }
        writeln!(
            f,
            "  profile {}  link {} ({})  shaped to {}  attach {}  congested {}  episodes {}",
            self.profile,
            BitRate::from_bps(self.link_rate_bps),
            self.rate_mode,
            BitRate::from_bps(self.rate_bps),
            self.attach_mode,
            if self.congested { "yes" } else { "no" },
            self.congestion_episodes,
        )?;
        if !self.attach_reason.is_empty() {
            writeln!(f, "  attach {}: {}", self.attach_mode, self.attach_reason)?;
        }
        if self.link_estimate_failing {
            writeln!(
                f,
                "  rate auto NOT PROTECTED: no answers from {} for {} ms; the droppable lanes are held at min_rate \
                 until the reflector answers",
                self.reflector.as_deref().unwrap_or("the reflector"),
                self.unanswered_ms
            )?;
        }
        if self.lanes_held {
            writeln!(f, "  lanes held: every lane but the first waits in the robot while the link is silent")?;
        }
        let (lease, ago) = (self.lease_ms, self.lease_renewed_ms_ago);
        match self.daemon {
            DaemonState::Running => writeln!(f, "  pid {}  lease {lease} ms, renewed {ago} ms ago", self.pid)?,
            DaemonState::Stalled => writeln!(
                f,
                "  pid {} is alive but its {lease} ms lease expired {} ms ago (stopped or hung): \
                 the classifier has stepped aside and traffic is NOT protected",
                self.pid,
                ago.saturating_sub(lease)
            )?,
            DaemonState::Dead | DaemonState::Down => writeln!(
                f,
                "  the daemon is gone; the classifier has stepped aside; `bauxite down --iface {iface}` cleans up"
            )?,
        }
        if self.daemon != DaemonState::Running {
            self.fmt_leftover_filters(f)?;
        }
        writeln!(
            f,
            "  {:<10} {:>6} {:>10} {:>12} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7}",
            "lane", "class", "packets", "bytes", "early", "qdrops", "rate", "backlog", "delay_ms", "p_drop"
        )?;
        for l in &self.lanes {
            writeln!(
                f,
                "  {:<10} {:>6} {:>10} {:>12} {:>9} {:>9} {:>10} {:>8}b {:>9.2} {:>7.4}",
                l.name,
                l.class,
                l.packets,
                l.bytes,
                l.early_drops,
                l.queue_drops,
                format!("{:.0}kbit", l.rate_bps / 1e3),
                l.backlog_bytes,
                l.queue_delay_ms,
                l.drop_probability
            )?;
        }
        if let Some(gw) = &self.gateway_iface {
            writeln!(f, "  XDP gateway on {gw}:")?;
            for l in &self.lanes {
                writeln!(f, "  {:<10} {:>10} packets {:>9} dropped early", l.name, l.gateway_packets, l.gateway_drops)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_states_serialize_as_the_words_status_prints() {
        for state in [DaemonState::Running, DaemonState::Stalled, DaemonState::Dead, DaemonState::Down] {
            assert_eq!(serde_json::to_string(&state).unwrap(), format!("\"{}\"", state.as_str()));
        }
    }

    #[test]
    fn status_names_a_leftover_clsact_filter_only_when_no_daemon_runs() {
        let mut s = ShaperSnapshot::down("wwan0");
        s.clsact_filters = 1;
        s.daemon = DaemonState::Dead;
        let text = s.to_string();
        assert!(text.contains("leftover: 1 clsact filter") && text.contains("bauxite down --iface wwan0"), "{text}");
        s.pid = 42;
        s.daemon = DaemonState::Running;
        s.attach_mode = "clsact".into();
        s.attach_reason = "--attach clsact (kernel 6.8.0)".into();
        let text = s.to_string();
        assert!(!text.contains("leftover") && text.contains("attach clsact: --attach clsact (kernel 6.8.0)"), "{text}");
        s.daemon = DaemonState::Dead;
        assert!(s.to_string().contains("leftover: 1 clsact filter"));
    }

    #[test]
    fn only_a_running_daemon_protects_and_only_droppable_lanes_count() {
        let mut s = ShaperSnapshot::down("eth0");
        assert!(!s.protecting());
        s.daemon = DaemonState::Stalled;
        assert!(!s.protecting());
        s.daemon = DaemonState::Running;
        assert!(s.protecting());
        s.lanes = vec![
            LaneSnapshot { name: "critical".into(), early_drops: 7, ..Default::default() },
            LaneSnapshot { name: "bulk".into(), droppable: true, early_drops: 5, ..Default::default() },
        ];
        assert_eq!(s.droppable_early_drops(), 5);
        assert_eq!(s.droppable_lane().map(|l| l.name.as_str()), Some("bulk"));
    }
}

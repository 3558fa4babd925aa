//! The shaper's state as a ROS 2 `diagnostic_msgs/DiagnosticStatus` (the message is
//! `bauxite_core::diagnostics`'s; `bauxite up` publishes it with the bridge's one DDS
//! writer when the profile has a `diagnostics:` key).
//!
//! Made from the snapshot `bauxite status` prints ([`crate::StatusReader`]), read by a
//! thread of its own: a control loop that hangs stops renewing its lease, and that
//! thread still reports it.

use bauxite_core::diagnostics::{DiagnosticStatus, KeyValue, level};
use bauxite_core::{DaemonState, ShaperSnapshot};

/// The status of the shaper in `snapshot`: ERROR when it is not enforcing its lanes
/// (the lease expired or the daemon is gone) or when `rate: auto`'s link estimate is
/// failing; WARN while the link is congested; OK otherwise. Its values are the link
/// and shaped rates, the congested state and each lane's counters.
pub fn shaper_status(snapshot: &ShaperSnapshot) -> DiagnosticStatus {
    let s = snapshot;
    let (level, message) = if s.daemon != DaemonState::Running {
        (level::ERROR, format!("lanes not enforced: daemon {} (lease {} ms)", s.daemon.as_str(), s.lease_ms))
    } else if s.link_estimate_failing {
        (level::ERROR, "link estimate failing: the reflector does not answer the rate probes".to_string())
    } else if s.congested {
        (level::WARN, "congested: discarding droppable lanes early".to_string())
    } else {
        (level::OK, "shaping".to_string())
    };
    let mut values = vec![
        KeyValue::new("profile", &s.profile),
        KeyValue::new("daemon", s.daemon.as_str()),
        KeyValue::new("congested", s.congested),
        KeyValue::new("congestion_episodes", s.congestion_episodes),
        KeyValue::new("rate_mode", &s.rate_mode),
        KeyValue::new("link_rate_bps", s.link_rate_bps),
        KeyValue::new("shaped_rate_bps", s.rate_bps),
        KeyValue::new("lease_renewed_ms_ago", s.lease_renewed_ms_ago),
    ];
    for lane in &s.lanes {
        let n = &lane.name;
        values.extend([
            KeyValue::new(format!("{n}.packets"), lane.packets),
            KeyValue::new(format!("{n}.bytes"), lane.bytes),
            KeyValue::new(format!("{n}.early_drops"), lane.early_drops),
            KeyValue::new(format!("{n}.queue_drops"), lane.queue_drops),
            KeyValue::new(format!("{n}.backlog_packets"), lane.backlog_packets),
            KeyValue::new(format!("{n}.drop_probability"), format!("{:.3}", lane.drop_probability)),
        ]);
    }
    DiagnosticStatus {
        level,
        name: format!("bauxite_shaper: {}", s.iface),
        message,
        hardware_id: s.iface.clone(),
        values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bauxite_core::LaneSnapshot;

    fn running() -> ShaperSnapshot {
        ShaperSnapshot {
            iface: "wwan0".into(),
            daemon: DaemonState::Running,
            profile: "robot".into(),
            lanes: vec![LaneSnapshot { name: "critical".into(), packets: 42, ..Default::default() }],
            ..Default::default()
        }
    }

    #[test]
    fn levels_follow_the_shapers_state() {
        let ok = shaper_status(&running());
        assert_eq!(
            (ok.level, ok.name.as_str(), ok.hardware_id.as_str()),
            (level::OK, "bauxite_shaper: wwan0", "wwan0")
        );
        assert!(ok.values.contains(&KeyValue::new("critical.packets", 42)), "{:?}", ok.values);
        let congested = shaper_status(&ShaperSnapshot { congested: true, ..running() });
        assert_eq!(congested.level, level::WARN);
        assert!(congested.message.starts_with("congested"));
        let silent = shaper_status(&ShaperSnapshot { link_estimate_failing: true, congested: true, ..running() });
        assert_eq!(silent.level, level::ERROR, "a failing estimate outranks congestion");
        assert!(silent.message.contains("link estimate failing"));
        let stalled = shaper_status(&ShaperSnapshot { daemon: DaemonState::Stalled, lease_ms: 1000, ..running() });
        assert_eq!(stalled.level, level::ERROR);
        assert!(
            stalled.message.contains("stalled") && stalled.message.contains("lease 1000 ms"),
            "{}",
            stalled.message
        );
    }
}

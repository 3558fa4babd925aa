//! ROS 2 diagnostics: the `diagnostic_msgs/msg/DiagnosticArray` message that both the
//! shaper (`bauxite up`) and the bridge publish on `/diagnostics`, and the shaper's
//! `diagnostics:` profile key.
//!
//! The message types are that message's CDR layout field for field, so `ros2 topic
//! echo /diagnostics`, `rqt_robot_monitor`, the diagnostic aggregator or a Foxglove
//! panel read them without anything of Bauxite installed. They are plain data here
//! (no I/O); the DDS writer that sends them is the bridge crate's, the one crate with
//! DDS.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::duration_text;

/// `builtin_interfaces/msg/Time`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Time {
    /// Seconds since the UNIX epoch.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

/// `std_msgs/msg/Header`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    /// When.
    pub stamp: Time,
    /// Empty for diagnostics.
    pub frame_id: String,
}

/// `diagnostic_msgs/msg/KeyValue`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyValue {
    /// The name.
    pub key: String,
    /// The value, as text.
    pub value: String,
}

impl KeyValue {
    /// `key` = `value` (formatted with `Display`).
    pub fn new(key: impl Into<String>, value: impl std::fmt::Display) -> Self {
        Self { key: key.into(), value: value.to_string() }
    }
}

/// `diagnostic_msgs/msg/DiagnosticStatus` levels.
pub mod level {
    /// All is well.
    pub const OK: u8 = 0;
    /// Working, but something needs attention.
    pub const WARN: u8 = 1;
    /// Not doing its job.
    pub const ERROR: u8 = 2;
}

/// `diagnostic_msgs/msg/DiagnosticStatus`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticStatus {
    /// [`level`]: 0 OK, 1 WARN, 2 ERROR (3 STALE is the aggregator's).
    pub level: u8,
    /// The component.
    pub name: String,
    /// One line on its state.
    pub message: String,
    /// Which instance (a bridge's id, a shaper's interface).
    pub hardware_id: String,
    /// The figures behind it.
    pub values: Vec<KeyValue>,
}

/// `diagnostic_msgs/msg/DiagnosticArray`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticArray {
    /// When.
    pub header: Header,
    /// One status per component.
    pub status: Vec<DiagnosticStatus>,
}

impl DiagnosticArray {
    /// The array of `status` stamped `unix_ns` (nanoseconds since the UNIX epoch).
    pub fn at(unix_ns: u64, status: Vec<DiagnosticStatus>) -> Self {
        let stamp = Time {
            sec: (unix_ns / 1_000_000_000).min(i32::MAX as u64) as i32,
            nanosec: (unix_ns % 1_000_000_000) as u32,
        };
        Self { header: Header { stamp, frame_id: String::new() }, status }
    }
}

/// The DDS type name ROS 2 gives `diagnostic_msgs/msg/DiagnosticArray`.
pub const DIAGNOSTIC_ARRAY_TYPE: &str = "diagnostic_msgs::msg::dds_::DiagnosticArray_";

/// Fails unless `name` is a ROS 2 topic name: non-empty, no empty segment, no trailing `/`
/// (a leading `/` is optional), and only letters, digits, `_`, `/`, `~`, `-` and `.` (ROS 2
/// names allow the first four; DDS names the rest). A name also becomes a metric label and a
/// recording's channel, where a quote or a brace would break the format.
pub fn check_topic_name(name: &str) -> Result<(), String> {
    let body = name.strip_prefix('/').unwrap_or(name);
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_/~-.".contains(c);
    if body.is_empty() || body.ends_with('/') || body.contains("//") || !name.chars().all(allowed) {
        return Err(format!("`{name}` is not a topic name (like `/scan` or `/robot/scan`)"));
    }
    Ok(())
}

/// The shaper's `diagnostics:` profile key: `bauxite up` publishes its state as a
/// `DiagnosticArray` on `topic` every `period`, in ROS 2 domain `domain_id`, over
/// `interfaces` only (loopback unless configured: nothing listens beyond it unless
/// asked to; the robot's ROS 2 graph is local). Off when the key is absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DiagnosticsSettings {
    /// The ROS 2 topic.
    pub topic: String,
    /// Between two messages.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "10ms to 3600s"))]
    pub period: Duration,
    /// The ROS 2 domain (`ROS_DOMAIN_ID` of the nodes that listen), 0 to 232.
    #[schemars(range(min = 0, max = 232))]
    pub domain_id: u16,
    /// The local addresses DDS may use.
    pub interfaces: Vec<IpAddr>,
}

impl Default for DiagnosticsSettings {
    fn default() -> Self {
        Self {
            topic: "/diagnostics".into(),
            period: Duration::from_secs(1),
            domain_id: 0,
            interfaces: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_splits_seconds_and_nanoseconds() {
        let a = DiagnosticArray::at(1_700_000_000_123_456_789, vec![]);
        assert_eq!(a.header.stamp, Time { sec: 1_700_000_000, nanosec: 123_456_789 });
    }

    #[test]
    fn topic_names() {
        for good in ["/diagnostics", "diagnostics", "/robot/diagnostics"] {
            assert!(check_topic_name(good).is_ok(), "{good}");
        }
        for bad in ["", "/", "/a/", "/a//b", "/a b", "/a\"b", "/a{x}", "/a\\b", "/a\nb", "/ä"] {
            assert!(check_topic_name(bad).is_err(), "{bad}");
        }
    }
}

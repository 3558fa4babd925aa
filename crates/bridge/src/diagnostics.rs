//! The bridge's report of itself as a ROS 2 `diagnostic_msgs/msg/DiagnosticArray`.
//!
//! The types below are that message's CDR layout field for field, so `ros2 topic echo
//! /diagnostics`, `rqt_runtime_monitor` or a Foxglove panel show the bridge's mode without
//! anything of Bauxite installed. The supervisor publishes one every `diagnostics.period` and at
//! every mode change; EMERGENCY is level ERROR, DEGRADED is WARN.

use rustdds::no_key::DataWriter;
use rustdds::{CDRSerializerAdapter, DomainParticipant, TopicKind};
use serde::Serialize;

use crate::config::{DiagnosticsConfig, ros2_topic};
use crate::dds::DdsError;
use crate::supervisor::Mode;

/// `builtin_interfaces/msg/Time`.
#[derive(Debug, Clone, Serialize)]
pub struct Time {
    /// Seconds since the UNIX epoch.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

/// `std_msgs/msg/Header`.
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    /// When.
    pub stamp: Time,
    /// Empty for diagnostics.
    pub frame_id: String,
}

/// `diagnostic_msgs/msg/KeyValue`.
#[derive(Debug, Clone, Serialize)]
pub struct KeyValue {
    /// The name.
    pub key: String,
    /// The value, as text.
    pub value: String,
}

/// `diagnostic_msgs/msg/DiagnosticStatus`.
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticStatus {
    /// 0 OK, 1 WARN, 2 ERROR, 3 STALE.
    pub level: u8,
    /// The component.
    pub name: String,
    /// One line on its state.
    pub message: String,
    /// The bridge's id.
    pub hardware_id: String,
    /// The figures behind it.
    pub values: Vec<KeyValue>,
}

/// `diagnostic_msgs/msg/DiagnosticArray`.
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticArray {
    /// When.
    pub header: Header,
    /// One status per component.
    pub status: Vec<DiagnosticStatus>,
}

/// The DDS type name ROS 2 gives `diagnostic_msgs/msg/DiagnosticArray`.
pub const DIAGNOSTIC_ARRAY_TYPE: &str = "diagnostic_msgs::msg::dds_::DiagnosticArray_";

/// The diagnostic level of a mode.
pub fn level(mode: Mode) -> u8 {
    match mode {
        Mode::Normal => 0,
        Mode::Degraded => 1,
        Mode::Emergency => 2,
    }
}

/// Publishes [`DiagnosticArray`]s. RELIABLE (ROS 2's default, so default subscribers match)
/// but never blocking: a report that finds the window full is dropped, not waited for.
pub struct DiagnosticsPublisher {
    writer: DataWriter<DiagnosticArray, CDRSerializerAdapter<DiagnosticArray>>,
}

impl DiagnosticsPublisher {
    /// Creates the writer.
    pub fn start(participant: &DomainParticipant, config: &DiagnosticsConfig) -> Result<Self, DdsError> {
        let qos = rustdds::QosPolicyBuilder::new()
            .reliable(rustdds::Duration::ZERO)
            .history(rustdds::policy::History::KeepLast { depth: 10 })
            .build();
        let topic = participant
            .create_topic(ros2_topic(&config.topic), DIAGNOSTIC_ARRAY_TYPE.into(), &qos, TopicKind::NoKey)
            .map_err(|e| DdsError::new(format!("topic {}", config.topic), e))?;
        let writer = participant
            .create_publisher(&qos)
            .and_then(|p| p.create_datawriter_no_key::<DiagnosticArray, CDRSerializerAdapter<_>>(&topic, None))
            .map_err(|e| DdsError::new(format!("writer for {}", config.topic), e))?;
        Ok(Self { writer })
    }

    /// Publishes one status; `unix_ns` stamps it.
    pub fn publish(&self, unix_ns: u64, status: DiagnosticStatus) {
        let stamp = Time {
            sec: (unix_ns / 1_000_000_000).min(i32::MAX as u64) as i32,
            nanosec: (unix_ns % 1_000_000_000) as u32,
        };
        let msg = DiagnosticArray { header: Header { stamp, frame_id: String::new() }, status: vec![status] };
        if let Err(e) = self.writer.write(msg, None) {
            tracing::debug!("diagnostics not published: {e}");
        }
    }
}

//! The bridge's report of itself, and the one DDS writer of ROS 2 diagnostics.
//!
//! The message, `diagnostic_msgs/msg/DiagnosticArray`, is `bauxite_core::diagnostics`'s (the
//! shaper publishes it too). The supervisor publishes one every `diagnostics.period` and at
//! every mode change; EMERGENCY is level ERROR, DEGRADED is WARN. [`DiagnosticsPublisher`]
//! is also what `bauxite up` publishes the shaper's state with.

use bauxite_core::diagnostics::{DIAGNOSTIC_ARRAY_TYPE, DiagnosticArray, DiagnosticStatus, level as lvl};
use rustdds::no_key::DataWriter;
use rustdds::{CDRSerializerAdapter, DomainParticipant};

use crate::dds::{DdsError, ros2_no_key_topic};
use crate::supervisor::Mode;

/// The diagnostic level of a mode.
pub fn level(mode: Mode) -> u8 {
    match mode {
        Mode::Normal => lvl::OK,
        Mode::Degraded => lvl::WARN,
        Mode::Emergency => lvl::ERROR,
    }
}

/// Publishes [`DiagnosticArray`]s. RELIABLE (ROS 2's default, so default subscribers match)
/// but never blocking: a report that finds the window full is dropped, not waited for.
pub struct DiagnosticsPublisher {
    writer: DataWriter<DiagnosticArray, CDRSerializerAdapter<DiagnosticArray>>,
}

impl DiagnosticsPublisher {
    /// Creates the writer of `topic` (a ROS 2 name: `/diagnostics`).
    pub fn start(participant: &DomainParticipant, topic: &str) -> Result<Self, DdsError> {
        let qos = rustdds::QosPolicyBuilder::new()
            .reliable(rustdds::Duration::ZERO)
            .history(rustdds::policy::History::KeepLast { depth: 10 })
            .build();
        let dds_topic = ros2_no_key_topic(participant, topic, DIAGNOSTIC_ARRAY_TYPE, &qos)?;
        let writer = participant
            .create_publisher(&qos)
            .and_then(|p| p.create_datawriter_no_key::<DiagnosticArray, CDRSerializerAdapter<_>>(&dds_topic, None))
            .map_err(|e| DdsError::new(format!("writer for {topic}"), e))?;
        Ok(Self { writer })
    }

    /// Publishes one status; `unix_ns` stamps it.
    pub fn publish(&self, unix_ns: u64, status: DiagnosticStatus) {
        if let Err(e) = self.writer.write(DiagnosticArray::at(unix_ns, vec![status]), None) {
            tracing::debug!("diagnostics not published: {e}");
        }
    }
}

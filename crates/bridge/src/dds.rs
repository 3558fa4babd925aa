//! The DDS participant and the QoS of the bridge's readers and writers, in one place.

use std::time::Duration;

use rustdds::policy::{Durability, History, Reliability as DdsReliability, ResourceLimits};
use rustdds::{DomainParticipant, DomainParticipantBuilder, QosPolicies, QosPolicyBuilder};

use crate::config::{DdsConfig, Reliability};

/// Why a DDS entity could not be created.
#[derive(Debug, thiserror::Error)]
#[error("DDS: cannot create {what}: {reason}")]
pub struct DdsError {
    /// The entity (`participant`, `reader for rt/scan`, ...).
    pub what: String,
    /// RustDDS's explanation.
    pub reason: String,
}

impl DdsError {
    /// An error creating `what`.
    pub fn new(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self { what: what.into(), reason: reason.to_string() }
    }
}

/// A participant in the configured domain, on the configured interfaces only.
pub fn participant(config: &DdsConfig) -> Result<DomainParticipant, DdsError> {
    builder(config).build().map_err(|e| DdsError::new("participant", e))
}

fn builder(config: &DdsConfig) -> DomainParticipantBuilder {
    let builder = DomainParticipantBuilder::new(config.domain_id);
    match &config.interfaces {
        Some(addrs) => builder.with_only_networks(addrs.iter().copied()),
        None => builder,
    }
}

/// The bridge's three participants. RustDDS runs one event loop thread per participant, which
/// does all of that participant's receiving and sending; giving the input, the critical
/// writers and everything else (noncritical writers, probes, diagnostics) a participant each
/// keeps a flood on one side from delaying the critical path in that loop, and spreads the work
/// over cores.
pub struct Participants {
    /// Reads the input topics.
    pub input: DomainParticipant,
    /// Writes the critical outputs.
    pub critical: DomainParticipant,
    /// Writes the noncritical outputs, probes and diagnostics; reads probe answers.
    pub noncritical: DomainParticipant,
}

impl Participants {
    /// Three participants in the configured domain. Their RTPS participant ids are logged:
    /// they fix each one's ports (user traffic arrives at 7411 + 250 × domain + 2 × id), which
    /// is how the kernel's per-socket counters are told apart (`bridge bench`).
    pub fn new(config: &DdsConfig) -> Result<Self, DdsError> {
        let p = Self { input: participant(config)?, critical: participant(config)?, noncritical: participant(config)? };
        tracing::info!(
            "DDS participants (RTPS ids): input {}, critical {}, noncritical {}",
            p.input.participant_id(),
            p.critical.participant_id(),
            p.noncritical.participant_id()
        );
        Ok(p)
    }
}

fn base(depth: usize) -> QosPolicyBuilder {
    QosPolicyBuilder::new()
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: depth.min(i32::MAX as usize) as i32 })
}

/// A reader asking for `reliability`.
pub fn reader_qos(reliability: Reliability, depth: usize) -> QosPolicies {
    match reliability {
        Reliability::Reliable => base(depth).reliable(rustdds::Duration::ZERO).build(),
        Reliability::BestEffort => base(depth).best_effort().build(),
    }
}

/// The critical writer: RELIABLE, with `window` unacknowledged samples before a write blocks
/// (RustDDS takes that from RESOURCE_LIMITS.max_samples), blocking at most `blocking` each time.
pub fn critical_writer_qos(depth: usize, window: usize, blocking: Duration) -> QosPolicies {
    let window = window.min(i32::MAX as usize) as i32;
    base(depth)
        .reliability(DdsReliability::Reliable { max_blocking_time: rustdds::Duration::from_std(blocking) })
        .resource_limits(ResourceLimits { max_samples: window, max_instances: 1, max_samples_per_instance: window })
        .build()
}

/// A BEST_EFFORT writer: never waits for anyone.
pub fn best_effort_qos(depth: usize) -> QosPolicies {
    base(depth).best_effort().build()
}

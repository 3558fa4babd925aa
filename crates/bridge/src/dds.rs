//! The DDS participant and the QoS of the bridge's readers and writers, in one place.

use std::time::Duration;

use rustdds::no_key::{DataReader, DataWriter};
use rustdds::policy::{Durability, History, Reliability as DdsReliability, ResourceLimits};
use rustdds::{
    CDRDeserializerAdapter, CDRSerializerAdapter, DomainParticipant, DomainParticipantBuilder, QosPolicies,
    QosPolicyBuilder, Topic, TopicKind,
};
use serde::{Deserialize, Serialize};

use crate::config::{DdsConfig, Reliability, ros2_topic};

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

/// The receive buffer of the input participant's sockets, bytes (the kernel doubles it for
/// its bookkeeping). RustDDS asks for 8 MiB, which Linux clamps to `net.core.rmem_max`: at
/// 500 MB/s of 64 KB samples the input's socket filled while its event loop waited for a
/// core, the kernel dropped whole datagrams, and every later sample waited on their
/// reliable repair (`bridge bench`'s socket drops; README "Adaptive bridge").
pub const INPUT_RECEIVE_BUFFER: usize = 32 << 20;

/// A participant that receives large samples at high rates: as [`participant`], with
/// [`INPUT_RECEIVE_BUFFER`] past the kernel's ceiling where the process may (`SO_RCVBUFFORCE`,
/// `CAP_NET_ADMIN`); without the capability it warns and keeps what `net.core.rmem_max`
/// allows. The bridge's input uses it, and so do `bridge bench`'s subscribers, so that the
/// bridged and the direct path are measured with the receive buffer the input has. `what`
/// names the participant in errors and logs.
pub fn receiving_participant(config: &DdsConfig, what: &str) -> Result<DomainParticipant, DdsError> {
    let p = builder(config)
        .socket_receive_buffer_size(INPUT_RECEIVE_BUFFER)
        .socket_receive_buffer_force(true)
        .build()
        .map_err(|e| DdsError::new(what, e))?;
    let got = receive_buffers(config.domain_id, p.participant_id());
    match got.iter().min() {
        // Linux reports twice what was set.
        Some(&least) if least < 2 * INPUT_RECEIVE_BUFFER => tracing::warn!(
            "the {what}'s UDP receive buffer is {least} bytes, not {}: SO_RCVBUFFORCE needs CAP_NET_ADMIN \
             (root), and without it Linux caps SO_RCVBUF at net.core.rmem_max; at high rates of \
             large samples it may lose datagrams and wait on their reliable repair",
            2 * INPUT_RECEIVE_BUFFER
        ),
        Some(least) => tracing::info!("the {what}'s UDP receive buffer is {least} bytes"),
        None => tracing::warn!("the {what}'s UDP sockets were not found, so their receive buffer is unknown"),
    }
    Ok(p)
}

/// The receive buffers (`SO_RCVBUF` as read back) of this process's unicast sockets of the
/// participant with RTPS id `id` in `domain`: discovery at 7410 + 250 × domain + 2 × id,
/// user traffic one port above.
pub(crate) fn receive_buffers(domain: u16, id: u16) -> Vec<usize> {
    let discovery = 7410 + 250 * u32::from(domain) + 2 * u32::from(id);
    match bauxite_sys::own_udp_receive_buffers() {
        Ok(sockets) => sockets
            .into_iter()
            .filter(|(addr, _)| [discovery, discovery + 1].contains(&u32::from(addr.port())))
            .map(|(_, size)| size)
            .collect(),
        Err(e) => {
            tracing::warn!("reading this process's UDP sockets: {e}");
            Vec::new()
        }
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
        let p = Self {
            input: receiving_participant(config, "input participant")?,
            critical: participant(config)?,
            noncritical: participant(config)?,
        };
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

/// A BEST_EFFORT writer of a small CDR struct of the bridge's own (probes, heartbeats).
pub type TypedWriter<T> = DataWriter<T, CDRSerializerAdapter<T>>;
/// Its reader.
pub type TypedReader<T> = DataReader<T, CDRDeserializerAdapter<T>>;

/// The keyless ROS 2 topic `topic` (`rt/` added) of type `type_name`.
pub fn ros2_no_key_topic(
    participant: &DomainParticipant,
    topic: &str,
    type_name: &str,
    qos: &QosPolicies,
) -> Result<Topic, DdsError> {
    participant
        .create_topic(ros2_topic(topic), type_name.to_string(), qos, TopicKind::NoKey)
        .map_err(|e| DdsError::new(format!("topic {topic}"), e))
}

/// A BEST_EFFORT writer of `T` on the ROS 2 topic `topic` (`rt/` added): a lost message of
/// the bridge's own (a probe, a heartbeat) must show as lost, not be repaired late.
pub fn typed_writer<T: Serialize>(
    participant: &DomainParticipant,
    topic: &str,
    type_name: &str,
) -> Result<TypedWriter<T>, DdsError> {
    let qos = best_effort_qos(16);
    let t = ros2_no_key_topic(participant, topic, type_name, &qos)?;
    participant
        .create_publisher(&qos)
        .and_then(|p| p.create_datawriter_no_key::<T, CDRSerializerAdapter<T>>(&t, None))
        .map_err(|e| DdsError::new(format!("writer for {topic}"), e))
}

/// A BEST_EFFORT reader of `T` on the ROS 2 topic `topic` (see [`typed_writer`]).
pub fn typed_reader<T: for<'de> Deserialize<'de> + 'static>(
    participant: &DomainParticipant,
    topic: &str,
    type_name: &str,
) -> Result<TypedReader<T>, DdsError> {
    let qos = best_effort_qos(64);
    let t = ros2_no_key_topic(participant, topic, type_name, &qos)?;
    participant
        .create_subscriber(&qos)
        .and_then(|s| s.create_datareader_no_key::<T, CDRDeserializerAdapter<T>>(&t, None))
        .map_err(|e| DdsError::new(format!("reader for {topic}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the input participant gets the large receive buffer (as root, past
    /// `net.core.rmem_max`); the others keep RustDDS's request, clamped by the kernel.
    #[test]
    fn only_the_input_participant_gets_the_large_receive_buffer() {
        if !bauxite_sys::root_or_skip("only_the_input_participant_gets_the_large_receive_buffer") {
            return;
        }
        let config = DdsConfig { domain_id: 143, interfaces: Some(vec!["127.0.0.1".parse().expect("ip")]) };
        let p = Participants::new(&config).expect("participants");
        let input = receive_buffers(143, p.input.participant_id());
        let critical = receive_buffers(143, p.critical.participant_id());
        assert_eq!(input.len(), 2, "the input's discovery and user sockets: {input:?}");
        assert!(input.iter().all(|&b| b >= 2 * INPUT_RECEIVE_BUFFER), "{input:?}");
        assert_eq!(critical.len(), 2, "{critical:?}");
        assert!(critical.iter().all(|&b| b < 2 * INPUT_RECEIVE_BUFFER), "{critical:?}");
    }
}

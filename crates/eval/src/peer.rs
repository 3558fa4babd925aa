//! The RustDDS peer (`bauxite eval peer pub|sub`): the evaluation's third implementation,
//! speaking the same protocol as the Python peers in `peers/` (see [`crate::implementation`]).
//!
//! It publishes or reads ROS 2 `sensor_msgs/msg/LaserScan` on the wire exactly as a ROS 2 node
//! would (`rt/scan`, type `sensor_msgs::msg::dds_::LaserScan_`, CDR little-endian), encoded
//! here by hand: the peer needs two header fields and a payload of the right size, not a code
//! generator. Samples go through the bridge's raw writer and reader ([`bauxite_bridge::raw`]),
//! as the bridge's benchmark does. Every event is one JSON line on stdout, flushed at once, so
//! the harness sees it even if the peer is killed next.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bauxite_bridge::config::DdsConfig;
use bauxite_bridge::dds::DdsError;
use bauxite_bridge::raw::{self, RawAdapter, RawReader, RawSample, RawWriter};
use futures::StreamExt;
use rustdds::bytes::Bytes;
use rustdds::policy::{Durability, History, Reliability, ResourceLimits};
use rustdds::{DomainParticipant, QosPolicies, QosPolicyBuilder, RepresentationIdentifier, TopicKind};
use serde::Serialize;

use crate::EvalError;

/// The ROS 2 DDS type of a LaserScan.
pub const LASER_SCAN_TYPE: &str = "sensor_msgs::msg::dds_::LaserScan_";
/// How long a RELIABLE write may block on a full history: the DDS specification's default
/// `max_blocking_time` (what Cyclone DDS and Fast DDS use when a node sets none).
pub const MAX_BLOCKING: Duration = Duration::from_millis(100);

/// The writer's history, as the protocol's `--history` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryKind {
    /// KEEP_ALL: every sample waits for every RELIABLE reader (up to `max_samples`).
    #[value(name = "keep_all")]
    KeepAll,
    /// KEEP_LAST `depth`: the oldest sample is replaced.
    #[value(name = "keep_last")]
    KeepLast,
}

/// `pub`'s options (the protocol's flags).
#[derive(Debug, Clone)]
pub struct PubOptions {
    /// DDS topic name (`rt/scan`).
    pub topic: String,
    /// Timer rate.
    pub hz: f64,
    /// How long to publish.
    pub duration: Duration,
    /// LaserScan ranges (and intensities) per sample.
    pub ranges: usize,
    /// BEST_EFFORT instead of RELIABLE.
    pub best_effort: bool,
    /// History kind.
    pub history: HistoryKind,
    /// KEEP_LAST depth.
    pub depth: usize,
    /// RESOURCE_LIMITS.max_samples (RustDDS's window of unacknowledged samples).
    pub max_samples: Option<usize>,
    /// DDS domain.
    pub domain: u16,
    /// The address of the one interface to use (found from the multicast route when absent).
    pub interface: Option<IpAddr>,
}

/// `sub`'s options.
#[derive(Debug, Clone)]
pub struct SubOptions {
    /// DDS topic name (`rt/scan/critical`).
    pub topic: String,
    /// BEST_EFFORT instead of RELIABLE.
    pub best_effort: bool,
    /// KEEP_LAST depth.
    pub depth: usize,
    /// Stop after this long (until a signal otherwise).
    pub duration: Option<Duration>,
    /// DDS domain.
    pub domain: u16,
    /// The address of the one interface to use (found from the multicast route when absent).
    pub interface: Option<IpAddr>,
}

/// One line of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum PeerEvent {
    /// Entities exist.
    Ready,
    /// One publish attempt.
    Pub {
        /// Sequence number (also the header's frame_id).
        seq: u64,
        /// CLOCK_REALTIME at the attempt (the header stamp).
        t_ns: u64,
        /// Whether the write succeeded.
        ok: bool,
        /// How long the write call took.
        call_ns: u64,
    },
    /// One sample received.
    Recv {
        /// Sequence number from the header's frame_id.
        seq: u64,
        /// The header stamp.
        stamp_ns: u64,
        /// CLOCK_REALTIME at reception.
        recv_ns: u64,
    },
}

fn realtime_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn emit(event: &PeerEvent) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (the harness went away) leaves nothing to report to.
    let _ = serde_json::to_writer(&mut out, event);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// The address of the interface multicast leaves by (the namespace's one interface), so
/// discovery uses it alone; `None` where there is no multicast route (then all interfaces).
fn multicast_interface() -> Option<IpAddr> {
    let probe = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    probe.connect((Ipv4Addr::new(239, 255, 0, 1), 7400)).ok()?;
    let addr = probe.local_addr().ok()?.ip();
    (!addr.is_loopback() && !addr.is_unspecified()).then_some(addr)
}

fn participant(domain: u16, interface: Option<IpAddr>) -> Result<DomainParticipant, EvalError> {
    let config = DdsConfig { domain_id: domain, interfaces: interface.or_else(multicast_interface).map(|a| vec![a]) };
    Ok(bauxite_bridge::dds::participant(&config)?)
}

fn topic(p: &DomainParticipant, name: &str, qos: &QosPolicies) -> Result<rustdds::Topic, EvalError> {
    p.create_topic(name.to_string(), LASER_SCAN_TYPE.to_string(), qos, TopicKind::NoKey)
        .map_err(|e| DdsError::new(format!("topic {name}"), e).into())
}

/// The writer's QoS from the protocol's flags.
pub fn writer_qos(options: &PubOptions) -> QosPolicies {
    let depth = options.depth.clamp(1, i32::MAX as usize) as i32;
    let history = match options.history {
        HistoryKind::KeepAll => History::KeepAll,
        HistoryKind::KeepLast => History::KeepLast { depth },
    };
    let reliability = if options.best_effort {
        Reliability::BestEffort
    } else {
        Reliability::Reliable { max_blocking_time: rustdds::Duration::from_std(MAX_BLOCKING) }
    };
    let mut builder =
        QosPolicyBuilder::new().durability(Durability::Volatile).history(history).reliability(reliability);
    if let Some(max) = options.max_samples {
        let max = max.clamp(1, i32::MAX as usize) as i32;
        builder = builder.resource_limits(ResourceLimits {
            max_samples: max,
            max_instances: 1,
            max_samples_per_instance: max,
        });
    }
    builder.build()
}

fn reader_qos(options: &SubOptions) -> QosPolicies {
    let reliability = if options.best_effort {
        Reliability::BestEffort
    } else {
        Reliability::Reliable { max_blocking_time: rustdds::Duration::ZERO }
    };
    QosPolicyBuilder::new()
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: options.depth.clamp(1, i32::MAX as usize) as i32 })
        .reliability(reliability)
        .build()
}

/// Publishes from a fixed-period timer until `duration` or `stop`. A write that blocks delays
/// the next tick, and ticks missed meanwhile are skipped, as a ROS 2 wall timer does.
pub fn publish(options: &PubOptions, stop: &AtomicBool) -> Result<(), EvalError> {
    let p = participant(options.domain, options.interface)?;
    let qos = writer_qos(options);
    let t = topic(&p, &options.topic, &qos)?;
    let writer: RawWriter = p
        .create_publisher(&qos)
        .and_then(|pb| pb.create_datawriter_no_key::<RawSample, RawAdapter>(&t, Some(qos)))
        .map_err(|e| DdsError::new(format!("writer for {}", options.topic), e))?;
    emit(&PeerEvent::Ready);
    let period = Duration::from_secs_f64(1.0 / options.hz);
    let start = Instant::now();
    let mut tick = 0u64;
    let mut seq = 0u64;
    while start.elapsed() < options.duration && !stop.load(Ordering::Relaxed) {
        let due = start + period.mul_f64(tick as f64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let t_ns = realtime_ns();
        let payload = Bytes::from(laser_scan(seq, t_ns, options.ranges, period.as_secs_f32()));
        let call = Instant::now();
        let ok =
            raw::write(&writer, RawSample { representation: RepresentationIdentifier::CDR_LE, payload }, None).is_ok();
        emit(&PeerEvent::Pub { seq, t_ns, ok, call_ns: call.elapsed().as_nanos() as u64 });
        seq += 1;
        // The next tick still ahead (a blocked write skips the ticks it overran).
        tick = (start.elapsed().as_nanos() / period.as_nanos()) as u64 + 1;
    }
    Ok(())
}

/// Reads until `duration` or `stop`, printing a line per sample.
pub fn subscribe(options: &SubOptions, stop: Arc<AtomicBool>) -> Result<(), EvalError> {
    let p = participant(options.domain, options.interface)?;
    let qos = reader_qos(options);
    let t = topic(&p, &options.topic, &qos)?;
    let reader: RawReader = p
        .create_subscriber(&qos)
        .and_then(|s| s.create_datareader_no_key::<RawSample, RawAdapter>(&t, Some(qos)))
        .map_err(|e| DdsError::new(format!("reader for {}", options.topic), e))?;
    let (tx, mut rx) = futures::channel::oneshot::channel::<()>();
    let deadline = options.duration.map(|d| Instant::now() + d);
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = tx.send(());
    });
    emit(&PeerEvent::Ready);
    let mut stream = reader.async_sample_stream();
    futures::executor::block_on(async {
        loop {
            let sample = futures::select! {
                s = stream.select_next_some() => s,
                _ = rx => return,
            };
            let recv_ns = realtime_ns();
            if let Ok(s) = sample
                && let Some((stamp_ns, seq)) = parse_header(&s.value().payload)
            {
                emit(&PeerEvent::Recv { seq, stamp_ns, recv_ns });
            }
        }
    });
    Ok(())
}

/// A LaserScan in CDR little-endian (after the encapsulation header): header (stamp,
/// frame_id = `seq`), seven float32 fields, `ranges` ranges and as many intensities.
pub fn laser_scan(seq: u64, stamp_ns: u64, ranges: usize, scan_time: f32) -> Vec<u8> {
    let frame_id = seq.to_string();
    let mut b = Vec::with_capacity(64 + frame_id.len() + 8 * ranges);
    b.extend_from_slice(&((stamp_ns / 1_000_000_000) as i32).to_le_bytes());
    b.extend_from_slice(&((stamp_ns % 1_000_000_000) as u32).to_le_bytes());
    b.extend_from_slice(&(frame_id.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(frame_id.as_bytes());
    b.push(0);
    b.resize(b.len().next_multiple_of(4), 0);
    let increment = 4.7 / ranges.max(1) as f32;
    for v in [-2.35f32, 2.35, increment, 0.0, scan_time, 0.02, 30.0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for _ in 0..2 {
        b.extend_from_slice(&(ranges as u32).to_le_bytes());
        for _ in 0..ranges {
            b.extend_from_slice(&1.5f32.to_le_bytes());
        }
    }
    b
}

/// The header stamp (ns) and the sequence number in frame_id of a CDR LaserScan; `None` for
/// a sample that is not one of the evaluation's.
pub fn parse_header(payload: &[u8]) -> Option<(u64, u64)> {
    let word = |at: usize| payload.get(at..at + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let (sec, nanosec, len) = (word(0)?, word(4)?, word(8)? as usize);
    let text = payload.get(12..12 + len.checked_sub(1)?)?;
    let seq = std::str::from_utf8(text).ok()?.parse().ok()?;
    Some((u64::from(sec) * 1_000_000_000 + u64::from(nanosec), seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_carries_its_stamp_and_sequence_and_has_the_lidar_size() {
        let stamp = 1_790_000_000_123_456_789;
        let b = laser_scan(1234, stamp, 1081, 1.0 / 30.0);
        assert_eq!(parse_header(&b), Some((stamp, 1234)));
        // 8 (stamp) + 4 + "1234\0" padded to 8 + 28 (seven floats) + 2 × (4 + 4 × 1081).
        assert_eq!(b.len(), 8 + 4 + 8 + 28 + 2 * (4 + 4 * 1081));
        assert_eq!(parse_header(&b[..10]), None, "truncated");
        assert_eq!(parse_header(&laser_scan(7, 5, 0, 0.0)), Some((5, 7)));
    }

    #[test]
    fn lines_follow_the_protocol() {
        let line = serde_json::to_string(&PeerEvent::Pub { seq: 3, t_ns: 10, ok: false, call_ns: 2 }).unwrap();
        assert_eq!(line, r#"{"ev":"pub","seq":3,"t_ns":10,"ok":false,"call_ns":2}"#);
        let back: PeerEvent = serde_json::from_str(r#"{"ev":"recv","seq":1,"stamp_ns":2,"recv_ns":3}"#).unwrap();
        assert_eq!(back, PeerEvent::Recv { seq: 1, stamp_ns: 2, recv_ns: 3 });
        assert_eq!(serde_json::to_string(&PeerEvent::Ready).unwrap(), r#"{"ev":"ready"}"#);
    }

    #[test]
    fn keep_all_with_a_small_window_is_what_the_flags_say() {
        let options = PubOptions {
            topic: "rt/scan".into(),
            hz: 30.0,
            duration: Duration::from_secs(1),
            ranges: 1081,
            best_effort: false,
            history: HistoryKind::KeepAll,
            depth: 10,
            max_samples: Some(10),
            domain: 0,
            interface: None,
        };
        let qos = writer_qos(&options);
        assert_eq!(qos.history(), Some(History::KeepAll));
        assert_eq!(qos.resource_limits().map(|r| r.max_samples), Some(10));
        let last = writer_qos(&PubOptions { history: HistoryKind::KeepLast, max_samples: None, ..options });
        assert_eq!(last.history(), Some(History::KeepLast { depth: 10 }));
        assert_eq!(last.resource_limits(), None);
    }
}

//! Point-to-point links: two independent directions ("channels"), each a queue
//! discipline above a short device transmit queue above a serialiser.
//!
//! This mirrors ns-3's `PointToPointNetDevice` under its traffic-control layer:
//!
//! * the queue discipline (`Box<dyn Qdisc>`) is where packets wait and where the
//!   scheduler under test decides the order and the drops;
//! * below it sits the device's own drop-tail transmit queue (ns-3's `TxQueue`,
//!   `DropTailQueue` with `MaxSize` N packets). ns-3's flow control stops the queue
//!   disc as soon as the device queue could not take one more packet and wakes it
//!   when a packet leaves, so the queue disc is asked for a packet only while the
//!   device queue has room: at most N packets wait there, in FIFO order, out of the
//!   scheduler's reach. With N = 1 (the setting of ns-3's traffic-control examples)
//!   a packet that the scheduler puts first still waits for the rest of the packet
//!   on the wire plus the one in the device queue;
//! * the serialiser takes `(IP bytes + framing) · 8 / rate` to put a packet on the
//!   wire, after which it arrives `delay` later at the far end. ns-3's point-to-point
//!   framing is its 2-byte PPP header; there is no inter-frame gap.
//!
//! A channel without a queue discipline feeds its device queue directly and drops
//! at the tail when it is full (ns-3 without a root queue disc).
//!
//! A radio channel ([`Radio`]) has `bauxite_core`'s link model (`--link`: a delivery
//! trace or a rate, loss, Gilbert–Elliott bursts, delay, jitter) in place of the
//! serialiser and the wire: the scheduler under test still holds the queue, the
//! model's own buffer is the device queue, and the model says when each packet
//! leaves and whether it arrives.

use std::collections::VecDeque;

use bauxite_core::link::{LinkModel, Outcome};
use bauxite_qdisc::{Nanos, Qdisc};

/// Bytes of link framing on ns-3's point-to-point links: the PPP protocol field.
pub const PPP_HEADER_BYTES: u32 = 2;

/// A link's physical parameters and its device transmit queue, the same in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Line rate in bits per second (must be positive).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Packets the device transmit queue holds under the queue discipline (at least 1).
    pub device_queue_packets: u32,
    /// Framing bytes added to each IP datagram on the wire.
    pub framing_bytes: u32,
}

impl LinkConfig {
    /// A link with ns-3 point-to-point framing and a one-packet device queue.
    pub fn new(rate_bps: u64, delay: Nanos) -> Self {
        Self { rate_bps, delay, device_queue_packets: 1, framing_bytes: PPP_HEADER_BYTES }
    }

    /// Time to serialise `bytes` at the line rate, rounded to the nearest nanosecond.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Nanos {
        // In u64 (whose division is several times cheaper than u128's) unless the
        // product overflows, which takes a packet of more than 2.3 GB.
        match (bytes as u64).checked_mul(8_000_000_000).and_then(|n| n.checked_add(self.rate_bps / 2)) {
            Some(n) => n / self.rate_bps,
            None => ((bytes as u128 * 8_000_000_000 + self.rate_bps as u128 / 2) / self.rate_bps as u128) as Nanos,
        }
    }
}

/// Counters of one direction of a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelStats {
    /// Packets put on the wire.
    pub tx_packets: u64,
    /// IP bytes put on the wire (framing not counted).
    pub tx_bytes: u64,
    /// Packets the queue discipline dropped (at enqueue or dequeue).
    pub qdisc_drops: u64,
    /// Packets the device queue dropped (only without a queue discipline).
    pub device_drops: u64,
    /// Packets a radio channel's link lost after carrying them.
    #[serde(default)]
    pub link_losses: u64,
    /// Time the transmitter was busy.
    pub busy_ns: Nanos,
    /// The longest the queue discipline has been, in packets.
    pub max_qdisc_packets: u64,
}

/// One direction of a point-to-point link.
pub struct Channel {
    /// The sending node.
    pub from: u32,
    /// The receiving node.
    pub to: u32,
    /// Rate, delay, device queue, framing.
    pub config: LinkConfig,
    /// The queue discipline above the device queue, if any.
    pub qdisc: Option<Box<dyn Qdisc>>,
    /// Packets in the queue discipline, as its `len` said after the last call
    /// that could change it (so the hot path asks it less often).
    pub qdisc_len: usize,
    /// The device transmit queue: packet slots in FIFO order.
    pub device: VecDeque<u32>,
    /// Whether a packet is being serialised — or was, when `completion` holds an
    /// unscheduled end that has since passed (the next packet offered settles it).
    pub busy: bool,
    /// The end of the transmission under way, when its event is not scheduled:
    /// its time and reserved sequence number (the simulator schedules it only if
    /// something waits for it).
    pub completion: Option<(Nanos, u64)>,
    /// Whether the queue discipline (if any) says an empty dequeue changes
    /// nothing, which lets a completion with nothing waiting go unscheduled.
    pub idle_dequeue_is_noop: bool,
    /// Whether the queue discipline (if any) drops nothing but a refused arrival,
    /// so that its drop log needs reading only after a refusal.
    pub drops_only_arrivals: bool,
    /// Whether a packet that finds the queue discipline (if any) empty may go
    /// straight to the device queue, as offering and dequeuing it would.
    pub empty_passes_through: bool,
    /// The last serialisation time computed, with its wire bytes: most packets on
    /// a channel are the size of the one before, and this spares the division.
    tx_memo: (u32, Nanos),
    /// The one channel every packet entering this one comes off, when there is
    /// one (set by the simulator from its applications' routes when a run starts):
    /// then the channel's packets can be handed to it as they leave that channel
    /// ([`crate::engine`]'s cut-through).
    pub sole_feeder: Option<u32>,
    /// Arrival events scheduled for packets that will enter this channel, when it
    /// has a sole feeder: a packet may cut through only with none of them pending.
    pub arrivals_pending: u32,
    /// A packet may cut through into this channel only if its transmission here
    /// takes less than this (0: never); see [`crate::engine`].
    pub cut_through_below: Nanos,
    /// The link model of a radio channel (none: a wire at `config`'s rate). Boxed:
    /// the model is large, and a wire's channel stays the size that fits the hot loop.
    pub radio: Option<Box<Radio>>,
    /// Counters.
    pub stats: ChannelStats,
}

/// A radio channel's link: the model, the outcomes of its last poll (a buffer kept
/// for reuse) and when the simulator polls it next.
#[derive(Debug)]
pub struct Radio {
    /// The link; its packets' tokens are pool slots.
    pub model: LinkModel,
    /// Reused by each poll.
    pub outcomes: Vec<Outcome>,
    /// The time of the poll event that counts (others pending are stale).
    pub poll_at: Option<Nanos>,
}

impl Radio {
    /// A radio link following `model`.
    pub fn new(model: LinkModel) -> Self {
        Self { model, outcomes: Vec::new(), poll_at: None }
    }
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel")
            .field("from", &self.from)
            .field("to", &self.to)
            .field("config", &self.config)
            .field("qdisc", &self.qdisc.as_ref().map(|q| q.len()))
            .field("device", &self.device.len())
            .field("busy", &self.busy)
            .field("stats", &self.stats)
            .finish()
    }
}

impl Channel {
    /// An idle channel from `from` to `to`.
    pub fn new(from: u32, to: u32, config: LinkConfig, qdisc: Option<Box<dyn Qdisc>>) -> Self {
        let device = VecDeque::with_capacity(config.device_queue_packets as usize + 1);
        let idle_dequeue_is_noop = qdisc.as_ref().is_none_or(|q| q.empty_dequeue_is_noop());
        let drops_only_arrivals = qdisc.as_ref().is_none_or(|q| q.drops_only_arrivals());
        let empty_passes_through = qdisc.as_ref().is_none_or(|q| q.empty_passes_through());
        Self {
            from,
            to,
            config,
            qdisc,
            qdisc_len: 0,
            device,
            busy: false,
            completion: None,
            idle_dequeue_is_noop,
            drops_only_arrivals,
            empty_passes_through,
            tx_memo: (0, config.tx_time(0)),
            sole_feeder: None,
            arrivals_pending: 0,
            cut_through_below: 0,
            radio: None,
            stats: ChannelStats::default(),
        }
    }

    /// Time to serialise `wire` bytes here ([`LinkConfig::tx_time`]).
    #[inline]
    pub fn tx_time(&mut self, wire: u32) -> Nanos {
        if self.tx_memo.0 != wire {
            self.tx_memo = (wire, self.config.tx_time(wire));
        }
        self.tx_memo.1
    }

    /// Whether the device queue can take one more packet (ns-3: the queue is not
    /// stopped). A radio's device queue is its model's buffer, where the packets
    /// handed over wait (the one being carried does not count, as on a wire).
    pub fn device_has_room(&self) -> bool {
        let waiting = self.device.len() + self.radio.as_ref().map_or(0, |r| r.model.backlog().0);
        waiting < self.config.device_queue_packets as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_time_is_exact_at_round_rates() {
        let bottleneck = LinkConfig::new(10_000_000, 5_000_000);
        // A 64-byte control payload: 64 + 8 + 20 + 2 = 94 bytes on the wire.
        assert_eq!(bottleneck.tx_time(94), 75_200);
        // A 1400-byte background payload: 1430 bytes on the wire.
        assert_eq!(bottleneck.tx_time(1430), 1_144_000);
        let access = LinkConfig::new(100_000_000, 1_000_000);
        assert_eq!(access.tx_time(94), 7_520);
        // Rounds to the nearest nanosecond.
        assert_eq!(LinkConfig::new(3_000_000_000, 0).tx_time(1), 3);
    }
}

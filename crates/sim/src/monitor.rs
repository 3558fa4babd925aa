//! The flow monitor: per-flow counters with ns-3 `FlowMonitor`'s definitions.
//!
//! A flow is one UDP 5-tuple. Its delay runs from the source's IP layer handing
//! the packet down to the destination's IP layer receiving it, so it includes
//! every queue, serialisation and propagation delay on the path. The definitions
//! follow ns-3's `FlowMonitor::ReportLastRx`:
//!
//! * `delay_sum` adds each received packet's delay; mean delay = `delay_sum / rx_packets`;
//! * jitter is `|delay_i − delay_{i−1}|` between consecutively *received* packets
//!   (lost ones are skipped), `jitter_sum` adds them; mean jitter =
//!   `jitter_sum / (rx_packets − 1)`;
//! * bytes are IP bytes (payload + UDP + IPv4 headers), as ns-3's IPv4 flow probe counts.
//!
//! Two choices are Bauxite's, stated by the issue rather than ns-3: loss is
//! `tx − rx` after the network has drained (a packet is either delivered or
//! dropped by a queue, so nothing is left "in flight" at the end), and throughput
//! is received IP bits over the source's *active time* (stop − start) rather than
//! ns-3's `timeLastRx − timeFirstTx`; the two differ by one path delay.

use bauxite_qdisc::Nanos;
use bauxite_qdisc::rng::mix64;

/// IP protocol number of UDP.
pub const UDP: u8 = 17;
/// IP protocol number of TCP.
pub const TCP: u8 = 6;

/// The identity of a flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowKey {
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Source UDP port.
    pub src_port: u16,
    /// Destination UDP port.
    pub dst_port: u16,
    /// IP protocol number (17 for UDP).
    pub protocol: u8,
}

impl FlowKey {
    /// A stable 64-bit hash of the 5-tuple: what fair-queueing disciplines bucket on.
    pub fn hash(&self) -> u64 {
        let a = ((self.src as u64) << 32) | self.dst as u64;
        let b = ((self.src_port as u64) << 24) | ((self.dst_port as u64) << 8) | self.protocol as u64;
        mix64(mix64(a) ^ b)
    }
}

/// Counters of one flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Packets the source sent.
    pub tx_packets: u64,
    /// IP bytes the source sent.
    pub tx_bytes: u64,
    /// Packets the destination received.
    pub rx_packets: u64,
    /// IP bytes the destination received.
    pub rx_bytes: u64,
    /// Packets dropped by a queue on the way.
    pub dropped_packets: u64,
    /// Sum of the received packets' delays.
    pub delay_sum: Nanos,
    /// Sum of |delay_i − delay_{i−1}| over consecutive received packets.
    pub jitter_sum: Nanos,
    /// Delay of the last received packet.
    pub last_delay: Nanos,
    /// Largest delay seen.
    pub max_delay: Nanos,
    /// When the first packet was sent.
    pub time_first_tx: Option<Nanos>,
    /// When the last packet was sent.
    pub time_last_tx: Option<Nanos>,
    /// When the first packet arrived.
    pub time_first_rx: Option<Nanos>,
    /// When the last packet arrived.
    pub time_last_rx: Option<Nanos>,
    /// Packets that arrived after the flow's deadline.
    pub late_packets: u64,
}

impl FlowStats {
    /// Packets sent but not received.
    pub fn lost_packets(&self) -> u64 {
        self.tx_packets - self.rx_packets
    }

    /// Lost packets as a percentage of sent ones (0 for a flow that sent nothing).
    pub fn loss_pct(&self) -> f64 {
        if self.tx_packets == 0 { 0.0 } else { 100.0 * self.lost_packets() as f64 / self.tx_packets as f64 }
    }

    /// Packets lost or late for a deadline, as a percentage of sent ones: a control
    /// message that arrives late is as good as lost (0 for a flow that sent nothing).
    pub fn deadline_miss_pct(&self) -> f64 {
        let missed = self.lost_packets() + self.late_packets;
        if self.tx_packets == 0 { 0.0 } else { 100.0 * missed as f64 / self.tx_packets as f64 }
    }

    /// Mean delay in nanoseconds (`None` when nothing arrived).
    pub fn mean_delay_ns(&self) -> Option<f64> {
        (self.rx_packets > 0).then(|| self.delay_sum as f64 / self.rx_packets as f64)
    }

    /// Mean jitter in nanoseconds (`None` with fewer than two received packets).
    pub fn mean_jitter_ns(&self) -> Option<f64> {
        (self.rx_packets > 1).then(|| self.jitter_sum as f64 / (self.rx_packets - 1) as f64)
    }

    /// Received IP bits per second over `active_ns` of source activity.
    pub fn throughput_bps(&self, active_ns: Nanos) -> f64 {
        if active_ns == 0 { 0.0 } else { self.rx_bytes as f64 * 8.0 * 1e9 / active_ns as f64 }
    }
}

/// One monitored flow: identity, a caller's label, the source's active time, counters.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The 5-tuple.
    pub key: FlowKey,
    /// Its hash, computed once.
    pub hash: u64,
    /// The DSCP its source marks.
    pub dscp: u8,
    /// The caller's grouping label (a traffic class).
    pub tag: u32,
    /// Source stop − start.
    pub active_ns: Nanos,
    /// The application's deadline, if it has one.
    pub deadline: Option<Nanos>,
    /// The counters.
    pub stats: FlowStats,
}

impl Flow {
    /// Throughput over the source's active time, bits per second.
    pub fn throughput_bps(&self) -> f64 {
        self.stats.throughput_bps(self.active_ns)
    }
}

/// Every flow of a run.
#[derive(Clone, Debug, Default)]
pub struct FlowMonitor {
    /// The flows, in the order they were added.
    pub flows: Vec<Flow>,
}

impl FlowMonitor {
    /// Registers a flow and returns its index.
    pub fn add(&mut self, key: FlowKey, dscp: u8, tag: u32, active_ns: Nanos, deadline: Option<Nanos>) -> u32 {
        let hash = key.hash();
        self.flows.push(Flow { key, hash, dscp, tag, active_ns, deadline, stats: FlowStats::default() });
        (self.flows.len() - 1) as u32
    }

    /// The source sent a packet of `bytes` at `now`.
    #[inline]
    pub fn on_tx(&mut self, flow: u32, bytes: u32, now: Nanos) {
        let s = &mut self.flows[flow as usize].stats;
        s.tx_packets += 1;
        s.tx_bytes += bytes as u64;
        s.time_first_tx.get_or_insert(now);
        s.time_last_tx = Some(now);
    }

    /// The destination received a packet of `bytes` at `now`, `delay` after it was sent.
    #[inline]
    pub fn on_rx(&mut self, flow: u32, bytes: u32, delay: Nanos, now: Nanos) {
        let flow = &mut self.flows[flow as usize];
        if flow.deadline.is_some_and(|deadline| delay > deadline) {
            flow.stats.late_packets += 1;
        }
        let s = &mut flow.stats;
        s.delay_sum += delay;
        if s.rx_packets > 0 {
            s.jitter_sum += s.last_delay.abs_diff(delay);
        }
        s.last_delay = delay;
        s.max_delay = s.max_delay.max(delay);
        s.rx_bytes += bytes as u64;
        s.rx_packets += 1;
        s.time_first_rx.get_or_insert(now);
        s.time_last_rx = Some(now);
    }

    /// A queue dropped one of the flow's packets.
    #[inline]
    pub fn on_drop(&mut self, flow: u32) {
        self.flows[flow as usize].stats.dropped_packets += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> FlowKey {
        FlowKey { src: 0, dst: 1, src_port: 10, dst_port: 20, protocol: 17 }
    }

    #[test]
    fn delay_jitter_and_loss_follow_ns3_definitions() {
        let mut m = FlowMonitor::default();
        let f = m.add(key(), 0, 0, 1_000_000_000, None);
        // Five packets sent; the third is lost. Delays 10, 14, (lost), 11, 11 ms.
        for (i, delay) in [Some(10), Some(14), None, Some(11), Some(11)].into_iter().enumerate() {
            let sent = i as u64 * 5_000_000;
            m.on_tx(f, 100, sent);
            match delay {
                Some(ms) => m.on_rx(f, 100, ms * 1_000_000, sent + ms * 1_000_000),
                None => m.on_drop(f),
            }
        }
        let s = &m.flows[0].stats;
        assert_eq!((s.tx_packets, s.rx_packets, s.lost_packets(), s.dropped_packets), (5, 4, 1, 1));
        assert_eq!(s.loss_pct(), 20.0);
        // Mean delay (10+14+11+11)/4 = 11.5 ms.
        assert_eq!(s.mean_delay_ns(), Some(11_500_000.0));
        // Jitter between consecutive *received* packets: |14−10| + |11−14| + |11−11| = 7 ms over 3.
        assert_eq!(s.jitter_sum, 7_000_000);
        assert_eq!(s.mean_jitter_ns(), Some(7_000_000.0 / 3.0));
        // 400 IP bytes over 1 s of activity.
        assert_eq!(m.flows[0].throughput_bps(), 3200.0);
    }

    #[test]
    fn a_deadline_exactly_met_is_met_and_one_nanosecond_later_is_missed() {
        let mut m = FlowMonitor::default();
        let f = m.add(key(), 0, 0, 1_000_000_000, Some(10_000_000));
        for (sent, delay) in [(0, Some(10_000_000)), (5_000_000, Some(10_000_001)), (10_000_000, None)] {
            m.on_tx(f, 100, sent);
            match delay {
                Some(d) => m.on_rx(f, 100, d, sent + d),
                None => m.on_drop(f),
            }
        }
        let s = &m.flows[0].stats;
        assert_eq!((s.late_packets, s.lost_packets()), (1, 1), "on time, late, lost");
        assert!((s.deadline_miss_pct() - 200.0 / 3.0).abs() < 1e-9, "late counts as lost: {}", s.deadline_miss_pct());
        let mut none = FlowMonitor::default();
        let g = none.add(key(), 0, 0, 1, None);
        none.on_tx(g, 100, 0);
        none.on_rx(g, 100, 1_000_000_000, 1_000_000_000);
        assert_eq!(none.flows[0].stats.late_packets, 0, "no deadline: never late");
    }

    #[test]
    fn empty_flows_have_no_means() {
        let s = FlowStats::default();
        assert_eq!(s.mean_delay_ns(), None);
        assert_eq!(s.mean_jitter_ns(), None);
        assert_eq!(s.loss_pct(), 0.0);
    }

    #[test]
    fn distinct_tuples_hash_apart() {
        let a = key();
        let b = FlowKey { dst_port: 21, ..key() };
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.hash(), key().hash());
    }
}

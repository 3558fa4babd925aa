//! Deficit Round Robin (Shreedhar & Varghese, SIGCOMM 1995) over DSCP classes:
//! the weighted scheduler the seed names as future work ("a more explicit
//! weighted scheduler ... that more directly resembles weighted fair queueing").
//!
//! Each class is a FIFO with a quantum in bytes. Backlogged classes take turns;
//! on its turn a class may send while its head packet fits in its deficit, and
//! each turn adds one quantum to the deficit, so over many rounds a backlogged
//! class gets a share of the link proportional to its quantum whatever its packet
//! sizes — a packet larger than the quantum just waits for the deficit of several
//! rounds. A class that empties forfeits its deficit (it cannot hoard credit
//! while idle). Unlike strict priority, no class can starve another; unlike
//! FQ-CoDel, classes are chosen by DSCP, not by flow.

use std::collections::VecDeque;

use bauxite_core::OrchestratorLane::{Control, Status, Telemetry};

use crate::dscp::{self, DscpMap};
use crate::queue::{LimitScope, PacketQueue};
use crate::{Nanos, Packet, Qdisc, Verdict};

/// The configuration of a [`Drr`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrrConfig {
    /// Quantum of each class in bytes: its weight. Quanta of at least one MTU
    /// keep the work per packet constant.
    pub quanta: Vec<u32>,
    /// DSCP → class.
    pub map: DscpMap,
    /// Packet limit, per class or shared as `scope` says.
    pub limit: usize,
    /// Whether `limit` applies to each class (as Linux's DRR with a pfifo per
    /// class) or to all classes together.
    pub scope: LimitScope,
}

/// One MTU as Linux counts an Ethernet frame: the unit of the default quanta.
const MTU: u32 = 1514;

impl DrrConfig {
    /// The seed's four classes — control (AF42), status (AF43), telemetry (AF41)
    /// and everything else (CS1 bulk, default background) — with quanta 3 : 2 : 4
    /// : 1 MTU (a choice, not the seed's).
    ///
    /// Weights guarantee shares of 30 / 20 / 40 / 10 % when all classes are
    /// backlogged. They are sized from the seed's heaviest workload, 16 followers
    /// on a 10 Mb/s link: control offers 16 × 200 pps × 92 B (64 B payload plus
    /// UDP/IP headers) = 2.4 Mb/s (24 %), status 16 × 100 × 124 B = 1.6 Mb/s
    /// (16 %), telemetry 16 × 50 × 540 B = 3.5 Mb/s (35 %). Each protected class's
    /// guarantee covers its offered load, so it never builds a standing queue,
    /// and bulk/background keep at least 10 % and all capacity left over.
    pub fn seed_classes(limit: usize) -> Self {
        Self {
            quanta: vec![3 * MTU, 2 * MTU, 4 * MTU, MTU],
            map: dscp::map_with(3, &[(Control.dscp(), 0), (Status.dscp(), 1), (Telemetry.dscp(), 2)]),
            limit,
            scope: LimitScope::PerQueue,
        }
    }
}

/// One class: its FIFO, quantum and deficit.
#[derive(Clone, Debug)]
struct Class {
    queue: PacketQueue,
    quantum: u64,
    deficit: u64,
}

/// Deficit Round Robin over DSCP classes.
#[derive(Clone, Debug)]
pub struct Drr {
    classes: Vec<Class>,
    /// Backlogged classes in round order; the front is the one whose turn it is.
    active: VecDeque<usize>,
    map: DscpMap,
    limit: usize,
    scope: LimitScope,
    len: usize,
    bytes: u64,
    drops: Vec<Packet>,
}

impl Drr {
    /// A DRR scheduler with empty classes.
    ///
    /// # Panics
    /// If there are no classes or more than 256, a quantum or the limit is zero,
    /// or the map names a class that does not exist.
    pub fn new(config: DrrConfig) -> Self {
        let n = config.quanta.len();
        assert!(n > 0 && n <= 256, "DRR needs 1..=256 classes");
        assert!(config.quanta.iter().all(|&q| q > 0), "a zero quantum never serves anything");
        assert!(config.limit > 0, "DRR needs room for at least one packet");
        dscp::check_map(&config.map, n, "class");
        let classes = config
            .quanta
            .iter()
            .map(|&q| Class { queue: PacketQueue::default(), quantum: u64::from(q), deficit: 0 })
            .collect();
        Self {
            classes,
            active: VecDeque::with_capacity(n),
            map: config.map,
            limit: config.limit,
            scope: config.scope,
            len: 0,
            bytes: 0,
            drops: Vec::new(),
        }
    }

    /// The class a packet with this DSCP (0..=63, not the TOS byte) goes to.
    pub fn class_of(&self, dscp: u8) -> usize {
        dscp::classify(&self.map, dscp)
    }

    /// Packets queued in `class`.
    pub fn class_len(&self, class: usize) -> usize {
        self.classes[class].queue.len()
    }
}

impl Qdisc for Drr {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        let c = self.class_of(packet.dscp);
        let class = &mut self.classes[c];
        let full = match self.scope {
            LimitScope::PerQueue => class.queue.len() >= self.limit,
            LimitScope::Shared => self.len >= self.limit,
        };
        if full {
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        if class.queue.is_empty() {
            // A class joining the round gets its first quantum for its first turn.
            class.deficit = class.quantum;
            self.active.push_back(c);
        }
        self.len += 1;
        self.bytes += u64::from(packet.len);
        class.queue.push_back(packet);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<Packet> {
        loop {
            let &c = self.active.front()?;
            let class = &mut self.classes[c];
            let head = u64::from(class.queue.front().expect("active classes are backlogged").len);
            if head > class.deficit {
                // Turn over: credit for the next turn, and to the back of the round.
                class.deficit += class.quantum;
                self.active.rotate_left(1);
                continue;
            }
            let packet = class.queue.pop_front()?;
            class.deficit -= head;
            if class.queue.is_empty() {
                class.deficit = 0;
                self.active.pop_front();
            }
            self.len -= 1;
            self.bytes -= head;
            return Some(packet);
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn drain_drops(&mut self, out: &mut Vec<Packet>) {
        out.append(&mut self.drops);
    }

    /// Dequeue reads an empty queue and returns, keeping no clock.
    fn empty_dequeue_is_noop(&self) -> bool {
        true
    }

    /// A full queue (or band) refuses the arriving packet; nothing else is dropped.
    fn drops_only_arrivals(&self) -> bool {
        true
    }

    /// A class joining the round gets its quantum and forgets its credit when it
    /// empties, so one packet through an empty DRR leaves it as it was.
    fn empty_passes_through(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dscp::{AF41, AF42, AF43, CS1, DEFAULT};

    /// Keeps every class backlogged with packets of `sizes[class]` bytes, serves
    /// `n` packets and returns the bytes each class sent.
    fn backlogged_shares(config: DrrConfig, dscps: &[u8], sizes: &[u32], n: usize) -> Vec<u64> {
        let mut q = Drr::new(config);
        let mut id = 0;
        for (&d, &len) in dscps.iter().zip(sizes) {
            for _ in 0..20 {
                q.enqueue(Packet::new(id, len, d, 0), 0);
                id += 1;
            }
        }
        let mut sent = vec![0u64; dscps.len()];
        for _ in 0..n {
            let p = q.dequeue(0).unwrap();
            let k = dscps.iter().position(|&d| d == p.dscp).unwrap();
            sent[k] += u64::from(p.len);
            q.enqueue(Packet::new(id, p.len, p.dscp, 0), 0);
            id += 1;
        }
        sent
    }

    #[test]
    fn backlogged_classes_share_bytes_in_proportion_to_their_quanta() {
        // Packet sizes unrelated to the quanta, some larger than one quantum.
        let dscps = [AF42, AF43, AF41, DEFAULT];
        let sent = backlogged_shares(DrrConfig::seed_classes(100), &dscps, &[64, 1400, 700, 1500], 200_000);
        let total: u64 = sent.iter().sum();
        for (k, want) in [0.3, 0.2, 0.4, 0.1].into_iter().enumerate() {
            let share = sent[k] as f64 / total as f64;
            assert!((share - want).abs() < 0.005, "class {k}: {share:.4} vs {want} ({sent:?})");
        }
    }

    #[test]
    fn a_packet_larger_than_the_quantum_goes_once_deficits_accumulate() {
        // Quanta 500 and 1000 bytes, packets of 1500: the first class needs three
        // turns per packet, the second two, and the shares stay 1 : 2.
        let config = DrrConfig {
            quanta: vec![500, 1000],
            map: dscp::map_with(1, &[(CS1, 0)]),
            limit: 100,
            scope: LimitScope::PerQueue,
        };
        let mut q = Drr::new(config.clone());
        q.enqueue(Packet::new(0, 1500, CS1, 0), 0);
        for id in 1..4 {
            q.enqueue(Packet::new(id, 1500, DEFAULT, 0), 0);
        }
        // Turns: the big packet's class has 500, then 1000, then 1500 bytes of
        // credit; the other class reaches 2000 on its second turn and sends once.
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.id).collect();
        assert_eq!(order, [1, 0, 2, 3], "the big packet is sent, after one packet of the heavier class");
        let sent = backlogged_shares(config, &[CS1, DEFAULT], &[1500, 1500], 30_000);
        let ratio = sent[1] as f64 / sent[0] as f64;
        assert!((ratio - 2.0).abs() < 0.01, "{sent:?}");
    }

    #[test]
    fn an_idle_class_forfeits_its_deficit() {
        let config = DrrConfig {
            quanta: vec![3000, 1500],
            map: dscp::map_with(1, &[(CS1, 0)]),
            limit: 100,
            scope: LimitScope::PerQueue,
        };
        let mut q = Drr::new(config);
        // Class 0 sends a small packet and empties, with 2900 bytes of credit left.
        q.enqueue(Packet::new(0, 100, CS1, 0), 0);
        assert_eq!(q.dequeue(0).unwrap().id, 0);
        // Class 1 becomes backlogged, then class 0 returns with big packets.
        for id in 10..14 {
            q.enqueue(Packet::new(id, 1500, DEFAULT, 0), 0);
        }
        for id in 20..24 {
            q.enqueue(Packet::new(id, 1500, CS1, 0), 0);
        }
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.id).collect();
        // Fresh quantum for class 0 (two packets per turn), not 2900 + 3000.
        assert_eq!(order, [10, 20, 21, 11, 22, 23, 12, 13]);
    }

    #[test]
    fn the_seed_class_map_and_the_limit() {
        let mut q = Drr::new(DrrConfig::seed_classes(2));
        assert_eq!([AF42, AF43, AF41, CS1, DEFAULT].map(|d| q.class_of(d)), [0, 1, 2, 3, 3]);
        for id in 0..3 {
            q.enqueue(Packet::new(id, 100, DEFAULT, 0), 0);
        }
        assert_eq!(q.enqueue(Packet::new(9, 100, AF42, 0), 0), Verdict::Queued, "per-class room");
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops.iter().map(|p| p.id).collect::<Vec<_>>(), [2]);
        let mut shared = Drr::new(DrrConfig { scope: LimitScope::Shared, ..DrrConfig::seed_classes(2) });
        shared.enqueue(Packet::new(0, 100, DEFAULT, 0), 0);
        shared.enqueue(Packet::new(1, 100, DEFAULT, 0), 0);
        assert_eq!(shared.enqueue(Packet::new(2, 100, AF42, 0), 0), Verdict::Dropped);
    }
}

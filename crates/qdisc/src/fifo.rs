//! Drop-tail FIFO: the no-priority baseline of the seed's study.
//!
//! One queue, served in arrival order; when it holds `limit` packets the arriving
//! packet is the one dropped (ns-3 `FifoQueueDisc`, Linux `pfifo`).

use crate::queue::PacketQueue;
use crate::{Nanos, Packet, Qdisc, Verdict};

/// A drop-tail FIFO with a packet limit.
#[derive(Clone, Debug)]
pub struct Fifo {
    queue: PacketQueue,
    limit: usize,
    drops: Vec<Packet>,
}

impl Fifo {
    /// A FIFO that holds at most `limit` packets (the seed uses 40).
    ///
    /// # Panics
    /// If `limit` is 0: such a queue could never pass a packet.
    pub fn new(limit: usize) -> Self {
        assert!(limit > 0, "a FIFO needs room for at least one packet");
        Self { queue: PacketQueue::default(), limit, drops: Vec::new() }
    }

    /// The packet limit.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl Qdisc for Fifo {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        if self.queue.len() >= self.limit {
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        self.queue.push_back(packet);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<Packet> {
        self.queue.pop_front()
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
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

    /// The one queue, with room for at least one packet, hands it back.
    fn empty_passes_through(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u64, len: u32) -> Packet {
        Packet::new(id, len, 0, 0)
    }

    #[test]
    fn drops_the_arriving_packet_at_the_limit_and_keeps_order() {
        let mut q = Fifo::new(3);
        for id in 0..3 {
            assert_eq!(q.enqueue(pkt(id, 100 + id as u32), id * 10), Verdict::Queued);
        }
        assert_eq!(q.enqueue(pkt(3, 500), 30), Verdict::Dropped);
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops.len(), 1);
        assert_eq!((drops[0].id, drops[0].enqueued_at), (3, 30), "the arriving packet is the one dropped");
        assert_eq!((q.len(), q.backlog_bytes()), (3, 100 + 101 + 102));

        // Room again after one departure: accepted, and order is arrival order.
        assert_eq!(q.dequeue(40).map(|p| p.id), Some(0));
        assert_eq!(q.enqueue(pkt(4, 10), 50), Verdict::Queued);
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(60)).map(|p| p.id).collect();
        assert_eq!(order, [1, 2, 4]);
        assert!(q.is_empty() && q.backlog_bytes() == 0);
        q.drain_drops(&mut drops);
        assert_eq!(drops.len(), 1, "the drop log was emptied by the first drain");
    }

    #[test]
    fn stamps_the_enqueue_time() {
        let mut q = Fifo::new(1);
        q.enqueue(pkt(7, 64), 1_234);
        assert_eq!(q.dequeue(2_000).unwrap().enqueued_at, 1_234);
    }
}

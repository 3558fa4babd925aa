//! The event queue: a binary min-heap keyed on (time, sequence number).
//!
//! Time is integer nanoseconds, so no two machines disagree about the order of
//! two events. Events due at the same nanosecond run in the order they were
//! scheduled (the sequence number breaks the tie), which is what makes a run
//! reproducible: a heap alone does not keep equal keys in insertion order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bauxite_qdisc::Nanos;

/// What happens when an event fires. Small and `Copy`, so scheduling one costs
/// no allocation once the heap has grown to its working size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Application `0` sends its next packet.
    AppSend(u32),
    /// The transmitter of channel `0` has put the last bit of its packet on the wire.
    TxComplete(u32),
    /// Packet `packet` reaches the far end of channel `channel`.
    Arrive {
        /// The channel the packet crossed.
        channel: u32,
        /// The packet's slot in the packet pool.
        packet: u32,
    },
}

/// A heap entry. The (time, sequence) key is packed into one `u128` — time in
/// the high 64 bits — so each of the heap's comparisons is a single integer
/// compare; popping is the simulator's hottest operation.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    fn time(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Pending events, earliest first; ties in scheduling order.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at absolute time `time`.
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { key: ((time as u128) << 64) | seq as u128, event });
    }

    /// Removes and returns the earliest event with its time.
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|e| (e.time(), e.event))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_in_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule(30, Event::AppSend(0));
        q.schedule(10, Event::AppSend(1));
        q.schedule(10, Event::TxComplete(2));
        q.schedule(20, Event::AppSend(3));
        q.schedule(10, Event::AppSend(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (10, Event::AppSend(1)),
                (10, Event::TxComplete(2)),
                (10, Event::AppSend(4)),
                (20, Event::AppSend(3)),
                (30, Event::AppSend(0)),
            ]
        );
        assert!(q.is_empty());
    }
}

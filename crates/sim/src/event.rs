//! The event queue: a radix heap keyed on (time, sequence number).
//!
//! Time is integer nanoseconds, so no two machines disagree about the order of
//! two events. Events due at the same nanosecond run in the order they were
//! scheduled (the sequence number breaks the tie), which is what makes a run
//! reproducible.
//!
//! Why a radix heap and not a binary heap: popping was over half of a large run's
//! CPU time (a 1000-follower run holds thousands of pending events, and each pop
//! of a binary heap moves an entry through a dozen cache-missing levels). A
//! discrete-event simulation never schedules into its past, so every time pushed
//! is at or after the last one popped, which is the one condition a radix heap
//! needs: an entry due later than the current time sits in the bucket numbered by
//! the highest bit where its time differs from the current time, a push is one
//! `Vec::push`, and when the current time runs out of events the lowest non-empty
//! bucket gives the next time and spreads its other entries over lower buckets.
//! Each entry moves down a few times in its life, in sequential memory.
//!
//! Entries due at the current time wait in their own list in sequence order:
//! those found when the clock moves are sorted once, and those scheduled while it
//! stands have the largest sequence numbers yet, so appending keeps the order.
//! (Many events share a nanosecond here — a thousand followers' control packets
//! leave together.) The order popped is exactly the (time, sequence) order.

use bauxite_qdisc::Nanos;

/// What happens when an event fires. Small and `Copy` (8 bytes), so scheduling one
/// costs no allocation once the buckets have grown to their working size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Application `0` sends its next packet.
    AppSend(u32),
    /// The transmitter of channel `0` has put the last bit of its packet on the wire.
    TxComplete(u32),
    /// The packet in pool slot `0` reaches the far end of the channel it crossed
    /// (the channel is recorded in the packet).
    Arrive(u32),
    /// TCP connection `0` starts sending, or its retransmission timer may be due.
    TcpTimer(u32),
    /// The link model of radio channel `0` may have a departure or an arrival due.
    RadioPoll(u32),
}

/// A pending event with its key.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Nanos,
    seq: u64,
    event: Event,
}

/// Buckets 1..=64 hold entries due after the current time, numbered by the
/// highest bit where their time differs from it.
const BUCKETS: usize = 65;

/// Pending events, earliest first; ties in scheduling order.
#[derive(Debug)]
pub struct EventQueue {
    /// Entries due at `now`, in sequence order from index `head` on.
    current: Vec<Entry>,
    head: usize,
    /// Bucket `b` (1..=64); index 0 is unused.
    buckets: Vec<Vec<Entry>>,
    /// The earliest time in bucket `b`, kept as entries are filed so that moving
    /// the clock takes one pass over a bucket, not two (`u64::MAX` when empty).
    earliest: [Nanos; BUCKETS],
    /// Bit `b - 1` is set while bucket `b` holds an entry.
    occupied: u64,
    /// The time of the last entry popped: no entry is due before it.
    now: Nanos,
    /// The sequence number of the last entry popped.
    last_seq: u64,
    /// Starts at 1, so that no key is at or before the initial (0, 0).
    next_seq: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            current: Vec::new(),
            head: 0,
            buckets: vec![Vec::new(); BUCKETS],
            earliest: [Nanos::MAX; BUCKETS],
            occupied: 0,
            now: 0,
            last_seq: 0,
            next_seq: 1,
            len: 0,
        }
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Files `entry`, due after `now`, in its bucket.
    #[inline]
    fn file(&mut self, entry: Entry) {
        let b = 64 - (entry.time ^ self.now).leading_zeros() as usize;
        self.buckets[b].push(entry);
        self.earliest[b] = self.earliest[b].min(entry.time);
        self.occupied |= 1 << (b - 1);
    }

    /// Schedules `event` at absolute time `time`.
    ///
    /// # Panics
    /// If `time` is before the last event popped: a simulation never schedules
    /// into its past, and the heap's order relies on it.
    #[inline]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        let seq = self.reserve();
        self.schedule_reserved(time, seq, event);
    }

    /// Takes the next sequence number for an event that may or may not be
    /// scheduled later with [`EventQueue::schedule_reserved`]: an event whose
    /// need is known only later still runs where it would have run had it been
    /// scheduled at once.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `event` at `time` with a sequence number from
    /// [`EventQueue::reserve`] that has not popped yet ([`EventQueue::has_passed`]).
    ///
    /// # Panics
    /// If `time` is before the last event popped.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Nanos, seq: u64, event: Event) {
        assert!(time >= self.now, "event scheduled at {time} ns, before the current time {} ns", self.now);
        debug_assert!(!self.has_passed(time, seq), "a reserved event scheduled after its turn");
        let entry = Entry { time, seq, event };
        if time != self.now {
            self.file(entry);
        } else if self.current.last().is_none_or(|last| last.seq < seq) {
            self.current.push(entry);
        } else {
            // A reserved number older than events already due now: into its place.
            let at = self.head + self.current[self.head..].partition_point(|e| e.seq < seq);
            self.current.insert(at, entry);
        }
        self.len += 1;
    }

    /// Whether an event with key (`time`, `seq`) would have popped by now.
    #[inline]
    pub fn has_passed(&self, time: Nanos, seq: u64) -> bool {
        (time, seq) < (self.now, self.last_seq)
    }

    /// Removes and returns the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let entry = self.current[self.head];
        self.head += 1;
        self.last_seq = entry.seq;
        self.len -= 1;
        Some((entry.time, entry.event))
    }

    /// Moves the clock to the earliest pending time, whose entries become the
    /// current list in sequence order; false when nothing is pending.
    fn advance(&mut self) -> bool {
        self.current.clear();
        self.head = 0;
        if self.occupied == 0 {
            return false;
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        self.occupied &= !(1 << (b - 1));
        let mut entries = std::mem::take(&mut self.buckets[b]);
        self.now = std::mem::replace(&mut self.earliest[b], Nanos::MAX);
        for entry in entries.drain(..) {
            if entry.time == self.now {
                self.current.push(entry);
            } else {
                self.file(entry);
            }
        }
        // Hand the emptied vector back, so its capacity is reused.
        self.buckets[b] = entries;
        self.current.sort_unstable_by_key(|e| e.seq);
        true
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bauxite_qdisc::rng::SplitMix64;
    use std::collections::BTreeMap;

    #[test]
    fn pops_in_time_order_and_ties_in_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule(30, Event::AppSend(0));
        q.schedule(10, Event::AppSend(1));
        q.schedule(10, Event::TxComplete(2));
        q.schedule(20, Event::AppSend(3));
        q.schedule(10, Event::AppSend(4));
        q.schedule(0, Event::Arrive(5));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (0, Event::Arrive(5)),
                (10, Event::AppSend(1)),
                (10, Event::TxComplete(2)),
                (10, Event::AppSend(4)),
                (20, Event::AppSend(3)),
                (30, Event::AppSend(0)),
            ]
        );
        assert!(q.is_empty());
    }

    /// Against a sorted map of (time, sequence) on a simulation-like load: pops
    /// interleaved with pushes at the current time and up to 2^40 ns later,
    /// many of them at equal times.
    #[test]
    fn matches_a_sorted_map_under_interleaved_pushes_and_pops() {
        let mut rng = SplitMix64::new(7);
        let mut q = EventQueue::new();
        let mut reference = BTreeMap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for round in 0..20_000u32 {
            for _ in 0..rng.below(4) {
                let later = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(8),
                    2 => rng.below(1_000_000),
                    _ => rng.below(1 << 40),
                };
                q.schedule(now + later, Event::AppSend(round));
                reference.insert((now + later, seq), round);
                seq += 1;
            }
            if rng.below(3) > 0 {
                let expected = reference.pop_first().map(|((t, _), r)| (t, Event::AppSend(r)));
                assert_eq!(q.pop(), expected);
                if let Some((t, _)) = expected {
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(((t, _), r)) = reference.pop_first() {
            assert_eq!(q.pop(), Some((t, Event::AppSend(r))));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_reserved_event_runs_where_it_was_reserved() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::AppSend(0));
        let early = q.reserve();
        let late = q.reserve();
        q.schedule(10, Event::AppSend(1));
        q.schedule(20, Event::AppSend(2));
        assert_eq!(q.pop(), Some((10, Event::AppSend(0))));
        assert!(!q.has_passed(10, early) && !q.has_passed(20, late));
        // Due now, numbered before AppSend(1): runs before it although scheduled after.
        q.schedule_reserved(10, early, Event::TxComplete(7));
        q.schedule_reserved(20, late, Event::TxComplete(8));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [(10, Event::TxComplete(7)), (10, Event::AppSend(1)), (20, Event::TxComplete(8)), (20, Event::AppSend(2))]
        );
        assert!(q.has_passed(20, late) && q.has_passed(10, early));
    }

    #[test]
    #[should_panic(expected = "before the current time")]
    fn scheduling_into_the_past_is_refused() {
        let mut q = EventQueue::new();
        q.schedule(10, Event::AppSend(0));
        q.pop();
        q.schedule(9, Event::AppSend(1));
    }
}

//! The event queue: a timing wheel for what is due soon, over a radix heap for
//! what is due later, keyed on (time, sequence number).
//!
//! Time is integer nanoseconds, so no two machines disagree about the order of
//! two events. Events due at the same nanosecond run in the order they were
//! scheduled (the sequence number breaks the tie), which is what makes a run
//! reproducible.
//!
//! Why a wheel: nearly every event a run schedules is due within a few
//! milliseconds (a transmission's end, a packet's arrival at the next node, the
//! next packet of a fast source). The wheel files such an event once, in the slot
//! of its `SLOT_NS`-wide interval, and finds the next occupied slot with two
//! bit scans; when the clock reaches a slot, its few entries are sorted once.
//! A radix heap alone moved each entry between its buckets 2.4 times on average
//! (the seed's comparison runs) and spent a fifth of a run doing so; the wheel
//! made those runs 9 % faster.
//!
//! Events due beyond the wheel's `HORIZON_NS` (a slow source's next packet, a
//! retransmission timeout) wait in a radix heap (`RadixHeap`) and move onto the
//! wheel once the clock comes within the horizon of them. A discrete-event
//! simulation never schedules into its past, which is the one condition a radix
//! heap needs: an entry sits in the bucket numbered by the highest bit where its
//! time differs from the last time taken out, so a push is one `Vec::push`.
//!
//! The entries of the slot the clock is in form the current list, in (time,
//! sequence) order from `head` on; an event scheduled into that slot is inserted
//! in its place (nearly always at the end). The order popped is exactly the
//! (time, sequence) order.

use bauxite_qdisc::Nanos;

/// What happens when an event fires. Small and `Copy` (8 bytes), so scheduling one
/// costs no allocation once the slots and buckets have grown to their working size.
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

impl Entry {
    #[inline]
    fn key(&self) -> (Nanos, u64) {
        (self.time, self.seq)
    }
}

/// log2 of a slot's width in nanoseconds.
const SLOT_BITS: u32 = 16;
/// A wheel slot's width: 65.5 µs. Measured against narrower and wider ones on the
/// seed's comparison and a 1000-follower run: narrower slots spread the entries
/// over more vectors, each written once a turn of the wheel and so missing the
/// cache; wider ones make more to sort per slot (a thousand followers' packets
/// leave within one).
const SLOT_NS: Nanos = 1 << SLOT_BITS;
/// Slots on the wheel, a multiple of 64 (one occupancy word per 64).
const SLOTS: usize = 256;
/// How far ahead the wheel reaches (16.8 ms, a few packet times of a slow
/// bottleneck plus its delay): beyond it, events wait in the heap.
const HORIZON_NS: Nanos = SLOT_NS * SLOTS as Nanos;
const WORDS: usize = SLOTS / 64;
const _: () = assert!(WORDS <= 64, "one summary word covers the occupancy words");

/// Pending events, earliest first; ties in scheduling order.
#[derive(Debug)]
pub struct EventQueue {
    /// The entries of the slot the clock is in, in key order from index `head` on.
    current: Vec<Entry>,
    head: usize,
    /// The absolute slot number (time / [`SLOT_NS`]) of the current list.
    slot: u64,
    /// `wheel[n % SLOTS]` holds the entries of slot `n`, for `slot < n < slot + SLOTS`, unordered.
    wheel: Vec<Vec<Entry>>,
    /// Bit `i % 64` of word `i / 64` is set while `wheel[i]` holds an entry.
    occupied: [u64; WORDS],
    /// Bit `w` is set while `occupied[w]` is not zero.
    summary: u64,
    /// Entries due at or after slot `slot + SLOTS`.
    later: RadixHeap,
    /// The key of the last entry popped: no entry is due before it.
    now: Nanos,
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
            slot: 0,
            wheel: vec![Vec::new(); SLOTS],
            occupied: [0; WORDS],
            summary: 0,
            later: RadixHeap::default(),
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

    /// Schedules `event` at absolute time `time`.
    ///
    /// # Panics
    /// If `time` is before the last event popped: a simulation never schedules
    /// into its past, and the queue's order relies on it.
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
        let slot = time >> SLOT_BITS;
        if slot == self.slot {
            self.insert_current(entry);
        } else if slot - self.slot < SLOTS as u64 {
            self.file(slot, entry);
        } else {
            self.later.push(entry);
        }
        self.len += 1;
    }

    /// Puts `entry`, of the current slot, in its place in the current list.
    #[inline]
    fn insert_current(&mut self, entry: Entry) {
        if self.current.last().is_none_or(|last| last.key() < entry.key()) {
            self.current.push(entry);
        } else {
            let at = self.head + self.current[self.head..].partition_point(|e| e.key() < entry.key());
            self.current.insert(at, entry);
        }
    }

    /// Files `entry` in the wheel's slot `slot` (after the current one, within the horizon).
    #[inline]
    fn file(&mut self, slot: u64, entry: Entry) {
        let i = (slot % SLOTS as u64) as usize;
        self.wheel[i].push(entry);
        self.occupied[i / 64] |= 1 << (i % 64);
        self.summary |= 1 << (i / 64);
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
        self.now = entry.time;
        self.last_seq = entry.seq;
        self.len -= 1;
        Some((entry.time, entry.event))
    }

    /// Moves to the next slot holding an entry, which becomes the current list in
    /// key order; false when nothing is pending.
    fn advance(&mut self) -> bool {
        self.current.clear();
        self.head = 0;
        let next = match self.next_occupied() {
            Some(distance) => self.slot + distance,
            None => match self.later.earliest() {
                Some(time) => time >> SLOT_BITS,
                None => return false,
            },
        };
        self.slot = next;
        // The horizon moved with the clock: what it now reaches leaves the heap.
        let reach = (next << SLOT_BITS).saturating_add(HORIZON_NS);
        while let Some(entry) = self.later.pop_before(reach) {
            let slot = entry.time >> SLOT_BITS;
            if slot == next {
                self.current.push(entry);
            } else {
                self.file(slot, entry);
            }
        }
        let i = (next % SLOTS as u64) as usize;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.current.append(&mut self.wheel[i]);
            self.occupied[i / 64] &= !(1 << (i % 64));
            if self.occupied[i / 64] == 0 {
                self.summary &= !(1 << (i / 64));
            }
        }
        if self.current.len() > 1 {
            self.current.sort_unstable_by_key(Entry::key);
        }
        true
    }

    /// How many slots after the current one the next occupied slot of the wheel is.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        if self.summary == 0 {
            return None;
        }
        let from = ((self.slot + 1) % SLOTS as u64) as usize;
        let (word, bit) = (from / 64, from % 64);
        // The rest of `from`'s word, then the words after it, wrapping around to
        // `from`'s word again (whose low bits are the slots furthest ahead).
        let rest = self.occupied[word] & (u64::MAX << bit);
        let found = if rest != 0 {
            word * 64 + rest.trailing_zeros() as usize
        } else {
            let after = self.summary & !(u64::MAX >> (63 - word)); // words above `word`
            let w = if after != 0 { after.trailing_zeros() } else { self.summary.trailing_zeros() } as usize;
            w * 64 + self.occupied[w].trailing_zeros() as usize
        };
        Some(((found + SLOTS - from) % SLOTS) as u64 + 1)
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

/// Buckets 1..=64 hold entries due after the heap's time, numbered by the
/// highest bit where their time differs from it.
const BUCKETS: usize = 65;

/// A radix heap of entries in (time, sequence) order, for the events due beyond
/// the wheel's horizon. It takes entries due at or after the last one taken out.
#[derive(Debug)]
struct RadixHeap {
    /// Entries due at `now`, in sequence order from index `head` on.
    current: Vec<Entry>,
    head: usize,
    /// Bucket `b` (1..=64); index 0 is unused.
    buckets: Vec<Vec<Entry>>,
    /// The earliest time in bucket `b`, kept as entries are filed so that moving
    /// the heap's time takes one pass over a bucket, not two (`u64::MAX` when empty).
    earliest: [Nanos; BUCKETS],
    /// Bit `b - 1` is set while bucket `b` holds an entry.
    occupied: u64,
    /// The time of `current`'s entries (or of the last taken out).
    now: Nanos,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            current: Vec::new(),
            head: 0,
            buckets: vec![Vec::new(); BUCKETS],
            earliest: [Nanos::MAX; BUCKETS],
            occupied: 0,
            now: 0,
        }
    }
}

impl RadixHeap {
    /// Adds `entry`, due after the heap's time: the queue pushes only entries beyond
    /// the wheel's horizon, and takes out only entries before it.
    fn push(&mut self, entry: Entry) {
        debug_assert!(entry.time > self.now, "an entry for the heap's current time");
        self.file(entry);
    }

    #[inline]
    fn file(&mut self, entry: Entry) {
        let b = 64 - (entry.time ^ self.now).leading_zeros() as usize;
        self.buckets[b].push(entry);
        self.earliest[b] = self.earliest[b].min(entry.time);
        self.occupied |= 1 << (b - 1);
    }

    /// The earliest time held.
    fn earliest(&self) -> Option<Nanos> {
        if self.head < self.current.len() {
            Some(self.now)
        } else if self.occupied == 0 {
            None
        } else {
            Some(self.earliest[self.occupied.trailing_zeros() as usize + 1])
        }
    }

    /// Takes out the earliest entry if it is due before `time`.
    fn pop_before(&mut self, time: Nanos) -> Option<Entry> {
        if self.earliest()? >= time {
            return None;
        }
        if self.head == self.current.len() {
            self.refill();
        }
        self.head += 1;
        Some(self.current[self.head - 1])
    }

    /// Moves the heap's time to the earliest bucketed time, whose entries become
    /// the current list in sequence order. Only called with a bucket occupied.
    fn refill(&mut self) {
        self.current.clear();
        self.head = 0;
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
    /// interleaved with pushes at the current time, within its wheel slot, within
    /// the horizon, either side of the horizon's edge, and up to 2^40 ns later,
    /// many of them at equal times.
    #[test]
    fn matches_a_sorted_map_under_interleaved_pushes_and_pops() {
        let mut rng = SplitMix64::new(7);
        let mut q = EventQueue::new();
        let mut reference = BTreeMap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for round in 0..50_000u32 {
            for _ in 0..rng.below(4) {
                let later = match rng.below(7) {
                    0 => 0,
                    1 => rng.below(8),
                    2 => rng.below(2 * SLOT_NS),
                    3 => rng.below(1_000_000),
                    4 => HORIZON_NS - SLOT_NS + rng.below(2 * SLOT_NS),
                    5 => rng.below(4 * HORIZON_NS),
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

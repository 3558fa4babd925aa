//! CoDel, Controlled Delay (RFC 8289): an AQM that watches how long packets
//! waited, not how many wait.
//!
//! A queue is "bad" once every packet leaving it has waited longer than `target`
//! for a whole `interval`: that is a standing queue, not a burst. CoDel then drops
//! at dequeue, spacing drops by `interval / sqrt(count)` so the drop rate rises
//! until the sender backs off, and stops as soon as one packet leaves below
//! `target`. [`CodelState`] is that per-queue state machine, written once and
//! used both by the single-queue [`Codel`] here and by every flow of
//! [`crate::FqCodel`].
//!
//! Times are the caller's integer nanoseconds; the control law uses an exact
//! square root where Linux and ns-3 use a Newton-iterated reciprocal (both agree
//! to well under 1 %).

use std::time::Duration;

use crate::queue::PacketQueue;
use crate::{Nanos, Packet, Qdisc, Verdict};

/// The configuration of a [`Codel`]; the defaults are RFC 8289's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodelConfig {
    /// TARGET: the acceptable standing queue delay (5 ms).
    pub target: Duration,
    /// INTERVAL: how long the delay must stay above target before CoDel acts, and
    /// the base of its drop spacing; on the order of a worst-case RTT (100 ms).
    pub interval: Duration,
    /// MAXPACKET: while the queue holds no more than this many bytes CoDel never
    /// drops, because one packet always has to wait for the one ahead of it.
    /// 1514 bytes, an Ethernet MTU as Linux counts it (ns-3 uses 1500).
    pub mtu: u32,
    /// Packet limit; arrivals beyond it are dropped (Linux default 1000).
    pub limit: usize,
}

impl Default for CodelConfig {
    fn default() -> Self {
        Self { target: Duration::from_millis(5), interval: Duration::from_millis(100), mtu: 1514, limit: 1000 }
    }
}

/// CoDel's parameters in the units the state machine works in. `pub` only as the
/// shared state of FQ-CoDel's flows; the module is private, so nothing outside the
/// crate can name it.
#[derive(Clone, Copy, Debug)]
pub struct CodelLaw {
    target: Nanos,
    interval: Nanos,
    mtu: u64,
}

impl CodelLaw {
    /// The law for `target`, `interval` and `mtu`.
    ///
    /// # Panics
    /// If `interval` is zero.
    pub(crate) fn new(target: Duration, interval: Duration, mtu: u32) -> Self {
        assert!(!interval.is_zero(), "CoDel needs a non-zero interval");
        Self { target: nanos(target), interval: nanos(interval), mtu: u64::from(mtu) }
    }

    /// When the next drop is due: `interval / sqrt(count)` after `t`.
    fn next_drop(&self, t: Nanos, count: u32) -> Nanos {
        t + (self.interval as f64 / f64::from(count.max(1)).sqrt()) as Nanos
    }
}

/// A `Duration` in nanoseconds, saturating (no queue waits 584 years).
pub(crate) fn nanos(d: Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The CoDel state of one queue (RFC 8289 §5).
#[derive(Clone, Debug, Default)]
pub struct CodelState {
    /// When the sojourn time will have been above target for a whole interval;
    /// `None` while it is below (the RFC's `first_above_time == 0`).
    first_above_time: Option<Nanos>,
    /// When the next drop is due while dropping.
    drop_next: Nanos,
    /// Drops since entering the dropping state (possibly carried over).
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// Whether the queue is in the dropping state.
    dropping: bool,
}

impl CodelState {
    /// Whether CoDel is in its dropping state.
    pub fn is_dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count that sets the current spacing `interval / sqrt(count)`.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// When the next drop is due, if dropping.
    pub fn drop_next(&self) -> Option<Nanos> {
        self.dropping.then_some(self.drop_next)
    }

    /// Takes the head of `queue` and says whether CoDel may drop it: the RFC's
    /// `dodequeue`. The one-MTU rule looks at what is left behind the packet.
    fn pop(&mut self, law: &CodelLaw, queue: &mut PacketQueue, now: Nanos) -> (Option<Packet>, bool) {
        let Some(packet) = queue.pop_front() else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_sub(packet.enqueued_at);
        if sojourn < law.target || queue.bytes() <= law.mtu {
            self.first_above_time = None;
            return (Some(packet), false);
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + law.interval);
                (Some(packet), false)
            }
            Some(t) => (Some(packet), now >= t),
        }
    }

    /// The packet `queue` sends at `now`, after CoDel dropped what it had to into
    /// `drops`: the RFC's `dequeue`.
    pub(crate) fn dequeue(
        &mut self,
        law: &CodelLaw,
        queue: &mut PacketQueue,
        now: Nanos,
        drops: &mut Vec<Packet>,
    ) -> Option<Packet> {
        let (mut packet, ok_to_drop) = self.pop(law, queue, now);
        if self.dropping {
            if !ok_to_drop {
                // One packet left below target (or the queue is nearly empty): done.
                self.dropping = false;
            }
            // Each drop due by now; a long backlog can make several due at once.
            while self.dropping && now >= self.drop_next {
                drops.extend(packet.take());
                self.count += 1;
                let (next, ok) = self.pop(law, queue, now);
                packet = next;
                if ok {
                    self.drop_next = law.next_drop(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            drops.extend(packet.take());
            packet = self.pop(law, queue, now).0;
            self.dropping = true;
            // Re-entering soon after the last dropping state: start from the drop
            // rate that controlled the queue then (the drops beyond the first one
            // of the last episode), not from scratch. `drop_next` is at most an
            // interval after the last drop, so `now - drop_next` approximates the
            // time since that drop. This is the Linux rule the RFC adopts.
            let delta = self.count.saturating_sub(self.lastcount);
            let recent = (now as i128 - self.drop_next as i128) < 16 * i128::from(law.interval);
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = law.next_drop(now, self.count);
            self.lastcount = self.count;
        }
        packet
    }
}

/// A single FIFO managed by CoDel, with a drop-tail packet limit.
#[derive(Clone, Debug)]
pub struct Codel {
    queue: PacketQueue,
    state: CodelState,
    law: CodelLaw,
    limit: usize,
    drops: Vec<Packet>,
}

impl Codel {
    /// An empty CoDel queue.
    ///
    /// # Panics
    /// If the interval or the limit is zero.
    pub fn new(config: CodelConfig) -> Self {
        assert!(config.limit > 0, "CoDel needs room for at least one packet");
        Self {
            queue: PacketQueue::default(),
            state: CodelState::default(),
            law: CodelLaw::new(config.target, config.interval, config.mtu),
            limit: config.limit,
            drops: Vec::new(),
        }
    }

    /// The CoDel state machine, for inspection.
    pub fn state(&self) -> &CodelState {
        &self.state
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        if self.queue.len() >= self.limit {
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        self.queue.push_back(packet);
        Verdict::Queued
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
        self.state.dequeue(&self.law, &mut self.queue, now, &mut self.drops)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// A link draining one 1000-byte packet every `service` ns, fed by a sender
    /// that keeps `arrivals_per_service` packets arriving per departure: with more
    /// than one, the queue and the sojourn time grow without bound.
    struct Bench {
        q: Codel,
        next_id: u64,
        /// (time, id) of every CoDel drop.
        drop_times: Vec<(Nanos, u64)>,
    }

    impl Bench {
        fn new() -> Self {
            Self { q: Codel::new(CodelConfig::default()), next_id: 0, drop_times: Vec::new() }
        }

        fn offer(&mut self, now: Nanos, n: usize) {
            for _ in 0..n {
                self.q.enqueue(Packet::new(self.next_id, 1000, 0, 0), now);
                self.next_id += 1;
            }
        }

        fn serve(&mut self, now: Nanos) -> Option<Packet> {
            let p = self.q.dequeue(now);
            let mut drops = Vec::new();
            self.q.drain_drops(&mut drops);
            self.drop_times.extend(drops.iter().map(|d| (now, d.id)));
            p
        }
    }

    #[test]
    fn no_drop_while_the_sojourn_time_stays_below_target() {
        let mut b = Bench::new();
        // A constant 4 ms standing queue: each packet waits 4 ms, for 10 s.
        for i in 0..10_000 {
            let t = i * MS;
            b.offer(t, 1);
            if t >= 4 * MS {
                assert!(b.serve(t).is_some());
            }
        }
        assert!(b.drop_times.is_empty());
        assert!(!b.q.state().is_dropping());
    }

    /// A standing queue of `depth` 1000-byte packets, one in and one out every
    /// 10 ms for 10 s: each packet waits (depth - 1) × 10 ms, far above target.
    fn standing(depth: usize) -> Bench {
        let mut b = Bench::new();
        b.offer(0, depth - 1);
        for i in 0..1_000 {
            let t = i * 10 * MS;
            b.offer(t, 1);
            b.serve(t);
        }
        b
    }

    #[test]
    fn nothing_is_dropped_while_at_most_one_mtu_waits_behind_the_head() {
        // Two packets: after the head leaves, 1000 bytes ≤ one MTU remain.
        assert!(standing(2).drop_times.is_empty(), "the packet behind has to wait for the one ahead");
        // Three: 2000 bytes remain behind the head, a real standing queue.
        assert!(!standing(3).drop_times.is_empty());
    }

    /// Service every 1 ms, two arrivals per ms from t = 0: packet n arrives at
    /// ⌊n/2⌋ ms and leaves at n ms, so the sojourn time grows as t/2 and first
    /// reaches the 5 ms target at t = 9 ms (packet 9, which arrived at 4 ms).
    fn overloaded(until: Nanos) -> Bench {
        let mut b = Bench::new();
        run(&mut b, 0, until, 2, 1);
        b
    }

    /// From `from` to `until`, every 1 ms: `arrive` arrivals, then `serve` services.
    fn run(b: &mut Bench, from: Nanos, until: Nanos, arrive: usize, serve: usize) {
        let mut t = from;
        while t <= until {
            b.offer(t, arrive);
            for _ in 0..serve {
                b.serve(t);
            }
            t += MS;
        }
    }

    #[test]
    fn first_drop_only_after_a_full_interval_above_target() {
        let b = overloaded(108 * MS);
        assert!(b.drop_times.is_empty(), "{:?}", b.drop_times);
        assert!(!b.q.state().is_dropping());
        let b = overloaded(109 * MS);
        assert_eq!(b.drop_times.len(), 1);
        assert_eq!(b.drop_times[0].0, 109 * MS, "above target since 9 ms: first drop one interval later");
        assert!(b.q.state().is_dropping());
        assert_eq!(b.q.state().count(), 1);
        assert_eq!(b.q.state().drop_next(), Some(209 * MS));
    }

    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        let b = overloaded(2_000 * MS);
        let times: Vec<Nanos> = b.drop_times.iter().map(|&(t, _)| t).collect();
        assert!(times.len() > 20, "{}", times.len());
        // Drops land on the first 1 ms service at or after drop_next, and
        // drop_next advances by 100 ms / sqrt(count) from the previous drop_next.
        let mut due = times[0] as f64;
        for (k, &t) in times.iter().enumerate().skip(1).take(20) {
            due += 100.0 * MS as f64 / (k as f64).sqrt();
            assert!(
                t as f64 >= due && (t as f64) < due + MS as f64,
                "drop {k} at {} ms, due {:.2} ms",
                t as f64 / MS as f64,
                due / MS as f64
            );
        }
        // So the gaps shrink: 100, 70.7, 57.7, 50 ms ...
        let gaps: Vec<Nanos> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps[0], 100 * MS);
        assert!(gaps.windows(2).take(20).all(|g| g[1] <= g[0]), "{gaps:?}");
    }

    #[test]
    fn leaves_the_dropping_state_when_the_sojourn_falls_below_target() {
        let mut b = overloaded(300 * MS);
        assert!(b.q.state().is_dropping());
        // Now serve three per ms against two arrivals: the backlog shrinks and the
        // sojourn time with it. Dropping must stop while packets still queue.
        let mut t = 301 * MS;
        while b.q.state().is_dropping() {
            run(&mut b, t, t, 2, 3);
            t += MS;
            assert!(t < 2_000 * MS);
        }
        assert!(b.q.len() >= 2, "left on a young head, not an empty queue: {}", b.q.len());
        let drops = b.drop_times.len();
        run(&mut b, t, t + 1_000 * MS, 2, 3);
        assert_eq!(b.drop_times.len(), drops, "no drop once the queue is short again");
        assert!(!b.q.state().is_dropping());
    }

    /// Runs a standing queue until CoDel drops, returning the time of that drop.
    fn until_next_drop(b: &mut Bench, mut t: Nanos) -> Nanos {
        let before = b.drop_times.len();
        while b.drop_times.len() == before {
            t += MS;
            run(b, t, t, 2, 1);
        }
        t
    }

    /// Empties the queue at `t`, which ends the dropping state.
    fn drain(b: &mut Bench, t: Nanos) {
        while !b.q.is_empty() {
            b.serve(t);
        }
        assert!(!b.q.state().is_dropping());
    }

    #[test]
    fn re_entry_soon_after_resumes_from_count_minus_lastcount() {
        let mut b = overloaded(2_000 * MS);
        let last_drop_next = b.q.state().drop_next().unwrap();
        drain(&mut b, 2_001 * MS);
        let count_at_exit = b.q.state().count();
        assert!(count_at_exit > 2, "count {count_at_exit}");
        // A standing queue again right away.
        let t = until_next_drop(&mut b, 2_001 * MS);
        assert!(t - last_drop_next < 16 * 100 * MS, "re-entered within 16 intervals");
        // lastcount was 1 at the first entry, so the new count is count - 1 and the
        // next drop is due interval / sqrt(count - 1) after the entry.
        let s = b.q.state();
        assert_eq!(s.count(), count_at_exit - 1);
        let expected = t + (100.0 * MS as f64 / f64::from(count_at_exit - 1).sqrt()) as Nanos;
        assert_eq!(s.drop_next(), Some(expected));
    }

    #[test]
    fn re_entry_after_sixteen_intervals_starts_from_one() {
        let mut b = overloaded(2_000 * MS);
        drain(&mut b, 2_001 * MS);
        // Quiet for 20 intervals, then a standing queue again.
        let t = until_next_drop(&mut b, 4_001 * MS);
        assert_eq!(b.q.state().count(), 1);
        assert_eq!(b.q.state().drop_next(), Some(t + 100 * MS));
    }

    #[test]
    fn re_entry_right_after_a_single_drop_episode_starts_from_one() {
        // One drop, then exit: count - lastcount = 0, so the next episode starts at 1.
        let mut b = overloaded(109 * MS);
        drain(&mut b, 111 * MS);
        until_next_drop(&mut b, 111 * MS);
        assert_eq!(b.q.state().count(), 1);
    }

    #[test]
    fn drop_tail_at_the_limit() {
        let mut q = Codel::new(CodelConfig { limit: 2, ..CodelConfig::default() });
        assert_eq!(q.enqueue(Packet::new(0, 100, 0, 0), 0), Verdict::Queued);
        assert_eq!(q.enqueue(Packet::new(1, 100, 0, 0), 0), Verdict::Queued);
        assert_eq!(q.enqueue(Packet::new(2, 100, 0, 0), 0), Verdict::Dropped);
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops[0].id, 2);
    }
}

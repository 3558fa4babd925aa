//! The flow-queue scheduler FQ-CoDel (RFC 8290) and FQ-PIE share: flows hashed
//! into buckets, each bucket a FIFO with its own AQM, served by a deficit round
//! robin that gives newly active (sparse) flows priority.
//!
//! Written once, generic over the per-flow AQM ([`FlowAqm`]): [`Fq`] is the
//! whole discipline — scheduler, queue-discipline trait, inspection methods — and
//! [`crate::FqCodel`] and [`crate::FqPie`] are `Fq` with a CoDel or a PIE state
//! per bucket plus a constructor each, as in ns-3, where both queue discs are
//! this scheduler with a CoDel or a PIE child per flow.
//!
//! The rules (RFC 8290 §4, as ns-3's `FqCoDelQueueDisc` implements them):
//! - An arriving packet whose bucket is idle makes it a *new* flow with a full
//!   quantum of credit, appended to the new-flows list.
//! - Dequeue serves the head of the new list if it has one, else the old list. A
//!   flow whose credit is used up gets another quantum and goes to the tail of
//!   the old list. A sparse flow (say, a 64-byte control packet every 5 ms)
//!   empties before its credit runs out, so each of its packets is served ahead
//!   of every backlogged flow.
//! - A flow found empty is moved from the new list to the old one, not removed:
//!   otherwise a flow that sends one packet each round would stay "new" forever
//!   and starve the old flows. An empty old flow is removed (becomes idle).
//! - Over the packet limit, packets are dropped from the head of the flow with the
//!   largest byte backlog, so an overflow costs the flow that caused it. Linux and
//!   ns-3 find that flow by scanning every bucket; here a tournament tree over the
//!   buckets' backlogs (`Fattest`) names it at once, for at most `log2(buckets)`
//!   steps of upkeep per packet — with many active flows and a short limit,
//!   overflow is the common case and the scan was most of the run time.

use std::collections::VecDeque;
use std::fmt;

use crate::queue::PacketQueue;
use crate::rng::{SplitMix64, mix64};
use crate::{Nanos, Packet, Qdisc, Verdict};

/// The per-flow AQM of a fair-queueing discipline: what [`Fq`] runs in each
/// bucket. Implemented by the crate's CoDel and PIE states only (the trait is not
/// nameable outside the crate).
pub trait FlowAqm: Send {
    /// What all flows share: the parameters, and any random stream.
    type Shared: Send;

    /// The discipline's name in `Debug` output.
    const NAME: &'static str;

    /// Whether a packet arriving at `now` may join `queue` (an enqueue-time AQM
    /// such as PIE may refuse it); `queue` does not hold it yet.
    fn admit(&mut self, shared: &mut Self::Shared, queue: &PacketQueue, now: Nanos) -> bool;

    /// The packet `queue` sends at `now`, after pushing any packets the AQM drops
    /// at dequeue onto `drops`.
    fn dequeue(
        &mut self,
        shared: &mut Self::Shared,
        queue: &mut PacketQueue,
        now: Nanos,
        drops: &mut Vec<Packet>,
    ) -> Option<Packet>;
}

/// The scheduler parameters common to FQ-CoDel and FQ-PIE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FqParams {
    pub(crate) flows: usize,
    pub(crate) quantum: u32,
    pub(crate) limit: usize,
    pub(crate) drop_batch_size: usize,
    pub(crate) seed: u64,
}

/// Which list a bucket is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Idle,
    New,
    Old,
}

/// One bucket: a FIFO, its DRR credit and its AQM.
#[derive(Clone, Debug)]
struct Flow<A> {
    queue: PacketQueue,
    deficit: i64,
    list: List,
    aqm: A,
}

/// A tournament tree over the buckets' byte backlogs: the root, when read, is the
/// fattest bucket (ties to the lowest index, what a scan over all buckets in index
/// order keeping the first maximum finds), and a bucket's change of backlog
/// replays, when the root is next read, the at most `log2(buckets)` matches on its
/// path to the root. Leaves are
/// padded to a power of two with empty buckets, which never beat a real one.
///
/// Each node holds its winner's standing and index packed into one `u128`
/// (standing in the high half, `u64::MAX - index` in the low half), so a match is
/// one integer `max` of the two children with no lookup elsewhere, ties go to the
/// lower index by construction, and the replay stops at the first node whose
/// value is unchanged. (The tree of 1024 buckets is 32 KiB and stays in cache;
/// keeping only winner indices cost a random read of the scores per match, a
/// fifth of a 1000-follower FQ-PIE run.)
#[derive(Clone, Debug)]
struct Fattest {
    leaves: usize,
    /// Node `k` has children `2k` and `2k + 1`; leaf `leaves + i` is bucket `i`.
    nodes: Vec<u128>,
    /// Buckets set since the root was last read, whose matches are not replayed
    /// yet: the root is read only on overflow, which in a lightly loaded queue is
    /// rare, while every enqueue and dequeue sets a bucket (replaying each set at
    /// once was 9 % of the seed's comparison runs). A bucket is listed once however
    /// often it is set, so the list never outgrows the buckets.
    stale: Vec<u32>,
    /// Whether bucket `i` is in `stale`.
    is_stale: Vec<bool>,
}

impl Fattest {
    fn new(buckets: usize) -> Self {
        let leaves = buckets.next_power_of_two();
        let mut nodes = vec![0; 2 * leaves];
        for i in 0..leaves {
            nodes[leaves + i] = Self::node(0, i);
        }
        for k in (1..leaves).rev() {
            nodes[k] = nodes[2 * k].max(nodes[2 * k + 1]);
        }
        Self { leaves, nodes, stale: Vec::new(), is_stale: vec![false; leaves] }
    }

    /// A bucket's standing: `2 × bytes + 1` if it holds a packet, else 0, so a
    /// queue of zero-length packets still beats an empty bucket (saturates at 2⁶³
    /// bytes, far beyond any queue); packed with its index.
    fn node(score: u64, bucket: usize) -> u128 {
        (u128::from(score) << 64) | u128::from(u64::MAX - bucket as u64)
    }

    /// Records the backlog of `bucket`; its matches are replayed when the root is
    /// next read ([`Fattest::max`]).
    #[inline]
    fn set(&mut self, bucket: usize, queue: &PacketQueue) {
        let score = queue.bytes().saturating_mul(2) | u64::from(!queue.is_empty());
        self.nodes[self.leaves + bucket] = Self::node(score, bucket);
        if !self.is_stale[bucket] {
            self.is_stale[bucket] = true;
            self.stale.push(bucket as u32);
        }
    }

    /// Replays the matches above every stale bucket, each up to the first node
    /// that keeps its value. Stopping there is right even with several stale
    /// buckets: a node above it was computed from that unchanged value, and a node
    /// that also sits above another stale bucket is recomputed, from fresh
    /// children, when that bucket's turn comes.
    fn replay(&mut self) {
        for bucket in self.stale.drain(..) {
            self.is_stale[bucket as usize] = false;
            let mut k = self.leaves + bucket as usize;
            while k > 1 {
                k /= 2;
                let winner = self.nodes[2 * k].max(self.nodes[2 * k + 1]);
                if winner == self.nodes[k] {
                    break;
                }
                self.nodes[k] = winner;
            }
        }
    }

    /// The fattest bucket, if any holds a packet.
    fn max(&mut self) -> Option<usize> {
        self.replay();
        let top = self.nodes[1];
        ((top >> 64) != 0).then(|| (u64::MAX - top as u64) as usize)
    }
}

/// A fair-queueing discipline with `A` as the AQM of every flow: the flow-queue
/// scheduler of RFC 8290 (see the module docs). [`crate::FqCodel`] and
/// [`crate::FqPie`] are this type; build them with their own `new`.
pub struct Fq<A: FlowAqm> {
    flows: Vec<Flow<A>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    fattest: Fattest,
    shared: A::Shared,
    quantum: i64,
    limit: usize,
    drop_batch_size: usize,
    perturbation: u64,
    len: usize,
    bytes: u64,
    drops: Vec<Packet>,
}

impl<A: FlowAqm + Clone> Fq<A> {
    /// A scheduler whose buckets all start with a copy of `aqm`; `shared` may draw
    /// from the random stream that also salted the flow hash.
    ///
    /// # Panics
    /// If `flows`, `quantum`, `limit` or `drop_batch_size` is zero, or there are
    /// 2³² flows or more.
    pub(crate) fn with_params(params: FqParams, aqm: A, shared: impl FnOnce(SplitMix64) -> A::Shared) -> Self {
        assert!(params.flows > 0 && u32::try_from(params.flows).is_ok(), "need between 1 and 2^32 - 1 flows");
        assert!(params.quantum > 0, "a zero quantum never serves anything");
        assert!(params.limit > 0, "need room for at least one packet");
        assert!(params.drop_batch_size > 0, "an overflow must drop at least one packet");
        let mut rng = SplitMix64::new(params.seed);
        let perturbation = rng.next_u64();
        let flow = Flow { queue: PacketQueue::default(), deficit: 0, list: List::Idle, aqm };
        Self {
            flows: vec![flow; params.flows],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            fattest: Fattest::new(params.flows),
            shared: shared(rng),
            quantum: i64::from(params.quantum),
            limit: params.limit,
            drop_batch_size: params.drop_batch_size,
            perturbation,
            len: 0,
            bytes: 0,
            drops: Vec::new(),
        }
    }
}

impl<A: FlowAqm> Fq<A> {
    /// The bucket a flow hashes to: its identity hashed with the perturbation, so
    /// which flows collide depends on the seed, as with Linux's random salt.
    pub fn bucket_of(&self, flow: u64) -> usize {
        (mix64(flow ^ self.perturbation) % self.flows.len() as u64) as usize
    }

    /// Packets and bytes queued in the bucket of `flow`.
    pub fn flow_backlog(&self, flow: u64) -> (usize, u64) {
        let q = &self.flows[self.bucket_of(flow)].queue;
        (q.len(), q.bytes())
    }

    /// The AQM state of the bucket of `flow`.
    pub(crate) fn flow_aqm(&self, flow: u64) -> &A {
        &self.flows[self.bucket_of(flow)].aqm
    }

    /// Drops from the head of the flow with the largest byte backlog until half of
    /// that backlog or `drop_batch_size` packets are gone (at least one packet),
    /// as Linux's `fq_codel_drop` and ns-3's `FqCoDelDrop` do; returns the bucket.
    /// Ties go to the lowest bucket index, as in their scan over all buckets.
    fn drop_from_fattest(&mut self) -> usize {
        let fattest = self.fattest.max().expect("over the limit, so some flow holds packets");
        let queue = &mut self.flows[fattest].queue;
        let threshold = queue.bytes() / 2;
        let (mut dropped_bytes, mut count) = (0, 0);
        while let Some(p) = queue.pop_front() {
            dropped_bytes += u64::from(p.len);
            count += 1;
            self.drops.push(p);
            if count >= self.drop_batch_size || dropped_bytes >= threshold {
                break;
            }
        }
        self.fattest.set(fattest, queue);
        self.len -= count;
        self.bytes -= dropped_bytes;
        fattest
    }

    fn pop_list(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

impl<A: FlowAqm> fmt::Debug for Fq<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(A::NAME).field("len", &self.len).field("backlog_bytes", &self.bytes).finish()
    }
}

impl<A: FlowAqm> Qdisc for Fq<A> {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        let idx = self.bucket_of(packet.flow);
        let flow = &mut self.flows[idx];
        // The flow becomes active before its AQM decides, as in ns-3: a refused
        // first packet leaves an empty new flow that the next dequeue retires.
        if flow.list == List::Idle {
            flow.list = List::New;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
        }
        if !flow.aqm.admit(&mut self.shared, &flow.queue, now) {
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        self.len += 1;
        self.bytes += u64::from(packet.len);
        flow.queue.push_back(packet);
        self.fattest.set(idx, &flow.queue);
        if self.len > self.limit {
            let fattest = self.drop_from_fattest();
            if fattest == idx && self.flows[idx].queue.is_empty() {
                // The batch reached the tail: the arriving packet went too.
                return Verdict::Dropped;
            }
        }
        Verdict::Queued
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
        loop {
            let (idx, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i, true),
                (None, Some(&i)) => (i, false),
                (None, None) => return None,
            };
            let flow = &mut self.flows[idx as usize];
            if flow.deficit <= 0 {
                // Credit used up: a new quantum, and to the back of the old list.
                flow.deficit += self.quantum;
                flow.list = List::Old;
                self.pop_list(from_new);
                self.old_flows.push_back(idx);
                continue;
            }
            let (len_before, bytes_before) = (flow.queue.len(), flow.queue.bytes());
            let packet = flow.aqm.dequeue(&mut self.shared, &mut flow.queue, now, &mut self.drops);
            // The AQM may have dropped packets as well as sent one.
            if flow.queue.len() != len_before {
                self.fattest.set(idx as usize, &flow.queue);
            }
            self.len -= len_before - flow.queue.len();
            self.bytes -= bytes_before - flow.queue.bytes();
            match packet {
                Some(p) => {
                    flow.deficit -= i64::from(p.len);
                    return Some(p);
                }
                None if from_new => {
                    // An empty new flow goes to the old list, not away: see the
                    // module docs on starvation.
                    flow.list = List::Old;
                    self.new_flows.pop_front();
                    self.old_flows.push_back(idx);
                }
                None => {
                    flow.list = List::Idle;
                    self.old_flows.pop_front();
                }
            }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue_of(lens: &[u32]) -> PacketQueue {
        let mut q = PacketQueue::default();
        for (id, &len) in lens.iter().enumerate() {
            q.push_back(Packet::new(id as u64, len, 0, 0));
        }
        q
    }

    /// The fattest bucket by a scan in index order, keeping the first maximum.
    fn scan(queues: &[PacketQueue]) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, q) in queues.iter().enumerate() {
            if !q.is_empty() && best.is_none_or(|(max, _)| q.bytes() > max) {
                best = Some((q.bytes(), i));
            }
        }
        best.map(|(_, i)| i)
    }

    #[test]
    fn the_tree_names_the_bucket_a_full_scan_finds() {
        for buckets in [1, 2, 3, 5, 64, 1000] {
            let mut tree = Fattest::new(buckets);
            let mut queues = vec![PacketQueue::default(); buckets];
            assert_eq!(tree.max(), None);
            let mut rng = SplitMix64::new(buckets as u64);
            for _ in 0..5_000 {
                let i = rng.below(buckets as u64) as usize;
                // Few distinct sizes, so ties are common; zero-length packets too.
                if rng.below(3) == 0 {
                    queues[i].pop_front();
                } else {
                    queues[i].push_back(Packet::new(0, 100 * rng.below(4) as u32, 0, 0));
                }
                tree.set(i, &queues[i]);
                assert_eq!(tree.max(), scan(&queues), "{buckets} buckets");
            }
        }
    }

    /// Several buckets set between two reads of the root, as between two
    /// overflows: the replay of all of them still finds what a scan finds.
    #[test]
    fn the_tree_names_the_scanned_bucket_after_many_sets_between_reads() {
        for buckets in [2, 3, 8, 64, 1000] {
            let mut tree = Fattest::new(buckets);
            let mut queues = vec![PacketQueue::default(); buckets];
            let mut rng = SplitMix64::new(1000 + buckets as u64);
            for _ in 0..2_000 {
                for _ in 0..rng.below(12) {
                    // A few hot buckets, so the same bucket is often set twice.
                    let i = (rng.below(4).min(buckets as u64 - 1) * rng.below(2)
                        + rng.below(buckets as u64) * rng.below(2)) as usize
                        % buckets;
                    if rng.below(3) == 0 {
                        queues[i].pop_front();
                    } else {
                        queues[i].push_back(Packet::new(0, 100 * rng.below(4) as u32, 0, 0));
                    }
                    tree.set(i, &queues[i]);
                }
                assert_eq!(tree.max(), scan(&queues), "{buckets} buckets");
                assert!(tree.stale.len() <= buckets);
            }
        }
    }

    #[test]
    fn ties_go_to_the_lowest_bucket_and_zero_length_packets_count() {
        let mut tree = Fattest::new(8);
        tree.set(6, &queue_of(&[0]));
        assert_eq!(tree.max(), Some(6), "a zero-byte packet beats empty buckets");
        tree.set(5, &queue_of(&[300]));
        tree.set(2, &queue_of(&[100, 200]));
        assert_eq!(tree.max(), Some(2));
        // The winner shrinks but stays ahead of its sibling: the root must still
        // learn that bucket 5 now leads.
        tree.set(2, &queue_of(&[100]));
        assert_eq!(tree.max(), Some(5));
        tree.set(5, &PacketQueue::default());
        tree.set(2, &PacketQueue::default());
        assert_eq!(tree.max(), Some(6));
    }
}

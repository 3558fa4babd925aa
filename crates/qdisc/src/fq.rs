//! The flow-queue scheduler FQ-CoDel (RFC 8290) and FQ-PIE share: flows hashed
//! into buckets, each bucket a FIFO with its own AQM, served by a deficit round
//! robin that gives newly active (sparse) flows priority.
//!
//! Written once, generic over the per-flow AQM ([`FlowAqm`]), so FQ-CoDel and
//! FQ-PIE differ only in what runs inside a bucket — as in ns-3, where both
//! queue discs are this scheduler with a CoDel or a PIE child per flow.
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
//!   largest byte backlog, so an overflow costs the flow that caused it.

use std::collections::VecDeque;

use crate::queue::PacketQueue;
use crate::rng::{SplitMix64, mix64};
use crate::{Nanos, Packet, Verdict};

/// The per-flow AQM of a fair-queueing discipline.
pub(crate) trait FlowAqm: Send {
    /// What all flows share: the parameters, and any random stream.
    type Shared: Send;

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

/// The flow-queue scheduler, generic over the per-flow AQM.
pub(crate) struct FlowScheduler<A: FlowAqm> {
    flows: Vec<Flow<A>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    shared: A::Shared,
    quantum: i64,
    limit: usize,
    drop_batch_size: usize,
    perturbation: u64,
    len: usize,
    bytes: u64,
    drops: Vec<Packet>,
}

impl<A: FlowAqm + Clone> FlowScheduler<A> {
    /// A scheduler whose buckets all start with a copy of `aqm`; `shared` may draw
    /// from the random stream that also salted the flow hash.
    ///
    /// # Panics
    /// If `flows`, `quantum`, `limit` or `drop_batch_size` is zero, or there are
    /// 2³² flows or more.
    pub(crate) fn new(params: FqParams, aqm: A, shared: impl FnOnce(SplitMix64) -> A::Shared) -> Self {
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

impl<A: FlowAqm> FlowScheduler<A> {
    /// The bucket of a flow: its identity hashed with the perturbation, so which
    /// flows collide depends on the seed, as with Linux's random salt.
    pub(crate) fn bucket_of(&self, flow: u64) -> usize {
        (mix64(flow ^ self.perturbation) % self.flows.len() as u64) as usize
    }

    /// Packets and bytes queued in the bucket of `flow`.
    pub(crate) fn flow_backlog(&self, flow: u64) -> (usize, u64) {
        let q = &self.flows[self.bucket_of(flow)].queue;
        (q.len(), q.bytes())
    }

    /// The AQM state of the bucket of `flow`.
    pub(crate) fn flow_aqm(&self, flow: u64) -> &A {
        &self.flows[self.bucket_of(flow)].aqm
    }

    /// [`crate::Qdisc::enqueue`].
    pub(crate) fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
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
        if self.len > self.limit {
            let fattest = self.drop_from_fattest();
            if fattest == idx && self.flows[idx].queue.is_empty() {
                // The batch reached the tail: the arriving packet went too.
                return Verdict::Dropped;
            }
        }
        Verdict::Queued
    }

    /// Drops from the head of the flow with the largest byte backlog until half of
    /// that backlog or `drop_batch_size` packets are gone (at least one packet),
    /// as Linux's `fq_codel_drop` and ns-3's `FqCoDelDrop` do; returns the bucket.
    ///
    /// Every queued packet is in a flow on one of the two lists, so scanning the
    /// lists finds the fattest flow without visiting idle buckets. Ties go to the
    /// lowest bucket index, as in a scan over all buckets.
    fn drop_from_fattest(&mut self) -> usize {
        let mut best: Option<(u64, usize)> = None;
        for &i in self.new_flows.iter().chain(self.old_flows.iter()) {
            let (i, queue) = (i as usize, &self.flows[i as usize].queue);
            let bytes = queue.bytes();
            if !queue.is_empty() && best.is_none_or(|(max, at)| bytes > max || (bytes == max && i < at)) {
                best = Some((bytes, i));
            }
        }
        let (max_bytes, fattest) = best.expect("over the limit, so some flow holds packets");
        let queue = &mut self.flows[fattest].queue;
        let threshold = max_bytes / 2;
        let (mut dropped_bytes, mut count) = (0, 0);
        while let Some(p) = queue.pop_front() {
            dropped_bytes += u64::from(p.len);
            count += 1;
            self.drops.push(p);
            if count >= self.drop_batch_size || dropped_bytes >= threshold {
                break;
            }
        }
        self.len -= count;
        self.bytes -= dropped_bytes;
        fattest
    }

    /// [`crate::Qdisc::dequeue`].
    pub(crate) fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
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

    fn pop_list(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    pub(crate) fn drain_drops(&mut self, out: &mut Vec<Packet>) {
        out.append(&mut self.drops);
    }
}

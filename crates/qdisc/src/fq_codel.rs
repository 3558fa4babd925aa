//! FQ-CoDel (RFC 8290): flow queueing with CoDel in every flow.
//!
//! The scheduler ([`crate::fq`]: hashing into buckets, new/old lists, DRR, the
//! fattest-flow overflow drop) isolates flows from each other; CoDel
//! ([`CodelState`]) keeps each flow's own standing queue short. A control flow
//! that sends far less than its fair share never builds a queue, is served as a
//! new flow ahead of the bulk, and never meets CoDel; a flow that overloads the
//! link meets CoDel and the overflow drop alone.
//!
//! Defaults are RFC 8290's and Linux's: 1024 buckets, a 1514-byte quantum, a
//! 10240-packet limit, a 64-packet overflow batch, CoDel 5 ms / 100 ms. The
//! per-flow CoDel's one-MTU rule counts that flow's backlog (as ns-3 does; Linux
//! counts the whole qdisc's).

use std::time::Duration;

use crate::codel::{CodelLaw, CodelState};
use crate::fq::{FlowAqm, Fq, FqParams};
use crate::queue::PacketQueue;
use crate::{Nanos, Packet};

/// The configuration of an [`FqCodel`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FqCodelConfig {
    /// CoDel's target per flow (5 ms).
    pub target: Duration,
    /// CoDel's interval per flow (100 ms).
    pub interval: Duration,
    /// CoDel's MAXPACKET: no CoDel drop while a flow holds at most this many
    /// bytes behind its head (1514; ns-3's CoDel uses 1500).
    pub mtu: u32,
    /// DRR credit per round, in bytes (1514, Linux's default: an Ethernet frame;
    /// ns-3 takes the device MTU, 1500 on a point-to-point link).
    pub quantum: u32,
    /// Number of hash buckets (1024).
    pub flows: usize,
    /// Packet limit over all flows (10240; the seed's study uses 40).
    pub limit: usize,
    /// On overflow, the most packets dropped at once from the fattest flow, which
    /// loses up to half its bytes (64, as in Linux and ns-3). 1 gives the RFC's
    /// one-packet drop.
    pub drop_batch_size: usize,
    /// Seeds the hash perturbation, so which flows share a bucket is replayable.
    pub seed: u64,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu: 1514,
            quantum: 1514,
            flows: 1024,
            limit: 10240,
            drop_batch_size: 64,
            seed: 0,
        }
    }
}

impl FqCodelConfig {
    /// The defaults with another packet limit.
    pub fn with_limit(limit: usize) -> Self {
        Self { limit, ..Self::default() }
    }
}

/// CoDel admits everything at enqueue and acts at dequeue.
impl FlowAqm for CodelState {
    type Shared = CodelLaw;

    const NAME: &'static str = "FqCodel";

    fn admit(&mut self, _law: &mut CodelLaw, _queue: &PacketQueue, _now: Nanos) -> bool {
        true
    }

    fn dequeue(
        &mut self,
        law: &mut CodelLaw,
        queue: &mut PacketQueue,
        now: Nanos,
        drops: &mut Vec<Packet>,
    ) -> Option<Packet> {
        CodelState::dequeue(self, law, queue, now, drops)
    }
}

/// FQ-CoDel: the flow-queue scheduler ([`Fq`]) with CoDel per flow.
pub type FqCodel = Fq<CodelState>;

impl FqCodel {
    /// An empty FQ-CoDel.
    ///
    /// # Panics
    /// If `flows`, `quantum`, `limit`, `drop_batch_size` or `interval` is zero.
    pub fn new(config: FqCodelConfig) -> Self {
        let params = FqParams {
            flows: config.flows,
            quantum: config.quantum,
            limit: config.limit,
            drop_batch_size: config.drop_batch_size,
            seed: config.seed,
        };
        let law = CodelLaw::new(config.target, config.interval, config.mtu);
        Fq::with_params(params, CodelState::default(), |_| law)
    }

    /// The CoDel state of the bucket of `flow`.
    pub fn flow_codel(&self, flow: u64) -> &CodelState {
        self.flow_aqm(flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Qdisc, Verdict};

    const MS: Nanos = 1_000_000;
    /// Two flows that land in different buckets with the default seed.
    const FAT: u64 = 1;
    const THIN: u64 = 2;

    fn fq(config: FqCodelConfig) -> FqCodel {
        let q = FqCodel::new(config);
        assert_ne!(q.bucket_of(FAT), q.bucket_of(THIN));
        q
    }

    fn pkt(id: u64, len: u32, flow: u64) -> Packet {
        Packet::new(id, len, 0, flow)
    }

    fn drops(q: &mut FqCodel) -> Vec<Packet> {
        let mut out = Vec::new();
        q.drain_drops(&mut out);
        out
    }

    #[test]
    fn a_new_sparse_flow_is_served_before_a_backlogged_old_flow() {
        let mut q = fq(FqCodelConfig::default());
        for id in 0..20 {
            q.enqueue(pkt(id, 1000, FAT), 0);
        }
        // Two packets use up the fat flow's first quantum; the third comes from the
        // old list.
        for id in 0..3 {
            assert_eq!(q.dequeue(0).unwrap().id, id);
        }
        q.enqueue(pkt(100, 64, THIN), 0);
        assert_eq!(q.dequeue(0).unwrap().id, 100, "the sparse flow jumps the backlog");
        assert_eq!(q.dequeue(0).unwrap().id, 3);
    }

    #[test]
    fn an_emptied_new_flow_moves_to_the_old_list_instead_of_staying_new() {
        let mut q = fq(FqCodelConfig::default());
        for id in 0..50 {
            q.enqueue(pkt(id, 100, FAT), 0);
        }
        // 16 packets exhaust the first quantum (1514 bytes); 4 more from the old list.
        for _ in 0..20 {
            assert_eq!(q.dequeue(0).unwrap().flow, FAT);
        }
        q.enqueue(pkt(100, 100, THIN), 0);
        assert_eq!(q.dequeue(0).unwrap().id, 100);
        // The thin flow is found empty: it goes behind the fat one on the old list.
        assert_eq!(q.dequeue(0).unwrap().flow, FAT);
        // So its next packet waits its old-list turn; it is not new again.
        q.enqueue(pkt(101, 100, THIN), 0);
        assert_eq!(q.dequeue(0).unwrap().flow, FAT, "no new-flow priority twice in one round");
        let rest: Vec<u64> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.id).collect();
        let thin_at = rest.iter().position(|&id| id == 101).unwrap();
        assert!(thin_at > 0 && thin_at < 15, "served within the fat flow's round: {thin_at}");
    }

    #[test]
    fn overflow_drops_from_the_fattest_flow_and_spares_the_thin_one() {
        let mut q = fq(FqCodelConfig::with_limit(40));
        q.enqueue(pkt(1000, 100, THIN), 0);
        q.enqueue(pkt(1001, 100, THIN), 0);
        for id in 0..38 {
            assert_eq!(q.enqueue(pkt(id, 1000, FAT), 0), Verdict::Queued);
        }
        assert!(drops(&mut q).is_empty());
        // One more fat packet: 41 > 40. Half the fat flow's 39 000 bytes go, from
        // its head: 20 packets.
        assert_eq!(q.enqueue(pkt(38, 1000, FAT), 0), Verdict::Queued);
        let dropped = drops(&mut q);
        assert_eq!(dropped.iter().map(|p| p.id).collect::<Vec<_>>(), (0..20).collect::<Vec<_>>());
        assert_eq!(q.flow_backlog(THIN), (2, 200), "the thin flow keeps its packets");
        assert_eq!(q.flow_backlog(FAT), (19, 19_000));
        assert_eq!((q.len(), q.backlog_bytes()), (21, 19_200));
        // A thin arrival into a full queue still costs the fat flow.
        for id in 39..58 {
            q.enqueue(pkt(id, 1000, FAT), 0);
        }
        assert_eq!(q.len(), 40);
        assert_eq!(q.enqueue(pkt(1002, 100, THIN), 0), Verdict::Queued);
        assert!(drops(&mut q).iter().all(|p| p.flow == FAT));
        assert_eq!(q.flow_backlog(THIN).0, 3);
    }

    #[test]
    fn with_a_batch_of_one_exactly_the_oldest_fat_packet_goes() {
        let mut q = fq(FqCodelConfig { limit: 10, drop_batch_size: 1, ..FqCodelConfig::default() });
        for id in 0..10 {
            q.enqueue(pkt(id, 1000, FAT), 0);
        }
        q.enqueue(pkt(100, 64, THIN), 0);
        assert_eq!(drops(&mut q).iter().map(|p| p.id).collect::<Vec<_>>(), [0]);
        assert_eq!(q.len(), 10);
    }

    #[test]
    fn an_arrival_is_reported_dropped_only_if_the_batch_reached_it() {
        let mut q = fq(FqCodelConfig::with_limit(2));
        q.enqueue(pkt(0, 100, THIN), 0);
        q.enqueue(pkt(1, 100, THIN), 0);
        // A jumbo packet makes its own flow the fattest, and is its only packet.
        assert_eq!(q.enqueue(pkt(2, 9000, FAT), 0), Verdict::Dropped);
        assert_eq!(drops(&mut q).iter().map(|p| p.id).collect::<Vec<_>>(), [2]);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn per_flow_codel_drops_only_the_flow_with_a_standing_queue() {
        // A link that sends a 1000-byte packet every 1 ms (8 Mb/s). The fat flow
        // offers two per ms; the thin flow one 100-byte packet every 10 ms, from
        // 5 ms on (when the fat flow is already an old flow).
        let mut q = fq(FqCodelConfig::default());
        let mut id = 0;
        let mut thin_delays = Vec::new();
        let mut all_drops = Vec::new();
        for ms in 0..5_000 {
            let now = ms * MS;
            for _ in 0..2 {
                q.enqueue(pkt(id, 1000, FAT), now);
                id += 1;
            }
            if ms % 10 == 5 {
                q.enqueue(pkt(id, 100, THIN), now);
                id += 1;
            }
            if let Some(p) = q.dequeue(now)
                && p.flow == THIN
            {
                thin_delays.push(now - p.enqueued_at);
            }
            q.drain_drops(&mut all_drops);
        }
        assert!(all_drops.len() > 100, "CoDel fights the fat flow: {}", all_drops.len());
        assert!(all_drops.iter().all(|p| p.flow == FAT), "the thin flow loses nothing");
        assert_eq!(thin_delays.len(), 500);
        assert!(thin_delays.iter().all(|&d| d == 0), "served on arrival, ahead of the backlog");
        assert!(q.flow_codel(FAT).count() > 1);
        assert!(!q.flow_codel(THIN).is_dropping());
    }

    #[test]
    fn two_backlogged_flows_share_bytes_equally_whatever_their_packet_sizes() {
        let mut q = fq(FqCodelConfig::default());
        let mut id = 0;
        let mut served = [0u64; 2];
        // Keep both flows backlogged: refill whatever leaves. At a constant time
        // nothing waits, so CoDel never drops and only DRR decides.
        for _ in 0..100 {
            q.enqueue(pkt(id, 1500, FAT), 0);
            q.enqueue(pkt(id + 1, 300, THIN), 0);
            id += 2;
        }
        for _ in 0..20_000 {
            let p = q.dequeue(0).unwrap();
            let (k, len) = if p.flow == FAT { (0, 1500) } else { (1, 300) };
            served[k] += u64::from(p.len);
            q.enqueue(pkt(id, len, p.flow), 0);
            id += 1;
        }
        let ratio = served[0] as f64 / served[1] as f64;
        assert!((ratio - 1.0).abs() < 0.01, "byte shares {served:?}");
        assert!(drops(&mut q).is_empty());
    }

    #[test]
    fn the_seed_changes_which_flows_collide_and_nothing_else() {
        let a = FqCodel::new(FqCodelConfig { seed: 1, ..FqCodelConfig::default() });
        let b = FqCodel::new(FqCodelConfig { seed: 2, ..FqCodelConfig::default() });
        let same = (0..1000).filter(|&f| a.bucket_of(f) == b.bucket_of(f)).count();
        assert!(same < 10, "{same} of 1000 flows kept their bucket");
        let c = FqCodel::new(FqCodelConfig { seed: 1, ..FqCodelConfig::default() });
        assert!((0..1000).all(|f| a.bucket_of(f) == c.bucket_of(f)));
    }
}

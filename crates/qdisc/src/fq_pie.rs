//! FQ-PIE (Linux `sch_fq_pie`, ns-3 `FqPieQueueDisc`): flow queueing with PIE in
//! every flow.
//!
//! The same scheduler as FQ-CoDel ([`crate::fq`]) with PIE's per-queue state
//! instead of CoDel's: each bucket runs its own PIE control law on its own queue
//! delay and drops at enqueue, so a flow that overloads the link drives up its
//! own drop probability while a sparse flow, whose queue never holds more than
//! two packets, is never dropped.
//!
//! Overflow follows ns-3, the reference of the seed's study: the fattest flow
//! loses up to half its bytes (64 packets at most), as in FQ-CoDel. Linux's
//! fq_pie instead drops the arriving packet when the qdisc is full.

use crate::fq::{FlowAqm, Fq, FqParams};
use crate::pie::{PieConfig, PieController, PieQueueState};
use crate::queue::PacketQueue;
use crate::rng::SplitMix64;
use crate::{Nanos, Packet};

/// The configuration of an [`FqPie`]; the defaults are Linux's and ns-3's.
#[derive(Clone, Debug, PartialEq)]
pub struct FqPieConfig {
    /// The per-flow control law (target 15 ms, t_update 15 ms, alpha 0.125, beta
    /// 1.25, max burst 150 ms).
    pub pie: PieConfig,
    /// DRR credit per round, in bytes (1514).
    pub quantum: u32,
    /// Number of hash buckets (1024).
    pub flows: usize,
    /// Packet limit over all flows (10240; the seed's study uses 40).
    pub limit: usize,
    /// On overflow, the most packets dropped at once from the fattest flow (64).
    pub drop_batch_size: usize,
    /// Seeds the hash perturbation and the drop decisions.
    pub seed: u64,
}

impl Default for FqPieConfig {
    fn default() -> Self {
        Self { pie: PieConfig::default(), quantum: 1514, flows: 1024, limit: 10240, drop_batch_size: 64, seed: 0 }
    }
}

impl FqPieConfig {
    /// The defaults with another packet limit.
    pub fn with_limit(limit: usize) -> Self {
        Self { limit, ..Self::default() }
    }
}

/// PIE decides at enqueue and samples the delay at dequeue; all flows draw from
/// one random stream.
impl FlowAqm for PieQueueState {
    type Shared = SplitMix64;

    const NAME: &'static str = "FqPie";

    fn admit(&mut self, rng: &mut SplitMix64, queue: &PacketQueue, now: Nanos) -> bool {
        PieQueueState::admit(self, queue.len(), now, rng)
    }

    fn dequeue(
        &mut self,
        _rng: &mut SplitMix64,
        queue: &mut PacketQueue,
        now: Nanos,
        _drops: &mut Vec<Packet>,
    ) -> Option<Packet> {
        PieQueueState::dequeue(self, queue, now)
    }
}

/// FQ-PIE: the flow-queue scheduler ([`Fq`]) with PIE per flow.
pub type FqPie = Fq<PieQueueState>;

impl FqPie {
    /// An empty FQ-PIE.
    ///
    /// # Panics
    /// If `flows`, `quantum`, `limit`, `drop_batch_size` or `t_update` is zero.
    pub fn new(config: FqPieConfig) -> Self {
        let params = FqParams {
            flows: config.flows,
            quantum: config.quantum,
            limit: config.limit,
            drop_batch_size: config.drop_batch_size,
            seed: config.seed,
        };
        Fq::with_params(params, PieQueueState::new(config.pie), |rng| rng)
    }

    /// The PIE controller of the bucket of `flow`.
    pub fn flow_controller(&self, flow: u64) -> &PieController {
        self.flow_aqm(flow).controller()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Qdisc;

    const MS: Nanos = 1_000_000;
    const FAT: u64 = 1;
    const THIN: u64 = 2;

    /// A link that sends one packet per ms; the fat flow offers two 1000-byte
    /// packets per ms, the thin flow one 100-byte packet every 10 ms (from 5 ms,
    /// once the fat flow is an old flow). Returns the drops and the thin flow's
    /// delays.
    fn isolation(q: &mut FqPie, until_ms: u64) -> (Vec<Packet>, Vec<Nanos>) {
        let (mut id, mut drops, mut thin_delays) = (0, Vec::new(), Vec::new());
        for ms in 0..until_ms {
            let now = ms * MS;
            for _ in 0..2 {
                q.enqueue(Packet::new(id, 1000, 0, FAT), now);
                id += 1;
            }
            if ms % 10 == 5 {
                q.enqueue(Packet::new(id, 100, 0, THIN), now);
                id += 1;
            }
            if let Some(p) = q.dequeue(now)
                && p.flow == THIN
            {
                thin_delays.push(now - p.enqueued_at);
            }
            q.drain_drops(&mut drops);
        }
        (drops, thin_delays)
    }

    #[test]
    fn a_sparse_flow_keeps_zero_delay_while_the_fat_flow_is_dropped() {
        let mut q = FqPie::new(FqPieConfig::default());
        assert_ne!(q.bucket_of(FAT), q.bucket_of(THIN));
        let (drops, thin_delays) = isolation(&mut q, 5_000);
        assert!(drops.len() > 1_000, "PIE holds the fat flow near its share: {}", drops.len());
        assert!(drops.iter().all(|p| p.flow == FAT), "the thin flow loses nothing");
        assert_eq!(thin_delays.len(), 500);
        assert!(thin_delays.iter().all(|&d| d == 0), "served on arrival, ahead of the backlog");
        assert!(q.flow_controller(FAT).probability() > 0.1);
        assert_eq!(q.flow_controller(THIN).probability(), 0.0, "the thin flow's own PIE sees no delay");
        // PIE keeps the fat flow's queue delay near the 15 ms target rather than
        // letting it grow for 5 s: at one packet per ms, ~15 packets.
        let (fat_packets, _) = q.flow_backlog(FAT);
        assert!(fat_packets < 60, "{fat_packets}");
    }

    #[test]
    fn overflow_costs_the_fattest_flow() {
        let mut q = FqPie::new(FqPieConfig::with_limit(40));
        q.enqueue(Packet::new(100, 100, 0, THIN), 0);
        for id in 0..40 {
            q.enqueue(Packet::new(id, 1000, 0, FAT), 0);
        }
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert!(!drops.is_empty() && drops.iter().all(|p| p.flow == FAT));
        assert_eq!(q.flow_backlog(THIN), (1, 100));
    }

    #[test]
    fn the_same_seed_replays_the_same_run() {
        let run = |seed| {
            let mut q = FqPie::new(FqPieConfig { seed, ..FqPieConfig::default() });
            isolation(&mut q, 2_000).0.iter().map(|p| p.id).collect::<Vec<_>>()
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }
}

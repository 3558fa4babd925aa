//! Queue disciplines and the control laws inside them, as pure state machines.
//!
//! Nothing here does I/O or reads a clock: the caller passes the time in. The
//! simulator drives these with its event clock and any userspace shaper with real
//! time, so both run the same code. Each discipline is one file behind the one
//! [`Qdisc`] trait, and the ones that need chance or a hash salt draw it from a
//! seed in their configuration, so the same inputs always give the same outputs.
//!
//! | discipline | type | what it is for |
//! |---|---|---|
//! | drop-tail FIFO | [`Fifo`] | the seed's no-priority baseline |
//! | strict priority | [`Prio`] | the seed's PFIFO_FAST-style (3 bands) and PRIO (4 bands) by DSCP |
//! | Deficit Round Robin | [`Drr`] | weighted shares per DSCP class, the seed's "future work" |
//! | CoDel (RFC 8289) | [`Codel`] | delay-based AQM on one queue |
//! | FQ-CoDel (RFC 8290) | [`FqCodel`] | flow isolation with CoDel per flow |
//! | PIE (RFC 8033) | [`Pie`] | probabilistic AQM on one queue |
//! | FQ-PIE | [`FqPie`] | flow isolation with PIE per flow |
//!
//! The discipline modules are private and their types re-exported here, so
//! callers name every discipline the same flat way (`bauxite_qdisc::FqCodel`,
//! and the userspace shaper `bauxite_qdisc::PieController`) and the files can be
//! split or merged without breaking them. Shared machinery stays private too: one
//! FIFO with byte accounting, one CoDel state machine, one PIE queue state, one
//! flow-queue scheduler under both FQ disciplines. Two modules are public:
//! [`dscp`] for its code points and map builder, and [`rng`], the SplitMix64
//! generator, which the simulator uses for its own draws so that the disciplines
//! and the simulator share one PRNG implementation.
#![deny(missing_docs)]

mod codel;
#[cfg(test)]
mod contract_tests;
mod drr;
pub mod dscp;
mod fifo;
mod fq;
mod fq_codel;
mod fq_pie;
mod pie;
mod prio;
mod queue;
/// The SplitMix64 generator, shared with the rest of Bauxite from `bauxite-core`.
pub use bauxite_core::rng;

pub use codel::{Codel, CodelConfig, CodelState};
pub use drr::{Drr, DrrConfig};
pub use dscp::DscpMap;
pub use fifo::Fifo;
pub use fq::Fq;
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use fq_pie::{FqPie, FqPieConfig};
pub use pie::{Pie, PieConfig, PieController, PieQdiscConfig};
pub use prio::{Prio, PrioConfig};
pub use queue::{LimitScope, ParseLimitScopeError};

/// Time as the caller's clock gives it, in integer nanoseconds. The simulator's
/// event clock and a monotonic OS clock both fit; only differences matter.
pub type Nanos = u64;

/// What a queue discipline needs to know about a packet. The payload stays with
/// the caller, who finds it again by [`Packet::id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The caller's handle for this packet (an index or a sequence number).
    pub id: u64,
    /// Length in bytes as the discipline accounts it (byte limits, DRR quanta):
    /// the IP datagram plus whatever link framing the caller counts.
    pub len: u32,
    /// The DSCP of the IP header (0..=63), which priority disciplines classify on.
    pub dscp: u8,
    /// A stable identity of the packet's flow (e.g. a hash of its 5-tuple). Fair
    /// queueing maps it onto its buckets with its own perturbation, so distinct
    /// flows can collide in a bucket as they do in Linux and ns-3.
    pub flow: u64,
    /// When the packet entered the discipline; set by `enqueue`, read by AQMs for
    /// the sojourn time.
    pub enqueued_at: Nanos,
}

impl Packet {
    /// A packet not yet enqueued.
    pub fn new(id: u64, len: u32, dscp: u8, flow: u64) -> Self {
        Self { id, len, dscp, flow, enqueued_at: 0 }
    }
}

/// What became of the packet passed to [`Qdisc::enqueue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet is in the queue (other packets may have been dropped to make room).
    Queued,
    /// The packet itself was dropped.
    Dropped,
}

/// A queue discipline: a packet scheduler with its own drop policy.
///
/// Every packet a discipline drops — the arriving one on overflow, another one it
/// evicts to make room, or one an AQM discards at dequeue — goes to its drop log,
/// which the caller empties with [`Qdisc::drain_drops`] after each call. That is
/// the one way drops are reported, so a flow monitor sees every loss.
pub trait Qdisc: Send {
    /// Offers a packet at time `now`.
    fn enqueue(&mut self, packet: Packet, now: Nanos) -> Verdict;
    /// The next packet to transmit at time `now`, if any.
    fn dequeue(&mut self, now: Nanos) -> Option<Packet>;
    /// Packets queued.
    fn len(&self) -> usize;
    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes queued.
    fn backlog_bytes(&self) -> u64;
    /// Moves the packets dropped since the last call into `out`, oldest first.
    fn drain_drops(&mut self, out: &mut Vec<Packet>);
    /// Whether [`Qdisc::dequeue`] on an empty discipline changes nothing, whatever
    /// the time: then a caller that knows the discipline is empty may skip the call
    /// (the simulator schedules no event for a transmitter that finishes with
    /// nothing left to send). False unless the discipline guarantees it: an AQM's
    /// clock or a fair queue's list upkeep may run even when nothing is queued.
    fn empty_dequeue_is_noop(&self) -> bool {
        false
    }
    /// Whether the only packet this discipline ever drops is the one offered to
    /// [`Qdisc::enqueue`], reported by its [`Verdict::Dropped`]: no eviction, no
    /// drop at dequeue. Then a caller may drain the drop log only after that
    /// verdict (the simulator's hot path skips two calls per packet). False unless
    /// the discipline guarantees it.
    fn drops_only_arrivals(&self) -> bool {
        false
    }
    /// Whether a packet offered to the empty discipline and dequeued at once comes
    /// straight back and leaves the discipline as it was (no refusal, no clock, no
    /// credit kept): then a caller may hand such a packet on without the two
    /// calls (the simulator does for every packet that finds an idle access link).
    /// False unless the discipline guarantees it.
    fn empty_passes_through(&self) -> bool {
        false
    }
}

//! The link as a pure state machine: drop-tail queue → rate (constant or a
//! delivery trace) → loss → propagation delay with jitter.
//!
//! Like the queue disciplines it does no I/O and reads no clock: the caller passes
//! the time in, in nanoseconds, never going backwards. The network-namespace
//! emulator drives it with real time and the simulator with its event clock, so a
//! trace means the same thing in both. Every packet gets a fate: refused by the
//! full queue at [`LinkModel::enqueue`], or an [`Outcome`] from [`LinkModel::poll`]
//! with the time it left the bottleneck and the time it arrived (or that it was
//! lost on the way).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::loss::{Loss, LossModel};
use super::trace::{DeliveryTrace, OPPORTUNITY_BYTES};
use crate::rng::{SplitMix64, mix64};
use crate::units::BitRate;

/// How fast the link drains its queue.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkRate {
    /// No limit: packets leave as they arrive.
    Unlimited,
    /// A constant rate: each packet is serialised in turn.
    Constant(BitRate),
    /// A delivery trace (mm-link semantics), starting at its beginning when applied.
    Trace(Arc<DeliveryTrace>),
}

/// The drop-tail queue in front of the rate: the modem's buffer. A packet that does
/// not fit is refused; the packet being transmitted does not count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueLimit {
    /// At most this many bytes wait.
    pub bytes: Option<u64>,
    /// At most this many packets wait.
    pub packets: Option<usize>,
}

/// The demo's TBF bottleneck's bucket: five full frames, like a radio's scheduling
/// grant (`bauxite demo` installs it; `sim robot`'s default step models it).
pub const DEMO_TBF_BURST_BYTES: u64 = 5 * 1514;

/// Everything that defines a link at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// The bottleneck's rate.
    pub rate: LinkRate,
    /// The buffer in front of it.
    pub queue: QueueLimit,
    /// A constant rate as a token bucket of this many bytes (Linux TBF's `burst`):
    /// after an idle moment the link sends this much at once, then at its rate. The
    /// demo's TBF bottleneck holds 5 full packets: a packet that finds the bucket
    /// full leaves at once, where a wire (`None`) serialises every packet in turn.
    pub burst_bytes: Option<u64>,
    /// One-way propagation delay after the bottleneck.
    pub delay: Duration,
    /// Each packet's delay varies uniformly within ± this (never below zero, never reordering).
    pub jitter: Duration,
    /// Loss after the bottleneck (the packet used the link's capacity, then was lost).
    pub loss: LossModel,
    /// Seeds loss and jitter: the same seed and inputs give the same fates.
    pub seed: u64,
}

impl Default for LinkConfig {
    /// An unlimited link with the modem's 100 KB buffer, no delay and no loss.
    fn default() -> Self {
        Self {
            rate: LinkRate::Unlimited,
            queue: QueueLimit { bytes: Some(100_000), packets: None },
            burst_bytes: None,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: LossModel::None,
            seed: 0,
        }
    }
}

/// One change to a running link (a timeline's step, or an API call).
#[derive(Clone, Debug, PartialEq)]
pub enum LinkChange {
    /// A new rate; a trace starts from its beginning.
    Rate(LinkRate),
    /// A new buffer limit (packets already waiting stay).
    Queue(QueueLimit),
    /// A new propagation delay.
    Delay(Duration),
    /// A new jitter.
    Jitter(Duration),
    /// A new loss model (a Gilbert–Elliott chain starts in its good state).
    Loss(LossModel),
}

/// Whether a packet got into the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It waits in the queue (or is already on its way).
    Queued,
    /// The queue was full: dropped at the tail.
    QueueFull,
}

/// What became of an admitted packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The caller's handle for the packet.
    pub token: u64,
    /// Its size in bytes.
    pub len: u32,
    /// When it was enqueued.
    pub enqueued_ns: u64,
    /// When it left the bottleneck (its last byte was carried).
    pub departed_ns: u64,
    /// When it reached the far end; `None` when it was lost on the link.
    pub delivered_ns: Option<u64>,
}

impl Outcome {
    /// When the far end learns of it: its delivery, or its departure when lost.
    fn ready_ns(&self) -> u64 {
        self.delivered_ns.unwrap_or(self.departed_ns)
    }
}

#[derive(Clone, Copy, Debug)]
struct Waiting {
    token: u64,
    len: u32,
    enqueued_ns: u64,
}

#[derive(Clone, Debug)]
enum RateStage {
    Unlimited,
    Constant {
        rate: BitRate,
        /// The packet being serialised and when its last bit is out.
        in_service: Option<(Waiting, u64)>,
        /// When the link finished (or will finish) its last packet.
        free_at_ns: u64,
        /// A token bucket instead of a wire (see [`LinkConfig::burst_bytes`]).
        bucket: Option<Bucket>,
    },
    Trace {
        trace: Arc<DeliveryTrace>,
        start_ns: u64,
        /// The next opportunity's index, counted from `start_ns` across repetitions.
        next: u64,
        /// The packet partly carried by earlier opportunities, and its bytes left.
        in_transit: Option<(Waiting, u32)>,
    },
}

/// TBF's token bucket: `tokens` bytes at `at_ns`, filling at the rate up to `size`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    size: f64,
    tokens: f64,
    at_ns: u64,
}

impl Bucket {
    /// A full bucket at `now_ns`: Linux's `tc qdisc change` of a TBF refills it too.
    fn full(size: u64, now_ns: u64) -> Self {
        Self { size: size as f64, tokens: size as f64, at_ns: now_ns }
    }

    fn tokens_at(&self, rate: BitRate, t_ns: u64) -> f64 {
        let filled = rate.bps() as f64 / 8.0 * t_ns.saturating_sub(self.at_ns) as f64 / 1e9;
        (self.tokens + filled).min(self.size)
    }

    /// When a packet of `len` bytes that may leave from `start_ns` on leaves (its
    /// bytes taken from the bucket then).
    fn take(&mut self, rate: BitRate, start_ns: u64, len: u32) -> u64 {
        let short = f64::from(len) - self.tokens_at(rate, start_ns);
        let wait_ns = if short > 0.0 { (short * 8e9 / rate.bps().max(1) as f64).ceil() as u64 } else { 0 };
        let done = start_ns + wait_ns;
        self.tokens = (self.tokens_at(rate, done) - f64::from(len)).max(0.0);
        self.at_ns = done;
        done
    }
}

/// The drop-tail buffer in front of the rate stage.
#[derive(Clone, Debug)]
struct Buffer {
    limit: QueueLimit,
    packets: VecDeque<Waiting>,
    bytes: u64,
}

impl Buffer {
    fn admits(&self, len: u32) -> bool {
        let over_bytes = self.limit.bytes.is_some_and(|limit| self.bytes + u64::from(len) > limit);
        let over_packets = self.limit.packets.is_some_and(|limit| self.packets.len() >= limit);
        !(over_bytes || over_packets)
    }

    fn push_back(&mut self, packet: Waiting) {
        self.bytes += u64::from(packet.len);
        self.packets.push_back(packet);
    }

    /// A packet whose transmission was abandoned goes back to the head, whole.
    fn push_front(&mut self, packet: Waiting) {
        self.bytes += u64::from(packet.len);
        self.packets.push_front(packet);
    }

    fn pop_front(&mut self) -> Option<Waiting> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.len);
        Some(packet)
    }

    fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

/// What happens after the bottleneck: loss, then delay with jitter that never reorders.
#[derive(Clone, Debug)]
struct AfterBottleneck {
    loss: Loss,
    delay_ns: u64,
    jitter_ns: u64,
    jitter_rng: SplitMix64,
    last_delivery_ns: u64,
    /// Delivered packets in delivery order.
    delivering: VecDeque<Outcome>,
    /// Lost packets in departure order.
    lost: VecDeque<Outcome>,
}

impl AfterBottleneck {
    fn depart(&mut self, packet: Waiting, departed_ns: u64) {
        let mut outcome = Outcome {
            token: packet.token,
            len: packet.len,
            enqueued_ns: packet.enqueued_ns,
            departed_ns,
            delivered_ns: None,
        };
        if self.loss.lose_next() {
            self.lost.push_back(outcome);
            return;
        }
        let jitter = match self.jitter_ns {
            0 => 0,
            j => self.jitter_rng.below(2 * j + 1) as i64 - j as i64,
        };
        let delay = (self.delay_ns as i64 + jitter).max(0) as u64;
        let delivered = (departed_ns + delay).max(self.last_delivery_ns);
        self.last_delivery_ns = delivered;
        outcome.delivered_ns = Some(delivered);
        self.delivering.push_back(outcome);
    }

    /// The earliest outcome known by `now_ns`, in time order across both queues.
    fn pop_ready(&mut self, now_ns: u64) -> Option<Outcome> {
        let delivered = self.delivering.front().map(Outcome::ready_ns).filter(|&t| t <= now_ns);
        let lost = self.lost.front().map(Outcome::ready_ns).filter(|&t| t <= now_ns);
        match (delivered, lost) {
            (Some(d), Some(l)) if l < d => self.lost.pop_front(),
            (Some(_), _) => self.delivering.pop_front(),
            (None, Some(_)) => self.lost.pop_front(),
            (None, None) => None,
        }
    }

    fn next_ready_ns(&self) -> Option<u64> {
        let delivered = self.delivering.front().map(Outcome::ready_ns);
        let lost = self.lost.front().map(Outcome::ready_ns);
        delivered.into_iter().chain(lost).min()
    }
}

/// The link's state. See the module documentation.
#[derive(Clone, Debug)]
pub struct LinkModel {
    rate: RateStage,
    /// The bucket a constant rate gets (kept across rate changes).
    burst_bytes: Option<u64>,
    buffer: Buffer,
    after: AfterBottleneck,
    seed: u64,
    now_ns: u64,
}

impl LinkModel {
    /// A link as `config` says, starting at `now_ns` (a trace starts there).
    pub fn new(config: &LinkConfig, now_ns: u64) -> Self {
        let mut link = Self {
            rate: RateStage::Unlimited,
            burst_bytes: config.burst_bytes,
            buffer: Buffer { limit: config.queue, packets: VecDeque::new(), bytes: 0 },
            after: AfterBottleneck {
                loss: Loss::new(config.loss, mix64(config.seed)),
                delay_ns: duration_ns(config.delay),
                jitter_ns: duration_ns(config.jitter),
                jitter_rng: SplitMix64::new(mix64(config.seed ^ JITTER_STREAM)),
                last_delivery_ns: 0,
                delivering: VecDeque::new(),
                lost: VecDeque::new(),
            },
            seed: config.seed,
            now_ns,
        };
        link.set_rate(config.rate.clone(), now_ns);
        link
    }

    /// A packet of `len` bytes arrives at `now_ns`.
    pub fn enqueue(&mut self, now_ns: u64, token: u64, len: u32) -> Admission {
        self.advance(now_ns);
        if !self.buffer.admits(len) {
            return Admission::QueueFull;
        }
        self.buffer.push_back(Waiting { token, len, enqueued_ns: now_ns });
        self.advance(now_ns);
        Admission::Queued
    }

    /// Moves the link on to `now_ns` and appends, in time order, every outcome known by then.
    pub fn poll(&mut self, now_ns: u64, out: &mut Vec<Outcome>) {
        self.advance(now_ns);
        while let Some(outcome) = self.after.pop_ready(now_ns) {
            out.push(outcome);
        }
    }

    /// When something next happens (a departure or an arrival), for the caller's timer;
    /// `None` when the link is empty.
    pub fn next_event_ns(&self) -> Option<u64> {
        let rate = match &self.rate {
            RateStage::Unlimited => None,
            RateStage::Constant { in_service, .. } => in_service.map(|(_, done)| done),
            RateStage::Trace { trace, start_ns, next, in_transit } => {
                (in_transit.is_some() || !self.buffer.is_empty()).then(|| start_ns + trace.opportunity_ns(*next))
            }
        };
        rate.into_iter().chain(self.after.next_ready_ns()).min()
    }

    /// Applies a change at `now_ns` (after moving the link on to then).
    pub fn apply(&mut self, change: LinkChange, now_ns: u64) {
        self.advance(now_ns);
        match change {
            LinkChange::Rate(rate) => self.set_rate(rate, now_ns),
            LinkChange::Queue(limit) => self.buffer.limit = limit,
            LinkChange::Delay(delay) => self.after.delay_ns = duration_ns(delay),
            LinkChange::Jitter(jitter) => self.after.jitter_ns = duration_ns(jitter),
            LinkChange::Loss(model) => self.after.loss = Loss::new(model, mix64(self.seed ^ now_ns)),
        }
        self.advance(now_ns);
    }

    /// The link's own floor for a packet of `len` bytes arriving at `now_ns` on an
    /// empty link: the wait for the rate (serialisation, or the opportunities that
    /// carry it) plus the propagation delay. Queueing is everything above it.
    pub fn floor_ns(&self, now_ns: u64, len: u32) -> u64 {
        let rate = match &self.rate {
            RateStage::Unlimited => 0,
            // A bucket that waited for this packet is full.
            RateStage::Constant { bucket: Some(_), .. } => 0,
            RateStage::Constant { rate, .. } => duration_ns(rate.transmit_time(u64::from(len))),
            RateStage::Trace { trace, start_ns, .. } => {
                let first = trace.first_after_ns(now_ns.saturating_sub(*start_ns));
                let needed = u64::from(len.max(1).div_ceil(OPPORTUNITY_BYTES));
                (start_ns + trace.opportunity_ns(first + needed - 1)).saturating_sub(now_ns)
            }
        };
        rate + self.after.delay_ns
    }

    /// Packets and bytes waiting in the queue (not counting one in transmission).
    pub fn backlog(&self) -> (usize, u64) {
        (self.buffer.packets.len(), self.buffer.bytes)
    }

    /// The loss model in force.
    pub fn loss_model(&self) -> LossModel {
        self.after.loss.model()
    }

    fn set_rate(&mut self, rate: LinkRate, now_ns: u64) {
        // A packet in transmission goes back to the head of the queue whole: the new
        // rate sends it from its first byte.
        match &mut self.rate {
            RateStage::Constant { in_service, .. } => in_service.take().map(|(p, _)| self.buffer.push_front(p)),
            RateStage::Trace { in_transit, .. } => in_transit.take().map(|(p, _)| self.buffer.push_front(p)),
            RateStage::Unlimited => None,
        };
        self.rate = match rate {
            LinkRate::Unlimited => RateStage::Unlimited,
            LinkRate::Constant(rate) => RateStage::Constant {
                rate,
                in_service: None,
                free_at_ns: now_ns,
                bucket: self.burst_bytes.map(|size| Bucket::full(size, now_ns)),
            },
            LinkRate::Trace(trace) => RateStage::Trace { trace, start_ns: now_ns, next: 0, in_transit: None },
        };
        self.now_ns = now_ns;
    }

    /// Runs the rate stage up to `now_ns`.
    fn advance(&mut self, now_ns: u64) {
        debug_assert!(now_ns >= self.now_ns, "the link's time went backwards: {now_ns} < {}", self.now_ns);
        let now_ns = now_ns.max(self.now_ns);
        self.now_ns = now_ns;
        let (buffer, after) = (&mut self.buffer, &mut self.after);
        match &mut self.rate {
            // Packets leave as they come, or all at once when the rate becomes unlimited.
            RateStage::Unlimited => {
                while let Some(packet) = buffer.pop_front() {
                    after.depart(packet, now_ns);
                }
            }
            RateStage::Constant { rate, in_service, free_at_ns, bucket } => loop {
                if let Some((packet, done)) = *in_service {
                    if done > now_ns {
                        break;
                    }
                    after.depart(packet, done);
                    *in_service = None;
                }
                let Some(packet) = buffer.pop_front() else { break };
                let start = (*free_at_ns).max(packet.enqueued_ns);
                *free_at_ns = match bucket {
                    // TBF: the packet leaves whole once the bucket holds its bytes.
                    Some(bucket) => bucket.take(*rate, start, packet.len),
                    None => start + duration_ns(rate.transmit_time(u64::from(packet.len))),
                };
                *in_service = Some((packet, *free_at_ns));
            },
            RateStage::Trace { trace, start_ns, next, in_transit } => {
                let since_start = now_ns.saturating_sub(*start_ns);
                while in_transit.is_some() || !buffer.is_empty() {
                    let at = *start_ns + trace.opportunity_ns(*next);
                    if at > now_ns {
                        break;
                    }
                    *next += 1;
                    carry_one_opportunity(buffer, after, in_transit, at);
                }
                // An idle link burns its opportunities unused: skip them in one step.
                if in_transit.is_none() && buffer.is_empty() {
                    *next = (*next).max(trace.first_after_ns(since_start));
                }
            }
        }
    }
}

/// mm-link's delivery opportunity at `at_ns`: [`OPPORTUNITY_BYTES`] shared by as many
/// packets as fit; a packet that does not fit takes what is left and waits for the next.
fn carry_one_opportunity(
    buffer: &mut Buffer,
    after: &mut AfterBottleneck,
    in_transit: &mut Option<(Waiting, u32)>,
    at_ns: u64,
) {
    let mut bytes = OPPORTUNITY_BYTES;
    while bytes > 0 {
        let Some((packet, left)) = in_transit.take().or_else(|| buffer.pop_front().map(|p| (p, p.len))) else {
            return;
        };
        if left > bytes {
            *in_transit = Some((packet, left - bytes));
            return;
        }
        bytes -= left;
        after.depart(packet, at_ns);
    }
}

/// Separates the jitter's random stream from the loss model's, both seeded from one seed.
const JITTER_STREAM: u64 = 0x6a17_7e55;

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::loss::GilbertElliott;

    const MS: u64 = 1_000_000;

    fn trace_link(trace: &str, queue: QueueLimit) -> LinkModel {
        let trace = Arc::new(DeliveryTrace::parse(trace).unwrap());
        LinkModel::new(&LinkConfig { rate: LinkRate::Trace(trace), queue, ..LinkConfig::default() }, 0)
    }

    fn drain(link: &mut LinkModel, until_ns: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        link.poll(until_ns, &mut out);
        out
    }

    #[test]
    fn small_packets_share_an_opportunity() {
        let mut link = trace_link("5\n10\n", QueueLimit::default());
        for token in 0..4 {
            assert_eq!(link.enqueue(MS, token, 376), Admission::Queued); // 4 x 376 = 1504
        }
        link.enqueue(MS, 4, 100);
        let out = drain(&mut link, 20 * MS);
        let departed: Vec<(u64, u64)> = out.iter().map(|o| (o.token, o.departed_ns / MS)).collect();
        assert_eq!(departed, [(0, 5), (1, 5), (2, 5), (3, 5), (4, 10)]);
        assert!(out.iter().all(|o| o.delivered_ns == Some(o.departed_ns)), "no delay configured");
    }

    #[test]
    fn a_packet_spanning_opportunities_leaves_with_its_last_byte() {
        let mut link = trace_link("1\n2\n3\n4\n", QueueLimit::default());
        link.enqueue(0, 0, 1000);
        link.enqueue(0, 1, 1500); // 504 bytes in the 1st opportunity, 996 in the 2nd
        link.enqueue(0, 2, 1500); // 508 in the 2nd, 992 in the 3rd
        let out = drain(&mut link, 10 * MS);
        let departed: Vec<u64> = out.iter().map(|o| o.departed_ns / MS).collect();
        assert_eq!(departed, [1, 2, 3]);
        // A jumbo packet of 4000 bytes needs three opportunities.
        link.enqueue(10 * MS, 3, 4000);
        let out = drain(&mut link, 30 * MS);
        // Opportunities after 10 ms: 11, 12 and 13 (the third repetition of 1, 2, 3, 4).
        assert_eq!(out[0].departed_ns / MS, 13);
    }

    #[test]
    fn the_trace_loops_and_idle_opportunities_are_lost() {
        let mut link = trace_link("10\n", QueueLimit::default());
        // Idle for 35 ms: the opportunities at 10, 20, 30 ms go unused.
        link.enqueue(35 * MS, 0, 100);
        link.enqueue(35 * MS, 1, 1500);
        let out = drain(&mut link, 100 * MS);
        let departed: Vec<u64> = out.iter().map(|o| o.departed_ns / MS).collect();
        assert_eq!(departed, [40, 50], "the second packet does not fit in what the first left");
        assert_eq!(link.next_event_ns(), None, "an empty link has nothing to do");
    }

    #[test]
    fn an_arrival_at_an_opportunitys_millisecond_waits_for_the_next() {
        let mut link = trace_link("5\n10\n", QueueLimit::default());
        link.enqueue(5 * MS, 0, 100);
        assert_eq!(drain(&mut link, 20 * MS)[0].departed_ns, 10 * MS, "as mm-link: strictly after");
        assert_eq!(link.floor_ns(20 * MS, 100), 5 * MS, "the floor is the wait for the next opportunity");
        assert_eq!(link.floor_ns(21 * MS, 3000), 9 * MS, "two opportunities: at 25 and 30 ms");
    }

    #[test]
    fn the_drop_tail_queue_counts_waiting_bytes_and_packets() {
        let mut link = trace_link("1000\n", QueueLimit { bytes: Some(3000), packets: None });
        let admitted: Vec<Admission> = (0..4).map(|t| link.enqueue(0, t, 1000)).collect();
        assert_eq!(admitted[..3], [Admission::Queued; 3]);
        assert_eq!(admitted[3], Admission::QueueFull);
        assert_eq!(link.backlog(), (3, 3000));
        let mut link = trace_link("1000\n", QueueLimit { bytes: None, packets: Some(2) });
        let admitted: Vec<Admission> = (0..3).map(|t| link.enqueue(0, t, 60)).collect();
        assert_eq!(admitted, [Admission::Queued, Admission::Queued, Admission::QueueFull]);
    }

    #[test]
    fn a_constant_rate_serialises_packets_in_turn() {
        let config = LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(1_200_000)), // 1500 B = 10 ms
            delay: Duration::from_millis(20),
            ..LinkConfig::default()
        };
        let mut link = LinkModel::new(&config, 0);
        link.enqueue(0, 0, 1500);
        link.enqueue(0, 1, 1500);
        link.enqueue(25 * MS, 2, 1500); // the link is idle from 20 ms
        assert_eq!(link.next_event_ns(), Some(30 * MS), "the first delivery: 10 ms + 20 ms");
        let out = drain(&mut link, 100 * MS);
        let times: Vec<(u64, u64)> = out.iter().map(|o| (o.departed_ns / MS, o.delivered_ns.unwrap() / MS)).collect();
        assert_eq!(times, [(10, 30), (20, 40), (35, 55)]);
        assert_eq!(link.floor_ns(100 * MS, 1500), 30 * MS);
    }

    #[test]
    fn a_token_bucket_sends_its_burst_at_once_then_paces_at_the_rate() {
        let config = LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(1_200_000)), // 1500 B = 10 ms
            burst_bytes: Some(3000),
            ..LinkConfig::default()
        };
        let mut link = LinkModel::new(&config, 0);
        for token in 0..4 {
            link.enqueue(0, token, 1500);
        }
        // Two packets fit the full bucket; the next wait for 1500 B of tokens each.
        link.enqueue(100 * MS, 4, 1500); // by then the bucket is full again
        let out = drain(&mut link, 200 * MS);
        let departed: Vec<u64> = out.iter().map(|o| o.departed_ns / MS).collect();
        assert_eq!(departed, [0, 0, 10, 20, 100]);
        assert_eq!(link.floor_ns(200 * MS, 1500), 0, "a full bucket lets a packet through at once");
        // A rate change refills the bucket, as `tc qdisc change` does to a TBF.
        for token in 5..8 {
            link.enqueue(200 * MS, token, 1500);
        }
        link.apply(LinkChange::Rate(LinkRate::Constant(BitRate::from_bps(600_000))), 200 * MS);
        link.enqueue(200 * MS, 8, 1500);
        link.enqueue(200 * MS, 9, 1500);
        let later: Vec<u64> = drain(&mut link, 400 * MS).iter().map(|o| o.departed_ns / MS).collect();
        // 5 and 6 empty the bucket, 7 waits; the change refills it for 7 and 8.
        assert_eq!(later, [200, 200, 200, 200, 220], "then 20 ms per packet at 0.6 Mbit/s");
    }

    #[test]
    fn timeline_changes_take_effect_when_applied() {
        let mut link = LinkModel::new(&LinkConfig::default(), 0);
        link.enqueue(MS, 0, 1500);
        link.apply(LinkChange::Rate(LinkRate::Constant(BitRate::from_bps(1_200_000))), 2 * MS);
        link.enqueue(3 * MS, 1, 1500);
        link.apply(LinkChange::Delay(Duration::from_millis(50)), 4 * MS);
        link.enqueue(20 * MS, 2, 1500);
        let out = drain(&mut link, 200 * MS);
        let times: Vec<(u64, u64)> = out.iter().map(|o| (o.departed_ns / MS, o.delivered_ns.unwrap() / MS)).collect();
        // Unlimited at 1 ms; then 10 ms of serialisation from 3 ms, departing at 13 ms, after
        // the delay changed at 4 ms: the delay in force at departure applies.
        assert_eq!(times, [(1, 1), (13, 63), (30, 80)]);
    }

    #[test]
    fn a_queue_left_by_a_slower_rate_leaves_when_the_rate_becomes_unlimited() {
        let mut link = trace_link("100\n", QueueLimit::default());
        link.enqueue(MS, 0, 100);
        link.enqueue(2 * MS, 1, 100);
        link.apply(LinkChange::Rate(LinkRate::Unlimited), 50 * MS);
        let departed: Vec<u64> = drain(&mut link, 60 * MS).iter().map(|o| o.departed_ns / MS).collect();
        assert_eq!(departed, [50, 50], "at the change, not before it");
    }

    #[test]
    fn a_partly_sent_packet_restarts_whole_under_a_new_rate() {
        let mut link = trace_link("1\n2\n", QueueLimit::default());
        link.enqueue(0, 0, 4000);
        // Two opportunities carried 3008 of its 4000 bytes by 2 ms; at 2.5 ms the rate becomes
        // 8 Mbit/s, which sends all 4000 bytes again in 4 ms.
        link.apply(LinkChange::Rate(LinkRate::Constant(BitRate::from_bps(8_000_000))), 2 * MS + MS / 2);
        let out = drain(&mut link, 20 * MS);
        assert_eq!(out[0].departed_ns, 6 * MS + MS / 2);
        assert_eq!(link.backlog(), (0, 0));
    }

    fn jittered(spacing_ms: u64, n: u64) -> Vec<Outcome> {
        let config = LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(100_000_000)),
            delay: Duration::from_millis(20),
            jitter: Duration::from_millis(5),
            seed: 7,
            ..LinkConfig::default()
        };
        let mut link = LinkModel::new(&config, 0);
        let mut out = Vec::new();
        for i in 0..n {
            link.enqueue(i * spacing_ms * MS, i, 100);
            link.poll(i * spacing_ms * MS, &mut out);
        }
        link.poll(u64::MAX / 2, &mut out);
        out
    }

    fn delays_ms(out: &[Outcome]) -> Vec<f64> {
        out.iter().map(|o| (o.delivered_ns.unwrap() - o.departed_ns) as f64 / 1e6).collect()
    }

    #[test]
    fn jitter_varies_delay_uniformly_within_its_bounds() {
        // Packets 20 ms apart never meet, so each delay is its own uniform draw.
        let out = jittered(20, 20_000);
        let delays = delays_ms(&out);
        assert!(delays.iter().all(|&d| (15.0..=25.0).contains(&d)), "within 20 ± 5 ms");
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        // Uniform on ±5 ms: sd 2.9 ms, so the mean of 20 000 has a standard error of 0.02 ms.
        assert!((mean - 20.0).abs() < 0.1, "{mean}");
        let below = delays.iter().filter(|&&d| d < 17.5).count() as f64 / delays.len() as f64;
        assert!((below - 0.25).abs() < 0.02, "a quarter below 17.5 ms: {below}");
    }

    #[test]
    fn jitter_never_reorders_packets() {
        // 1 ms apart with ±5 ms of jitter: a packet waits for the one before it.
        let out = jittered(1, 20_000);
        assert_eq!(out.len(), 20_000);
        assert!(out.windows(2).all(|w| w[0].token < w[1].token && w[0].delivered_ns <= w[1].delivered_ns));
        assert!(delays_ms(&out).iter().all(|&d| (15.0..=25.0).contains(&d)), "still within 20 ± 5 ms");
    }

    #[test]
    fn losses_happen_after_the_bottleneck_and_are_reported_in_order() {
        let ge = GilbertElliott { p: 0.05, r: 0.3, loss_bad: 0.9, loss_good: 0.0 };
        let config = LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(12_000_000)),
            loss: LossModel::GilbertElliott(ge),
            delay: Duration::from_millis(10),
            seed: 3,
            ..LinkConfig::default()
        };
        let mut link = LinkModel::new(&config, 0);
        let mut out = Vec::new();
        for i in 0..50_000u64 {
            assert_eq!(link.enqueue(i * MS, i, 1000), Admission::Queued);
            link.poll(i * MS, &mut out);
        }
        link.poll(u64::MAX / 2, &mut out);
        assert_eq!(out.len(), 50_000, "every admitted packet has exactly one outcome");
        let ready: Vec<u64> = out.iter().map(Outcome::ready_ns).collect();
        assert!(ready.windows(2).all(|w| w[0] <= w[1]), "outcomes in time order");
        let lost = out.iter().filter(|o| o.delivered_ns.is_none()).count() as f64 / out.len() as f64;
        assert!((lost - ge.mean_loss()).abs() < 0.15 * ge.mean_loss(), "{lost} vs {}", ge.mean_loss());
        // The same seed, the same fates, packet by packet.
        let fates = |out: &[Outcome]| {
            let mut fates: Vec<(u64, Option<u64>)> =
                out.iter().filter(|o| o.token < 1000).map(|o| (o.token, o.delivered_ns)).collect();
            fates.sort_unstable();
            fates
        };
        let mut link = LinkModel::new(&config, 0);
        let mut again = Vec::new();
        for i in 0..1000u64 {
            link.enqueue(i * MS, i, 1000);
        }
        link.poll(u64::MAX / 2, &mut again);
        assert_eq!(fates(&again), fates(&out));
    }
}

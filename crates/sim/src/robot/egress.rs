//! The robot's egress under the shaper: the profile's lanes as HTB runs them.
//!
//! Each lane is a bounded FIFO (`queue_limit` packets, tail drop) with a
//! guaranteed rate (`Profile::lane_guarantee`: its share of the rate, as the
//! shaper sets HTB's), and may borrow up to the shaped rate. As in HTB,
//! a lane within its own rate (its token bucket not in debt) sends at once, whatever
//! the others do; a lane beyond it sends only while the shaped rate (the parent's
//! bucket) has room, and then the most urgent lane goes first (HTB's `prio`). Every
//! packet is charged to its lane's bucket and to the parent's. Packets leave for
//! the link at once: the robot's own interface is far faster than the link.
//! Buckets hold what the shaper gives HTB's (`Profile::lane_burst_bytes`: the
//! droppable lanes and the parent paced packet by packet at low rates, the others
//! HTB's default); a bucket's debt is bounded by [`DEBT_S`] of its rate.

use std::collections::VecDeque;

use bauxite_control::LaneSample;
use bauxite_core::{BitRate, Profile, paced_burst_bytes};

/// How deep in debt a bucket may go, in time at its rate (at least [`MIN_DEBT_BYTES`]),
/// so that a lane that borrowed long is not locked out of its own rate for long.
const DEBT_S: f64 = 0.01;
/// The least debt allowed: two full-size packets.
const MIN_DEBT_BYTES: f64 = 3000.0;

/// A packet waiting in a lane: the caller's handle and its size.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    /// The caller's handle.
    pub token: u32,
    /// Bytes on the wire.
    pub len: u32,
}

#[derive(Clone, Debug)]
struct Lane {
    queue: VecDeque<Queued>,
    bytes: u64,
    limit: usize,
    /// The lane's guaranteed rate at the current shaped rate.
    guarantee_bps: f64,
    /// What its bucket holds at that rate, bytes.
    burst: f64,
    /// The lane's own bucket, bytes (negative: in debt).
    tokens: f64,
    sent_bytes: u64,
}

/// The lanes and the shaped rate they share.
#[derive(Clone, Debug)]
pub struct Egress {
    profile: Profile,
    lanes: Vec<Lane>,
    rate_bps: f64,
    /// The parent's bucket (the shaped rate), bytes.
    ctokens: f64,
    /// What the parent's bucket holds, bytes.
    cburst: f64,
    refilled_ns: u64,
}

fn debt_bound(rate_bps: f64) -> f64 {
    (rate_bps / 8.0 * DEBT_S).max(MIN_DEBT_BYTES)
}

fn bps(rate_bps: f64) -> BitRate {
    BitRate::from_bps(rate_bps as u64)
}

impl Egress {
    /// The lanes of `profile` shaped at `rate_bps`, buckets full.
    pub fn new(profile: &Profile, rate_bps: f64) -> Self {
        let profile = profile.clone();
        let lanes = profile
            .lanes
            .iter()
            .map(|l| Lane {
                queue: VecDeque::new(),
                bytes: 0,
                limit: l.queue_limit as usize,
                guarantee_bps: 0.0,
                burst: 0.0,
                tokens: 0.0,
                sent_bytes: 0,
            })
            .collect();
        let cburst = paced_burst_bytes(bps(rate_bps)) as f64;
        let mut egress = Self { profile, lanes, rate_bps, ctokens: cburst, cburst, refilled_ns: 0 };
        egress.set_guarantees();
        for lane in &mut egress.lanes {
            lane.tokens = lane.burst;
        }
        egress
    }

    /// A new shaped rate (from `rate: auto`), from `now_ns` on.
    pub fn set_rate(&mut self, now_ns: u64, rate_bps: f64) {
        self.refill(now_ns);
        self.rate_bps = rate_bps.max(1.0);
        self.cburst = paced_burst_bytes(bps(self.rate_bps)) as f64;
        self.set_guarantees();
    }

    /// Each lane's guaranteed rate and bucket at the shaped rate, as the shaper sets HTB's.
    fn set_guarantees(&mut self) {
        let shaped = bps(self.rate_bps);
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let guarantee = self.profile.lane_guarantee(i, shaped);
            lane.guarantee_bps = guarantee.bps() as f64;
            lane.burst = self.profile.lane_burst_bytes(i, guarantee) as f64;
        }
    }

    /// Puts a packet in `lane`; `false` when the lane is full (tail drop).
    pub fn enqueue(&mut self, lane: usize, packet: Queued) -> bool {
        let lane = &mut self.lanes[lane];
        if lane.queue.len() >= lane.limit {
            return false;
        }
        lane.bytes += u64::from(packet.len);
        lane.queue.push_back(packet);
        true
    }

    /// Packets waiting in `lane`.
    pub fn queued_packets(&self, lane: usize) -> usize {
        self.lanes[lane].queue.len()
    }

    /// The next packet allowed to leave at `now_ns`, if any.
    pub fn dequeue(&mut self, now_ns: u64) -> Option<Queued> {
        self.refill(now_ns);
        let backlogged = |l: &&Lane| !l.queue.is_empty();
        let within_rate = self.lanes.iter().position(|l| backlogged(&l) && l.tokens >= 0.0);
        let borrowing = || (self.ctokens >= 0.0).then(|| self.lanes.iter().position(|l| backlogged(&l))).flatten();
        let pick = within_rate.or_else(borrowing)?;
        let rate = self.rate_bps;
        let lane = &mut self.lanes[pick];
        let guarantee = lane.guarantee_bps;
        let packet = lane.queue.pop_front().expect("a backlogged lane");
        lane.bytes -= u64::from(packet.len);
        lane.sent_bytes += u64::from(packet.len);
        // Debt is bounded as HTB bounds it, so a lane that borrowed long is not
        // locked out of its own rate for long afterwards.
        lane.tokens = (lane.tokens - f64::from(packet.len)).max(-debt_bound(guarantee));
        self.ctokens = (self.ctokens - f64::from(packet.len)).max(-debt_bound(rate));
        Some(packet)
    }

    /// When a waiting packet may next leave (now, or when a bucket it needs refills).
    pub fn next_send_ns(&self, now_ns: u64) -> Option<u64> {
        let wait_ns = |deficit: f64, rate_bps: f64| (deficit.max(0.0) * 8.0 / rate_bps.max(1.0) * 1e9).ceil() as u64;
        let parent = wait_ns(-self.ctokens, self.rate_bps);
        self.lanes
            .iter()
            .filter(|l| !l.queue.is_empty())
            .map(|l| wait_ns(-l.tokens, l.guarantee_bps).min(parent))
            .min()
            .map(|wait| self.refilled_ns.max(now_ns) + wait)
    }

    fn refill(&mut self, now_ns: u64) {
        let dt = now_ns.saturating_sub(self.refilled_ns) as f64 / 1e9;
        self.refilled_ns = self.refilled_ns.max(now_ns);
        let rate = self.rate_bps;
        self.ctokens = (self.ctokens + rate / 8.0 * dt).min(self.cburst);
        for lane in &mut self.lanes {
            lane.tokens = (lane.tokens + lane.guarantee_bps / 8.0 * dt).min(lane.burst);
        }
    }

    /// What the shaper's control loop reads about each lane (HTB's class statistics).
    pub fn samples(&self) -> Vec<LaneSample> {
        self.lanes
            .iter()
            .map(|l| LaneSample {
                sent_bytes: l.sent_bytes,
                backlog_bytes: l.bytes,
                backlog_packets: l.queue.len() as u64,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bauxite_core::Profile;

    fn robot() -> Profile {
        Profile::robot()
    }

    /// Drains the egress from `now`, returning (token, departure ns) in order.
    fn drain(e: &mut Egress, mut now: u64) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        while let Some(at) = e.next_send_ns(now) {
            now = at;
            while let Some(q) = e.dequeue(now) {
                out.push((q.token, now));
            }
        }
        out
    }

    #[test]
    fn the_shaped_rate_paces_a_backlog_packet_by_packet() {
        let mut e = Egress::new(&robot(), 1.2e6); // 1500 B = 10 ms
        for t in 0..20 {
            assert!(e.enqueue(2, Queued { token: t, len: 1500 }));
        }
        let out = drain(&mut e, 0);
        assert_eq!(out.len(), 20);
        let last = out[19].1 as f64 / 1e6;
        // One packet leaves at once: the buckets hold 1 ms of their rate (150 bytes
        // for the parent), less than a packet, so the next waits for the parent's
        // debt; the other 28 500 bytes, less the 150, at 1.2 Mbit/s take 189 ms.
        assert!((188.0..=190.0).contains(&last), "the last one left at {last} ms");
        let gaps: Vec<u64> = out.windows(2).map(|w| w[1].1 - w[0].1).collect();
        assert!(gaps.iter().all(|&g| g >= 9_000_000), "never two packets back to back: {gaps:?}");
    }

    #[test]
    fn a_lane_within_its_rate_leaves_at_once_behind_a_borrowing_backlog() {
        let mut e = Egress::new(&robot(), 1.2e6);
        for t in 0..20 {
            e.enqueue(2, Queued { token: t, len: 1500 });
        }
        drain(&mut e, 0);
        for t in 0..20 {
            e.enqueue(2, Queued { token: 100 + t, len: 1500 });
        }
        let now = 200_000_000;
        e.dequeue(now);
        assert!(e.enqueue(0, Queued { token: 999, len: 100 }));
        assert_eq!(e.dequeue(now).map(|q| q.token), Some(999), "critical goes at once, within its own rate");
    }

    #[test]
    fn a_full_lane_drops_at_its_tail() {
        let mut e = Egress::new(&robot(), 1e6);
        let accepted = (0..60).filter(|&t| e.enqueue(2, Queued { token: t, len: 1500 })).count();
        assert_eq!(accepted, 48, "the robot's bulk lane holds 48 packets");
        assert_eq!(e.samples()[2].backlog_packets, 48);
    }
}

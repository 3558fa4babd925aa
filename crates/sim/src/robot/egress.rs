//! The robot's egress under the shaper: the profile's lanes as HTB runs them.
//!
//! Each lane is a bounded FIFO (`queue_limit` packets, tail drop) with a
//! guaranteed rate (`Profile::lane_class`: its share of the rate, as the
//! shaper sets HTB's), and may borrow up to the shaped rate, its ceiling (not while it is
//! held for a silent link: then it keeps its guarantee). As in HTB,
//! a lane within its own rate (its bucket and its ceiling's not in debt) sends at
//! once, whatever the others do; a lane beyond it sends only while the shaped rate
//! (the parent's bucket) has room, and then the most urgent lane goes first (HTB's
//! `prio`). Every packet is charged to its lane's ceiling bucket and to the parent's,
//! and to its lane's own bucket only if it went within the lane's rate. Packets leave
//! for the link at once: the robot's own interface is far faster than the link.
//! Buckets hold what the shaper gives HTB's (`Profile::lane_burst_bytes`: the
//! droppable lanes and the parent paced packet by packet at low rates, the others
//! HTB's default). As HTB's, they hold time, not bytes: a packet costs its
//! transmission time at the rate in force, a bucket refills one nanosecond per
//! nanosecond, and a debt stays what it was when the rate changes, so a debt run up
//! while the lanes were held at `min_rate` (a full packet at 190 kbit/s costs 63 ms)
//! keeps a borrowing lane waiting after the rate goes back up (measured with `tc -s
//! class show` in the namespaces: the link class 58 ms in debt when the rate rose,
//! the video lane's first packet 62 ms later).

use std::collections::VecDeque;

use bauxite_control::LaneSample;
use bauxite_core::{BitRate, Profile, paced_burst_bytes};

/// How deep in debt a bucket may go (HTB's `mbuffer`, one minute), ns.
const MAX_DEBT_NS: f64 = 60e9;

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
    /// Whether it may borrow beyond that (its ceiling is above its guarantee; not
    /// while it is held, `Profile::lane_class`).
    borrows: bool,
    /// What its bucket holds: its burst's time at that rate, ns.
    buffer_ns: f64,
    /// The lane's own bucket, ns (negative: in debt).
    tokens_ns: f64,
    /// Its ceiling's bucket (the ceiling is the shaped rate), ns: charged for every
    /// packet it sends, whichever way; in debt, the lane cannot send at all.
    ctokens_ns: f64,
    sent_bytes: u64,
}

/// The lanes and the shaped rate they share.
#[derive(Clone, Debug)]
pub struct Egress {
    profile: Profile,
    lanes: Vec<Lane>,
    rate_bps: f64,
    /// The parent's bucket (the shaped rate), ns.
    ctokens_ns: f64,
    /// What the parent's bucket holds, ns.
    cbuffer_ns: f64,
    refilled_ns: u64,
}

/// `bytes`' transmission time at `rate_bps`, ns (HTB's `psched_l2t_ns`).
fn time_ns(bytes: f64, rate_bps: f64) -> f64 {
    bytes * 8.0 / rate_bps.max(1.0) * 1e9
}

/// A bucket charged `cost_ns`, its debt bounded as HTB bounds it.
fn charge(tokens_ns: f64, cost_ns: f64) -> f64 {
    (tokens_ns - cost_ns).max(-MAX_DEBT_NS)
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
                borrows: true,
                buffer_ns: 0.0,
                tokens_ns: 0.0,
                ctokens_ns: 0.0,
                sent_bytes: 0,
            })
            .collect();
        let mut egress = Self { profile, lanes, rate_bps, ctokens_ns: 0.0, cbuffer_ns: 0.0, refilled_ns: 0 };
        egress.set_rate(0, rate_bps, false);
        egress.ctokens_ns = egress.cbuffer_ns;
        for lane in &mut egress.lanes {
            lane.tokens_ns = lane.buffer_ns;
            lane.ctokens_ns = egress.cbuffer_ns;
        }
        egress
    }

    /// A new shaped rate (from `rate: auto`), and whether the lanes but lane 0 are
    /// `held`, from `now_ns` on: each lane's class as the shaper sets HTB's.
    pub fn set_rate(&mut self, now_ns: u64, rate_bps: f64, held: bool) {
        self.refill(now_ns);
        self.rate_bps = rate_bps.max(1.0);
        self.cbuffer_ns = time_ns(paced_burst_bytes(bps(self.rate_bps)) as f64, self.rate_bps);
        let shaped = bps(self.rate_bps);
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let class = self.profile.lane_class(i, shaped, held);
            lane.guarantee_bps = class.guarantee.bps() as f64;
            lane.borrows = class.ceil > class.guarantee;
            lane.buffer_ns = time_ns(self.profile.lane_burst_bytes(i, class.guarantee) as f64, lane.guarantee_bps);
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
        let may_send = |l: &&Lane| !l.queue.is_empty() && l.ctokens_ns >= 0.0;
        let within_rate = self.lanes.iter().position(|l| may_send(&l) && l.tokens_ns >= 0.0);
        let borrowing =
            || (self.ctokens_ns >= 0.0).then(|| self.lanes.iter().position(|l| l.borrows && may_send(&l))).flatten();
        let pick = within_rate.or_else(borrowing)?;
        let lane = &mut self.lanes[pick];
        let packet = lane.queue.pop_front().expect("a backlogged lane");
        lane.bytes -= u64::from(packet.len);
        lane.sent_bytes += u64::from(packet.len);
        let len = f64::from(packet.len);
        // HTB charges the class that let the packet go and those above it: a lane
        // within its rate and the parent, or, when it borrows, the parent only.
        if within_rate.is_some() {
            lane.tokens_ns = charge(lane.tokens_ns, time_ns(len, lane.guarantee_bps));
        }
        lane.ctokens_ns = charge(lane.ctokens_ns, time_ns(len, self.rate_bps));
        self.ctokens_ns = charge(self.ctokens_ns, time_ns(len, self.rate_bps));
        Some(packet)
    }

    /// When a waiting packet may next leave (now, or when a bucket it needs refills).
    pub fn next_send_ns(&self, now_ns: u64) -> Option<u64> {
        let wait_ns = |tokens_ns: f64| (-tokens_ns).max(0.0).ceil() as u64;
        let parent = wait_ns(self.ctokens_ns);
        self.lanes
            .iter()
            .filter(|l| !l.queue.is_empty())
            .map(|l| {
                let borrowed = if l.borrows { parent } else { u64::MAX };
                wait_ns(l.ctokens_ns).max(wait_ns(l.tokens_ns).min(borrowed))
            })
            .min()
            .map(|wait| self.refilled_ns.max(now_ns) + wait)
    }

    fn refill(&mut self, now_ns: u64) {
        let dt_ns = now_ns.saturating_sub(self.refilled_ns) as f64;
        self.refilled_ns = self.refilled_ns.max(now_ns);
        self.ctokens_ns = (self.ctokens_ns + dt_ns).min(self.cbuffer_ns);
        for lane in &mut self.lanes {
            lane.tokens_ns = (lane.tokens_ns + dt_ns).min(lane.buffer_ns);
            lane.ctokens_ns = (lane.ctokens_ns + dt_ns).min(self.cbuffer_ns);
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
    fn a_debt_run_up_at_a_low_rate_is_repaid_in_time_after_the_rate_rises() {
        // The lanes held at 190 kbit/s: a full packet costs the parent 63 ms.
        let mut e = Egress::new(&robot(), 190e3);
        e.enqueue(2, Queued { token: 1, len: 1500 });
        e.enqueue(2, Queued { token: 2, len: 1500 });
        assert_eq!(e.dequeue(0).map(|q| q.token), Some(1));
        // 10 ms later the rate goes back up to 2 Mbit/s, where a packet costs 6 ms; the
        // debt is still 53 ms of time, not 6 ms worth of bytes at the new rate.
        e.set_rate(10_000_000, 2e6, false);
        let next = e.next_send_ns(10_000_000).unwrap();
        assert!((60_000_000..=64_000_000).contains(&next), "the second packet may leave at {next} ns");
        assert_eq!(e.dequeue(next).map(|q| q.token), Some(2));
    }

    #[test]
    fn a_full_lane_drops_at_its_tail() {
        let mut e = Egress::new(&robot(), 1e6);
        let accepted = (0..60).filter(|&t| e.enqueue(2, Queued { token: t, len: 1500 })).count();
        assert_eq!(accepted, 48, "the robot's bulk lane holds 48 packets");
        assert_eq!(e.samples()[2].backlog_packets, 48);
    }
}

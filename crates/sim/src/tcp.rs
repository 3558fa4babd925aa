//! TCP as much of it as a bulk sender needs: the `sim robot` video's, and the study's
//! TCP cross traffic (`--tcp-flows`).
//!
//! **The model** is CUBIC (Linux's default, RFC 9438) with selective
//! acknowledgements and ACK clocking: one ACK per segment; slow start, then the cubic
//! window `C·(t − K)³ + W_max` (C = 0.4 segments/s³, its Reno-friendly estimate and
//! fast convergence included, growth at most 1.5× a window per RTT); a segment is lost
//! when one sent after it is acknowledged (the network never reorders, so that is
//! RACK's verdict with no reordering window), which sets the target window to β = 0.7
//! of the window once per window of data, reached by proportional rate reduction
//! ([`Prr`]: the window follows the ACKs down, it does not drop at once); a
//! retransmission timeout (RFC 6298, at least
//! 200 ms as in Linux) restarts from one segment (and the cubic from scratch), resending
//! the oldest segment first (F-RTO, below). A segment the
//! robot's own egress refuses (the shaper's early drop, a full lane) is not sent:
//! as Linux does on `NET_XMIT_DROP`, the window is reduced (CWR) and the segment is
//! tried again at the next ACK (or at the timeout if nothing is in flight). Its
//! bytes stay unsent in the socket, which is what makes the encoder skip frames.
//! TCP small queues ([`Sender::small_queue_limit_bytes`]) are the world's to apply
//! (`World::held_by_small_queues`): they depend on the egress.
//!
//! CUBIC rather than Reno because the namespaces' video runs Linux's CUBIC: Reno's
//! halving and slow refill left the simulated standard stack's modem FIFO emptier
//! (critical excess p95 502 against 818 ms on the Verizon trace).
//!
//! After a timeout only the oldest segment is resent at first (F-RTO, RFC 5682, on in
//! Linux): if an original sent before the timeout is acknowledged next, the timeout
//! was spurious (a slow link, an outage) and the window comes back.
//!
//! The window grows only while it limits the sending (Linux's cwnd validation,
//! [`WindowUsage`]; in slow start also while under twice the packets in flight),
//! slow start ends where HyStart sees the ACKs of a bottleneck or a growing delay
//! ([`HyStart`]), and an unused window is kept as long as ACKs of new data keep
//! coming (Linux halves it only after a timeout without one, [`UnusedWindow`]). The
//! video behind the shaper leaves slow start at 21 segments in its first key frame
//! and keeps that window while application-limited, as Linux's `TCP_INFO` shows
//! (through HTB at 9.5 Mbit/s on a veth pair with the namespaces' one segment per
//! packet: cwnd 21, ssthresh 21, srtt 4–6 ms for 5 s in three runs; the model: 21.5,
//! 21, 4.2–4.7 ms). At the step drop the key frame then puts a whole window, 21
//! packets, into the modem (the namespaces' record: 20–27 packets, critical peaks
//! 150–164 ms; the model's peaks 159–170 ms). CUBIC's clock runs only while data is
//! in flight ([`Epoch`]), so seconds of waiting for frames do not make its cubic
//! leap when the window does fill.
//!
//! **Left out**: the restart from the initial window after idle (the video never
//! idles for a timeout), delayed ACKs, Nagle, TSO/GSO bursts (the namespaces' robot
//! interface sends one segment per packet, `gso_max_segs` 1; with GSO on, Linux's
//! window follows whole frames: 84 segments, still in slow start), pacing, receive
//! windows, the timestamps option (its bytes are in the 52-byte header), and HyStart's
//! one-second blackout of delay samples after a reduction (it matters only to a later
//! HyStart, and that comes only after a timeout, which starts HyStart afresh).

use std::collections::{BTreeMap, VecDeque};

/// Payload bytes per full segment (1500-byte packets with timestamps).
pub const MSS: u32 = 1448;
/// IP and TCP headers with the timestamps option.
pub const HEADER: u32 = 52;
/// A full-size segment's `truesize` in the socket's memory accounting (its 2 KiB
/// buffer and the skb around it): what TCP small queues count.
pub const TRUESIZE: u32 = 2304;
/// The smallest retransmission timeout (Linux's `TCP_RTO_MIN`).
const MIN_RTO_NS: u64 = 200_000_000;
/// The timeout before any RTT is measured (RFC 6298: 1 s).
const INITIAL_RTO_NS: u64 = 1_000_000_000;
/// Linux's initial window.
const INITIAL_WINDOW: f64 = 10.0;
/// CUBIC's multiplicative decrease.
const BETA: f64 = 0.7;
/// CUBIC's scaling constant, segments per s³.
const C: f64 = 0.4;
/// HyStart looks for the end of slow start only from this window on (`hystart_low_window`).
const HYSTART_LOW_WINDOW: f64 = 16.0;
/// ACKs at most this far apart make a train (`hystart_ack_delta_us`).
const HYSTART_ACK_DELTA_NS: u64 = 2_000_000;
/// Round-trip samples a round takes before its delay is judged (`HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// The delay increase that ends slow start: an eighth of the smallest RTT, within these
/// (`HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`).
const HYSTART_DELAY_MIN_NS: u64 = 4_000_000;
const HYSTART_DELAY_MAX_NS: u64 = 16_000_000;
/// The socket's largest GSO packet (`sk_gso_max_size`, 64 KiB by default; the robot's
/// interface limits the segments, not the size): HyStart's ACK-delay allowance counts four.
const GSO_MAX_SIZE: f64 = 65_536.0;

/// One transmission of a range of the byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Transmission number: every (re)transmission has its own.
    pub tx: u64,
    /// First byte of the stream it carries.
    pub start: u64,
    /// Payload bytes.
    pub len: u32,
    /// Whether it carries bytes sent before.
    pub retransmission: bool,
}

impl Segment {
    /// Bytes on the wire.
    pub fn wire_len(&self) -> u32 {
        self.len + HEADER
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    start: u64,
    len: u32,
    sent_ns: u64,
    retransmission: bool,
}

/// A CUBIC congestion-avoidance epoch (from the first ACK after a reduction).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// When it began, moved later by every idle time after it (Linux's
    /// `cubictcp_cwnd_event` on `CA_EVENT_TX_START`: a send with nothing in flight
    /// shifts `epoch_start` by the time since the last send, so the cubic follows the
    /// time spent sending, not the time spent waiting for the application).
    start_ns: u64,
    /// Seconds until the cubic reaches `W_max` again.
    k_s: f64,
    /// The window the cubic starts from and returns to.
    origin: f64,
    /// What Reno would have grown to since (RFC 9438's `W_est`).
    reno: f64,
}

/// The congestion state the first of a run of timeouts replaced.
#[derive(Clone, Copy, Debug)]
struct Undo {
    cwnd: f64,
    ssthresh: f64,
    w_max: f64,
    /// Transmissions before this one were sent before any of the timeouts: only their
    /// ACKs show the timeouts spurious (a resend's ACK shows nothing of the kind).
    before_tx: u64,
}

/// Linux's record of whether the window limits the sending (`tcp_cwnd_validate`),
/// one window of data at a time: an application-limited sender's window does not
/// grow (RFC 7661's concern). A frame-paced video at 50 Mbit/s sends a frame's ten
/// packets and waits for the next frame: its window stays near twice that, and a
/// link that drops to 1.5 Mbit/s receives about that much before ACK clocking holds
/// it, not the hundreds of packets an always-growing window would have.
#[derive(Clone, Copy, Debug, Default)]
struct WindowUsage {
    /// The packets in flight filled the window during this window of data.
    cwnd_limited: bool,
    /// The most packets in flight during this window of data.
    max_packets_out: usize,
    /// The window of data ends when every transmission before this one is acknowledged.
    until_tx: u64,
}

/// A window the application leaves unused (RFC 2861, Linux's
/// `tcp_cwnd_application_limited`): halved toward what was used (at least the
/// initial window) when a retransmission timeout's worth of time has passed since
/// `snd_cwnd_stamp`. Linux moves that stamp when the window limits the sending
/// (`tcp_cwnd_validate`) and also at every ACK that acknowledges data outside a
/// reduction (`tcp_cong_avoid` in tcp_input.c, whether CUBIC then grows the window or
/// not), so a sender whose data is acknowledged keeps its window however little of it
/// is used: the halving comes only after a timeout's worth of time without an ACK of
/// new data. The video's frames, 33 ms apart, are acknowledged long before that, and
/// Linux's window stays where its bursts took it (measured through HTB at 9.5 Mbit/s
/// on a veth pair, `TCP_INFO` every 0.5 ms: 21 segments for 5 s with 3–10 of them in
/// flight, ssthresh 21 from HyStart; 84 with GSO on, in slow start, 10 in flight).
#[derive(Clone, Copy, Debug, Default)]
struct UnusedWindow {
    /// The most packets in flight since `since_ns`.
    used: usize,
    /// Linux's `snd_cwnd_stamp`: when the window last limited, was last halved, or an
    /// ACK of new data last arrived outside a reduction.
    since_ns: u64,
}

/// CUBIC's HyStart (Linux's `hystart_update`, both of its detections on, as by
/// default): in slow start, from a window of 16 on, slow start ends (ssthresh = cwnd)
/// when, within one round of data, the ACKs keep coming at most 2 ms apart for longer
/// than half of the smallest RTT plus an allowance of up to 1 ms (the ACK train: a
/// bottleneck's ACK clock), or when the round's smallest RTT of its first eight
/// samples exceeds the smallest RTT ever by an eighth of it, 4–16 ms (the delay).
/// Behind HTB at 9.5 Mbit/s the ACKs come 1.26 ms apart, so the first round that
/// starts at a window of 16 or more ends slow start at its second ACK: the video's
/// first key frame takes the window from 10 to 20 in its first round and HyStart
/// stops it at 21, as Linux's `TCP_INFO` shows (ssthresh 21, three runs of three).
#[derive(Clone, Copy, Debug, Default)]
struct HyStart {
    /// Slow start was ended (`ca->found`): nothing more to look for until a timeout.
    found: bool,
    /// The smallest RTT sample since the connection, or the last timeout.
    delay_min_ns: Option<u64>,
    /// The round: it ends when a transmission from `round_end_tx` on is acknowledged.
    round_end_tx: u64,
    round_start_ns: u64,
    /// The last ACK of the train.
    last_ack_ns: u64,
    /// The smallest RTT of the round's samples, and how many it took.
    round_min_rtt_ns: u64,
    samples: u32,
}

/// Proportional rate reduction (RFC 6937, Linux's `tcp_cwnd_reduction`): while a
/// reduction is under way the window follows the ACKs down to `ssthresh` (about 0.7
/// segments sent per segment delivered while more is in flight, one more per ACK
/// below it) instead of dropping there at once, so a sender whose window had room
/// does not burst into a queue that is still draining.
#[derive(Clone, Copy, Debug)]
struct Prr {
    /// The window when the reduction began.
    prior_cwnd: f64,
    /// Segments delivered since (`prr_delivered`).
    delivered: u32,
    /// Segments sent since (`prr_out`).
    out: u32,
}

/// The sending side.
#[derive(Clone, Debug)]
pub struct Sender {
    /// Bytes the application wrote.
    written: u64,
    /// The first byte never sent.
    next_new: u64,
    in_flight: BTreeMap<u64, InFlight>,
    /// Ranges to send again, first first.
    lost: VecDeque<(u64, u32)>,
    next_tx: u64,
    cwnd: f64,
    ssthresh: f64,
    /// The window at the last reduction (CUBIC's `W_max`), segments.
    w_max: f64,
    /// The current congestion-avoidance epoch: when it began, its `K` (s) and the
    /// Reno-friendly window estimate.
    epoch: Option<Epoch>,
    /// Losses of transmissions up to this one belong to the current reduction.
    recovery_until: Option<u64>,
    /// The current reduction's pacing of the window ([`Prr`]); none after a timeout.
    prr: Option<Prr>,
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    rto_ns: u64,
    /// Refused by the egress: wait for an ACK (or the timeout) before trying again.
    blocked: bool,
    /// After a timeout, what was in flight: its originals may still arrive
    /// (F-RTO), which would make the timeout spurious.
    suspect: BTreeMap<u64, InFlight>,
    /// The window before the last timeout, put back if it proves spurious.
    undo: Option<Undo>,
    /// How much of the window the current window of data used.
    usage: WindowUsage,
    /// Since the window last limited the sending: the most packets in flight, and when.
    unused: UnusedWindow,
    /// HyStart's search for the end of slow start.
    hystart: HyStart,
    /// When new data or a resend last left (Linux's `lsndtime`).
    last_send_ns: u64,
    /// Bytes acknowledged (in any order).
    pub acked_bytes: u64,
    /// Retransmissions sent.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

impl Default for Sender {
    fn default() -> Self {
        Self {
            written: 0,
            next_new: 0,
            in_flight: BTreeMap::new(),
            lost: VecDeque::new(),
            next_tx: 0,
            cwnd: INITIAL_WINDOW,
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            epoch: None,
            recovery_until: None,
            prr: None,
            srtt_ns: None,
            rttvar_ns: 0.0,
            rto_ns: INITIAL_RTO_NS,
            blocked: false,
            suspect: BTreeMap::new(),
            undo: None,
            usage: WindowUsage::default(),
            unused: UnusedWindow::default(),
            hystart: HyStart::default(),
            last_send_ns: 0,
            acked_bytes: 0,
            retransmissions: 0,
            timeouts: 0,
        }
    }
}

impl Sender {
    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64, now_ns: u64) {
        self.written += bytes;
        self.note_window_usage(now_ns, false);
    }

    /// Bytes the application wrote so far: the stream offset its next write starts at.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Bytes written but never sent (Linux's `SIOCOUTQNSD`): what the encoder watches.
    pub fn unsent(&self) -> u64 {
        self.written - self.next_new
    }

    /// The next segment the window allows, if there is data and no refusal pending.
    /// The caller offers it to the egress and reports [`Sender::sent`] or
    /// [`Sender::refused`].
    pub fn next_segment(&self) -> Option<Segment> {
        if self.blocked || self.in_flight.len() as f64 >= self.cwnd.floor().max(1.0) {
            return None;
        }
        if let Some(&(start, len)) = self.lost.front() {
            return Some(Segment { tx: self.next_tx, start, len, retransmission: true });
        }
        let len = (self.written - self.next_new).min(u64::from(MSS)) as u32;
        (len > 0).then_some(Segment { tx: self.next_tx, start: self.next_new, len, retransmission: false })
    }

    /// `segment` (from [`Sender::next_segment`]) left the host at `now_ns`.
    pub fn sent(&mut self, segment: Segment, now_ns: u64) {
        if self.in_flight.is_empty()
            && let Some(epoch) = self.epoch.as_mut()
        {
            epoch.start_ns = (epoch.start_ns + now_ns.saturating_sub(self.last_send_ns)).min(now_ns);
        }
        self.last_send_ns = now_ns;
        if segment.retransmission {
            self.lost.pop_front();
            self.retransmissions += 1;
        } else {
            self.next_new += u64::from(segment.len);
        }
        self.in_flight.insert(
            segment.tx,
            InFlight {
                start: segment.start,
                len: segment.len,
                sent_ns: now_ns,
                retransmission: segment.retransmission,
            },
        );
        self.next_tx += 1;
        if let Some(prr) = self.prr.as_mut() {
            prr.out += 1;
        }
        self.note_window_usage(now_ns, true);
    }

    /// The host's egress refused the segment: reduce the window once per window of
    /// data (Linux's CWR) and wait for an ACK before trying again.
    pub fn refused(&mut self) {
        self.blocked = true;
        self.reduce();
    }

    /// A reduction is under way: transmissions before its mark are still in flight.
    fn in_recovery(&self) -> bool {
        self.recovery_until.is_some_and(|r| self.in_flight.keys().next().is_some_and(|&first| first < r))
    }

    fn reduce(&mut self) {
        // One reduction at a time, as Linux enters CWR or recovery only from the open state.
        if self.in_recovery() || self.prr.is_some() {
            return;
        }
        // Fast convergence: a window that fell short of the last W_max yields room.
        self.w_max = if self.cwnd < self.w_max { self.cwnd * (1.0 + BETA) / 2.0 } else { self.cwnd };
        self.ssthresh = (self.cwnd * BETA).max(2.0);
        // The window itself follows the ACKs from here ([`Prr`]), as Linux's
        // `tcp_init_cwnd_reduction` leaves it.
        self.prr = Some(Prr { prior_cwnd: self.cwnd, delivered: 0, out: 0 });
        self.epoch = None;
        self.recovery_until = Some(self.next_tx);
    }

    /// Whether a loss below stream offset `start` is still open (not yet resent, or
    /// resent and not yet acknowledged): it holds the cumulative point there.
    fn hole_before(&self, start: u64) -> bool {
        !self.lost.is_empty() || self.in_flight.values().any(|f| f.retransmission && f.start < start)
    }

    /// One segment delivered during a reduction: the window the ACK allows (Linux's
    /// `tcp_cwnd_reduction`, PRR with slow-start reduction bound). `una_advanced`: the
    /// ACK moved the cumulative point and found no new loss.
    fn reduce_on_ack(&mut self, una_advanced: bool) {
        let Some(prr) = self.prr.as_mut() else { return };
        prr.delivered += 1;
        let (in_flight, ssthresh) = (self.in_flight.len() as f64, self.ssthresh.floor());
        let (delivered, out) = (f64::from(prr.delivered), f64::from(prr.out));
        let delta = ssthresh - in_flight;
        let allowed = if delta < 0.0 {
            // More in flight than the target: send in proportion to what is delivered.
            (ssthresh * delivered / prr.prior_cwnd).ceil() - out
        } else {
            // Under it: what was delivered, and one more per ACK, up to the target.
            ((delivered - out).max(1.0) + if una_advanced { 1.0 } else { 0.0 }).min(delta)
        };
        // The first ACK of a reduction always lets one segment go (the fast retransmit).
        let allowed = allowed.max(if prr.out == 0 { 1.0 } else { 0.0 });
        self.cwnd = in_flight + allowed;
    }

    /// Congestion avoidance, one segment acknowledged at `now_ns` (RFC 9438 §4).
    fn cubic_increase(&mut self, now_ns: u64) {
        let (cwnd, w_max) = (self.cwnd, self.w_max);
        let epoch = self.epoch.get_or_insert_with(|| {
            let k_s = if cwnd < w_max { ((w_max - cwnd) / C).cbrt() } else { 0.0 };
            Epoch { start_ns: now_ns, k_s, origin: w_max.max(cwnd), reno: cwnd }
        });
        let rtt_s = self.srtt_ns.unwrap_or(0.0) / 1e9;
        // The cubic one RTT ahead, as the window grows toward it over that RTT.
        let t = now_ns.saturating_sub(epoch.start_ns) as f64 / 1e9 + rtt_s;
        let cubic = (epoch.origin + C * (t - epoch.k_s).powi(3)).min(1.5 * cwnd);
        epoch.reno += 3.0 * (1.0 - BETA) / (1.0 + BETA) / cwnd;
        let target = cubic.max(epoch.reno);
        let step = if target > cwnd { (target - cwnd) / cwnd } else { 0.01 / cwnd };
        // Linux's `bictcp_update`: before any loss (no W_max) at least 5 % per RTT, a
        // twentieth of a segment per ACK, "when the available bandwidth is still unknown".
        self.cwnd += if w_max == 0.0 { step.max(1.0 / 20.0) } else { step };
    }

    /// The ACK of transmission `tx` arrived at `now_ns`, its cumulative point saying
    /// nothing more (the tests' shorthand: every ACK of a run carries one).
    #[cfg(test)]
    fn on_ack(&mut self, tx: u64, now_ns: u64) {
        self.acknowledge(tx, now_ns, true);
    }

    /// The ACK of transmission `tx` arrived at `now_ns`, saying that the receiver has
    /// every byte before `delivered_to` (its cumulative acknowledgement, as every real
    /// ACK carries). A segment wholly before that arrived even if its own ACK was lost
    /// on the way back (a congested reverse queue drops them): it is acknowledged
    /// here, oldest first and without an RTT sample, before `tx`, and not taken for
    /// lost. Ranges waiting to be resent that arrived need not be.
    pub fn on_ack_cumulative(&mut self, tx: u64, delivered_to: u64, now_ns: u64) {
        let covered: Vec<u64> = self
            .in_flight
            .range(..tx)
            .filter(|(_, s)| s.start + u64::from(s.len) <= delivered_to)
            .map(|(&t, _)| t)
            .collect();
        for t in covered {
            self.acknowledge(t, now_ns, false);
        }
        self.lost.retain(|&(start, len)| start + u64::from(len) > delivered_to);
        self.acknowledge(tx, now_ns, true);
    }

    /// Transmission `tx` is acknowledged at `now_ns`; `own_ack`: by its own ACK, whose
    /// timing is its round trip.
    fn acknowledge(&mut self, tx: u64, now_ns: u64, own_ack: bool) {
        self.blocked = false;
        self.judge_timeout(tx);
        let Some(seg) = self.in_flight.remove(&tx) else { return };
        self.acked_bytes += u64::from(seg.len);
        if own_ack && !seg.retransmission {
            let rtt_ns = now_ns.saturating_sub(seg.sent_ns);
            self.rtt_sample(rtt_ns as f64);
            // As Linux: CUBIC's `pkts_acked` (HyStart) before the window's growth.
            self.hystart_update(tx, rtt_ns, now_ns);
        }
        // Everything sent before it and not acknowledged was lost (no reordering).
        let lost: Vec<u64> = self.in_flight.range(..tx).map(|(&t, _)| t).collect();
        if self.prr.is_some() && lost.is_empty() && !self.hole_before(u64::MAX) && !self.in_recovery() {
            // Everything sent before the reduction is delivered: it ends at ssthresh
            // (`tcp_end_cwnd_reduction`).
            self.prr = None;
            self.cwnd = self.ssthresh;
        }
        if !lost.is_empty() {
            for t in lost {
                let l = self.in_flight.remove(&t).expect("in flight");
                self.lost.push_back((l.start, l.len));
            }
            self.reduce();
            self.reduce_on_ack(false);
        } else if self.prr.is_some() {
            self.reduce_on_ack(!self.hole_before(seg.start));
        } else if self.recovery_until.is_none_or(|r| tx >= r) {
            // Linux's `tcp_cong_avoid`: the window may grow, and `snd_cwnd_stamp`
            // moves whether it does or not ([`UnusedWindow`]).
            self.unused.since_ns = now_ns;
            if self.is_cwnd_limited() {
                if self.cwnd < self.ssthresh {
                    self.cwnd += 1.0;
                } else {
                    self.cubic_increase(now_ns);
                }
            }
        }
    }

    /// HyStart ([`HyStart`]) on an ACK of transmission `tx` with an RTT sample, as
    /// Linux's `cubictcp_acked` and `hystart_update`.
    fn hystart_update(&mut self, tx: u64, rtt_ns: u64, now_ns: u64) {
        let rtt_ns = rtt_ns.max(1);
        let delay_min_ns = self.hystart.delay_min_ns.map_or(rtt_ns, |d| d.min(rtt_ns));
        self.hystart.delay_min_ns = Some(delay_min_ns);
        if self.hystart.found || self.cwnd >= self.ssthresh {
            return;
        }
        if tx >= self.hystart.round_end_tx {
            self.hystart_new_round(now_ns);
        }
        if self.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        // `hystart_ack_delay`: what a GSO-sized burst of ACK compression could cost at
        // the pacing rate, at most 1 ms; the threshold is halved, as Linux does when
        // the socket does not pace (no fq below it).
        let allowance_ns = self.pacing_rate_bytes_per_s().map_or(0.0, |r| (4.0 * GSO_MAX_SIZE / r * 1e9).min(1e6));
        let h = &mut self.hystart;
        if now_ns.saturating_sub(h.last_ack_ns) <= HYSTART_ACK_DELTA_NS {
            h.last_ack_ns = now_ns;
            let threshold_ns = (delay_min_ns as f64 + allowance_ns) / 2.0;
            if now_ns.saturating_sub(h.round_start_ns) as f64 > threshold_ns {
                h.found = true;
            }
        }
        h.round_min_rtt_ns = h.round_min_rtt_ns.min(rtt_ns);
        if h.samples < HYSTART_MIN_SAMPLES {
            h.samples += 1;
        } else if h.round_min_rtt_ns
            > delay_min_ns + (delay_min_ns / 8).clamp(HYSTART_DELAY_MIN_NS, HYSTART_DELAY_MAX_NS)
        {
            h.found = true;
        }
        if h.found {
            self.ssthresh = self.cwnd;
        }
    }

    /// A new HyStart round: from the next transmission on (`bictcp_hystart_reset`).
    fn hystart_new_round(&mut self, now_ns: u64) {
        let h = &mut self.hystart;
        h.round_end_tx = self.next_tx;
        (h.round_start_ns, h.last_ack_ns) = (now_ns, now_ns);
        (h.round_min_rtt_ns, h.samples) = (u64::MAX, 0);
    }

    /// After each send, and each write the window holds back: notes whether the
    /// window is full, and the packets in flight, for the current window of data
    /// (Linux's `tcp_cwnd_validate` after each transmit attempt that sent or was
    /// held by the window); then, as Linux does there, halves a window left unused
    /// for a timeout ([`UnusedWindow`]).
    fn note_window_usage(&mut self, now_ns: u64, sent: bool) {
        let packets_out = self.in_flight.len();
        // As `tcp_write_xmit` judges it: the packets in flight fill the window, data
        // waiting or not (after a reduction they exceed it).
        let cwnd_limited = packets_out as f64 >= self.cwnd.floor().max(1.0);
        if !sent && !cwnd_limited {
            return;
        }
        let window_acked = self.in_flight.keys().next().is_none_or(|&first| first >= self.usage.until_tx);
        if window_acked || cwnd_limited || (!self.usage.cwnd_limited && packets_out > self.usage.max_packets_out) {
            self.usage = WindowUsage { cwnd_limited, max_packets_out: packets_out, until_tx: self.next_tx };
        }
        if self.is_cwnd_limited() {
            self.unused = UnusedWindow { used: 0, since_ns: now_ns };
            return;
        }
        self.unused.used = self.unused.used.max(packets_out);
        if now_ns.saturating_sub(self.unused.since_ns) >= self.rto_ns {
            let used = (self.unused.used as f64).max(INITIAL_WINDOW);
            if !self.in_recovery() && self.undo.is_none() && used < self.cwnd {
                // Linux's tcp_current_ssthresh: at least three quarters of the window.
                self.ssthresh = self.ssthresh.max(0.75 * self.cwnd);
                self.cwnd = ((self.cwnd + used) / 2.0).floor();
            }
            self.unused = UnusedWindow { used: 0, since_ns: now_ns };
        }
    }

    /// Whether an ACK may grow the window, as Linux's `tcp_is_cwnd_limited`: the
    /// window filled in this window of data, or, in slow start, it is under twice the
    /// most packets in flight. In congestion avoidance an application-limited window
    /// does not grow (`cubictcp_cong_avoid` returns first): the video, out of slow
    /// start after its first key frame ([`HyStart`]), keeps the window it had there.
    fn is_cwnd_limited(&self) -> bool {
        let slow_start = self.cwnd < self.ssthresh;
        self.usage.cwnd_limited || (slow_start && self.cwnd < 2.0 * self.usage.max_packets_out as f64)
    }

    /// Linux's TCP small queues limit (`tcp_small_queue_check`): the truesize bytes
    /// the socket keeps below it (in the qdisc) before it stops sending. The larger of
    /// two full-size packets and about 1 ms (`sk_pacing_shift` 10) of its pacing rate,
    /// which is 200 % of cwnd × MSS / srtt in slow start (under half of ssthresh) and
    /// 120 % after (`tcp_update_pacing_rate`): at 50 Mbit/s and a round trip under a
    /// millisecond, a whole frame; behind a 1.5 Mbit/s link, two packets. Unlimited
    /// before the first RTT sample, as in Linux.
    pub fn small_queue_limit_bytes(&self) -> f64 {
        let Some(pacing_bytes_per_s) = self.pacing_rate_bytes_per_s() else { return f64::INFINITY };
        (pacing_bytes_per_s / 1024.0).max(2.0 * f64::from(TRUESIZE))
    }

    /// Linux's `sk_pacing_rate` (`tcp_update_pacing_rate`): 200 % of cwnd × MSS / srtt
    /// under half of ssthresh, 120 % above; unknown before the first RTT sample.
    fn pacing_rate_bytes_per_s(&self) -> Option<f64> {
        let srtt_ns = self.srtt_ns?;
        let ratio = if self.cwnd < self.ssthresh / 2.0 { 2.0 } else { 1.2 };
        let packets = self.cwnd.floor().max(self.in_flight.len() as f64);
        Some(ratio * packets * f64::from(MSS) / (srtt_ns / 1e9))
    }

    fn rtt_sample(&mut self, rtt: f64) {
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(rtt);
                self.rttvar_ns = rtt / 2.0;
            }
            Some(srtt) => {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (srtt - rtt).abs();
                self.srtt_ns = Some(0.875 * srtt + 0.125 * rtt);
            }
        }
        let srtt = self.srtt_ns.expect("just set");
        self.rto_ns = ((srtt + 4.0 * self.rttvar_ns) as u64).max(MIN_RTO_NS);
    }

    /// When the retransmission timer fires if nothing is acknowledged: counted from
    /// the oldest transmission in flight.
    pub fn timeout_at(&self) -> Option<u64> {
        self.in_flight.values().next().map(|oldest| oldest.sent_ns + self.rto_ns)
    }

    /// A refused segment with nothing in flight waits for no ACK: Linux tries again
    /// after its probe timer, one retransmission timeout. `None` if that is not the case.
    pub fn retry_after_ns(&self) -> Option<u64> {
        (self.blocked && self.in_flight.is_empty()).then_some(self.rto_ns)
    }

    /// The probe timer fired: try sending again.
    pub fn unblock(&mut self) {
        self.blocked = false;
    }

    /// The retransmission timer fired at `now_ns` (the caller checked [`Sender::timeout_at`]).
    pub fn on_timeout(&mut self, now_ns: u64) {
        self.blocked = false;
        if self.in_flight.is_empty() {
            return;
        }
        self.timeouts += 1;
        // As Linux's CUBIC on entering loss (`bictcp_reset`, `bictcp_hystart_reset`):
        // HyStart looks again, from a new smallest RTT.
        self.hystart = HyStart::default();
        self.hystart_new_round(now_ns);
        // A second timeout before the first was judged: its flight is suspect too,
        // and the window to go back to is the one before the first.
        let mut flight = std::mem::take(&mut self.in_flight);
        flight.append(&mut self.suspect);
        if self.undo.is_none() {
            let before = Undo { cwnd: self.cwnd, ssthresh: self.ssthresh, w_max: self.w_max, before_tx: self.next_tx };
            self.undo = Some(before);
            self.ssthresh = (self.cwnd * BETA).max(2.0);
        }
        // As Linux's CUBIC on entering loss: the cubic starts over (no W_max to return to).
        self.w_max = 0.0;
        self.cwnd = 1.0;
        self.epoch = None;
        self.prr = None;
        self.recovery_until = Some(self.next_tx);
        // F-RTO (RFC 5682, Linux's default): resend only the oldest; the rest waits
        // for the next ACK to say whether the timeout was spurious.
        let (_, oldest) = flight.first_key_value().expect("something was in flight");
        self.lost.push_front((oldest.start, oldest.len));
        self.suspect = flight;
        self.rto_ns = (self.rto_ns * 2).min(60_000_000_000);
    }

    /// After a timeout, the first ACK of something sent says what the timeout was:
    /// an original sent before it arrived, so the link was slow, not lossy (spurious);
    /// a resend arrived first, so the originals were lost (real).
    fn judge_timeout(&mut self, tx: u64) {
        let Some(undo) = self.undo else { return };
        let suspect = self.suspect.remove(&tx);
        if suspect.is_none() && !self.in_flight.contains_key(&tx) {
            return;
        }
        self.undo = None;
        match suspect {
            Some(original) if tx < undo.before_tx => self.timeout_was_spurious(undo, tx, original),
            Some(resend) => {
                self.in_flight.insert(tx, resend);
                self.timeout_was_real();
            }
            None => self.timeout_was_real(),
        }
    }

    /// The window comes back, and what was sent before is in flight again.
    fn timeout_was_spurious(&mut self, undo: Undo, tx: u64, original: InFlight) {
        (self.cwnd, self.ssthresh, self.w_max) = (undo.cwnd, undo.ssthresh, undo.w_max);
        self.epoch = None;
        self.recovery_until = None;
        self.prr = None;
        let suspects = std::mem::take(&mut self.suspect);
        // The oldest's resend, if it has not left yet, is not needed.
        self.lost
            .retain(|&(start, len)| !suspects.values().chain([&original]).any(|s| (s.start, s.len) == (start, len)));
        self.in_flight.extend(suspects);
        self.in_flight.insert(tx, original);
    }

    /// The originals were lost: resend every one not resent already.
    fn timeout_was_real(&mut self) {
        let resent: Vec<(u64, u32)> = self.in_flight.values().map(|f| (f.start, f.len)).collect();
        for seg in std::mem::take(&mut self.suspect).into_values().rev() {
            if !resent.contains(&(seg.start, seg.len)) {
                self.lost.push_front((seg.start, seg.len));
            }
        }
    }
}

/// The receiving side: reassembles the byte stream and says when frames complete.
#[derive(Clone, Debug, Default)]
pub struct Receiver {
    /// Every byte before this one arrived.
    next: u64,
    /// Byte ranges that arrived out of order: start → end.
    out_of_order: BTreeMap<u64, u64>,
}

impl Receiver {
    /// A segment carrying `[start, start + len)` arrived; returns how far the
    /// in-order stream now reaches.
    pub fn on_segment(&mut self, start: u64, len: u32) -> u64 {
        let end = start + u64::from(len);
        if start <= self.next {
            self.next = self.next.max(end);
        } else {
            let slot = self.out_of_order.entry(start).or_insert(end);
            *slot = (*slot).max(end);
        }
        while let Some((&s, &e)) = self.out_of_order.first_key_value() {
            if s > self.next {
                break;
            }
            self.next = self.next.max(e);
            self.out_of_order.pop_first();
        }
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_all(s: &mut Sender, now: u64) -> Vec<Segment> {
        let mut out = Vec::new();
        while let Some(seg) = s.next_segment() {
            s.sent(seg, now);
            out.push(seg);
        }
        out
    }

    #[test]
    fn slow_start_doubles_the_window_each_round_trip() {
        let mut s = Sender::default();
        s.write(100 * u64::from(MSS), 0);
        let first = send_all(&mut s, 0);
        assert_eq!(first.len(), 10, "the initial window");
        for seg in &first {
            s.on_ack(seg.tx, 10_000_000);
        }
        assert_eq!(send_all(&mut s, 10_000_000).len(), 20);
        assert_eq!(s.unsent(), 70 * u64::from(MSS));
    }

    #[test]
    fn a_lost_ack_is_covered_by_the_next_cumulative_one_and_nothing_is_resent() {
        let mut s = Sender::default();
        s.write(100 * u64::from(MSS), 0);
        let first = send_all(&mut s, 0);
        // The ACK of the third segment is lost on the way back; the fourth's says
        // every byte before the fifth arrived.
        let (mut lossy, mut cumulative) = (s.clone(), s.clone());
        for seg in first.iter().take(2) {
            lossy.on_ack(seg.tx, 10_000_000);
            cumulative.on_ack_cumulative(seg.tx, seg.start + u64::from(seg.len), 10_000_000);
        }
        let fourth = first[3];
        lossy.on_ack(fourth.tx, 10_000_000);
        cumulative.on_ack_cumulative(fourth.tx, fourth.start + u64::from(fourth.len), 10_000_000);
        // Per-segment ACKs alone take the third for lost: resent, and the window cut.
        assert_eq!(lossy.next_segment().map(|s| s.retransmission), Some(true));
        assert!(lossy.cwnd < 10.0, "a reduction: {}", lossy.cwnd);
        // The cumulative ACK says it arrived: no resend, and slow start goes on.
        assert_eq!(cumulative.next_segment().map(|s| s.retransmission), Some(false));
        assert_eq!(cumulative.cwnd, 14.0, "ten, and one per segment acknowledged (four)");
        assert_eq!(cumulative.acked_bytes, 4 * u64::from(MSS));
        // A hole is still a hole: a cumulative point before the lost segment changes nothing.
        let mut hole = s.clone();
        hole.on_ack_cumulative(first[5].tx, first[2].start, 10_000_000);
        assert_eq!(hole.next_segment().map(|s| s.retransmission), Some(true), "0–4 unacknowledged: lost");
    }

    /// Frames of `segments` every 10 ms (the round trip) for `rounds`, each
    /// acknowledged before the next.
    fn frames(s: &mut Sender, now: &mut u64, segments: u64, rounds: usize) {
        for _ in 0..rounds {
            s.write(segments * u64::from(MSS), *now);
            let sent = send_all(s, *now);
            *now += 10_000_000;
            for seg in &sent {
                s.on_ack(seg.tx, *now);
            }
        }
    }

    #[test]
    fn an_application_limited_window_grows_to_twice_what_it_sends_and_keeps_it_while_acks_arrive() {
        let (mut s, mut now) = (Sender::default(), 0);
        frames(&mut s, &mut now, 8, 5);
        assert_eq!(s.cwnd, 16.0, "slow start grows it while under twice the 8 in flight, and no further");
        // A keyframe larger than the window: the window limits, and doubles.
        frames(&mut s, &mut now, 40, 1);
        assert_eq!(s.cwnd, 32.0, "cwnd-limited: slow start doubles it");
        // The keyframe's rest and the next frame fill it once more.
        frames(&mut s, &mut now, 8, 1);
        assert_eq!(s.cwnd, 64.0);
        // Ten seconds of regular frames, each acknowledged: every ACK moves Linux's
        // snd_cwnd_stamp, so the unused window is never halved.
        frames(&mut s, &mut now, 8, 1000);
        assert_eq!(s.cwnd, 64.0, "kept while application-limited");
        // A frame whose ACKs do not come for a timeout: the next send halves the
        // window toward what was used, at least the initial window (the model judges
        // at its first segment, 9 then in flight).
        s.write(8 * u64::from(MSS), now);
        send_all(&mut s, now);
        now += s.rto_ns;
        s.write(8 * u64::from(MSS), now);
        send_all(&mut s, now);
        assert_eq!(s.cwnd, 37.0, "(64 + 10) / 2");
    }

    /// 1500-byte packets at 9.5 Mbit/s, HTB's rate above the step's 50 Mbit/s link.
    const HTB_PACKET_NS: u64 = 1_263_158;

    /// Writes `segments` full segments at `now` and runs them through a bottleneck
    /// that starts a packet when it is free (the first at once), one per
    /// `per_packet_ns`, each ACK back `base_ns` after its packet started, until every
    /// segment is acknowledged. Returns the most segments in flight.
    fn through_bottleneck(s: &mut Sender, now: &mut u64, segments: u64, per_packet_ns: u64, base_ns: u64) -> usize {
        s.write(segments * u64::from(MSS), *now);
        let (mut free_at, mut acks, mut most) = (*now, VecDeque::new(), 0);
        loop {
            while let Some(seg) = s.next_segment() {
                s.sent(seg, *now);
                let start = free_at.max(*now);
                free_at = start + per_packet_ns;
                acks.push_back((start + base_ns, seg.tx));
            }
            most = most.max(s.in_flight.len());
            let Some((at, tx)) = acks.pop_front() else { return most };
            *now = at;
            s.on_ack(tx, at);
        }
    }

    #[test]
    fn hystart_ends_slow_start_at_the_ack_train_of_the_first_round_from_16() {
        // The video's first key frame behind HTB at 9.5 Mbit/s: the first round
        // takes the window from 10 to 20; the next round's second ACK, 1.26 ms after
        // its first, is a train longer than half the smallest RTT (0.3 ms) plus the
        // 1 ms allowance: slow start ends at 21, as Linux's TCP_INFO shows.
        let (mut s, mut now) = (Sender::default(), 0);
        through_bottleneck(&mut s, &mut now, 37, HTB_PACKET_NS, 300_000);
        assert_eq!(s.ssthresh, 21.0);
        assert!(s.cwnd >= 21.0 && s.cwnd < 23.0, "congestion avoidance from 21: {}", s.cwnd);
        // Without HyStart the same frame would have left slow start running.
        assert!(s.hystart.found);
    }

    #[test]
    fn hystart_ends_slow_start_when_a_rounds_delay_grows_by_4_ms() {
        // 4 ms per packet (3 Mbit/s): the ACKs are too far apart for a train, but the
        // queue grows the RTT; the second round (from 20) judges its first eight
        // samples at its ninth ACK, all over 0.3 + 4 ms: slow start ends at 28.
        let (mut s, mut now) = (Sender::default(), 0);
        through_bottleneck(&mut s, &mut now, 60, 4_000_000, 300_000);
        assert_eq!(s.ssthresh, 28.0);
        // Packets a twentieth of a millisecond apart with no queue: nothing ends it.
        let (mut s, mut now) = (Sender::default(), 0);
        through_bottleneck(&mut s, &mut now, 60, 0, 300_000);
        assert_eq!(s.ssthresh, f64::INFINITY, "cwnd {}", s.cwnd);
    }

    #[test]
    fn out_of_slow_start_an_application_limited_window_neither_grows_nor_decays() {
        let (mut s, mut now) = (Sender::default(), 0);
        through_bottleneck(&mut s, &mut now, 37, HTB_PACKET_NS, 300_000);
        let window = s.cwnd;
        // Five seconds of the video's regular frames (9–10 segments, 33 ms apart),
        // each through the bottleneck before the next: never cwnd-limited.
        for _ in 0..150 {
            let start = now;
            let most = through_bottleneck(&mut s, &mut now, 10, HTB_PACKET_NS, 300_000);
            assert!(most <= 10, "{most}");
            now = start + 33_333_333;
        }
        assert_eq!(s.cwnd, window);
    }

    #[test]
    fn a_loss_is_found_by_a_later_ack_and_cuts_the_window_once() {
        let mut s = Sender::default();
        s.write(100 * u64::from(MSS), 0);
        let first = send_all(&mut s, 0);
        // Segments 1 and 2 are lost; 0 and 3.. are acknowledged.
        s.on_ack(first[0].tx, 10_000_000);
        for seg in &first[3..] {
            s.on_ack(seg.tx, 10_000_000);
        }
        // 11 after the first ACK, a target of 0.7 of that once for both losses; the
        // window follows the ACKs down to its whole segments ([`Prr`]).
        assert!((s.ssthresh - 7.7).abs() < 1e-9, "{}", s.ssthresh);
        assert_eq!(s.cwnd, 7.0);
        let again = s.next_segment().unwrap();
        assert!(again.retransmission && again.start == u64::from(MSS), "{again:?}");
    }

    /// The window after each RTT of `seconds`, every segment acknowledged one RTT
    /// (100 ms) after it left, from a loss at a window of `w_max`.
    fn windows_after_a_loss(w_max: f64, seconds: f64) -> Vec<f64> {
        let mut s = Sender::default();
        s.write(1 << 40, 0);
        s.ssthresh = w_max;
        s.cwnd = w_max;
        let rtt = 100_000_000;
        let mut now = 0;
        let flight = send_all(&mut s, now);
        now += rtt;
        for seg in &flight[1..] {
            s.on_ack(seg.tx, now);
        }
        assert!((s.cwnd - w_max * 0.7).abs() < 1e-9, "cut to 0.7: {}", s.cwnd);
        // ACK-clocked from here, the window refilled at every ACK: a bulk sender is
        // never idle, so CUBIC's clock runs (an idle one's would stop, [`Epoch`]).
        let mut acks: VecDeque<(u64, u64)> = send_all(&mut s, now).iter().map(|seg| (now + rtt, seg.tx)).collect();
        let (mut windows, mut mark) = (Vec::new(), now + rtt);
        while let Some((at, tx)) = acks.pop_front() {
            while at >= mark {
                windows.push(s.cwnd);
                mark += rtt;
            }
            if at as f64 >= seconds * 1e9 {
                break;
            }
            now = at;
            s.on_ack(tx, now);
            acks.extend(send_all(&mut s, now).iter().map(|seg| (now + rtt, seg.tx)));
        }
        windows
    }

    #[test]
    fn after_a_loss_a_large_window_climbs_back_along_the_cubic() {
        let windows = windows_after_a_loss(1000.0, 14.0);
        let at = |s: f64| windows[(s * 10.0) as usize - 1];
        // K = cbrt(1000 × 0.3 / 0.4) = 9.1 s: concave up to W_max, there about then, convex after.
        assert!(at(2.0) - at(1.0) > at(8.0) - at(7.0), "slower near W_max: {windows:?}");
        assert!((at(9.1) - 1000.0).abs() < 10.0, "back at W_max after K: {}", at(9.1));
        assert!(at(13.0) - at(12.0) > at(10.0) - at(9.0), "faster beyond it: {windows:?}");
    }

    #[test]
    fn a_small_window_grows_at_least_as_reno_would() {
        // At 40 segments and 100 ms the cubic flattens near W_max (K = 3.1 s) while
        // Reno would have grown 0.53 segments per RTT (3·(1 − β)/(1 + β)) since the
        // loss: from about 2.3 s on, RFC 9438's Reno-friendly region takes over.
        let windows = windows_after_a_loss(40.0, 3.5);
        let grown = windows[33] - windows[23];
        assert!((grown - 10.0 * 0.529).abs() < 0.5, "{grown} segments in 10 RTTs: {windows:?}");
    }

    #[test]
    fn before_any_loss_congestion_avoidance_grows_at_least_5_percent_per_rtt() {
        // A bulk sender out of slow start at 40 with no W_max: the cubic from its
        // origin is flat for the first second (0.4 segments), Reno-friendly growth 0.53
        // per RTT; Linux's floor for an unknown bandwidth is 5 % per RTT.
        let mut s = Sender::default();
        s.write(1 << 40, 0);
        (s.cwnd, s.ssthresh) = (40.0, 40.0);
        let rtt = 100_000_000;
        let mut acks: VecDeque<(u64, u64)> = send_all(&mut s, 0).iter().map(|seg| (rtt, seg.tx)).collect();
        while let Some((at, tx)) = acks.pop_front() {
            if at > 10 * rtt {
                break;
            }
            s.on_ack(tx, at);
            acks.extend(send_all(&mut s, at).iter().map(|seg| (at + rtt, seg.tx)));
        }
        assert!(s.cwnd >= 40.0 * 1.05f64.powi(9) && s.cwnd <= 40.0 * 1.05f64.powi(10) + 1.0, "{}", s.cwnd);
    }

    #[test]
    fn time_spent_waiting_for_the_application_does_not_advance_the_cubic() {
        // The video out of slow start at 21, then five seconds of regular frames (never
        // cwnd-limited), then the link drops to 1.5 Mbit/s under a key frame: the
        // window fills and grows along the cubic of the time spent sending (under two
        // seconds: 2–3 segments) and the 5 % floor, not of the five seconds' 50.
        let (mut s, mut now) = (Sender::default(), 0);
        through_bottleneck(&mut s, &mut now, 37, HTB_PACKET_NS, 300_000);
        assert!(s.epoch.is_some(), "the key frame filled the window in congestion avoidance");
        for _ in 0..150 {
            let start = now;
            through_bottleneck(&mut s, &mut now, 10, HTB_PACKET_NS, 300_000);
            now = start + 33_333_333;
        }
        let before = s.cwnd;
        through_bottleneck(&mut s, &mut now, 37, 8_000_000, 300_000);
        assert!(s.cwnd > before && s.cwnd < before + 4.0, "{before} -> {}", s.cwnd);
    }

    #[test]
    fn a_reduction_with_a_full_flight_sends_in_proportion_to_the_acks() {
        let mut s = Sender::default();
        s.write(1000 * u64::from(MSS), 0);
        for seg in send_all(&mut s, 0) {
            s.on_ack(seg.tx, 10_000_000);
        }
        // Slow start doubled the window to 20; 19 leave, the egress refuses the 20th:
        // a target of 14 with 19 in flight.
        let flight: Vec<Segment> = (0..19)
            .map(|_| {
                let seg = s.next_segment().unwrap();
                s.sent(seg, 10_000_000);
                seg
            })
            .collect();
        assert!(s.next_segment().is_some(), "room for a 20th");
        s.refused();
        let mut sent = 0;
        for seg in &flight[..10] {
            s.on_ack(seg.tx, 20_000_000);
            sent += send_all(&mut s, 20_000_000).len();
        }
        // 0.7 per segment delivered (a window cut at once would have sent 5: nothing
        // until the flight fell under 14, then one per ACK).
        assert_eq!(sent, 7);
        for seg in &flight[10..] {
            s.on_ack(seg.tx, 30_000_000);
            send_all(&mut s, 30_000_000);
        }
        // Everything sent before the refusal delivered: the reduction ends at its target.
        assert_eq!(s.cwnd, 14.0);
        assert!(s.prr.is_none());
    }

    #[test]
    fn a_refused_segment_stays_unsent_until_an_ack() {
        let mut s = Sender::default();
        s.write(3 * u64::from(MSS), 0);
        let seg = s.next_segment().unwrap();
        s.sent(seg, 0);
        let refused = s.next_segment().unwrap();
        s.refused();
        assert_eq!(s.next_segment(), None, "blocked until an ACK");
        assert_eq!(s.unsent(), 2 * u64::from(MSS));
        s.on_ack(seg.tx, 5_000_000);
        assert_eq!(s.next_segment().unwrap().start, refused.start, "the same bytes, tried again");
    }

    #[test]
    fn a_timeout_resends_the_oldest_segment_from_a_window_of_one() {
        let mut s = Sender::default();
        s.write(5 * u64::from(MSS), 0);
        send_all(&mut s, 0);
        assert_eq!(s.timeout_at(), Some(INITIAL_RTO_NS));
        s.on_timeout(INITIAL_RTO_NS);
        let seg = s.next_segment().unwrap();
        assert!(seg.retransmission && seg.start == 0);
        s.sent(seg, INITIAL_RTO_NS);
        assert_eq!(s.next_segment(), None, "a window of one");
    }

    #[test]
    fn a_timeout_the_originals_answer_was_spurious_and_is_undone() {
        let mut s = Sender::default();
        s.write(20 * u64::from(MSS), 0);
        send_all(&mut s, 0);
        s.on_timeout(INITIAL_RTO_NS);
        assert_eq!(s.cwnd, 1.0);
        // The link was only slow: the first original's ACK comes after the timeout.
        s.on_ack(0, INITIAL_RTO_NS + 1);
        assert_eq!(s.cwnd, 11.0, "the window of before, and the ACK's slow-start segment");
        let next = s.next_segment().unwrap();
        assert!(!next.retransmission && next.start == 10 * u64::from(MSS), "new data, no resend: {next:?}");
    }

    #[test]
    fn a_timeout_the_resend_answers_first_was_real_and_everything_is_resent() {
        let mut s = Sender::default();
        s.write(20 * u64::from(MSS), 0);
        send_all(&mut s, 0);
        s.on_timeout(INITIAL_RTO_NS);
        let resend = s.next_segment().unwrap();
        assert!(resend.retransmission && resend.start == 0);
        s.sent(resend, INITIAL_RTO_NS);
        assert_eq!(s.next_segment(), None, "F-RTO resends only the oldest first");
        s.on_ack(resend.tx, INITIAL_RTO_NS + 1);
        assert_eq!(s.cwnd, 2.0, "no undo: slow start from one");
        let next = s.next_segment().unwrap();
        assert!(next.retransmission && next.start == u64::from(MSS), "the rest is resent in order: {next:?}");
    }

    #[test]
    fn after_two_timeouts_the_first_resends_ack_shows_a_real_loss() {
        let mut s = Sender::default();
        s.write(20 * u64::from(MSS), 0);
        let originals = send_all(&mut s, 0);
        s.on_timeout(INITIAL_RTO_NS);
        let first_resend = s.next_segment().unwrap();
        s.sent(first_resend, INITIAL_RTO_NS);
        s.on_timeout(INITIAL_RTO_NS);
        let second_resend = s.next_segment().unwrap();
        assert_eq!((second_resend.start, second_resend.retransmission), (0, true));
        s.sent(second_resend, 3 * INITIAL_RTO_NS);
        // The first resend arrives: the originals were lost, not slow.
        s.on_ack(first_resend.tx, 3 * INITIAL_RTO_NS + 1);
        assert_eq!(s.cwnd, 1.0, "no undo to the window of before");
        assert_eq!(s.next_segment(), None, "a window of one, the second resend in flight");
        s.on_ack(second_resend.tx, 3 * INITIAL_RTO_NS + 1);
        let next = s.next_segment().unwrap();
        assert!(next.retransmission && next.start == u64::from(MSS), "the second original is resent: {next:?}");
        // Segment 0 is not sent a third time: both its resends arrived.
        let mut resends = Vec::new();
        while let Some(seg) = s.next_segment() {
            s.sent(seg, 3 * INITIAL_RTO_NS + 2);
            resends.push(seg.start / u64::from(MSS));
        }
        assert!(!resends.contains(&0), "{resends:?}");
        assert_eq!(originals.len(), 10);
    }

    #[test]
    fn the_receiver_reassembles_out_of_order_ranges() {
        let mut r = Receiver::default();
        assert_eq!(r.on_segment(0, 100), 100);
        assert_eq!(r.on_segment(200, 100), 100, "a hole");
        assert_eq!(r.on_segment(100, 100), 300, "filled");
        assert_eq!(r.on_segment(0, 100), 300, "a duplicate changes nothing");
    }
}

//! The event loop of one phase: robot apps → the profile's lanes (or nothing, for
//! the standard stack) → the modem's link → base, and the return path of ACKs and
//! probe answers.
//!
//! Every component is a state machine driven by the simulated clock: the link is
//! `bauxite_core::link::LinkModel`, the lanes [`Egress`], the video's TCP
//! [`tcp::Sender`], the shaper's control laws `bauxite_control`'s. The loop keeps
//! one pending wake-up per component (a stale one is recognised by its time and
//! skipped), so a run costs a few events per packet.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use bauxite_control::{Controller, CountedAt, RateController, SilenceHold};
use bauxite_core::link::{Admission, LinkModel, Outcome};
use bauxite_core::rng::{SplitMix64, mix64};
use bauxite_core::{BitRate, PacketKey, RateSetting};

use super::egress::{Egress, Queued};
use super::{Phase, PhaseTrace, RateMode, RobotConfig};
use crate::tcp::{self, Segment};
use bauxite_core::figures::CapacitySchedule;

/// UDP and IP headers on a message.
const UDP_HEADER: u32 = 28;
/// A rate probe on the wire (a 16-byte probe in UDP).
const PROBE_LEN: u32 = 16 + UDP_HEADER;
/// How long a change of the link-rate estimate takes to reach HTB: the daemon runs
/// `tc -batch` in its poll, after the poll's answers, and sleeps its poll interval
/// only after it. Measured in the namespaces' debug logs (`RUST_LOG=bauxite_shaper=debug`,
/// the Verizon trace, 4 trials of 131–183 changes): from the poll's last answer to
/// the change logged, medians 2.2–3.0 ms, p90 3.1–3.9 ms.
const TC_LATENCY: Duration = Duration::from_millis(3);
// The largest packet (the video's full segments) is the link's full packet.
const _: () = assert!(tcp::MSS + tcp::HEADER == bauxite_core::figures::FULL_PACKET_BYTES);
/// How long the network may drain after the senders stop: later arrivals are losses.
pub const DRAIN: Duration = Duration::from_secs(2);
/// The width of the time series' bins.
pub use bauxite_core::figures::BIN_NS;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    ApplyRate,
    Stream(u16),
    Frame,
    Poll,
    /// A probe of the never-dropped reference, on its own rhythm (no shaper polls it).
    Probe,
    Step(u32),
    Egress,
    Link,
    /// The ACK of a transmission, with the receiver's cumulative point then.
    Ack {
        tx: u64,
        delivered_to: u64,
    },
    ProbeReply(u64),
    /// On the downlink: a packet the link delivered reaches the robot's ingress shaper.
    Ingress(u32),
    /// On the downlink: a probe sent at this time reaches the reflector, whose answer
    /// enters the link.
    Reflect(u64),
    Rto,
    Retry,
}

#[derive(Clone, Copy, Debug)]
enum What {
    /// A message of a UDP stream; `record` indexes the phase's critical messages.
    Message {
        stream: u16,
        seq: u32,
        record: Option<u32>,
    },
    Probe,
    Segment(Segment),
}

#[derive(Clone, Copy, Debug)]
struct Packet {
    what: What,
    sent_ns: u64,
    len: u32,
}

/// A frame written to the socket, waiting for its last byte to arrive.
#[derive(Clone, Copy, Debug)]
struct PendingFrame {
    end: u64,
    capture_ns: u64,
    bytes: u32,
}

/// How the shaper's link rate is set in a shaped phase.
enum RateSource {
    /// Given, for the whole phase.
    Fixed,
    /// `rate: auto`: the shaper's own controller.
    Auto(Box<RateController>),
    /// The clairvoyant reference: the link's own capacity over the next base RTT
    /// plus [`CLAIRVOYANT_LOOKAHEAD`], read from the link's description.
    Clairvoyant(CapacitySchedule),
}

/// How far beyond one base RTT the clairvoyant reference looks: issue 27's 100 ms,
/// about what a bulk packet admitted now takes to reach the far end through a
/// queue a shaper should keep.
pub const CLAIRVOYANT_LOOKAHEAD: Duration = Duration::from_millis(100);

/// The shaper's state in a protected phase.
struct Shaper {
    egress: Egress,
    controller: Controller,
    rate: RateSource,
    /// The link rate last decided (on its way to HTB, or there).
    egress_rate: BitRate,
    /// When the lanes but lane 0 are held (`rate: auto`'s silence), and what the last
    /// poll decided.
    silence: SilenceHold,
    drop_probability: Vec<f64>,
    droppable: Vec<bool>,
    rng: SplitMix64,
    /// The fraction of the link rate the lanes are shaped to (the profile's, or on the
    /// downlink `ingress.headroom`).
    headroom: f64,
}

struct World<'a> {
    config: &'a RobotConfig,
    phase: Phase,
    now: u64,
    end_ns: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    link: LinkModel,
    link_armed: Option<u64>,
    egress_armed: Option<u64>,
    rto_armed: Option<u64>,
    shaper: Option<Shaper>,
    /// The profile's `direction: down`: the streams go base → robot, and the shaper is at
    /// the robot's ingress, after the link (what `up` does on the downlink's IFB device).
    downlink: bool,
    /// On the downlink, the bytes that reached the ingress shaper: what its `rate: auto`
    /// counts ([`bauxite_control::CountedAt::Exit`]).
    arrived_bytes: u64,
    packets: Vec<Option<Packet>>,
    free: Vec<u32>,
    sender: tcp::Sender,
    receiver: tcp::Receiver,
    frames: VecDeque<PendingFrame>,
    stream_lanes: Vec<usize>,
    video_lane: usize,
    stream_offsets: Vec<u64>,
    video_offset: u64,
    /// Probe answers (sent, received ns) since the last poll: the daemon reads them at its polls.
    answers: Vec<(u64, u64)>,
    /// A new link-rate estimate, and whether the lanes are held, on its way to HTB
    /// ([`TC_LATENCY`]).
    pending_rate: Option<(BitRate, bool)>,
    /// The control loop's first poll: the daemon starts at no particular time
    /// relative to the link's changes, so its polls (and probes) fall anywhere in a
    /// poll interval of a drop.
    poll_offset: u64,
    return_ns: u64,
    outcomes: Vec<Outcome>,
    trace: PhaseTrace,
}

/// Runs one phase, or one of the references.
pub fn run_phase(config: &RobotConfig, phase: Phase) -> PhaseTrace {
    let mut world = World::new(config, phase);
    world.start();
    while let Some(Reverse((t, _, ev))) = world.heap.pop() {
        if t > world.end_ns + duration_ns(DRAIN) {
            break;
        }
        world.now = t;
        world.handle(ev);
    }
    world.trace
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl<'a> World<'a> {
    fn new(config: &'a RobotConfig, phase: Phase) -> Self {
        let shaped = matches!(phase, Phase::Protected | Phase::Clairvoyant);
        let mut rng = SplitMix64::new(mix64(config.seed ^ 0x5eed_0b07));
        let workload = &config.workload;
        let profile = &config.profile;
        let stream_lanes = workload.streams.iter().map(|s| profile.lane_of(&PacketKey::udp(40_000, s.port))).collect();
        // Seed k's streams start where the demo's trial k starts them.
        let phased = workload.clone().with_trial_phases(config.seed);
        let stream_offsets = phased.streams.iter().map(|s| duration_ns(s.phase)).collect();
        let video_offset = rng.below((1e9 / f64::from(workload.video.fps)) as u64);
        let mut link_config = config.link.clone();
        link_config.seed = link_config.seed.wrapping_add(config.seed);
        let mut trace = PhaseTrace::default();
        let shaper = shaped.then(|| {
            let (shaper, link_rate) = new_shaper(config, phase, &mut rng);
            trace.link_rate.push((0, link_rate.bps()));
            shaper
        });
        // Drawn last, so that every other draw of the seed is what it was before.
        let poll_offset = rng.below(duration_ns(profile.profile().congestion.poll_interval).max(1));
        Self {
            config,
            phase,
            now: 0,
            end_ns: duration_ns(config.duration),
            seq: 0,
            heap: BinaryHeap::new(),
            link: LinkModel::new(&link_config, 0),
            link_armed: None,
            egress_armed: None,
            rto_armed: None,
            shaper,
            downlink: profile.direction == bauxite_core::Direction::Down,
            arrived_bytes: 0,
            packets: Vec::new(),
            free: Vec::new(),
            sender: tcp::Sender::default(),
            receiver: tcp::Receiver::default(),
            frames: VecDeque::new(),
            stream_lanes,
            video_lane: profile.lane_of(&PacketKey::tcp(40_001, workload.video_port)),
            stream_offsets,
            video_offset,
            answers: Vec::new(),
            pending_rate: None,
            poll_offset,
            return_ns: duration_ns(config.return_delay()),
            outcomes: Vec::new(),
            trace,
        }
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        debug_assert!(at >= self.now, "{ev:?} scheduled at {at} ns, before now ({} ns)", self.now);
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn start(&mut self) {
        let never_dropped_only = self.phase == Phase::NeverDropped;
        let profile = &self.config.profile.profile();
        for i in 0..self.config.workload.streams.len() {
            if never_dropped_only && profile.lanes[self.stream_lanes[i]].drop_when_congested {
                continue;
            }
            self.schedule(self.stream_offsets[i], Ev::Stream(i as u16));
        }
        if never_dropped_only {
            // The probes `rate: auto` would send, at the daemon's start offset.
            if self.config.rate == RateMode::Auto {
                self.schedule(self.poll_offset, Ev::Probe);
            }
        } else {
            self.schedule(self.video_offset, Ev::Frame);
        }
        for (i, (at, _)) in self.config.timeline.steps.iter().enumerate() {
            self.schedule(duration_ns(*at), Ev::Step(i as u32));
        }
        if self.shaper.is_some() {
            self.schedule(self.poll_offset, Ev::Poll);
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::ApplyRate => {
                if let Some((rate, held)) = self.pending_rate.take() {
                    self.set_link_rate(rate, held);
                }
            }
            Ev::Stream(i) => self.send_message(usize::from(i)),
            Ev::Frame => self.capture_frame(),
            Ev::Poll => self.poll_shaper(),
            Ev::Probe => {
                self.send_probe();
                let next = self.now + duration_ns(self.config.profile.profile().auto_rate.probe_interval);
                if next < self.end_ns {
                    self.schedule(next, Ev::Probe);
                }
            }
            Ev::Step(i) => {
                let change = self.config.timeline.steps[i as usize].1.clone();
                self.link.apply(change, self.now);
                self.arm_link();
            }
            Ev::Egress if self.egress_armed == Some(self.now) => self.serve_egress(),
            Ev::Link if self.link_armed == Some(self.now) => self.serve_link(),
            Ev::Egress | Ev::Link => {}
            Ev::Ack { tx, delivered_to } => {
                self.sender.on_ack_cumulative(tx, delivered_to, self.now);
                self.pump_tcp();
            }
            Ev::ProbeReply(sent_ns) => self.probe_answered(sent_ns),
            Ev::Ingress(slot) => self.reach_ingress(slot),
            Ev::Reflect(sent_ns) => {
                let slot = self.alloc(Packet { what: What::Probe, sent_ns, len: PROBE_LEN });
                self.enter_link(slot);
            }
            Ev::Rto if self.rto_armed == Some(self.now) => {
                self.rto_armed = None;
                if self.sender.timeout_at().is_some_and(|at| at <= self.now) {
                    self.sender.on_timeout(self.now);
                }
                self.pump_tcp();
            }
            Ev::Rto => {}
            Ev::Retry => {
                self.sender.unblock();
                self.pump_tcp();
            }
        }
    }

    fn alloc(&mut self, packet: Packet) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.packets[slot as usize] = Some(packet);
                slot
            }
            None => {
                self.packets.push(Some(packet));
                (self.packets.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, slot: u32) -> Packet {
        self.free.push(slot);
        self.packets[slot as usize].take().expect("a live packet")
    }

    // ---- the robot's applications -------------------------------------------------

    fn send_message(&mut self, i: usize) {
        let spec = &self.config.workload.streams[i];
        let period = 1e9 / spec.rate_hz;
        let seq = ((self.now - self.stream_offsets[i]) as f64 / period).round() as u32;
        let next = self.stream_offsets[i] + ((f64::from(seq) + 1.0) * period) as u64;
        if next < self.end_ns {
            self.schedule(next, Ev::Stream(i as u16));
        }
        let len = spec.size as u32 + UDP_HEADER;
        let lane = self.stream_lanes[i];
        let record = (lane == 0).then(|| {
            // A full packet just ahead of it on the link: the wait no scheduler avoids.
            let (floor_ns, head_of_line_ns) = bauxite_core::figures::critical_floor(&self.link, self.now, len);
            self.trace.critical.push(super::CriticalMessage {
                sent_ns: self.now,
                latency_ns: None,
                floor_ns,
                head_of_line_ns,
            });
            (self.trace.critical.len() - 1) as u32
        });
        let slot = self.alloc(Packet { what: What::Message { stream: i as u16, seq, record }, sent_ns: self.now, len });
        self.emit(slot, lane);
    }

    fn capture_frame(&mut self) {
        let video = &self.config.workload.video;
        let period = 1e9 / f64::from(video.fps);
        let n = self.trace.video_offered;
        let next = self.video_offset + ((f64::from(n) + 1.0) * period) as u64;
        if next < self.end_ns {
            self.schedule(next, Ev::Frame);
        }
        self.trace.video_offered += 1;
        if self.sender.unsent() > video.unsent_limit() as u64 {
            self.trace.video_skipped += 1;
            return;
        }
        let bytes = video.frame_size(n) as u32;
        self.sender.write(u64::from(bytes), self.now);
        let end = self.sender.written();
        self.frames.push_back(PendingFrame { end, capture_ns: self.now, bytes });
        self.pump_tcp();
    }

    /// Sends what the video's window allows.
    fn pump_tcp(&mut self) {
        while let Some(segment) = self.sender.next_segment() {
            if self.held_by_small_queues() {
                break;
            }
            let slot = self.alloc(Packet { what: What::Segment(segment), sent_ns: self.now, len: segment.wire_len() });
            let lane = self.video_lane;
            let behind_shaper = self.shaper.is_some() && !self.downlink;
            if behind_shaper && !self.enter_egress(slot, lane) {
                self.release(slot);
                self.sender.refused();
                if let Some(after) = self.sender.retry_after_ns() {
                    self.schedule(self.now + after, Ev::Retry);
                }
                break;
            }
            self.sender.sent(segment, self.now);
            if !behind_shaper {
                self.enter_link(slot);
            }
        }
        // A timer already due (the timeout shrank with a new RTT sample) fires now:
        // an event in the past would run the world backwards.
        if let Some(at) = self.sender.timeout_at().map(|at| at.max(self.now))
            && self.rto_armed.is_none_or(|armed| at < armed)
        {
            self.rto_armed = Some(at);
            self.schedule(at, Ev::Rto);
        }
    }

    /// Linux's TCP small queues: a socket keeps at most its limit in the qdisc under it
    /// ([`tcp::Sender::small_queue_limit_bytes`]) and the rest waits in the socket until
    /// one leaves. On a congested link that is two full-size packets: the video's lane
    /// in the shaper holds a packet or two, its backlog stays in the socket where the
    /// encoder sees it, and the shaper's early drop never has a queue to act on (the
    /// namespaces' shaper drops no video packet). On a fast, near link it is a whole
    /// frame: the frame enters the lane at once, and the window grows to hold it.
    fn held_by_small_queues(&self) -> bool {
        let limit = self.sender.small_queue_limit_bytes();
        // On the downlink the sender's qdisc is the far end's, not the shaper's lanes.
        !self.downlink
            && self
                .shaper
                .as_ref()
                .is_some_and(|s| (s.egress.queued_packets(self.video_lane) as f64) * f64::from(tcp::TRUESIZE) >= limit)
    }

    /// A rate probe, sent at a poll when the controller says one is due (as the daemon does).
    fn send_probe(&mut self) {
        if self.downlink {
            // Up the uncongested return path; the answer comes back over the link.
            self.schedule(self.now + self.return_ns, Ev::Reflect(self.now));
            return;
        }
        let slot = self.alloc(Packet { what: What::Probe, sent_ns: self.now, len: PROBE_LEN });
        // The shaper puts its probes in the most urgent lane, ahead of every rule.
        self.emit(slot, 0);
    }

    // ---- the robot's egress --------------------------------------------------------

    /// A UDP packet leaves the robot: through the lanes, or straight to the link.
    fn emit(&mut self, slot: u32, lane: usize) {
        if self.shaper.is_none() || self.downlink {
            self.enter_link(slot);
        } else if !self.enter_egress(slot, lane) {
            let packet = self.release(slot);
            self.lost(packet);
        }
    }

    /// Offers a packet to its lane: `false` if the shaper discarded it early or the
    /// lane was full.
    fn enter_egress(&mut self, slot: u32, lane: usize) -> bool {
        let len = self.packets[slot as usize].expect("a live packet").len;
        let shaper = self.shaper.as_mut().expect("a shaped phase");
        let p = shaper.drop_probability[lane];
        if shaper.droppable[lane] && p > 0.0 && shaper.rng.next_f64() < p {
            self.trace.bulk_dropped_packets += 1;
            return false;
        }
        if !shaper.egress.enqueue(lane, Queued { token: slot, len }) {
            return false;
        }
        self.arm_egress();
        true
    }

    fn arm_egress(&mut self) {
        let Some(shaper) = &self.shaper else { return };
        if let Some(at) = shaper.egress.next_send_ns(self.now)
            && self.egress_armed.is_none_or(|armed| at < armed)
        {
            self.egress_armed = Some(at);
            self.schedule(at, Ev::Egress);
        }
    }

    fn serve_egress(&mut self) {
        self.egress_armed = None;
        let shaper = self.shaper.as_mut().expect("a shaped phase");
        if let Some(q) = shaper.egress.dequeue(self.now) {
            if self.downlink {
                let packet = self.release(q.token);
                self.arrive(packet, self.now);
                self.arm_egress();
                return;
            }
            let segment = matches!(self.packets[q.token as usize].map(|p| p.what), Some(What::Segment(_)));
            self.enter_link(q.token);
            if segment {
                // Room under the small-queue limit: the socket sends on.
                self.pump_tcp();
            }
        }
        self.arm_egress();
    }

    // ---- the link and the base -----------------------------------------------------

    fn enter_link(&mut self, slot: u32) {
        let len = self.packets[slot as usize].expect("a live packet").len;
        if self.link.enqueue(self.now, u64::from(slot), len) == Admission::QueueFull {
            let packet = self.release(slot);
            self.lost(packet);
        }
        self.arm_link();
    }

    fn arm_link(&mut self) {
        if let Some(at) = self.link.next_event_ns()
            && self.link_armed.is_none_or(|armed| at < armed)
        {
            self.link_armed = Some(at.max(self.now));
            self.schedule(at.max(self.now), Ev::Link);
        }
    }

    fn serve_link(&mut self) {
        self.link_armed = None;
        let mut outcomes = std::mem::take(&mut self.outcomes);
        self.link.poll(self.now, &mut outcomes);
        for outcome in outcomes.drain(..) {
            let slot = outcome.token as u32;
            match outcome.delivered_ns {
                // On the downlink the robot's shaper is between the link and the apps.
                Some(at) if self.downlink && self.shaper.is_some() => {
                    self.schedule(at.max(self.now), Ev::Ingress(slot))
                }
                Some(at) => {
                    let packet = self.release(slot);
                    self.arrive(packet, at);
                }
                None => {
                    let packet = self.release(slot);
                    self.lost(packet);
                }
            }
        }
        self.outcomes = outcomes;
        self.arm_link();
    }

    /// On the downlink: a packet the link delivered enters the robot's ingress lanes (its
    /// lane by its stream, as the classifier decides), counted as arrived first.
    fn reach_ingress(&mut self, slot: u32) {
        let packet = self.packets[slot as usize].expect("a live packet");
        self.arrived_bytes += u64::from(packet.len);
        let lane = match packet.what {
            What::Message { stream, .. } => self.stream_lanes[usize::from(stream)],
            What::Probe => 0,
            What::Segment(_) => self.video_lane,
        };
        if !self.enter_egress(slot, lane) {
            let packet = self.release(slot);
            self.lost(packet);
        }
    }

    /// A packet reaches the base at `at` (on the downlink: the robot's apps).
    fn arrive(&mut self, packet: Packet, at: u64) {
        let bin = (at / BIN_NS) as usize;
        match packet.what {
            What::Message { stream, seq, record } => {
                if let Some(r) = record {
                    self.trace.critical[r as usize].latency_ns = Some(at - packet.sent_ns);
                }
                let port = self.config.workload.streams[usize::from(stream)].port;
                if port == self.config.workload.correction_port {
                    self.trace.corrections.push((at, seq, packet.sent_ns));
                }
                add_at(&mut self.trace.other_bytes, bin, packet.len);
            }
            What::Probe => {
                add_at(&mut self.trace.other_bytes, bin, packet.len);
                // On the downlink this is the answer itself, at the robot.
                let answered = if self.downlink { at } else { at + self.return_ns };
                self.schedule(answered, Ev::ProbeReply(packet.sent_ns));
            }
            What::Segment(segment) => {
                add_at(&mut self.trace.video_bytes, bin, packet.len);
                let reach = self.receiver.on_segment(segment.start, segment.len);
                while self.frames.front().is_some_and(|f| f.end <= reach) {
                    let f = self.frames.pop_front().expect("a frame");
                    self.trace.frames.push(super::FrameDelivery {
                        capture_ns: f.capture_ns,
                        arrived_ns: at,
                        bytes: f.bytes,
                    });
                }
                self.schedule(at + self.return_ns, Ev::Ack { tx: segment.tx, delivered_to: reach });
            }
        }
    }

    fn lost(&mut self, packet: Packet) {
        // A lost message keeps no latency; a lost segment is found by the sender's ACKs.
        if let What::Message { .. } = packet.what {
            self.trace.lost_messages += 1;
        }
    }

    // ---- the shaper's control loop ---------------------------------------------------

    /// One poll of the daemon's loop (`Daemon::step`): the lanes' counters, the probe
    /// if due, the congested state, then the link-rate controller with the bytes sent,
    /// every answer received since the last poll and the time; a new estimate reaches
    /// HTB [`TC_LATENCY`] later, and the next poll sleeps the poll interval after that.
    fn poll_shaper(&mut self) {
        let mut next = self.now + duration_ns(self.config.profile.profile().congestion.poll_interval);
        let now = Duration::from_nanos(self.now);
        let answers = std::mem::take(&mut self.answers);
        let shaper = self.shaper.as_mut().expect("a shaped phase");
        let samples = shaper.egress.samples();
        // As the daemon does: the probe leaves right after the counters are read.
        let probe_due = match &mut shaper.rate {
            RateSource::Auto(auto) => auto.probe_due(now),
            RateSource::Fixed | RateSource::Clairvoyant(_) => false,
        };
        if self.now < self.end_ns && probe_due {
            self.send_probe();
        }
        let shaper = self.shaper.as_mut().expect("a shaped phase");
        shaper.controller.hold(shaper.silence.held());
        shaper.controller.observe(now, &samples);
        let verdicts = shaper.controller.verdicts();
        for (p, v) in shaper.drop_probability.iter_mut().zip(&verdicts) {
            *p = v.drop_probability;
        }
        let was_held = shaper.silence.held();
        let new_rate = match &mut shaper.rate {
            RateSource::Fixed => None,
            // As the daemon does: the lanes' sent bytes, the answers, then the time.
            RateSource::Auto(auto) => {
                // As the daemon does: the probes' lane 0's own queue is not the link's.
                auto.on_own_queue(verdicts[0].queue_delay);
                let counted =
                    if self.downlink { self.arrived_bytes } else { samples.iter().map(|s| s.sent_bytes).sum() };
                auto.on_sent(now, counted);
                // As the daemon does: what the lanes never dropped were offered (here what
                // they sent and hold; they drop nothing but at their queue's limit).
                let lanes = &self.config.profile.profile().lanes;
                let never_dropped = samples
                    .iter()
                    .zip(lanes)
                    .filter(|(_, lane)| !lane.drop_when_congested)
                    .map(|(s, _)| s.sent_bytes + s.backlog_bytes)
                    .sum();
                let mut new_rate = auto.on_never_dropped(now, never_dropped);
                for (sent_ns, received_ns) in answers {
                    let answer = auto.on_answer(Duration::from_nanos(sent_ns), Duration::from_nanos(received_ns));
                    new_rate = answer.or(new_rate);
                }
                let new_rate = auto.on_tick(now).or(new_rate);
                let phase = auto.phase(now).name();
                if self.trace.rate_phase.last().is_none_or(|(_, last)| *last != phase) {
                    self.trace.rate_phase.push((self.now, phase));
                }
                shaper.silence.update(auto.silent_for(now).is_some(), self.config.profile.profile(), &samples);
                new_rate
            }
            RateSource::Clairvoyant(capacity) => {
                let backlog = self.link.backlog().1;
                let rate = clairvoyant_rate(capacity, self.config, self.now, self.return_ns, backlog);
                (shaper.egress_rate != rate).then_some(rate)
            }
        };
        let held = shaper.silence.held();
        if new_rate.is_some() || held != was_held {
            let rate = new_rate.unwrap_or(shaper.egress_rate);
            shaper.egress_rate = rate;
            self.pending_rate = Some((rate, held));
            self.schedule(self.now + duration_ns(TC_LATENCY), Ev::ApplyRate);
            next += duration_ns(TC_LATENCY);
        }
        if next < self.end_ns + duration_ns(DRAIN) {
            self.schedule(next, Ev::Poll);
        }
    }

    /// An answer to a probe: the daemon's prober stamps it on arrival (the kernel's
    /// receive time) and the controller takes it at the next poll.
    fn probe_answered(&mut self, sent_ns: u64) {
        self.answers.push((sent_ns, self.now));
    }

    fn set_link_rate(&mut self, link_rate: BitRate, held: bool) {
        let shaper = self.shaper.as_mut().expect("a shaped phase");
        let shaped = link_rate.scaled(shaper.headroom);
        shaper.egress.set_rate(self.now, shaped.bps() as f64, held);
        shaper.controller.set_link_rate(shaped);
        self.trace.link_rate.push((self.now, link_rate.bps()));
        self.arm_egress();
    }
}

/// The clairvoyant's link rate at `now_ns`: what the link will carry over the next
/// base RTT (the return path's delay twice) plus [`CLAIRVOYANT_LOOKAHEAD`], less
/// the `backlog_bytes` already waiting in its queue, within the bounds `rate: auto`
/// keeps to. Shaping to the capacity alone would keep forever a queue an outage
/// left (what goes in would equal what comes out).
fn clairvoyant_rate(
    capacity: &CapacitySchedule,
    config: &RobotConfig,
    now_ns: u64,
    return_ns: u64,
    backlog_bytes: u64,
) -> BitRate {
    let policy = &config.profile.profile().auto_rate;
    let window_ns = 2 * return_ns + duration_ns(CLAIRVOYANT_LOOKAHEAD);
    let room = (capacity.bytes_between(now_ns, now_ns + window_ns) - backlog_bytes as f64).max(0.0);
    let bps = room * 8.0 / (window_ns as f64 / 1e9);
    let bps = if bps.is_finite() { bps.min(u64::MAX as f64) as u64 } else { u64::MAX };
    BitRate::from_bps(bps).clamp(policy.min_rate, policy.max_rate)
}

/// The shaper at the start of a phase, and the link rate it starts from.
fn new_shaper(config: &RobotConfig, phase: Phase, rng: &mut SplitMix64) -> (Shaper, BitRate) {
    // On the downlink, the profile as the ingress shaper runs it (its headroom).
    let ingress = config.profile.for_ingress();
    let counted_at = if ingress.is_some() { CountedAt::Exit } else { CountedAt::Entry };
    let profile = ingress.as_ref().unwrap_or(&config.profile).profile();
    let (rate, link_rate) = match (phase, config.rate) {
        (Phase::Clairvoyant, _) => {
            let capacity = CapacitySchedule::new(&config.link, &config.timeline);
            let start = clairvoyant_rate(&capacity, config, 0, duration_ns(config.return_delay()), 0);
            (RateSource::Clairvoyant(capacity), start)
        }
        (_, RateMode::Auto) => {
            let auto = RateController::new(&profile.auto_rate).with_headroom(profile.headroom).counted_at(counted_at);
            let start = auto.rate();
            (RateSource::Auto(Box::new(auto)), start)
        }
        (_, RateMode::Fixed(rate)) => (RateSource::Fixed, rate),
    };
    let shaped = profile.shaped_rate(link_rate);
    // The lanes' guarantees depend on the rate's mode, as the shaper's do.
    let mut lanes = profile.clone();
    lanes.rate = match (phase, config.rate) {
        (Phase::Clairvoyant, _) | (_, RateMode::Auto) => RateSetting::Auto,
        (_, RateMode::Fixed(rate)) => RateSetting::Fixed(rate),
    };
    let shaper = Shaper {
        egress: Egress::new(&lanes, shaped.bps() as f64),
        controller: Controller::new(profile, shaped),
        rate,
        egress_rate: link_rate,
        silence: SilenceHold::default(),
        drop_probability: vec![0.0; profile.lanes.len()],
        droppable: profile.lanes.iter().map(|l| l.drop_when_congested).collect(),
        rng: SplitMix64::new(rng.next_u64()),
        headroom: profile.headroom,
    };
    (shaper, link_rate)
}

fn add_at(bins: &mut Vec<u64>, bin: usize, bytes: u32) {
    if bins.len() <= bin {
        bins.resize(bin + 1, 0);
    }
    bins[bin] += u64::from(bytes);
}

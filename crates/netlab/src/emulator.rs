//! The link emulator: `bauxite_core::link`'s model, run on real packets in the
//! link namespace.
//!
//! This kernel has no netem, so the link is emulated in userspace: the namespace
//! stops forwarding IPv4 itself (`ip_forward = 0`, which drops transit packets
//! silently, without ICMP), and one thread reads every IPv4 frame that arrives on
//! its two interfaces through packet sockets, puts it through the uplink
//! (robot → base) or downlink (base → robot) model, and sends it out of the other
//! interface when the model delivers it, as a router would (next hop's MAC, TTL
//! minus one). ARP stays with the kernel. A packet's size on the link is its IPv4
//! length plus 4 bytes, as mm-link counts its TUN packets, so a trace means the same
//! here as in mahimahi.
//!
//! In [`Forwarding::Bridged`] mode it is a cable instead of a router: every Ethernet
//! frame (ARP, multicast, IPv6, anything) is carried unchanged between the two
//! interfaces, so hosts on both sides share one L2 segment and multicast discovery
//! (DDS's SPDP) crosses it; a frame's size on the link is then its Ethernet length.
//!
//! Every packet's fate can be recorded (arrival, departure, delivery, or which drop),
//! and either direction can be changed while running, the uplink by a [`Timeline`],
//! either by [`LinkEmulator::apply_to`]. Where a kernel has netem, it can stand in for the
//! constant-rate case; README compares the two.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use bauxite_core::link::{Admission, LinkChange, LinkConfig, LinkModel, Outcome, Timeline};
use bauxite_sys::{Netns, monotonic_ns};

use crate::NetlabError;
use crate::packet_socket::{PacketSocket, VNET_HDR_LEN, become_a_link, wait_readable};

const ETH_HDR_LEN: usize = 14;
/// mm-link counts a packet with its 4-byte TUN header (so does the raw-IP testbed).
pub(crate) const TUN_HDR_LEN: u32 = 4;
/// The longest the loop sleeps, so that a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// Large enough for any frame a veth hands over with GSO off (and a 64 KB one with it on).
const FRAME_BUFFER: usize = VNET_HDR_LEN + ETH_HDR_LEN + 65_535;

/// One side of the emulated link: the link namespace's interface and the MACs a
/// router would use on it (unused when bridging: see [`Port::bridged`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// The interface in the link namespace.
    pub iface: String,
    /// Its own MAC (the source of frames sent out of it).
    pub mac: [u8; 6],
    /// The MAC of the host on its other end (the destination of those frames).
    pub peer_mac: [u8; 6],
}

impl Port {
    /// A port of a bridging emulator: frames go out as they came in, so no MAC is needed.
    pub fn bridged(iface: impl Into<String>) -> Self {
        Self { iface: iface.into(), mac: [0; 6], peer_mac: [0; 6] }
    }
}

/// Which way a packet crosses the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Robot → base (first port → second port): the constrained uplink.
    Uplink,
    /// Base → robot (second port → first port).
    Downlink,
}

/// How the emulator passes frames on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Forwarding {
    /// As a router: IPv4 only, next hop's MAC, TTL minus one; ARP stays with the kernel.
    #[default]
    Routed,
    /// As a cable between two L2 segments: every frame, unchanged.
    Bridged,
}

/// What happened to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Refused by the full drop-tail queue on arrival.
    QueueFull,
    /// Left the bottleneck, then was lost.
    Lost {
        /// When it left the bottleneck.
        departed_ns: u64,
    },
    /// Delivered: sent out of the far interface at `sent_ns` (the model said `delivered_ns`).
    Delivered {
        /// When it left the bottleneck.
        departed_ns: u64,
        /// When the model delivered it.
        delivered_ns: u64,
        /// When the emulator actually sent it on (≥ `delivered_ns`: its own latency).
        sent_ns: u64,
    },
    /// Still in the link when the emulator stopped.
    InFlight,
    /// Its TTL ran out at the emulator (a router's drop), after crossing the link.
    TtlExpired,
}

/// One packet's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFate {
    /// Its direction.
    pub direction: Direction,
    /// When the emulator read it (`CLOCK_MONOTONIC` ns).
    pub arrived_ns: u64,
    /// Its size on the link (IPv4 length + 4).
    pub len: u32,
    /// What became of it.
    pub fate: Fate,
}

impl PacketFate {
    /// Its wait at the bottleneck, from its arrival to its departure (queue and
    /// transmission), in ms; `None` if it never left (refused, still in the link).
    pub fn wait_ms(&self) -> Option<f64> {
        match self.fate {
            Fate::Lost { departed_ns } | Fate::Delivered { departed_ns, .. } => {
                Some(departed_ns.saturating_sub(self.arrived_ns) as f64 / 1e6)
            }
            Fate::QueueFull | Fate::InFlight | Fate::TtlExpired => None,
        }
    }
}

/// Counters per direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionCounters {
    /// IPv4 packets read (each gets exactly one fate).
    pub arrived: u64,
    /// Frames read that are not IPv4 packets (too short, or another version): not
    /// carried, and not counted as arrived (routed mode only: bridging carries them).
    pub not_ipv4: u64,
    /// Packets whose TTL ran out here: dropped, as a router drops them.
    pub ttl_expired: u64,
    /// Packets refused by the full queue.
    pub queue_full: u64,
    /// Packets lost on the link.
    pub lost: u64,
    /// Packets sent on.
    pub delivered: u64,
    /// Bytes (link size) sent on.
    pub delivered_bytes: u64,
}

/// What a stopped emulator reports.
#[derive(Clone, Debug, Default)]
pub struct EmulatorReport {
    /// When it started (`CLOCK_MONOTONIC` ns); timelines count from here.
    pub start_ns: u64,
    /// Robot → base.
    pub uplink: DirectionCounters,
    /// Base → robot.
    pub downlink: DirectionCounters,
    /// Every packet's fate, in the order fates became known, when recording was asked for.
    pub fates: Vec<PacketFate>,
    /// Frames that could not be sent on (the far interface refused them).
    pub send_errors: u64,
    /// Whether the emulator's thread ran at a real-time priority (see README: without
    /// it, a busy machine adds its scheduling delays to every packet).
    pub realtime: bool,
}

/// How to emulate.
#[derive(Clone, Debug, Default)]
pub struct EmulatorConfig {
    /// Robot → base.
    pub uplink: LinkConfig,
    /// Base → robot (by default unlimited, no delay, no loss).
    pub downlink: LinkConfig,
    /// Changes to the uplink at given times from the start.
    pub timeline: Timeline,
    /// Keep every packet's fate in the report.
    pub record_fates: bool,
    /// Also send every packet's fate here as it becomes known (for a record written
    /// while the link runs, [`crate::shell::FateLog`]); the sender is dropped when the
    /// emulator stops.
    pub fate_log: Option<Sender<PacketFate>>,
    /// Route IPv4 (the default) or bridge every frame.
    pub forwarding: Forwarding,
}

/// A running emulator; stop it with [`LinkEmulator::stop`] (dropping it stops it too).
pub struct LinkEmulator {
    stop: Arc<AtomicBool>,
    /// Changes, each with its direction and the time it was asked for (`CLOCK_MONOTONIC` ns).
    changes: Sender<(Direction, LinkChange, u64)>,
    thread: Option<JoinHandle<Result<EmulatorReport, NetlabError>>>,
    start_ns: u64,
}

impl LinkEmulator {
    /// Starts emulating in `ns` between `robot_side` and `base_side`; when routing, it
    /// stops the namespace's own IPv4 forwarding so the emulator is the only way
    /// through. When bridging, neither interface may be a port of a Linux bridge or hold
    /// an address: the emulator alone carries what arrives on them.
    pub fn start(ns: &Netns, robot_side: Port, base_side: Port, config: EmulatorConfig) -> Result<Self, NetlabError> {
        // Bridging needs no switch: its interfaces hold no address, so the kernel
        // routes nothing between them (and a bridge in a namespace that routes, the
        // host's own, must leave its forwarding alone).
        let routed = config.forwarding == Forwarding::Routed;
        if routed {
            ns.sysctl("net.ipv4.ip_forward", "0")?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (changes, changes_rx) = channel();
        let (ready_tx, ready_rx) = channel();
        let thread = {
            let stop = stop.clone();
            ns.spawn(move || {
                let all = config.forwarding == Forwarding::Bridged;
                let sockets = (PacketSocket::open(&robot_side.iface, all), PacketSocket::open(&base_side.iface, all));
                let (robot, base) = match sockets {
                    (Ok(robot), Ok(base)) => (robot, base),
                    (Err(e), _) | (_, Err(e)) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return Err(NetlabError::socket("opening the emulator's packet sockets")(e));
                    }
                };
                let realtime = become_a_link();
                let start_ns = monotonic_ns();
                let _ = ready_tx.send(Ok(start_ns));
                let mut emulator = Emulator::new(config, start_ns, [robot_side, base_side], [robot, base]);
                emulator.report.realtime = realtime;
                emulator.run(&stop, &changes_rx)
            })
        };
        match ready_rx.recv() {
            Ok(Ok(start_ns)) => Ok(Self { stop, changes, thread: Some(thread), start_ns }),
            _ => {
                let result = thread.join();
                if routed {
                    ns.sysctl("net.ipv4.ip_forward", "1")?;
                }
                match result {
                    Ok(Err(e)) => Err(e),
                    _ => Err(NetlabError::Emulator("its thread ended before it started".into())),
                }
            }
        }
    }

    /// When the emulator started (`CLOCK_MONOTONIC` ns).
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// Changes the uplink now (the API form of a timeline step): at the time of this
    /// call, not when the emulator's thread next wakes (up to 20 ms later while the
    /// link is idle), unless the thread's clock has moved past it since (it moves at
    /// each wake, so by at most the few microseconds between two of its reads). A
    /// trace applied so starts at the caller's clock, and floors computed from that
    /// time line up with its delivery opportunities.
    pub fn apply(&self, change: LinkChange) {
        self.apply_to(Direction::Uplink, change);
    }

    /// Changes one direction's link now, with [`LinkEmulator::apply`]'s timing.
    pub fn apply_to(&self, direction: Direction, change: LinkChange) {
        let _ = self.changes.send((direction, change, monotonic_ns()));
    }

    /// Stops the emulator and returns its report. The namespace does not forward
    /// again by itself: the testbed that owns it decides.
    pub fn stop(mut self) -> Result<EmulatorReport, NetlabError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<EmulatorReport, NetlabError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| NetlabError::Emulator("its thread panicked".into()))?,
            None => Ok(EmulatorReport::default()),
        }
    }
}

impl Drop for LinkEmulator {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// A frame waiting in a model, and where it goes.
struct InFlight {
    direction: Direction,
    arrived_ns: u64,
    frame: Vec<u8>,
}

/// The emulator's loop state, on its own thread.
struct Emulator {
    models: [LinkModel; 2],
    ports: [Port; 2],
    sockets: [PacketSocket; 2],
    in_flight: HashMap<u64, InFlight>,
    next_token: u64,
    report: EmulatorReport,
    record: bool,
    fate_log: Option<Sender<PacketFate>>,
    timeline: Timeline,
    /// Timeline steps applied so far.
    applied: usize,
    outcomes: Vec<Outcome>,
    /// The models' clock: the time of their last operation (they never run backwards).
    clock_ns: u64,
    forwarding: Forwarding,
}

impl Emulator {
    fn new(config: EmulatorConfig, start_ns: u64, ports: [Port; 2], sockets: [PacketSocket; 2]) -> Self {
        Self {
            models: [LinkModel::new(&config.uplink, start_ns), LinkModel::new(&config.downlink, start_ns)],
            ports,
            sockets,
            in_flight: HashMap::new(),
            next_token: 0,
            report: EmulatorReport { start_ns, ..EmulatorReport::default() },
            record: config.record_fates,
            fate_log: config.fate_log,
            timeline: config.timeline,
            applied: 0,
            outcomes: Vec::new(),
            clock_ns: start_ns,
            forwarding: config.forwarding,
        }
    }

    fn run(
        &mut self,
        stop: &AtomicBool,
        changes: &Receiver<(Direction, LinkChange, u64)>,
    ) -> Result<EmulatorReport, NetlabError> {
        let fds = [self.sockets[0].as_raw_fd(), self.sockets[1].as_raw_fd()];
        let mut buf = vec![0u8; FRAME_BUFFER];
        while !stop.load(Ordering::Relaxed) {
            while let Ok((direction, change, asked_ns)) = changes.try_recv() {
                // When it was asked for, unless the models have moved past that since.
                let at = self.advance_to(asked_ns.max(self.clock_ns));
                let side = match direction {
                    Direction::Uplink => 0,
                    Direction::Downlink => 1,
                };
                self.models[side].apply(change, at);
            }
            self.advance_to(monotonic_ns());
            for side in 0..2 {
                while let Some(n) = self.sockets[side].recv(&mut buf).map_err(io_error("receiving a frame"))? {
                    let now = self.advance_to(monotonic_ns());
                    self.admit(side, &buf[..n], now);
                }
            }
            let now = self.advance_to(monotonic_ns());
            self.deliver_due(now);
            let wake = self.next_wake_ns().map(|at| at.saturating_sub(monotonic_ns()));
            wait_readable(&fds, Some(wake.unwrap_or(MAX_SLEEP_NS).min(MAX_SLEEP_NS)))
                .map_err(io_error("waiting for frames"))?;
        }
        self.record_unfinished();
        Ok(std::mem::take(&mut self.report))
    }

    /// Gives the packets still in the link their fate, in arrival order, so that every
    /// packet read has exactly one record.
    fn record_unfinished(&mut self) {
        let mut unfinished: Vec<(u64, InFlight)> = self.in_flight.drain().collect();
        unfinished.sort_by_key(|(token, _)| *token);
        for (_, packet) in unfinished {
            let len = self.link_len(&packet.frame).unwrap_or(0);
            let fate =
                PacketFate { direction: packet.direction, arrived_ns: packet.arrived_ns, len, fate: Fate::InFlight };
            self.record_fate(fate);
        }
    }

    /// Applies the timeline's steps due by `now`, each at its own time, and returns `now`.
    /// Every model operation at a time is preceded by this, so the steps land at
    /// exactly their time in the models' clock (which never runs backwards): what was
    /// not due at the last operation is due after it.
    fn advance_to(&mut self, now: u64) -> u64 {
        while let Some((at, change)) = self.timeline.steps.get(self.applied) {
            let due = self.report.start_ns + u64::try_from(at.as_nanos()).unwrap_or(u64::MAX);
            if due > now {
                break;
            }
            self.models[0].apply(change.clone(), due);
            self.applied += 1;
        }
        self.clock_ns = now;
        now
    }

    /// Puts one received frame into its direction's model.
    fn admit(&mut self, side: usize, frame: &[u8], now: u64) {
        let direction = if side == 0 { Direction::Uplink } else { Direction::Downlink };
        let Some(len) = self.link_len(frame) else {
            self.counters(direction).not_ipv4 += 1;
            return;
        };
        self.counters(direction).arrived += 1;
        let token = self.next_token;
        self.next_token += 1;
        match self.models[side].enqueue(now, token, len) {
            Admission::Queued => {
                self.in_flight.insert(token, InFlight { direction, arrived_ns: now, frame: frame.to_vec() });
            }
            Admission::QueueFull => {
                self.counters(direction).queue_full += 1;
                self.record_fate(PacketFate { direction, arrived_ns: now, len, fate: Fate::QueueFull });
            }
        }
    }

    /// Sends on every frame its model has delivered by `now`.
    fn deliver_due(&mut self, now: u64) {
        for side in 0..2 {
            let mut outcomes = std::mem::take(&mut self.outcomes);
            self.models[side].poll(now, &mut outcomes);
            for outcome in outcomes.drain(..) {
                self.deliver(side, outcome);
            }
            self.outcomes = outcomes;
        }
    }

    fn deliver(&mut self, side: usize, outcome: Outcome) {
        let Some(mut packet) = self.in_flight.remove(&outcome.token) else { return };
        let fate = match outcome.delivered_ns {
            None => {
                self.counters(packet.direction).lost += 1;
                Fate::Lost { departed_ns: outcome.departed_ns }
            }
            Some(_) if self.forwarding == Forwarding::Routed && !route(&mut packet.frame, &self.ports[1 - side]) => {
                self.counters(packet.direction).ttl_expired += 1;
                Fate::TtlExpired
            }
            Some(delivered_ns) => {
                let out = 1 - side;
                let sent_ns = monotonic_ns();
                if self.sockets[out].send(&packet.frame).is_err() {
                    self.report.send_errors += 1;
                }
                let counters = self.counters(packet.direction);
                counters.delivered += 1;
                counters.delivered_bytes += u64::from(outcome.len);
                Fate::Delivered { departed_ns: outcome.departed_ns, delivered_ns, sent_ns }
            }
        };
        let record = PacketFate { direction: packet.direction, arrived_ns: packet.arrived_ns, len: outcome.len, fate };
        self.record_fate(record);
    }

    fn next_wake_ns(&self) -> Option<u64> {
        let step = self
            .timeline
            .steps
            .get(self.applied)
            .map(|(at, _)| self.report.start_ns + u64::try_from(at.as_nanos()).unwrap_or(u64::MAX));
        self.models.iter().filter_map(LinkModel::next_event_ns).chain(step).min()
    }

    /// A frame's size on the link: see [`link_len`]; a bridged frame's is its Ethernet length.
    fn link_len(&self, frame: &[u8]) -> Option<u32> {
        match self.forwarding {
            Forwarding::Routed => link_len(frame),
            Forwarding::Bridged => frame.len().checked_sub(VNET_HDR_LEN).and_then(|n| u32::try_from(n).ok()),
        }
    }

    fn counters(&mut self, direction: Direction) -> &mut DirectionCounters {
        match direction {
            Direction::Uplink => &mut self.report.uplink,
            Direction::Downlink => &mut self.report.downlink,
        }
    }

    fn record_fate(&mut self, fate: PacketFate) {
        if self.record {
            self.report.fates.push(fate);
        }
        if let Some(log) = &self.fate_log {
            // A log whose reader is gone is simply not written.
            let _ = log.send(fate);
        }
    }
}

fn io_error(what: &'static str) -> impl Fn(std::io::Error) -> NetlabError {
    move |source| NetlabError::Socket { what: what.into(), source }
}

/// A frame's size on the link: its IPv4 total length plus mm-link's 4-byte TUN
/// header; `None` for a frame too short to hold an IPv4 header.
fn link_len(frame: &[u8]) -> Option<u32> {
    let ip = frame.get(VNET_HDR_LEN + ETH_HDR_LEN..)?;
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return None;
    }
    Some(u32::from(u16::from_be_bytes([ip[2], ip[3]])) + TUN_HDR_LEN)
}

/// Forwards a frame as a router would: the next hop's MAC, our own as the source,
/// TTL minus one with the header checksum updated (RFC 1624). False when the TTL
/// has run out: a router drops the packet (without the ICMP it would send).
fn route(frame: &mut [u8], out: &Port) -> bool {
    let eth = VNET_HDR_LEN;
    let ip = eth + ETH_HDR_LEN;
    if frame.len() < ip + 20 || frame[ip + 8] <= 1 {
        return false;
    }
    frame[eth..eth + 6].copy_from_slice(&out.peer_mac);
    frame[eth + 6..eth + 12].copy_from_slice(&out.mac);
    let old_word = u16::from_be_bytes([frame[ip + 8], frame[ip + 9]]);
    frame[ip + 8] -= 1;
    let new_word = u16::from_be_bytes([frame[ip + 8], frame[ip + 9]]);
    let checksum = u16::from_be_bytes([frame[ip + 10], frame[ip + 11]]);
    // HC' = ~(~HC + ~m + m')
    let mut sum = u32::from(!checksum) + u32::from(!old_word) + u32::from(new_word);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    frame[ip + 10..ip + 12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_checksum(header: &[u8]) -> u16 {
        let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    fn frame(ttl: u8) -> Vec<u8> {
        let mut f = vec![0u8; VNET_HDR_LEN + ETH_HDR_LEN + 28];
        let ip = VNET_HDR_LEN + ETH_HDR_LEN;
        f[ip] = 0x45;
        f[ip + 2..ip + 4].copy_from_slice(&28u16.to_be_bytes());
        f[ip + 8] = ttl;
        f[ip + 9] = 17;
        f[ip + 12..ip + 16].copy_from_slice(&[10, 201, 1, 1]);
        f[ip + 16..ip + 20].copy_from_slice(&[10, 201, 2, 2]);
        let c = ipv4_checksum(&f[ip..ip + 20]);
        f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
        f
    }

    #[test]
    fn routing_rewrites_macs_and_ttl_with_a_valid_checksum() {
        let out = Port { iface: "x".into(), mac: [2, 0, 0, 0, 0, 1], peer_mac: [2, 0, 0, 0, 0, 2] };
        for ttl in [64u8, 2, 255, 0x80] {
            let mut f = frame(ttl);
            assert!(route(&mut f, &out));
            let ip = VNET_HDR_LEN + ETH_HDR_LEN;
            assert_eq!(&f[VNET_HDR_LEN..VNET_HDR_LEN + 6], &out.peer_mac);
            assert_eq!(&f[VNET_HDR_LEN + 6..VNET_HDR_LEN + 12], &out.mac);
            assert_eq!(f[ip + 8], ttl - 1, "ttl {ttl}");
            assert_eq!(ipv4_checksum(&f[ip..ip + 20]), 0, "ttl {ttl}: the header still sums to zero");
        }
        for ttl in [1u8, 0] {
            assert!(!route(&mut frame(ttl), &out), "ttl {ttl}: dropped, as a router would");
        }
    }

    #[test]
    fn a_packet_counts_its_ipv4_length_and_the_tun_header() {
        assert_eq!(link_len(&frame(64)), Some(32));
        assert_eq!(link_len(&frame(64)[..VNET_HDR_LEN + ETH_HDR_LEN + 10]), None, "truncated");
        let mut v6 = frame(64);
        v6[VNET_HDR_LEN + ETH_HDR_LEN] = 0x60;
        assert_eq!(link_len(&v6), None, "not IPv4");
    }
}

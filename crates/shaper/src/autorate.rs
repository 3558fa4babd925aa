//! `rate: auto`: following a link whose rate changes, from delay probes.
//!
//! When the bottleneck is downstream (a modem's deep buffer), Bauxite cannot see its
//! queue; it sees the queue's delay. The daemon sends small probes every few
//! milliseconds to a reflector on the far side and measures their round-trip time.
//! A reflector is `bauxite reflect` (UDP, the header of [`bauxite_core::wire::probe`],
//! its rules in [`crate::reflect`]) or any host answering ICMP echo or timestamp
//! requests ([`bauxite_core::wire::icmp`]; what each measures is in
//! [`bauxite_core::Reflector`]). The [`RateController`] sees the modem's queue in
//! the answers (and in answers overdue), measures the link's capacity from trains of
//! answers that met a queue, drains the queue, resumes at the capacity, and probes
//! upwards after a hold (its module says how).
//!
//! A profile may list several reflectors ([`Probers`]): the first is probed, the
//! others are standbys, probed a few times a second so that when the one in use
//! falls silent the probes move at once to one that answers, instead of holding the
//! droppable lanes at `min_rate` until someone restarts the far side.
//!
//! The control law itself ([`RateController`]) is sans-IO and lives in
//! `bauxite-control`, which the simulator shares; this module is its I/O.

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use bauxite_core::wire::icmp::{self, Family};
use bauxite_core::wire::probe::{self, Kind, Packet};
use bauxite_core::{ICMP_PROBE_DSCP, Reflector};
use bauxite_sys::{monotonic_ns, realtime_ns, rx_time};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

pub use bauxite_control::{CountedAt, OneWayDelays, RateController, SilenceHold};

use crate::ShaperError;
use crate::reflect::ProbeKey;

/// One probe's round trip.
#[derive(Clone, Copy, Debug)]
pub struct RttSample {
    /// Which reflector answered: its index in the profile's list.
    pub path: usize,
    /// When the probe left (`CLOCK_MONOTONIC` ns).
    pub sent_ns: u64,
    /// When the answer arrived (`CLOCK_MONOTONIC` ns).
    pub received_ns: u64,
    /// When the reflector received the probe, on its own clock (ns; `bauxite reflect`
    /// of this build or later), which splits the round trip into its two ways.
    pub reflected_ns: Option<u64>,
    /// The round-trip time.
    pub rtt: Duration,
}

/// Probes remembered by their sequence number: a reply must carry back what the
/// prober recorded for its number (the send time to the nanosecond, or the
/// sequence number and wall-clock milliseconds of an ICMP timestamp), which an
/// off-path host cannot guess, and answers slower than this many probes are not
/// samples anyway. A divisor of 2^16, so that ICMP's 16-bit numbers wrap with it.
const SENT_WINDOW: usize = 256;

/// A standby reflector is probed this often…
const STANDBY_INTERVAL: Duration = Duration::from_millis(200);
/// …and is a place to switch to if it answered within this long (several standby
/// probes: one lost answer does not rule it out).
const STANDBY_ANSWERED: Duration = Duration::from_secs(1);

/// A probe in flight: when it left, and what its answer must carry back (0: none
/// in flight in this slot, or answered already: a duplicate answer is no sample).
#[derive(Default)]
struct InFlight {
    sent_ns: AtomicU64,
    token: AtomicU64,
}

/// How probes to one reflector look on the wire.
#[derive(Clone)]
enum Wire {
    /// `bauxite reflect`'s probe header, signed if the profile has a key.
    Bauxite(Option<ProbeKey>),
    /// An ICMP (or ICMPv6) echo request with Bauxite's payload, under this identifier.
    Echo { family: Family, id: u16 },
    /// An ICMP timestamp request under this identifier.
    Timestamp { id: u16 },
}

/// Why a datagram the prober received is no answer.
#[derive(Debug, PartialEq, Eq)]
enum NoAnswer {
    /// Not a reply to one of this prober's probes (another host's, another
    /// program's `ping`, a request, garbage).
    Other,
    /// A reply from `bauxite reflect` whose signature fails the probe key.
    BadKey,
}

impl Wire {
    /// The probe numbered `seq` sent at `now_ns`, and the token its answer carries back.
    fn request(&self, seq: u32, now_ns: u64) -> (Vec<u8>, u64) {
        match self {
            Wire::Bauxite(key) => {
                let tagged = key.is_some();
                let request = probe::Repr {
                    kind: Kind::EchoRequest,
                    tagged,
                    stream: 0,
                    seq,
                    sent_ns: now_ns,
                    receive_time_ns: None,
                };
                // Room for the reflector's receive time in the reply.
                let mut bytes = request.to_vec(probe::request_len_with_receive_time(tagged));
                if let Some(key) = key {
                    key.sign(&mut Packet::new_unchecked(&mut bytes[..]));
                }
                (bytes, now_ns)
            }
            &Wire::Echo { family, id } => {
                let request = icmp::Message::Echo { reply: false, id, seq: seq as u16, sent_ns: now_ns };
                (request.emit(family).to_vec(), now_ns)
            }
            &Wire::Timestamp { id } => {
                let originate_ms = icmp::ms_since_midnight(realtime_ns());
                let request = icmp::Message::Timestamp {
                    reply: false,
                    id,
                    seq: seq as u16,
                    originate_ms,
                    receive_ms: 0,
                    transmit_ms: 0,
                };
                (request.emit(Family::V4).to_vec(), timestamp_token(seq as u16, originate_ms))
            }
        }
    }

    /// The probe number and the token a received datagram answers with, and the
    /// reflector's receive time when the reply carries one (a raw IPv4 socket
    /// receives the IP header too).
    fn answer(&self, datagram: &[u8]) -> Result<(u32, u64, Option<u64>), NoAnswer> {
        let other = |_| NoAnswer::Other;
        match self {
            Wire::Bauxite(key) => {
                let packet = Packet::new_checked(datagram).map_err(other)?;
                let reply = probe::Repr::parse(&packet).map_err(other)?;
                if reply.kind != Kind::EchoReply || reply.sent_ns == 0 {
                    return Err(NoAnswer::Other);
                }
                if key.as_ref().is_some_and(|key| !key.verify(&packet)) {
                    return Err(NoAnswer::BadKey);
                }
                Ok((reply.seq, reply.sent_ns, packet.receive_time_ns()))
            }
            &Wire::Echo { family, id: own } => {
                let message = match family {
                    Family::V4 => icmp::parse_ipv4_datagram(datagram),
                    Family::V6 => icmp::Message::parse(datagram, Family::V6),
                };
                match message.map_err(other)? {
                    icmp::Message::Echo { reply: true, id, seq, sent_ns } if id == own && sent_ns != 0 => {
                        Ok((seq.into(), sent_ns, None))
                    }
                    _ => Err(NoAnswer::Other),
                }
            }
            &Wire::Timestamp { id: own } => match icmp::parse_ipv4_datagram(datagram).map_err(other)? {
                // Its receive time is whole milliseconds: too coarse to split a round trip.
                icmp::Message::Timestamp { reply: true, id, seq, originate_ms, .. } if id == own => {
                    Ok((seq.into(), timestamp_token(seq, originate_ms), None))
                }
                _ => Err(NoAnswer::Other),
            },
        }
    }
}

/// What an ICMP timestamp reply must carry back: its number and the request's
/// originate time (never 0, which marks a slot with nothing in flight).
fn timestamp_token(seq: u16, originate_ms: u32) -> u64 {
    1 << 63 | u64::from(seq) << 32 | u64::from(originate_ms)
}

/// An identifier for an ICMP prober, unique within this process (a host's raw ICMP
/// sockets all see every reply, so each prober reads only its own) and unlikely to
/// be another process's.
fn icmp_id() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    (std::process::id() as u16).wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37))
}

/// The sending half of one reflector's prober: the daemon's control loop sends each
/// probe itself when [`RateController::probe_due`] says so, right after it reads the
/// lanes' byte counters, stamped with the time of that read, so that the bytes sent
/// before every probe are known (a prober on its own clock made the measured
/// capacity 6 % too high at 1.5 Mbit/s).
pub struct ProbeSender {
    socket: Socket,
    wire: Wire,
    /// The probes in flight by their number modulo [`SENT_WINDOW`], for the receiver.
    in_flight: Arc<[InFlight; SENT_WINDOW]>,
    seq: u32,
}

impl ProbeSender {
    /// Sends a probe stamped `now_ns` (`CLOCK_MONOTONIC`).
    pub fn send(&mut self, now_ns: u64) {
        let (bytes, token) = self.wire.request(self.seq, now_ns);
        let slot = &self.in_flight[self.seq as usize % SENT_WINDOW];
        slot.sent_ns.store(now_ns, Ordering::Relaxed);
        slot.token.store(token, Ordering::Release);
        let _ = self.socket.send(&bytes); // a refused or full path shows up as silence
        self.seq = self.seq.wrapping_add(1);
    }
}

/// Opens the probes' socket to `reflector`, starts the thread that receives the
/// answers and reports each one's RTT on `samples` (as `path`) until `stop`, and
/// returns the sending half. Probes to `bauxite reflect` are signed with `key` if
/// there is one. A datagram that is not a reply to one of the last `SENT_WINDOW`
/// (256) probes (its number and what was recorded for it), or whose signature fails,
/// is ignored (a reflector without the key shows up as silence, which a warning
/// explains). The key is read by the caller, before anything is attached
/// ([`crate::reflect::key_of`]).
pub fn start_prober(
    reflector: Reflector,
    path: usize,
    key: Option<ProbeKey>,
    samples: Sender<RttSample>,
    stop: Arc<AtomicBool>,
) -> Result<ProbeSender, ShaperError> {
    let io = |e| ShaperError::io(format!("starting rate probes to {reflector}"))(e);
    let (socket, wire) = open_probe_socket(reflector, key).map_err(io)?;
    socket.set_read_timeout(Some(Duration::from_millis(50))).map_err(io)?;
    // Answers are timed when they reach the socket, not when this thread reads them.
    rx_time::enable(&socket).map_err(io)?;
    let receiver = socket.try_clone().map_err(io)?;
    let in_flight: Arc<[InFlight; SENT_WINDOW]> = Arc::new(std::array::from_fn(|_| InFlight::default()));
    let recorded = Arc::clone(&in_flight);
    let receive_wire = wire.clone();
    std::thread::spawn(move || receive_replies(&receiver, &receive_wire, path, &recorded, &samples, &stop));
    Ok(ProbeSender { socket, wire, in_flight, seq: 0 })
}

/// The socket probes to `reflector` go on, connected to it (so that it receives
/// only what comes from there), and their wire format. ICMP probes go on a raw
/// socket (the daemon runs as root) marked [`ICMP_PROBE_DSCP`], the mark that puts
/// them in the critical lane.
fn open_probe_socket(reflector: Reflector, key: Option<ProbeKey>) -> std::io::Result<(Socket, Wire)> {
    let raw = |ip: IpAddr| -> std::io::Result<Socket> {
        let tos = u32::from(ICMP_PROBE_DSCP) << 2;
        let socket = match ip {
            IpAddr::V4(_) => {
                let socket = Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::ICMPV4))?;
                socket.set_tos_v4(tos)?;
                socket
            }
            IpAddr::V6(_) => {
                let socket = Socket::new(Domain::IPV6, Type::RAW, Some(Protocol::ICMPV6))?;
                socket.set_tclass_v6(tos)?;
                socket
            }
        };
        socket.connect(&SockAddr::from(SocketAddr::new(ip, 0)))?;
        Ok(socket)
    };
    Ok(match reflector {
        Reflector::Bauxite(addr) => {
            let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
            socket.connect(&addr.into())?;
            (socket, Wire::Bauxite(key))
        }
        Reflector::IcmpEcho(ip) => {
            let family = if ip.is_ipv4() { Family::V4 } else { Family::V6 };
            (raw(ip)?, Wire::Echo { family, id: icmp_id() })
        }
        Reflector::IcmpTimestamp(ip) => (raw(IpAddr::V4(ip))?, Wire::Timestamp { id: icmp_id() }),
    })
}

/// The prober's receiving side: one [`RttSample`] per valid reply.
fn receive_replies(
    socket: &Socket,
    wire: &Wire,
    path: usize,
    in_flight: &[InFlight; SENT_WINDOW],
    samples: &Sender<RttSample>,
    stop: &AtomicBool,
) {
    let mut buffer = [0u8; 2048];
    let mut warned = false;
    while !stop.load(Ordering::Relaxed) {
        match rx_time::recv(socket, &mut buffer) {
            Ok((n, stamp)) => {
                let (seq, token, reflected_ns) = match wire.answer(&buffer[..n]) {
                    Ok(answer) => answer,
                    Err(NoAnswer::BadKey) if !warned => {
                        tracing::warn!(
                            "a reply from the reflector fails the probe key: does `bauxite reflect` have the same --key-file?"
                        );
                        warned = true;
                        continue;
                    }
                    Err(_) => continue,
                };
                let Some(sent_ns) = take_in_flight(in_flight, seq, token) else { continue };
                let received_ns = stamp.unwrap_or_else(monotonic_ns);
                let rtt = Duration::from_nanos(received_ns.saturating_sub(sent_ns));
                if samples.send(RttSample { path, sent_ns, received_ns, reflected_ns, rtt }).is_err() {
                    return;
                }
            }
            Err(e)
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::ConnectionRefused) => {}
            Err(_) => return,
        }
    }
}

/// The send time of the probe numbered `seq` if an answer carrying `token` answers
/// it (what was recorded for its number), and then nothing more for that number.
fn take_in_flight(in_flight: &[InFlight; SENT_WINDOW], seq: u32, token: u64) -> Option<u64> {
    if token == 0 {
        return None; // what an empty slot holds
    }
    let slot = &in_flight[seq as usize % SENT_WINDOW];
    slot.token.compare_exchange(token, 0, Ordering::Acquire, Ordering::Relaxed).ok()?;
    Some(slot.sent_ns.load(Ordering::Relaxed))
}

/// The probers of every reflector of the profile: the active one's probes go at the
/// controller's rhythm and its answers feed the controller; each standby gets a probe
/// every [`STANDBY_INTERVAL`], so that the daemon knows where to go when the active
/// one falls silent ([`Self::switch`]).
pub struct Probers {
    reflectors: Vec<Reflector>,
    senders: Vec<ProbeSender>,
    /// When each reflector last answered (`CLOCK_MONOTONIC` ns).
    answered_ns: Vec<Option<u64>>,
    active: usize,
    next_standby_ns: u64,
}

impl Probers {
    /// Starts a prober per reflector (see [`start_prober`]); the first is active.
    pub fn start(
        reflectors: &[Reflector],
        key: Option<ProbeKey>,
        samples: Sender<RttSample>,
        stop: &Arc<AtomicBool>,
    ) -> Result<Self, ShaperError> {
        assert!(!reflectors.is_empty(), "rate: auto is validated to have a reflector");
        let senders = (reflectors.iter().enumerate())
            .map(|(path, &r)| start_prober(r, path, key.clone(), samples.clone(), Arc::clone(stop)))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            reflectors: reflectors.to_vec(),
            senders,
            answered_ns: vec![None; reflectors.len()],
            active: 0,
            next_standby_ns: 0,
        })
    }

    /// The reflector the controller's probes go to.
    pub fn active(&self) -> Reflector {
        self.reflectors[self.active]
    }

    /// The standbys, in the profile's order.
    pub fn standbys(&self) -> impl Iterator<Item = Reflector> + '_ {
        (self.reflectors.iter().enumerate()).filter(|&(i, _)| i != self.active).map(|(_, &r)| r)
    }

    /// Sends the controller's probe, stamped `now_ns`, to the active reflector.
    pub fn send_active(&mut self, now_ns: u64) {
        self.senders[self.active].send(now_ns);
    }

    /// Sends each standby its probe, if one is due at `now_ns`.
    pub fn send_standbys_if_due(&mut self, now_ns: u64) {
        if self.senders.len() < 2 || now_ns < self.next_standby_ns {
            return;
        }
        self.next_standby_ns = now_ns + STANDBY_INTERVAL.as_nanos() as u64;
        for (i, sender) in self.senders.iter_mut().enumerate() {
            if i != self.active {
                sender.send(now_ns);
            }
        }
    }

    /// Notes an answer; whether it is the active reflector's (a standby's answers
    /// cross another path: they are not the controller's).
    pub fn on_answer(&mut self, sample: &RttSample) -> bool {
        self.answered_ns[sample.path] = Some(sample.received_ns);
        sample.path == self.active
    }

    /// The active reflector is silent: makes the first standby (in the profile's
    /// order) that answered lately the active one, and returns it; `None` if no
    /// standby answers either.
    pub fn switch(&mut self, now_ns: u64) -> Option<Reflector> {
        self.active = answering_standby(&self.answered_ns, self.active, now_ns)?;
        Some(self.active())
    }
}

/// The first reflector other than `active` that answered within
/// [`STANDBY_ANSWERED`] of `now_ns`, by index.
fn answering_standby(answered_ns: &[Option<u64>], active: usize, now_ns: u64) -> Option<usize> {
    let recent = STANDBY_ANSWERED.as_nanos() as u64;
    (answered_ns.iter().enumerate())
        .find(|&(i, at)| i != active && at.is_some_and(|at| now_ns.saturating_sub(at) <= recent))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::sync::mpsc;

    use super::*;

    fn slots() -> [InFlight; SENT_WINDOW] {
        std::array::from_fn(|_| InFlight::default())
    }

    fn record(in_flight: &[InFlight; SENT_WINDOW], seq: u32, sent_ns: u64, token: u64) {
        in_flight[seq as usize % SENT_WINDOW].sent_ns.store(sent_ns, Ordering::Relaxed);
        in_flight[seq as usize % SENT_WINDOW].token.store(token, Ordering::Relaxed);
    }

    #[test]
    fn only_answers_to_probes_in_flight_count_and_each_once() {
        let in_flight = slots();
        record(&in_flight, 7, 123_456_789, 123_456_789);
        assert_eq!(take_in_flight(&in_flight, 7, 123_456_788), None, "a guessed send time");
        assert_eq!(take_in_flight(&in_flight, 8, 123_456_789), None, "another probe's number");
        assert_eq!(take_in_flight(&in_flight, 9, 0), None, "a number never sent");
        assert_eq!(take_in_flight(&in_flight, 7, 123_456_789), Some(123_456_789));
        assert_eq!(take_in_flight(&in_flight, 7, 123_456_789), None, "a duplicate answer");
        record(&in_flight, 7 + 256, 999, 999); // 256 probes later, the slot is reused
        assert_eq!(take_in_flight(&in_flight, 7, 123_456_789), None, "too old");
        // A timestamp's token is its number and originate time: sent at 5 ns.
        record(&in_flight, 3, 5, timestamp_token(3, 42));
        assert_eq!(take_in_flight(&in_flight, 3, timestamp_token(259, 42)), None, "256 probes older");
        assert_eq!(take_in_flight(&in_flight, 3, timestamp_token(3, 41)), None, "another originate time");
        assert_eq!(take_in_flight(&in_flight, 3, timestamp_token(3, 42)), Some(5));
    }

    #[test]
    fn bauxite_reflect_answers_with_its_receive_time_signed_or_not() {
        for key in [None, Some(ProbeKey::new(b"0123456789abcdef0123456789abcdef").unwrap())] {
            let wire = Wire::Bauxite(key.clone());
            let (mut datagram, token) = wire.request(11, 1_000);
            let options = crate::reflect::ReflectorOptions { key: key.clone(), ..Default::default() };
            let mut reflector = crate::reflect::Reflector::new(options);
            let from: SocketAddr = "127.0.0.1:40000".parse().unwrap();
            reflector.answer(&mut datagram, from, Duration::from_nanos(777_000)).expect("answered");
            assert_eq!(wire.answer(&datagram), Ok((11, token, Some(777_000))), "signed: {}", key.is_some());
        }
    }

    #[test]
    fn an_icmp_prober_reads_only_replies_to_its_own_identifier() {
        let wire = Wire::Echo { family: Family::V6, id: 77 };
        let (request, token) = wire.request(5, 1_000);
        assert_eq!(wire.answer(&request), Err(NoAnswer::Other), "its own request, seen on loopback");
        let reply = |id| icmp::Message::Echo { reply: true, id, seq: 5, sent_ns: 1_000 }.emit(Family::V6);
        assert_eq!(wire.answer(&reply(77)), Ok((5, token, None)), "an echo has no receive time");
        assert_eq!(wire.answer(&reply(78)), Err(NoAnswer::Other), "another prober's");
        let stamp = Wire::Timestamp { id: 9 };
        let (request, token) = stamp.request(70_000, 0);
        let icmp::Message::Timestamp { originate_ms, .. } = icmp::Message::parse(&request, Family::V4).unwrap() else {
            panic!("a timestamp request")
        };
        let reply = icmp::Message::Timestamp {
            reply: true,
            id: 9,
            seq: 70_000u32 as u16,
            originate_ms,
            receive_ms: 1,
            transmit_ms: 1,
        };
        let mut datagram = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 1, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1];
        datagram.extend_from_slice(&reply.emit(Family::V4));
        assert_eq!(stamp.answer(&datagram), Ok((70_000u32 as u16 as u32, token, None)), "whole ms: none");
    }

    #[test]
    fn a_switch_goes_to_the_first_standby_that_answered_lately() {
        let s = 1_000_000_000u64;
        assert_eq!(answering_standby(&[None, None, None], 0, 10 * s), None, "no standby ever answered");
        assert_eq!(answering_standby(&[Some(10 * s), Some(8 * s), Some(9 * s + 1)], 0, 10 * s), Some(2));
        assert_eq!(
            answering_standby(&[Some(0), Some(10 * s), Some(10 * s)], 0, 10 * s),
            Some(1),
            "the profile's order"
        );
        assert_eq!(answering_standby(&[Some(10 * s), Some(10 * s)], 1, 10 * s), Some(0), "back to the first");
    }

    /// As root: a silent `bauxite reflect` address first, the loopback's kernel
    /// answering ICMP echo and timestamps after it. Only the active reflector's
    /// answers feed the controller; the switch goes to a standby that answers.
    #[test]
    fn standbys_answer_and_a_silent_reflector_is_left_for_one_that_does() {
        if !bauxite_sys::root_or_skip("raw ICMP sockets") {
            return;
        }
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap(); // bound, never read
        let reflectors = [
            Reflector::Bauxite(silent.local_addr().unwrap()),
            Reflector::IcmpEcho(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            Reflector::IcmpTimestamp(Ipv4Addr::LOCALHOST),
        ];
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut probers = Probers::start(&reflectors, None, tx, &stop).unwrap();
        let mut answered = [false; 3];
        // Standby probes go every 200 ms; 50 rounds of 20 ms is 5 of them.
        for _ in 0..50 {
            let now = monotonic_ns();
            probers.send_active(now);
            probers.send_standbys_if_due(now);
            std::thread::sleep(Duration::from_millis(20));
            while let Ok(sample) = rx.try_recv() {
                assert!(sample.rtt < Duration::from_secs(1), "{sample:?}");
                assert_eq!(probers.on_answer(&sample), sample.path == 0);
                answered[sample.path] = true;
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert_eq!(answered, [false, true, true], "the silent reflector and the two the kernel answers");
        assert_eq!(probers.switch(monotonic_ns()), Some(reflectors[1]));
        assert_eq!(probers.active(), reflectors[1]);
        assert_eq!(probers.standbys().collect::<Vec<_>>(), [reflectors[0], reflectors[2]]);
    }
}

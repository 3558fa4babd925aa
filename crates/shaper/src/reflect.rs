//! `bauxite reflect`: the far-side reflector of `rate: auto`'s link probes, hardened
//! against being used as a weapon (issue 10, finding 1).
//!
//! A reflector that echoes anything to anyone can be aimed at another reflector: one
//! datagram spoofed from `B:7399` to `A:7399` makes A answer B, B answer A, and so on
//! forever. This one answers only a well-formed [`Kind::EchoRequest`] with a
//! [`Kind::EchoReply`] (which no reflector answers), never a datagram from a reflector
//! port, at most [`SourceLimit`] answers per source, optionally only to allowed peers
//! and only to probes signed with a shared key ([`ProbeKey`], like irtt's `--hmac`).
//! A reply is never larger than its request. [`Reflector`] decides without I/O, so the
//! rules are tested without sockets; [`run_reflector`] drives it from a socket.

use std::collections::HashMap;
use std::fmt;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bauxite_core::DEFAULT_REFLECTOR_PORT;
use bauxite_core::wire::probe::{self, Kind, Packet};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::ShaperError;

/// The shared secret probes are signed with: HMAC-SHA256 over the probe (its tag excluded).
#[derive(Clone)]
pub struct ProbeKey(Vec<u8>);

impl fmt::Debug for ProbeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProbeKey(..)")
    }
}

impl ProbeKey {
    /// The shortest key accepted, in bytes.
    pub const MIN_LEN: usize = 16;
    /// The longest key file read, in bytes.
    pub const MAX_FILE_LEN: u64 = 4096;

    /// A key from its bytes; refuses one shorter than [`ProbeKey::MIN_LEN`].
    pub fn new(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() < Self::MIN_LEN {
            return Err(format!("the key has {} bytes, at least {} are needed", bytes.len(), Self::MIN_LEN));
        }
        Ok(Self(bytes.to_vec()))
    }

    /// Reads a key file: its contents, less trailing whitespace (a final newline).
    pub fn from_file(path: &Path) -> Result<Self, ShaperError> {
        use bauxite_core::config::{FileReadError, read_regular_file};
        let error = |reason: String, source| ShaperError::ProbeKey { path: path.to_path_buf(), reason, source };
        let bytes = read_regular_file(path, Self::MAX_FILE_LEN).map_err(|e| match e {
            FileReadError::Io(io) => error("cannot read it".into(), Some(io)),
            other => error(other.to_string(), None),
        })?;
        let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
        Self::new(&bytes[..end]).map_err(|reason| error(reason, None))
    }

    fn mac<T: AsRef<[u8]>>(&self, packet: &Packet<T>) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        for part in packet.authenticated_parts() {
            mac.update(part);
        }
        mac
    }

    /// Writes the tag of a tagged packet (does nothing to an untagged one).
    pub fn sign<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let tag = self.mac(packet).finalize().into_bytes();
        if let Some(place) = packet.tag_mut() {
            place.copy_from_slice(&tag);
        }
    }

    /// Whether the packet is tagged and its tag is right (compared in constant time).
    pub fn verify<T: AsRef<[u8]>>(&self, packet: &Packet<T>) -> bool {
        packet.tag().is_some_and(|tag| self.mac(packet).verify_slice(tag).is_ok())
    }
}

/// A peer network, `ADDR/PREFIX` or a single address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerNet {
    addr: IpAddr,
    prefix: u8,
}

impl PeerNet {
    /// Whether `ip` is in it (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = |a: IpAddr| match a.to_canonical() {
            IpAddr::V4(v4) => (u128::from(v4.to_bits()) << 96, 32),
            IpAddr::V6(v6) => (v6.to_bits(), 128),
        };
        let ((net, family), (addr, other)) = (bits(self.addr), bits(ip));
        let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
        family == other && (net & mask) == (addr & mask)
    }
}

impl FromStr for PeerNet {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (addr, prefix) = text.split_once('/').map_or((text, None), |(a, p)| (a, Some(p)));
        let addr: IpAddr =
            addr.parse().map_err(|_| format!("`{text}` is not an address or ADDR/PREFIX (e.g. 10.0.0.0/24)"))?;
        let addr = addr.to_canonical();
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be a number from 0 to {max}"))?,
        };
        Ok(Self { addr, prefix })
    }
}

impl fmt::Display for PeerNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// How many answers one source address gets: a token bucket per source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceLimit {
    /// Answers per second, sustained. The default, 1 000, is the fastest a valid
    /// profile probes (`auto_rate.probe_interval: 1ms`).
    pub per_second: f64,
    /// Answers in a burst.
    pub burst: f64,
    /// Sources tracked at once; beyond it the least recently seen is forgotten.
    pub max_sources: usize,
}

impl Default for SourceLimit {
    fn default() -> Self {
        Self { per_second: 1000.0, burst: 100.0, max_sources: 4096 }
    }
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    last: Duration,
}

/// Token buckets per source address, in a bounded table.
#[derive(Debug)]
pub struct SourceLimiter {
    limit: SourceLimit,
    buckets: HashMap<IpAddr, Bucket>,
}

impl SourceLimiter {
    /// Empty buckets for `limit`.
    pub fn new(limit: SourceLimit) -> Self {
        Self { limit, buckets: HashMap::new() }
    }

    /// Takes one token of `source`'s bucket at `now`; false when it is empty.
    pub fn take(&mut self, source: IpAddr, now: Duration) -> bool {
        if !self.buckets.contains_key(&source) && self.buckets.len() >= self.limit.max_sources {
            self.forget_one(now);
        }
        let limit = self.limit;
        let bucket = self.buckets.entry(source).or_insert(Bucket { tokens: limit.burst, last: now });
        let refill = now.saturating_sub(bucket.last).as_secs_f64() * limit.per_second;
        bucket.tokens = (bucket.tokens + refill).min(limit.burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Sources tracked now.
    pub fn sources(&self) -> usize {
        self.buckets.len()
    }

    /// Makes room: forgets the buckets that have refilled (a new one starts full too),
    /// or else the least recently seen source.
    fn forget_one(&mut self, now: Duration) {
        // A limit of zero answers a second never refills: nothing is forgotten early.
        let full_after = Duration::try_from_secs_f64(self.limit.burst / self.limit.per_second).unwrap_or(Duration::MAX);
        self.buckets.retain(|_, b| now.saturating_sub(b.last) < full_after);
        if self.buckets.len() >= self.limit.max_sources
            && let Some(oldest) = self.buckets.iter().min_by_key(|(_, b)| b.last).map(|(ip, _)| *ip)
        {
            self.buckets.remove(&oldest);
        }
    }
}

/// Why a datagram got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// It came from a reflector port (or port 0): answering could start a loop.
    FromReflectorPort,
    /// Its source is not in the allow-list.
    NotAllowed,
    /// It is not a valid probe.
    Malformed,
    /// It is a probe but not a request (a reply, or a data message).
    NotARequest,
    /// A key is configured and the probe is unsigned or its tag is wrong.
    BadTag,
    /// Its source has used up its answers.
    RateLimited,
}

impl Refusal {
    /// Every refusal, in report order.
    pub const ALL: [Refusal; 6] = [
        Refusal::FromReflectorPort,
        Refusal::NotAllowed,
        Refusal::Malformed,
        Refusal::NotARequest,
        Refusal::BadTag,
        Refusal::RateLimited,
    ];

    /// A short snake_case name, for logs.
    pub fn name(self) -> &'static str {
        match self {
            Refusal::FromReflectorPort => "from_reflector_port",
            Refusal::NotAllowed => "not_allowed",
            Refusal::Malformed => "malformed",
            Refusal::NotARequest => "not_a_request",
            Refusal::BadTag => "bad_tag",
            Refusal::RateLimited => "rate_limited",
        }
    }
}

/// What `bauxite reflect` answers.
#[derive(Clone, Debug, Default)]
pub struct ReflectorOptions {
    /// The port it listens on (never answered, like [`DEFAULT_REFLECTOR_PORT`]).
    pub port: u16,
    /// Only probes signed with this key are answered, and answers are signed with it.
    pub key: Option<ProbeKey>,
    /// Only these peers are answered; empty: any peer.
    pub allow: Vec<PeerNet>,
    /// Answers per source.
    pub limit: SourceLimit,
    /// Counts every verdict for `bauxite reflect --metrics`.
    pub metrics: Option<crate::metrics::ReflectorMetrics>,
}

/// What the reflector did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReflectorStats {
    /// Requests answered.
    pub answered: u64,
    /// Datagrams not answered, per reason.
    pub refused: HashMap<Refusal, u64>,
}

impl fmt::Display for ReflectorStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "answered {}", self.answered)?;
        for r in Refusal::ALL {
            write!(f, ", {} {}", r.name(), self.refused.get(&r).copied().unwrap_or(0))?;
        }
        Ok(())
    }
}

/// The reflector's rules, without I/O.
#[derive(Debug)]
pub struct Reflector {
    options: ReflectorOptions,
    limiter: SourceLimiter,
    stats: ReflectorStats,
}

impl Reflector {
    /// A reflector with these rules.
    pub fn new(options: ReflectorOptions) -> Self {
        let limiter = SourceLimiter::new(options.limit);
        Self { options, limiter, stats: ReflectorStats::default() }
    }

    /// What it did so far.
    pub fn stats(&self) -> &ReflectorStats {
        &self.stats
    }

    /// Turns the request in `datagram` from `from` into its reply, in place, or says
    /// why it gets none. `now` is any monotonic time (for the rate limit).
    pub fn answer(&mut self, datagram: &mut [u8], from: SocketAddr, now: Duration) -> Result<(), Refusal> {
        let verdict = self.decide(datagram, from, now);
        match verdict {
            Ok(()) => self.stats.answered += 1,
            Err(r) => *self.stats.refused.entry(r).or_default() += 1,
        }
        if let Some(m) = &self.options.metrics {
            m.count(verdict);
        }
        verdict
    }

    fn decide(&mut self, datagram: &mut [u8], from: SocketAddr, now: Duration) -> Result<(), Refusal> {
        if [0, DEFAULT_REFLECTOR_PORT, self.options.port].contains(&from.port()) {
            return Err(Refusal::FromReflectorPort);
        }
        if !self.options.allow.is_empty() && !self.options.allow.iter().any(|net| net.contains(from.ip())) {
            return Err(Refusal::NotAllowed);
        }
        let mut packet = Packet::new_checked(datagram).map_err(|_| Refusal::Malformed)?;
        let request = probe::Repr::parse(&packet).map_err(|_| Refusal::Malformed)?;
        if request.kind != Kind::EchoRequest {
            return Err(Refusal::NotARequest);
        }
        if let Some(key) = &self.options.key
            && !key.verify(&packet)
        {
            return Err(Refusal::BadTag);
        }
        if !self.limiter.take(from.ip().to_canonical(), now) {
            return Err(Refusal::RateLimited);
        }
        packet.set_kind(Kind::EchoReply);
        // Where the request has room: when it arrived, so that the prober can tell the
        // two ways' queues apart (`now`'s offset from its clock cancels out there).
        packet.set_receive_time_ns(now.as_nanos() as u64);
        if let Some(key) = &self.options.key {
            key.sign(&mut packet);
        }
        Ok(())
    }
}

/// Binds the reflector's socket: `bind`:`port`, nothing else.
pub fn bind_reflector(bind: IpAddr, port: u16) -> Result<UdpSocket, ShaperError> {
    UdpSocket::bind((bind, port)).map_err(ShaperError::io(format!("binding UDP {}", SocketAddr::new(bind, port))))
}

/// Answers probes on `socket` by `reflector`'s rules until `stop`; returns what it did.
pub fn run_reflector(
    socket: &UdpSocket,
    reflector: &mut Reflector,
    stop: &AtomicBool,
) -> std::io::Result<ReflectorStats> {
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let start = Instant::now();
    let mut buffer = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(&mut buffer) {
            Ok((n, from)) => {
                if reflector.answer(&mut buffer[..n], from, start.elapsed()).is_ok()
                    && let Err(e) = socket.send_to(&buffer[..n], from)
                {
                    // An unreachable sender or a full buffer loses one answer, not the reflector.
                    tracing::debug!("answering {from}: {e}");
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(reflector.stats().clone())
}

/// The key file named by a profile, read.
pub fn key_of(key_file: Option<&PathBuf>) -> Result<Option<ProbeKey>, ShaperError> {
    key_file.map(|path| ProbeKey::from_file(path)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROBOT: &str = "10.0.0.1:40000";
    const KEY: &[u8] = b"a shared secret of 32 bytes!!!!!";

    fn request(tagged: bool, len: usize) -> Vec<u8> {
        let repr =
            probe::Repr { kind: Kind::EchoRequest, tagged, stream: 0, seq: 9, sent_ns: 77, receive_time_ns: None };
        repr.to_vec(len)
    }

    fn signed(key: &ProbeKey) -> Vec<u8> {
        let mut bytes = request(true, 0);
        key.sign(&mut Packet::new_checked(&mut bytes[..]).unwrap());
        bytes
    }

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn reflector() -> Reflector {
        Reflector::new(ReflectorOptions { port: 7500, ..Default::default() })
    }

    #[test]
    fn a_request_becomes_a_reply_of_the_same_size_and_the_reply_is_never_answered() {
        let mut r = reflector();
        let mut d = request(false, 64);
        r.answer(&mut d, ROBOT.parse().unwrap(), at(0)).unwrap();
        assert_eq!(d.len(), 64);
        let reply = probe::Repr::parse_bytes(&d).unwrap();
        assert_eq!((reply.kind, reply.seq, reply.sent_ns), (Kind::EchoReply, 9, 77));
        // A second reflector handed the reply does not answer: no ping-pong.
        assert_eq!(reflector().answer(&mut d, ROBOT.parse().unwrap(), at(0)), Err(Refusal::NotARequest));
        assert_eq!(r.stats().answered, 1);
    }

    #[test]
    fn malformed_probes_data_messages_and_old_versions_are_not_answered() {
        let mut r = reflector();
        let from = ROBOT.parse().unwrap();
        let mut truncated = request(false, 0)[..19].to_vec();
        let mut garbage = vec![0x55; 64];
        let mut v1 = b"BXR1\0\0\0\x01\0\0\0\0\0\0\0\x05".to_vec();
        let mut data =
            probe::Repr { kind: Kind::Data, tagged: false, stream: 1, seq: 1, sent_ns: 1, receive_time_ns: None }
                .to_vec(64);
        for d in [&mut truncated, &mut garbage, &mut v1] {
            assert_eq!(r.answer(d, from, at(0)), Err(Refusal::Malformed));
        }
        assert_eq!(r.answer(&mut data, from, at(0)), Err(Refusal::NotARequest));
        assert_eq!(r.stats().answered, 0);
        assert_eq!(r.stats().refused[&Refusal::Malformed], 3);
    }

    #[test]
    fn datagrams_from_reflector_ports_are_never_answered() {
        let mut r = reflector();
        for from in ["10.0.0.2:7399", "10.0.0.2:7500", "10.0.0.2:0", "[fe80::1]:7399"] {
            let mut d = request(false, 20);
            assert_eq!(r.answer(&mut d, from.parse().unwrap(), at(0)), Err(Refusal::FromReflectorPort), "{from}");
            assert_eq!(probe::Repr::parse_bytes(&d).unwrap().kind, Kind::EchoRequest, "left unchanged");
        }
    }

    #[test]
    fn each_source_gets_a_burst_then_the_sustained_rate() {
        let limit = SourceLimit { per_second: 100.0, burst: 10.0, max_sources: 8 };
        let mut r = Reflector::new(ReflectorOptions { port: 7399, limit, ..Default::default() });
        let answered = |r: &mut Reflector, from: &str, n: usize, t: Duration| {
            (0..n).filter(|_| r.answer(&mut request(false, 20), from.parse().unwrap(), t).is_ok()).count()
        };
        assert_eq!(answered(&mut r, ROBOT, 1000, at(0)), 10, "the burst");
        assert_eq!(answered(&mut r, "10.0.0.9:5", 1000, at(0)), 10, "another source has its own bucket");
        assert_eq!(answered(&mut r, ROBOT, 1000, at(100)), 10, "100 ms at 100/s");
        assert_eq!(answered(&mut r, ROBOT, 1000, at(10_000)), 10, "never more than the burst");
        assert_eq!(r.stats().refused[&Refusal::RateLimited], 4000 - 40);
    }

    #[test]
    fn the_source_table_stays_bounded() {
        let mut limiter = SourceLimiter::new(SourceLimit { per_second: 1.0, burst: 5.0, max_sources: 16 });
        for i in 0..10_000u32 {
            assert!(limiter.take(IpAddr::from(i.to_be_bytes()), at(u64::from(i))));
            assert!(limiter.sources() <= 16);
        }
        // The latest source keeps its (emptied) bucket while the table churns.
        let last = IpAddr::from(9_999u32.to_be_bytes());
        for _ in 0..4 {
            assert!(limiter.take(last, at(9_999)));
        }
        assert!(!limiter.take(last, at(9_999)));
    }

    #[test]
    fn a_limit_that_never_refills_still_makes_room_for_new_sources() {
        let mut limiter = SourceLimiter::new(SourceLimit { per_second: 0.0, burst: 1.0, max_sources: 2 });
        let source = |i: u8| IpAddr::from([10, 0, 0, i]);
        for i in 0..5 {
            assert!(limiter.take(source(i), Duration::from_secs(u64::from(i))), "a new source's first answer");
            assert!(!limiter.take(source(i), Duration::from_secs(u64::from(i))), "and no refill");
            assert!(limiter.sources() <= 2);
        }
    }

    /// Issue 28: a flood of 20 000 datagrams in two seconds at a keyed reflector:
    /// unsigned ones, one signed probe replayed from one address, and the same probe
    /// spoofed from 10 000 addresses. Nothing unsigned is answered, no reply is larger
    /// than its request (no amplification), the replays get the per-source rate, the
    /// spoofed sources their bursts at most, and the source table stays bounded.
    #[test]
    fn a_flood_of_unsigned_replayed_and_spoofed_probes_is_never_amplified() {
        let key = ProbeKey::new(KEY).unwrap();
        let limit = SourceLimit::default();
        let mut r = Reflector::new(ReflectorOptions { port: 7399, key: Some(key.clone()), ..Default::default() });
        let captured = signed(&key);
        let (mut received, mut sent, mut replays_answered) = (0usize, 0usize, 0u32);
        let replayer: SocketAddr = ROBOT.parse().unwrap();
        for i in 0..20_000u32 {
            let now = Duration::from_micros(u64::from(i) * 100);
            let (mut datagram, from) = match i % 4 {
                0 => (request(false, 1200), SocketAddr::from((IpAddr::from(i.to_be_bytes()), 40000))),
                1 => (captured.clone(), replayer),
                _ => (captured.clone(), SocketAddr::from((IpAddr::from((i | 1 << 31).to_be_bytes()), 40000))),
            };
            received += datagram.len();
            let len = datagram.len();
            if r.answer(&mut datagram, from, now).is_ok() {
                assert!(datagram.len() <= len, "a reply larger than its request");
                sent += datagram.len();
                replays_answered += u32::from(from == replayer);
            }
            assert!(r.limiter.sources() <= limit.max_sources, "the source table grew past its bound");
        }
        let refused = |why| r.stats().refused.get(&why).copied().unwrap_or(0);
        assert_eq!(refused(Refusal::BadTag), 5_000, "every unsigned datagram refused");
        // The replayer's 5 000 at 2 500 a second: its burst, then the sustained rate over 2 s.
        let allowed = limit.burst + limit.per_second * 2.0;
        assert!(f64::from(replays_answered) <= allowed + 1.0, "{replays_answered} replays answered");
        assert!(refused(Refusal::RateLimited) >= 5_000 - allowed as u64 - 1, "{}", r.stats());
        assert!(sent <= received, "{sent} bytes answered to {received} received");
    }

    #[test]
    fn with_a_key_only_signed_requests_are_answered_and_replies_are_signed() {
        let key = ProbeKey::new(KEY).unwrap();
        let mut r = Reflector::new(ReflectorOptions { port: 7399, key: Some(key.clone()), ..Default::default() });
        let from = ROBOT.parse().unwrap();
        assert_eq!(r.answer(&mut request(false, 64), from, at(0)), Err(Refusal::BadTag), "unsigned");
        assert_eq!(r.answer(&mut request(true, 64), from, at(0)), Err(Refusal::BadTag), "zero tag");
        let other = ProbeKey::new(b"another key, also long enough").unwrap();
        assert_eq!(r.answer(&mut signed(&other), from, at(0)), Err(Refusal::BadTag), "another key");
        let mut tampered = signed(&key);
        tampered[11] ^= 1;
        assert_eq!(r.answer(&mut tampered, from, at(0)), Err(Refusal::BadTag), "changed after signing");
        let mut good = signed(&key);
        r.answer(&mut good, from, at(0)).unwrap();
        let reply = Packet::new_checked(&good[..]).unwrap();
        assert_eq!(probe::Repr::parse(&reply).unwrap().kind, Kind::EchoReply);
        assert!(key.verify(&reply), "the reply is signed with the key");
        assert!(!other.verify(&reply));
    }

    #[test]
    fn the_allow_list_admits_only_its_peers() {
        let allow = vec!["10.0.0.0/30".parse().unwrap(), "fd00::5".parse().unwrap()];
        let mut r = Reflector::new(ReflectorOptions { port: 7399, allow, ..Default::default() });
        for (from, ok) in [
            ("10.0.0.1:4000", true),
            ("10.0.0.3:4000", true),
            ("10.0.0.4:4000", false),
            ("[::ffff:10.0.0.2]:4000", true),
            ("[fd00::5]:4000", true),
            ("[fd00::6]:4000", false),
        ] {
            let verdict = r.answer(&mut request(false, 20), from.parse().unwrap(), at(0));
            assert_eq!(verdict.is_ok(), ok, "{from}: {verdict:?}");
            if !ok {
                assert_eq!(verdict, Err(Refusal::NotAllowed));
            }
        }
    }

    #[test]
    fn peer_networks_and_keys_refuse_bad_text_with_a_reason() {
        assert_eq!("10.1.2.3/8".parse::<PeerNet>().unwrap().to_string(), "10.1.2.3/8");
        assert!("0.0.0.0/0".parse::<PeerNet>().unwrap().contains("192.0.2.1".parse().unwrap()));
        assert!(!"0.0.0.0/0".parse::<PeerNet>().unwrap().contains("::1".parse().unwrap()));
        assert!("10.0.0.0/33".parse::<PeerNet>().unwrap_err().contains("0 to 32"));
        assert!("robot".parse::<PeerNet>().unwrap_err().contains("`robot` is not an address"));
        assert!(ProbeKey::new(b"short").unwrap_err().contains("at least 16"));
        assert_eq!(format!("{:?}", ProbeKey::new(KEY).unwrap()), "ProbeKey(..)", "never printed");
    }

    #[test]
    fn key_files_are_read_without_their_final_newline_and_bad_ones_are_named() {
        let dir = std::env::temp_dir().join(format!("bx-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("key");
        std::fs::write(&file, [KEY, b"\n"].concat()).unwrap();
        let key = ProbeKey::from_file(&file).unwrap();
        assert!(key.verify(&Packet::new_checked(&signed(&ProbeKey::new(KEY).unwrap())[..]).unwrap()));
        std::fs::write(&file, b"short\n").unwrap();
        let short = ProbeKey::from_file(&file).unwrap_err().to_string();
        assert!(short.contains(&file.display().to_string()) && short.contains("at least 16"), "{short}");
        let missing = ProbeKey::from_file(&dir.join("none")).unwrap_err().to_string();
        assert!(missing.contains("none") && missing.contains("cannot read"), "{missing}");
        assert!(ProbeKey::from_file(&dir).unwrap_err().to_string().contains("not a regular file"));
        // A FIFO with no writer is refused at once: opening it to read would wait forever.
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success());
        let refused = ProbeKey::from_file(&fifo).unwrap_err().to_string();
        assert!(refused.contains("a FIFO, not a regular file"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

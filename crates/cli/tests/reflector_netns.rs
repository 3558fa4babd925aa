//! `bauxite reflect` under attack, through the binary, in two network namespaces
//! (needs root). Issue 10, finding 1: one probe spoofed from one reflector to another
//! used to make them answer each other forever (50 422 answers in 3 s).

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use bauxite_core::wire::probe::{self, Kind, Packet};
use bauxite_netlab::connect;
use bauxite_shaper::reflect::ProbeKey;
use bauxite_sys::{ChildGuard, Netns, root_or_skip, unique_name};

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");
const A: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 2);

/// A running `bauxite reflect` logging to a file; stopped (SIGTERM) and its log read by
/// [`Reflector::stop`], or stopped by its guard if the test fails first.
struct Reflector {
    guard: ChildGuard,
    log: PathBuf,
}

impl Reflector {
    fn start(ns: &Netns, args: &[&str]) -> Self {
        let log = std::env::temp_dir().join(format!("{}.log", unique_name("reflect")));
        let file = std::fs::File::create(&log).expect("create the reflector's log");
        let child = ns
            .command(BIN, &[&["reflect"], args].concat())
            .env("RUST_LOG", "info")
            .stderr(file)
            .spawn()
            .expect("start bauxite reflect");
        Self { guard: ChildGuard::new(child, Duration::from_secs(5)), log }
    }

    /// Stops it and returns how many probes it answered (from its closing log line) and its log.
    fn stop(mut self) -> (u64, String) {
        self.guard.stop().expect("stop the reflector");
        let log = std::fs::read_to_string(&self.log).expect("read the reflector's log");
        let answered =
            count(&log, "answered").unwrap_or_else(|| panic!("no closing statistics in the reflector's log:\n{log}"));
        (answered, log)
    }
}

impl Drop for Reflector {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The figure after `what ` in a reflector's closing statistics.
fn count(log: &str, what: &str) -> Option<u64> {
    let rest = log.split(&format!("{what} ")).nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Two namespaces joined by a veth pair: A at 10.99.0.1, B at 10.99.0.2.
fn two_hosts() -> (Netns, Netns) {
    let a = Netns::create(&unique_name("refl-a")).expect("namespace a");
    let b = Netns::create(&unique_name("refl-b")).expect("namespace b");
    connect(&a, "veth-a", &format!("{A}/24"), &b, "veth-b", &format!("{B}/24")).expect("veth pair");
    (a, b)
}

fn request(seq: u32) -> Vec<u8> {
    probe::Repr { kind: Kind::EchoRequest, tagged: false, stream: 0, seq, sent_ns: 1, receive_time_ns: None }.to_vec(64)
}

/// Sends one UDP datagram with a forged source, from a raw socket in `ns`.
fn spoof(ns: &Netns, src: SocketAddrV4, dst: SocketAddrV4, payload: Vec<u8>) {
    ns.run(move || {
        let udp_len = 8 + payload.len();
        let mut packet = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0];
        packet.extend_from_slice(&src.ip().octets());
        packet.extend_from_slice(&dst.ip().octets());
        packet.extend_from_slice(&src.port().to_be_bytes());
        packet.extend_from_slice(&dst.port().to_be_bytes());
        packet.extend_from_slice(&(udp_len as u16).to_be_bytes());
        packet.extend_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
        packet.extend_from_slice(&payload);
        let total = packet.len() as u16;
        packet[2..4].copy_from_slice(&total.to_be_bytes());
        #[allow(unsafe_code)]
        // SAFETY: a raw socket we own, a buffer and a sockaddr_in that live across the calls.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW);
            assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
            let to = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: 0,
                sin_addr: libc::in_addr { s_addr: u32::from(*dst.ip()).to_be() },
                sin_zero: [0; 8],
            };
            let sent = libc::sendto(
                fd,
                packet.as_ptr().cast(),
                packet.len(),
                0,
                (&raw const to).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            let error = std::io::Error::last_os_error();
            libc::close(fd);
            assert_eq!(sent, packet.len() as isize, "sending the spoofed datagram: {error}");
        }
    });
}

/// Sends `request` to `to` from an ephemeral port in `ns`; the answer, if one comes
/// within a second.
fn ask(ns: &Netns, to: SocketAddrV4, request: Vec<u8>) -> Option<Vec<u8>> {
    ns.run(move || {
        let socket = UdpSocket::bind("0.0.0.0:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        socket.send_to(&request, to).unwrap();
        let mut buffer = [0u8; 2048];
        socket.recv(&mut buffer).ok().map(|n| buffer[..n].to_vec())
    })
}

/// Waits until the reflector in `ns` at `at` answers (it has bound its socket); it has
/// then answered exactly one probe: one that arrived before the socket was bound was
/// dropped by the kernel, and a bound reflector answers in microseconds, far inside
/// the second each attempt waits.
fn wait_until_answering(ns: &Netns, at: SocketAddrV4) {
    for _ in 0..20 {
        if ask(ns, at, request(0)).is_some() {
            return;
        }
    }
    panic!("the reflector at {at} never answered");
}

#[test]
fn a_probe_spoofed_between_two_reflectors_gets_at_most_one_answer() {
    if !root_or_skip("a_probe_spoofed_between_two_reflectors_gets_at_most_one_answer") {
        return;
    }
    let (a, b) = two_hosts();
    // Both off the default port, so that a spoof between them passes the port rule and
    // only the reply's kind can stop the exchange.
    let ra = Reflector::start(&a, &["--bind", &A.to_string(), "--port", "7600"]);
    let rb = Reflector::start(&b, &["--bind", &B.to_string(), "--port", "7500"]);
    let (at_a, at_b) = (SocketAddrV4::new(A, 7600), SocketAddrV4::new(B, 7500));
    wait_until_answering(&b, at_a);
    wait_until_answering(&a, at_b);
    let warmup = 2;

    // From the default reflector port: refused at once.
    spoof(&a, SocketAddrV4::new(A, 7399), at_b, request(1));
    // From B's port (neither A's nor the default): A answers once; B refuses the reply.
    spoof(&b, at_b, at_a, request(2));
    // A reply from an ordinary port: never answered.
    spoof(&a, SocketAddrV4::new(A, 40000), at_b, reply(3));
    // The old reflector answered about 17 000 times a second here.
    std::thread::sleep(Duration::from_secs(3));

    let (answered_a, log_a) = ra.stop();
    let (answered_b, log_b) = rb.stop();
    let spoofed = (answered_a + answered_b).saturating_sub(warmup);
    assert!(spoofed <= 1, "three spoofed datagrams got {spoofed} answers in 3 s\nA: {log_a}\nB: {log_b}");
    assert_eq!(count(&log_b, "from_reflector_port").unwrap_or(0), 1, "B: {log_b}");
    assert_eq!(count(&log_b, "not_a_request").unwrap_or(0), 2, "B refused A's reply and the spoofed reply: {log_b}");
    assert_eq!(
        count(&log_a, "not_a_request").unwrap_or(0) + count(&log_a, "from_reflector_port").unwrap_or(0),
        0,
        "A: {log_a}"
    );
}

fn reply(seq: u32) -> Vec<u8> {
    probe::Repr { kind: Kind::EchoReply, tagged: false, stream: 0, seq, sent_ns: 1, receive_time_ns: None }.to_vec(64)
}

#[test]
fn the_reflector_answers_only_on_the_address_it_is_bound_to() {
    if !root_or_skip("the_reflector_answers_only_on_the_address_it_is_bound_to") {
        return;
    }
    let (a, b) = two_hosts();
    // No --bind: loopback only, so B cannot reach it, and A's loopback can.
    let default = Reflector::start(&a, &[]);
    wait_until_answering(&a, SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7399));
    assert_eq!(ask(&b, SocketAddrV4::new(A, 7399), request(1)), None, "not reachable beyond loopback");
    let (answered, log) = default.stop();
    assert!(answered >= 1, "{log}");
    // --bind A: reachable from B, not on A's loopback.
    let bound = Reflector::start(&a, &["--bind", &A.to_string()]);
    wait_until_answering(&b, SocketAddrV4::new(A, 7399));
    assert_eq!(ask(&a, SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7399), request(2)), None, "not on loopback");
    let reply = ask(&b, SocketAddrV4::new(A, 7399), request(3)).expect("answered on its address");
    let reply = probe::Repr::parse_bytes(&reply).unwrap();
    assert_eq!((reply.kind, reply.seq), (Kind::EchoReply, 3));
    bound.stop();
}

#[test]
fn with_a_key_file_only_signed_probes_are_answered_and_malformed_ones_never() {
    if !root_or_skip("with_a_key_file_only_signed_probes_are_answered_and_malformed_ones_never") {
        return;
    }
    let (a, b) = two_hosts();
    let file = std::env::temp_dir().join(format!("{}.key", unique_name("reflect-key")));
    std::fs::write(&file, "sixteen bytes or more of key\n").unwrap();
    let reflector = Reflector::start(&a, &["--bind", &A.to_string(), "--key-file", file.to_str().unwrap()]);
    let key = ProbeKey::from_file(&file).unwrap();
    let at = SocketAddrV4::new(A, 7399);
    let signed = |seq| {
        let mut bytes =
            probe::Repr { kind: Kind::EchoRequest, tagged: true, stream: 0, seq, sent_ns: 1, receive_time_ns: None }
                .to_vec(64);
        key.sign(&mut Packet::new_checked(&mut bytes[..]).unwrap());
        bytes
    };
    let mut answer = None;
    for seq in 0..20 {
        answer = ask(&b, at, signed(seq));
        if answer.is_some() {
            break;
        }
    }
    let answer = answer.expect("a signed probe is answered");
    std::fs::remove_file(&file).unwrap();
    assert!(key.verify(&Packet::new_checked(&answer[..]).unwrap()), "and the answer is signed");
    assert_eq!(ask(&b, at, request(100)), None, "an unsigned probe is not");
    let mut forged = signed(101);
    forged[9] ^= 0x40;
    assert_eq!(ask(&b, at, forged), None, "nor a probe changed after signing");
    for malformed in [vec![], b"BXR1\0\0\0\x01\0\0\0\0\0\0\0\x05".to_vec(), signed(102)[..30].to_vec()] {
        assert_eq!(ask(&b, at, malformed), None, "nor a malformed one");
    }
    let (_, log) = reflector.stop();
    assert_eq!(count(&log, "bad_tag").unwrap_or(0), 2, "{log}");
    assert_eq!(count(&log, "malformed").unwrap_or(0), 3, "{log}");
}

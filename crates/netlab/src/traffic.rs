//! Traffic generators and receivers: periodic UDP streams with probe headers, a TCP
//! flood and a TCP sink. Each runs on its own thread (see [`Netns::spawn`](bauxite_sys::Netns::spawn))
//! until a shared stop flag is set.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bauxite_core::wire::probe::{self, Kind};
use bauxite_sys::{monotonic_ns, rx_time};

use crate::NetlabError;

/// A shared flag that stops generators and receivers.
pub type StopFlag = Arc<AtomicBool>;

/// A periodic UDP stream.
#[derive(Clone, Debug)]
pub struct UdpStream {
    /// Stream id written into every message (use the destination port).
    pub stream: u16,
    /// Where to send.
    pub dst: SocketAddr,
    /// Messages per second.
    pub rate_hz: f64,
    /// UDP payload bytes per message (at least the probe header).
    pub size: usize,
}

/// Sends `spec` on an absolute schedule (no drift) from now until `stop`; returns messages sent.
pub fn send_udp(socket: &UdpSocket, spec: &UdpStream, stop: &AtomicBool) -> u32 {
    send_udp_from(socket, spec, Instant::now(), stop)
}

/// [`send_udp`], the first message at `start` (streams that share a start keep their
/// phases to each other, whenever their threads began).
pub fn send_udp_from(socket: &UdpSocket, spec: &UdpStream, start: Instant, stop: &AtomicBool) -> u32 {
    let period = Duration::from_secs_f64(1.0 / spec.rate_hz);
    let mut seq = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let due = start + period * seq;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let header = probe::Repr {
            kind: Kind::Data,
            tagged: false,
            stream: spec.stream,
            seq,
            sent_ns: monotonic_ns(),
            receive_time_ns: None,
        };
        let message = header.to_vec(spec.size);
        // A full socket buffer or an unreachable peer is the network's problem, not the generator's.
        let _ = socket.send_to(&message, spec.dst);
        seq += 1;
    }
    seq
}

/// One received probe message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Its header.
    pub header: probe::Repr,
    /// `CLOCK_MONOTONIC` receive time in nanoseconds: when the kernel queued it to the
    /// socket ([`bauxite_sys::rx_time`]), so the receiving thread's wake-up, which a
    /// loaded machine stretches to milliseconds, is not counted as the network's.
    pub received_ns: u64,
}

impl Arrival {
    /// One-way latency in milliseconds.
    pub fn latency_ms(&self) -> f64 {
        self.received_ns.saturating_sub(self.header.sent_ns) as f64 / 1e6
    }
}

/// Receives probe messages until `stop`; datagrams that are not data probes are counted and skipped.
/// A receive error other than a timeout ends it with that error.
pub fn receive_udp(socket: &UdpSocket, stop: &AtomicBool) -> std::io::Result<(Vec<Arrival>, u64)> {
    receive_udp_with(socket, stop, |_| {})
}

/// [`receive_udp`], calling `on_arrival` for each message as it arrives.
pub fn receive_udp_with(
    socket: &UdpSocket,
    stop: &AtomicBool,
    mut on_arrival: impl FnMut(&Arrival),
) -> std::io::Result<(Vec<Arrival>, u64)> {
    socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    rx_time::enable(socket)?;
    let mut buffer = vec![0u8; 65536];
    let mut arrivals = Vec::new();
    let mut malformed = 0;
    while !stop.load(Ordering::Relaxed) {
        match rx_time::recv(socket, &mut buffer) {
            Ok((n, stamp)) => match probe::Repr::parse_bytes(&buffer[..n]) {
                Ok(header) if header.kind == Kind::Data => {
                    // The kernel turns its stamps on a few milliseconds after
                    // `enable` and stamps at the read until then; never unstamped
                    // once enabled, so this is only a fallback.
                    let arrival = Arrival { header, received_ns: stamp.unwrap_or_else(monotonic_ns) };
                    on_arrival(&arrival);
                    arrivals.push(arrival);
                }
                Ok(_) | Err(_) => malformed += 1,
            },
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((arrivals, malformed))
}

/// Linux's default congestion control. Some machines (this project's CI among them)
/// default to BBR, which keeps a bottleneck's queue short on its own; the seed's
/// "standard stack" is CUBIC, so generators ask for it explicitly.
pub use bauxite_core::workload::STANDARD_CONGESTION_CONTROL;

/// Sets the TCP congestion control of one connection (`cubic`, `bbr`, `reno`, …).
/// A kernel without it (and without its module) gets an error that says which
/// module to load.
pub fn set_congestion_control(stream: &TcpStream, name: &str) -> Result<(), NetlabError> {
    use std::os::fd::AsRawFd;
    #[allow(unsafe_code)]
    // SAFETY: a valid socket fd and a buffer of the given length.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let source = std::io::Error::last_os_error();
    let name = name.to_string();
    Err(match source.raw_os_error() {
        Some(libc::ENOENT) => NetlabError::CongestionControlUnavailable { name, source },
        _ => NetlabError::CongestionControl { name, source },
    })
}

/// Writes as fast as the connection takes until `stop`; returns bytes written.
pub fn tcp_flood(mut stream: TcpStream, stop: &AtomicBool) -> u64 {
    stream.set_write_timeout(Some(Duration::from_millis(50))).expect("set a write timeout");
    let chunk = vec![0x5au8; 16 * 1024];
    let mut written = 0u64;
    while !stop.load(Ordering::Relaxed) {
        match stream.write(&chunk) {
            Ok(n) => written += n as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    written
}

/// Bytes received by a TCP sink, with the time of each read.
#[derive(Clone, Debug, Default)]
pub struct SinkLog {
    /// `(CLOCK_MONOTONIC ns, bytes)` per read.
    pub reads: Vec<(u64, usize)>,
}

impl SinkLog {
    /// Throughput (bit/s) between two monotonic times.
    pub fn throughput_bps(&self, from_ns: u64, to_ns: u64) -> f64 {
        let bytes: usize = self.reads.iter().filter(|(t, _)| *t >= from_ns && *t < to_ns).map(|(_, n)| n).sum();
        bytes as f64 * 8.0 / ((to_ns - from_ns) as f64 / 1e9)
    }
}

/// Accepts one connection and reads it until `stop` or its end. An error accepting
/// it ends the sink with that error.
pub fn tcp_sink(listener: TcpListener, stop: &AtomicBool) -> std::io::Result<SinkLog> {
    listener.set_nonblocking(true)?;
    let mut log = SinkLog::default();
    let mut stream = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(log);
        }
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e),
        }
    };
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut buffer = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::Relaxed) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => log.reads.push((monotonic_ns(), n)),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_congestion_control_says_which_module_to_load() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let e = set_congestion_control(&stream, "bxnone").unwrap_err();
        assert!(matches!(e, NetlabError::CongestionControlUnavailable { .. }), "{e:?}");
        assert_eq!(e.to_string(), "congestion control bxnone unavailable: modprobe tcp_bxnone");
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(source.and_then(std::io::Error::raw_os_error), Some(libc::ENOENT));
        // The one every kernel has built in is accepted.
        set_congestion_control(&stream, "reno").unwrap();
    }

    #[test]
    fn a_receive_error_ends_the_receiver_with_it() {
        // A UDP socket that is connected to a closed port gets ECONNREFUSED on its next receive.
        let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap();
        drop(closed);
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.connect(port).unwrap();
        socket.send(b"x").unwrap();
        let stop = AtomicBool::new(false);
        let e = receive_udp(&socket, &stop).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
    }
}

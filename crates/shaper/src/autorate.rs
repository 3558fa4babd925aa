//! `rate: auto`: following a link whose rate changes, from delay probes.
//!
//! When the bottleneck is downstream (a modem's deep buffer), Bauxite cannot see its
//! queue; it sees the queue's delay. The daemon sends small UDP probes every few
//! milliseconds to a reflector on the far side (`bauxite reflect`) and measures their
//! round-trip time (the probe header is [`bauxite_core::wire::probe`]; the reflector's
//! rules are in [`crate::reflect`]). The [`RateController`] sees the modem's queue in
//! the answers (and in answers overdue), measures the link's capacity from trains of
//! answers that met a queue, drains the queue, resumes at the capacity, and probes
//! upwards after a hold (its module says how).
//!
//! The control law itself ([`RateController`]) is sans-IO and lives in
//! `bauxite-control`, which the simulator shares; this module is its I/O, the prober.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use bauxite_core::wire::probe::{self, Kind, Packet};
use bauxite_sys::{monotonic_ns, rx_time};

pub use bauxite_control::RateController;

use crate::ShaperError;
use crate::reflect::ProbeKey;

/// One probe's round trip.
#[derive(Clone, Copy, Debug)]
pub struct RttSample {
    /// When the answer arrived (`CLOCK_MONOTONIC` ns).
    pub received_ns: u64,
    /// The round-trip time.
    pub rtt: Duration,
}

/// Probes remembered by their sequence number: a reply must echo the send time the
/// prober recorded for its number, which an off-path host cannot guess to the
/// nanosecond, and answers slower than this many probes are not samples anyway.
const SENT_WINDOW: usize = 256;

/// The sending half of the prober: the daemon's control loop sends each probe itself
/// when [`RateController::probe_due`] says so, right after it reads the lanes' byte
/// counters, stamped with the time of that read, so that the bytes sent before every
/// probe are known (a prober on its own clock made the measured capacity 6 % too high
/// at 1.5 Mbit/s).
pub struct ProbeSender {
    socket: UdpSocket,
    key: Option<ProbeKey>,
    /// Each probe's send time by its number modulo [`SENT_WINDOW`], for the receiver.
    sent: Arc<[AtomicU64; SENT_WINDOW]>,
    seq: u32,
}

impl ProbeSender {
    /// Sends a probe stamped `now_ns` (`CLOCK_MONOTONIC`).
    pub fn send(&mut self, now_ns: u64) {
        self.sent[self.seq as usize % SENT_WINDOW].store(now_ns, Ordering::Relaxed);
        let request = probe::Repr {
            kind: Kind::EchoRequest,
            tagged: self.key.is_some(),
            stream: 0,
            seq: self.seq,
            sent_ns: now_ns,
        };
        let mut bytes = request.to_vec(0);
        if let Some(key) = &self.key {
            key.sign(&mut Packet::new_unchecked(&mut bytes[..]));
        }
        let _ = self.socket.send(&bytes); // a refused or full path shows up as silence
        self.seq = self.seq.wrapping_add(1);
    }
}

/// Opens the probes' socket to `reflector`, starts the thread that receives the
/// answers and reports each one's RTT on `samples` until `stop`, and returns the
/// sending half. Probes are [`Kind::EchoRequest`], signed with `key` if there is one.
/// An answer that is not a reply to one of the last `SENT_WINDOW` (256) probes (its
/// number and its recorded send time), or whose signature fails, is ignored (a
/// reflector without the key shows up as silence, which a warning explains). The key
/// is read by the caller, before anything is attached ([`crate::reflect::key_of`]).
pub fn start_prober(
    reflector: SocketAddr,
    key: Option<ProbeKey>,
    samples: Sender<RttSample>,
    stop: Arc<AtomicBool>,
) -> Result<ProbeSender, ShaperError> {
    let io = |e| ShaperError::io(format!("starting rate probes to {reflector}"))(e);
    let socket = UdpSocket::bind(if reflector.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }).map_err(io)?;
    socket.connect(reflector).map_err(io)?;
    socket.set_read_timeout(Some(Duration::from_millis(50))).map_err(io)?;
    // Answers are timed when they reach the socket, not when this thread reads them.
    rx_time::enable(&socket).map_err(io)?;
    let sender = socket.try_clone().map_err(io)?;
    let sent: Arc<[AtomicU64; SENT_WINDOW]> = Arc::new(std::array::from_fn(|_| AtomicU64::new(0)));
    let recorded = Arc::clone(&sent);
    let receive_key = key.clone();
    std::thread::spawn(move || receive_replies(&socket, receive_key.as_ref(), &recorded, &samples, &stop));
    Ok(ProbeSender { socket: sender, key, sent, seq: 0 })
}

/// The prober's receiving side: one [`RttSample`] per valid reply.
fn receive_replies(
    socket: &UdpSocket,
    key: Option<&ProbeKey>,
    sent: &[AtomicU64; SENT_WINDOW],
    samples: &Sender<RttSample>,
    stop: &AtomicBool,
) {
    let mut buffer = [0u8; 2048];
    let mut warned = false;
    while !stop.load(Ordering::Relaxed) {
        match rx_time::recv(socket, &mut buffer) {
            Ok((n, stamp)) => {
                let Ok(packet) = Packet::new_checked(&buffer[..n]) else { continue };
                let Ok(reply) = probe::Repr::parse(&packet) else { continue };
                if reply.kind != Kind::EchoReply || !answers_a_probe_sent(&reply, sent) {
                    continue;
                }
                if let Some(key) = key
                    && !key.verify(&packet)
                {
                    if !warned {
                        tracing::warn!(
                            "a reply from the reflector fails the probe key: does `bauxite reflect` have the same --key-file?"
                        );
                        warned = true;
                    }
                    continue;
                }
                let received_ns = stamp.unwrap_or_else(monotonic_ns);
                let sample =
                    RttSample { received_ns, rtt: Duration::from_nanos(received_ns.saturating_sub(reply.sent_ns)) };
                if samples.send(sample).is_err() {
                    return;
                }
            }
            Err(e)
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::ConnectionRefused) => {}
            Err(_) => return,
        }
    }
}

/// Whether `reply` answers a probe this prober sent: its number's recorded send time.
fn answers_a_probe_sent(reply: &probe::Repr, sent: &[AtomicU64; SENT_WINDOW]) -> bool {
    reply.sent_ns != 0 && sent[reply.seq as usize % SENT_WINDOW].load(Ordering::Relaxed) == reply.sent_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_replies_to_probes_sent_count() {
        let sent: [AtomicU64; SENT_WINDOW] = std::array::from_fn(|_| AtomicU64::new(0));
        sent[7].store(123_456_789, Ordering::Relaxed);
        let reply = |seq, sent_ns| probe::Repr { kind: Kind::EchoReply, tagged: false, stream: 0, seq, sent_ns };
        assert!(answers_a_probe_sent(&reply(7, 123_456_789), &sent));
        assert!(!answers_a_probe_sent(&reply(7, 123_456_788), &sent), "a guessed send time");
        assert!(!answers_a_probe_sent(&reply(8, 123_456_789), &sent), "another probe's number");
        assert!(!answers_a_probe_sent(&reply(9, 0), &sent), "a number never sent");
        sent[7].store(999, Ordering::Relaxed); // 256 probes later, the slot is reused
        assert!(!answers_a_probe_sent(&reply(7, 123_456_789), &sent), "too old");
    }
}

//! ICMP echo and timestamp messages: the probes `rate: auto` sends to a reflector
//! that runs no Bauxite (any host that answers `ping`, or ICMP timestamp requests,
//! as cake-autorate's fping and tsping use).
//!
//! An echo request carries Bauxite's payload, which the far side's kernel sends
//! back unchanged: [`ECHO_MAGIC`] and the send time (`CLOCK_MONOTONIC` ns, as in
//! [`super::probe`]). A timestamp request carries none (the message has a fixed
//! size): the prober remembers each one's send time by its sequence number, and
//! the reply echoes the originate time (ms since midnight UT) it was sent with.
//!
//! Layouts (RFC 792, RFC 4443), big-endian:
//!
//! | bytes | echo | timestamp (IPv4 only) |
//! |---|---|---|
//! | 0 | type: 8 request, 0 reply (ICMPv6: 128, 129) | type: 13 request, 14 reply |
//! | 1 | code 0 | code 0 |
//! | 2..4 | checksum | checksum |
//! | 4..6 | identifier | identifier |
//! | 6..8 | sequence number | sequence number |
//! | 8..12 | [`ECHO_MAGIC`] | originate time, ms since midnight UT |
//! | 12..16 | send time, ns (high half) | receive time at the far side |
//! | 16..20 | send time, ns (low half) | transmit time at the far side |
//!
//! The IPv4 checksum is the sender's to set and the receiver's to check (a raw
//! socket gets ICMP unchecked); an ICMPv6 raw socket has the kernel do both, over a
//! pseudo-header this module cannot see, so [`Message::emit`] leaves it zero and
//! [`Message::parse`] does not check it for IPv6.

use super::{WireError, array, check_len};

/// The first payload bytes of Bauxite's echo requests: a reply without them answers
/// somebody else's `ping`.
pub const ECHO_MAGIC: [u8; 4] = *b"BXI1";
/// Bytes of every message this module reads or writes.
pub const MESSAGE_LEN: usize = 20;

const WHAT: &str = "ICMP message";

/// The ICMP version a message travels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// ICMP over IPv4.
    V4,
    /// ICMPv6.
    V6,
}

/// A probe request or its reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// An echo request or reply with Bauxite's payload.
    Echo {
        /// A reply (else a request).
        reply: bool,
        /// The identifier (the prober's own: others' replies are not samples).
        id: u16,
        /// The sequence number.
        seq: u16,
        /// When the request was sent (`CLOCK_MONOTONIC` ns), echoed by the reply.
        sent_ns: u64,
    },
    /// A timestamp request or reply (IPv4 only).
    Timestamp {
        /// A reply (else a request).
        reply: bool,
        /// The identifier.
        id: u16,
        /// The sequence number.
        seq: u16,
        /// When the request was sent, ms since midnight UT; echoed by the reply.
        originate_ms: u32,
        /// When the far side received it (its clock, ms since midnight UT).
        receive_ms: u32,
        /// When the far side sent the reply.
        transmit_ms: u32,
    },
}

impl Message {
    /// The ICMP type of this message on `family`, or `None` where it has no such
    /// message (ICMPv6 has no timestamp).
    fn icmp_type(&self, family: Family) -> Option<u8> {
        match (*self, family) {
            (Message::Echo { reply: false, .. }, Family::V4) => Some(8),
            (Message::Echo { reply: true, .. }, Family::V4) => Some(0),
            (Message::Echo { reply: false, .. }, Family::V6) => Some(128),
            (Message::Echo { reply: true, .. }, Family::V6) => Some(129),
            (Message::Timestamp { reply: false, .. }, Family::V4) => Some(13),
            (Message::Timestamp { reply: true, .. }, Family::V4) => Some(14),
            (Message::Timestamp { .. }, Family::V6) => None,
        }
    }

    /// The message's bytes on `family`, checksummed on IPv4 (see the module doc).
    ///
    /// # Panics
    /// On a timestamp message for IPv6, which ICMPv6 does not have (a reflector of
    /// that kind is refused when the profile is validated).
    pub fn emit(&self, family: Family) -> [u8; MESSAGE_LEN] {
        let icmp_type = self.icmp_type(family).expect("ICMPv6 has no timestamp message");
        let mut bytes = [0u8; MESSAGE_LEN];
        bytes[0] = icmp_type;
        let (id, seq) = match *self {
            Message::Echo { id, seq, sent_ns, .. } => {
                bytes[8..12].copy_from_slice(&ECHO_MAGIC);
                bytes[12..20].copy_from_slice(&sent_ns.to_be_bytes());
                (id, seq)
            }
            Message::Timestamp { id, seq, originate_ms, receive_ms, transmit_ms, .. } => {
                bytes[8..12].copy_from_slice(&originate_ms.to_be_bytes());
                bytes[12..16].copy_from_slice(&receive_ms.to_be_bytes());
                bytes[16..20].copy_from_slice(&transmit_ms.to_be_bytes());
                (id, seq)
            }
        };
        bytes[4..6].copy_from_slice(&id.to_be_bytes());
        bytes[6..8].copy_from_slice(&seq.to_be_bytes());
        if family == Family::V4 {
            let sum = checksum(&bytes);
            bytes[2..4].copy_from_slice(&sum.to_be_bytes());
        }
        bytes
    }

    /// Reads an ICMP message (without its IP header) received on `family`: only
    /// Bauxite's echo messages and timestamp messages are read, anything else (other
    /// types, codes, somebody else's pings, a bad IPv4 checksum) is refused.
    pub fn parse(bytes: &[u8], family: Family) -> Result<Self, WireError> {
        check_len(WHAT, bytes.len(), MESSAGE_LEN)?;
        let bad = |field, value: u64| WireError::BadField { what: WHAT, field, value };
        if bytes[1] != 0 {
            return Err(bad("code", bytes[1].into()));
        }
        // Longer messages (padding) are checksummed whole.
        if family == Family::V4 && checksum(bytes) != 0 {
            return Err(bad("checksum", u16::from_be_bytes(array(bytes, 2)).into()));
        }
        let id = u16::from_be_bytes(array(bytes, 4));
        let seq = u16::from_be_bytes(array(bytes, 6));
        let word = |at| u32::from_be_bytes(array(bytes, at));
        let echo = |reply| {
            if array::<4>(bytes, 8) != ECHO_MAGIC {
                return Err(WireError::BadMagic { what: WHAT });
            }
            Ok(Message::Echo { reply, id, seq, sent_ns: u64::from_be_bytes(array(bytes, 12)) })
        };
        let timestamp = |reply| Message::Timestamp {
            reply,
            id,
            seq,
            originate_ms: word(8),
            receive_ms: word(12),
            transmit_ms: word(16),
        };
        match (bytes[0], family) {
            (8, Family::V4) | (128, Family::V6) => echo(false),
            (0, Family::V4) | (129, Family::V6) => echo(true),
            (13, Family::V4) => Ok(timestamp(false)),
            (14, Family::V4) => Ok(timestamp(true)),
            (t, _) => Err(bad("type", t.into())),
        }
    }
}

/// The ICMP message inside an IPv4 datagram (what a raw IPv4 socket receives): the
/// header's version, length and protocol are checked, then [`Message::parse`].
pub fn parse_ipv4_datagram(datagram: &[u8]) -> Result<Message, WireError> {
    const IP_WHAT: &str = "IPv4 header";
    check_len(IP_WHAT, datagram.len(), 20)?;
    if datagram[0] >> 4 != 4 {
        return Err(WireError::BadField { what: IP_WHAT, field: "version", value: (datagram[0] >> 4).into() });
    }
    let header_len = usize::from(datagram[0] & 0x0f) * 4;
    if header_len < 20 {
        return Err(WireError::BadField { what: IP_WHAT, field: "ihl", value: header_len as u64 / 4 });
    }
    check_len(IP_WHAT, datagram.len(), header_len)?;
    if datagram[9] != 1 {
        return Err(WireError::BadField { what: IP_WHAT, field: "protocol", value: datagram[9].into() });
    }
    Message::parse(&datagram[header_len..], Family::V4)
}

/// The Internet checksum (RFC 1071) of `bytes`: zero over a message whose checksum
/// field is right.
fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Milliseconds since midnight UT of a `CLOCK_REALTIME` time in ns: the clock of
/// ICMP timestamps.
pub fn ms_since_midnight(realtime_ns: u64) -> u32 {
    ((realtime_ns / 1_000_000) % 86_400_000) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_and_timestamp_round_trip_and_an_ipv4_checksum_verifies() {
        let echo = Message::Echo { reply: false, id: 0xbeef, seq: 7, sent_ns: 123_456_789_012 };
        let bytes = echo.emit(Family::V4);
        assert_eq!(bytes[0], 8);
        assert_eq!(checksum(&bytes), 0, "a checksummed message sums to zero");
        assert_eq!(Message::parse(&bytes, Family::V4), Ok(echo));
        let v6 = echo.emit(Family::V6);
        assert_eq!((v6[0], &v6[2..4]), (128, &[0u8, 0][..]), "the kernel checksums ICMPv6");
        assert_eq!(Message::parse(&v6, Family::V6), Ok(echo));

        let ts = Message::Timestamp { reply: true, id: 1, seq: 2, originate_ms: 3, receive_ms: 4, transmit_ms: 5 };
        assert_eq!(Message::parse(&ts.emit(Family::V4), Family::V4), Ok(ts));
    }

    #[test]
    fn what_is_not_a_probe_is_refused() {
        let echo = Message::Echo { reply: true, id: 1, seq: 2, sent_ns: 3 }.emit(Family::V4);
        let mut corrupt = echo;
        corrupt[13] ^= 0x40;
        assert!(matches!(Message::parse(&corrupt, Family::V4), Err(WireError::BadField { field: "checksum", .. })));
        let mut foreign = echo; // somebody's `ping`: another payload
        foreign[8..12].copy_from_slice(b"ping");
        let sum = {
            foreign[2..4].fill(0);
            checksum(&foreign)
        };
        foreign[2..4].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(Message::parse(&foreign, Family::V4), Err(WireError::BadMagic { what: WHAT }));
        assert!(matches!(Message::parse(&echo[..19], Family::V4), Err(WireError::Truncated { .. })));
        let unreachable = [3u8; MESSAGE_LEN];
        assert!(Message::parse(&unreachable, Family::V6).is_err());
        let timestamp_on_v6 =
            Message::Timestamp { reply: true, id: 1, seq: 2, originate_ms: 3, receive_ms: 4, transmit_ms: 5 }
                .emit(Family::V4);
        assert!(matches!(Message::parse(&timestamp_on_v6, Family::V6), Err(WireError::BadField { field: "type", .. })));
    }

    #[test]
    fn the_ip_header_is_checked_and_skipped() {
        let message = Message::Echo { reply: true, id: 9, seq: 10, sent_ns: 11 };
        let mut datagram = vec![0x46, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 1, 1, 1, 1];
        datagram.extend_from_slice(&message.emit(Family::V4));
        assert_eq!(parse_ipv4_datagram(&datagram), Ok(message), "a header with options (IHL 6)");
        datagram[9] = 17;
        assert!(matches!(parse_ipv4_datagram(&datagram), Err(WireError::BadField { field: "protocol", .. })));
        assert!(parse_ipv4_datagram(&datagram[..22]).is_err());
        assert!(parse_ipv4_datagram(&[0x45; 10]).is_err());
    }

    #[test]
    fn timestamps_count_from_midnight() {
        assert_eq!(ms_since_midnight(0), 0);
        assert_eq!(ms_since_midnight(86_400_000_000_000 + 1_500_000_000), 1_500);
    }
}

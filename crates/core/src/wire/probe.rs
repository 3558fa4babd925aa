//! The probe header: the demo's generated messages (one-way latency, same host, so the
//! send time is `CLOCK_MONOTONIC` and exact) and the link-rate probes of `rate: auto`
//! (round trips through `bauxite reflect`).
//!
//! A reflector answers an [`Kind::EchoRequest`] with an [`Kind::EchoReply`] and never
//! answers anything else: a reply can never start another exchange, so two reflectors
//! cannot be made to answer each other forever (issue 10, finding 1). That is why
//! version 2 has a `kind` (version 1 echoed requests unchanged, with magic `BXR1`
//! for link probes and `BXP1` for messages).
//!
//! Layout, big-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 0..3 | magic `BXP` |
//! | 3 | version, ASCII `2` (so a header starts `BXP2`) |
//! | 4 | kind: 0 data, 1 echo request, 2 echo reply |
//! | 5 | flags: bit 0 = a [`TAG_LEN`]-byte authentication tag follows the header |
//! | 6..8 | stream (e.g. the destination port) |
//! | 8..12 | sequence number in the stream |
//! | 12..20 | send time, `CLOCK_MONOTONIC` ns |
//! | 20..52 | the tag (HMAC-SHA256 over [`Packet::authenticated_parts`]), when flagged |
//! | next 8 | in a reply flagged [`FLAG_RECEIVE_TIME`]: when the reflector received the request, its own monotonic clock, ns |
//! | … | padding up to the message's size |
//!
//! A request with room after the header (and tag) for the receive time gets it in its
//! reply: with it the prober splits the round trip into its two ways' queueing (the
//! reflector's clock has an unknown offset, which each way's least delay takes away).
//! A reflector of an older build leaves the room as it was and the flag clear.

use super::{WireError, array, check_len};

/// The magic every probe starts with.
pub const MAGIC: [u8; 3] = *b"BXP";
/// The version this build reads and writes.
pub const VERSION: u8 = b'2';
/// Bytes of the header without a tag; messages are at least this long.
pub const HEADER_LEN: usize = 20;
/// Bytes of the authentication tag (an HMAC-SHA256).
pub const TAG_LEN: usize = 32;
/// The flag bit that says a tag follows the header.
pub const FLAG_TAGGED: u8 = 0x01;
/// The flag bit that says the reflector's receive time follows the header and tag.
pub const FLAG_RECEIVE_TIME: u8 = 0x02;
/// Bytes of the reflector's receive time.
pub const RECEIVE_TIME_LEN: usize = 8;

/// The length of a request that leaves its reply room for the reflector's receive time.
pub const fn request_len_with_receive_time(tagged: bool) -> usize {
    HEADER_LEN + if tagged { TAG_LEN } else { 0 } + RECEIVE_TIME_LEN
}

const WHAT: &str = "probe";

mod field {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..3;
    pub const VERSION: usize = 3;
    pub const KIND: usize = 4;
    pub const FLAGS: usize = 5;
    pub const STREAM: usize = 6;
    pub const SEQ: usize = 8;
    pub const SENT_NS: usize = 12;
    pub const TAG: Range<usize> = super::HEADER_LEN..super::HEADER_LEN + super::TAG_LEN;
}

/// What a probe is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A one-way message of a generated stream.
    Data,
    /// A link probe asking `bauxite reflect` for an answer.
    EchoRequest,
    /// The reflector's answer; never answered.
    EchoReply,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Kind::Data),
            1 => Some(Kind::EchoRequest),
            2 => Some(Kind::EchoReply),
            _ => None,
        }
    }

    fn byte(self) -> u8 {
        match self {
            Kind::Data => 0,
            Kind::EchoRequest => 1,
            Kind::EchoReply => 2,
        }
    }
}

/// A zero-copy view of a probe in a buffer.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without length checks: accessors panic on a buffer too short for them.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// A view of a buffer long enough for the header and, when flagged, the tag.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the header and, when the flags announce one, the tag.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        check_len(WHAT, len, HEADER_LEN)?;
        let receive_time = if self.flags() & FLAG_RECEIVE_TIME != 0 { RECEIVE_TIME_LEN } else { 0 };
        check_len(WHAT, len, self.receive_time_at() + receive_time)
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The magic bytes.
    pub fn magic(&self) -> [u8; 3] {
        array(self.buffer.as_ref(), field::MAGIC.start)
    }

    /// The version byte.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// The kind byte, as found.
    pub fn kind_byte(&self) -> u8 {
        self.buffer.as_ref()[field::KIND]
    }

    /// The flags byte, as found.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// Whether a tag follows the header.
    pub fn tagged(&self) -> bool {
        self.flags() & FLAG_TAGGED != 0
    }

    /// The stream.
    pub fn stream(&self) -> u16 {
        u16::from_be_bytes(array(self.buffer.as_ref(), field::STREAM))
    }

    /// The sequence number.
    pub fn seq(&self) -> u32 {
        u32::from_be_bytes(array(self.buffer.as_ref(), field::SEQ))
    }

    /// The send time, `CLOCK_MONOTONIC` ns.
    pub fn sent_ns(&self) -> u64 {
        u64::from_be_bytes(array(self.buffer.as_ref(), field::SENT_NS))
    }

    /// Where the receive time goes: after the header and the tag, if there is one.
    fn receive_time_at(&self) -> usize {
        HEADER_LEN + if self.tagged() { TAG_LEN } else { 0 }
    }

    /// The reflector's receive time (its own monotonic clock, ns), in a reply flagged
    /// [`FLAG_RECEIVE_TIME`] long enough to hold it.
    pub fn receive_time_ns(&self) -> Option<u64> {
        let at = self.receive_time_at();
        let bytes = self.buffer.as_ref().get(at..at + RECEIVE_TIME_LEN)?;
        (self.flags() & FLAG_RECEIVE_TIME != 0).then(|| u64::from_be_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// The authentication tag, when flagged.
    pub fn tag(&self) -> Option<&[u8]> {
        self.tagged().then(|| &self.buffer.as_ref()[field::TAG])
    }

    /// The bytes a tag authenticates: the header and everything after the tag (the tag
    /// itself excluded; without a tag, the whole message and nothing).
    pub fn authenticated_parts(&self) -> [&[u8]; 2] {
        let bytes = self.buffer.as_ref();
        if self.tagged() { [&bytes[..HEADER_LEN], &bytes[field::TAG.end..]] } else { [bytes, &[]] }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the reflector's receive time and its flag, if the message has room for it
    /// after the header and tag; returns whether it had (before signing: the tag covers it).
    pub fn set_receive_time_ns(&mut self, ns: u64) -> bool {
        let at = self.receive_time_at();
        let Some(slot) = self.buffer.as_mut().get_mut(at..at + RECEIVE_TIME_LEN) else { return false };
        slot.copy_from_slice(&ns.to_be_bytes());
        let flags = self.flags() | FLAG_RECEIVE_TIME;
        self.set_flags(flags);
        true
    }

    /// Writes the magic and this build's version.
    pub fn set_magic_and_version(&mut self) {
        let bytes = self.buffer.as_mut();
        bytes[field::MAGIC].copy_from_slice(&MAGIC);
        bytes[field::VERSION] = VERSION;
    }

    /// Writes the kind.
    pub fn set_kind(&mut self, kind: Kind) {
        self.buffer.as_mut()[field::KIND] = kind.byte();
    }

    /// Writes the flags.
    pub fn set_flags(&mut self, flags: u8) {
        self.buffer.as_mut()[field::FLAGS] = flags;
    }

    /// Writes the stream.
    pub fn set_stream(&mut self, stream: u16) {
        self.buffer.as_mut()[field::STREAM..field::STREAM + 2].copy_from_slice(&stream.to_be_bytes());
    }

    /// Writes the sequence number.
    pub fn set_seq(&mut self, seq: u32) {
        self.buffer.as_mut()[field::SEQ..field::SEQ + 4].copy_from_slice(&seq.to_be_bytes());
    }

    /// Writes the send time.
    pub fn set_sent_ns(&mut self, sent_ns: u64) {
        self.buffer.as_mut()[field::SENT_NS..field::SENT_NS + 8].copy_from_slice(&sent_ns.to_be_bytes());
    }

    /// The tag, to write, when flagged.
    pub fn tag_mut(&mut self) -> Option<&mut [u8]> {
        if self.tagged() { Some(&mut self.buffer.as_mut()[field::TAG]) } else { None }
    }
}

/// A valid probe header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// What it is.
    pub kind: Kind,
    /// Whether an authentication tag follows the header.
    pub tagged: bool,
    /// The stream it belongs to.
    pub stream: u16,
    /// Its sequence number in the stream, from 0.
    pub seq: u32,
    /// `CLOCK_MONOTONIC` send time, ns.
    pub sent_ns: u64,
    /// In a reply flagged [`FLAG_RECEIVE_TIME`]: when the reflector received the
    /// request, on its own monotonic clock, ns.
    pub receive_time_ns: Option<u64>,
}

impl Repr {
    /// Reads a checked packet: refuses a wrong magic or version, an undefined kind or
    /// undefined flags.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Self, WireError> {
        packet.check_len()?;
        if packet.magic() != MAGIC {
            return Err(WireError::BadMagic { what: WHAT });
        }
        if packet.version() != VERSION {
            return Err(WireError::BadVersion { what: WHAT, found: packet.version(), supported: VERSION });
        }
        let kind = Kind::from_byte(packet.kind_byte()).ok_or(WireError::BadField {
            what: WHAT,
            field: "kind",
            value: u64::from(packet.kind_byte()),
        })?;
        if packet.flags() & !(FLAG_TAGGED | FLAG_RECEIVE_TIME) != 0 {
            return Err(WireError::BadField { what: WHAT, field: "flags", value: u64::from(packet.flags()) });
        }
        Ok(Self {
            kind,
            tagged: packet.tagged(),
            stream: packet.stream(),
            seq: packet.seq(),
            sent_ns: packet.sent_ns(),
            receive_time_ns: packet.receive_time_ns(),
        })
    }

    /// Reads the header at the start of `bytes`.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        Self::parse(&Packet::new_checked(bytes)?)
    }

    /// Bytes the header takes (with its tag, when tagged, and its receive time).
    pub fn buffer_len(&self) -> usize {
        let tag = if self.tagged { TAG_LEN } else { 0 };
        let receive_time = if self.receive_time_ns.is_some() { RECEIVE_TIME_LEN } else { 0 };
        HEADER_LEN + tag + receive_time
    }

    /// Writes the header; a tag's place is zeroed, for the signer to fill.
    ///
    /// # Panics
    /// If the buffer is shorter than [`Repr::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_magic_and_version();
        packet.set_kind(self.kind);
        packet.set_flags(if self.tagged { FLAG_TAGGED } else { 0 });
        packet.set_stream(self.stream);
        packet.set_seq(self.seq);
        packet.set_sent_ns(self.sent_ns);
        if let Some(tag) = packet.tag_mut() {
            tag.fill(0);
        }
        if let Some(ns) = self.receive_time_ns {
            packet.set_receive_time_ns(ns);
        }
    }

    /// The message: this header padded with zeros to `len` bytes (at least the header).
    pub fn to_vec(&self, len: usize) -> Vec<u8> {
        let mut bytes = vec![0; len.max(self.buffer_len())];
        self.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(kind: Kind, tagged: bool) -> Repr {
        Repr { kind, tagged, stream: 7401, seq: 42, sent_ns: 123_456_789_012, receive_time_ns: None }
    }

    #[test]
    fn a_reply_with_room_carries_the_reflectors_receive_time_inside_what_the_tag_covers() {
        for tagged in [false, true] {
            let request = repr(Kind::EchoRequest, tagged);
            let mut bytes = request.to_vec(request_len_with_receive_time(tagged));
            let mut packet = Packet::new_checked(&mut bytes[..]).unwrap();
            assert_eq!(packet.receive_time_ns(), None, "a request carries none");
            assert!(packet.set_receive_time_ns(987_654_321));
            assert_eq!(packet.receive_time_ns(), Some(987_654_321));
            let parsed = Repr::parse(&packet).unwrap();
            assert_eq!((parsed.seq, parsed.tagged, parsed.sent_ns), (42, tagged, 123_456_789_012));
            let [header, rest] = packet.authenticated_parts();
            let covered: Vec<u8> = header.iter().chain(rest).copied().collect();
            assert!(covered.windows(8).any(|w| w == 987_654_321u64.to_be_bytes()), "tagged={tagged}");
            // An older prober's request has no room: nothing is written, nothing flagged.
            let mut short = request.to_vec(0);
            let mut packet = Packet::new_checked(&mut short[..]).unwrap();
            assert!(!packet.set_receive_time_ns(5));
            assert_eq!((packet.receive_time_ns(), packet.flags() & FLAG_RECEIVE_TIME), (None, 0));
        }
    }

    #[test]
    fn every_kind_round_trips_with_and_without_a_tag() {
        for kind in [Kind::Data, Kind::EchoRequest, Kind::EchoReply] {
            for tagged in [false, true] {
                let r = repr(kind, tagged);
                let bytes = r.to_vec(64);
                assert_eq!(bytes.len(), 64);
                assert_eq!(&bytes[..4], b"BXP2");
                assert_eq!(Repr::parse_bytes(&bytes), Ok(r));
                let packet = Packet::new_checked(&bytes[..]).unwrap();
                assert_eq!(packet.tag().map(<[u8]>::len), tagged.then_some(TAG_LEN));
            }
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let bytes = repr(Kind::EchoRequest, false).to_vec(0);
        assert_eq!(bytes.len(), HEADER_LEN);
        assert_eq!(
            bytes,
            [b'B', b'X', b'P', b'2', 1, 0, 0x1c, 0xe9, 0, 0, 0, 42, 0, 0, 0, 0x1c, 0xbe, 0x99, 0x1a, 0x14]
        );
    }

    #[test]
    fn truncated_buffers_are_refused_before_any_field_is_read() {
        let bytes = repr(Kind::Data, false).to_vec(HEADER_LEN);
        for len in 0..HEADER_LEN {
            assert_eq!(
                Packet::new_checked(&bytes[..len]).unwrap_err(),
                WireError::Truncated { what: "probe", len, need: HEADER_LEN }
            );
        }
        // A tag announced but cut off.
        let tagged = repr(Kind::EchoRequest, true).to_vec(0);
        assert_eq!(
            Repr::parse_bytes(&tagged[..HEADER_LEN + 5]).unwrap_err(),
            WireError::Truncated { what: "probe", len: HEADER_LEN + 5, need: HEADER_LEN + TAG_LEN }
        );
    }

    #[test]
    fn a_receive_time_is_read_written_and_announced_by_its_flag() {
        for tagged in [false, true] {
            let reply = Repr { receive_time_ns: Some(987_654_321), ..repr(Kind::EchoReply, tagged) };
            let bytes = reply.to_vec(0);
            assert_eq!(bytes.len(), reply.buffer_len());
            assert_eq!(Repr::parse_bytes(&bytes), Ok(reply), "tagged: {tagged}");
            // The flag promises the 8 bytes: without them the reply is truncated.
            let short = &bytes[..bytes.len() - 1];
            assert!(matches!(Repr::parse_bytes(short), Err(WireError::Truncated { .. })), "tagged: {tagged}");
        }
    }

    #[test]
    fn bad_magic_version_kind_and_flags_are_named() {
        let good = repr(Kind::Data, false).to_vec(32);
        let with = |at: usize, value: u8| {
            let mut b = good.clone();
            b[at] = value;
            Repr::parse_bytes(&b).unwrap_err()
        };
        assert_eq!(with(0, b'X'), WireError::BadMagic { what: "probe" });
        assert_eq!(with(3, b'1'), WireError::BadVersion { what: "probe", found: b'1', supported: VERSION });
        assert_eq!(with(4, 3), WireError::BadField { what: "probe", field: "kind", value: 3 });
        assert_eq!(with(5, 0x82), WireError::BadField { what: "probe", field: "flags", value: 0x82 });
        // Version 1's link probes and messages are not version 2 probes.
        assert!(Repr::parse_bytes(b"BXR1\0\0\0\x01\0\0\0\0\0\0\0\x05\0\0\0\0").is_err());
        assert!(Repr::parse_bytes(b"BXP1\0\0\0\x01\0\0\0\0\0\0\0\x05\0\0\0\0").is_err());
    }

    #[test]
    fn the_tag_covers_header_and_padding_but_not_itself() {
        let mut bytes = repr(Kind::EchoRequest, true).to_vec(HEADER_LEN + TAG_LEN + 4);
        bytes[HEADER_LEN + TAG_LEN..].copy_from_slice(b"pad!");
        let mut packet = Packet::new_checked(&mut bytes[..]).unwrap();
        packet.tag_mut().unwrap().fill(0xAA);
        let [head, rest] = packet.authenticated_parts();
        assert_eq!(head.len(), HEADER_LEN);
        assert_eq!(rest, b"pad!");
        assert!(packet.tag().unwrap().iter().all(|b| *b == 0xAA));
        let untagged = repr(Kind::Data, false).to_vec(24);
        assert_eq!(Packet::new_checked(&untagged[..]).unwrap().authenticated_parts()[0].len(), 24);
    }

    #[test]
    fn setters_change_only_their_field() {
        let mut bytes = repr(Kind::EchoRequest, false).to_vec(0);
        let mut packet = Packet::new_checked(&mut bytes[..]).unwrap();
        packet.set_kind(Kind::EchoReply);
        packet.set_seq(7);
        let parsed = Repr::parse(&packet).unwrap();
        assert_eq!(parsed, Repr { kind: Kind::EchoReply, seq: 7, ..repr(Kind::EchoRequest, false) });
    }
}

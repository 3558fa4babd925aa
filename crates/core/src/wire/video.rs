//! The header of each frame of the demo's video stream (TCP): which frame, when sent,
//! how long, whether a key frame. The receiver finds frame boundaries from the length.
//!
//! Layout, big-endian (unchanged since the first version):
//!
//! | bytes | field |
//! |---|---|
//! | 0..3 | magic `BXV` |
//! | 3 | version, ASCII `1` (so a header starts `BXV1`) |
//! | 4..8 | frame number |
//! | 8..16 | send time of the first byte, `CLOCK_MONOTONIC` ns |
//! | 16..20 | the frame's length in bytes, this header included |
//! | 20 | 1 for a key frame, 0 otherwise |
//! | … | the frame's body, up to its length |

use super::{WireError, array, check_len};

/// The magic every frame starts with.
pub const MAGIC: [u8; 3] = *b"BXV";
/// The version this build reads and writes.
pub const VERSION: u8 = b'1';
/// Bytes of the header; frames are at least this long.
pub const HEADER_LEN: usize = 21;

const WHAT: &str = "video frame header";

mod field {
    pub const VERSION: usize = 3;
    pub const FRAME: usize = 4;
    pub const SENT_NS: usize = 8;
    pub const FRAME_LEN: usize = 16;
    pub const KEY: usize = 20;
}

/// A zero-copy view of a frame header in a buffer.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without length checks: accessors panic on a buffer too short for them.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// A view of a buffer that holds a whole header (the frame's body need not be there yet).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        check_len(WHAT, buffer.as_ref().len(), HEADER_LEN)?;
        Ok(Self::new_unchecked(buffer))
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The magic bytes.
    pub fn magic(&self) -> [u8; 3] {
        array(self.buffer.as_ref(), 0)
    }

    /// The version byte.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// The frame number.
    pub fn frame(&self) -> u32 {
        u32::from_be_bytes(array(self.buffer.as_ref(), field::FRAME))
    }

    /// The send time, `CLOCK_MONOTONIC` ns.
    pub fn sent_ns(&self) -> u64 {
        u64::from_be_bytes(array(self.buffer.as_ref(), field::SENT_NS))
    }

    /// The frame's length, header included.
    pub fn frame_len(&self) -> u32 {
        u32::from_be_bytes(array(self.buffer.as_ref(), field::FRAME_LEN))
    }

    /// The key-frame byte, as found.
    pub fn key_byte(&self) -> u8 {
        self.buffer.as_ref()[field::KEY]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the magic and this build's version.
    pub fn set_magic_and_version(&mut self) {
        let bytes = self.buffer.as_mut();
        bytes[..3].copy_from_slice(&MAGIC);
        bytes[field::VERSION] = VERSION;
    }

    /// Writes the frame number.
    pub fn set_frame(&mut self, frame: u32) {
        self.buffer.as_mut()[field::FRAME..field::FRAME + 4].copy_from_slice(&frame.to_be_bytes());
    }

    /// Writes the send time.
    pub fn set_sent_ns(&mut self, sent_ns: u64) {
        self.buffer.as_mut()[field::SENT_NS..field::SENT_NS + 8].copy_from_slice(&sent_ns.to_be_bytes());
    }

    /// Writes the frame's length.
    pub fn set_frame_len(&mut self, len: u32) {
        self.buffer.as_mut()[field::FRAME_LEN..field::FRAME_LEN + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// Writes whether it is a key frame.
    pub fn set_key(&mut self, key: bool) {
        self.buffer.as_mut()[field::KEY] = u8::from(key);
    }
}

/// A valid frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// The frame number.
    pub frame: u32,
    /// `CLOCK_MONOTONIC` send time of its first byte, ns.
    pub sent_ns: u64,
    /// The frame's length in bytes, this header included (at least [`HEADER_LEN`]).
    pub frame_len: u32,
    /// Whether it is a key frame.
    pub key: bool,
}

impl Repr {
    /// Reads a checked header: refuses a wrong magic or version, a length shorter than
    /// the header, or a key byte other than 0 and 1.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Self, WireError> {
        check_len(WHAT, packet.buffer.as_ref().len(), HEADER_LEN)?;
        if packet.magic() != MAGIC {
            return Err(WireError::BadMagic { what: WHAT });
        }
        if packet.version() != VERSION {
            return Err(WireError::BadVersion { what: WHAT, found: packet.version(), supported: VERSION });
        }
        if (packet.frame_len() as usize) < HEADER_LEN {
            return Err(WireError::BadField { what: WHAT, field: "length", value: u64::from(packet.frame_len()) });
        }
        let key = match packet.key_byte() {
            0 => false,
            1 => true,
            other => return Err(WireError::BadField { what: WHAT, field: "key", value: u64::from(other) }),
        };
        Ok(Self { frame: packet.frame(), sent_ns: packet.sent_ns(), frame_len: packet.frame_len(), key })
    }

    /// Reads the header at the start of `bytes`.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        Self::parse(&Packet::new_checked(bytes)?)
    }

    /// Bytes the header takes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header.
    ///
    /// # Panics
    /// If the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_magic_and_version();
        packet.set_frame(self.frame);
        packet.set_sent_ns(self.sent_ns);
        packet.set_frame_len(self.frame_len);
        packet.set_key(self.key);
    }

    /// The whole frame: this header, then the body filled with `fill` up to
    /// `frame_len` bytes (at least the header).
    pub fn to_frame(&self, fill: u8) -> Vec<u8> {
        let mut bytes = vec![fill; (self.frame_len as usize).max(HEADER_LEN)];
        self.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Repr = Repr { frame: 30, sent_ns: 9_876_543_210, frame_len: 58_333, key: true };

    #[test]
    fn frames_round_trip_in_the_first_versions_layout() {
        let bytes = FRAME.to_frame(0x11);
        assert_eq!(bytes.len(), 58_333);
        // The layout the demo's streams always had: magic, frame, time, length, key.
        let mut old = b"BXV1".to_vec();
        old.extend_from_slice(&30u32.to_be_bytes());
        old.extend_from_slice(&9_876_543_210u64.to_be_bytes());
        old.extend_from_slice(&58_333u32.to_be_bytes());
        old.push(1);
        assert_eq!(&bytes[..HEADER_LEN], &old[..]);
        assert!(bytes[HEADER_LEN..].iter().all(|b| *b == 0x11));
        assert_eq!(Repr::parse_bytes(&bytes), Ok(FRAME));
        let delta = Repr { key: false, frame: 31, ..FRAME };
        assert_eq!(Repr::parse_bytes(&delta.to_frame(0)), Ok(delta));
    }

    #[test]
    fn a_header_not_yet_all_there_is_truncated() {
        let bytes = FRAME.to_frame(0);
        for len in 0..HEADER_LEN {
            assert_eq!(
                Repr::parse_bytes(&bytes[..len]),
                Err(WireError::Truncated { what: WHAT, len, need: HEADER_LEN })
            );
        }
        // The header alone parses: the body may still be on its way.
        assert_eq!(Repr::parse_bytes(&bytes[..HEADER_LEN]), Ok(FRAME));
    }

    #[test]
    fn bad_magic_version_length_and_key_are_named() {
        let good = FRAME.to_frame(0)[..HEADER_LEN].to_vec();
        let with = |at: usize, value: u8| {
            let mut b = good.clone();
            b[at] = value;
            Repr::parse_bytes(&b).unwrap_err()
        };
        assert_eq!(with(1, b'Y'), WireError::BadMagic { what: WHAT });
        assert_eq!(with(3, b'2'), WireError::BadVersion { what: WHAT, found: b'2', supported: VERSION });
        assert_eq!(with(20, 2), WireError::BadField { what: WHAT, field: "key", value: 2 });
        let short = Repr { frame_len: 20, ..FRAME };
        let mut b = vec![0; HEADER_LEN];
        short.emit(&mut Packet::new_unchecked(&mut b[..]));
        assert_eq!(Repr::parse_bytes(&b), Err(WireError::BadField { what: WHAT, field: "length", value: 20 }));
    }
}

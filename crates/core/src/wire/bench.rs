//! What the bridge benchmark puts at the start of each sample: its sequence number and
//! its send time on the benchmark process's monotonic clock, so latency is receive time
//! minus send time on one clock.
//!
//! Layout, little-endian (unchanged since the first version; the samples carry no magic,
//! as only the benchmark's own publisher writes to its topics):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | sequence number |
//! | 8..16 | send time, ns |
//! | … | padding up to the sample's size |

use super::{WireError, array, check_len};

/// Bytes of the header; samples are at least this long.
pub const HEADER_LEN: usize = 16;

const WHAT: &str = "bench sample";

/// A zero-copy view of a bench sample's header.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view without length checks: accessors panic on a buffer too short for them.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// A view of a buffer that holds the header.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        check_len(WHAT, buffer.as_ref().len(), HEADER_LEN)?;
        Ok(Self::new_unchecked(buffer))
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The sequence number.
    pub fn seq(&self) -> u64 {
        u64::from_le_bytes(array(self.buffer.as_ref(), 0))
    }

    /// The send time, ns.
    pub fn sent_ns(&self) -> u64 {
        u64::from_le_bytes(array(self.buffer.as_ref(), 8))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the sequence number.
    pub fn set_seq(&mut self, seq: u64) {
        self.buffer.as_mut()[0..8].copy_from_slice(&seq.to_le_bytes());
    }

    /// Writes the send time.
    pub fn set_sent_ns(&mut self, sent_ns: u64) {
        self.buffer.as_mut()[8..16].copy_from_slice(&sent_ns.to_le_bytes());
    }
}

/// A bench sample's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// The sample's sequence number.
    pub seq: u64,
    /// Its send time, ns.
    pub sent_ns: u64,
}

impl Repr {
    /// Reads a header (any 16 bytes are one).
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Self, WireError> {
        check_len(WHAT, packet.buffer.as_ref().len(), HEADER_LEN)?;
        Ok(Self { seq: packet.seq(), sent_ns: packet.sent_ns() })
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
        packet.set_seq(self.seq);
        packet.set_sent_ns(self.sent_ns);
    }

    /// The sample: this header padded with zeros to `len` bytes (at least the header).
    pub fn to_vec(&self, len: usize) -> Vec<u8> {
        let mut bytes = vec![0; len.max(HEADER_LEN)];
        self.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_in_the_first_versions_layout() {
        let r = Repr { seq: 5, sent_ns: 0x0102_0304_0506_0708 };
        let bytes = r.to_vec(8_704);
        assert_eq!(bytes.len(), 8_704);
        assert_eq!(&bytes[..16], &[5, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(Repr::parse_bytes(&bytes), Ok(r));
        assert_eq!(r.to_vec(3).len(), HEADER_LEN);
    }

    #[test]
    fn short_samples_are_truncated() {
        let bytes = Repr { seq: 1, sent_ns: 2 }.to_vec(0);
        for len in 0..HEADER_LEN {
            assert_eq!(
                Repr::parse_bytes(&bytes[..len]),
                Err(WireError::Truncated { what: WHAT, len, need: HEADER_LEN })
            );
        }
    }
}

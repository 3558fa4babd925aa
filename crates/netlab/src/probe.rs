//! The header every generated message carries: which stream, which message, when sent.
//!
//! Sender and receiver run on one host (in different namespaces), so the send time is
//! `CLOCK_MONOTONIC` and one-way latency is exact.

/// Marks a Bauxite probe message.
pub const MAGIC: [u8; 4] = *b"BXP1";
/// Bytes of the header; messages are at least this long.
pub const HEADER_LEN: usize = 18;

/// The header of a probe message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeHeader {
    /// The stream (e.g. the destination port) it belongs to.
    pub stream: u16,
    /// Its sequence number in the stream, from 0.
    pub seq: u32,
    /// `CLOCK_MONOTONIC` send time in nanoseconds.
    pub sent_ns: u64,
}

/// Why bytes are not a probe message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// Fewer bytes than a header.
    #[error("truncated probe: {0} bytes, a header needs {HEADER_LEN}")]
    Truncated(usize),
    /// The magic is wrong.
    #[error("not a probe message (bad magic)")]
    BadMagic,
}

impl ProbeHeader {
    /// The message: this header, padded with zeros to `len` bytes (at least the header).
    pub fn encode(&self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len.max(HEADER_LEN));
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.stream.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.sent_ns.to_be_bytes());
        out.resize(len.max(HEADER_LEN), 0);
        out
    }

    /// Reads the header at the start of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Self, ProbeError> {
        if bytes.len() < HEADER_LEN {
            return Err(ProbeError::Truncated(bytes.len()));
        }
        if bytes[..4] != MAGIC {
            return Err(ProbeError::BadMagic);
        }
        Ok(Self {
            stream: u16::from_be_bytes([bytes[4], bytes[5]]),
            seq: u32::from_be_bytes(bytes[6..10].try_into().expect("4 bytes")),
            sent_ns: u64::from_be_bytes(bytes[10..18].try_into().expect("8 bytes")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_bad_bytes_are_named() {
        let h = ProbeHeader { stream: 7401, seq: 42, sent_ns: 123_456_789 };
        let bytes = h.encode(64);
        assert_eq!(bytes.len(), 64);
        assert_eq!(ProbeHeader::decode(&bytes), Ok(h));
        assert_eq!(ProbeHeader::decode(&bytes[..10]), Err(ProbeError::Truncated(10)));
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert_eq!(ProbeHeader::decode(&bad), Err(ProbeError::BadMagic));
    }
}

//! Bauxite's own wire headers, each defined once, smoltcp style: a zero-copy
//! `Packet<T: AsRef<[u8]>>` view over a buffer (field accessors; setters when the buffer
//! is `AsMut<[u8]>`) paired with a checked `Repr` that has `parse`, `emit` and
//! `buffer_len`.
//!
//! - [`probe`]: the header of the demo's generated messages (one-way latency) and of the
//!   link-rate probes `rate: auto` sends to `bauxite reflect` (round trips).
//! - [`icmp`]: the ICMP echo and timestamp probes of `rate: auto` to hosts that run no
//!   Bauxite.
//! - [`video`]: the header of each frame of the demo's video stream.
//! - [`bench`]: the sequence number and send time the bridge benchmark puts in each sample.
//!
//! `Packet::new_checked` refuses a buffer too short for the fields it would read, so no
//! accessor can panic on a checked packet; `Repr::parse` then refuses what is not a valid
//! header (magic, version, field values). All integers are big-endian, except the bench
//! sample's, which were little-endian from the start.
//!
//! No I/O: parsers for tools, tests and fuzzing.

pub mod bench;
pub mod icmp;
pub mod probe;
pub mod video;

/// Why bytes are not a valid header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the header (or a field it announces) needs.
    #[error("truncated {what}: {len} bytes, it needs {need}")]
    Truncated {
        /// Which header.
        what: &'static str,
        /// Bytes there are.
        len: usize,
        /// Bytes it needs.
        need: usize,
    },
    /// The magic is not this header's.
    #[error("not a {what} (bad magic)")]
    BadMagic {
        /// Which header.
        what: &'static str,
    },
    /// A version this build does not read.
    #[error("{what} version {found:#04x} is not the supported {supported:#04x}")]
    BadVersion {
        /// Which header.
        what: &'static str,
        /// The version byte found.
        found: u8,
        /// The version byte this build reads and writes.
        supported: u8,
    },
    /// A field holds a value the header does not define.
    #[error("{what}: field `{field}` has the undefined value {value}")]
    BadField {
        /// Which header.
        what: &'static str,
        /// Which field.
        field: &'static str,
        /// The value found.
        value: u64,
    },
}

/// Reads `N` bytes at `at` (the caller has checked the length).
fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes[at..at + N].try_into().expect("length checked by new_checked")
}

/// Checks that `len` bytes hold `need`.
fn check_len(what: &'static str, len: usize, need: usize) -> Result<(), WireError> {
    if len < need { Err(WireError::Truncated { what, len, need }) } else { Ok(()) }
}

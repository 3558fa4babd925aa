//! Serialized samples passed through untouched, and the RustDDS adapters that do it.
//!
//! The bridge never decodes what it forwards: it does not need the type, and re-encoding would
//! cost time and risk changing the bytes. The reader's adapter accepts every data
//! representation RTPS defines and keeps the payload with its representation identifier; the
//! writers' adapter sends the same bytes under the same identifier, so a big-endian or XCDR2
//! publisher reaches the subscribers as it left.
//!
//! RustDDS asks a serializer adapter for its output representation through an associated
//! function (no value, no writer), called on the writing thread just before it serializes. The
//! representation of the sample being written is therefore handed over in a thread-local set by
//! [`write`]; every raw write goes through that function.

use std::cell::Cell;
use std::convert::Infallible;

use rustdds::bytes::Bytes;
use rustdds::no_key::{Decode, DefaultDecoder, DeserializerAdapter, SerializerAdapter};
use rustdds::{RepresentationIdentifier, Timestamp, WriteOptions, WriteOptionsBuilder};

/// One sample as it travelled: its encoding and its serialized bytes (after the 4-byte
/// encapsulation header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSample {
    /// The data representation (CDR_LE, CDR2_BE, ...), as the source wrote it.
    pub representation: RepresentationIdentifier,
    /// The serialized data.
    pub payload: Bytes,
}

/// Reads and writes [`RawSample`]s.
pub struct RawAdapter;

/// Every representation identifier of RTPS 2.5 table 10.3: the bridge forwards whatever comes.
const ALL: &[RepresentationIdentifier] = &[
    RepresentationIdentifier::CDR_LE,
    RepresentationIdentifier::CDR_BE,
    RepresentationIdentifier::PL_CDR_LE,
    RepresentationIdentifier::PL_CDR_BE,
    RepresentationIdentifier::CDR2_LE,
    RepresentationIdentifier::CDR2_BE,
    RepresentationIdentifier::PL_CDR2_LE,
    RepresentationIdentifier::PL_CDR2_BE,
    RepresentationIdentifier::D_CDR_LE,
    RepresentationIdentifier::D_CDR_BE,
    RepresentationIdentifier::D_CDR2_LE,
    RepresentationIdentifier::D_CDR2_BE,
    RepresentationIdentifier::XCDR2_LE,
    RepresentationIdentifier::XCDR2_BE,
    RepresentationIdentifier::PL_XCDR2_LE,
    RepresentationIdentifier::PL_XCDR2_BE,
    RepresentationIdentifier::XML,
];

/// The decoder: keeps the reader's buffer of the (reassembled) payload, which both writers
/// then send from, so the bridge copies a sample's bytes only into the packets it sends.
#[derive(Clone, Copy)]
pub struct RawDecoder;

impl Decode<'_, RawSample> for RawDecoder {
    type Error = Infallible;

    /// Only for callers that hold a slice; the reader hands its buffer to [`Self::decode_shared`].
    fn decode_bytes(self, input: &[u8], encoding: RepresentationIdentifier) -> Result<RawSample, Infallible> {
        Ok(RawSample { representation: encoding, payload: Bytes::copy_from_slice(input) })
    }

    /// The vendored RustDDS's shared-buffer path (vendor/README.md): a reference, not a copy.
    fn decode_shared(self, input: &Bytes, encoding: RepresentationIdentifier) -> Result<RawSample, Infallible> {
        Ok(RawSample { representation: encoding, payload: input.clone() })
    }
}

impl DeserializerAdapter<RawSample> for RawAdapter {
    type Error = Infallible;
    type Decoded = RawSample;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        ALL
    }

    fn transform_decoded(decoded: RawSample) -> RawSample {
        decoded
    }
}

impl DefaultDecoder<RawSample> for RawAdapter {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

thread_local! {
    /// The representation of the sample this thread is writing (see the module docs).
    static WRITING: Cell<RepresentationIdentifier> = const { Cell::new(RepresentationIdentifier::CDR_LE) };
}

impl SerializerAdapter<RawSample> for RawAdapter {
    type Error = Infallible;

    fn output_encoding() -> RepresentationIdentifier {
        WRITING.with(Cell::get)
    }

    fn to_bytes(value: &RawSample) -> Result<Bytes, Infallible> {
        Ok(value.payload.clone())
    }
}

/// A writer of raw samples.
pub type RawWriter = rustdds::no_key::DataWriter<RawSample, RawAdapter>;
/// A reader of raw samples.
pub type RawReader = rustdds::no_key::DataReader<RawSample, RawAdapter>;

/// Writes `sample` under its own representation, with the source's timestamp when known.
///
/// On `WouldBlock` the sample comes back inside the error, for a retry.
pub fn write(
    writer: &RawWriter,
    sample: RawSample,
    source_timestamp: Option<Timestamp>,
) -> rustdds::dds::result::WriteResult<(), RawSample> {
    WRITING.with(|w| w.set(sample.representation));
    writer.write_with_options(sample, options(source_timestamp)).map(|_| ())
}

/// [`write`] that never waits: with a RELIABLE writer's window full it returns `WouldBlock`
/// (with the sample) at once instead of after the writer's blocking time (the vendored
/// RustDDS's `try_write_with_options`, vendor/README.md).
pub fn try_write(
    writer: &RawWriter,
    sample: RawSample,
    source_timestamp: Option<Timestamp>,
) -> rustdds::dds::result::WriteResult<(), RawSample> {
    WRITING.with(|w| w.set(sample.representation));
    writer.try_write_with_options(sample, options(source_timestamp)).map(|_| ())
}

fn options(source_timestamp: Option<Timestamp>) -> WriteOptions {
    let mut options = WriteOptionsBuilder::new();
    if let Some(ts) = source_timestamp {
        options = options.source_timestamp(ts);
    }
    options.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustdds::no_key::DeserializerAdapter;

    /// The reader's payload buffer becomes the sample's: the same memory, not a copy, for
    /// every size (a copy would be a new allocation at another address).
    #[test]
    fn a_received_payload_is_kept_by_reference_not_copied() {
        for size in [0, 1, 64 * 1024, 1024 * 1024] {
            let received = Bytes::from((0..size).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
            let sample =
                RawAdapter::from_shared_bytes_with(&received, RepresentationIdentifier::CDR_BE, RawDecoder).unwrap();
            assert_eq!(sample.representation, RepresentationIdentifier::CDR_BE);
            assert_eq!(sample.payload, received, "{size} B");
            if size > 0 {
                assert_eq!(sample.payload.as_ptr(), received.as_ptr(), "{size} B: copied");
            }
        }
    }
}

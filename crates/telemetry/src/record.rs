//! Writing recordings.
//!
//! Messages go into chunks that are closed every [`CHUNK_INTERVAL_NS`] of event time
//! (or when a stamp jumps that far either way, and when they grow past 256 KB), each
//! flushed to disk: a process killed mid-run
//! leaves a file readable up to its last closed chunk, losing at most that interval.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

/// Chunks are closed at least this often (event time), bounding what a crash loses.
pub const CHUNK_INTERVAL_NS: u64 = 1_000_000_000;
const CHUNK_BYTES: u64 = 256 * 1024;

/// Why a recording could not be written.
#[derive(Debug, thiserror::Error)]
#[error("recording {path}: {message}")]
pub struct RecordError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// A channel registered in a [`Recorder`], typed by its message.
#[derive(Debug)]
pub struct Channel<T> {
    id: u16,
    _message: std::marker::PhantomData<fn(&T)>,
}

impl<T> Clone for Channel<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Channel<T> {}

/// An MCAP file being written: JSON messages with JSON Schema.
pub struct Recorder {
    path: PathBuf,
    writer: mcap::Writer<BufWriter<File>>,
    schemas: BTreeMap<String, u16>,
    sequence: u32,
    last_chunk_ns: Option<u64>,
}

impl Recorder {
    /// Creates (or truncates) the file.
    pub fn create(path: &Path) -> Result<Self, RecordError> {
        let err = |message: String| RecordError { path: path.to_path_buf(), message };
        let file = File::create(path).map_err(|e| err(e.to_string()))?;
        let writer = mcap::WriteOptions::new()
            .profile("")
            .library(concat!("bauxite ", env!("CARGO_PKG_VERSION")))
            .compression(None)
            .chunk_size(Some(CHUNK_BYTES))
            .create(BufWriter::new(file))
            .map_err(|e| err(e.to_string()))?;
        Ok(Self { path: path.to_path_buf(), writer, schemas: BTreeMap::new(), sequence: 0, last_chunk_ns: None })
    }

    fn error(&self, e: impl std::fmt::Display) -> RecordError {
        RecordError { path: self.path.clone(), message: e.to_string() }
    }

    /// Registers a channel called `topic` carrying `T`.
    pub fn channel<T: JsonSchema>(&mut self, topic: &str) -> Result<Channel<T>, RecordError> {
        let name = T::schema_name().into_owned();
        let schema_id = match self.schemas.get(&name) {
            Some(id) => *id,
            None => {
                let schema = serde_json::to_vec(&schemars::schema_for!(T)).map_err(|e| self.error(e))?;
                let id = self.writer.add_schema(&name, "jsonschema", &schema).map_err(|e| self.error(e))?;
                self.schemas.insert(name, id);
                id
            }
        };
        let id = self.writer.add_channel(schema_id, topic, "json", &BTreeMap::new()).map_err(|e| self.error(e))?;
        Ok(Channel { id, _message: std::marker::PhantomData })
    }

    /// Writes `message` on `channel` with the event's own time (ns).
    pub fn write<T: Serialize>(&mut self, channel: Channel<T>, time_ns: u64, message: &T) -> Result<(), RecordError> {
        let data = serde_json::to_vec(message).map_err(|e| self.error(e))?;
        let header = mcap::records::MessageHeader {
            channel_id: channel.id,
            sequence: self.sequence,
            log_time: time_ns,
            publish_time: time_ns,
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.writer.write_to_known_channel(&header, &data).map_err(|e| self.error(e))?;
        // A jump either way closes the chunk: a stamp far in the future (an event
        // planned ahead) or in the past (a loss known only later) must not hold back
        // the chunks of the messages around it.
        let last = *self.last_chunk_ns.get_or_insert(time_ns);
        if time_ns.abs_diff(last) >= CHUNK_INTERVAL_NS {
            self.flush()?;
            self.last_chunk_ns = Some(time_ns);
        }
        Ok(())
    }

    /// Closes the current chunk and flushes it to the file.
    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.writer.flush().map_err(|e| self.error(e))
    }

    /// Writes the summary and index and closes the file.
    pub fn finish(mut self) -> Result<(), RecordError> {
        self.writer.finish().map_err(|e| self.error(e))?;
        Ok(())
    }
}

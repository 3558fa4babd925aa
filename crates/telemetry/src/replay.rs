//! Reading recordings back, including damaged ones.
//!
//! A recording is only as good as its bytes, so reading checks everything MCAP lets it check:
//! each chunk's CRC before any of its messages is used, the data and summary sections' CRCs
//! and attachments' CRCs (where the writer stored them, i.e. non-zero), that no message
//! appears twice, and that the summary's statistics and chunk index describe exactly the
//! data section that was read. A file that fails any of these is [`Damage::Corrupt`]; one
//! that merely ends early (a killed writer) is [`Damage::Truncated`] and is read up to its
//! last complete chunk.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use mcap::records::op;
use mcap::sans_io::{LinearReaderOptions, MessageReadEvent, MessageReader};

/// One message of a recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Its channel.
    pub topic: String,
    /// The event time, ns.
    pub time_ns: u64,
    /// The decoded JSON.
    pub value: serde_json::Value,
}

/// Why reading stopped early, or why what was read cannot be trusted.
#[derive(Clone, Debug, PartialEq)]
pub enum Damage {
    /// The file ends early, as a killed writer leaves it: everything up to the last complete
    /// chunk was read and checked.
    Truncated(String),
    /// Records fail their CRC, repeat, or contradict the summary (bit flips, a duplicated
    /// chunk or data section): the messages read before the damage are kept, but the
    /// recording as a whole cannot be trusted.
    Corrupt(String),
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Truncated(why) => write!(f, "truncated: {why}"),
            Damage::Corrupt(why) => write!(f, "corrupt: {why}"),
        }
    }
}

/// Everything readable in a recording.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Channels and their JSON Schemas (parsed).
    pub schemas: BTreeMap<String, serde_json::Value>,
    /// Messages in file order.
    pub messages: Vec<Message>,
    /// Why reading stopped early or the file cannot be trusted, if so.
    pub damage: Option<Damage>,
}

impl Recording {
    /// The messages of one channel.
    pub fn on<'a>(&'a self, topic: &'a str) -> impl Iterator<Item = &'a Message> + 'a {
        self.messages.iter().filter(move |m| m.topic == topic)
    }
}

/// Why a file could not be read at all.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// Reads every message up to the end, or up to the first damage (reported in
/// [`Recording::damage`], never a panic). Files that are not MCAP at all are errors.
pub fn read(path: &Path) -> Result<Recording, ReadError> {
    let bytes = std::fs::read(path).map_err(|e| ReadError { path: path.to_path_buf(), message: e.to_string() })?;
    read_bytes(&bytes).map_err(|message| ReadError { path: path.to_path_buf(), message })
}

/// [`read`] on a recording already in memory; `Err` says why it is not MCAP at all.
pub fn read_bytes(bytes: &[u8]) -> Result<Recording, String> {
    if bytes.len() < mcap::MAGIC.len() || bytes[..mcap::MAGIC.len()] != *mcap::MAGIC {
        return Err("not an MCAP file (bad magic)".into());
    }
    let mut recording = Recording::default();
    let mut counts = MessageCounts::default();
    recording.damage = read_messages(bytes, &mut recording, &mut counts).err();
    if recording.damage.is_none() {
        recording.damage = check_summary(bytes, &counts).err().map(Damage::Corrupt);
    }
    Ok(recording)
}

/// What the data section held, to check the summary against.
#[derive(Default)]
struct MessageCounts {
    total: u64,
    per_channel: BTreeMap<u16, u64>,
    /// (channel, sequence, log time) of every message: a repeat is a duplicated record.
    seen: HashSet<(u16, u32, u64)>,
}

/// Reads the data section in file order into `recording`, checking every CRC on the way.
fn read_messages(bytes: &[u8], recording: &mut Recording, counts: &mut MessageCounts) -> Result<(), Damage> {
    let options = LinearReaderOptions::default()
        .with_prevalidate_chunk_crcs(true)
        .with_validate_data_section_crc(true)
        .with_validate_summary_section_crc(true)
        // A flipped length must not make the reader allocate more than the file holds.
        .with_record_length_limit(bytes.len());
    let mut reader = MessageReader::new_with_options(options);
    let mut rest = bytes;
    while let Some(event) = reader.next_event() {
        let message = match event {
            Ok(MessageReadEvent::ReadRequest(n)) => {
                let n = n.min(rest.len());
                reader.insert(n).copy_from_slice(&rest[..n]);
                reader.notify_read(n);
                rest = &rest[n..];
                continue;
            }
            Ok(MessageReadEvent::Message(message)) => message,
            Err(e) => {
                let why = format!("read {} messages, then: {e}", recording.messages.len());
                // A cut file does not end with the magic; a file that does was complete once.
                let cut = matches!(e, mcap::McapError::UnexpectedEof) && !bytes.ends_with(mcap::MAGIC);
                return Err(if cut { Damage::Truncated(why) } else { Damage::Corrupt(why) });
            }
        };
        let topic = &message.channel.topic;
        if !counts.seen.insert((message.channel.id, message.sequence, message.log_time)) {
            return Err(Damage::Corrupt(format!(
                "message {} on {topic} at {} ns appears twice (a duplicated chunk or data section)",
                message.sequence, message.log_time
            )));
        }
        counts.total += 1;
        *counts.per_channel.entry(message.channel.id).or_default() += 1;
        if !recording.schemas.contains_key(topic) {
            let schema = message
                .channel
                .schema
                .as_ref()
                .and_then(|s| serde_json::from_slice(&s.data).ok())
                .unwrap_or(serde_json::Value::Null);
            recording.schemas.insert(topic.clone(), schema);
        }
        match serde_json::from_slice(&message.data) {
            Ok(value) => recording.messages.push(Message { topic: topic.clone(), time_ns: message.log_time, value }),
            Err(e) => {
                return Err(Damage::Corrupt(format!("message {} on {topic} is not JSON: {e}", message.sequence)));
            }
        }
    }
    Ok(())
}

/// Checks that the summary's statistics and chunk index describe the data section that was
/// read: the CRCs cannot catch a data section copied whole, with its CRC, a second time.
fn check_summary(bytes: &[u8], counts: &MessageCounts) -> Result<(), String> {
    let summary = mcap::Summary::read(bytes)
        .map_err(|e| format!("summary: {e}"))?
        .ok_or("no summary section, so the message count cannot be verified")?;
    let stats =
        summary.stats.as_ref().ok_or("no statistics in the summary, so the message count cannot be verified")?;
    if stats.message_count != counts.total || stats.channel_message_counts != counts.per_channel {
        return Err(format!(
            "the summary counts {} messages ({:?} by channel), the data section holds {} ({:?})",
            stats.message_count, stats.channel_message_counts, counts.total, counts.per_channel
        ));
    }
    let chunks = chunk_records(bytes)?;
    let mut indexed: Vec<(u64, u64)> =
        summary.chunk_indexes.iter().map(|c| (c.chunk_start_offset, c.chunk_length)).collect();
    indexed.sort_unstable();
    if indexed != chunks || u64::from(stats.chunk_count) != chunks.len() as u64 {
        return Err(format!(
            "the summary indexes {} chunks ({} in its statistics), the data section holds {}, or they overlap or differ",
            indexed.len(),
            stats.chunk_count,
            chunks.len()
        ));
    }
    Ok(())
}

/// The (offset, length) of each top-level chunk record in the data section, in file order.
fn chunk_records(bytes: &[u8]) -> Result<Vec<(u64, u64)>, String> {
    const HEAD: usize = 1 + 8; // opcode, length
    let mut chunks = Vec::new();
    let mut at = mcap::MAGIC.len();
    loop {
        let head = bytes.get(at..at + HEAD).ok_or_else(|| format!("no data end record after offset {at}"))?;
        let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| (at + HEAD).checked_add(len))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| format!("record at offset {at} runs past the end of the file"))?;
        match head[0] {
            op::DATA_END => return Ok(chunks),
            op::CHUNK => chunks.push((at as u64, (end - at) as u64)),
            _ => {}
        }
        at = end;
    }
}

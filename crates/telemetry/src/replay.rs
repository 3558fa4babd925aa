//! Reading recordings back, including damaged ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// Everything readable in a recording.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Channels and their JSON Schemas (parsed).
    pub schemas: BTreeMap<String, serde_json::Value>,
    /// Messages in file order.
    pub messages: Vec<Message>,
    /// Why reading stopped early, if it did (a truncated or corrupt file).
    pub damage: Option<String>,
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
    let err = |message: String| ReadError { path: path.to_path_buf(), message };
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    if bytes.len() < mcap::MAGIC.len() || bytes[..mcap::MAGIC.len()] != *mcap::MAGIC {
        return Err(err("not an MCAP file (bad magic)".into()));
    }
    let mut recording = Recording::default();
    let stream = mcap::MessageStream::new(&bytes).map_err(|e| err(e.to_string()))?;
    for item in stream {
        let message = match item {
            Ok(m) => m,
            Err(e) => {
                recording.damage = Some(format!("read {} messages, then: {e}", recording.messages.len()));
                break;
            }
        };
        let topic = message.channel.topic.clone();
        if !recording.schemas.contains_key(&topic) {
            let schema = message
                .channel
                .schema
                .as_ref()
                .and_then(|s| serde_json::from_slice(&s.data).ok())
                .unwrap_or(serde_json::Value::Null);
            recording.schemas.insert(topic.clone(), schema);
        }
        match serde_json::from_slice(&message.data) {
            Ok(value) => recording.messages.push(Message { topic, time_ns: message.log_time, value }),
            Err(e) => {
                recording.damage = Some(format!("message {} on {topic} is not JSON: {e}", message.sequence));
                break;
            }
        }
    }
    Ok(recording)
}

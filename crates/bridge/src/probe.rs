//! Health probes: the bridge's sender and receiver, and the subscriber-side responder.
//!
//! The bridge publishes a [`Probe`] at `probe_rate_hz` on the probe topic; each responder (one
//! per subscriber, on the subscriber's host, so the probe crosses the subscriber's own network
//! path) answers at once with a [`ProbeReply`] carrying its name. Both topics are BEST_EFFORT:
//! a lost probe must show as loss, not be repaired. The RTT is measured on the bridge's clock
//! alone (the reply echoes the send time), so the hosts' clocks need not agree.
//!
//! Both messages are plain CDR (little-endian) structs, so a responder can be written with any
//! DDS implementation from the IDL in each type's docs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use futures::StreamExt;
use rustdds::DomainParticipant;
use serde::{Deserialize, Serialize};

use crate::config::ClassifierConfig;
use crate::dds::{self, DdsError};
use crate::{Clock, Nanos};

/// A probe. IDL: `module bauxite_msgs { module msg { module dds_ {
/// struct BridgeProbe_ { string bridge; unsigned long long seq; unsigned long long sent_ns; }; }; }; };`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// The sending bridge's id (several bridges may share a domain).
    pub bridge: String,
    /// The probe's sequence number.
    pub seq: u64,
    /// The send time on the bridge's clock (ns), echoed back.
    pub sent_ns: u64,
}

/// An answer. IDL: `struct BridgeProbeReply_ { string bridge; unsigned long long seq;
/// unsigned long long sent_ns; string subscriber; };` in the same module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReply {
    /// The bridge that sent the probe.
    pub bridge: String,
    /// The probe's sequence number.
    pub seq: u64,
    /// The probe's send time, echoed.
    pub sent_ns: u64,
    /// The answering subscriber's name.
    pub subscriber: String,
}

/// The probe's DDS type name.
pub const PROBE_TYPE: &str = "bauxite_msgs::msg::dds_::BridgeProbe_";
/// The reply's DDS type name.
pub const REPLY_TYPE: &str = "bauxite_msgs::msg::dds_::BridgeProbeReply_";

/// An answer as the bridge saw it arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Who answered.
    pub subscriber: String,
    /// Which probe.
    pub seq: u64,
    /// When it arrived (bridge clock).
    pub at: Nanos,
}

/// The bridge's side: sends probes, timestamps answers as they arrive.
pub struct Prober {
    id: String,
    writer: dds::TypedWriter<Probe>,
    seq: u64,
    stop: Option<futures::channel::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Prober {
    /// Creates the probe writer and the reply reader; answers go to the returned channel.
    pub fn start(
        participant: &DomainParticipant,
        config: &ClassifierConfig,
        id: &str,
        clock: Clock,
    ) -> Result<(Self, mpsc::Receiver<Answer>), DdsError> {
        let writer = dds::typed_writer::<Probe>(participant, &config.probe_topic, PROBE_TYPE)?;
        let replies = dds::typed_reader::<ProbeReply>(participant, &config.reply_topic, REPLY_TYPE)?;
        let (tx, rx) = mpsc::channel();
        let (stop_tx, mut stop_rx) = futures::channel::oneshot::channel::<()>();
        let me = id.to_string();
        let thread = std::thread::Builder::new()
            .name("bx-replies".into())
            .spawn(move || {
                let mut stream = replies.async_sample_stream();
                futures::executor::block_on(async {
                    loop {
                        let next = futures::select! {
                            s = stream.select_next_some() => s,
                            _ = stop_rx => return,
                        };
                        let at = clock.now();
                        if let Ok(s) = next {
                            let r = s.into_value();
                            if r.bridge == me && tx.send(Answer { subscriber: r.subscriber, seq: r.seq, at }).is_err() {
                                return;
                            }
                        }
                    }
                })
            })
            .map_err(|e| DdsError::new("reply thread", e))?;
        Ok((Self { id: id.to_string(), writer, seq: 0, stop: Some(stop_tx), thread: Some(thread) }, rx))
    }

    /// Sends the next probe at `now`; returns its sequence number.
    pub fn send(&mut self, now: Nanos) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        let probe = Probe { bridge: self.id.clone(), seq, sent_ns: now };
        if let Err(e) = self.writer.write(probe, None) {
            tracing::debug!("probe {seq} not sent: {e}");
        }
        seq
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Options of a probe responder.
#[derive(Debug, Clone, Default)]
pub struct ResponderOptions {
    /// Hold every answer this long before sending it: emulates a slow link in demos and tests
    /// without network namespaces. Zero in real use.
    pub answer_delay: Duration,
}

/// The subscriber's side: answers every probe with its name, on its own threads.
pub struct ProbeResponder {
    answered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    stop_reader: Option<futures::channel::oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl ProbeResponder {
    /// Starts answering probes on `config`'s topics as `name`.
    pub fn start(
        participant: &DomainParticipant,
        config: &ClassifierConfig,
        name: &str,
        options: ResponderOptions,
    ) -> Result<Self, DdsError> {
        let probes = dds::typed_reader::<Probe>(participant, &config.probe_topic, PROBE_TYPE)?;
        let replies = dds::typed_writer::<ProbeReply>(participant, &config.reply_topic, REPLY_TYPE)?;
        let answered = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (stop_tx, mut stop_rx) = futures::channel::oneshot::channel::<()>();
        // Probes go from the reader to the sender through a channel with their due time, so a
        // delay never holds up reading.
        let (tx, rx) = mpsc::channel::<(std::time::Instant, ProbeReply)>();
        let name = name.to_string();
        let delay = options.answer_delay;
        let reader_thread = std::thread::Builder::new()
            .name("bx-probes".into())
            .spawn(move || {
                let mut stream = probes.async_sample_stream();
                futures::executor::block_on(async {
                    loop {
                        let next = futures::select! {
                            s = stream.select_next_some() => s,
                            _ = stop_rx => return,
                        };
                        if let Ok(s) = next {
                            let p = s.into_value();
                            let reply = ProbeReply {
                                bridge: p.bridge,
                                seq: p.seq,
                                sent_ns: p.sent_ns,
                                subscriber: name.clone(),
                            };
                            if tx.send((std::time::Instant::now() + delay, reply)).is_err() {
                                return;
                            }
                        }
                    }
                })
            })
            .map_err(|e| DdsError::new("probe thread", e))?;
        let (count, halt) = (answered.clone(), stop.clone());
        let writer_thread = std::thread::Builder::new()
            .name("bx-answers".into())
            .spawn(move || {
                while !halt.load(Ordering::Relaxed) {
                    let Ok((due, reply)) = rx.recv_timeout(Duration::from_millis(200)) else { continue };
                    if let Some(wait) = due.checked_duration_since(std::time::Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    if replies.write(reply, None).is_ok() {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
            .map_err(|e| DdsError::new("answer thread", e))?;
        Ok(Self { answered, stop, stop_reader: Some(stop_tx), threads: vec![reader_thread, writer_thread] })
    }

    /// Probes answered so far.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Stops answering; returns how many probes were answered.
    pub fn stop(mut self) -> u64 {
        self.shutdown();
        self.answered()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(tx) = self.stop_reader.take() {
            let _ = tx.send(());
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for ProbeResponder {
    fn drop(&mut self) {
        self.shutdown();
    }
}

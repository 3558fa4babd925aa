//! The seed-000 robot workload on a [`ChainTestbed`]: navigation corrections (UDP
//! 7400, 20 Hz), steering commands (UDP 7401, 50 Hz), telemetry (UDP 7410, 10 Hz) and
//! an H.264-like video stream (TCP 8080, about 3.5 Mbit/s) from robot to base, and a
//! 100 Hz control loop on the base that consumes the newest correction. The same
//! workload runs the other way too ([`Direction::Downlink`]: the operator's commands
//! and a download, base to robot); both may run at once, each end's receivers on
//! ports of its own namespace.
//!
//! A correction's *update delay* is the time from its sending to the first control
//! loop tick that consumes it: its latency plus the wait for the next tick.

use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bauxite_sys::{Netns, monotonic_ns};

use crate::NetlabError;
use crate::emulator::Direction;
use crate::testbed::ChainTestbed;
use crate::traffic::{self, Arrival, UdpStream};
use crate::video::{self, FrameArrival, VideoSendLog};

pub use bauxite_core::workload::{StreamSpec, WorkloadSpec};

/// How long after `start` is called the senders' common start is: time to spawn the
/// threads (a few hundred microseconds; a thread that starts later sends the
/// messages it missed at once, then keeps the common schedule).
const SPAWN_ALLOWANCE: Duration = Duration::from_millis(5);

/// One consumption of a new correction by the control loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlUpdate {
    /// The tick's time (`CLOCK_MONOTONIC` ns).
    pub tick_ns: u64,
    /// The correction's sequence number.
    pub seq: u32,
    /// The correction's send time (`CLOCK_MONOTONIC` ns).
    pub sent_ns: u64,
}

impl ControlUpdate {
    /// The update delay: tick time minus the correction's send time, ms.
    pub fn delay_ms(&self) -> f64 {
        self.tick_ns.saturating_sub(self.sent_ns) as f64 / 1e6
    }
}

/// What a run of the workload measured.
#[derive(Clone, Debug, Default)]
pub struct WorkloadResult {
    /// Per stream (in spec order): the messages that arrived.
    pub arrivals: Vec<Vec<Arrival>>,
    /// Per stream: messages sent.
    pub sent: Vec<u32>,
    /// Video frames delivered.
    pub frames: Vec<FrameArrival>,
    /// What the video encoder did.
    pub video: VideoSendLog,
    /// The control loop's consumptions of new corrections.
    pub updates: Vec<ControlUpdate>,
}

/// One measurement as it happens, for a caller that records live: whatever was
/// recorded before a crash is then kept (see [`RunningWorkload::start`]).
#[derive(Clone, Copy, Debug)]
pub enum WorkloadEvent {
    /// A message of stream `stream` (index in the spec) arrived.
    Message {
        /// The stream's index in [`WorkloadSpec::streams`].
        stream: usize,
        /// The arrival.
        arrival: Arrival,
    },
    /// A video frame arrived complete.
    Frame(FrameArrival),
    /// The control loop consumed a new correction.
    Update(ControlUpdate),
}

/// Where live [`WorkloadEvent`]s go. A closed receiver is ignored: measuring goes on.
pub type Tap = std::sync::mpsc::Sender<WorkloadEvent>;

/// A workload running on a testbed until [`RunningWorkload::stop`].
///
/// Dropped without [`RunningWorkload::stop`] (an early return, a panic), it tells
/// every thread to stop, so none outlives the testbed it measures.
pub struct RunningWorkload {
    /// Stops the senders.
    send_stop: Arc<AtomicBool>,
    /// Stops the receivers and the control loop, after the drain time.
    receive_stop: Arc<AtomicBool>,
    /// `None` once stopped.
    threads: Option<Threads>,
    /// Where the messages go, for errors.
    receiver_addr: std::net::Ipv4Addr,
}

/// What a UDP receiver returns: the arrivals and the count of malformed datagrams.
type Received = std::io::Result<(Vec<Arrival>, u64)>;

/// The workload's threads.
struct Threads {
    /// Per stream: its port and its receiver.
    receivers: Vec<(u16, JoinHandle<Received>)>,
    senders: Vec<JoinHandle<u32>>,
    video_rx: JoinHandle<Vec<FrameArrival>>,
    video_tx: JoinHandle<VideoSendLog>,
    control: JoinHandle<Vec<ControlUpdate>>,
}

impl Drop for RunningWorkload {
    fn drop(&mut self) {
        self.send_stop.store(true, Ordering::Relaxed);
        self.receive_stop.store(true, Ordering::Relaxed);
    }
}

/// The newest correction received: its sequence number and send time.
type Newest = Arc<Mutex<Option<(u32, u64)>>>;

impl RunningWorkload {
    /// Opens every socket (on the uplink receivers in `base`, senders in `robot`; on
    /// the downlink the other way round; the video's connection with its congestion
    /// control), then starts the threads. With a `tap`, every measurement is also sent
    /// there as it happens.
    ///
    /// Every fallible step comes before the first thread, so an error (a port in use,
    /// a kernel without the congestion control asked for) starts nothing.
    pub fn start(
        tb: &ChainTestbed,
        direction: Direction,
        spec: &WorkloadSpec,
        tap: Option<Tap>,
    ) -> Result<Self, NetlabError> {
        let (sending, receiving, receiver_addr) = tb.ends(direction);
        let sockets = Sockets::open(sending, receiving, receiver_addr, spec)?;
        let (send_stop, stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let newest: Newest = Arc::new(Mutex::new(None));
        let emit = move |tap: &Option<Tap>, event: WorkloadEvent| {
            if let Some(tap) = tap {
                let _ = tap.send(event);
            }
        };
        let mut receivers = Vec::new();
        for (index, (s, socket)) in spec.streams.iter().zip(sockets.receivers).enumerate() {
            let (stop, newest, tap) = (stop.clone(), newest.clone(), tap.clone());
            let tracks_corrections = s.port == spec.correction_port;
            let receiver = receiving.spawn(move || {
                traffic::receive_udp_with(&socket, &stop, |arrival| {
                    if tracks_corrections {
                        track_newest(&newest, arrival);
                    }
                    emit(&tap, WorkloadEvent::Message { stream: index, arrival: *arrival });
                })
            });
            receivers.push((s.port, receiver));
        }
        let (listener, video_stop, video_tap) = (sockets.video_listener, stop.clone(), tap.clone());
        let video_rx = receiving.spawn(move || match listener.accept() {
            Ok((stream, _)) => {
                video::receive_video(stream, &video_stop, |frame| emit(&video_tap, WorkloadEvent::Frame(*frame)))
            }
            Err(_) => Vec::new(),
        });
        // The senders' common start, and the control loop's: after every thread is
        // spawned, so each keeps its phase however long the spawning took.
        let start = Instant::now() + SPAWN_ALLOWANCE;
        let control = {
            let (stop, newest, hz, first) =
                (stop.clone(), newest.clone(), spec.control_loop_hz, start + spec.control_loop_phase);
            receiving.spawn(move || {
                control_loop(hz, first, &stop, &newest, |update| emit(&tap, WorkloadEvent::Update(*update)))
            })
        };
        let senders = spec
            .streams
            .iter()
            .zip(sockets.senders)
            .map(|(s, socket)| {
                let stream = UdpStream {
                    stream: s.port,
                    dst: SocketAddr::from((receiver_addr, s.port)),
                    rate_hz: s.rate_hz,
                    size: s.size,
                };
                let (stop, first) = (send_stop.clone(), start + s.phase);
                sending.spawn(move || traffic::send_udp_from(&socket, &stream, first, &stop))
            })
            .collect();
        let (video_spec, video_stream, tx_stop) = (spec.video.clone(), sockets.video_stream, send_stop.clone());
        let video_tx = sending.spawn(move || video::send_video(video_stream, &video_spec, &tx_stop));
        let threads = Threads { receivers, senders, video_rx, video_tx, control };
        Ok(Self { send_stop, receive_stop: stop, threads: Some(threads), receiver_addr })
    }

    /// Stops senders, waits `drain` for messages in flight, stops receivers and
    /// returns what was measured; an error if a receiver could not go on receiving.
    pub fn stop(self, drain: Duration) -> Result<WorkloadResult, NetlabError> {
        Ok(Self::stop_all(vec![self], drain)?.remove(0))
    }

    /// Stops several workloads together (both ways of a link): every sender first, one
    /// `drain` for them all, then every receiver; results in the order given.
    pub fn stop_all(workloads: Vec<Self>, drain: Duration) -> Result<Vec<WorkloadResult>, NetlabError> {
        let mut stopping = Vec::new();
        for mut workload in workloads {
            let threads = workload.threads.take().expect("threads until stopped");
            workload.send_stop.store(true, Ordering::Relaxed);
            stopping.push((workload, threads));
        }
        let mut sent_by = Vec::new();
        for (_, threads) in &mut stopping {
            let senders = std::mem::take(&mut threads.senders);
            let sent: Vec<u32> = senders.into_iter().map(|h| h.join().expect("sender")).collect();
            sent_by.push(sent);
        }
        std::thread::sleep(drain);
        stopping.iter().for_each(|(workload, _)| workload.receive_stop.store(true, Ordering::Relaxed));
        stopping.into_iter().zip(sent_by).map(|((workload, threads), sent)| workload.collect(threads, sent)).collect()
    }

    /// What a stopped workload's threads measured.
    fn collect(&self, threads: Threads, sent: Vec<u32>) -> Result<WorkloadResult, NetlabError> {
        let video = threads.video_tx.join().expect("video sender");
        let mut arrivals = Vec::new();
        for (port, h) in threads.receivers {
            let (received, _malformed) = h
                .join()
                .expect("receiver")
                .map_err(NetlabError::socket(format!("receiving UDP on {}:{port}", self.receiver_addr)))?;
            arrivals.push(received);
        }
        Ok(WorkloadResult {
            arrivals,
            sent,
            frames: threads.video_rx.join().expect("video receiver"),
            video,
            updates: threads.control.join().expect("control loop"),
        })
    }
}

/// The workload's sockets, opened before any thread starts. Sockets belong to the
/// namespace they were opened in, whichever thread uses them.
struct Sockets {
    /// Per stream, at the receiving end.
    receivers: Vec<UdpSocket>,
    /// Per stream, at the sending end.
    senders: Vec<UdpSocket>,
    /// At the receiving end: the video's listener, with the connection waiting in its backlog.
    video_listener: TcpListener,
    /// At the sending end: the video's connection, with its congestion control set.
    video_stream: TcpStream,
}

impl Sockets {
    fn open(
        sending: &Netns,
        receiving: &Netns,
        addr: std::net::Ipv4Addr,
        spec: &WorkloadSpec,
    ) -> Result<Self, NetlabError> {
        let mut receivers = Vec::new();
        let mut senders = Vec::new();
        for s in &spec.streams {
            let port = s.port;
            let socket = receiving.run(move || UdpSocket::bind((addr, port)));
            receivers.push(socket.map_err(NetlabError::socket(format!("binding UDP {addr}:{port}")))?);
            let socket = sending.run(|| UdpSocket::bind("0.0.0.0:0"));
            senders.push(socket.map_err(NetlabError::socket("binding a UDP sender"))?);
        }
        let port = spec.video_port;
        let video_listener = receiving
            .run(move || TcpListener::bind((addr, port)))
            .map_err(NetlabError::socket(format!("listening on TCP {addr}:{port}")))?;
        // The kernel completes the handshake into the listener's backlog: the video
        // receiver accepts it once it runs.
        let video_stream = sending
            .run(move || TcpStream::connect((addr, port)))
            .map_err(NetlabError::socket(format!("connecting the video stream to {addr}:{port}")))?;
        traffic::set_congestion_control(&video_stream, &spec.congestion_control)?;
        Ok(Self { receivers, senders, video_listener, video_stream })
    }
}

/// Keeps the newest correction for the control loop.
fn track_newest(newest: &Newest, arrival: &Arrival) {
    let header = arrival.header;
    let mut slot = newest.lock().expect("newest correction");
    if slot.is_none_or(|(seq, _)| header.seq > seq) {
        *slot = Some((header.seq, header.sent_ns));
    }
}

fn control_loop(
    hz: f64,
    start: Instant,
    stop: &AtomicBool,
    newest: &Newest,
    mut on_update: impl FnMut(&ControlUpdate),
) -> Vec<ControlUpdate> {
    let period = Duration::from_secs_f64(1.0 / hz);
    let mut tick = 0u32;
    let mut consumed: Option<u32> = None;
    let mut updates = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        if let Some(wait) = (start + period * tick).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        tick += 1;
        let now = monotonic_ns();
        let current = *newest.lock().expect("newest correction");
        if let Some((seq, sent_ns)) = current
            && consumed.is_none_or(|c| seq > c)
        {
            consumed = Some(seq);
            let update = ControlUpdate { tick_ns: now, seq, sent_ns };
            on_update(&update);
            updates.push(update);
        }
    }
    updates
}

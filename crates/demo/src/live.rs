//! A phase's recording, written while the phase runs: every measurement goes into
//! the MCAP file within 100 ms of happening, and the recorder closes a chunk every
//! second, so a demo that is killed keeps everything up to its last closed chunk.
//!
//! The same walk over the events builds the live [`PhaseData`], with the same
//! methods [`crate::audit`] uses to rebuild it from the file.

use std::collections::BTreeMap;
use std::path::Path;

use bauxite_core::figures::LinkFloor;
use bauxite_core::{BitRate, DaemonState, PacketKey, Protocol, ShaperSnapshot, ValidatedProfile};
use bauxite_netlab::traffic::Arrival;
use bauxite_netlab::video::FrameArrival;
use bauxite_netlab::workload::{ControlUpdate, WorkloadEvent, WorkloadResult, WorkloadSpec};
use bauxite_telemetry::messages::{
    LaneCounters, LatencySample, LinkUsage, LostMessage, PhaseMark, RunInfo, UpdateDelay, VideoFrame, topic,
};
use bauxite_telemetry::{Channel, Recorder};

use crate::analysis::{PhaseData, due_ns};
use crate::run::DemoError;
use crate::scenario::Scenario;

/// Counters are written for every interval of this length (ns).
const COUNTER_INTERVAL_NS: u64 = 100_000_000;

/// One thing to record, at its own time.
enum Event {
    /// A message of the stream with this index in the workload spec.
    Message(usize, Arrival),
    Lost(LostMessage),
    Update(ControlUpdate),
    State(Box<ShaperSnapshot>),
    Frame(FrameArrival),
}

/// The recording of one phase, open while the phase runs.
pub(crate) struct LiveRecording<'a> {
    rec: Recorder,
    spec: &'a WorkloadSpec,
    start_ns: u64,
    data: PhaseData,
    marks: Channel<PhaseMark>,
    phase: u32,
    state: Channel<ShaperSnapshot>,
    frames: Channel<VideoFrame>,
    updates: Channel<UpdateDelay>,
    /// Each stream's lane under the profile (by index in the spec), and the video's.
    stream_lanes: Vec<String>,
    video_lane: String,
    /// The critical streams' ports: their messages make the phase's figures.
    critical: Vec<u16>,
    /// The rate the link drops to: a change to it starts the figures' windows.
    drop_rate_bps: u64,
    latency: BTreeMap<String, Channel<LatencySample>>,
    lost: BTreeMap<String, Channel<LostMessage>>,
    counters: BTreeMap<String, Channel<LaneCounters>>,
    /// Per lane: messages (video frames on the video's lane) received so far, and
    /// bytes received in the current counter interval.
    received: BTreeMap<String, (u64, u64)>,
    next_counters: u64,
    /// On an emulated link: its floor over the phase, and each stream's message size
    /// on it (by index in the spec).
    floor: Option<(LinkFloor, Vec<u32>)>,
    /// On an emulated link: where its usage goes at the end, and when the phase ends.
    usage: Option<Channel<LinkUsage>>,
    end_ns: u64,
}

/// What the link adds to a UDP message's payload: IPv4 and UDP headers, and the
/// emulator's 4 bytes (mahimahi's TUN header, as its traces count them).
pub(crate) const LINK_OVERHEAD_BYTES: u32 = 20 + 8 + 4;

impl<'a> LiveRecording<'a> {
    /// Creates the file with the run's description and its first phase mark.
    pub(crate) fn create(
        path: &Path,
        info: &RunInfo,
        spec: &'a WorkloadSpec,
        profile: &ValidatedProfile,
        start_ns: u64,
        scenario: &Scenario,
    ) -> Result<Self, DemoError> {
        let mut rec = Recorder::create(path)?;
        let run = rec.channel::<RunInfo>(&topic("demo", "run"))?;
        let marks = rec.channel::<PhaseMark>(&topic("demo", "phase"))?;
        rec.write(run, start_ns, info)?;
        let name = if info.protected { "bauxite" } else { "standard stack" };
        let (phase, fast) = (info.phase, scenario.initial_rate);
        let mark = match &scenario.link {
            Some(link) => PhaseMark { phase, event: format!("{name}: link {}", link.spec), link_rate_bps: None },
            None => PhaseMark { phase, event: format!("{name}: link {fast}"), link_rate_bps: Some(fast.bps()) },
        };
        rec.write(marks, start_ns, &mark)?;
        let lane_name = |protocol, port| profile.lanes[lane_of(profile, protocol, port)].name.clone();
        let stream_lanes: Vec<String> = spec.streams.iter().map(|s| lane_name(Protocol::Udp, s.port)).collect();
        let video_lane = lane_name(Protocol::Tcp, spec.video_port);
        let (mut latency, mut lost, mut counters) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for lane in &stream_lanes {
            if !latency.contains_key(lane) {
                latency
                    .insert(lane.clone(), rec.channel::<LatencySample>(&topic("lanes", &format!("{lane}/latency")))?);
                lost.insert(lane.clone(), rec.channel::<LostMessage>(&topic("lanes", &format!("{lane}/lost")))?);
            }
        }
        for lane in stream_lanes.iter().chain([&video_lane]) {
            if !counters.contains_key(lane) {
                counters
                    .insert(lane.clone(), rec.channel::<LaneCounters>(&topic("lanes", &format!("{lane}/counters")))?);
            }
        }
        let usage = match &scenario.link {
            Some(_) => Some(rec.channel::<LinkUsage>(&topic("link", "usage"))?),
            None => None,
        };
        Ok(Self {
            state: rec.channel::<ShaperSnapshot>(&topic("shaper", "state"))?,
            frames: rec.channel::<VideoFrame>(&topic("video", "frames"))?,
            updates: rec.channel::<UpdateDelay>(&topic("control", "update_delay"))?,
            rec,
            marks,
            phase,
            spec,
            start_ns,
            data: PhaseData::new(start_ns, info),
            critical: info.critical_streams.iter().map(|s| s.port).collect(),
            drop_rate_bps: info.link_after_bps,
            received: counters.keys().map(|lane| (lane.clone(), (0, 0))).collect(),
            stream_lanes,
            video_lane,
            latency,
            lost,
            counters,
            next_counters: start_ns + COUNTER_INTERVAL_NS,
            usage,
            end_ns: start_ns + info.duration_ns,
            floor: scenario.link.as_ref().map(|link| {
                let sizes = spec.streams.iter().map(|s| s.size as u32 + LINK_OVERHEAD_BYTES).collect();
                (LinkFloor::new(link.config(), &scenario.timeline), sizes)
            }),
        })
    }

    /// An emulated link's timeline step, applied at `t`: marked in the recording
    /// (the figures' windows come from the link's facts, not from marks).
    pub(crate) fn link_stepped(&mut self, t: u64, change: &bauxite_core::link::LinkChange) -> Result<(), DemoError> {
        let rate = match change {
            bauxite_core::link::LinkChange::Rate(bauxite_core::link::LinkRate::Constant(r)) => Some(r.bps()),
            _ => None,
        };
        let mark = PhaseMark { phase: self.phase, event: format!("link step: {change:?}"), link_rate_bps: rate };
        self.rec.write(self.marks, t, &mark)?;
        Ok(())
    }

    /// The link rate changed at `t` (to `rate`): marked in the recording; a change to
    /// the drop's rate is the start of the figures' windows (see [`PhaseData::dropped`]),
    /// as `bauxite audit` reads it back.
    pub(crate) fn link_changed(&mut self, t: u64, rate: BitRate) -> Result<(), DemoError> {
        let event = if rate.bps() == self.drop_rate_bps {
            self.data.dropped(t);
            format!("link drops to {rate}")
        } else {
            format!("link changes to {rate}")
        };
        let mark = PhaseMark { phase: self.phase, event, link_rate_bps: Some(rate.bps()) };
        self.rec.write(self.marks, t, &mark)?;
        Ok(())
    }

    /// Records the workload's events that arrived since the last call, and the
    /// shaper's state sampled now, in time order.
    pub(crate) fn write(
        &mut self,
        events: impl Iterator<Item = WorkloadEvent>,
        state: Option<(u64, ShaperSnapshot)>,
    ) -> Result<(), DemoError> {
        let mut batch: Vec<(u64, Event)> = events
            .map(|e| match e {
                WorkloadEvent::Message { stream, arrival } => (arrival.received_ns, Event::Message(stream, arrival)),
                WorkloadEvent::Frame(f) => (f.received_ns, Event::Frame(f)),
                WorkloadEvent::Update(u) => (u.tick_ns, Event::Update(u)),
            })
            .collect();
        batch.extend(state.map(|(t, s)| (t, Event::State(Box::new(s)))));
        batch.sort_by_key(|(t, _)| *t);
        for (t, event) in batch {
            self.event(t, event)?;
        }
        Ok(())
    }

    /// Records the messages that never arrived (known only once the senders have
    /// stopped) and, on an emulated link, what it carried (`usage`); closes the file
    /// and returns what the phase measured.
    pub(crate) fn finish(mut self, result: &WorkloadResult, usage: Option<LinkUsage>) -> Result<PhaseData, DemoError> {
        let mut lost = Vec::new();
        for (i, stream) in self.spec.streams.iter().enumerate() {
            let mut arrived = vec![false; result.sent[i] as usize];
            for a in &result.arrivals[i] {
                if let Some(slot) = arrived.get_mut(a.header.seq as usize) {
                    *slot = true;
                }
            }
            for seq in arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(seq, _)| seq as u32) {
                let message = LostMessage { lane: self.stream_lanes[i].clone(), stream: stream.port, seq };
                lost.push((due_ns(self.start_ns, seq, stream.rate_hz), Event::Lost(message)));
            }
        }
        lost.sort_by_key(|(t, _)| *t);
        for (t, event) in lost {
            self.event(t, event)?;
        }
        if let (Some(channel), Some(usage)) = (self.usage, usage) {
            self.rec.write(channel, self.end_ns, &usage)?;
            self.data.usage(&usage);
        }
        self.rec.finish()?;
        self.data.finish();
        Ok(self.data)
    }

    fn event(&mut self, t: u64, event: Event) -> Result<(), DemoError> {
        // Counters for every interval that ended before this event (a lost message is
        // stamped with its due time, in the past: it closes no interval).
        while t >= self.next_counters && !matches!(event, Event::Lost(_)) {
            self.write_counters()?;
        }
        match event {
            Event::Message(stream, a) => {
                let lane = &self.stream_lanes[stream];
                let entry = self.received.entry(lane.clone()).or_default();
                entry.0 += 1;
                entry.1 += self.spec.streams[stream].size as u64;
                let critical = self.critical.contains(&a.header.stream);
                let floor = match &self.floor {
                    Some((floor, sizes)) if critical => {
                        Some(floor.at(a.header.sent_ns.saturating_sub(self.start_ns), sizes[stream]))
                    }
                    _ => None,
                };
                let sample = LatencySample {
                    lane: lane.clone(),
                    stream: a.header.stream,
                    seq: a.header.seq,
                    sent_ns: a.header.sent_ns,
                    latency_ms: a.latency_ms(),
                    floor_ns: floor.map(|f| f.0),
                    head_of_line_ns: floor.map(|f| f.1),
                };
                self.rec.write(self.latency[lane], t, &sample)?;
                if critical {
                    self.data.arrived(a.header.sent_ns, t, floor);
                }
                self.data.message(a.header.stream, t);
            }
            Event::Lost(l) => {
                if self.critical.contains(&l.stream) {
                    self.data.lost(t);
                }
                self.rec.write(self.lost[&l.lane], t, &l)?;
            }
            Event::Update(u) => {
                self.data.updated(t, u.sent_ns);
                let message = UpdateDelay { seq: u.seq, sent_ns: u.sent_ns, delay_ms: u.delay_ms() };
                self.rec.write(self.updates, t, &message)?;
            }
            Event::State(s) => {
                // A cumulative counter: a sample that read less (a restarted or
                // unreadable daemon) does not undo what was counted.
                self.data.bulk_dropped_packets = self.data.bulk_dropped_packets.max(s.droppable_early_drops());
                if s.daemon == DaemonState::Running {
                    self.data.shaper_rate(t, s.link_rate_bps);
                }
                self.rec.write(self.state, t, &s)?;
            }
            Event::Frame(f) => {
                let entry = self.received.entry(self.video_lane.clone()).or_default();
                entry.0 += 1;
                entry.1 += u64::from(f.bytes);
                self.data.frame(t, f.bytes, Some(f.sent_ns));
                let v = VideoFrame {
                    frame: f.frame,
                    key: f.key,
                    bytes: f.bytes,
                    latency_ms: f.latency_ms(),
                    sent_ns: Some(f.sent_ns),
                };
                self.rec.write(self.frames, t, &v)?;
            }
        }
        Ok(())
    }

    /// Each lane's counters at the end of the current interval.
    fn write_counters(&mut self) -> Result<(), DemoError> {
        let at = self.next_counters;
        let elapsed_s = (at - self.start_ns) as f64 / 1e9;
        // Messages (video frames on the video's lane) the schedule had sent by now.
        let by_rate = |hz: f64| (elapsed_s * hz) as u64 + 1;
        for (lane, (count, bytes)) in &mut self.received {
            let mut sent: u64 = (self.spec.streams.iter().zip(&self.stream_lanes))
                .filter(|(_, l)| *l == lane)
                .map(|(s, _)| by_rate(s.rate_hz))
                .sum();
            if *lane == self.video_lane {
                sent += by_rate(f64::from(self.spec.video.fps));
            }
            let c = LaneCounters {
                lane: lane.clone(),
                sent,
                received: *count,
                not_received: sent.saturating_sub(*count),
                bitrate_bps: *bytes as f64 * 8.0 / (COUNTER_INTERVAL_NS as f64 / 1e9),
            };
            self.rec.write(self.counters[lane.as_str()], at, &c)?;
            *bytes = 0;
        }
        self.next_counters += COUNTER_INTERVAL_NS;
        Ok(())
    }
}

/// The index of the lane `profile` gives the workload's `protocol` traffic to `port`, by core's
/// matcher (the kernel's rules, port side included). The sender's port is ephemeral,
/// which no rule names: it is left out (0).
pub(crate) fn lane_of(profile: &ValidatedProfile, protocol: Protocol, port: u16) -> usize {
    let packet = PacketKey { ip_proto: protocol.ip_proto(), dst_port: port, ..PacketKey::default() };
    profile.lane_of(&packet)
}

//! A phase's recording, written while the phase runs: every measurement goes into
//! the MCAP file within 100 ms of happening, and the recorder closes a chunk every
//! second, so a demo that is killed keeps everything up to its last closed chunk.
//!
//! The same walk over the events builds the live [`PhaseData`], with the same
//! methods [`crate::audit`] uses to rebuild it from the file.

use std::collections::BTreeMap;
use std::path::Path;

use bauxite_netlab::traffic::Arrival;
use bauxite_netlab::video::FrameArrival;
use bauxite_netlab::workload::{ControlUpdate, WorkloadEvent, WorkloadResult, WorkloadSpec};
use bauxite_telemetry::messages::{
    LaneCounters, LatencySample, LostMessage, PhaseMark, RunInfo, ShaperState, UpdateDelay, VideoFrame, topic,
};
use bauxite_telemetry::{Channel, Recorder};

use crate::analysis::{PhaseData, due_ns};
use crate::run::{DemoError, DemoOptions, lane_of};

/// Lanes with counters; critical and telemetry also have latency and loss channels.
const LANES: [&str; 3] = ["critical", "telemetry", "bulk"];
/// Counters are written for every interval of this length (ns).
const COUNTER_INTERVAL_NS: u64 = 100_000_000;

/// One thing to record, at its own time.
enum Event {
    Message(&'static str, Arrival),
    Lost(LostMessage),
    Update(ControlUpdate),
    State(ShaperState),
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
    state: Channel<ShaperState>,
    frames: Channel<VideoFrame>,
    updates: Channel<UpdateDelay>,
    latency: BTreeMap<&'static str, Channel<LatencySample>>,
    lost: BTreeMap<&'static str, Channel<LostMessage>>,
    counters: BTreeMap<&'static str, Channel<LaneCounters>>,
    /// Per lane: messages (video frames on the bulk lane) received so far, and bytes
    /// received in the current counter interval.
    received: BTreeMap<&'static str, (u64, u64)>,
    next_counters: u64,
}

impl<'a> LiveRecording<'a> {
    /// Creates the file with the run's description and its phase marks.
    pub(crate) fn create(
        path: &Path,
        info: &RunInfo,
        spec: &'a WorkloadSpec,
        start_ns: u64,
        options: &DemoOptions,
    ) -> Result<Self, DemoError> {
        let mut rec = Recorder::create(path)?;
        let run = rec.channel::<RunInfo>(&topic("demo", "run"))?;
        let marks = rec.channel::<PhaseMark>(&topic("demo", "phase"))?;
        rec.write(run, start_ns, info)?;
        let name = if info.protected { "bauxite" } else { "standard stack" };
        let phase = info.phase;
        rec.write(marks, start_ns, &PhaseMark { phase, event: format!("{name}: link {}", options.fast) })?;
        let (mut latency, mut lost, mut counters) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for lane in LANES {
            if lane != "bulk" {
                latency.insert(lane, rec.channel::<LatencySample>(&topic("lanes", &format!("{lane}/latency")))?);
                lost.insert(lane, rec.channel::<LostMessage>(&topic("lanes", &format!("{lane}/lost")))?);
            }
            counters.insert(lane, rec.channel::<LaneCounters>(&topic("lanes", &format!("{lane}/counters")))?);
        }
        Ok(Self {
            state: rec.channel::<ShaperState>(&topic("shaper", "state"))?,
            frames: rec.channel::<VideoFrame>(&topic("video", "frames"))?,
            updates: rec.channel::<UpdateDelay>(&topic("control", "update_delay"))?,
            rec,
            marks,
            phase,
            spec,
            start_ns,
            data: PhaseData::new(start_ns, info.drop_at_ns, info.duration_ns),
            latency,
            lost,
            counters,
            received: LANES.into_iter().map(|lane| (lane, (0, 0))).collect(),
            next_counters: start_ns + COUNTER_INTERVAL_NS,
        })
    }

    /// Marks an event of the run (e.g. the link rate dropping) when it happens. Stamps
    /// must move forward as the run does: the recorder closes a chunk a second of
    /// stamped time, and a future stamp would hold back the chunks before it.
    pub(crate) fn mark(&mut self, t: u64, event: String) -> Result<(), DemoError> {
        self.rec.write(self.marks, t, &PhaseMark { phase: self.phase, event })?;
        Ok(())
    }

    /// Records the workload's events that arrived since the last call, and the
    /// shaper's state sampled now, in time order.
    pub(crate) fn write(
        &mut self,
        events: impl Iterator<Item = WorkloadEvent>,
        state: Option<(u64, ShaperState)>,
    ) -> Result<(), DemoError> {
        let mut batch: Vec<(u64, Event)> = events
            .map(|e| match e {
                WorkloadEvent::Message { stream, arrival } => {
                    (arrival.received_ns, Event::Message(lane_of(self.spec.streams[stream].port), arrival))
                }
                WorkloadEvent::Frame(f) => (f.received_ns, Event::Frame(f)),
                WorkloadEvent::Update(u) => (u.tick_ns, Event::Update(u)),
            })
            .collect();
        batch.extend(state.map(|(t, s)| (t, Event::State(s))));
        batch.sort_by_key(|(t, _)| *t);
        for (t, event) in batch {
            self.event(t, event)?;
        }
        Ok(())
    }

    /// Records the messages that never arrived (known only once the senders have
    /// stopped), closes the file and returns what the phase measured.
    pub(crate) fn finish(mut self, result: &WorkloadResult) -> Result<PhaseData, DemoError> {
        let mut lost = Vec::new();
        for (i, stream) in self.spec.streams.iter().enumerate() {
            let mut arrived = vec![false; result.sent[i] as usize];
            for a in &result.arrivals[i] {
                if let Some(slot) = arrived.get_mut(a.header.seq as usize) {
                    *slot = true;
                }
            }
            for seq in arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(seq, _)| seq as u32) {
                let message = LostMessage { lane: lane_of(stream.port).into(), stream: stream.port, seq };
                lost.push((due_ns(self.start_ns, seq, stream.rate_hz), Event::Lost(message)));
            }
        }
        lost.sort_by_key(|(t, _)| *t);
        for (t, event) in lost {
            self.event(t, event)?;
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
            Event::Message(lane, a) => {
                let size = self.spec.streams.iter().find(|s| s.port == a.header.stream).map_or(0, |s| s.size);
                let entry = self.received.entry(lane).or_default();
                entry.0 += 1;
                entry.1 += size as u64;
                let sample = LatencySample {
                    lane: lane.into(),
                    stream: a.header.stream,
                    seq: a.header.seq,
                    sent_ns: a.header.sent_ns,
                    latency_ms: a.latency_ms(),
                };
                self.rec.write(self.latency[lane], t, &sample)?;
                if lane == "critical" {
                    self.data.arrived(a.header.sent_ns, t);
                }
            }
            Event::Lost(l) => {
                if l.lane == "critical" {
                    self.data.lost(t);
                }
                self.rec.write(self.lost[l.lane.as_str()], t, &l)?;
            }
            Event::Update(u) => {
                self.data.updated(t, u.sent_ns);
                let message = UpdateDelay { seq: u.seq, sent_ns: u.sent_ns, delay_ms: u.delay_ms() };
                self.rec.write(self.updates, t, &message)?;
            }
            Event::State(s) => {
                self.data.bulk_dropped_packets = s.bulk_early_drops;
                self.rec.write(self.state, t, &s)?;
            }
            Event::Frame(f) => {
                let entry = self.received.entry("bulk").or_default();
                entry.0 += 1;
                entry.1 += u64::from(f.bytes);
                self.data.frame(t, f.bytes);
                let v = VideoFrame { frame: f.frame, key: f.key, bytes: f.bytes, latency_ms: f.latency_ms() };
                self.rec.write(self.frames, t, &v)?;
            }
        }
        Ok(())
    }

    /// Each lane's counters at the end of the current interval.
    fn write_counters(&mut self) -> Result<(), DemoError> {
        let at = self.next_counters;
        for (lane, (count, bytes)) in &mut self.received {
            let sent = sent_by(self.spec, lane, at - self.start_ns);
            let c = LaneCounters {
                lane: lane.to_string(),
                sent,
                received: *count,
                dropped: sent.saturating_sub(*count),
                bitrate_bps: *bytes as f64 * 8.0 / (COUNTER_INTERVAL_NS as f64 / 1e9),
            };
            self.rec.write(self.counters[lane], at, &c)?;
            *bytes = 0;
        }
        self.next_counters += COUNTER_INTERVAL_NS;
        Ok(())
    }
}

/// Messages a lane's streams had sent `elapsed_ns` into the phase (by their schedule).
/// For the bulk lane, video frames the camera had produced.
fn sent_by(spec: &WorkloadSpec, lane: &str, elapsed_ns: u64) -> u64 {
    let by_rate = |hz: f64| (elapsed_ns as f64 / 1e9 * hz) as u64 + 1;
    if lane == "bulk" {
        return by_rate(f64::from(spec.video.fps));
    }
    spec.streams.iter().filter(|s| lane_of(s.port) == lane).map(|s| by_rate(s.rate_hz)).sum()
}

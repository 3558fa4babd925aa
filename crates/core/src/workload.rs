//! Seed 000's robot workload as data: the periodic UDP streams, the control loop
//! that consumes corrections and the H.264-like video. One definition, shared by
//! the network-namespace workload (`bauxite-netlab`, real sockets) and the
//! simulator (`bauxite sim robot`, simulated time), so both run the same numbers.

use std::time::Duration;

use crate::rng::{SplitMix64, mix64};

/// The TCP congestion control the standard stack (and the video) uses: Linux's default.
pub const STANDARD_CONGESTION_CONTROL: &str = "cubic";

/// One periodic UDP stream of the workload.
#[derive(Clone, Debug)]
pub struct StreamSpec {
    /// What it carries, e.g. `steering`.
    pub name: String,
    /// Its destination port (and stream id).
    pub port: u16,
    /// Messages per second.
    pub rate_hz: f64,
    /// UDP payload bytes.
    pub size: usize,
    /// When its first message goes after the senders' common start: where in its
    /// period it sends. Streams whose periods meet (20, 50 and 10 Hz every 100 ms)
    /// would otherwise send together, and which of them reaches the link first would
    /// be decided by whichever sender thread the OS wakes first.
    pub phase: Duration,
}

/// The whole workload.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    /// The UDP streams.
    pub streams: Vec<StreamSpec>,
    /// The stream whose newest message the control loop consumes.
    pub correction_port: u16,
    /// Control loop ticks per second.
    pub control_loop_hz: f64,
    /// Where in its period the control loop ticks, relative to the senders' start. A
    /// robot's loop runs on its own clock; a fixed phase would bias update delays.
    pub control_loop_phase: Duration,
    /// The video.
    pub video: VideoSpec,
    /// The video's TCP port.
    pub video_port: u16,
    /// The video sender's TCP congestion control.
    pub congestion_control: String,
}

impl WorkloadSpec {
    /// Seed 000's workload as trial (or seed) `trial` runs it: [`Self::with_trial_phases`].
    pub fn for_trial(trial: u64) -> Self {
        Self::default().with_trial_phases(trial)
    }

    /// This workload with the phases of trial (or seed) `trial`: the control loop's
    /// spread over trials in golden-ratio steps, each stream's drawn from `trial`. A
    /// robot's loop and its publishers run on clocks of their own, and one fixed set
    /// of phases would bias update delays and which message waits behind which. The
    /// demo's trial k and the simulator's seed k start their streams alike (the
    /// simulator's control loop ticks from 0: it takes only the streams' phases);
    /// demo trials count from 1, `sim robot` seeds from `--seed` (0 by default).
    /// Both phases (standard and Bauxite) of a trial use the same.
    pub fn with_trial_phases(mut self, trial: u64) -> Self {
        let period = 1.0 / self.control_loop_hz;
        self.control_loop_phase = Duration::from_secs_f64((trial as f64 * 0.618_034).fract() * period);
        let mut rng = SplitMix64::new(mix64(trial ^ 0x0000_57e4_9a5e));
        for stream in &mut self.streams {
            stream.phase = Duration::from_nanos(rng.below((1e9 / stream.rate_hz) as u64));
        }
        self
    }
}

impl Default for WorkloadSpec {
    /// Seed 000's workload.
    fn default() -> Self {
        let stream = |name: &str, port, rate_hz, size| StreamSpec {
            name: name.into(),
            port,
            rate_hz,
            size,
            phase: Duration::ZERO,
        };
        Self {
            streams: vec![
                stream("navigation", 7400, 20.0, 96),
                stream("steering", 7401, 50.0, 64),
                stream("telemetry", 7410, 10.0, 512),
            ],
            correction_port: 7400,
            control_loop_hz: 100.0,
            control_loop_phase: Duration::ZERO,
            video: VideoSpec::default(),
            video_port: 8080,
            congestion_control: STANDARD_CONGESTION_CONTROL.into(),
        }
    }
}

/// The video stream's shape: frames at a fixed rate, a larger key frame at every
/// interval, and an encoder that skips frames while its socket still holds unsent ones.
#[derive(Clone, Debug)]
pub struct VideoSpec {
    /// Mean bit rate of the encoder's output.
    pub bitrate_bps: f64,
    /// Frames per second.
    pub fps: u32,
    /// A key frame every this many frames.
    pub keyframe_interval: u32,
    /// How much larger a key frame is than the others.
    pub keyframe_ratio: f64,
    /// Frames the socket may hold unsent before the encoder skips frames.
    pub max_unsent_frames: f64,
}

impl Default for VideoSpec {
    /// The seed's stream: about 3.5 Mbit/s, 30 frames/s, a key frame every second.
    fn default() -> Self {
        Self { bitrate_bps: 3.5e6, fps: 30, keyframe_interval: 30, keyframe_ratio: 4.0, max_unsent_frames: 2.0 }
    }
}

impl VideoSpec {
    /// The size in bytes of frame `n` (header included).
    pub fn frame_size(&self, n: u32) -> usize {
        let per_interval = self.bitrate_bps / 8.0 * f64::from(self.keyframe_interval) / f64::from(self.fps);
        let regular = per_interval / (self.keyframe_ratio + f64::from(self.keyframe_interval - 1));
        let size = if n.is_multiple_of(self.keyframe_interval) { regular * self.keyframe_ratio } else { regular };
        // No frame is smaller than its header.
        (size as usize).max(crate::wire::video::HEADER_LEN)
    }

    /// The mean frame size in bytes.
    pub fn mean_frame_size(&self) -> f64 {
        self.bitrate_bps / 8.0 / f64::from(self.fps)
    }

    /// Unsent bytes in the socket beyond which the encoder skips a frame.
    pub fn unsent_limit(&self) -> usize {
        (self.max_unsent_frames * self.mean_frame_size()) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_draws_its_phases_and_the_same_trial_draws_the_same() {
        let (one, again, two) = (WorkloadSpec::for_trial(1), WorkloadSpec::for_trial(1), WorkloadSpec::for_trial(2));
        let phases = |w: &WorkloadSpec| w.streams.iter().map(|s| s.phase).collect::<Vec<_>>();
        assert_eq!(phases(&one), phases(&again));
        assert_ne!(phases(&one), phases(&two));
        for (stream, phase) in one.streams.iter().zip(phases(&one)) {
            assert!(phase.as_secs_f64() < 1.0 / stream.rate_hz, "{} starts within its period", stream.name);
        }
        // The streams do not all start together, as they did before phases were drawn.
        assert!(phases(&one).windows(2).any(|w| w[0] != w[1]));
        assert!(one.control_loop_phase < Duration::from_millis(10));
        assert_ne!(one.control_loop_phase, two.control_loop_phase);
    }
}

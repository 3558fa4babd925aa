//! Seed 000's robot workload as data: the periodic UDP streams, the control loop
//! that consumes corrections and the H.264-like video. One definition, shared by
//! the network-namespace workload (`bauxite-netlab`, real sockets) and the
//! simulator (`bauxite sim robot`, simulated time), so both run the same numbers.

use std::time::Duration;

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

impl Default for WorkloadSpec {
    /// Seed 000's workload.
    fn default() -> Self {
        let stream = |name: &str, port, rate_hz, size| StreamSpec { name: name.into(), port, rate_hz, size };
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

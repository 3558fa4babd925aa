//! An H.264-like video stream over TCP: frames at a fixed rate, a larger key frame at
//! every interval, and an encoder that skips frames while the socket still holds
//! unsent ones, as a live encoder does when its link cannot keep up.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bauxite_core::WireError;
use bauxite_core::wire::video;
use bauxite_sys::monotonic_ns;

pub use bauxite_core::workload::VideoSpec;

/// What the encoder did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VideoSendLog {
    /// Frames the camera produced.
    pub offered: u32,
    /// Frames written to the socket.
    pub sent: u32,
    /// Frames skipped because the link was behind.
    pub skipped: u32,
}

/// Bytes written to the socket but not yet sent (`SIOCOUTQNSD`).
fn unsent_bytes(stream: &TcpStream) -> usize {
    const SIOCOUTQNSD: libc::c_ulong = 0x894B;
    let mut value: libc::c_int = 0;
    #[allow(unsafe_code)]
    // SAFETY: SIOCOUTQNSD writes one int to the pointer we pass.
    let rc = unsafe { libc::ioctl(stream.as_raw_fd(), SIOCOUTQNSD, &mut value) };
    if rc == 0 { value.max(0) as usize } else { 0 }
}

/// Sends the stream until `stop`.
pub fn send_video(mut stream: TcpStream, spec: &VideoSpec, stop: &AtomicBool) -> VideoSendLog {
    let period = Duration::from_secs_f64(1.0 / f64::from(spec.fps));
    let start = Instant::now();
    let mut log = VideoSendLog::default();
    let limit = spec.unsent_limit();
    stream.set_write_timeout(Some(Duration::from_millis(200))).expect("set a write timeout");
    while !stop.load(Ordering::Relaxed) {
        let n = log.offered;
        if let Some(wait) = (start + period * n).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        log.offered += 1;
        if unsent_bytes(&stream) > limit {
            log.skipped += 1;
            continue;
        }
        let size = spec.frame_size(n);
        let header = video::Repr {
            frame: n,
            sent_ns: monotonic_ns(),
            frame_len: size as u32,
            key: n.is_multiple_of(spec.keyframe_interval),
        };
        let frame = header.to_frame(0x11);
        if write_fully(&mut stream, &frame, stop).is_err() {
            break;
        }
        log.sent += 1;
    }
    log
}

fn write_fully(stream: &mut TcpStream, mut bytes: &[u8], stop: &AtomicBool) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.load(Ordering::Relaxed) {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One frame as the receiver saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameArrival {
    /// The frame number.
    pub frame: u32,
    /// Whether it is a key frame.
    pub key: bool,
    /// Its size in bytes.
    pub bytes: u32,
    /// `CLOCK_MONOTONIC` send time of its first byte.
    pub sent_ns: u64,
    /// `CLOCK_MONOTONIC` time its last byte arrived.
    pub received_ns: u64,
}

impl FrameArrival {
    /// Frame latency in milliseconds.
    pub fn latency_ms(&self) -> f64 {
        self.received_ns.saturating_sub(self.sent_ns) as f64 / 1e6
    }
}

/// Reads frames until `stop` or the end of the stream, calling `on_frame` for each
/// as it completes. A stream that does not parse as frames ends the reading (and is
/// reported by the frames missing).
pub fn receive_video(
    mut stream: TcpStream,
    stop: &AtomicBool,
    mut on_frame: impl FnMut(&FrameArrival),
) -> Vec<FrameArrival> {
    stream.set_read_timeout(Some(Duration::from_millis(50))).expect("set a read timeout");
    let mut frames = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::Relaxed) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&buffer[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        }
        let now = monotonic_ns();
        loop {
            let header = match video::Repr::parse_bytes(&pending) {
                Ok(header) => header,
                Err(WireError::Truncated { .. }) => break,
                Err(e) => {
                    tracing::warn!("video stream lost frame sync ({e}); stopping the receiver");
                    return frames;
                }
            };
            let size = header.frame_len as usize;
            if pending.len() < size {
                break;
            }
            let frame = FrameArrival {
                frame: header.frame,
                key: header.key,
                bytes: header.frame_len,
                sent_ns: header.sent_ns,
                received_ns: now,
            };
            on_frame(&frame);
            frames.push(frame);
            pending.drain(..size);
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_average_the_bit_rate_with_larger_key_frames() {
        let spec = VideoSpec::default();
        let second: usize = (0..30).map(|n| spec.frame_size(n)).sum();
        assert!((second as f64 * 8.0 - 3.5e6).abs() < 3.5e6 * 0.001, "{second}");
        assert!((spec.frame_size(0) as f64 / spec.frame_size(1) as f64 - 4.0).abs() < 0.01);
        assert_eq!(spec.frame_size(30), spec.frame_size(0));
    }
}

//! A PM QoS request on the CPUs' wake-up latency (`/dev/cpu_dma_latency`).

use std::fs::File;
use std::io::Write;

use crate::SysError;

/// Where the kernel takes requests for the largest wake-up latency the CPUs may have.
const DEVICE: &str = "/dev/cpu_dma_latency";

/// A request that idle CPUs wake within `max_us` microseconds, held while this value lives.
///
/// The kernel honours the smallest request of every open file and drops one when its file
/// closes, so the request ends with the process whatever way it exits: nothing outlives a
/// crash. A value of 0 keeps idle CPUs polling instead of halting, as `cyclictest` and
/// real-time robot stacks ask: a halted virtual CPU takes a trip through the hypervisor to
/// wake, and on a quiet 2-core machine that trip, once per process a sample crosses, was most
/// of what separated the bridge's critical p95 from its p50.
#[derive(Debug)]
pub struct CpuLatencyRequest {
    _file: File,
}

impl CpuLatencyRequest {
    /// Asks for idle CPUs that wake within `max_us` µs (needs root).
    pub fn hold(max_us: i32) -> Result<Self, SysError> {
        let io = |what: &str| {
            let what = format!("{what} {DEVICE}");
            move |source| SysError::Io { what, source }
        };
        let mut file = File::options().write(true).open(DEVICE).map_err(io("opening"))?;
        // The device takes the value as a binary 32-bit integer in native byte order.
        file.write_all(&max_us.to_ne_bytes()).map_err(io("writing a latency request to"))?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel reads back the smallest request held, and forgets it when the file closes.
    #[test]
    fn a_request_holds_while_its_value_lives() {
        if !crate::root_or_skip("a_request_holds_while_its_value_lives") {
            return;
        }
        let current = || {
            let bytes = std::fs::read(DEVICE).expect("read the device");
            i32::from_ne_bytes(bytes[..4].try_into().expect("4 bytes"))
        };
        let before = current();
        let request = CpuLatencyRequest::hold(0).expect("hold a request");
        assert_eq!(current(), 0, "the request is the smallest held");
        drop(request);
        assert_eq!(current(), before, "the request ended with its file");
    }
}

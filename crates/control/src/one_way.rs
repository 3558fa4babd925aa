//! Each way's queue in a probe's round trip, from the reflector's receive time.
//!
//! A round trip crosses both ways of the link. The uplink's controller must not read
//! the downlink's queue as its own, nor the other way round: with both directions
//! loaded (`direction: both`, a download beside an upload), a queue on one way made
//! both controllers cut their rates, and each cut left the other's upward probes
//! looking like failures. `bauxite reflect` stamps when a probe reached it, on its own
//! clock. That clock's offset from ours is unknown, but constant, and cancels out: each
//! way's queue is its one-way delay less that way's least one-way delay lately.
//!
//! "Lately" is a sliding window ([`BASELINE_WINDOW`]): two crystals drift apart by up
//! to about 50 ppm, so an older least delay could be off by more than the queues that
//! matter. A queue that stands on one way for longer than the window becomes that
//! way's baseline and is then counted on neither: the controller of the other way
//! sees it again, as it would with round trips alone.

use std::time::Duration;

/// How long a way's least one-way delay is remembered (in two halves): the drift of
/// two clocks over it (0.5 ms at 50 ppm) is below any queue the controllers act on.
pub const BASELINE_WINDOW: Duration = Duration::from_secs(10);

/// What one answer says of each way's queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WayQueues {
    /// The way out (the prober to the reflector): the uplink's queue.
    pub out: Duration,
    /// The way back: the downlink's queue.
    pub back: Duration,
}

/// The least value of a series over a sliding window, kept in two halves: the least
/// of the current half and of the one before.
#[derive(Clone, Debug, Default)]
struct WindowedMin {
    current: Option<(u64, i64)>,
    previous: Option<i64>,
}

impl WindowedMin {
    /// Adds `value` at `now_ns`; returns the least over the last one to two halves.
    fn push(&mut self, now_ns: u64, value: i64) -> i64 {
        let half = BASELINE_WINDOW.as_nanos() as u64 / 2;
        match &mut self.current {
            Some((start, least)) if now_ns.saturating_sub(*start) < half => *least = (*least).min(value),
            current => {
                self.previous = current.map(|(_, least)| least);
                *current = Some((now_ns, value));
            }
        }
        let current = self.current.map_or(value, |(_, least)| least);
        self.previous.map_or(current, |previous| previous.min(current))
    }
}

/// Each way's queue from the answers of one reflector (a new reflector has a clock of
/// its own: start a new one).
#[derive(Clone, Debug, Default)]
pub struct OneWayDelays {
    out: WindowedMin,
    back: WindowedMin,
}

impl OneWayDelays {
    /// A probe sent at `sent_ns` reached the reflector at `reflected_ns` (its clock)
    /// and its answer came back at `received_ns`: each way's queue now.
    pub fn on_answer(&mut self, sent_ns: u64, reflected_ns: u64, received_ns: u64) -> WayQueues {
        // Differences of two clocks: any sign, and only their changes count.
        let out = reflected_ns.wrapping_sub(sent_ns) as i64;
        let back = received_ns.wrapping_sub(reflected_ns) as i64;
        let excess = |value: i64, least: i64| Duration::from_nanos(value.saturating_sub(least).max(0) as u64);
        WayQueues {
            out: excess(out, self.out.push(received_ns, out)),
            back: excess(back, self.back.push(received_ns, back)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_reflectors_clock_offset_cancels_and_each_way_keeps_its_own_queue() {
        // The reflector's clock runs 3 h behind ours (as any other host's may).
        let offset = 3 * 3600 * 1000 * MS;
        let mut delays = OneWayDelays::default();
        let answer = |d: &mut OneWayDelays, at: u64, out_ms: u64, back_ms: u64| {
            let reflected = at + out_ms * MS;
            d.on_answer(at, reflected.wrapping_sub(offset), reflected + back_ms * MS)
        };
        assert_eq!(answer(&mut delays, 0, 10, 10), WayQueues::default(), "the first answer is the baseline");
        let q = answer(&mut delays, 100 * MS, 10, 250);
        assert_eq!((q.out, q.back), (Duration::ZERO, Duration::from_millis(240)), "a queue on the way back");
        let q = answer(&mut delays, 200 * MS, 40, 10);
        assert_eq!((q.out, q.back), (Duration::from_millis(30), Duration::ZERO), "and one on the way out");
        // A reflector whose clock is ahead, wrapping the difference: the same.
        let mut ahead = OneWayDelays::default();
        let sent = u64::MAX - 5 * MS; // our clock wraps before the answers come back
        ahead.on_answer(sent, 2 * MS, 20 * MS);
        let q = ahead.on_answer(sent.wrapping_add(100 * MS), 109 * MS, 127 * MS);
        assert_eq!((q.out, q.back), (Duration::from_millis(7), Duration::ZERO));
    }

    #[test]
    fn the_least_delay_is_forgotten_after_one_to_two_half_windows() {
        let half = BASELINE_WINDOW.as_nanos() as u64 / 2;
        let mut min = WindowedMin::default();
        assert_eq!(min.push(0, 5), 5);
        assert_eq!(min.push(1, 9), 5);
        assert_eq!(min.push(half, 9), 5, "a new half: the old one's least still counts");
        assert_eq!(min.push(2 * half, 9), 9, "two halves later it is gone");
        assert_eq!(min.push(2 * half + 1, 7), 7);
    }
}

//! What the lanes do while `rate: auto` hears no answer ([`RateController::silent_for`]):
//! the link may be out (a tunnel, a handover), and everything sent into it waits in the
//! modem's FIFO ahead of every critical message sent after it. So every lane but the
//! most urgent is held in the robot ([`bauxite_core::Profile::lane_class`]), where it
//! waits harmlessly: on six generated roads with 5 s tunnels this took 3-39 ms off
//! the critical excess p95 (telemetry's 27 KB per outage no longer drained ahead of
//! them) and ended the critical loss where the FIFO had overflowed (0.2-0.4 %). The lanes never dropped are
//! delayed, never dropped for it: one whose queue fills is let go until answers
//! return (a reflector that died over a working link holds telemetry once, for the
//! seconds its queue lasts, then the plain fallback goes on).
//!
//! [`RateController::silent_for`]: crate::RateController::silent_for

use bauxite_core::Profile;

use crate::LaneSample;

/// A held lane never dropped whose queue is this full (of its `queue_limit`) is let
/// go: the rest is room for what arrives before the release reaches HTB (a poll and
/// a `tc` change, tens of milliseconds).
const RELEASE_AT: f64 = 0.75;

/// Whether the lanes but the most urgent are held, poll by poll.
#[derive(Clone, Copy, Debug, Default)]
pub struct SilenceHold {
    /// A held lane filled during this silence: the lanes go as usual until it ends.
    released: bool,
    /// What the last poll decided.
    held: bool,
}

impl SilenceHold {
    /// Whether the lanes are held at this poll, given whether the link is `silent`
    /// and the lanes' `samples` (in the profile's order).
    pub fn update(&mut self, silent: bool, profile: &Profile, samples: &[LaneSample]) -> bool {
        let full = |(lane, sample): (&bauxite_core::Lane, &LaneSample)| {
            !lane.drop_when_congested && sample.backlog_packets as f64 >= RELEASE_AT * lane.queue_limit as f64
        };
        self.released = silent && (self.released || profile.lanes.iter().zip(samples).skip(1).any(full));
        self.held = silent && !self.released;
        self.held
    }

    /// What the last [`Self::update`] decided (false before the first).
    pub fn held(&self) -> bool {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(backlogs: [u64; 3]) -> Vec<LaneSample> {
        backlogs.map(|backlog_packets| LaneSample { backlog_packets, ..LaneSample::default() }).to_vec()
    }

    #[test]
    fn the_lanes_are_held_through_a_silence_until_one_never_dropped_fills() {
        let p = Profile::robot(); // telemetry holds 64 packets, bulk 48
        let mut hold = SilenceHold::default();
        assert!(!hold.update(false, &p, &samples([0, 0, 0])), "answers come: nothing held");
        assert!(hold.update(true, &p, &samples([0, 10, 48])), "a droppable lane that fills is not let go");
        assert!(hold.update(true, &p, &samples([64, 47, 0])), "lane 0 is never held");
        assert!(!hold.update(true, &p, &samples([0, 48, 0])), "telemetry three quarters full is let go");
        assert!(!hold.update(true, &p, &samples([0, 0, 0])), "for the rest of the silence");
        assert!(!hold.update(false, &p, &samples([0, 0, 0])));
        assert!(hold.update(true, &p, &samples([0, 0, 0])), "the next silence holds again");
        assert!(hold.held(), "and remembers it");
    }
}

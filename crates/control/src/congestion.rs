//! The congested state and the early-drop control law, as a sans-IO state machine.
//!
//! Fed with class statistics and the time, it answers: is the link congested, and
//! with which probability should each droppable lane be discarded early? The daemon
//! feeds it from netlink every poll interval, the simulator from its lanes; tests
//! feed it synthetic samples.

use std::time::Duration;

use bauxite_core::{BitRate, CongestionPolicy, Profile};
use bauxite_qdisc::{PieConfig, PieController};

/// What the daemon read about one lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneSample {
    /// Bytes the lane has sent so far (cumulative, from the class counters).
    pub sent_bytes: u64,
    /// Bytes waiting in the lane's queue.
    pub backlog_bytes: u64,
    /// Packets waiting in the lane's queue.
    pub backlog_packets: u64,
}

/// What the controller decided for one lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaneVerdict {
    /// Departure rate, smoothed over about 100 ms.
    pub rate_bps: f64,
    /// Estimated queue delay: backlog over departure rate.
    pub queue_delay: Duration,
    /// Early-drop probability to apply now (0 when not congested or not droppable).
    pub drop_probability: f64,
}

/// A change of the congested state, for logs and recordings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// The link became congested.
    Entered,
    /// The condition stayed clear for the exit hold time.
    Left,
}

struct LaneState {
    share: f64,
    guaranteed_bps: f64,
    droppable: bool,
    pie: PieController,
    rate_bps: f64,
    rate_measured: bool,
    last_bytes: Option<u64>,
    verdict: LaneVerdict,
}

/// Time constant of the departure-rate average.
const RATE_TAU: Duration = Duration::from_millis(100);

/// The controller for one interface.
pub struct Controller {
    policy: CongestionPolicy,
    pie_interval: Duration,
    lanes: Vec<LaneState>,
    congested: bool,
    clear_since: Option<Duration>,
    last_sample: Option<Duration>,
    last_pie: Option<Duration>,
    /// The droppable lanes are held by the shaper ([`Self::hold`]).
    held: bool,
}

impl Controller {
    /// A controller for `profile`'s lanes on a link of `rate`.
    pub fn new(profile: &Profile, rate: BitRate) -> Self {
        let ed = &profile.early_drop;
        let pie = PieConfig {
            target: ed.target,
            t_update: ed.update_interval,
            alpha: ed.alpha,
            beta: ed.beta,
            max_burst: ed.max_burst,
        };
        let lanes = profile
            .lanes
            .iter()
            .map(|l| LaneState {
                share: l.share,
                guaranteed_bps: rate.bps() as f64 * l.share,
                droppable: l.drop_when_congested,
                pie: PieController::new(pie.clone()),
                rate_bps: 0.0,
                rate_measured: false,
                last_bytes: None,
                verdict: LaneVerdict::default(),
            })
            .collect();
        Self {
            policy: profile.congestion.clone(),
            pie_interval: ed.update_interval,
            lanes,
            congested: false,
            clear_since: None,
            last_sample: None,
            last_pie: None,
            held: false,
        }
    }

    /// Follows a new link rate (from `rate: auto`).
    pub fn set_link_rate(&mut self, rate: BitRate) {
        for lane in &mut self.lanes {
            lane.guaranteed_bps = rate.bps() as f64 * lane.share;
        }
    }

    /// Whether the shaper holds the droppable lanes (with the others but the first)
    /// while `rate: auto` hears no answer (`Profile::lane_class`). Their queue is then
    /// the shaper's own doing, not the link's congestion: no early drop, and their
    /// early-drop law starts afresh when the hold ends. Dropped early, a held lane's
    /// packets only made room for more: the sender's TCP small queues refilled it at
    /// once (1452 early discards in 5 namespace trials of a road with 5 s tunnels, the
    /// video 6 % lower than without the hold).
    pub fn hold(&mut self, held: bool) {
        if held && !self.held {
            for lane in self.lanes.iter_mut().filter(|l| l.droppable) {
                lane.pie = PieController::new(lane.pie.config().clone());
            }
        }
        self.held = held;
    }

    /// Whether the link is congested.
    pub fn congested(&self) -> bool {
        self.congested
    }

    /// The latest verdicts, one per lane.
    pub fn verdicts(&self) -> Vec<LaneVerdict> {
        self.lanes.iter().map(|l| l.verdict).collect()
    }

    /// Takes one sample per lane at time `now` (any monotonic origin); returns a
    /// transition of the congested state, if this sample caused one.
    pub fn observe(&mut self, now: Duration, samples: &[LaneSample]) -> Option<Transition> {
        let dt = self.last_sample.map(|t| now.saturating_sub(t));
        self.last_sample = Some(now);
        let run_pie = self.last_pie.is_none_or(|t| now.saturating_sub(t) >= self.pie_interval);
        if run_pie {
            self.last_pie = Some(now);
        }

        let mut condition = false;
        for (lane, sample) in self.lanes.iter_mut().zip(samples) {
            // A counter that went backwards was reset (the class was recreated): skip it.
            if let (Some(dt), Some(last)) = (dt, lane.last_bytes)
                && !dt.is_zero()
                && sample.sent_bytes >= last
            {
                let instant = (sample.sent_bytes - last) as f64 * 8.0 / dt.as_secs_f64();
                // The first measurement is taken as it is; later ones are averaged.
                let weight =
                    if lane.rate_measured { 1.0 - (-dt.as_secs_f64() / RATE_TAU.as_secs_f64()).exp() } else { 1.0 };
                lane.rate_bps += weight * (instant - lane.rate_bps);
                lane.rate_measured = true;
            }
            lane.last_bytes = Some(sample.sent_bytes);
            // A backlogged HTB class departs at least at its guaranteed rate.
            let departure = lane.rate_bps.max(lane.guaranteed_bps).max(1.0);
            let queue_delay = Duration::from_secs_f64(sample.backlog_bytes as f64 * 8.0 / departure);
            if run_pie && lane.droppable && !self.held {
                lane.pie.update(queue_delay);
            }
            if lane.droppable
                && (queue_delay > self.policy.enter_delay
                    || sample.backlog_packets > u64::from(self.policy.enter_backlog_packets))
            {
                condition = true;
            }
            lane.verdict = LaneVerdict { rate_bps: lane.rate_bps, queue_delay, drop_probability: 0.0 };
        }

        let transition = if condition {
            self.clear_since = None;
            (!self.congested).then(|| {
                self.congested = true;
                Transition::Entered
            })
        } else if self.congested {
            let since = *self.clear_since.get_or_insert(now);
            (now.saturating_sub(since) >= self.policy.exit_hold).then(|| {
                self.congested = false;
                self.clear_since = None;
                Transition::Left
            })
        } else {
            None
        };

        for (lane, sample) in self.lanes.iter_mut().zip(samples) {
            if self.congested && lane.droppable && !self.held {
                lane.verdict.drop_probability = lane.pie.effective_probability(sample.backlog_packets);
            }
        }
        transition
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Robot lanes at 1.5 Mbit/s; bulk (lane 2) with a standing queue of `backlog` bytes
    /// draining at 1.2 Mbit/s.
    fn run(ctl: &mut Controller, from_ms: u64, to_ms: u64, backlog: u64) -> Vec<Option<Transition>> {
        (from_ms..to_ms)
            .step_by(10)
            .map(|t| {
                let sent = t * 150; // 1.2 Mbit/s = 150 bytes per ms
                let bulk = LaneSample { sent_bytes: sent, backlog_bytes: backlog, backlog_packets: backlog / 1500 };
                ctl.observe(Duration::from_millis(t), &[LaneSample::default(), LaneSample::default(), bulk])
            })
            .collect()
    }

    fn controller() -> Controller {
        Controller::new(&Profile::robot(), BitRate::from_bps(1_500_000))
    }

    #[test]
    fn a_standing_bulk_queue_enters_congestion_at_once() {
        let mut ctl = controller();
        let transitions = run(&mut ctl, 0, 100, 15_000); // 100 ms of queue
        assert_eq!(transitions[0], Some(Transition::Entered));
        assert!(ctl.congested());
        let v = ctl.verdicts()[2];
        assert!((v.rate_bps - 1.2e6).abs() < 0.2e6, "{v:?}");
        assert!(v.queue_delay > 60 * MS && v.queue_delay < 110 * MS, "{v:?}");
    }

    #[test]
    fn leaving_needs_the_condition_clear_for_the_hold_time() {
        let mut ctl = controller();
        run(&mut ctl, 0, 500, 15_000);
        // Clear for 1.9 s: still congested (hold is 2 s).
        let t = run(&mut ctl, 500, 2_400, 0);
        assert!(t.iter().all(Option::is_none) && ctl.congested());
        // A relapse restarts the hold.
        run(&mut ctl, 2_400, 2_410, 15_000);
        let t = run(&mut ctl, 2_410, 4_400, 0);
        assert!(t.iter().all(Option::is_none) && ctl.congested());
        let t = run(&mut ctl, 4_400, 4_500, 0);
        assert!(t.contains(&Some(Transition::Left)) && !ctl.congested());
    }

    #[test]
    fn drop_probability_rises_only_for_droppable_lanes_while_congested() {
        let mut ctl = controller();
        run(&mut ctl, 0, 3_000, 15_000);
        let v = ctl.verdicts();
        assert!(v[2].drop_probability > 0.05, "{v:?}");
        assert_eq!(v[0].drop_probability, 0.0);
        assert_eq!(v[1].drop_probability, 0.0);
        // Not congested: nothing is dropped, whatever PIE's state.
        run(&mut ctl, 3_000, 6_000, 0);
        assert!(!ctl.congested());
        assert_eq!(ctl.verdicts()[2].drop_probability, 0.0);
    }

    #[test]
    fn a_lane_the_shaper_holds_is_not_dropped_early_and_its_law_starts_afresh() {
        let mut ctl = controller();
        ctl.hold(true);
        run(&mut ctl, 0, 2_000, 60_000);
        assert!(ctl.congested(), "a standing queue still reads as congestion");
        assert_eq!(ctl.verdicts()[2].drop_probability, 0.0, "held: nothing dropped early");
        ctl.hold(false);
        run(&mut ctl, 2_000, 2_030, 60_000);
        let after = ctl.verdicts()[2].drop_probability;
        let mut fresh = controller();
        run(&mut fresh, 0, 2_030, 60_000);
        assert!(after < fresh.verdicts()[2].drop_probability, "{after} against a law that ran all along");
    }

    #[test]
    fn a_counter_reset_is_not_a_rate() {
        let mut ctl = controller();
        run(&mut ctl, 0, 500, 0);
        let sample = |sent| {
            [LaneSample::default(), LaneSample::default(), LaneSample { sent_bytes: sent, ..Default::default() }]
        };
        ctl.observe(Duration::from_millis(500), &sample(10)); // the class was recreated
        assert!((ctl.verdicts()[2].rate_bps - 1.2e6).abs() < 0.1e6, "{:?}", ctl.verdicts()[2]);
        ctl.observe(Duration::from_millis(510), &sample(10 + 1500));
        assert!((ctl.verdicts()[2].rate_bps - 1.2e6).abs() < 0.1e6, "{:?}", ctl.verdicts()[2]);
    }

    #[test]
    fn a_short_queue_below_the_thresholds_is_not_congestion() {
        let mut ctl = controller();
        let t = run(&mut ctl, 0, 1_000, 800); // under 9 ms of queue even at the guaranteed rate
        assert!(t.iter().all(Option::is_none) && !ctl.congested());
    }
}

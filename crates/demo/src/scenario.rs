//! The demo's scenario: how long each phase runs and what the link does meanwhile,
//! as a starting rate and a [`Timeline`] of timed changes (`bauxite_core::link`'s,
//! the link emulator's own). The seed's is one step drop, 50 → 1.5 Mbit/s at 5 s
//! ([`Scenario::seed`]).
//!
//! Without `--link` the testbed's bottleneck is TBF, which applies constant rates:
//! the seed's timeline holds only those. With `--link` ([`Scenario::emulated`]) the
//! userspace link emulator plays the link, and its timeline may change anything the
//! link has (a trace, delay, jitter, loss, the queue).

use std::time::Duration;

use bauxite_core::BitRate;
use bauxite_core::link::{LinkChange, LinkConfig, LinkRate, Timeline};
use bauxite_netlab::emulator::Direction;

/// What every phase of every trial runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Length of each phase.
    pub duration: Duration,
    /// The link's rate when the phase starts.
    pub initial_rate: BitRate,
    /// The link's changes, in time order. The first is "the drop": the figures are
    /// measured from it (see [`Scenario::drop`]).
    pub timeline: Timeline,
    /// An emulated link (`--link`) instead of the seed's TBF step drop; then
    /// `initial_rate` is not used and the timeline is the link's.
    pub link: Option<EmulatedLink>,
}

/// A link given with `--link` (and `--timeline`), as the emulator runs it: both
/// directions, and which of them the figures measure.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatedLink {
    /// The `--link` value as given, with `timeline=FILE` when there is one: the label
    /// of the results.
    pub spec: String,
    /// Robot → base at the start of each phase.
    pub uplink: LinkConfig,
    /// Base → robot at the start of each phase.
    pub downlink: LinkConfig,
    /// The direction the figures measure (see [`Scenario::measuring`]).
    pub measured: Direction,
}

impl EmulatedLink {
    /// One direction's link at the start of each phase.
    pub fn of(&self, direction: Direction) -> &LinkConfig {
        match direction {
            Direction::Uplink => &self.uplink,
            Direction::Downlink => &self.downlink,
        }
    }

    /// The measured direction's link: the one the figures' floors and capacity come from.
    pub fn config(&self) -> &LinkConfig {
        self.of(self.measured)
    }
}

/// Why a scenario cannot be run.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// The timeline is empty: there is no drop to measure from.
    #[error("the link never changes: the demo's figures are measured from a drop")]
    NoDrop,
    /// A change the demo's testbed cannot make (anything but a constant rate).
    #[error("link change {index} at {at:?} ({change}): the demo's testbed applies constant rates only")]
    Unsupported {
        /// Its position in the timeline.
        index: usize,
        /// Its time.
        at: Duration,
        /// What it is.
        change: String,
    },
    /// Changes out of order, or at or after the end of the phase.
    #[error("link change {index} at {at:?} is out of time order or not before the end of the phase ({duration:?})")]
    Timeline {
        /// Its position in the timeline.
        index: usize,
        /// Its time.
        at: Duration,
        /// The phase's length.
        duration: Duration,
    },
    /// Too short to leave [`Scenario::MIN_MEASURED`] of figures after the drop.
    #[error(
        "a phase of {} s is too short: the link drops at {} s and figures start {} s later; it must be at least {} s",
        duration.as_secs_f64(),
        drop_at.as_secs_f64(),
        Scenario::SETTLE.as_secs_f64(),
        minimum.as_secs_f64()
    )]
    TooShort {
        /// The phase's length asked for.
        duration: Duration,
        /// When the link drops.
        drop_at: Duration,
        /// The shortest phase that works.
        minimum: Duration,
    },
}

impl Scenario {
    /// The seed's link before the drop.
    pub const SEED_BEFORE: BitRate = BitRate::from_bps(50_000_000);
    /// The seed's link after the drop.
    pub const SEED_AFTER: BitRate = BitRate::from_bps(1_500_000);
    /// When the seed's link drops.
    pub const SEED_DROP_AT: Duration = Duration::from_secs(5);
    /// The default length of a phase.
    pub const DEFAULT_DURATION: Duration = Duration::from_secs(20);
    /// The time the shaper is given to adapt after the drop: the seed's figures are
    /// measured from one second after it (`analysis`).
    pub const SETTLE: Duration = bauxite_core::figures::SETTLE;
    /// The least measured time after [`Scenario::SETTLE`]: two seconds, so that the
    /// time-to-protect figure (a whole fast second) has room.
    pub const MIN_MEASURED: Duration = Duration::from_secs(2);

    /// The seed's scenario with phases of `duration`: 50 Mbit/s, dropping to
    /// 1.5 Mbit/s at 5 s. Errors when `duration` is shorter than 8 s.
    pub fn seed(duration: Duration) -> Result<Self, ScenarioError> {
        let scenario = Self {
            duration,
            initial_rate: Self::SEED_BEFORE,
            timeline: Timeline::of_rates(&[(Self::SEED_DROP_AT, Self::SEED_AFTER)]),
            link: None,
        };
        scenario.validate()?;
        Ok(scenario)
    }

    /// Phases of `duration` on an emulated link: `link` at the start, changed by
    /// `timeline`. Without a timeline the figures' windows start at 0.
    pub fn emulated(link: EmulatedLink, timeline: Timeline, duration: Duration) -> Result<Self, ScenarioError> {
        let scenario = Self { duration, initial_rate: Self::SEED_BEFORE, timeline, link: Some(link) };
        scenario.validate()?;
        Ok(scenario)
    }

    /// This scenario with its figures measured on `direction` (the same links).
    pub fn measuring(&self, direction: Direction) -> Self {
        let mut view = self.clone();
        if let Some(link) = &mut view.link {
            link.measured = direction;
        }
        view
    }

    /// Where the figures' windows start: the first timed change (the seed's drop), or
    /// 0 on an emulated link without one.
    pub fn drop_at(&self) -> Duration {
        self.timeline.steps.first().map_or(Duration::ZERO, |(at, _)| *at)
    }

    /// Checks the timeline holds only constant rates, in order and inside the phase,
    /// and that the phase leaves [`Scenario::MIN_MEASURED`] of figures after the
    /// drop has settled.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let mut last = Duration::ZERO;
        for (index, (at, change)) in self.timeline.steps.iter().enumerate() {
            if self.link.is_none() && constant_rate(change).is_none() {
                return Err(ScenarioError::Unsupported { index, at: *at, change: format!("{change:?}") });
            }
            if *at < last || *at >= self.duration {
                return Err(ScenarioError::Timeline { index, at: *at, duration: self.duration });
            }
            last = *at;
        }
        let drop_at = match self.link {
            Some(_) => self.drop_at(),
            None => self.rates().next().ok_or(ScenarioError::NoDrop)?.0,
        };
        let minimum = drop_at + Self::SETTLE + Self::MIN_MEASURED;
        if self.duration < minimum {
            return Err(ScenarioError::TooShort { duration: self.duration, drop_at, minimum });
        }
        Ok(())
    }

    /// The timeline's rate changes: (time from the start, rate), in order.
    pub fn rates(&self) -> impl Iterator<Item = (Duration, BitRate)> + '_ {
        self.timeline.steps.iter().filter_map(|(at, change)| Some((*at, constant_rate(change)?)))
    }

    /// The change the figures are measured from: the first of the timeline, as
    /// (time from the start, rate).
    ///
    /// # Panics
    /// Without a rate change, which [`Scenario::validate`] rejects.
    pub fn drop(&self) -> (Duration, BitRate) {
        self.rates().next().expect("a validated scenario has a drop")
    }
}

/// The rate a change sets, if it is a constant rate.
fn constant_rate(change: &LinkChange) -> Option<BitRate> {
    match change {
        LinkChange::Rate(LinkRate::Constant(rate)) => Some(*rate),
        _ => None,
    }
}

impl Default for Scenario {
    /// The seed's scenario with phases of [`Scenario::DEFAULT_DURATION`].
    fn default() -> Self {
        Self::seed(Self::DEFAULT_DURATION).expect("the default scenario is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_drops_at_five_seconds_and_needs_eight() {
        let s = Scenario::seed(Duration::from_secs(8)).unwrap();
        assert_eq!(s.drop(), (Duration::from_secs(5), BitRate::from_bps(1_500_000)));
        assert_eq!(s.initial_rate.bps(), 50_000_000);
        let e = Scenario::seed(Duration::from_secs(7)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a phase of 7 s is too short: the link drops at 5 s and figures start 1 s later; it must be at least 8 s"
        );
        assert_eq!(Scenario::default().duration, Duration::from_secs(20));
    }

    #[test]
    fn timelines_are_constant_rates_in_order_and_inside_the_phase() {
        let rate = |mbit: u64| BitRate::from_bps(mbit * 1_000_000);
        let secs = Duration::from_secs;
        let mut s =
            Scenario { timeline: Timeline::of_rates(&[(secs(2), rate(1)), (secs(9), rate(5))]), ..Scenario::default() };
        assert_eq!(s.validate(), Ok(()));
        assert_eq!(s.rates().collect::<Vec<_>>(), [(secs(2), rate(1)), (secs(9), rate(5))]);
        s.timeline.steps.swap(0, 1);
        assert!(matches!(s.validate(), Err(ScenarioError::Timeline { index: 1, .. })));
        s.timeline = Timeline::of_rates(&[(secs(2), rate(1)), (secs(20), rate(5))]);
        assert!(matches!(s.validate(), Err(ScenarioError::Timeline { index: 1, .. })));
        s.timeline.steps[1] = (secs(9), LinkChange::Delay(Duration::from_millis(20)));
        let e = s.validate().unwrap_err();
        assert!(matches!(e, ScenarioError::Unsupported { index: 1, .. }), "{e}");
        s.timeline.steps.clear();
        assert_eq!(s.validate(), Err(ScenarioError::NoDrop));
    }

    #[test]
    fn an_emulated_link_takes_any_change_and_needs_no_drop() {
        let secs = Duration::from_secs;
        let link = EmulatedLink {
            spec: "rate=2mbit".into(),
            uplink: LinkConfig::default(),
            downlink: LinkConfig::default(),
            measured: Direction::Uplink,
        };
        let s = Scenario::emulated(link.clone(), Timeline::default(), secs(3)).unwrap();
        assert_eq!(s.drop_at(), Duration::ZERO, "without a timeline the windows start at 0");
        let e = Scenario::emulated(link.clone(), Timeline::default(), Duration::from_millis(2900)).unwrap_err();
        assert!(matches!(e, ScenarioError::TooShort { .. }), "{e}");
        let delay = Timeline { steps: vec![(secs(2), LinkChange::Delay(Duration::from_millis(20)))] };
        let s = Scenario::emulated(link.clone(), delay.clone(), secs(5)).unwrap();
        assert_eq!(s.drop_at(), secs(2));
        let e = Scenario::emulated(link, delay, secs(2)).unwrap_err();
        assert!(matches!(e, ScenarioError::Timeline { index: 0, .. }), "{e}");
    }
}

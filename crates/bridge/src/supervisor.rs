//! The safety supervisor (seed 004, section III-E): NORMAL → DEGRADED → EMERGENCY from the
//! bridge's own vital signs, as a pure state machine fed with `now`.
//!
//! Its job is to keep the critical path alive when the bridge itself is overloaded. Every tick
//! it is given the fullest forwarding queue (0–1), the callback lag (the longest a sample has
//! waited between arriving and being written, including samples still waiting) and the write and
//! read errors since the last tick (summed over `error_window`).
//!
//! - Any reading at or above the `degrade` limits moves NORMAL to DEGRADED at once: noncritical
//!   forwarding stops, leaving the bridge's time to the critical path.
//! - Readings at or above the `emergency` limits for `emergency.after` without a break move to
//!   EMERGENCY: all forwarding stops (unless `emergency_stops_critical` is off) and the bridge
//!   reports itself on the diagnostics topic. A lone spike never gets there.
//! - Going back down is slower than going up (hysteresis): EMERGENCY returns to DEGRADED after
//!   `recover.hold` below the degrade limits, DEGRADED to NORMAL after `recover.hold` at or
//!   below the lower `recover` limits. Readings between `recover` and `degrade` hold the mode.

use std::collections::VecDeque;
use std::time::Duration;

use serde::Serialize;

use crate::Nanos;
use crate::config::{Limits, SupervisorConfig};

/// The bridge's operating mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    /// Everything forwards.
    Normal,
    /// Noncritical forwarding is suspended.
    Degraded,
    /// Forwarding stops; diagnostics report the failure.
    Emergency,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Normal => "NORMAL",
            Mode::Degraded => "DEGRADED",
            Mode::Emergency => "EMERGENCY",
        })
    }
}

/// One tick's measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Vitals {
    /// The fullest forwarding queue, 0 (empty) to 1 (full).
    pub queue_fill: f64,
    /// The longest wait between a sample's arrival and its write (or now, if still waiting), ms.
    pub lag_ms: f64,
    /// Write and read errors since the previous tick.
    pub errors: u64,
}

/// A change of mode and what caused it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ModeChange {
    /// The mode left.
    pub from: Mode,
    /// The mode entered.
    pub to: Mode,
    /// Which measurement crossed which limit (or how long it has been calm).
    pub reason: String,
}

/// The supervisor's state.
#[derive(Debug, Clone)]
pub struct Supervisor {
    config: SupervisorConfig,
    mode: Mode,
    errors: VecDeque<(Nanos, u64)>,
    extreme_since: Option<Nanos>,
    calm_since: Option<Nanos>,
}

fn ns(d: Duration) -> Nanos {
    d.as_nanos().min(u128::from(u64::MAX)) as Nanos
}

/// The first measurement at or above `limits`, described.
fn exceeded(v: &Vitals, errors: u64, limits: &Limits, window: Duration) -> Option<String> {
    let lag_limit = limits.lag.as_secs_f64() * 1e3;
    if v.queue_fill >= limits.queue_fill {
        Some(format!("queue {:.0} % full ≥ {:.0} %", v.queue_fill * 100.0, limits.queue_fill * 100.0))
    } else if v.lag_ms >= lag_limit {
        Some(format!("callback lag {:.1} ms ≥ {lag_limit:.1} ms", v.lag_ms))
    } else if errors >= limits.errors {
        Some(format!("{errors} errors in {window:?} ≥ {}", limits.errors))
    } else {
        None
    }
}

impl Supervisor {
    /// A supervisor starting in NORMAL.
    pub fn new(config: SupervisorConfig) -> Self {
        Self { config, mode: Mode::Normal, errors: VecDeque::new(), extreme_since: None, calm_since: None }
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Errors counted in the sliding error window as of the last observation.
    pub fn errors_in_window(&self) -> u64 {
        self.errors.iter().map(|(_, n)| n).sum()
    }

    /// Takes one tick's measurements; returns the mode change they cause, if any.
    pub fn observe(&mut self, v: Vitals, now: Nanos) -> Option<ModeChange> {
        let c = &self.config;
        self.errors.push_back((now, v.errors));
        while self.errors.front().is_some_and(|&(at, _)| now.saturating_sub(at) >= ns(c.error_window)) {
            self.errors.pop_front();
        }
        let errors = self.errors_in_window();
        let extreme = exceeded(&v, errors, &c.emergency.limits(), c.error_window);
        let degrading = exceeded(&v, errors, &c.degrade, c.error_window);
        let calm = v.queue_fill <= c.recover.queue_fill
            && v.lag_ms <= c.recover.lag.as_secs_f64() * 1e3
            && errors <= c.recover.errors;

        self.extreme_since = extreme.as_ref().map(|_| self.extreme_since.unwrap_or(now));
        // "Calm" for the current mode: below the degrade limits in EMERGENCY, at the recover
        // limits in DEGRADED. Anything else restarts the hold.
        let settled = match self.mode {
            Mode::Emergency => degrading.is_none(),
            _ => calm,
        };
        self.calm_since = settled.then(|| self.calm_since.unwrap_or(now));
        let held = |since: Option<Nanos>, d: Duration| since.is_some_and(|s| now.saturating_sub(s) >= ns(d));

        let (to, reason) = match (self.mode, extreme, degrading) {
            (Mode::Emergency, _, _) if held(self.calm_since, c.recover.hold) => {
                (Mode::Degraded, format!("below the degrade limits for {:?}", c.recover.hold))
            }
            (Mode::Emergency, _, _) => return None,
            (_, Some(why), _) if held(self.extreme_since, c.emergency.after) => {
                (Mode::Emergency, format!("{why} for {:?}", c.emergency.after))
            }
            (Mode::Normal, _, Some(why)) => (Mode::Degraded, why),
            (Mode::Degraded, _, _) if held(self.calm_since, c.recover.hold) => {
                (Mode::Normal, format!("calm for {:?}", c.recover.hold))
            }
            _ => return None,
        };
        let change = ModeChange { from: self.mode, to, reason };
        self.mode = to;
        // Each mode earns its own way out.
        self.calm_since = None;
        Some(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const TICK: Nanos = 100 * MS;

    fn vitals(queue_fill: f64, lag_ms: f64, errors: u64) -> Vitals {
        Vitals { queue_fill, lag_ms, errors }
    }

    /// Feeds the same vitals every tick for `secs`; returns the changes with their times.
    fn feed(s: &mut Supervisor, now: &mut Nanos, secs: f64, v: Vitals) -> Vec<(Nanos, ModeChange)> {
        let end = *now + (secs * 1e9) as Nanos;
        let mut out = Vec::new();
        while *now < end {
            *now += TICK;
            if let Some(c) = s.observe(v, *now) {
                out.push((*now, c));
            }
        }
        out
    }

    fn calm() -> Vitals {
        vitals(0.0, 1.0, 0)
    }

    #[test]
    fn overload_degrades_at_once_and_recovers_after_the_hold() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        assert!(feed(&mut s, &mut now, 1.0, calm()).is_empty());
        let up = feed(&mut s, &mut now, 0.1, vitals(0.6, 1.0, 0));
        assert_eq!(up.len(), 1);
        assert_eq!((up[0].1.from, up[0].1.to), (Mode::Normal, Mode::Degraded));
        assert!(up[0].1.reason.contains("queue"), "{}", up[0].1.reason);
        let start = now;
        let down = feed(&mut s, &mut now, 10.0, calm());
        assert_eq!(down.len(), 1);
        assert_eq!(down[0].1.to, Mode::Normal);
        // The default hold is 5 s of calm; calm began at the first calm tick.
        assert_eq!(down[0].0 - start, 5_000 * MS + TICK);
    }

    #[test]
    fn the_band_between_recover_and_degrade_holds_degraded() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        feed(&mut s, &mut now, 0.5, vitals(0.0, 150.0, 0));
        assert_eq!(s.mode(), Mode::Degraded);
        // 50 ms lag: under the 100 ms degrade limit but over the 20 ms recover limit.
        assert!(feed(&mut s, &mut now, 60.0, vitals(0.0, 50.0, 0)).is_empty());
        assert_eq!(s.mode(), Mode::Degraded);
        // A calm spell shorter than the hold, broken by a band reading, restarts the hold.
        feed(&mut s, &mut now, 4.0, calm());
        feed(&mut s, &mut now, 0.1, vitals(0.3, 1.0, 0));
        assert!(feed(&mut s, &mut now, 4.0, calm()).is_empty());
        assert_eq!(s.mode(), Mode::Degraded);
        assert_eq!(feed(&mut s, &mut now, 2.0, calm()).len(), 1);
        assert_eq!(s.mode(), Mode::Normal);
    }

    #[test]
    fn a_spike_of_extreme_lag_does_not_reach_emergency() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        let changes = feed(&mut s, &mut now, 1.0, vitals(0.0, 5_000.0, 0));
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(s.mode(), Mode::Degraded);
    }

    #[test]
    fn sustained_extreme_failure_reaches_emergency_and_backs_off_in_steps() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        let changes = feed(&mut s, &mut now, 10.0, vitals(1.0, 5_000.0, 0));
        let modes: Vec<_> = changes.iter().map(|(_, c)| c.to).collect();
        assert_eq!(modes, [Mode::Degraded, Mode::Emergency]);
        // Default `emergency.after` is 3 s of extreme readings from the first one.
        assert_eq!(changes[1].0 - changes[0].0, 3_000 * MS);
        // Still failing: EMERGENCY holds.
        assert!(feed(&mut s, &mut now, 10.0, vitals(1.0, 5_000.0, 0)).is_empty());
        let back = feed(&mut s, &mut now, 20.0, calm());
        let modes: Vec<_> = back.iter().map(|(_, c)| c.to).collect();
        assert_eq!(modes, [Mode::Degraded, Mode::Normal]);
        assert!(back[1].0 - back[0].0 >= 5_000 * MS);
    }

    #[test]
    fn errors_count_over_a_sliding_window() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        // One error per tick is 10 per second: over the default 5 (degrade), under 100 (emergency).
        let changes = feed(&mut s, &mut now, 5.0, vitals(0.0, 1.0, 1));
        assert_eq!(changes.len(), 1);
        assert!(changes[0].1.reason.contains("errors"), "{}", changes[0].1.reason);
        assert_eq!(changes[0].0, 5 * TICK, "the fifth error inside one second degrades");
        assert_eq!(s.errors_in_window(), 10);
        // Errors stop: the window empties after a second, then the 5 s hold runs.
        let quiet_from = now;
        let back = feed(&mut s, &mut now, 10.0, calm());
        assert_eq!(back.len(), 1);
        let after = back[0].0 - quiet_from;
        assert!((6_000 * MS..=6_200 * MS).contains(&after), "{after}");
    }

    #[test]
    fn an_error_storm_escalates() {
        let mut s = Supervisor::new(SupervisorConfig::default());
        let mut now = 0;
        let changes = feed(&mut s, &mut now, 5.0, vitals(0.0, 1.0, 20));
        let modes: Vec<_> = changes.iter().map(|(_, c)| c.to).collect();
        assert_eq!(modes, [Mode::Degraded, Mode::Emergency]);
    }
}

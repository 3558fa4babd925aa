//! The policy engine: what each topic's two paths forward, from the supervisor's mode and the
//! classifier's view of the topic's noncritical subscribers.
//!
//! Both writers of a topic exist from start-up; the policy only changes what is handed to them,
//! never the DDS entities (the seed pre-creates publishers to avoid discovery churn).
//!
//! | mode      | critical path | noncritical path                                              |
//! |-----------|---------------|---------------------------------------------------------------|
//! | NORMAL    | native rate   | `noncritical_hz` (10 Hz); `degraded_hz` (3 Hz) while any of the topic's subscribers is degraded |
//! | DEGRADED  | native rate   | suspended                                                     |
//! | EMERGENCY | stopped (if `emergency_stops_critical`) | suspended                           |
//!
//! One BEST_EFFORT writer serves every noncritical reader of a topic, so it runs at the rate of
//! the worst-off one: a degraded subscriber lowers the noncritical path for all its readers,
//! which is the bandwidth the seed's classifier exists to save.

use serde::Serialize;

use crate::classifier::Health;
use crate::config::PolicyConfig;
use crate::supervisor::Mode;

/// What one topic forwards right now.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Decision {
    /// Whether samples go to the critical (RELIABLE) writer.
    pub critical: bool,
    /// The noncritical (BEST_EFFORT) writer's rate limit; `None` when suspended.
    pub noncritical_hz: Option<f64>,
}

/// Decides a topic's forwarding from the mode and the health of its noncritical subscribers.
pub fn decide(policy: &PolicyConfig, mode: Mode, subscribers: impl IntoIterator<Item = Health>) -> Decision {
    let degraded = subscribers.into_iter().any(|h| h == Health::Degraded);
    match mode {
        Mode::Normal => Decision {
            critical: true,
            noncritical_hz: Some(if degraded { policy.degraded_hz } else { policy.noncritical_hz }),
        },
        Mode::Degraded => Decision { critical: true, noncritical_hz: None },
        Mode::Emergency => Decision { critical: !policy.emergency_stops_critical, noncritical_hz: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_mode_forwards_ten_hz_or_three_when_a_subscriber_is_degraded() {
        let p = PolicyConfig::default();
        let d = decide(&p, Mode::Normal, [Health::Healthy, Health::Healthy]);
        assert_eq!(d, Decision { critical: true, noncritical_hz: Some(10.0) });
        let d = decide(&p, Mode::Normal, [Health::Healthy, Health::Degraded]);
        assert_eq!(d, Decision { critical: true, noncritical_hz: Some(3.0) });
        let d = decide(&p, Mode::Normal, []);
        assert_eq!(d.noncritical_hz, Some(10.0), "no known subscriber: the normal rate");
    }

    #[test]
    fn degraded_mode_suspends_only_the_noncritical_path() {
        let d = decide(&PolicyConfig::default(), Mode::Degraded, [Health::Healthy]);
        assert_eq!(d, Decision { critical: true, noncritical_hz: None });
    }

    #[test]
    fn emergency_stops_forwarding_unless_told_to_keep_critical() {
        let mut p = PolicyConfig::default();
        assert_eq!(decide(&p, Mode::Emergency, []), Decision { critical: false, noncritical_hz: None });
        p.emergency_stops_critical = false;
        assert_eq!(decide(&p, Mode::Emergency, []), Decision { critical: true, noncritical_hz: None });
    }
}

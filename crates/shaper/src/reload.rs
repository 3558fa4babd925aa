//! Live reload (`SIGHUP`, `systemctl reload`): a new profile put on a running
//! shaper without a gap in protection.
//!
//! Nothing is detached or re-created: the eBPF classifier keeps running and only
//! its maps are rewritten, and the HTB tree keeps its root and its queues while
//! its classes are changed in place (`tc class replace`, `tc qdisc replace` of a
//! leaf FIFO). Packets already queued stay queued; a packet classified during the
//! reload goes to a lane of the old profile or of the new one, never unshaped.
//! The order keeps it that way: classes for new lanes exist before any rule
//! points at them, and classes of removed lanes are deleted only after no rule
//! does.
//!
//! What cannot change in place needs the probe thread or the metrics server to
//! start again: a reload that changes it is refused and the running profile kept
//! (see [`restart_only_changes`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bauxite_core::{BitRate, RateSetting, ValidatedProfile};
use bauxite_ebpf::Maps;
use bauxite_sys::Netns;

use crate::ShaperError;
use crate::plan::{Placement, htb_tree, lane_minor, lane_policy, rule_set};

/// Loads the profile `up` runs, again: the CLI's `--config` file with `--profile`
/// and `--rate` applied as at start. Its error is the whole chain as text (a
/// config error names `file:line: key`).
pub type LoadProfile = dyn Fn() -> Result<ValidatedProfile, String> + Send + Sync;

/// How `up` learns that it should re-read its profile, and how it re-reads it.
#[derive(Clone)]
pub struct Reload {
    /// Set by the `SIGHUP` handler; cleared when the daemon takes the request.
    pub requested: Arc<AtomicBool>,
    /// Set by the same handler for the downlink's shaper, which takes its requests apart
    /// from the uplink's (`direction: both` runs both).
    pub requested_ingress: Arc<AtomicBool>,
    /// Reads and validates the profile.
    pub load: Arc<LoadProfile>,
}

impl std::fmt::Debug for Reload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reload").field("requested", &self.requested).finish_non_exhaustive()
    }
}

impl Reload {
    /// The downlink shaper's reload: its own requests, and the profile read again as
    /// [`ValidatedProfile::for_ingress`] makes it (refused once it shapes no downlink).
    pub fn for_ingress(&self) -> Reload {
        let load = Arc::clone(&self.load);
        Reload {
            requested: Arc::clone(&self.requested_ingress),
            requested_ingress: Arc::new(AtomicBool::new(false)),
            load: Arc::new(move || {
                load()?.for_ingress().ok_or_else(|| "the profile no longer shapes the downlink (`direction`)".into())
            }),
        }
    }

    /// Whether a reload was asked for since the last call (and forgets the request).
    pub fn take_request(&self) -> bool {
        self.requested.swap(false, Ordering::Relaxed)
    }
}

/// The keys whose change a reload cannot apply in place, each with why: `rate`
/// between `auto` and a fixed rate, and `auto_rate` or `headroom` under `rate:
/// auto` (the prober and its rate controller were started with them), `metrics`
/// (the server is bound once), `diagnostics` (so is the ROS 2 publisher) and `direction`
/// (the ingress device is made once). Empty when `new` can be applied.
pub fn restart_only_changes(running: &ValidatedProfile, new: &ValidatedProfile) -> Vec<&'static str> {
    let mut keys = Vec::new();
    let auto = |p: &ValidatedProfile| matches!(p.rate, RateSetting::Auto);
    if auto(running) != auto(new) {
        keys.push("rate (between auto and a fixed rate: the link prober starts or stops)");
    } else if auto(new) {
        if running.auto_rate != new.auto_rate {
            keys.push("auto_rate (the running prober and rate controller use it)");
        }
        if running.headroom != new.headroom {
            keys.push("headroom with rate: auto (the running rate controller uses it)");
        }
    }
    if running.metrics != new.metrics {
        keys.push("metrics (the metrics server is bound once)");
    }
    if running.diagnostics != new.diagnostics {
        keys.push("diagnostics (the ROS 2 publisher is started once)");
    }
    if running.direction != new.direction {
        keys.push("direction (the ingress device and its redirect are made once)");
    }
    keys
}

/// Puts `new` on `iface` in place of `running`, shaping at `rate`: classes first,
/// then lane policies, then rules, then the classes of lanes `new` no longer has.
/// On an error, what was changed is left as it is for the caller to put back.
pub(crate) fn apply_in_place(
    ns: &Netns,
    iface: &str,
    maps: &mut Maps,
    (running, new): (&ValidatedProfile, &ValidatedProfile),
    rate: BitRate,
    placement: Placement,
) -> Result<(), ShaperError> {
    ns.tc_batch(&htb_tree(new, iface, rate, false, placement).reload_lines())?;
    for i in 0..new.lanes.len() {
        maps.set_lane(i, &lane_policy(new, i))?;
    }
    maps.set_rules(&rule_set(new))?;
    let removed: Vec<u16> = (new.lanes.len()..running.lanes.len()).map(lane_minor).collect();
    if !removed.is_empty() {
        ns.tc_batch(&crate::tc::delete_class_lines(iface, &removed))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bauxite_core::Profile;

    fn robot(edit: impl FnOnce(&mut Profile)) -> ValidatedProfile {
        let mut p = Profile::robot();
        edit(&mut p);
        p.validate().expect("valid")
    }

    #[test]
    fn lanes_rules_rates_and_thresholds_change_in_place() {
        let running = robot(|p| p.rate = RateSetting::Fixed(BitRate::from_bps(1_500_000)));
        let new = robot(|p| {
            p.lanes[0].share = 0.5;
            p.lanes[2].share = 0.2;
            p.lanes[2].queue_limit = 20;
            p.rate = RateSetting::Fixed(BitRate::from_bps(3_000_000));
            p.headroom = 0.8;
            p.rules.pop();
        });
        assert!(restart_only_changes(&running, &new).is_empty());
    }

    #[test]
    fn the_prober_and_the_metrics_server_need_a_restart() {
        let fixed = robot(|p| p.rate = RateSetting::Fixed(BitRate::from_bps(1_500_000)));
        let auto_rate = |p: &mut Profile| {
            p.rate = RateSetting::Auto;
            p.auto_rate.reflector = vec!["10.0.0.2:7399".into()];
        };
        let auto = robot(auto_rate);
        assert_eq!(restart_only_changes(&fixed, &auto).len(), 1);
        assert!(restart_only_changes(&fixed, &auto)[0].starts_with("rate"));
        let headroom = robot(|p| {
            auto_rate(p);
            p.headroom = 0.7;
        });
        assert!(restart_only_changes(&auto, &headroom)[0].starts_with("headroom"));
        let metrics = robot(|p| p.metrics = Some("127.0.0.1:9100".parse().unwrap()));
        assert!(restart_only_changes(&fixed, &metrics).iter().any(|k| k.starts_with("metrics")));
        let both = robot(|p| {
            p.direction = bauxite_core::Direction::Both;
            p.ingress = Some(bauxite_core::IngressPolicy::at(RateSetting::Fixed(BitRate::from_bps(20_000_000))));
        });
        assert!(restart_only_changes(&fixed, &both).iter().any(|k| k.starts_with("direction")));
        let faster = robot(|p| {
            p.direction = bauxite_core::Direction::Both;
            p.ingress = Some(bauxite_core::IngressPolicy::at(RateSetting::Fixed(BitRate::from_bps(30_000_000))));
        });
        assert!(restart_only_changes(&both, &faster).is_empty(), "a new downlink rate is applied in place");
    }
}

//! The seed's published figures, kept as data: summary tables print them next to
//! Bauxite's, and the baseline regression test compares against them.

use crate::scenario::ScenarioConfig;
use crate::scheduler::Scheduler;

/// One row of the seed's baseline comparison (4 followers, 12 Mbit/s background
/// per direction, 40-packet queues, 10 Mbit/s bottleneck): control-class figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedControlRow {
    /// Scheduler.
    pub scheduler: Scheduler,
    /// DSCP marking on.
    pub dscp: bool,
    /// Mean control delay, ms.
    pub delay_ms: f64,
    /// Control loss, percent.
    pub loss_pct: f64,
    /// Mean control jitter, ms.
    pub jitter_ms: f64,
    /// Control throughput, Mbit/s.
    pub throughput_mbps: f64,
}

const fn row(
    scheduler: Scheduler,
    dscp: bool,
    delay_ms: f64,
    loss_pct: f64,
    jitter_ms: f64,
    thr: f64,
) -> SeedControlRow {
    SeedControlRow { scheduler, dscp, delay_ms, loss_pct, jitter_ms, throughput_mbps: thr }
}

/// The seed's table "Scheduler | DSCP | Delay | Loss | Jitter | Throughput".
pub const SEED_BASELINE: [SeedControlRow; 10] = [
    row(Scheduler::Fifo, false, 40.8, 61.4, 1.0, 0.227),
    row(Scheduler::Fifo, true, 40.8, 61.4, 1.0, 0.227),
    row(Scheduler::PfifoFast, false, 40.8, 61.4, 1.0, 0.227),
    row(Scheduler::PfifoFast, true, 8.9, 0.0, 0.2, 0.589),
    row(Scheduler::Prio, false, 40.8, 61.4, 1.0, 0.227),
    row(Scheduler::Prio, true, 8.9, 0.0, 0.2, 0.589),
    row(Scheduler::FqPie, false, 8.9, 0.0, 0.2, 0.589),
    row(Scheduler::FqPie, true, 8.9, 0.0, 0.2, 0.589),
    row(Scheduler::FqCodel, false, 8.9, 0.0, 0.2, 0.589),
    row(Scheduler::FqCodel, true, 8.9, 0.0, 0.2, 0.589),
];

/// The seed's FIFO control loss in the follower sweep (4, 8, 16 followers), percent.
pub const SEED_FIFO_FOLLOWER_LOSS: [(u32, f64); 3] = [(4, 61.4), (8, 78.6), (16, 85.9)];

/// Whether `config` is the seed's baseline scenario — every parameter at its
/// default ([`ScenarioConfig::default`]) except the scheduler, the DSCP marking and
/// the seed — so that the seed's figures may be printed beside its results. A
/// changed bottleneck, device queue, start jitter, class rate or anything else is
/// another experiment.
pub fn is_seed_baseline(config: &ScenarioConfig) -> bool {
    let seed_point = ScenarioConfig {
        scheduler: config.scheduler,
        dscp: config.dscp,
        seed: config.seed,
        ..ScenarioConfig::default()
    };
    *config == seed_point
}

/// The seed's baseline row for a scheduler and DSCP mode, if it has one.
pub fn seed_baseline(scheduler: Scheduler, dscp: bool) -> Option<&'static SeedControlRow> {
    SEED_BASELINE.iter().find(|r| r.scheduler == scheduler && r.dscp == dscp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_default_scenario_is_the_seed_baseline() {
        let d = ScenarioConfig::default;
        let compared = ScenarioConfig { scheduler: Scheduler::FqPie, dscp: false, seed: 9, ..d() };
        assert!(is_seed_baseline(&d()) && is_seed_baseline(&compared));
        let others = [
            ScenarioConfig { followers: 8, ..d() },
            ScenarioConfig { bottleneck_mbps: 20.0, ..d() },
            ScenarioConfig { bottleneck_delay_ms: 10.0, ..d() },
            ScenarioConfig { device_queue_packets: 100, ..d() },
            ScenarioConfig { start_jitter_ms: 100.0, ..d() },
            ScenarioConfig { limit_mode: bauxite_qdisc::LimitScope::Shared, ..d() },
        ];
        for config in others {
            assert!(!is_seed_baseline(&config), "{config:?}");
        }
    }
}

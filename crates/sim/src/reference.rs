//! The seed's published figures, kept as data: summary tables print them next to
//! Bauxite's, and the baseline regression test compares against them.

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

/// The seed's baseline row for a scheduler and DSCP mode, if it has one.
pub fn seed_baseline(scheduler: Scheduler, dscp: bool) -> Option<&'static SeedControlRow> {
    SEED_BASELINE.iter().find(|r| r.scheduler == scheduler && r.dscp == dscp)
}

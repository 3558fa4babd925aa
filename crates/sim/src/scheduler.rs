//! The schedulers a scenario can put on the bottleneck, built from
//! `bauxite-qdisc`'s disciplines.

use std::fmt;
use std::str::FromStr;

use bauxite_qdisc::{
    Codel, CodelConfig, Drr, DrrConfig, Fifo, FqCodel, FqCodelConfig, FqPie, FqPieConfig, LimitScope, Pie,
    PieQdiscConfig, Prio, PrioConfig, Qdisc,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SimError;

/// A queue discipline under test, by its command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scheduler {
    /// Drop-tail FIFO: the no-priority baseline.
    Fifo,
    /// The seed's three-band pfifo_fast-style PRIO (control, status, the rest).
    PfifoFast,
    /// The seed's four-band strict PRIO (control, status, telemetry, the rest).
    Prio,
    /// FQ-PIE: per-flow queues, PIE on each.
    FqPie,
    /// FQ-CoDel: per-flow queues, CoDel on each.
    FqCodel,
    /// Deficit round robin over the DSCP classes (the seed's "weighted scheduler" future work).
    Drr,
    /// CoDel on a single queue.
    Codel,
    /// PIE on a single queue.
    Pie,
}

impl Scheduler {
    /// Every scheduler, in the order tables list them.
    pub const ALL: [Scheduler; 8] = [
        Scheduler::Fifo,
        Scheduler::PfifoFast,
        Scheduler::Prio,
        Scheduler::FqPie,
        Scheduler::FqCodel,
        Scheduler::Drr,
        Scheduler::Codel,
        Scheduler::Pie,
    ];

    /// The five the seed compares.
    pub const SEED: [Scheduler; 5] =
        [Scheduler::Fifo, Scheduler::PfifoFast, Scheduler::Prio, Scheduler::FqPie, Scheduler::FqCodel];

    /// The command-line and CSV name.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Fifo => "fifo",
            Scheduler::PfifoFast => "pfifo-fast",
            Scheduler::Prio => "prio",
            Scheduler::FqPie => "fq-pie",
            Scheduler::FqCodel => "fq-codel",
            Scheduler::Drr => "drr",
            Scheduler::Codel => "codel",
            Scheduler::Pie => "pie",
        }
    }

    /// The name the seed's tables use.
    pub fn label(self) -> &'static str {
        match self {
            Scheduler::Fifo => "FIFO",
            Scheduler::PfifoFast => "PFIFO_FAST-style",
            Scheduler::Prio => "Strict Priority",
            Scheduler::FqPie => "FQ-PIE",
            Scheduler::FqCodel => "FQ-CoDel",
            Scheduler::Drr => "DRR",
            Scheduler::Codel => "CoDel",
            Scheduler::Pie => "PIE",
        }
    }

    /// Whether the discipline classifies on DSCP (so marking changes what it does).
    pub fn uses_dscp(self) -> bool {
        matches!(self, Scheduler::PfifoFast | Scheduler::Prio | Scheduler::Drr)
    }
}

impl fmt::Display for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheduler {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|sch| sch.name() == wanted).ok_or_else(|| {
            let names: Vec<_> = Self::ALL.iter().map(|s| s.name()).collect();
            SimError::invalid("scheduler", format!("unknown scheduler `{s}` (one of {})", names.join(", ")))
        })
    }
}

impl Serialize for Scheduler {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Scheduler {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
    }
}

/// The MTU of ns-3's point-to-point device, which ns-3's FQ-CoDel and FQ-PIE take
/// as their DRR quantum and CoDel as its one-packet floor. The simulator gives the
/// disciplines IP datagram sizes, as ns-3's queue-disc items report them.
const NS3_P2P_MTU: u32 = 1500;

/// The knobs of the bottleneck discipline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QdiscParams {
    /// Packet limit.
    pub limit: u32,
    /// Per band or shared (multi-queue disciplines only).
    pub limit_mode: LimitScope,
    /// Seed for the discipline's own randomness (hash perturbation, PIE's drop draws).
    pub seed: u64,
}

/// Builds one instance of `scheduler` (one per direction of the bottleneck).
pub fn build_qdisc(scheduler: Scheduler, params: QdiscParams) -> Box<dyn Qdisc> {
    let limit = params.limit as usize;
    let scope = params.limit_mode;
    let prio = |mut config: PrioConfig| {
        config.scope = scope;
        Box::new(Prio::new(config)) as Box<dyn Qdisc>
    };
    match scheduler {
        Scheduler::Fifo => Box::new(Fifo::new(limit)),
        Scheduler::PfifoFast => prio(PrioConfig::pfifo_fast_style(limit)),
        Scheduler::Prio => prio(PrioConfig::seed_prio(limit)),
        Scheduler::Drr => {
            let mut config = DrrConfig::seed_classes(limit);
            config.scope = scope;
            Box::new(Drr::new(config))
        }
        Scheduler::FqCodel => Box::new(FqCodel::new(FqCodelConfig {
            limit,
            quantum: NS3_P2P_MTU,
            mtu: NS3_P2P_MTU,
            seed: params.seed,
            ..FqCodelConfig::default()
        })),
        Scheduler::FqPie => Box::new(FqPie::new(FqPieConfig {
            limit,
            quantum: NS3_P2P_MTU,
            seed: params.seed,
            ..FqPieConfig::default()
        })),
        Scheduler::Codel => Box::new(Codel::new(CodelConfig { limit, mtu: NS3_P2P_MTU, ..CodelConfig::default() })),
        Scheduler::Pie => Box::new(Pie::new(PieQdiscConfig { limit, seed: params.seed, ..PieQdiscConfig::default() })),
    }
}

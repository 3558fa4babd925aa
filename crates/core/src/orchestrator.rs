//! The lanes of seed 003 (the orchestrator and its followers) and the DSCP values
//! that mark them, defined once: the `orchestrator` profile, the class-based queue
//! disciplines (PRIO, DRR) and the simulator's scenario all read them from here.

use serde::{Deserialize, Serialize};

/// DSCP code points (the six-bit value, 0..=63, not the TOS byte), RFC 2474 /
/// RFC 2597 / RFC 4594, as seed 003 uses them.
pub mod dscp {
    /// Default forwarding (best effort), also what unmarked traffic carries.
    pub const DEFAULT: u8 = 0;
    /// Class selector 1, "lower effort": the seed's bulk lane.
    pub const CS1: u8 = 8;
    /// Assured forwarding class 4, low drop precedence: the seed's telemetry lane.
    pub const AF41: u8 = 34;
    /// Assured forwarding class 4, medium drop precedence: the seed's control lane.
    pub const AF42: u8 = 36;
    /// Assured forwarding class 4, high drop precedence: the seed's status lane.
    pub const AF43: u8 = 38;
}

/// A lane of seed 003, in strict priority order (control first). Serialized as its
/// lowercase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrchestratorLane {
    /// Orchestrator → followers, latency-critical (AF42).
    Control,
    /// Followers → orchestrator, medium priority (AF43).
    Status,
    /// Followers → orchestrator, lower priority (AF41).
    Telemetry,
    /// Followers → orchestrator, filler (CS1).
    Bulk,
    /// Everything else, unmarked: the competing load.
    Background,
}

impl OrchestratorLane {
    /// Every lane, in priority (and table) order.
    pub const ALL: [OrchestratorLane; 5] = [
        OrchestratorLane::Control,
        OrchestratorLane::Status,
        OrchestratorLane::Telemetry,
        OrchestratorLane::Bulk,
        OrchestratorLane::Background,
    ];

    /// The lane's name, as in profiles and CSV files.
    pub const fn name(self) -> &'static str {
        match self {
            OrchestratorLane::Control => "control",
            OrchestratorLane::Status => "status",
            OrchestratorLane::Telemetry => "telemetry",
            OrchestratorLane::Bulk => "bulk",
            OrchestratorLane::Background => "background",
        }
    }

    /// The DSCP its traffic is marked with ([`dscp::DEFAULT`] for background).
    pub const fn dscp(self) -> u8 {
        match self {
            OrchestratorLane::Control => dscp::AF42,
            OrchestratorLane::Status => dscp::AF43,
            OrchestratorLane::Telemetry => dscp::AF41,
            OrchestratorLane::Bulk => dscp::CS1,
            OrchestratorLane::Background => dscp::DEFAULT,
        }
    }

    /// Its position in [`OrchestratorLane::ALL`] (0 = highest priority).
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_are_in_priority_order_with_the_seeds_marks() {
        let table: Vec<_> = OrchestratorLane::ALL.iter().map(|l| (l.index(), l.name(), l.dscp())).collect();
        assert_eq!(
            table,
            [(0, "control", 36), (1, "status", 38), (2, "telemetry", 34), (3, "bulk", 8), (4, "background", 0)]
        );
        assert!(OrchestratorLane::Control < OrchestratorLane::Background);
        assert_eq!(serde_json::to_string(&OrchestratorLane::Telemetry).unwrap(), "\"telemetry\"");
    }
}

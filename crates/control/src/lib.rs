//! The shaper's two control laws, sans-IO: the congested state with PIE early drop
//! ([`congestion::Controller`]) and `rate: auto`'s link-rate estimate from probe
//! round-trip times ([`RateController`]).
//!
//! They read no clock and do no I/O: the caller passes the time and the
//! measurements in. The kernel shaper (`bauxite-shaper`) drives them from netlink
//! and UDP probes; the simulator (`bauxite sim robot`) from its simulated lanes and
//! link. One crate, so the simulator runs the shaper's own law without depending on
//! the shaper's eBPF and netlink.
#![deny(missing_docs)]

pub mod congestion;
pub mod one_way;
pub mod rate;
pub mod silence;

pub use congestion::{Controller, LaneSample, LaneVerdict, Transition};
pub use one_way::{OneWayDelays, WayQueues};
pub use rate::{CountedAt, FIRST_ANSWER, RateController, RatePhase, SILENCE};
pub use silence::SilenceHold;

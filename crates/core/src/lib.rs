//! The vocabulary every Bauxite part shares: lanes, rules, profiles, their YAML
//! form and validation, the units (bit rates, durations) they are written in, the
//! summary statistics ([`stats`]) every part reports with, the link model
//! ([`link`]) the emulator and the simulator share, and the one random generator
//! ([`rng`]), and seed 000's robot workload ([`workload`]).
//!
//! No I/O beyond reading a config file and checking an output directory, no async
//! runtime: the simulator, the shaper and the bridge all build on this.
#![deny(missing_docs)]

pub mod config;
pub mod diagnostics;
pub mod figures;
pub mod lane;
pub mod link;
pub mod metrics_addr;
pub mod orchestrator;
pub mod out_dir;
pub mod profile;
pub mod reflector;
pub mod rng;
pub mod schema_bounds;
pub mod shaper_snapshot;
pub mod stats;
pub mod units;
pub mod validate;
pub mod wire;
pub mod workload;

pub use config::{
    ConfigError, MAX_CONFIG_BYTES, Shown, load_profile, locate, parse_profile, parse_yaml, read_config, within,
};
pub use lane::{Dscp, Lane, MAX_LANES, MAX_RULES, Match, PacketKey, PortRange, PortSide, Protocol, Rule};
pub use metrics_addr::MetricsAddr;
pub use orchestrator::OrchestratorLane;
pub use out_dir::{OutDirError, ensure_writable_dir};
pub use profile::{
    AutoRatePolicy, BUILTIN_PROFILES, CongestionPolicy, DEFAULT_REFLECTOR_PORT, Direction, EarlyDropPolicy,
    HTB_DEFAULT_BURST_BYTES, IngressPolicy, LaneClass, PACED_BURST, Profile, ProfileError, RateSetting, Targets,
    paced_burst_bytes,
};
pub use reflector::{ICMP_PROBE_DSCP, MAX_REFLECTORS, Reflector};
pub use shaper_snapshot::{DaemonState, LaneSnapshot, ShaperSnapshot};
pub use units::{BitRate, UnitError, format_duration, parse_duration};
pub use validate::ValidatedProfile;
pub use wire::WireError;

//! Network testbeds in namespaces: veth links between uniquely named namespaces,
//! bottlenecks built from the qdiscs every kernel has (TBF), traffic generators and
//! latency probes. The shaper's tests, the demo and the bridge's evaluation all build
//! on it.
#![deny(missing_docs)]

pub mod bottleneck;
pub mod namespace;
pub mod privilege;
pub mod probe;
pub mod testbed;
pub mod traffic;
pub mod video;
pub mod workload;

/// The clock of every probe timestamp: `CLOCK_MONOTONIC`, shared by all namespaces of a host.
pub use bauxite_ebpf::monotonic_ns;
pub use bottleneck::Bottleneck;
pub use namespace::{Namespace, connect, unique_name};
pub use privilege::{is_root, root_or_skip};
pub use testbed::{ChainOptions, ChainTestbed};

//! Network testbeds in namespaces: veth links between uniquely named namespaces,
//! bottlenecks and impairments built from the qdiscs every kernel has (HTB, TBF),
//! traffic generators and latency probes. The shaper's tests, the demo and the
//! bridge's evaluation all build on it.
#![deny(missing_docs)]

pub mod privilege;

pub use privilege::{is_root, root_or_skip};

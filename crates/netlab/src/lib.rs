//! Network testbeds in namespaces: veth links between uniquely named namespaces,
//! bottlenecks built from the qdiscs every kernel has (TBF), traffic generators and
//! latency probes. The shaper's tests, the demo and the bridge's evaluation all build
//! on it.
//!
//! It depends on `bauxite-core` and `bauxite-sys` only: namespaces, commands and the
//! clock come from `bauxite-sys`, so building a testbed needs neither the shaper nor
//! the eBPF toolchain.
#![deny(missing_docs)]

pub mod bottleneck;
pub mod emulator;
mod error;
mod packet_socket;
pub mod shell;
pub mod testbed;
pub mod traffic;
pub mod tun;
pub mod veth;
pub mod video;
pub mod workload;

pub use bottleneck::Bottleneck;
pub use error::NetlabError;
pub use packet_socket::become_a_link;
pub use testbed::{ChainOptions, ChainTestbed};
pub use tun::TunTestbed;
pub use veth::{connect, veth};

//! The few OS helpers every Bauxite I/O crate shares, so that each exists once:
//! running commands and threads in a network namespace ([`Netns`]), root checks
//! ([`is_root`], [`root_or_skip`]), the monotonic clock the kernel programs stamp
//! with ([`monotonic_ns`]), the process CPU clock benchmarks report
//! ([`process_cpu_ns`]), the kernel's receive time of a datagram ([`rx_time`]), a
//! child process that is stopped when its owner goes away ([`ChildGuard`]), and the UDP
//! sockets a process holds with the datagrams the kernel dropped at each ([`udp_sockets`]),
//! a request that idle CPUs wake fast ([`CpuLatencyRequest`]), and a process's
//! `/proc/PID/stat` ([`ProcStat`]).
//!
//! It depends on nothing of Bauxite's, so the testbed (`netlab`) builds without the
//! shaper or the eBPF toolchain.
#![deny(missing_docs)]

mod clock;
mod cpu_latency;
mod netns;
mod privilege;
mod proc_stat;
mod process;
pub mod rx_time;
mod udp;

pub use clock::{monotonic_ns, process_cpu_ns, realtime_ns};
pub use cpu_latency::CpuLatencyRequest;
pub use netns::{Netns, unique_name};
pub use privilege::{is_root, root_or_skip};
pub use proc_stat::ProcStat;
pub use process::ChildGuard;
pub use udp::{UdpSocketStats, own_udp_receive_buffers, udp_sockets};

/// Why an OS operation failed; each variant names the command or file involved and
/// keeps the OS error as its [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// A program could not be started at all.
    #[error("cannot start `{command}` (is {program} installed?)")]
    Start {
        /// The command line.
        command: String,
        /// The program that was not found or not executable.
        program: String,
        /// Why it could not start.
        #[source]
        source: std::io::Error,
    },
    /// A program started, but feeding it its input or collecting its output failed.
    #[error("talking to `{command}`")]
    Pipe {
        /// The command line.
        command: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A program ran and reported failure.
    #[error("`{command}` failed: {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// A program's output lacked what was looked for in it.
    #[error("`{command}` printed no {missing}")]
    UnexpectedOutput {
        /// The command line.
        command: String,
        /// What was looked for.
        missing: String,
    },
    /// A file of the OS (`/proc/sys/…`, `/var/run/netns/…`) could not be used.
    #[error("{what}")]
    Io {
        /// What was being done, naming the file or namespace.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

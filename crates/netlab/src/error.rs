//! The testbed's one error type.

/// Why a testbed could not be built or driven, or a workload could not run. Each
/// variant keeps the lower error as its [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum NetlabError {
    /// A command (`ip`, `tc`) or a namespace operation failed.
    #[error(transparent)]
    Sys(#[from] bauxite_sys::SysError),
    /// An operation that needs a named namespace got this process's own.
    #[error("{0}")]
    Unnamed(&'static str),
    /// A network namespace named by the user does not exist.
    #[error("no network namespace {0} (`ip netns list` shows those that exist)")]
    NoNamespace(String),
    /// A socket could not be opened, connected or read.
    #[error("{what}")]
    Socket {
        /// What was being done, naming the address or port.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A rate change for a direction the testbed does not limit.
    #[error("the testbed's downlink has no bottleneck to change (ChainOptions::downlink_rate)")]
    NoDownlinkBottleneck,
    /// The link emulator could not start or ended abnormally.
    #[error("link emulator: {0}")]
    Emulator(String),
    /// The kernel has no such TCP congestion control and could not load it.
    #[error("congestion control {name} unavailable: modprobe tcp_{name}")]
    CongestionControlUnavailable {
        /// The congestion control asked for (`cubic`, `bbr`, …).
        name: String,
        /// The kernel's answer.
        #[source]
        source: std::io::Error,
    },
    /// The kernel refused the TCP congestion control for another reason (for
    /// example, a user other than root may only pick those in
    /// `net.ipv4.tcp_allowed_congestion_control`).
    #[error("setting congestion control {name} (allowed ones: sysctl net.ipv4.tcp_allowed_congestion_control)")]
    CongestionControl {
        /// The congestion control asked for.
        name: String,
        /// The kernel's answer.
        #[source]
        source: std::io::Error,
    },
}

impl NetlabError {
    /// Wraps a socket error with what was being done, for `map_err`.
    pub(crate) fn socket(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Socket { what, source }
    }
}

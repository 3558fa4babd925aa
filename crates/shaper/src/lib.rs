//! The kernel shaper: puts a [`Profile`](bauxite_core::Profile) on a network
//! interface and keeps critical lanes fast when the link saturates.
//!
//! On the interface's egress it installs an HTB tree with one class per lane
//! (critical first, with a guaranteed share; bulk last) and the eBPF classifier
//! that steers every packet into its lane's class. A control loop reads the lanes'
//! backlog and departure rate over netlink, decides when the link is congested (with
//! hysteresis), and sets the early-drop probability of droppable lanes with the PIE
//! control law, which the classifier applies before the packet is queued.
//!
//! Fail-open: the kernel programs obey the daemon only while it renews a lease; the
//! HTB's default class is unshaped, so packets the classifier no longer steers flow
//! at the interface's speed. tcx links disappear with the daemon's process; a clsact
//! filter (kernels before 6.6, or `--attach clsact`) stays, steps aside once the lease
//! expires, and `down` or the next `up` removes it. Before attaching anything, `up`
//! probes the kernel ([`features`]) and names what it lacks.
#![deny(missing_docs)]

pub mod autorate;
pub mod controller;
pub mod daemon;
pub mod diagnostics;
pub mod features;
pub mod ingress;
pub mod metrics;
pub mod plan;
pub mod reflect;
pub mod reload;
pub mod rtnl;
pub mod state;
pub mod tc;

pub use bauxite_ebpf::AttachRequest;
pub use daemon::{DownReport, StatusReader, UpOptions, down, run_up, status};
pub use reload::Reload;

/// Why the shaper could not do what it was asked. Each names what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ShaperError {
    /// Not running as root.
    #[error("{0}: run it as root (it needs CAP_BPF and CAP_NET_ADMIN)")]
    NotRoot(String),
    /// The interface does not exist (in this network namespace).
    #[error("no network interface called `{0}` in this network namespace")]
    NoSuchInterface(String),
    /// Another daemon runs on the interface (or did not stop when asked).
    #[error("bauxite already runs on {iface} (pid {pid}); `bauxite down --iface {iface}` stops it")]
    AlreadyRunning {
        /// The interface.
        iface: String,
        /// The daemon's pid.
        pid: u32,
    },
    /// The interface has a root qdisc someone configured, which `up` would replace.
    #[error(
        "{iface} has a root qdisc `{kind} {handle}` that Bauxite would replace; remove it first (tc qdisc del dev {iface} root)"
    )]
    ForeignQdisc {
        /// The interface.
        iface: String,
        /// The qdisc's kind.
        kind: String,
        /// Its handle.
        handle: String,
    },
    /// The interface has an `htb ba:` root that Bauxite did not install.
    #[error(
        "{iface} has an `htb ba:` root qdisc that Bauxite did not install (it lacks Bauxite's marker class ba:baba); \
         Bauxite leaves it alone: remove it yourself if it should go (tc qdisc del dev {iface} root)"
    )]
    ForeignBauxiteHandle {
        /// The interface.
        iface: String,
    },
    /// An interface of the name Bauxite gives its ingress device exists and is not Bauxite's.
    #[error(
        "{device} exists and is not Bauxite's ingress device for {iface} (not an IFB with the alias \
         `bauxite ingress of {iface}`); Bauxite leaves it alone: remove or rename it to shape {iface}'s ingress"
    )]
    ForeignIngressDevice {
        /// The interface whose ingress was to be shaped.
        iface: String,
        /// The device's name.
        device: String,
    },
    /// The interface's ingress has a filter at the redirect's preference that is not Bauxite's.
    #[error(
        "{iface} has an ingress filter at preference {pref} that is not Bauxite's redirect; Bauxite leaves it \
         alone: remove it (tc filter del dev {iface} ingress pref {pref}) to shape {iface}'s ingress"
    )]
    ForeignIngressFilter {
        /// The interface.
        iface: String,
        /// The preference.
        pref: u16,
    },
    /// The interface was deleted or replaced under a running daemon.
    #[error(
        "{iface} (index {ifindex}) was deleted or replaced while bauxite up ran on it; \
         the shaper went with it: start bauxite up again on the new interface"
    )]
    InterfaceGone {
        /// The interface's name.
        iface: String,
        /// The index of the interface that went away.
        ifindex: u32,
    },
    /// The profile is invalid.
    #[error("invalid profile: {0}")]
    Profile(bauxite_core::ProfileError),
    /// The kernel lacks something `up` needs and that has no fallback.
    #[error("kernel {release} lacks what bauxite up needs: {lacks}")]
    KernelLacks {
        /// The kernel's release.
        release: String,
        /// Every gap, named, with its minimum kernel.
        lacks: String,
    },
    /// Loading or driving the eBPF programs failed.
    #[error(transparent)]
    Datapath(#[from] bauxite_ebpf::DatapathError),
    /// A `tc`/`ip` command failed.
    #[error(transparent)]
    Command(#[from] bauxite_sys::SysError),
    /// An I/O error, with what was being done.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The probe key file (`auto_rate.key_file`, `reflect --key-file`) cannot be used.
    #[error("probe key {}: {reason}", path.display())]
    ProbeKey {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        reason: String,
        /// The I/O error, if one.
        #[source]
        source: Option<std::io::Error>,
    },
}

impl ShaperError {
    /// Wraps an I/O error with what was being done, for `map_err`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn io_errors_keep_their_cause() {
        let e = ShaperError::io("reading the state file")(std::io::Error::other("permission denied"));
        assert_eq!(e.to_string(), "reading the state file");
        assert_eq!(e.source().map(ToString::to_string).as_deref(), Some("permission denied"));
    }
}

//! Choosing how the egress classifier is attached: `bauxite up --attach auto|tcx|clsact`.
//!
//! The choice matters for fail-open. A tcx link (Linux 6.6+) belongs to the process
//! that made it and the kernel removes it when that process dies; a clsact filter
//! (every kernel since 4.5, and the only way before 6.6) outlives it, and only the
//! lease in the control map makes it step aside. `auto` takes tcx where the kernel
//! has it; the other two force a mode, so that the clsact path of older kernels
//! (Jetson's 5.10 and 5.15, Raspberry Pi OS's 6.1) can be run and tested on a new one.

use std::fmt;
use std::str::FromStr;

use crate::DatapathError;

/// The first kernel with tcx links: (major, minor).
pub const TCX_SINCE: (u32, u32) = (6, 6);

/// How the egress classifier is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcAttachMode {
    /// A tcx link (Linux 6.6+): detached by the kernel when its owner dies.
    Tcx,
    /// A clsact filter (older kernels): outlives its owner, so the programs' lease
    /// makes it step aside, and `bauxite down` (or the next `up`) removes it.
    Clsact,
}

impl TcAttachMode {
    /// The word `status` prints and `--attach` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcx => "tcx",
            Self::Clsact => "clsact",
        }
    }
}

/// What `--attach` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttachRequest {
    /// tcx where the kernel has it, else clsact.
    #[default]
    Auto,
    /// tcx, or a refusal on a kernel without it.
    Tcx,
    /// A clsact filter, on any kernel.
    Clsact,
}

impl FromStr for AttachRequest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "tcx" => Ok(Self::Tcx),
            "clsact" => Ok(Self::Clsact),
            other => Err(format!("`{other}` is not an attach mode: use auto, tcx or clsact")),
        }
    }
}

impl fmt::Display for AttachRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Tcx => "tcx",
            Self::Clsact => "clsact",
        })
    }
}

/// The mode in force and why (what the start-up log and `status` say).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachChoice {
    /// The mode.
    pub mode: TcAttachMode,
    /// Why, in a sentence naming the kernel and the request.
    pub reason: String,
}

impl AttachRequest {
    /// The mode this request takes on a kernel (`release` as `uname -r` says it) that has
    /// tcx or not; a refusal for `tcx` on a kernel without it, which has no fallback
    /// that keeps what was asked (the daemon dying would leave a filter behind).
    pub fn resolve(self, release: &str, has_tcx: bool) -> Result<AttachChoice, DatapathError> {
        let (major, minor) = TCX_SINCE;
        let (mode, reason) = match (self, has_tcx) {
            (Self::Auto, true) => {
                (TcAttachMode::Tcx, format!("auto: kernel {release} has tcx links ({major}.{minor}+)"))
            }
            (Self::Auto, false) => (
                TcAttachMode::Clsact,
                format!(
                    "auto: kernel {release} lacks tcx links ({major}.{minor}+), so a clsact filter, which the \
                     lease makes step aside if the daemon dies"
                ),
            ),
            (Self::Tcx, true) => (TcAttachMode::Tcx, format!("--attach tcx (kernel {release})")),
            (Self::Tcx, false) => return Err(DatapathError::NoTcx { release: release.to_string() }),
            (Self::Clsact, _) => (
                TcAttachMode::Clsact,
                format!("--attach clsact (kernel {release}); the lease makes the filter step aside if the daemon dies"),
            ),
        };
        Ok(AttachChoice { mode, reason })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_tcx_where_the_kernel_has_it_and_clsact_before() {
        let new = AttachRequest::Auto.resolve("6.8.0", true).unwrap();
        assert_eq!(new.mode, TcAttachMode::Tcx);
        assert!(new.reason.contains("6.8.0 has tcx"), "{}", new.reason);
        let old = AttachRequest::Auto.resolve("5.15.0-tegra", false).unwrap();
        assert_eq!(old.mode, TcAttachMode::Clsact);
        assert!(old.reason.contains("5.15.0-tegra lacks tcx"), "{}", old.reason);
    }

    #[test]
    fn a_forced_mode_is_kept_or_refused_by_name() {
        assert_eq!(AttachRequest::Clsact.resolve("6.8.0", true).unwrap().mode, TcAttachMode::Clsact);
        assert_eq!(AttachRequest::Clsact.resolve("5.10.104", false).unwrap().mode, TcAttachMode::Clsact);
        assert_eq!(AttachRequest::Tcx.resolve("6.8.0", true).unwrap().mode, TcAttachMode::Tcx);
        let refused = AttachRequest::Tcx.resolve("5.10.104", false).unwrap_err().to_string();
        assert!(
            refused.contains("--attach tcx") && refused.contains("5.10.104") && refused.contains("6.6"),
            "{refused}"
        );
    }

    #[test]
    fn the_flag_takes_exactly_the_three_words() {
        for word in ["auto", "tcx", "clsact"] {
            assert_eq!(word.parse::<AttachRequest>().unwrap().to_string(), word);
        }
        let bad = "ingress".parse::<AttachRequest>().unwrap_err();
        assert!(bad.contains("`ingress`") && bad.contains("auto, tcx or clsact"), "{bad}");
    }
}

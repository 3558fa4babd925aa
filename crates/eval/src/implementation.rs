//! The DDS implementations the evaluation runs (`--rmw`), and how to start their peers.
//!
//! Every peer speaks one protocol, shared by the Python peers in `peers/` and the RustDDS peer
//! ([`crate::peer`]):
//!
//! ```text
//! <peer> pub --topic rt/scan --hz 30 --duration S [--ranges 1081] [--best-effort]
//!            [--history keep_all|keep_last] [--depth N] [--max-samples N] [--domain D] [--interface ADDR]
//!     {"ev":"pub","seq":n,"t_ns":realtime_ns,"ok":true|false,"call_ns":write_call_ns} per attempt
//! <peer> sub --topic T --duration S [--best-effort] [--depth N] [--domain D] [--interface ADDR]
//!     {"ev":"recv","seq":n,"stamp_ns":header_stamp_ns,"recv_ns":realtime_ns} per sample
//! both print {"ev":"ready"} once their entities exist and exit 0 at --duration or on SIGTERM.
//! ```
//!
//! The Python scripts are compiled into the binary and written to a temporary directory when a
//! run needs them, so an installed `bauxite` needs no source tree.

use std::path::PathBuf;
use std::process::Command;

use crate::EvalError;

/// The Cyclone DDS peer (PyPI `cyclonedds`, system `python3`).
const CYCLONEDDS_PEER: &str = include_str!("../peers/cyclonedds_peer.py");
/// The ROS 2 peer (rclpy on rmw_fastrtps_cpp, the ROS 2 venv's python).
const ROS2_PEER: &str = include_str!("../peers/ros2_peer.py");

/// Where `scripts/install-deps` puts the ROS 2 venv unless `BAUXITE_ROS2_VENV` says otherwise.
pub const DEFAULT_ROS2_VENV: &str = "/opt/bauxite/ros2-venv";

/// A DDS implementation under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Implementation {
    /// RustDDS 0.15 (the bridge's own DDS), from `bauxite eval peer`.
    Rustdds,
    /// Eclipse Cyclone DDS through its Python binding.
    Cyclonedds,
    /// ROS 2 Jazzy rclpy on rmw_fastrtps_cpp (Fast DDS), from PyPI wheels.
    Ros2Fastdds,
}

impl Implementation {
    /// Every implementation, in report order.
    pub const ALL: [Implementation; 3] = [Self::Rustdds, Self::Cyclonedds, Self::Ros2Fastdds];

    /// The `--rmw` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rustdds => "rustdds",
            Self::Cyclonedds => "cyclonedds",
            Self::Ros2Fastdds => "ros2-fastdds",
        }
    }

    /// Parses one `--rmw` name; the error lists the known ones.
    pub fn parse(name: &str) -> Result<Self, EvalError> {
        Self::ALL.into_iter().find(|i| i.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|i| i.name()).collect();
            EvalError::Usage(format!("--rmw: no implementation `{name}` (known: {})", known.join(", ")))
        })
    }

    /// The publisher settings that show the backpressure (issue 13): Cyclone DDS blocks its
    /// write when a KEEP_ALL history is full; RustDDS and Fast DDS with KEEP_ALL and a small
    /// `max_samples` block or fail. The same 10 samples for all three.
    pub fn collapsing_writer(self) -> WriterSettings {
        WriterSettings { keep_all: true, depth: 10, max_samples: Some(10) }
    }

    /// The script this implementation's peer needs, if any, and its interpreter.
    fn script(self) -> Option<(&'static str, &'static str)> {
        match self {
            Self::Rustdds => None,
            Self::Cyclonedds => Some(("cyclonedds_peer.py", CYCLONEDDS_PEER)),
            Self::Ros2Fastdds => Some(("ros2_peer.py", ROS2_PEER)),
        }
    }
}

/// A publisher's history settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WriterSettings {
    /// KEEP_ALL (else KEEP_LAST `depth`).
    pub keep_all: bool,
    /// KEEP_LAST depth.
    pub depth: usize,
    /// RESOURCE_LIMITS.max_samples.
    pub max_samples: Option<usize>,
}

impl WriterSettings {
    /// ROS 2's default publisher: KEEP_LAST 10, no resource limit.
    pub const KEEP_LAST_10: WriterSettings = WriterSettings { keep_all: false, depth: 10, max_samples: None };

    /// The protocol's flags for these settings.
    pub fn flags(&self) -> Vec<String> {
        let mut f = vec![
            "--history".to_string(),
            if self.keep_all { "keep_all" } else { "keep_last" }.to_string(),
            "--depth".to_string(),
            self.depth.to_string(),
        ];
        if let Some(max) = self.max_samples {
            f.extend(["--max-samples".to_string(), max.to_string()]);
        }
        f
    }

    /// As the report states them: `KEEP_ALL, max_samples 10`.
    pub fn describe(&self) -> String {
        match (self.keep_all, self.max_samples) {
            (true, Some(m)) => format!("KEEP_ALL, max_samples {m}"),
            (true, None) => "KEEP_ALL".into(),
            (false, Some(m)) => format!("KEEP_LAST {}, max_samples {m}", self.depth),
            (false, None) => format!("KEEP_LAST {}", self.depth),
        }
    }
}

/// Starts peers: the `bauxite` binary for RustDDS, the scripts (written once to a temporary
/// directory, removed when this is dropped) for the Python implementations.
pub struct PeerLauncher {
    exe: PathBuf,
    scripts: PathBuf,
    ros2_venv: PathBuf,
}

impl PeerLauncher {
    /// Writes the embedded scripts to a fresh temporary directory.
    pub fn new(exe: PathBuf) -> Result<Self, EvalError> {
        let scripts = std::env::temp_dir().join(format!("bauxite-eval-peers-{}", std::process::id()));
        std::fs::create_dir_all(&scripts).map_err(EvalError::io(format!("creating {}", scripts.display())))?;
        for implementation in Implementation::ALL {
            if let Some((name, text)) = implementation.script() {
                let path = scripts.join(name);
                std::fs::write(&path, text).map_err(EvalError::io(format!("writing {}", path.display())))?;
            }
        }
        let ros2_venv =
            std::env::var_os("BAUXITE_ROS2_VENV").map_or_else(|| PathBuf::from(DEFAULT_ROS2_VENV), PathBuf::from);
        Ok(Self { exe, scripts, ros2_venv })
    }

    /// The program and leading arguments of `implementation`'s peer.
    pub fn program(&self, implementation: Implementation) -> Result<(PathBuf, Vec<String>), EvalError> {
        match implementation {
            Implementation::Rustdds => Ok((self.exe.clone(), vec!["eval".into(), "peer".into()])),
            Implementation::Cyclonedds => {
                Ok((PathBuf::from("python3"), vec![self.scripts.join("cyclonedds_peer.py").display().to_string()]))
            }
            Implementation::Ros2Fastdds => {
                let python = self.ros2_venv.join("bin/python");
                let script = self.scripts.join("ros2_peer.py");
                if !python.exists() {
                    return Err(EvalError::Usage(format!(
                        "--rmw ros2-fastdds: no {} (run scripts/install-deps, or set BAUXITE_ROS2_VENV)",
                        python.display()
                    )));
                }
                Ok((python, vec![script.display().to_string()]))
            }
        }
    }

    /// A command line for a peer of `implementation` with the protocol's `args`, to be run in a
    /// namespace (the caller wraps it).
    pub fn command_line(&self, implementation: Implementation, args: &[String]) -> Result<Vec<String>, EvalError> {
        let (program, mut line) = self.program(implementation)?;
        line.insert(0, program.display().to_string());
        line.extend(args.iter().cloned());
        Ok(line)
    }

    /// Checks that `implementation` can start here (its interpreter and modules exist), so a
    /// missing dependency is named before any run starts.
    pub fn check(&self, implementation: Implementation) -> Result<(), EvalError> {
        let module = match implementation {
            Implementation::Rustdds => return Ok(()),
            Implementation::Cyclonedds => "cyclonedds",
            Implementation::Ros2Fastdds => "rclpy",
        };
        let (python, _) = self.program(implementation)?;
        let status = Command::new(&python).args(["-c", &format!("import {module}")]).output();
        match status {
            Ok(out) if out.status.success() => Ok(()),
            _ => Err(EvalError::Usage(format!(
                "--rmw {}: `{} -c 'import {module}'` fails (run scripts/install-deps)",
                implementation.name(),
                python.display()
            ))),
        }
    }
}

impl Drop for PeerLauncher {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scripts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_the_known() {
        for i in Implementation::ALL {
            assert_eq!(Implementation::parse(i.name()).unwrap(), i);
        }
        let e = Implementation::parse("opendds").unwrap_err().to_string();
        assert!(e.contains("`opendds`") && e.contains("rustdds, cyclonedds, ros2-fastdds"), "{e}");
    }

    #[test]
    fn writer_flags_follow_the_protocol() {
        let collapsing = Implementation::Rustdds.collapsing_writer();
        assert_eq!(collapsing.flags(), ["--history", "keep_all", "--depth", "10", "--max-samples", "10"]);
        assert_eq!(collapsing.describe(), "KEEP_ALL, max_samples 10");
        assert_eq!(WriterSettings::KEEP_LAST_10.flags(), ["--history", "keep_last", "--depth", "10"]);
    }
}

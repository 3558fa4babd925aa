//! The daemon's published state: a JSON file per interface under `/run/bauxite`.
//!
//! `status` and `down` read it, also after the daemon was killed: it tells which
//! interface settings to restore and shows the last counters.
//!
//! It is keyed by the network namespace's cookie ([`Rtnl::netns_cookie`]), which the
//! kernel never reuses (a namespace's inode, which keyed it before, it does), taken
//! from the reader's own netlink socket rather than from `/proc/self`: a thread placed
//! in a namespace reads that namespace's state. Inside, [`Owner`] records what the
//! state is about (the interface's index, the daemon's pid and its start time), and
//! nothing acts on a state whose owner does not match what is there now.
//!
//! Mode: the directory is 0755 and the files 0644, on purpose: a snapshot holds
//! counters, rates and the profile's name, no secret, and monitoring running as
//! another user may read it; only root can write there.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use bauxite_core::ShaperSnapshot;
use bauxite_sys::ProcStat;
use serde::{Deserialize, Serialize};

use crate::rtnl::Rtnl;

/// Where state files live.
pub const STATE_ROOT: &str = "/run/bauxite";

/// Who wrote a state file and about which interface: what must still hold before
/// anything acts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owner {
    /// The index of the interface the daemon shaped. An interface deleted and
    /// recreated with the same name has a new index.
    pub ifindex: u32,
    /// The daemon's process id.
    pub pid: u32,
    /// The daemon's start time (clock ticks after boot, `/proc/PID/stat` field 22),
    /// so that a recycled pid is not taken for the daemon.
    pub pid_start: u64,
    /// The interface's `gso_max_size` before `up` capped it, restored by `down`.
    pub original_gso_max_size: u32,
    /// Whether `up` added the interface's clsact qdisc (clsact mode, none there before):
    /// `down` removes it then, and never one that was there before `up`.
    #[serde(default)]
    pub created_clsact: bool,
    /// CLOCK_MONOTONIC (ns) of the daemon's last lease renewal before the snapshot.
    pub heartbeat_ns: u64,
}

impl Owner {
    /// Whether the process that wrote the state still runs (same pid, same start).
    pub fn daemon_alive(&self) -> bool {
        process_start(self.pid).is_some_and(|start| start == self.pid_start)
    }
}

/// What the state file holds: whose it is, and the daemon's last snapshot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateFile {
    /// Who wrote it about which interface.
    pub owner: Owner,
    /// The daemon's last snapshot (as the daemon saw itself: `running`).
    pub snapshot: ShaperSnapshot,
}

/// The start time of process `pid` (clock ticks after boot), if it runs (a
/// zombie, killed but not yet reaped by its parent, does not).
pub fn process_start(pid: u32) -> Option<u64> {
    ProcStat::read(pid).filter(|stat| !stat.exited()).map(|stat| stat.start_ticks())
}

/// Whether process `pid` is stopped (SIGSTOP) or being traced.
pub fn process_stopped(pid: u32) -> bool {
    ProcStat::read(pid).is_some_and(|stat| stat.stopped())
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The largest state file read (one is about a kilobyte).
pub const MAX_STATE_BYTES: u64 = 64 * 1024;

/// The state directory of one network namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir(PathBuf);

impl StateDir {
    /// The directory of the namespace `rtnl` was opened in: named by its cookie, or,
    /// on kernels before 5.14 that have none, by the opening thread's namespace
    /// inode (then only [`Owner`]'s checks guard against a reused inode).
    pub fn of(rtnl: &Rtnl) -> Self {
        let name = match rtnl.netns_cookie() {
            Ok(cookie) => format!("netns-cookie-{cookie}"),
            Err(_) => std::fs::read_link("/proc/thread-self/ns/net")
                .ok()
                .and_then(|p| {
                    p.to_str().map(|s| format!("netns-inode-{}", s.trim_start_matches("net:[").trim_end_matches(']')))
                })
                .unwrap_or_else(|| "netns-unknown".into()),
        };
        Self::at(Path::new(STATE_ROOT).join(name))
    }

    /// A state directory at `path` (tests use a temporary one).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self(path.into())
    }

    /// The state file of `iface`.
    pub fn path(&self, iface: &str) -> PathBuf {
        self.0.join(format!("{iface}.json"))
    }

    /// Writes the state atomically (write, then rename), so readers never see half a
    /// file; mode 0644 whatever the umask (see the module's doc). The file is written
    /// new, never through a link: whatever stands at its temporary name (a stale one,
    /// a symbolic link to a file elsewhere) is removed first, not written into.
    pub fn save(&self, iface: &str, state: &StateFile) -> std::io::Result<()> {
        std::fs::DirBuilder::new().recursive(true).mode(0o755).create(&self.0)?;
        let path = self.path(iface);
        let tmp = path.with_extension("json.tmp");
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)?;
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        file.write_all(&serde_json::to_vec_pretty(state)?)?;
        drop(file);
        std::fs::rename(tmp, path)
    }

    /// The state of `iface`, if there is one. Only a regular file of at most
    /// [`MAX_STATE_BYTES`] is read: a symbolic link (to a file elsewhere, to
    /// `/dev/zero`), a FIFO or a huge file is refused, naming it, and nothing it
    /// points at is read or touched.
    pub fn load(&self, iface: &str) -> std::io::Result<Option<StateFile>> {
        use bauxite_core::config::{FileReadError, read_regular_file};
        let path = self.path(iface);
        let invalid =
            |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {why}", path.display()));
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(invalid("a symbolic link, not a state file Bauxite wrote (remove it)".into()));
            }
            Ok(_) => {}
        }
        let bytes = read_regular_file(&path, MAX_STATE_BYTES).map_err(|e| match e {
            FileReadError::Io(io) => io,
            other => invalid(format!("{other}; not a state file Bauxite wrote (remove it)")),
        })?;
        serde_json::from_slice(&bytes).map(Some).map_err(|e| invalid(e.to_string()))
    }

    /// Removes the state file of `iface` (no error if there is none), and the
    /// directory with it when it is left empty, so none pile up.
    pub fn remove(&self, iface: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(iface)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        match std::fs::remove_dir(&self.0) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound && e.raw_os_error() != Some(libc::ENOTEMPTY) => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> StateDir {
        StateDir::at(std::env::temp_dir().join(format!("bauxite-state-{}-{name}", std::process::id())).join("ns"))
    }

    #[test]
    fn save_load_remove_leaves_no_empty_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("roundtrip");
        let mut state = StateFile::default();
        state.owner.ifindex = 7;
        state.snapshot.iface = "eth0".into();
        dir.save("eth0", &state).unwrap();
        let mode = std::fs::metadata(dir.path("eth0")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        assert_eq!(dir.load("eth0").unwrap(), Some(state));
        dir.remove("eth0").unwrap();
        assert_eq!(dir.load("eth0").unwrap(), None);
        assert!(!dir.0.exists(), "the emptied directory is removed");
        dir.remove("eth0").unwrap();
        std::fs::remove_dir(dir.0.parent().unwrap()).unwrap();
    }

    /// Issue 28: a state file that is not one Bauxite wrote is refused by name and
    /// nothing it points at is read or written: a symbolic link to a file elsewhere,
    /// one to `/dev/zero`, a FIFO, a huge file, malformed JSON; a link planted at the
    /// temporary name `save` writes is replaced, not written through.
    #[test]
    fn state_files_that_bauxite_did_not_write_are_refused_and_nothing_they_point_at_is_touched() {
        let dir = temp_dir("hostile");
        std::fs::create_dir_all(&dir.0).unwrap();
        let victim = dir.0.parent().unwrap().join("victim.txt");
        std::fs::write(&victim, "not Bauxite's\n").unwrap();
        let path = dir.path("eth0");
        let refused = |why: &str| {
            let e = dir.load("eth0").expect_err(why).to_string();
            assert!(e.contains(&path.display().to_string()), "{why}: {e}");
        };
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        refused("a link to a file elsewhere");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        refused("a link to /dev/zero");
        std::fs::remove_file(&path).unwrap();
        let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: mkfifo(3) with a valid NUL-terminated path.
        let rc = unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
        assert_eq!(rc, 0);
        refused("a FIFO (read without waiting for a writer)");
        std::fs::remove_file(&path).unwrap();
        std::fs::File::create(&path).unwrap().set_len(MAX_STATE_BYTES + 1).unwrap();
        refused("a huge file");
        std::fs::write(&path, "{\"owner\": 3").unwrap();
        refused("malformed JSON");
        std::fs::remove_file(&path).unwrap();
        // A link at the temporary name: save replaces it and leaves its target alone.
        std::os::unix::fs::symlink(&victim, path.with_extension("json.tmp")).unwrap();
        dir.save("eth0", &StateFile::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not Bauxite's\n");
        assert_eq!(dir.load("eth0").unwrap(), Some(StateFile::default()));
        dir.remove("eth0").unwrap();
        std::fs::remove_file(&victim).unwrap();
        std::fs::remove_dir(dir.0.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_recycled_pid_is_not_the_daemon() {
        let me = std::process::id();
        let start = process_start(me).expect("our own start time");
        assert!(Owner { pid: me, pid_start: start, ..Default::default() }.daemon_alive());
        assert!(!Owner { pid: me, pid_start: start + 1, ..Default::default() }.daemon_alive());
        assert!(!process_stopped(me));
    }
}

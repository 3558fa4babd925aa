//! Network namespaces: where commands (`ip netns exec`, `tc -batch`) and threads run.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use crate::SysError;

/// A network namespace to run commands and threads in.
///
/// Ownership is part of the handle: [`Netns::create`] makes a namespace that this
/// handle owns and deletes (with its interfaces) when dropped, also when a test
/// panics; [`Netns::current`] and [`Netns::named`] only refer to a namespace that
/// someone else owns, and dropping them deletes nothing. That is why a `Netns` is
/// not `Clone`: pass it by reference.
#[derive(Debug)]
pub struct Netns {
    /// `None`: this process's own namespace.
    name: Option<String>,
    /// Whether dropping this handle deletes the namespace.
    owned: bool,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A namespace name no other run on this machine uses: `bx-<pid>-<n>-<role>`.
pub fn unique_name(role: &str) -> String {
    format!("bx-{}-{}-{role}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

impl Netns {
    /// This process's own namespace.
    pub fn current() -> Self {
        Self { name: None, owned: false }
    }

    /// A namespace that exists already (`ip netns add NAME`), owned by someone else.
    pub fn named(name: impl Into<String>) -> Self {
        Self { name: Some(name.into()), owned: false }
    }

    /// Creates a namespace called `name` with its loopback up, deleted when the
    /// returned handle is dropped.
    pub fn create(name: &str) -> Result<Self, SysError> {
        Self::current().exec("ip", &["netns", "add", name])?;
        // Owned from here on, so a failure below still deletes it.
        let ns = Self { name: Some(name.to_string()), owned: true };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name; `None` for this process's own.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// A command that runs `program args…` in this namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut c = match &self.name {
            None => Command::new(program),
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
        };
        c.args(args);
        c
    }

    /// Runs `program args…` here, with `stdin` fed to it; returns its standard output.
    pub fn exec_with_input(&self, program: &str, args: &[&str], stdin: &str) -> Result<String, SysError> {
        let mut cmd = self.command(program, args);
        let command = format!("{cmd:?}").replace('"', "");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| SysError::Start { command: command.clone(), program: program.to_string(), source })?;
        let pipe = |source| SysError::Pipe { command: command.clone(), source };
        if let Some(mut input) = child.stdin.take() {
            input.write_all(stdin.as_bytes()).map_err(pipe)?;
        }
        let out = child.wait_with_output().map_err(pipe)?;
        if !out.status.success() {
            return Err(SysError::Failed { command, stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs `program args…` here; returns its standard output.
    pub fn exec(&self, program: &str, args: &[&str]) -> Result<String, SysError> {
        self.exec_with_input(program, args, "")
    }

    /// Applies `tc` commands (one per line, without the leading `tc`) in one
    /// `tc -batch` run; tc stops at the first failing line.
    pub fn tc_batch(&self, lines: &[String]) -> Result<(), SysError> {
        let script = lines.join("\n") + "\n";
        self.exec_with_input("tc", &["-batch", "-"], &script).map(|_| ())
    }

    /// Runs `tc args…` here.
    pub fn tc(&self, args: &[&str]) -> Result<String, SysError> {
        self.exec("tc", args)
    }

    /// Runs `ip args…` here (as `ip -n NAME args…` for a named namespace).
    pub fn ip(&self, args: &[&str]) -> Result<String, SysError> {
        match &self.name {
            None => Self::current().exec("ip", args),
            Some(name) => Self::current().exec("ip", &[&["-n", name.as_str()], args].concat()),
        }
    }

    /// Sets a sysctl of this namespace (`net.ipv4.ip_forward`, …). A namespace that
    /// cannot be entered (it does not exist) is an error, like a refused write.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), SysError> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        let value_owned = value.to_string();
        self.run_fallible(move || std::fs::write(path, value_owned)).map_err(|source| SysError::Io {
            what: format!("setting {key}={value} in network namespace {}", self.describe()),
            source,
        })
    }

    /// Runs `f` inside this namespace and waits for its result; failing to enter the
    /// namespace is returned as `f`'s own errors are, not a panic.
    fn run_fallible<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        let path = self.name.as_ref().map(|name| format!("/var/run/netns/{name}"));
        std::thread::spawn(move || {
            if let Some(path) = path {
                enter(&path).map_err(|e| std::io::Error::new(e.kind(), format!("entering {path}: {e}")))?;
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the namespace thread panicked")))
    }

    /// Runs `f` on a new thread inside this namespace. Sockets it creates belong to
    /// the namespace for their whole life, wherever they are used afterwards.
    ///
    /// The thread panics if it cannot enter the namespace, which exists as long as
    /// an owning handle does.
    pub fn spawn<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
        let path = self.name.as_ref().map(|name| format!("/var/run/netns/{name}"));
        std::thread::spawn(move || {
            if let Some(path) = path {
                enter(&path).unwrap_or_else(|e| panic!("entering network namespace {path}: {e}"));
            }
            f()
        })
    }

    /// Runs `f` inside this namespace and waits for its result.
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        self.spawn(f).join().expect("namespace thread panicked")
    }

    fn describe(&self) -> &str {
        self.name.as_deref().unwrap_or("(this process's)")
    }
}

/// Moves the calling thread into the network namespace at `path`.
fn enter(path: &str) -> std::io::Result<()> {
    let file = File::open(path)?;
    #[allow(unsafe_code)]
    // SAFETY: setns with a valid namespace fd only changes this thread's namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let (true, Some(name)) = (self.owned, &self.name)
            && let Err(e) = Self::current().exec("ip", &["netns", "del", name])
        {
            tracing::warn!("deleting network namespace {name}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root_or_skip;

    #[test]
    fn commands_in_a_named_namespace_go_through_ip_netns_exec() {
        let cmd = Netns::named("bx-x").command("tc", &["qdisc", "show"]);
        assert_eq!(cmd.get_program(), "ip");
        let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(args, ["netns", "exec", "bx-x", "tc", "qdisc", "show"]);
        let here = Netns::current().command("tc", &["qdisc", "show"]);
        assert_eq!(here.get_program(), "tc");
    }

    /// Review S6: `sysctl` documents an error but panicked for a missing namespace.
    #[test]
    fn a_sysctl_in_a_missing_namespace_is_an_error() {
        let e = Netns::named("bx-no-such-ns").sysctl("net.ipv4.ip_forward", "1").unwrap_err();
        assert!(e.to_string().contains("net.ipv4.ip_forward=1 in network namespace bx-no-such-ns"), "{e}");
        let source = std::error::Error::source(&e).expect("a source").to_string();
        assert!(source.contains("/var/run/netns/bx-no-such-ns"), "{source}");
    }

    #[test]
    fn a_failing_command_is_named_with_what_it_printed() {
        let e = Netns::current().exec("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
        assert!(matches!(&e, SysError::Failed { stderr, .. } if stderr == "oops"), "{e:?}");
        assert!(e.to_string().contains("`sh -c echo oops >&2; exit 3` failed: oops"), "{e}");
    }

    #[test]
    fn a_missing_program_keeps_the_os_error_as_its_source() {
        let e = Netns::current().exec("bx-no-such-program", &[]).unwrap_err();
        assert!(e.to_string().contains("is bx-no-such-program installed?"), "{e}");
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(source.downcast_ref::<std::io::Error>().map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
    }

    #[test]
    fn input_reaches_the_command() {
        assert_eq!(Netns::current().exec_with_input("cat", &[], "lane\n").unwrap(), "lane\n");
    }

    #[test]
    fn an_owned_namespace_is_deleted_on_drop_and_a_named_one_is_not() {
        if !root_or_skip("an_owned_namespace_is_deleted_on_drop_and_a_named_one_is_not") {
            return;
        }
        let name = unique_name("sys");
        let exists = |name: &str| std::path::Path::new("/var/run/netns").join(name).exists();
        let owned = Netns::create(&name).unwrap();
        assert!(exists(&name));
        drop(Netns::named(&name));
        assert!(exists(&name), "dropping a borrowed handle deleted the namespace");
        // Threads and commands run inside it: its loopback is up and alone.
        let links = owned.ip(&["-o", "link"]).unwrap();
        assert_eq!(links.lines().count(), 1, "{links}");
        let inside = owned.run(|| std::fs::read_link("/proc/thread-self/ns/net").unwrap());
        let outside = std::fs::read_link("/proc/thread-self/ns/net").unwrap();
        assert_ne!(inside, outside);
        owned.sysctl("net.ipv4.ip_forward", "1").unwrap();
        assert_eq!(owned.exec("cat", &["/proc/sys/net/ipv4/ip_forward"]).unwrap().trim(), "1");
        drop(owned);
        assert!(!exists(&name), "an owned namespace outlived its handle");
    }
}

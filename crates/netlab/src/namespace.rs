//! Network namespaces that clean up after themselves, and threads that run in them.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use bauxite_shaper::tc::{CommandError, Netns};

/// A network namespace created for one run; deleted (with its interfaces) on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
    netns: Netns,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A name no other run on this machine uses: `bx-<pid>-<n>-<role>`.
pub fn unique_name(role: &str) -> String {
    format!("bx-{}-{}-{role}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

impl Namespace {
    /// Creates a namespace called `name` with its loopback up.
    pub fn create(name: &str) -> Result<Self, CommandError> {
        Netns::current().run("ip", &["netns", "add", name])?;
        let ns = Self { name: name.to_string(), netns: Netns::named(name) };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A handle to run commands in it.
    pub fn netns(&self) -> &Netns {
        &self.netns
    }

    /// Runs `ip args…` in the namespace.
    pub fn ip(&self, args: &[&str]) -> Result<String, CommandError> {
        Netns::current().run("ip", &[&["-n", &self.name], args].concat())
    }

    /// Runs `tc args…` in the namespace.
    pub fn tc(&self, args: &[&str]) -> Result<String, CommandError> {
        self.netns.run("tc", args)
    }

    /// Sets a sysctl of the namespace (`net.ipv4.ip_forward`, …).
    pub fn sysctl(&self, key: &str, value: &str) -> std::io::Result<()> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        let value = value.to_string();
        self.spawn(move || std::fs::write(path, value)).join().expect("sysctl thread")
    }

    /// Runs `f` on a new thread inside the namespace. Sockets it creates belong to
    /// the namespace for their whole life, wherever they are used afterwards.
    pub fn spawn<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
        let path = format!("/var/run/netns/{}", self.name);
        std::thread::spawn(move || {
            enter(&path).unwrap_or_else(|e| panic!("entering network namespace {path}: {e}"));
            f()
        })
    }

    /// Runs `f` inside the namespace and waits for its result.
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        self.spawn(f).join().expect("namespace thread panicked")
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

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Err(e) = Netns::current().run("ip", &["netns", "del", &self.name]) {
            tracing::warn!("deleting network namespace {}: {e}", self.name);
        }
    }
}

/// Joins two namespaces with a veth pair and gives each end an address (`a.b.c.d/nn`).
pub fn connect(
    a: &Namespace,
    a_iface: &str,
    a_addr: &str,
    b: &Namespace,
    b_iface: &str,
    b_addr: &str,
) -> Result<(), CommandError> {
    Netns::current().run(
        "ip",
        &[
            "link",
            "add",
            "name",
            a_iface,
            "netns",
            a.name(),
            "type",
            "veth",
            "peer",
            "name",
            b_iface,
            "netns",
            b.name(),
        ],
    )?;
    for (ns, iface, addr) in [(a, a_iface, a_addr), (b, b_iface, b_addr)] {
        ns.ip(&["addr", "add", addr, "dev", iface])?;
        ns.ip(&["link", "set", iface, "up"])?;
    }
    Ok(())
}

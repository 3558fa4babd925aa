//! `bauxite link`: any program behind the emulated link, as mahimahi's `mm-link`
//! shell puts one.
//!
//! ```text
//!  app [bx-link A+2] —— [to-app A+1] link [to-host A+5] —— [bxl-PID A+6] this namespace (the host)
//!                                     ^ the emulator: uplink app → host, downlink host → app
//! ```
//!
//! The program runs in the `app` namespace, whose only route leads into the `link`
//! namespace, where [`LinkEmulator`] carries every IPv4 packet (the namespace itself
//! forwards nothing). The far side is the namespace `bauxite link` runs in: routed
//! to the app's subnet, and, where `nft` exists, masquerading it towards everything
//! else this namespace reaches (with IPv4 forwarding on while the link runs), so the
//! program reaches what the host reaches. Addresses come from the shared address
//! space 100.64.0.0/10 (RFC 6598, what `mm-link` uses too), a /29 per run chosen
//! by the process id.
//!
//! [`LinkShell::between`] puts the same link between two namespaces that exist
//! already (a test bed's robot and base), instead of an app namespace and this one:
//!
//! ```text
//!  NS_A [bxl-PID A+2] —— [to-app A+1] link [to-host A+5] —— [bxl-PID A+6] NS_B
//! ```
//!
//! Each end gets an address and a route to the other's through the link, and
//! nothing else in those namespaces changes: no NAT, no forwarding switch. Deleting
//! the link namespace deletes both veth pairs, and with them the addresses and routes.
//!
//! Everything made here is listed in [`Leftovers`]: dropping the [`LinkShell`]
//! removes it, and a reaper process holding the list (`bauxite link` starts one)
//! removes it when `bauxite link` dies without cleaning up (SIGKILL). Deleting the
//! two namespaces deletes both veth pairs and so the host's interface and route;
//! the NAT table and the forwarding switch are this namespace's own and are removed
//! or restored by name.

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use bauxite_core::figures::BIN_NS;
use bauxite_core::link::{LinkConfig, LinkRate, OPPORTUNITY_BYTES, Timeline};
use bauxite_sys::Netns;

use crate::NetlabError;
use crate::emulator::{
    Direction, DirectionCounters, EmulatorConfig, EmulatorReport, Fate, Forwarding, LinkEmulator, PacketFate, Port,
};
use crate::testbed::mac_of;
use crate::veth::connect;

/// The program's interface in the app namespace.
pub const APP_IFACE: &str = "bx-link";
const LINK_TO_APP: &str = "to-app";
const LINK_TO_HOST: &str = "to-host";
const IP_FORWARD: &str = "/proc/sys/net/ipv4/ip_forward";

/// The link a [`LinkShell`] emulates.
#[derive(Clone, Debug, Default)]
pub struct ShellOptions {
    /// App → host.
    pub uplink: LinkConfig,
    /// Host → app.
    pub downlink: LinkConfig,
    /// Changes to the uplink at given times.
    pub timeline: Timeline,
    /// Keep every packet's fate (for `--record`).
    pub record_fates: bool,
    /// Send every packet's fate here too, as it becomes known ([`FateLog`]).
    pub fate_log: Option<Sender<PacketFate>>,
}

impl ShellOptions {
    /// The emulator's config for this link, routing or bridging.
    fn emulator_config(self, forwarding: Forwarding) -> EmulatorConfig {
        EmulatorConfig {
            uplink: self.uplink,
            downlink: self.downlink,
            timeline: self.timeline,
            record_fates: self.record_fates,
            fate_log: self.fate_log,
            forwarding,
        }
    }
}

/// The addresses of one run: a /29 of 100.64.0.0/10.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShellAddresses {
    /// The program's address (its namespace's only one).
    pub app: Ipv4Addr,
    /// The app's gateway: the link namespace's end towards it.
    pub gateway: Ipv4Addr,
    /// The link namespace's end towards the host.
    pub link_host_side: Ipv4Addr,
    /// The host's end of the link: the program reaches the host here (and at any of
    /// its addresses).
    pub host: Ipv4Addr,
}

impl ShellAddresses {
    /// The /29 of run `n` (the process id, modulo the 2^19 /29s of the /10).
    pub fn of(n: u32) -> Self {
        let base = u32::from(Ipv4Addr::new(100, 64, 0, 0)) + (n % (1 << 19)) * 8;
        Self {
            gateway: Ipv4Addr::from(base + 1),
            app: Ipv4Addr::from(base + 2),
            link_host_side: Ipv4Addr::from(base + 5),
            host: Ipv4Addr::from(base + 6),
        }
    }

    /// The app's /30, which the host routes into the link.
    pub fn app_subnet(&self) -> String {
        format!("{}/30", Ipv4Addr::from(u32::from(self.gateway) - 1))
    }
}

/// What a run made outside its own process, by name, so that another process can
/// remove it: the namespaces, the NAT table, and the forwarding switch to restore.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Network namespaces to delete (with them go their interfaces and routes).
    pub netns: Vec<String>,
    /// This namespace's end of the link: deleting a namespace deletes its veth
    /// pairs only once the kernel has let go of it, so this end is deleted by name.
    pub host_iface: Option<String>,
    /// An `nft` table (`ip` family) to delete.
    pub nft_table: Option<String>,
    /// The value `net.ipv4.ip_forward` had before the run switched it on.
    pub ip_forward: Option<String>,
}

impl Leftovers {
    /// What run `run` will make, by name, known before it makes anything: a reaper
    /// started first covers a death halfway through the setup too. The forwarding
    /// switch is listed if it is off now (restoring it then is harmless).
    pub fn of_run(run: u32) -> Self {
        let forward = std::fs::read_to_string(IP_FORWARD).unwrap_or_default().trim().to_string();
        Self {
            netns: vec![format!("bxl-{run}-app"), format!("bxl-{run}-link")],
            host_iface: Some(format!("bxl-{run}")),
            nft_table: Some(nft_table(run)),
            ip_forward: (forward != "1").then_some(forward),
        }
    }

    /// What [`LinkShell::between`] of run `run` will make: its link namespace only.
    pub fn of_between(run: u32) -> Self {
        Self { netns: vec![format!("bxl-{run}-link")], ..Self::default() }
    }

    /// Removes everything listed; what is gone already is no error (this runs twice
    /// when a reaper follows a clean exit, and after a crash part may be missing).
    pub fn remove(&self) {
        let host = Netns::current();
        if let Some(iface) = &self.host_iface
            && Path::new("/sys/class/net").join(iface).exists()
        {
            let _ = host.exec("ip", &["link", "del", iface]);
        }
        for name in &self.netns {
            if Path::new("/var/run/netns").join(name).exists() {
                let _ = host.exec("ip", &["netns", "del", name]);
            }
        }
        if let Some(table) = &self.nft_table {
            let _ = host.exec("nft", &["delete", "table", "ip", table]);
        }
        if let Some(value) = &self.ip_forward {
            let _ = std::fs::write(IP_FORWARD, value);
        }
    }

    /// The list as command-line arguments for `bauxite link-reap`.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for name in &self.netns {
            args.extend(["--netns".into(), name.clone()]);
        }
        if let Some(iface) = &self.host_iface {
            args.extend(["--host-iface".into(), iface.clone()]);
        }
        if let Some(table) = &self.nft_table {
            args.extend(["--nft-table".into(), table.clone()]);
        }
        if let Some(value) = &self.ip_forward {
            args.extend(["--ip-forward".into(), value.clone()]);
        }
        args
    }
}

/// A running link shell: the namespaces, the emulator between them and the host's
/// route and NAT. Dropping it removes all of it.
pub struct LinkShell {
    /// Stopped first on drop: it reads from the namespaces' interfaces.
    emulator: Option<LinkEmulator>,
    /// Where the program runs (for [`Self::between`], the uplink's sender, NS_A).
    pub app: Netns,
    /// Where the emulator runs.
    pub link: Netns,
    /// The run's addresses.
    pub addresses: ShellAddresses,
    /// The host's interface into the link (for [`Self::between`], NS_B's).
    pub host_iface: String,
    leftovers: Leftovers,
    /// Whether the program can reach beyond this namespace (NAT is in place).
    pub nat: bool,
}

impl LinkShell {
    /// Builds the namespaces, the veth pairs, the routes and the NAT (if `nft` is
    /// there), and starts the emulator. `run` (the process id) picks the names and
    /// the addresses. Whatever fails undoes what was made.
    pub fn create(run: u32, options: ShellOptions) -> Result<Self, NetlabError> {
        let addresses = ShellAddresses::of(run);
        let host = Netns::current();
        let planned = Leftovers::of_run(run);
        let host_iface = planned.host_iface.clone().expect("planned");
        // Owned handles: each deletes its namespace if a later step fails.
        let app = Netns::create(&planned.netns[0])?;
        let link = Netns::create(&planned.netns[1])?;
        let mut leftovers =
            Leftovers { netns: planned.netns.clone(), host_iface: Some(host_iface.clone()), ..Leftovers::default() };
        let a = addresses;
        connect(&app, APP_IFACE, &format!("{}/30", a.app), &link, LINK_TO_APP, &format!("{}/30", a.gateway))?;
        host.ip(&[
            "link",
            "add",
            "name",
            &host_iface,
            "type",
            "veth",
            "peer",
            "name",
            LINK_TO_HOST,
            "netns",
            link_name(&link),
        ])?;
        link.ip(&["addr", "add", &format!("{}/30", a.link_host_side), "dev", LINK_TO_HOST])?;
        link.ip(&["link", "set", LINK_TO_HOST, "up"])?;
        host.ip(&["addr", "add", &format!("{}/30", a.host), "dev", &host_iface])?;
        host.ip(&["link", "set", &host_iface, "up"])?;
        app.ip(&["link", "set", "lo", "up"])?;
        app.ip(&["route", "add", "default", "via", &a.gateway.to_string()])?;
        host.ip(&["route", "add", &a.app_subnet(), "via", &a.link_host_side.to_string(), "dev", &host_iface])?;
        // Both senders hand the link wire-size packets, as a modem sees them.
        app.ip(&["link", "set", "dev", APP_IFACE, "gso_max_segs", "1"])?;
        host.ip(&["link", "set", "dev", &host_iface, "gso_max_segs", "1"])?;
        let nat = match masquerade(run, &a, &host_iface) {
            Ok(table) => {
                leftovers.nft_table = Some(table);
                match switch_forwarding_on() {
                    Ok(before) => leftovers.ip_forward = before,
                    Err(e) => {
                        Leftovers { netns: Vec::new(), ..leftovers }.remove();
                        return Err(e);
                    }
                }
                true
            }
            Err(e) => {
                tracing::warn!("no NAT ({e}): the program reaches this host's addresses only");
                false
            }
        };
        let mut shell = Self { emulator: None, app, link, addresses, host_iface, leftovers, nat };
        let emulator = start_emulator(&shell.link, (&shell.app, APP_IFACE), (&host, &shell.host_iface), options)?;
        shell.emulator = Some(emulator);
        Ok(shell)
    }

    /// Puts the link between namespaces `a` (the uplink's sender: the robot) and `b`
    /// (the base), which exist already: each gets an interface `bxl-RUN` into a new
    /// link namespace, an address (`addresses.app` in `a`, `addresses.host` in `b`)
    /// and a route to the other's address through the link. Whatever fails undoes what
    /// was made; dropping the shell deletes the link namespace and so all of it.
    ///
    /// `a` and `b` may also be two interfaces of this namespace (a box with two ports
    /// on the wire between robot and base): the link then bridges every frame between
    /// them, as a cable with the link's rate, queue, loss and delay would, and nothing
    /// is made. They must hold no global address and be no bridge's port (then the kernel
    /// carries nothing between them by itself).
    pub fn between(run: u32, a: &str, b: &str, options: ShellOptions) -> Result<Self, NetlabError> {
        if a == b {
            return Err(NetlabError::Emulator(format!("a link between {a} and itself")));
        }
        let interface = |name: &str| Path::new("/sys/class/net").join(name).exists();
        if interface(a) && interface(b) {
            return Self::between_interfaces(run, a, b, options);
        }
        for name in [a, b] {
            if !Path::new("/var/run/netns").join(name).exists() {
                return Err(NetlabError::NoNamespace(name.to_string()));
            }
        }
        let addresses = ShellAddresses::of(run);
        let leftovers = Leftovers::of_between(run);
        // Owned: deleting it (also when a step below fails) deletes both veth pairs.
        let link = Netns::create(&leftovers.netns[0])?;
        let (a_ns, b_ns) = (Netns::named(a), Netns::named(b));
        let iface = format!("bxl-{run}");
        let x = addresses;
        connect(&a_ns, &iface, &format!("{}/30", x.app), &link, LINK_TO_APP, &format!("{}/30", x.gateway))?;
        connect(&b_ns, &iface, &format!("{}/30", x.host), &link, LINK_TO_HOST, &format!("{}/30", x.link_host_side))?;
        a_ns.ip(&["route", "add", &format!("{}/32", x.host), "via", &x.gateway.to_string(), "dev", &iface])?;
        b_ns.ip(&["route", "add", &format!("{}/32", x.app), "via", &x.link_host_side.to_string(), "dev", &iface])?;
        for ns in [&a_ns, &b_ns] {
            ns.ip(&["link", "set", "dev", &iface, "gso_max_segs", "1"])?;
        }
        let emulator = start_emulator(&link, (&a_ns, &iface), (&b_ns, &iface), options)?;
        Ok(Self {
            emulator: Some(emulator),
            app: a_ns,
            link,
            addresses,
            host_iface: iface,
            leftovers: Leftovers { netns: Vec::new(), ..leftovers },
            nat: false,
        })
    }

    /// Whether the link bridges two interfaces of this namespace ([`Self::between`]
    /// given interfaces): there are no addresses then.
    pub fn bridges_interfaces(&self) -> bool {
        self.app.name().is_none()
    }

    /// The emulator, while it runs.
    pub fn emulator(&self) -> Option<&LinkEmulator> {
        self.emulator.as_ref()
    }

    /// Stops the emulator and returns its report; then removes everything (also
    /// when the emulator failed).
    pub fn stop(mut self) -> Result<EmulatorReport, NetlabError> {
        let report = match self.emulator.take() {
            Some(emulator) => emulator.stop(),
            None => Ok(EmulatorReport::default()),
        };
        drop(self);
        report
    }
}

impl Drop for LinkShell {
    fn drop(&mut self) {
        drop(self.emulator.take());
        // The namespaces delete themselves (owned handles); the rest is by name.
        Leftovers { netns: Vec::new(), ..self.leftovers.clone() }.remove();
    }
}

impl LinkShell {
    /// [`Self::between`] two interfaces of this namespace: a bridging emulator between them.
    fn between_interfaces(run: u32, a: &str, b: &str, options: ShellOptions) -> Result<Self, NetlabError> {
        let here = Netns::current();
        for iface in [a, b] {
            if Path::new("/sys/class/net").join(iface).join("brport").exists() {
                return Err(NetlabError::Emulator(format!("{iface} is a bridge's port (take it out of the bridge)")));
            }
            // (A link-local IPv6 address every interface that is up has routes nothing.)
            if !here.ip(&["-o", "addr", "show", "dev", iface, "scope", "global"])?.trim().is_empty() {
                return Err(NetlabError::Emulator(format!(
                    "{iface} holds an address: the kernel would carry traffic around the link (ip addr flush dev {iface})"
                )));
            }
            here.ip(&["link", "set", iface, "up"])?;
        }
        let config = options.emulator_config(Forwarding::Bridged);
        let emulator = LinkEmulator::start(&here, Port::bridged(a), Port::bridged(b), config)?;
        Ok(Self {
            emulator: Some(emulator),
            app: Netns::current(),
            link: Netns::current(),
            addresses: ShellAddresses::of(run),
            host_iface: b.to_string(),
            leftovers: Leftovers::default(),
            nat: false,
        })
    }
}

/// Starts the emulator in `link` between its two ends: `to-app`, whose peer is
/// `robot`'s interface (the uplink's sender), and `to-host`, whose peer is `base`'s.
fn start_emulator(
    link: &Netns,
    (robot, robot_iface): (&Netns, &str),
    (base, base_iface): (&Netns, &str),
    options: ShellOptions,
) -> Result<LinkEmulator, NetlabError> {
    let robot_side =
        Port { iface: LINK_TO_APP.into(), mac: mac_of(link, LINK_TO_APP)?, peer_mac: mac_of(robot, robot_iface)? };
    let base_side =
        Port { iface: LINK_TO_HOST.into(), mac: mac_of(link, LINK_TO_HOST)?, peer_mac: mac_of(base, base_iface)? };
    LinkEmulator::start(link, robot_side, base_side, options.emulator_config(Forwarding::Routed))
}

fn link_name(ns: &Netns) -> &str {
    ns.name().expect("created namespaces are named")
}

/// Masquerades the app's subnet towards every interface but the link's, in an `nft`
/// table of its own; returns the table's name.
fn masquerade(run: u32, a: &ShellAddresses, host_iface: &str) -> Result<String, NetlabError> {
    let table = nft_table(run);
    let host = Netns::current();
    let rules = format!(
        "table ip {table} {{\n  chain postrouting {{\n    type nat hook postrouting priority srcnat; policy accept;\n    \
         ip saddr {} oifname != \"{host_iface}\" masquerade\n  }}\n}}\n",
        a.app_subnet()
    );
    host.exec_with_input("nft", &["-f", "-"], &rules)?;
    Ok(table)
}

fn nft_table(run: u32) -> String {
    format!("bauxite_link_{run}")
}

/// Switches IPv4 forwarding on in this namespace; returns the value to restore, if
/// it was off.
fn switch_forwarding_on() -> Result<Option<String>, NetlabError> {
    let before = std::fs::read_to_string(IP_FORWARD).unwrap_or_default().trim().to_string();
    if before == "1" {
        return Ok(None);
    }
    Netns::current().sysctl("net.ipv4.ip_forward", "1")?;
    Ok(Some(before))
}

/// One direction's figures in `summary.json` (`bauxite link --record`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DirectionSummary {
    /// Packets that reached the link, and what became of them.
    pub arrived: u64,
    /// Delivered on.
    pub delivered: u64,
    /// Refused by the full queue.
    pub queue_full: u64,
    /// Lost on the link (after using its capacity).
    pub lost: u64,
    /// Delivered bytes (link size) over the run, in Mbit/s.
    pub delivered_mbps: f64,
    /// The capacity the link offered over the run, when it is known without a
    /// timeline (a constant rate or a trace; `null` when unlimited or changed).
    pub capacity_mbps: Option<f64>,
    /// `delivered_mbps` over `capacity_mbps`.
    pub utilisation: Option<f64>,
    /// Each packet's wait from its arrival to its departure from the bottleneck
    /// (queue and transmission), in ms: p50, p95, p99 (`null` without packets).
    pub queue_delay_ms: Option<[f64; 3]>,
    /// The emulator's own lateness: how long after the model's delivery time each
    /// delivered packet was actually sent on, in ms: p50, p99, max (`null` without
    /// packets). What the emulator adds to the link it emulates.
    pub emulator_late_ms: Option<[f64; 3]>,
}

/// `summary.json` of `bauxite link --record`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RecordSummary {
    /// How long the link ran, in seconds.
    pub duration_s: f64,
    /// App → host.
    pub uplink: DirectionSummary,
    /// Host → app.
    pub downlink: DirectionSummary,
    /// Whether the emulator ran at a real-time priority.
    pub realtime: bool,
}

/// The header of `fates.csv`.
const FATES_HEADER: &str = "direction,arrived_ns,len,fate,departed_ns,delivered_ns,sent_ns";
/// How often [`FateLog`] flushes what it wrote: a killed run loses at most this much.
const FATE_LOG_FLUSH: Duration = Duration::from_millis(100);

/// `fates.csv` written while the link runs: every packet's fate as the emulator
/// learns it (times in ns from the emulator's start), flushed every [`FATE_LOG_FLUSH`],
/// so that a `bauxite link` killed with SIGKILL leaves the record up to its last
/// tenth of a second. It ends when the emulator (the sender) stops.
pub struct FateLog {
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

impl FateLog {
    /// Creates `path` (with its header, on disk at once) and writes the fates that
    /// come on `fates` from a thread of its own.
    pub fn start(path: &Path, start_ns: u64, fates: Receiver<PacketFate>) -> std::io::Result<Self> {
        let file = std::fs::File::create(path)?;
        let mut csv = std::io::BufWriter::new(file);
        writeln!(csv, "{FATES_HEADER}")?;
        csv.flush()?;
        let thread = std::thread::spawn(move || {
            let mut flushed = Instant::now();
            loop {
                match fates.recv_timeout(FATE_LOG_FLUSH) {
                    Ok(fate) => {
                        // One write per line: a flush of the buffer (when it fills)
                        // then never splits a line, so a killed run leaves whole ones.
                        csv.write_all(format!("{}\n", fate_row(&fate, start_ns)).as_bytes())?;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                if flushed.elapsed() >= FATE_LOG_FLUSH {
                    csv.flush()?;
                    flushed = Instant::now();
                }
            }
            csv.into_inner().map_err(|e| e.into_error())?.sync_all()
        });
        Ok(Self { thread })
    }

    /// Waits until the emulator has stopped and every fate is on disk.
    pub fn finish(self) -> std::io::Result<()> {
        self.thread.join().map_err(|_| std::io::Error::other("the fate log's thread panicked"))?
    }
}

/// One row of `fates.csv`.
fn fate_row(f: &PacketFate, start_ns: u64) -> String {
    let since = |t: u64| t.saturating_sub(start_ns).to_string();
    let direction = match f.direction {
        Direction::Uplink => "up",
        Direction::Downlink => "down",
    };
    let (fate, departed, delivered, sent) = match f.fate {
        Fate::QueueFull => ("queue_full", String::new(), String::new(), String::new()),
        Fate::Lost { departed_ns } => ("lost", since(departed_ns), String::new(), String::new()),
        Fate::Delivered { departed_ns, delivered_ns, sent_ns } => {
            ("delivered", since(departed_ns), since(delivered_ns), since(sent_ns))
        }
        Fate::InFlight => ("in_flight", String::new(), String::new(), String::new()),
        Fate::TtlExpired => ("ttl_expired", String::new(), String::new(), String::new()),
    };
    format!("{direction},{},{},{fate},{departed},{delivered},{sent}", since(f.arrived_ns), f.len)
}

/// Writes `summary.json` into `dir` (where a [`FateLog`] wrote `fates.csv`), for a
/// link that ran until `until_ns` with `uplink` and `downlink` (a `timeline` that
/// changed the uplink makes its capacity unknown).
pub fn write_record(
    dir: &Path,
    report: &EmulatorReport,
    until_ns: u64,
    [uplink, downlink]: [&LinkConfig; 2],
    uplink_changed: bool,
) -> std::io::Result<RecordSummary> {
    let start = report.start_ns;
    let duration_ns = until_ns.saturating_sub(start).max(1);
    let direction = |which, counters: &DirectionCounters, config: &LinkConfig, changed: bool| {
        let delivered_mbps = counters.delivered_bytes as f64 * 8.0 / (duration_ns as f64 / 1e9) / 1e6;
        let capacity_mbps = if changed { None } else { capacity_mbps(config, duration_ns) };
        let waits: Vec<f64> =
            report.fates.iter().filter(|f| f.direction == which).filter_map(PacketFate::wait_ms).collect();
        let queue_delay = bauxite_core::stats::Summary::of(&waits);
        let late: Vec<f64> = (report.fates.iter().filter(|f| f.direction == which))
            .filter_map(|f| match f.fate {
                Fate::Delivered { delivered_ns, sent_ns, .. } => {
                    Some(sent_ns.saturating_sub(delivered_ns) as f64 / 1e6)
                }
                _ => None,
            })
            .collect();
        let late = bauxite_core::stats::Summary::of(&late);
        DirectionSummary {
            arrived: counters.arrived,
            delivered: counters.delivered,
            queue_full: counters.queue_full,
            lost: counters.lost,
            delivered_mbps,
            capacity_mbps,
            utilisation: capacity_mbps.filter(|&c| c > 0.0).map(|c| delivered_mbps / c),
            queue_delay_ms: (queue_delay.count > 0).then_some([queue_delay.p50, queue_delay.p95, queue_delay.p99]),
            emulator_late_ms: (late.count > 0).then_some([late.p50, late.p99, late.max]),
        }
    };
    let summary = RecordSummary {
        duration_s: duration_ns as f64 / 1e9,
        uplink: direction(Direction::Uplink, &report.uplink, uplink, uplink_changed),
        downlink: direction(Direction::Downlink, &report.downlink, downlink, false),
        realtime: report.realtime,
    };
    let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("summary.json"), json + "\n")?;
    Ok(summary)
}

/// One direction of the link over one [`BIN_NS`] bin of a run: a message of
/// `bauxite link --record`'s `link.mcap`, stamped with the bin's end (ns from the
/// emulator's start).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LinkInterval {
    /// The capacity the link offered in the bin, Mbit/s (`null` where unlimited).
    pub capacity_mbps: Option<f64>,
    /// What it delivered in the bin (link size: IPv4 length + 4), Mbit/s.
    pub delivered_mbps: f64,
    /// The median wait (queue and transmission) of the packets that left the
    /// bottleneck in the bin, ms (`null` without any).
    pub queue_delay_p50_ms: Option<f64>,
    /// …and the longest.
    pub queue_delay_max_ms: Option<f64>,
    /// Packets that reached the link in the bin.
    pub arrived: u64,
    /// Of those, refused by the full queue.
    pub queue_full: u64,
    /// Packets lost on the link, in the bin they left the bottleneck.
    pub lost: u64,
}

/// `direction`'s [`LinkInterval`]s from the emulator's start to the last whole bin
/// before `until_ns`, with the
/// capacity per bin in bytes (`bauxite_core::figures::LinkFacts::capacity_bytes`:
/// infinite where unlimited; bins beyond it unknown).
pub fn intervals(
    report: &EmulatorReport,
    until_ns: u64,
    direction: Direction,
    capacity_bytes: &[f64],
) -> Vec<LinkInterval> {
    // Whole bins only: a last partial one would read as a fall of the rates.
    let bins = (until_ns.saturating_sub(report.start_ns) / BIN_NS) as usize;
    let bin_of = |t: u64| (t.saturating_sub(report.start_ns) / BIN_NS) as usize;
    let mut delivered = vec![0u64; bins];
    let mut waits = vec![Vec::new(); bins];
    let mut arrived = vec![0u64; bins];
    let mut queue_full = vec![0u64; bins];
    let mut lost = vec![0u64; bins];
    for f in report.fates.iter().filter(|f| f.direction == direction) {
        if let Some(n) = arrived.get_mut(bin_of(f.arrived_ns)) {
            *n += 1;
        }
        let departed = match f.fate {
            Fate::QueueFull => {
                if let Some(n) = queue_full.get_mut(bin_of(f.arrived_ns)) {
                    *n += 1;
                }
                continue;
            }
            Fate::Lost { departed_ns } => {
                if let Some(n) = lost.get_mut(bin_of(departed_ns)) {
                    *n += 1;
                }
                departed_ns
            }
            Fate::Delivered { departed_ns, .. } => {
                if let Some(bytes) = delivered.get_mut(bin_of(departed_ns)) {
                    *bytes += u64::from(f.len);
                }
                departed_ns
            }
            Fate::InFlight | Fate::TtlExpired => continue,
        };
        if let (Some(w), Some(wait)) = (waits.get_mut(bin_of(departed)), f.wait_ms()) {
            w.push(wait);
        }
    }
    let mbps = |bytes: f64| bytes * 8.0 / (BIN_NS as f64 / 1e9) / 1e6;
    (0..bins)
        .map(|i| {
            let wait = bauxite_core::stats::Summary::of(&waits[i]);
            LinkInterval {
                capacity_mbps: capacity_bytes.get(i).filter(|c| c.is_finite()).map(|&c| mbps(c)),
                delivered_mbps: mbps(delivered[i] as f64),
                queue_delay_p50_ms: (wait.count > 0).then_some(wait.p50),
                queue_delay_max_ms: (wait.count > 0).then_some(wait.max),
                arrived: arrived[i],
                queue_full: queue_full[i],
                lost: lost[i],
            }
        })
        .collect()
}

/// The capacity `config` offers over its first `duration_ns`, in Mbit/s.
fn capacity_mbps(config: &LinkConfig, duration_ns: u64) -> Option<f64> {
    match &config.rate {
        LinkRate::Unlimited => None,
        LinkRate::Constant(rate) => Some(rate.bps() as f64 / 1e6),
        LinkRate::Trace(trace) => {
            let bytes = trace.first_after_ns(duration_ns) as f64 * f64::from(OPPORTUNITY_BYTES);
            Some(bytes * 8.0 / (duration_ns as f64 / 1e9) / 1e6)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_run_gets_its_own_subnet_of_the_shared_address_space() {
        let a = ShellAddresses::of(0);
        assert_eq!(
            (a.gateway, a.app, a.link_host_side, a.host),
            (
                Ipv4Addr::new(100, 64, 0, 1),
                Ipv4Addr::new(100, 64, 0, 2),
                Ipv4Addr::new(100, 64, 0, 5),
                Ipv4Addr::new(100, 64, 0, 6)
            )
        );
        assert_eq!(a.app_subnet(), "100.64.0.0/30");
        let b = ShellAddresses::of(4_000_000);
        assert_eq!(
            b.app_subnet(),
            format!("{}/30", Ipv4Addr::from(u32::from(Ipv4Addr::new(100, 64, 0, 0)) + (4_000_000 % (1 << 19)) * 8))
        );
        assert!(
            u32::from(ShellAddresses::of(u32::MAX).host) < u32::from(Ipv4Addr::new(100, 128, 0, 0)),
            "inside the /10"
        );
    }

    #[test]
    fn the_reaper_gets_every_leftover_by_name() {
        let leftovers = Leftovers {
            netns: vec!["bxl-1-app".into(), "bxl-1-link".into()],
            host_iface: Some("bxl-1".into()),
            nft_table: Some("bauxite_link_1".into()),
            ip_forward: Some("0".into()),
        };
        assert_eq!(
            leftovers.to_args(),
            [
                "--netns",
                "bxl-1-app",
                "--netns",
                "bxl-1-link",
                "--host-iface",
                "bxl-1",
                "--nft-table",
                "bauxite_link_1",
                "--ip-forward",
                "0"
            ]
        );
    }
}

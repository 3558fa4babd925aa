//! `bauxite up`, `down` and `status`: putting a profile on an interface, keeping it
//! under control, and taking it off again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::net::SocketAddr;
use std::sync::mpsc::Receiver;

use bauxite_core::{BitRate, Match, PortRange, PortSide, Protocol, RateSetting, ValidatedProfile};
use bauxite_ebpf::{Control, Datapath, LaneStats, TcAttachMode};
use bauxite_sys::{Netns, monotonic_ns};
use tracing::{debug, info, warn};

use crate::autorate::{self, RateController, RttSample};

use crate::ShaperError;
use crate::class_stats::{ClassStats, ClassStatsReader};
use crate::controller::{Controller, LaneSample, Transition};
use crate::plan::{htb_tree, lane_minor, lane_policy, probability_to_u32, rule_set};
use crate::state::{self, LaneStatus, ShaperStatus};
use crate::tc::{self, HTB_MAJOR, classid};

/// What `up` is asked to do.
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// The egress interface toward the bottleneck.
    pub iface: String,
    /// The profile.
    pub profile: ValidatedProfile,
    /// An ingress interface for the XDP gateway program (forwarding boxes).
    pub gateway_iface: Option<String>,
    /// How long the kernel programs keep obeying a daemon that stopped renewing
    /// its lease; after that they step aside and traffic flows unshaped.
    pub lease: Duration,
}

impl UpOptions {
    /// Options for `profile` on `iface` with the default lease.
    pub fn new(iface: impl Into<String>, profile: ValidatedProfile) -> Self {
        Self { iface: iface.into(), profile, gateway_iface: None, lease: Duration::from_secs(1) }
    }
}

/// How often the published status file is refreshed.
const STATUS_INTERVAL: Duration = Duration::from_millis(100);

/// Fails unless running as root.
pub fn require_root(what: &str) -> Result<(), ShaperError> {
    if bauxite_sys::is_root() { Ok(()) } else { Err(ShaperError::NotRoot(what.to_string())) }
}

/// The interface's index, or a clear error when there is no such interface.
pub fn ifindex(iface: &str) -> Result<u32, ShaperError> {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/ifindex"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| ShaperError::NoSuchInterface(iface.to_string()))
}

/// Whether packets on `iface` start with an Ethernet header (Ethernet, veth,
/// loopback) rather than raw IP (tun, wwan modems, WireGuard).
fn has_l2_header(iface: &str) -> bool {
    const ARPHRD_ETHER: u32 = 1;
    const ARPHRD_LOOPBACK: u32 = 772;
    let kind =
        std::fs::read_to_string(format!("/sys/class/net/{iface}/type")).ok().and_then(|s| s.trim().parse::<u32>().ok());
    matches!(kind, Some(ARPHRD_ETHER | ARPHRD_LOOPBACK))
}

fn mtu(iface: &str) -> u32 {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/mtu"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1500)
}

/// Everything `up` changed on the interface, undone in reverse on the way out.
struct Installed {
    ns: Netns,
    iface: String,
    original_gso: Option<u32>,
    htb: bool,
}

impl Installed {
    fn undo(&mut self) {
        if self.htb {
            if let Err(e) = tc::remove_root_if_ours(&self.ns, &self.iface) {
                warn!("removing the HTB tree from {}: {e}", self.iface);
            }
            self.htb = false;
        }
        if let Some(gso) = self.original_gso.take()
            && let Err(e) = tc::set_gso_max_size(&self.ns, &self.iface, gso)
        {
            warn!("restoring gso_max_size on {}: {e}", self.iface);
        }
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        self.undo();
    }
}

/// Puts the profile on the interface and runs its control loop until `stop` is set;
/// then takes everything off again. Errors leave the interface as it was.
pub fn run_up(options: UpOptions, stop: Arc<AtomicBool>) -> Result<(), ShaperError> {
    require_root("`bauxite up` attaches eBPF programs and qdiscs")?;
    let UpOptions { iface, mut profile, gateway_iface, lease } = options;
    let reflector = match profile.rate {
        RateSetting::Auto => Some(with_probe_rule(&mut profile)?),
        RateSetting::Fixed(_) => None,
    };
    let index = ifindex(&iface)?;
    if let Some(gw) = &gateway_iface {
        ifindex(gw)?;
    }
    let mut link_rate = match profile.rate {
        RateSetting::Fixed(r) => r,
        RateSetting::Auto => profile.auto_rate.base_rate,
    };
    let mut rate = profile.shaped_rate(link_rate);

    let ns = Netns::current();
    if let Some(previous) = state::load(&iface).ok().flatten()
        && previous.daemon_alive()
    {
        return Err(ShaperError::AlreadyRunning { iface, pid: previous.pid });
    }
    // Bauxite replaces the root qdisc: only the kernel's default (handle 0:) or its
    // own leftover, never a tree someone configured on purpose.
    if let Some((kind, major)) = tc::root_qdisc(&ns, &iface)?
        && major != 0
        && major != HTB_MAJOR
    {
        return Err(ShaperError::ForeignQdisc { iface, kind, handle: format!("{major:x}:") });
    }
    // A previous daemon that was killed may have left its tree and settings behind.
    down(&iface)?;

    let mut datapath = Datapath::load()?;
    datapath.maps.set_rules(&rule_set(&profile))?;
    for i in 0..profile.lanes.len() {
        datapath.maps.set_lane(i, &lane_policy(&profile, i))?;
    }
    let mut control = Control {
        heartbeat_ns: monotonic_ns(),
        lease_ns: lease.as_nanos() as u64,
        congested: 0,
        l2_header: u32::from(has_l2_header(&iface)),
    };
    datapath.maps.set_control(&control)?;

    let original_gso = tc::gso_max_size(&ns, &iface)?;
    let mut installed = Installed { ns: Netns::current(), iface: iface.clone(), original_gso: None, htb: false };
    // HTB does not split GSO super-packets: a 64 KB one would hold the link for
    // 350 ms at 1.5 Mbit/s. One MTU per packet keeps lanes interleaving finely.
    tc::set_gso_max_size(&ns, &iface, mtu(&iface))?;
    installed.original_gso = Some(original_gso);
    let tree = htb_tree(&profile, &iface, rate);
    installed.htb = true;
    ns.tc_batch(&tree.install_lines())?;
    let mode = datapath.attach_egress(&iface)?;
    if let Some(gw) = &gateway_iface {
        datapath.attach_xdp(gw)?;
    }
    info!(
        iface,
        profile = profile.name,
        link_rate = %link_rate,
        shaped_rate = %rate,
        attach = ?mode,
        gateway = gateway_iface.as_deref().unwrap_or("-"),
        "shaper up"
    );

    let mut status = ShaperStatus {
        iface: iface.clone(),
        pid: std::process::id(),
        profile: profile.name.clone(),
        rate_mode: match profile.rate {
            RateSetting::Fixed(_) => "fixed",
            RateSetting::Auto => "auto",
        }
        .into(),
        link_rate_bps: link_rate.bps(),
        rate_bps: rate.bps(),
        attach_mode: match mode {
            TcAttachMode::Tcx => "tcx",
            TcAttachMode::Clsact => "clsact",
        }
        .into(),
        gateway_iface: gateway_iface.clone(),
        original_gso_max_size: original_gso,
        lanes: profile
            .lanes
            .iter()
            .enumerate()
            .map(|(i, l)| LaneStatus {
                name: l.name.clone(),
                class: format!("{HTB_MAJOR:x}:{:x}", lane_minor(i)),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };

    let session = Session { iface: iface.clone(), stop_probes: Arc::new(AtomicBool::new(false)) };
    let stop_probes = &session.stop_probes;
    let mut auto = match reflector {
        Some(addr) => {
            let (tx, rx) = std::sync::mpsc::channel();
            autorate::start_prober(addr, &profile.auto_rate, tx, Arc::clone(stop_probes))?;
            info!(iface, reflector = %addr, "rate: auto, probing the link");
            Some(AutoRate {
                controller: RateController::new(&profile.auto_rate).with_headroom(profile.headroom),
                samples: rx,
                last_answer: Instant::now(),
            })
        }
        None => None,
    };
    let silence = (profile.auto_rate.probe_interval * 10).max(Duration::from_millis(200));

    let mut reader = ClassStatsReader::new().map_err(ShaperError::io("opening a netlink socket"))?;
    let mut controller = Controller::new(&profile, rate);
    let started = Instant::now();
    let loop_start_ns = monotonic_ns();
    let mut last_status = Instant::now() - STATUS_INTERVAL;
    let mut written_probs = vec![0u32; profile.lanes.len()];
    let poll = profile.congestion.poll_interval;

    while !stop.load(Ordering::Relaxed) {
        let classes = reader.dump(index).map_err(ShaperError::io(format!("reading class statistics of {iface}")))?;
        let Some(lane_classes) = lane_classes(&classes, profile.lanes.len()) else {
            // Someone removed or replaced our tree: the kernel programs keep steering,
            // but there is nothing to measure; say so and keep the lease alive.
            warn!(iface, "Bauxite's HTB classes are missing from {iface}; not measuring");
            control.heartbeat_ns = monotonic_ns();
            datapath.maps.set_control(&control)?;
            std::thread::sleep(poll.max(Duration::from_millis(100)));
            continue;
        };
        let samples: Vec<LaneSample> = lane_classes
            .iter()
            .map(|c| LaneSample {
                sent_bytes: c.bytes,
                backlog_bytes: u64::from(c.backlog),
                backlog_packets: u64::from(c.qlen),
            })
            .collect();
        match controller.observe(started.elapsed(), &samples) {
            Some(Transition::Entered) => {
                status.congestion_episodes += 1;
                info!(iface, "congested: discarding droppable lanes early");
            }
            Some(Transition::Left) => info!(iface, "congestion cleared"),
            None => {}
        }
        let verdicts = controller.verdicts();
        for (i, v) in verdicts.iter().enumerate() {
            let prob = probability_to_u32(v.drop_probability);
            if prob != written_probs[i] {
                let mut policy = lane_policy(&profile, i);
                policy.drop_prob = prob;
                datapath.maps.set_lane(i, &policy)?;
                written_probs[i] = prob;
            }
        }
        if let Some(auto) = auto.as_mut() {
            let achieved = BitRate::from_bps(verdicts.iter().map(|v| v.rate_bps).sum::<f64>() as u64);
            let now = started.elapsed();
            let mut new_rate = None;
            while let Ok(sample) = auto.samples.try_recv() {
                auto.last_answer = Instant::now();
                let at = Duration::from_nanos(sample.received_ns.saturating_sub(loop_start_ns));
                new_rate = auto.controller.on_rtt(at, sample.rtt, achieved).or(new_rate);
                tracing::debug!(
                    t_ms = at.as_millis() as u64,
                    rtt_us = sample.rtt.as_micros() as u64,
                    achieved_bps = achieved.bps(),
                    rate_bps = auto.controller.rate().bps(),
                    "rate probe"
                );
            }
            if auto.last_answer.elapsed() > silence {
                new_rate = auto.controller.on_silence(now, achieved).or(new_rate);
            }
            if let Some(new_link_rate) = new_rate {
                link_rate = new_link_rate;
                rate = profile.shaped_rate(link_rate);
                ns.tc_batch(&htb_tree(&profile, &iface, rate).rate_lines())?;
                controller.set_link_rate(rate);
                status.link_rate_bps = link_rate.bps();
                status.rate_bps = rate.bps();
                debug!(iface, link_rate = %link_rate, shaped_rate = %rate, "link rate estimate changed");
            }
        }
        control.congested = u32::from(controller.congested());
        control.heartbeat_ns = monotonic_ns();
        datapath.maps.set_control(&control)?;

        if last_status.elapsed() >= STATUS_INTERVAL {
            last_status = Instant::now();
            let counters = datapath.maps.stats()?;
            let gateway = datapath.maps.gateway_stats()?;
            fill_status(&mut status, &counters, &gateway, &lane_classes, &verdicts, controller.congested());
            if let Err(e) = state::save(&status) {
                warn!("writing {}: {e}", state::state_path(&iface).display());
            }
        }
        std::thread::sleep(poll);
    }

    info!(iface, "shutting down");
    datapath.detach()?;
    drop(datapath);
    installed.undo();
    drop(session);
    Ok(())
}

/// The classes of the first `lanes` lanes, in lane order; `None` if any is missing.
fn lane_classes(classes: &[ClassStats], lanes: usize) -> Option<Vec<ClassStats>> {
    (0..lanes).map(|i| classes.iter().find(|c| c.classid == classid(HTB_MAJOR, lane_minor(i))).copied()).collect()
}

fn fill_status(
    status: &mut ShaperStatus,
    counters: &[LaneStats],
    gateway: &[LaneStats],
    classes: &[ClassStats],
    verdicts: &[crate::controller::LaneVerdict],
    congested: bool,
) {
    status.congested = congested;
    status.updated_unix_ms = state::unix_ms();
    for (i, lane) in status.lanes.iter_mut().enumerate() {
        let k = counters[i];
        let c = classes[i];
        let v = verdicts[i];
        lane.packets = k.packets;
        lane.bytes = k.bytes;
        lane.early_drops = k.early_drops;
        lane.gateway_packets = gateway[i].packets;
        lane.gateway_drops = gateway[i].early_drops;
        lane.odd_packets = k.odd_packets;
        lane.queue_drops = c.drops;
        lane.backlog_bytes = u64::from(c.backlog);
        lane.backlog_packets = u64::from(c.qlen);
        lane.rate_bps = v.rate_bps;
        lane.queue_delay_ms = v.queue_delay.as_secs_f64() * 1e3;
        lane.drop_probability = v.drop_probability;
    }
}

/// What a running daemon owns besides the interface: its probe threads and its state
/// file. Dropped on every way out of the loop, errors included.
struct Session {
    iface: String,
    stop_probes: Arc<AtomicBool>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop_probes.store(true, Ordering::Relaxed);
        if let Err(e) = state::remove(&self.iface) {
            warn!("removing the state file of {}: {e}", self.iface);
        }
    }
}

/// The state of `rate: auto` inside the daemon loop.
struct AutoRate {
    controller: RateController,
    samples: Receiver<RttSample>,
    last_answer: Instant,
}

/// Puts the auto-rate probes in the most urgent lane, ahead of every other rule, so
/// that they measure the link's queue and not Bauxite's; returns the reflector.
fn with_probe_rule(profile: &mut ValidatedProfile) -> Result<SocketAddr, ShaperError> {
    let addr = profile.reflector().expect("validated: rate auto has a reflector address");
    let ports = PortRange { first: addr.port(), last: addr.port() };
    let probe = Match::Port { protocol: Protocol::Udp, ports, side: PortSide::Dst };
    profile.prepend_rule(0, probe).map_err(ShaperError::Profile)?;
    Ok(addr)
}

/// What `down` found and removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DownReport {
    /// A running daemon was asked to stop.
    pub stopped_daemon: Option<u32>,
    /// Bauxite's HTB root qdisc was removed.
    pub removed_htb: bool,
    /// A clsact filter of the classifier was removed (kernels without tcx).
    pub removed_filter: bool,
    /// `gso_max_size` was restored to this.
    pub restored_gso: Option<u32>,
    /// A state file was removed.
    pub removed_state: bool,
}

impl std::fmt::Display for DownReport {
    /// "stopped daemon 1234, removed the HTB tree, restored gso_max_size 65536, ..."
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut done = Vec::new();
        if let Some(pid) = self.stopped_daemon {
            done.push(format!("stopped daemon {pid}"));
        }
        if self.removed_filter {
            done.push("removed the clsact filter".into());
        }
        if self.removed_htb {
            done.push("removed the HTB tree".into());
        }
        if let Some(gso) = self.restored_gso {
            done.push(format!("restored gso_max_size {gso}"));
        }
        if self.removed_state {
            done.push("removed the state file".into());
        }
        if done.is_empty() { f.write_str("nothing to remove") } else { f.write_str(&done.join(", ")) }
    }
}

impl DownReport {
    /// Whether anything was left to clean up.
    pub fn anything(&self) -> bool {
        self.stopped_daemon.is_some()
            || self.removed_htb
            || self.removed_filter
            || self.restored_gso.is_some()
            || self.removed_state
    }
}

/// Removes everything Bauxite attached to `iface`; safe to run any number of times,
/// with or without a daemon, also after the daemon was killed.
pub fn down(iface: &str) -> Result<DownReport, ShaperError> {
    require_root("`bauxite down` removes qdiscs and eBPF programs")?;
    ifindex(iface)?;
    let ns = Netns::current();
    let mut report = DownReport::default();
    let previous = match state::load(iface) {
        Ok(previous) => previous,
        Err(e) => {
            warn!("{e}; removing it");
            state::remove(iface).map_err(ShaperError::io("removing the state file"))?;
            None
        }
    };
    if let Some(prev) = &previous
        && prev.daemon_alive()
        && prev.pid != std::process::id()
    {
        // A live daemon cleans up after itself; ask it to and wait a little.
        #[allow(unsafe_code)]
        // SAFETY: kill(2) with a pid read from our own state file and SIGTERM.
        unsafe {
            libc::kill(prev.pid as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while prev.daemon_alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if prev.daemon_alive() {
            return Err(ShaperError::AlreadyRunning { iface: iface.to_string(), pid: prev.pid });
        }
        report.stopped_daemon = Some(prev.pid);
    }
    // tcx links die with their daemon; clsact filters (older kernels) stay.
    if !bauxite_ebpf::kernel_has_tcx() {
        report.removed_filter = bauxite_ebpf::detach_clsact_filter(iface);
    }
    report.removed_htb = tc::remove_root_if_ours(&ns, iface)?;
    if let Some(prev) = &previous {
        let current = tc::gso_max_size(&ns, iface)?;
        if current != prev.original_gso_max_size {
            tc::set_gso_max_size(&ns, iface, prev.original_gso_max_size)?;
            report.restored_gso = Some(prev.original_gso_max_size);
        }
        state::remove(iface).map_err(ShaperError::io("removing the state file"))?;
        report.removed_state = true;
    }
    Ok(report)
}

/// What `status` shows: the daemon's last snapshot, live queue counters, and
/// whether anything is left behind by a daemon that is gone.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StatusReport {
    /// The interface.
    pub iface: String,
    /// `running`, `dead` (killed; leftovers may remain) or `down`.
    pub daemon: String,
    /// The last snapshot, with queue counters refreshed from the kernel.
    pub shaper: Option<ShaperStatus>,
    /// Bauxite's HTB tree is on the interface.
    pub htb_installed: bool,
    /// Age of the snapshot in milliseconds.
    pub snapshot_age_ms: Option<u64>,
}

/// Gathers the status of `iface`.
pub fn status(iface: &str) -> Result<StatusReport, ShaperError> {
    let index = ifindex(iface)?;
    let ns = Netns::current();
    let htb_installed =
        matches!(tc::root_qdisc(&ns, iface)?, Some((kind, major)) if kind == "htb" && major == HTB_MAJOR);
    let mut shaper = state::load(iface).map_err(ShaperError::io("reading the state file"))?;
    let daemon = match &shaper {
        Some(s) if s.daemon_alive() => "running",
        Some(_) => "dead",
        None if htb_installed => "dead",
        None => "down",
    };
    let snapshot_age_ms = shaper.as_ref().map(|s| s.age().as_millis() as u64);
    if let Some(s) = shaper.as_mut()
        && htb_installed
        && let Ok(classes) = ClassStatsReader::new().and_then(|mut r| r.dump(index))
        && let Some(lane_classes) = lane_classes(&classes, s.lanes.len())
    {
        for (lane, c) in s.lanes.iter_mut().zip(lane_classes) {
            lane.queue_drops = c.drops;
            lane.backlog_bytes = u64::from(c.backlog);
            lane.backlog_packets = u64::from(c.qlen);
        }
    }
    Ok(StatusReport { iface: iface.to_string(), daemon: daemon.into(), shaper, htb_installed, snapshot_age_ms })
}

impl std::fmt::Display for StatusReport {
    /// A `tc -s`-like table.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "bauxite on {}: daemon {}", self.iface, self.daemon)?;
        let Some(s) = &self.shaper else {
            if self.htb_installed {
                writeln!(
                    f,
                    "  Bauxite's HTB tree is still installed; `bauxite down --iface {}` removes it",
                    self.iface
                )?;
            }
            return Ok(());
        };
        writeln!(
            f,
            "  profile {}  link {} ({})  shaped to {}  attach {}  congested {}  episodes {}  snapshot {} ms old",
            s.profile,
            BitRate::from_bps(s.link_rate_bps),
            s.rate_mode,
            BitRate::from_bps(s.rate_bps),
            s.attach_mode,
            if s.congested { "yes" } else { "no" },
            s.congestion_episodes,
            self.snapshot_age_ms.unwrap_or(0)
        )?;
        if self.daemon == "dead" {
            writeln!(
                f,
                "  the daemon is gone; the classifier has stepped aside; `bauxite down --iface {}` cleans up",
                self.iface
            )?;
        }
        writeln!(
            f,
            "  {:<10} {:>6} {:>10} {:>12} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7}",
            "lane", "class", "packets", "bytes", "early", "qdrops", "rate", "backlog", "delay_ms", "p_drop"
        )?;
        for l in &s.lanes {
            writeln!(
                f,
                "  {:<10} {:>6} {:>10} {:>12} {:>9} {:>9} {:>10} {:>8}b {:>9.2} {:>7.4}",
                l.name,
                l.class,
                l.packets,
                l.bytes,
                l.early_drops,
                l.queue_drops,
                format!("{:.0}kbit", l.rate_bps / 1e3),
                l.backlog_bytes,
                l.queue_delay_ms,
                l.drop_probability
            )?;
        }
        if let Some(gw) = &s.gateway_iface {
            writeln!(f, "  XDP gateway on {gw}:")?;
            for l in &s.lanes {
                writeln!(f, "  {:<10} {:>10} packets {:>9} dropped early", l.name, l.gateway_packets, l.gateway_drops)?;
            }
        }
        Ok(())
    }
}

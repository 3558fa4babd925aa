//! `bauxite up`, `down` and `status`: putting a profile on an interface, keeping it
//! under control, and taking it off again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::sync::mpsc::Receiver;

use bauxite_core::{
    BitRate, DaemonState, Dscp, ICMP_PROBE_DSCP, LaneSnapshot, Match, PortRange, PortSide, Protocol, RateSetting,
    Reflector, ShaperSnapshot, ValidatedProfile,
};
use bauxite_ebpf::{AttachRequest, Control, Datapath, LaneStats, TC_PROGRAM, TcAttachMode};
use bauxite_sys::{Netns, monotonic_ns};
use tracing::{debug, error, info, warn};

use crate::autorate::{CountedAt, OneWayDelays, Probers, RateController, RttSample, SilenceHold};
use crate::reflect::{ProbeKey, key_of};
use crate::reload::{self, Reload};

use crate::ShaperError;
use crate::controller::{Controller, LaneSample, Transition};
use crate::features::{self, FeatureReport, KernelFacts};
use crate::plan::{Placement, htb_tree, lane_minor, lane_policy, probability_to_u32, rule_set};
use crate::rtnl::{ClassStats, Link, LinkWatch, RootQdisc, Rtnl};
use crate::state::{self, Owner, StateDir, StateFile};
use crate::tc::{self, HTB_MAJOR, MARKER_MINOR, classid};

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
    /// With `rate: auto`, every probe's round-trip time goes here (`bauxite up --metrics`).
    pub probe_rtt: Option<prometheus_client::metrics::histogram::Histogram>,
    /// Where to re-read the profile when asked (`SIGHUP`); `None`: no live reload.
    pub reload: Option<Reload>,
    /// How to attach the classifier (`--attach`).
    pub attach: AttachRequest,
    /// The interface whose ingress `iface` (the downlink's IFB device) carries: its
    /// packets start as that interface's do, not as the IFB's, and the bytes `rate: auto`
    /// counts are those that arrived over the link. `None`: `iface` is an uplink.
    redirected_from: Option<Link>,
}

impl UpOptions {
    /// Options for `profile` on `iface` with the default lease.
    pub fn new(iface: impl Into<String>, profile: ValidatedProfile) -> Self {
        Self {
            iface: iface.into(),
            profile,
            gateway_iface: None,
            lease: Duration::from_secs(1),
            probe_rtt: None,
            reload: None,
            attach: AttachRequest::Auto,
            redirected_from: None,
        }
    }
}

/// How often the published status file is refreshed.
const STATUS_INTERVAL: Duration = Duration::from_millis(100);

/// Fails unless running as root.
pub fn require_root(what: &str) -> Result<(), ShaperError> {
    if bauxite_sys::is_root() { Ok(()) } else { Err(ShaperError::NotRoot(what.to_string())) }
}

/// Opens a netlink socket in the calling thread's network namespace.
fn open_rtnl() -> Result<Rtnl, ShaperError> {
    Rtnl::new().map_err(ShaperError::io("opening a netlink socket"))
}

/// The interface called `iface`, or a clear error when there is none.
fn find_link(rtnl: &mut Rtnl, iface: &str) -> Result<Link, ShaperError> {
    rtnl.link(iface)
        .map_err(ShaperError::io(format!("reading interface {iface}")))?
        .ok_or_else(|| ShaperError::NoSuchInterface(iface.to_string()))
}

/// What the root of an interface is, as far as Bauxite is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// No root qdisc, or the kernel's default (handle `0:`).
    Default,
    /// Bauxite's own tree: root `htb ba:` with the marker class `ba:baba`.
    Ours,
    /// A root qdisc someone else configured (an `htb ba:` without the marker too).
    Foreign(RootQdisc),
}

/// Reads the root of interface `index`.
pub fn tree_on(rtnl: &mut Rtnl, index: u32) -> std::io::Result<Tree> {
    Ok(match rtnl.root_qdisc(index)? {
        None => Tree::Default,
        Some(q) if q.major == 0 => Tree::Default,
        Some(q)
            if q.kind == "htb"
                && q.major == HTB_MAJOR
                && rtnl.classes(index)?.iter().any(|c| c.classid == classid(HTB_MAJOR, MARKER_MINOR)) =>
        {
            Tree::Ours
        }
        Some(q) => Tree::Foreign(q),
    })
}

/// The error for a root qdisc that is not Bauxite's.
fn foreign(iface: &str, q: RootQdisc) -> ShaperError {
    if q.kind == "htb" && q.major == HTB_MAJOR {
        ShaperError::ForeignBauxiteHandle { iface: iface.to_string() }
    } else {
        ShaperError::ForeignQdisc { iface: iface.to_string(), kind: q.kind, handle: format!("{:x}:", q.major) }
    }
}

/// Everything `up` changed on the interface, undone in reverse on the way out, and
/// only on the interface `up` shaped: one deleted and recreated under the same name
/// (a new index) is someone else's.
struct Installed {
    ns: Netns,
    iface: String,
    ifindex: u32,
    original_gso: Option<u32>,
    htb: bool,
    /// `up` added the clsact qdisc (removed last, once the classifier is off it).
    clsact: bool,
}

impl Installed {
    fn undo(&mut self) {
        if !self.htb && self.original_gso.is_none() && !self.clsact {
            return;
        }
        let mut rtnl = match Rtnl::new() {
            Ok(r) => r,
            Err(e) => return warn!("opening a netlink socket to clean up {}: {e}", self.iface),
        };
        match rtnl.link(&self.iface) {
            Ok(Some(link)) if link.index == self.ifindex => {}
            _ => {
                self.htb = false;
                self.original_gso = None;
                self.clsact = false;
                return warn!("{} (index {}) is gone; leaving whatever has its name alone", self.iface, self.ifindex);
            }
        }
        if self.htb {
            if matches!(tree_on(&mut rtnl, self.ifindex), Ok(Tree::Ours))
                && let Err(e) = tc::delete_root(&self.ns, &self.iface)
            {
                warn!("removing the HTB tree from {}: {e}", self.iface);
            }
            self.htb = false;
        }
        if let Some(gso) = self.original_gso.take()
            && let Err(e) = tc::set_gso_max_size(&self.ns, &self.iface, gso)
        {
            warn!("restoring gso_max_size on {}: {e}", self.iface);
        }
        if std::mem::take(&mut self.clsact)
            && let Err(e) = tc::delete_clsact_if_unused(&self.ns, &self.iface)
        {
            warn!("removing the clsact qdisc Bauxite added to {}: {e}", self.iface);
        }
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        self.undo();
    }
}

/// The pid of a live daemon whose state file is `name`'s, if one is: about the
/// interface with index `ifindex` when given (one of that name deleted and recreated is
/// another), about any interface of that name when not.
fn running_daemon(state_dir: &StateDir, name: &str, ifindex: Option<u32>) -> Option<u32> {
    let previous = state_dir.load(name).ok().flatten()?;
    let same = ifindex.is_none_or(|index| previous.owner.ifindex == index);
    (same && previous.owner.daemon_alive()).then_some(previous.owner.pid)
}

/// What [`preflight`] established: a valid profile, an interface that exists and
/// carries nothing Bauxite may not replace, and no other daemon on it.
struct Preflight {
    iface: String,
    profile: ValidatedProfile,
    gateway_iface: Option<String>,
    lease: Duration,
    /// `rate: auto`'s reflectors, the one probed first: none with a fixed rate.
    reflectors: Vec<Reflector>,
    /// The probes' key (`auto_rate.key_file`), read before anything is attached.
    probe_key: Option<ProbeKey>,
    probe_rtt: Option<prometheus_client::metrics::histogram::Histogram>,
    reload: Option<Reload>,
    link: Link,
    /// Packets start with an Ethernet header (see [`UpOptions::redirected_from`]).
    l2_header: bool,
    /// This shaper is the downlink's, on its IFB device.
    ingress: bool,
    state_dir: StateDir,
    /// What the kernel lacks, the fallbacks taken and the attach mode.
    features: FeatureReport,
}

impl Preflight {
    /// Where this shaper's tree sits: the downlink's IFB is after the link.
    fn placement(&self) -> Placement {
        if self.ingress { Placement::AfterLink } else { Placement::BeforeLink }
    }
}

/// Checks everything `up` needs before it changes anything; cleans up what a
/// killed daemon left behind on this very interface.
fn preflight(options: UpOptions) -> Result<Preflight, ShaperError> {
    require_root("`bauxite up` attaches eBPF programs and qdiscs")?;
    let UpOptions { iface, mut profile, gateway_iface, lease, probe_rtt, reload, attach, redirected_from } = options;
    let features = features::check(&KernelFacts::probe(), attach, gateway_iface.is_some())?;
    let reflectors = match profile.rate {
        RateSetting::Auto => with_probe_rules(&mut profile)?,
        RateSetting::Fixed(_) => Vec::new(),
    };
    let probe_key = match reflectors.is_empty() {
        false => key_of(profile.auto_rate.key_file.as_ref())?,
        true => None,
    };
    let mut rtnl = open_rtnl()?;
    let link = find_link(&mut rtnl, &iface)?;
    if let Some(gw) = &gateway_iface {
        find_link(&mut rtnl, gw)?;
    }
    let state_dir = StateDir::of(&rtnl);
    if let Some(pid) = running_daemon(&state_dir, &iface, Some(link.index)) {
        return Err(ShaperError::AlreadyRunning { iface, pid });
    }
    // Bauxite replaces the root qdisc: only the kernel's default or its own
    // leftover, never a tree someone configured on purpose.
    if let Tree::Foreign(q) = tree_on(&mut rtnl, link.index).map_err(ShaperError::io("reading the root qdisc"))? {
        return Err(foreign(&iface, q));
    }
    // A previous daemon that was killed may have left its tree and settings behind.
    down_one(&iface)?;
    let link = find_link(&mut rtnl, &iface)?;
    let l2_header = redirected_from.as_ref().unwrap_or(&link).l2_header;
    let ingress = redirected_from.is_some();
    Ok(Preflight {
        iface,
        profile,
        gateway_iface,
        lease,
        reflectors,
        probe_key,
        probe_rtt,
        reload,
        link,
        l2_header,
        ingress,
        state_dir,
        features,
    })
}

/// What [`install`] put in place.
struct Attached {
    datapath: Datapath,
    control: Control,
    installed: Installed,
    mode: TcAttachMode,
}

/// Loads the classifier with the profile's tables, caps GSO, installs the HTB tree
/// at `rate` and attaches the programs. Whatever fails undoes what was done.
fn install(pre: &Preflight, rate: BitRate) -> Result<Attached, ShaperError> {
    let (iface, profile) = (&pre.iface, &pre.profile);
    let mut datapath = Datapath::load()?;
    datapath.maps.set_rules(&rule_set(profile))?;
    for i in 0..profile.lanes.len() {
        datapath.maps.set_lane(i, &lane_policy(profile, i))?;
    }
    let control = Control {
        heartbeat_ns: monotonic_ns(),
        lease_ns: pre.lease.as_nanos() as u64,
        congested: 0,
        l2_header: u32::from(pre.l2_header),
    };
    datapath.maps.set_control(&control)?;

    let ns = Netns::current();
    let mut installed = Installed {
        ns: Netns::current(),
        iface: iface.clone(),
        ifindex: pre.link.index,
        original_gso: None,
        htb: false,
        clsact: false,
    };
    // HTB does not split GSO super-packets: a 64 KB one would hold the link for
    // 350 ms at 1.5 Mbit/s. One MTU per packet keeps lanes interleaving finely.
    tc::set_gso_max_size(&ns, iface, pre.link.mtu)?;
    installed.original_gso = Some(pre.link.gso_max_size);
    installed.htb = true;
    ns.tc_batch(&htb_tree(profile, iface, rate, false, pre.placement()).install_lines())?;
    let mode = pre.features.attach.mode;
    installed.clsact = mode == TcAttachMode::Clsact && bauxite_ebpf::add_clsact(iface);
    datapath.attach_egress(iface, mode)?;
    if let Some(gw) = &pre.gateway_iface
        && datapath.attach_xdp(gw)? == bauxite_ebpf::XdpAttachMode::Generic
    {
        info!(gateway = gw, "the driver of {gw} lacks native XDP: the gateway program runs in generic (skb) mode");
    }
    Ok(Attached { datapath, control, installed, mode })
}

/// The snapshot a freshly started daemon publishes.
fn first_snapshot(pre: &Preflight, link_rate: BitRate, rate: BitRate, mode: TcAttachMode) -> ShaperSnapshot {
    let profile = &pre.profile;
    ShaperSnapshot {
        iface: pre.iface.clone(),
        daemon: DaemonState::Running,
        htb_installed: true,
        pid: std::process::id(),
        profile: profile.name.clone(),
        rate_mode: match profile.rate {
            RateSetting::Fixed(_) => "fixed",
            RateSetting::Auto => "auto",
        }
        .into(),
        link_rate_bps: link_rate.bps(),
        rate_bps: rate.bps(),
        attach_mode: mode.as_str().into(),
        attach_reason: pre.features.attach.reason.clone(),
        clsact_filters: u32::from(mode == TcAttachMode::Clsact),
        gateway_iface: pre.gateway_iface.clone(),
        reflector: pre.reflectors.first().map(Reflector::to_string),
        lease_ms: pre.lease.as_millis() as u64,
        lanes: lane_snapshots(profile),
        ..Default::default()
    }
}

/// The published lanes of `profile`, before any counter.
fn lane_snapshots(profile: &ValidatedProfile) -> Vec<LaneSnapshot> {
    profile
        .lanes
        .iter()
        .enumerate()
        .map(|(i, l)| LaneSnapshot {
            name: l.name.clone(),
            class: format!("{HTB_MAJOR:x}:{:x}", lane_minor(i)),
            droppable: l.drop_when_congested,
            ..Default::default()
        })
        .collect()
}

/// Puts the profile on the interface and runs its control loop until `stop` is set;
/// then takes everything off again. Errors leave the interface as it was. Exits
/// with [`ShaperError::InterfaceGone`] when the interface is deleted or replaced
/// under it, so that a supervisor (systemd) starts a new `up` on the new one.
///
/// With `direction: down` or `both`, the downlink is shaped too: a second shaper runs on
/// the IFB device the interface's ingress is redirected to ([`crate::ingress`]), with the
/// profile's [`ValidatedProfile::for_ingress`]. When either shaper ends, both do.
pub fn run_up(options: UpOptions, stop: Arc<AtomicBool>) -> Result<(), ShaperError> {
    let Some(ingress_profile) = options.profile.for_ingress() else { return run_one(options, stop) };
    require_root("`bauxite up` attaches eBPF programs and qdiscs")?;
    let mut rtnl = open_rtnl()?;
    let link = find_link(&mut rtnl, &options.iface)?;
    // Before the device is made anew (which removes a leftover one): a live daemon's
    // uplink or downlink, whichever this one would take over.
    let device = crate::ingress::device_name(&options.iface);
    let state_dir = StateDir::of(&rtnl);
    if let Some(pid) = running_daemon(&state_dir, &options.iface, Some(link.index))
        .or_else(|| running_daemon(&state_dir, &device, None))
    {
        return Err(ShaperError::AlreadyRunning { iface: options.iface.clone(), pid });
    }
    let mut path = crate::ingress::IngressPath::create(&options.iface)?;
    let ingress = UpOptions {
        iface: path.device.clone(),
        profile: ingress_profile,
        gateway_iface: None,
        lease: options.lease,
        probe_rtt: None,
        reload: options.reload.as_ref().map(Reload::for_ingress),
        attach: options.attach,
        redirected_from: Some(link),
    };
    // Whichever shaper ends first ends the other: a daemon half up is not what was asked.
    let ending = |result: Result<(), ShaperError>, stop: &AtomicBool| {
        stop.store(true, Ordering::Relaxed);
        result
    };
    let egress = options.profile.direction.shapes_egress().then_some(options);
    let stop_ingress = Arc::clone(&stop);
    let ingress = std::thread::Builder::new()
        .name("bx-ingress".into())
        .spawn(move || ending(run_one(ingress, Arc::clone(&stop_ingress)), &stop_ingress))
        .map_err(ShaperError::io("starting the ingress shaper's thread"))?;
    // The IFB flows unshaped until its tree is up, so redirecting at once loses nothing.
    let redirected = path.redirect();
    let egress = match (&redirected, egress) {
        (Ok(()), Some(options)) => ending(run_one(options, Arc::clone(&stop)), &stop),
        (Ok(()), None) => Ok(()),
        (Err(_), _) => ending(Ok(()), &stop),
    };
    let ingress = ingress
        .join()
        .unwrap_or_else(|_| Err(ShaperError::io("the ingress shaper")(std::io::Error::other("it panicked"))));
    drop(path);
    redirected.and(egress).and(ingress)
}

/// [`run_up`] of one direction: the profile on `options.iface`'s egress.
fn run_one(options: UpOptions, stop: Arc<AtomicBool>) -> Result<(), ShaperError> {
    let pre = preflight(options)?;
    let link_rate = match pre.profile.rate {
        RateSetting::Fixed(r) => r,
        RateSetting::Auto => pre.profile.auto_rate.base_rate,
    };
    let rate = pre.profile.shaped_rate(link_rate);
    let watch = LinkWatch::new(&pre.iface, pre.link.index).map_err(ShaperError::io("subscribing to link events"))?;
    let mut attached = install(&pre, rate)?;
    info!(
        iface = pre.iface,
        profile = pre.profile.name,
        link_rate = %link_rate,
        shaped_rate = %rate,
        attach = attached.mode.as_str(),
        why = pre.features.attach.reason,
        gateway = pre.gateway_iface.as_deref().unwrap_or("-"),
        "shaper up"
    );
    for fallback in &pre.features.fallbacks {
        warn!(iface = pre.iface, "the kernel lacks {fallback}");
    }
    let owner = Owner {
        ifindex: pre.link.index,
        pid: std::process::id(),
        pid_start: state::process_start(std::process::id()).unwrap_or(0),
        original_gso_max_size: pre.link.gso_max_size,
        created_clsact: attached.installed.clsact,
        heartbeat_ns: 0,
    };
    let state = StateFile { owner, snapshot: first_snapshot(&pre, link_rate, rate, attached.mode) };
    let session = Session {
        iface: pre.iface.clone(),
        state_dir: pre.state_dir.clone(),
        stop_probes: Arc::new(AtomicBool::new(false)),
    };
    let end = ControlLoop::start(&pre, &session, state, watch, link_rate, rate)?.run(&mut attached, &stop);
    teardown(attached, &pre.iface, &end);
    drop(session);
    end
}

/// Takes the programs and the tree off, unless the interface is gone (then the
/// kernel took them with it, and the name may belong to a new interface).
fn teardown(mut attached: Attached, iface: &str, end: &Result<(), ShaperError>) {
    info!(iface, "shutting down");
    if let Err(e) = attached.datapath.detach()
        && !matches!(end, Err(ShaperError::InterfaceGone { .. }))
    {
        warn!("detaching the classifier from {iface}: {e}");
    }
    drop(attached.datapath);
    attached.installed.undo();
}

/// The daemon's control loop and what it keeps between polls.
struct ControlLoop<'a> {
    pre: &'a Preflight,
    /// The running profile: the preflight's until a reload replaces it.
    profile: ValidatedProfile,
    session: &'a Session,
    state: StateFile,
    watch: LinkWatch,
    reader: Rtnl,
    controller: Controller,
    auto: Option<AutoRate>,
    link_rate: BitRate,
    rate: BitRate,
    /// Whether HTB holds every lane but lane 0 (`rate: auto` hears no answer,
    /// [`SilenceHold`]).
    lanes_held: bool,
    started: Instant,
    last_status: Instant,
    written_probs: Vec<u32>,
    /// The tree's classes are missing (someone removed them): said once per episode.
    missing_classes: bool,
}

impl<'a> ControlLoop<'a> {
    fn start(
        pre: &'a Preflight,
        session: &'a Session,
        state: StateFile,
        watch: LinkWatch,
        link_rate: BitRate,
        rate: BitRate,
    ) -> Result<Self, ShaperError> {
        let profile = &pre.profile;
        let auto = match pre.reflectors.as_slice() {
            [] => None,
            reflectors => {
                let (tx, rx) = std::sync::mpsc::channel();
                let probers = Probers::start(reflectors, pre.probe_key.clone(), tx, &session.stop_probes)?;
                let standbys: Vec<String> = probers.standbys().map(|r| r.to_string()).collect();
                info!(iface = pre.iface, reflector = %probers.active(), standbys = standbys.join(" "), "rate: auto, probing the link");
                // The downlink's shaper counts what arrived over the link: the far end's
                // FIFO is before it.
                let counted_at = if pre.ingress { CountedAt::Exit } else { CountedAt::Entry };
                Some(AutoRate {
                    controller: RateController::new(&profile.auto_rate)
                        .with_headroom(profile.headroom)
                        .counted_at(counted_at),
                    probers,
                    samples: rx,
                    one_way: OneWayDelays::default(),
                    silent: false,
                    hold: SilenceHold::default(),
                    switched_at: None,
                    clock_origin_ns: monotonic_ns(),
                })
            }
        };
        Ok(Self {
            pre,
            profile: profile.clone(),
            session,
            state,
            watch,
            reader: open_rtnl()?,
            controller: Controller::new(profile, rate),
            auto,
            link_rate,
            rate,
            lanes_held: false,
            started: Instant::now(),
            last_status: Instant::now() - STATUS_INTERVAL,
            written_probs: vec![0u32; profile.lanes.len()],
            missing_classes: false,
        })
    }

    /// Polls until `stop` is set or the interface goes away.
    fn run(mut self, attached: &mut Attached, stop: &AtomicBool) -> Result<(), ShaperError> {
        let (iface, index) = (&self.pre.iface, self.pre.link.index);
        while !stop.load(Ordering::Relaxed) {
            if self.pre.reload.as_ref().is_some_and(Reload::take_request) {
                self.reload(attached);
            }
            let poll = self.profile.congestion.poll_interval;
            self.check_link()?;
            let classes =
                self.reader.classes(index).map_err(ShaperError::io(format!("reading class statistics of {iface}")))?;
            let read_ns = monotonic_ns();
            let lanes = lane_classes(&classes, self.profile.lanes.len());
            if lanes.is_none() {
                // An interface deleted since the last poll also has no classes: its
                // link event is queued by now, and says which it is.
                self.check_link()?;
            }
            match lanes {
                Some(lane_classes) => {
                    if std::mem::take(&mut self.missing_classes) {
                        info!(iface, "Bauxite's HTB classes are back on {iface}; measuring again");
                    }
                    self.send_probe_if_due(read_ns);
                    self.step(attached, &lane_classes, read_ns)?;
                    std::thread::sleep(poll);
                }
                None => {
                    // Someone removed or replaced our tree: the kernel programs keep
                    // steering, but there is nothing to measure; say so once and keep
                    // the lease alive.
                    if !std::mem::replace(&mut self.missing_classes, true) {
                        warn!(iface, "Bauxite's HTB classes are missing from {iface}; not measuring");
                    }
                    attached.control.heartbeat_ns = monotonic_ns();
                    attached.datapath.maps.set_control(&attached.control)?;
                    std::thread::sleep(poll.max(Duration::from_millis(100)));
                }
            }
        }
        Ok(())
    }

    /// Ends the daemon with [`ShaperError::InterfaceGone`] once the interface has
    /// been deleted or replaced (said once, with what to do).
    fn check_link(&mut self) -> Result<(), ShaperError> {
        let (iface, index) = (&self.pre.iface, self.pre.link.index);
        if self.watch.poll().map_err(ShaperError::io("reading link events"))?.is_some() {
            error!(
                iface,
                ifindex = index,
                "{iface} was deleted or replaced: the shaper went with it; exiting so that a supervisor \
                 starts `bauxite up` on the new interface"
            );
            return Err(ShaperError::InterfaceGone { iface: iface.clone(), ifindex: index });
        }
        Ok(())
    }

    /// One poll, on the class counters read at `read_ns`: the congested state, drop
    /// probabilities, the rate, the lease and (every [`STATUS_INTERVAL`]) the published state.
    fn step(&mut self, attached: &mut Attached, lane_classes: &[ClassStats], read_ns: u64) -> Result<(), ShaperError> {
        let iface = &self.pre.iface;
        let profile = &self.profile;
        let samples: Vec<LaneSample> = lane_classes
            .iter()
            .map(|c| LaneSample {
                sent_bytes: c.bytes,
                backlog_bytes: u64::from(c.backlog),
                backlog_packets: u64::from(c.qlen),
            })
            .collect();
        self.controller.hold(self.lanes_held);
        match self.controller.observe(self.started.elapsed(), &samples) {
            Some(Transition::Entered) => {
                self.state.snapshot.congestion_episodes += 1;
                info!(iface, "congested: discarding droppable lanes early");
            }
            Some(Transition::Left) => info!(iface, "congestion cleared"),
            None => {}
        }
        let verdicts = self.controller.verdicts();
        for (i, v) in verdicts.iter().enumerate() {
            let prob = probability_to_u32(v.drop_probability);
            if prob != self.written_probs[i] {
                let mut policy = lane_policy(profile, i);
                policy.drop_prob = prob;
                attached.datapath.maps.set_lane(i, &policy)?;
                self.written_probs[i] = prob;
            }
        }
        // What `rate: auto` measures the link with: the bytes the lanes sent into it, or,
        // on the downlink's device, the bytes that arrived over it (the classifier counts
        // every packet redirected from the ingress, those it then drops included).
        let (sent_bytes, never_dropped_bytes) = if self.auto.is_some() {
            // What the classifier saw arrive in each lane: what the lanes are offered.
            let offered = attached.datapath.maps.stats()?;
            let never_dropped = offered
                .iter()
                .zip(&profile.lanes)
                .filter(|(_, lane)| !lane.drop_when_congested)
                .map(|(s, _)| s.bytes)
                .sum();
            let sent = if self.pre.ingress {
                offered.iter().map(|s| s.bytes).sum()
            } else {
                lane_classes.iter().map(|c| c.bytes).sum()
            };
            (sent, never_dropped)
        } else {
            (0, 0)
        };
        if let Some(auto) = self.auto.as_mut() {
            // The probes ride lane 0 (`with_probe_rule`): its own queue is not the link's.
            auto.controller.on_own_queue(verdicts[0].queue_delay);
        }
        let new_link_rate = self.follow_link_rate(sent_bytes, never_dropped_bytes, read_ns, &samples);
        let held = self.auto.as_ref().is_some_and(|auto| auto.hold.held());
        if new_link_rate.is_some() || held != self.lanes_held {
            match (held, self.lanes_held) {
                (true, false) => info!(
                    iface,
                    "rate auto: every lane but {} held while the link is silent (it may be out)",
                    self.profile.lanes[0].name
                ),
                (false, true) => info!(iface, "rate auto: the held lanes go again"),
                _ => {}
            }
            self.lanes_held = held;
            self.state.snapshot.lanes_held = held;
            self.link_rate = new_link_rate.unwrap_or(self.link_rate);
            self.rate = self.profile.shaped_rate(self.link_rate);
            // After the link the droppable lanes' limits follow the rate too.
            let tree = htb_tree(&self.profile, iface, self.rate, held, self.pre.placement());
            let lines = match self.pre.placement() {
                Placement::BeforeLink => tree.rate_lines(),
                Placement::AfterLink => tree.reload_lines(),
            };
            Netns::current().tc_batch(&lines)?;
            self.controller.set_link_rate(self.rate);
            self.state.snapshot.link_rate_bps = self.link_rate.bps();
            self.state.snapshot.rate_bps = self.rate.bps();
            debug!(iface, link_rate = %self.link_rate, shaped_rate = %self.rate, "link rate estimate changed");
        }
        attached.control.congested = u32::from(self.controller.congested());
        attached.control.heartbeat_ns = monotonic_ns();
        attached.datapath.maps.set_control(&attached.control)?;

        if self.last_status.elapsed() >= STATUS_INTERVAL {
            self.last_status = Instant::now();
            let counters = attached.datapath.maps.stats()?;
            let gateway = attached.datapath.maps.gateway_stats()?;
            self.state.owner.heartbeat_ns = attached.control.heartbeat_ns;
            let congested = self.controller.congested();
            fill_snapshot(&mut self.state.snapshot, &counters, &gateway, lane_classes, &verdicts, congested);
            if let Err(e) = self.session.state_dir.save(iface, &self.state) {
                warn!("writing {}: {e}", self.session.state_dir.path(iface).display());
            }
        }
        Ok(())
    }

    /// Re-reads the profile and puts it in place of the running one (see
    /// [`reload`]). A profile that does not load, or changes what needs a restart,
    /// is logged and the running one kept; so is one the kernel refuses, after the
    /// running profile is put back. Never ends the daemon.
    fn reload(&mut self, attached: &mut Attached) {
        let iface = self.pre.iface.clone();
        let running = self.profile.name.clone();
        let Some(source) = &self.pre.reload else { return };
        let mut new = match (source.load)() {
            Ok(p) => p,
            Err(e) => return error!(iface, "reload refused: {e}; keeping the running profile `{running}`"),
        };
        if !self.pre.reflectors.is_empty()
            && let Err(e) = with_probe_rules(&mut new)
        {
            return error!(iface, "reload refused: {e}; keeping the running profile `{running}`");
        }
        if new == self.profile {
            // Nothing to apply, and nothing to reset: a storm of SIGHUPs (or a
            // `systemctl reload` after an edit that changed nothing) leaves the
            // lanes, the congestion controller and its drop probabilities as they were.
            return info!(iface, "reload: the profile `{running}` is unchanged; nothing to apply");
        }
        let restart = reload::restart_only_changes(&self.profile, &new);
        if !restart.is_empty() {
            return error!(
                iface,
                "reload refused: changing {} needs a restart of `bauxite up`; keeping the running profile `{running}`",
                restart.join(", ")
            );
        }
        let link_rate = match new.rate {
            RateSetting::Fixed(r) => r,
            RateSetting::Auto => self.link_rate,
        };
        let rate = new.shaped_rate(link_rate);
        let ns = Netns::current();
        if let Err(e) = reload::apply_in_place(
            &ns,
            &iface,
            &mut attached.datapath.maps,
            (&self.profile, &new),
            rate,
            self.pre.placement(),
        ) {
            error!(iface, "reload failed: {e:#}; putting the running profile `{running}` back");
            if let Err(e) = reload::apply_in_place(
                &ns,
                &iface,
                &mut attached.datapath.maps,
                (&new, &self.profile),
                self.rate,
                self.pre.placement(),
            ) {
                error!(iface, "putting the running profile back failed too: {e:#}");
            }
            return;
        }
        self.adopt(new, link_rate, rate);
        info!(iface, profile = self.profile.name, link_rate = %link_rate, shaped_rate = %rate, "profile reloaded");
    }

    /// Makes `profile`, just applied, the running one: a fresh congestion
    /// controller (lanes and thresholds may have changed) and the published lanes.
    fn adopt(&mut self, profile: ValidatedProfile, link_rate: BitRate, rate: BitRate) {
        self.controller = Controller::new(&profile, rate);
        // The new classes hold no lane; the next poll holds them again if the link is
        // still silent.
        self.lanes_held = false;
        self.state.snapshot.lanes_held = false;
        self.written_probs = vec![0u32; profile.lanes.len()];
        self.link_rate = link_rate;
        self.rate = rate;
        let snapshot = &mut self.state.snapshot;
        snapshot.profile = profile.name.clone();
        snapshot.link_rate_bps = link_rate.bps();
        snapshot.rate_bps = rate.bps();
        snapshot.lanes = lane_snapshots(&profile);
        self.profile = profile;
    }

    /// With `rate: auto`, the poll's probe, at once after the counters were read at
    /// `read_ns` (so the bytes sent before it are those counters), if one is due.
    fn send_probe_if_due(&mut self, read_ns: u64) {
        let Some(auto) = self.auto.as_mut() else { return };
        if auto.controller.probe_due(auto.controller_time(read_ns)) {
            auto.probers.send_active(read_ns);
        }
        auto.probers.send_standbys_if_due(read_ns);
    }

    /// With `rate: auto`, the new link-rate estimate, if the probes changed it: the
    /// controller gets the bytes the lanes had sent at `read_ns` (when the probe of
    /// this poll left) and those the lanes never dropped were offered, every answer,
    /// then the time ([`AutoRate::controller_time`]).
    fn follow_link_rate(
        &mut self,
        sent_bytes: u64,
        never_dropped_bytes: u64,
        read_ns: u64,
        samples: &[LaneSample],
    ) -> Option<BitRate> {
        let auto = self.auto.as_mut()?;
        let now = auto.controller_time(read_ns);
        auto.controller.on_sent(now, sent_bytes);
        let mut new_rate = auto.controller.on_never_dropped(now, never_dropped_bytes);
        while let Ok(sample) = auto.samples.try_recv() {
            if !auto.probers.on_answer(&sample) {
                continue;
            }
            if let Some(histogram) = &self.pre.probe_rtt {
                histogram.observe(sample.rtt.as_secs_f64());
            }
            if let Some(reflected_ns) = sample.reflected_ns {
                let queues = auto.one_way.on_answer(sample.sent_ns, reflected_ns, sample.received_ns);
                // The other way's queue is the other direction's shaper's to act on.
                auto.controller.on_other_way(if self.pre.ingress { queues.out } else { queues.back });
            }
            let received = auto.controller_time(sample.received_ns);
            new_rate = auto.controller.on_answer(received.saturating_sub(sample.rtt), received).or(new_rate);
            tracing::debug!(
                t_ms = received.as_millis() as u64,
                rtt_us = sample.rtt.as_micros() as u64,
                rate_bps = auto.controller.rate().bps(),
                "rate probe"
            );
        }
        let new_rate = auto.controller.on_tick(now).or(new_rate);
        // Silence for long is the reflector gone (or the path down): the estimate is
        // failing and the controller holds the droppable lanes at `min_rate` (its
        // fallback) until answers come back. A standby that answers takes over at
        // once; with none, the silence is said in the log once, and in `status`, the
        // metrics and the diagnostics for as long as it lasts.
        let silent = auto.controller.silent_for(now);
        // A switch is given the time a first answer may take before it counts as one
        // (the reflector left may have answered within the standbys' second; a
        // satellite path's first answer takes 600 ms).
        let grace = auto.switched_at.is_some_and(|at| now < at + bauxite_control::FIRST_ANSWER);
        if silent.is_some() && !grace {
            let silent_one = auto.probers.active();
            if let Some(standby) = auto.probers.switch(read_ns) {
                auto.controller.on_new_path(now);
                auto.one_way = OneWayDelays::default();
                auto.controller.on_other_way(Duration::ZERO);
                auto.switched_at = Some(now);
                self.state.snapshot.reflector = Some(standby.to_string());
                warn!(
                    iface = self.pre.iface,
                    "rate auto: no answers from the reflector {silent_one} for {} ms; probing the standby {standby}, \
                     which answers",
                    silent.unwrap_or_default().as_millis()
                );
            }
        }
        let snapshot = &mut self.state.snapshot;
        snapshot.link_estimate_failing = silent.is_some();
        snapshot.unanswered_ms = silent.map_or(0, |d| d.as_millis() as u64);
        let grace = auto.switched_at.is_some_and(|at| now < at + bauxite_control::FIRST_ANSWER);
        let warn_silence = silent.is_some() && !grace;
        match (warn_silence, auto.silent) {
            (true, false) => warn!(
                iface = self.pre.iface,
                "rate auto NOT PROTECTED: no answers from the reflector {} for {} ms{}; holding the droppable lanes \
                 at min_rate {}, and every lane but {} until its queue fills, until it answers ({})",
                auto.probers.active(),
                silent.unwrap_or_default().as_millis(),
                standbys_said(&auto.probers),
                self.profile.auto_rate.min_rate,
                self.profile.lanes[0].name,
                silence_hint(auto.probers.active()),
            ),
            (false, true) if silent.is_none() => {
                info!(iface = self.pre.iface, reflector = %auto.probers.active(), "rate auto: the reflector answers again")
            }
            _ => {}
        }
        auto.silent = if silent.is_none() { false } else { auto.silent || warn_silence };
        auto.hold.update(silent.is_some(), &self.profile, samples);
        new_rate
    }
}

/// ", nor from the standbys A, B" for the silence warning, or nothing without standbys.
fn standbys_said(probers: &Probers) -> String {
    let standbys: Vec<String> = probers.standbys().map(|r| r.to_string()).collect();
    if standbys.is_empty() { String::new() } else { format!(", nor from the standbys {}", standbys.join(", ")) }
}

/// What to check when `reflector` is silent.
fn silence_hint(reflector: Reflector) -> &'static str {
    match reflector {
        Reflector::Bauxite(_) => {
            "is `bauxite reflect` running there, bound to an address the robot reaches, with the same --key-file?"
        }
        Reflector::IcmpEcho(_) | Reflector::IcmpTimestamp(_) => {
            "does that host answer ICMP from the robot? Firewalls often drop it, and some hosts limit their replies"
        }
    }
}

/// The classes of the first `lanes` lanes, in lane order; `None` if any is missing.
fn lane_classes(classes: &[ClassStats], lanes: usize) -> Option<Vec<ClassStats>> {
    (0..lanes).map(|i| classes.iter().find(|c| c.classid == classid(HTB_MAJOR, lane_minor(i))).copied()).collect()
}

fn fill_snapshot(
    snapshot: &mut ShaperSnapshot,
    counters: &[LaneStats],
    gateway: &[LaneStats],
    classes: &[ClassStats],
    verdicts: &[crate::controller::LaneVerdict],
    congested: bool,
) {
    snapshot.congested = congested;
    snapshot.updated_unix_ms = state::unix_ms();
    for (i, lane) in snapshot.lanes.iter_mut().enumerate() {
        let k = counters[i];
        let v = verdicts[i];
        lane.packets = k.packets;
        lane.bytes = k.bytes;
        lane.early_drops = k.early_drops;
        lane.gateway_packets = gateway[i].packets;
        lane.gateway_drops = gateway[i].early_drops;
        lane.odd_packets = k.odd_packets;
        lane.rate_bps = v.rate_bps;
        lane.queue_delay_ms = v.queue_delay.as_secs_f64() * 1e3;
        lane.drop_probability = v.drop_probability;
    }
    overlay_classes(snapshot, classes);
}

/// Copies the lanes' queue counters from their HTB classes (in lane order).
fn overlay_classes(snapshot: &mut ShaperSnapshot, classes: &[ClassStats]) {
    for (lane, c) in snapshot.lanes.iter_mut().zip(classes) {
        lane.queue_drops = c.drops;
        lane.backlog_bytes = u64::from(c.backlog);
        lane.backlog_packets = u64::from(c.qlen);
    }
}

/// What a running daemon owns besides the interface: its probe threads and its state
/// file. Dropped on every way out of the loop, errors included.
struct Session {
    iface: String,
    state_dir: StateDir,
    stop_probes: Arc<AtomicBool>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop_probes.store(true, Ordering::Relaxed);
        if let Err(e) = self.state_dir.remove(&self.iface) {
            warn!("removing the state file of {}: {e}", self.iface);
        }
    }
}

/// The state of `rate: auto` inside the daemon loop.
struct AutoRate {
    controller: RateController,
    /// Sends the probes, at the polls, to the active reflector and the standbys.
    probers: Probers,
    samples: Receiver<RttSample>,
    /// Each way's queue from the active reflector's receive times (a new one after a
    /// switch: another reflector has another clock).
    one_way: OneWayDelays,
    /// Whether the silence warning was said for the silence going on (the log says
    /// each change).
    silent: bool,
    /// Whether the lanes but lane 0 are to be held, decided each poll (HTB gets it in
    /// `step`).
    hold: SilenceHold,
    /// When the probes last moved to a standby (the controller's clock).
    switched_at: Option<Duration>,
    /// The controller's clock starts here (`CLOCK_MONOTONIC` ns), for polls and
    /// answers alike: the prober stamps answers on that clock.
    clock_origin_ns: u64,
}

impl AutoRate {
    /// A `CLOCK_MONOTONIC` time on the controller's clock.
    fn controller_time(&self, monotonic_ns: u64) -> Duration {
        Duration::from_nanos(monotonic_ns.saturating_sub(self.clock_origin_ns))
    }
}

/// Puts the auto-rate probes in the most urgent lane, ahead of every other rule, so
/// that they measure the link's queue and not Bauxite's: a rule per UDP port of a
/// `bauxite reflect` reflector, and one for [`ICMP_PROBE_DSCP`] if any reflector is
/// ICMP (which has no ports). Either side of the port: the downlink's shaper sees the
/// answers, which come from it (in the default lane they waited behind whatever the
/// downlink's shaper held there, and read as the link's queue). Returns the reflectors.
fn with_probe_rules(profile: &mut ValidatedProfile) -> Result<Vec<Reflector>, ShaperError> {
    let reflectors = profile.reflectors().to_vec();
    let mut rules: Vec<Match> = Vec::new();
    for reflector in &reflectors {
        let rule = match reflector {
            Reflector::Bauxite(addr) => {
                let ports = PortRange { first: addr.port(), last: addr.port() };
                Match::Port { protocol: Protocol::Udp, ports, side: PortSide::Either }
            }
            Reflector::IcmpEcho(_) | Reflector::IcmpTimestamp(_) => {
                Match::Dscp(Dscp::new(ICMP_PROBE_DSCP).expect("CS6 is a DSCP"))
            }
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    for rule in rules {
        profile.prepend_rule(0, rule).map_err(ShaperError::Profile)?;
    }
    Ok(reflectors)
}

/// What `down` found and removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DownReport {
    /// The interface.
    pub iface: String,
    /// A running daemon was asked to stop.
    pub stopped_daemon: Option<u32>,
    /// Bauxite's HTB root qdisc was removed.
    pub removed_htb: bool,
    /// A clsact filter of the classifier was removed (kernels without tcx).
    pub removed_filter: bool,
    /// The clsact qdisc `up` had added was removed (one there before `up` stays).
    pub removed_clsact: bool,
    /// `gso_max_size` was restored to this.
    pub restored_gso: Option<u32>,
    /// A state file was removed.
    pub removed_state: bool,
    /// The state file was about an interface that is gone (deleted, maybe recreated
    /// under the same name): removed without restoring anything from it.
    pub stale_state: bool,
    /// What of the downlink's shaping was removed: the redirect and the IFB device.
    pub ingress: crate::ingress::Removed,
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
        if self.removed_clsact {
            done.push("removed the clsact qdisc it had added".into());
        }
        if self.removed_htb {
            done.push("removed the HTB tree".into());
        }
        if let Some(gso) = self.restored_gso {
            done.push(format!("restored gso_max_size {gso}"));
        }
        if self.stale_state {
            done.push("removed the stale state file of a deleted interface (nothing restored from it)".into());
        } else if self.removed_state {
            done.push("removed the state file".into());
        }
        if self.ingress.redirect {
            done.push("removed the ingress redirect".into());
        }
        if self.ingress.device {
            done.push(format!("removed the ingress device {}", crate::ingress::device_name(&self.iface)));
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
            || self.removed_clsact
            || self.restored_gso.is_some()
            || self.removed_state
            || self.ingress.redirect
            || self.ingress.device
    }
}

/// Asks a live daemon to stop (it cleans up after itself) and waits a little.
fn stop_daemon(iface: &str, owner: &Owner) -> Result<Option<u32>, ShaperError> {
    if !owner.daemon_alive() || owner.pid == std::process::id() {
        return Ok(None);
    }
    #[allow(unsafe_code)]
    // SAFETY: kill(2) with a pid from our own state file whose start time matched, and SIGTERM.
    unsafe {
        libc::kill(owner.pid as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while owner.daemon_alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if owner.daemon_alive() {
        return Err(ShaperError::AlreadyRunning { iface: iface.to_string(), pid: owner.pid });
    }
    Ok(Some(owner.pid))
}

/// Removes everything Bauxite attached to `iface`, both directions; safe to run any
/// number of times, with or without a daemon, also after the daemon was killed. Touches
/// only Bauxite's own tree, redirect and device, and restores settings only from a state
/// about this very interface (same index); refuses an `htb ba:` root that lacks
/// Bauxite's marker. An interface that is gone (a modem unplugged) still has its
/// ingress device removed.
pub fn down(iface: &str) -> Result<DownReport, ShaperError> {
    require_root("`bauxite down` removes qdiscs and eBPF programs")?;
    let ns = Netns::current();
    // The daemon first (its own exit removes the redirect before the device), then the
    // egress, then whatever ingress a killed daemon left.
    let mut report = match down_one(iface) {
        Err(ShaperError::NoSuchInterface(_)) if crate::ingress::leftover(&ns, iface) => DownReport::default(),
        other => other?,
    };
    report.ingress = crate::ingress::remove(&ns, iface)?;
    report.iface = iface.to_string();
    Ok(report)
}

/// [`down`] of one interface's egress: the daemon, the classifier, the tree, the
/// settings and the state file.
pub(crate) fn down_one(iface: &str) -> Result<DownReport, ShaperError> {
    require_root("`bauxite down` removes qdiscs and eBPF programs")?;
    let mut rtnl = open_rtnl()?;
    let link = find_link(&mut rtnl, iface)?;
    let state_dir = StateDir::of(&rtnl);
    let ns = Netns::current();
    let tree = tree_on(&mut rtnl, link.index).map_err(ShaperError::io("reading the root qdisc"))?;
    if let Tree::Foreign(q) = &tree
        && q.kind == "htb"
        && q.major == HTB_MAJOR
    {
        return Err(foreign(iface, q.clone()));
    }
    let mut report = DownReport { iface: iface.to_string(), ..Default::default() };
    let remove_state = |dir: &StateDir| dir.remove(iface).map_err(ShaperError::io("removing the state file"));
    let previous = match state_dir.load(iface) {
        Ok(previous) => previous,
        Err(e) => {
            warn!("{e}; removing it");
            remove_state(&state_dir)?;
            None
        }
    };
    let previous = match previous {
        Some(stale) if stale.owner.ifindex != link.index => {
            // The interface it describes is gone: its daemon (if it still runs) is
            // Bauxite's and goes too, but nothing of it is restored on this one.
            report.stopped_daemon = stop_daemon(iface, &stale.owner)?;
            remove_state(&state_dir)?;
            report.removed_state = true;
            report.stale_state = true;
            None
        }
        previous => previous,
    };
    if let Some(prev) = &previous {
        report.stopped_daemon = stop_daemon(iface, &prev.owner)?;
    }
    // tcx links die with their daemon; clsact filters (older kernels, --attach clsact) stay.
    if our_clsact_filters(&mut rtnl, &link)? > 0 {
        bauxite_ebpf::detach_clsact_filters(iface)?;
        report.removed_filter = true;
    }
    if tree_on(&mut rtnl, link.index).map_err(ShaperError::io("reading the root qdisc"))? == Tree::Ours {
        tc::delete_root(&ns, iface)?;
        report.removed_htb = true;
    }
    if let Some(prev) = &previous {
        if prev.owner.created_clsact {
            report.removed_clsact = tc::delete_clsact_if_unused(&ns, iface)?;
        }
        let current = find_link(&mut rtnl, iface)?.gso_max_size;
        if current != prev.owner.original_gso_max_size {
            tc::set_gso_max_size(&ns, iface, prev.owner.original_gso_max_size)?;
            report.restored_gso = Some(prev.owner.original_gso_max_size);
        }
        remove_state(&state_dir)?;
        report.removed_state = true;
    }
    Ok(report)
}

/// How many clsact filters of the classifier are on the egress of `link`.
fn our_clsact_filters(rtnl: &mut Rtnl, link: &Link) -> Result<u32, ShaperError> {
    let filters = rtnl.egress_bpf_filters(link.index).map_err(ShaperError::io("reading the egress filters"))?;
    Ok(filters.iter().filter(|name| *name == TC_PROGRAM).count() as u32)
}

/// Reads the shaper's state of one interface in-process: the daemon's last
/// snapshot, checked against the interface and the daemon that are there now, with
/// queue counters fresh from the kernel. It reads the network namespace of the
/// thread that created it, from any thread (see [`crate::rtnl`]), and spawns nothing.
pub struct StatusReader {
    rtnl: Rtnl,
    state_dir: StateDir,
    iface: String,
}

impl StatusReader {
    /// A reader of `iface` in the calling thread's network namespace (the interface
    /// need not exist yet).
    pub fn new(iface: &str) -> Result<Self, ShaperError> {
        let rtnl = open_rtnl()?;
        let state_dir = StateDir::of(&rtnl);
        Ok(Self { rtnl, state_dir, iface: iface.to_string() })
    }

    /// The shaper on the interface now.
    pub fn read(&mut self) -> Result<ShaperSnapshot, ShaperError> {
        let iface = self.iface.as_str();
        let link = find_link(&mut self.rtnl, iface)?;
        let htb_installed =
            tree_on(&mut self.rtnl, link.index).map_err(ShaperError::io("reading the root qdisc"))? == Tree::Ours;
        let clsact_filters = our_clsact_filters(&mut self.rtnl, &link)?;
        let state = self
            .state_dir
            .load(iface)
            .map_err(ShaperError::io("reading the state file"))?
            // A state about another interface of the same name (deleted and
            // recreated) says nothing about this one.
            .filter(|s| s.owner.ifindex == link.index);
        let Some(StateFile { owner, mut snapshot }) = state else {
            let mut snapshot = ShaperSnapshot::down(iface);
            snapshot.htb_installed = htb_installed;
            snapshot.clsact_filters = clsact_filters;
            let leftover = htb_installed || clsact_filters > 0;
            snapshot.daemon = if leftover { DaemonState::Dead } else { DaemonState::Down };
            return Ok(snapshot);
        };
        snapshot.lease_renewed_ms_ago = monotonic_ns().saturating_sub(owner.heartbeat_ns) / 1_000_000;
        snapshot.daemon = if !owner.daemon_alive() {
            DaemonState::Dead
        } else if state::process_stopped(owner.pid) || snapshot.lease_renewed_ms_ago > snapshot.lease_ms {
            DaemonState::Stalled
        } else {
            DaemonState::Running
        };
        snapshot.htb_installed = htb_installed;
        snapshot.clsact_filters = clsact_filters;
        if htb_installed
            && let Ok(classes) = self.rtnl.classes(link.index)
            && let Some(lane_classes) = lane_classes(&classes, snapshot.lanes.len())
        {
            overlay_classes(&mut snapshot, &lane_classes);
        }
        Ok(snapshot)
    }
}

/// The status of `iface` in this thread's network namespace.
pub fn status(iface: &str) -> Result<ShaperSnapshot, ShaperError> {
    StatusReader::new(iface)?.read()
}

//! Bauxite's kernel programs and their loader.
//!
//! The programs are C (`src/bpf/*.bpf.c`), compiled by clang in `build.rs` and
//! embedded in this crate; [`Datapath`] loads them with aya, attaches them and gives
//! typed access to their maps ([`Maps`]). The map types in [`maps`] mirror
//! `src/bpf/bauxite.h`, checked at build time.
//!
//! Kernel requirements (the README's table gives each feature's minimum): tc egress
//! programs on any kernel with clsact (4.5+); on 6.6+ they can be attached with tcx
//! links, which the kernel removes when the process that holds them dies ([`attach`]).
//! XDP links need 5.9+. The programs use bounded loops (5.3+). [`features`] probes
//! the running kernel for each of these.
#![deny(missing_docs)]

pub mod attach;
pub mod craft;
pub mod features;
mod lookup;
pub mod maps;
#[cfg(test)]
mod object_tests;

use std::path::Path;

use aya::maps::{Array, MapData, PerCpuArray};
use aya::programs::links::LinkOrder;
use aya::programs::tc::{NlOptions, SchedClassifierLinkId, TcAttachOptions, TcAttachType};
use aya::programs::xdp::XdpLinkId;
use aya::programs::xdp::XdpMode;
use aya::programs::{SchedClassifier, TestRun, TestRunOptions, Xdp};
use aya::{Ebpf, EbpfLoader};

pub use attach::{AttachChoice, AttachRequest, TcAttachMode};
pub use maps::{
    ClassifierTables, Control, LanePolicy, LaneStats, MAX_LANES, MAX_RULES, Rule, RuleSet, STATS_UNMANAGED,
};

/// The compiled kernel programs.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/bauxite.bpf.o"));

/// Name of the tc egress classifier in the object.
pub const TC_PROGRAM: &str = "bauxite_tc";
/// Name of the XDP gateway program in the object.
pub const XDP_PROGRAM: &str = "bauxite_xdp";
/// `TC_ACT_UNSPEC`: the classifier's "pass, let the next program decide".
pub const TC_ACT_UNSPEC: i32 = -1;
/// `TC_ACT_SHOT`: the classifier discarded the packet.
pub const TC_ACT_SHOT: i32 = 2;

const MAP_CLASSIFIER: &str = "bx_classifier";
const MAP_LANES: &str = "bx_lanes";
const MAP_CONTROL: &str = "bx_control";
const MAP_STATS: &str = "bx_stats";
const MAP_GATEWAY_STATS: &str = "bx_gateway_stats";

/// Errors of loading, attaching and using the kernel programs.
#[derive(Debug, thiserror::Error)]
pub enum DatapathError {
    /// The object or a program could not be loaded (verifier, permissions, kernel support).
    #[error("loading the eBPF programs failed (are you root, with CAP_BPF and CAP_NET_ADMIN?)")]
    Load(#[from] aya::EbpfError),
    /// A program operation failed.
    #[error("eBPF program `{program}`")]
    Program {
        /// Which program.
        program: &'static str,
        /// Why.
        source: aya::programs::ProgramError,
    },
    /// A map operation failed.
    #[error("eBPF map `{map}`")]
    Map {
        /// Which map.
        map: &'static str,
        /// Why.
        source: aya::maps::MapError,
    },
    /// A map expected in the object is missing or of the wrong type.
    #[error("eBPF map `{0}` missing from the object or of an unexpected type")]
    MissingMap(&'static str),
    /// A program expected in the object is missing or of an unexpected type.
    #[error("eBPF program `{0}` missing from the object or of an unexpected type")]
    MissingProgram(&'static str),
    /// The interface does not exist.
    #[error("no network interface called `{0}`")]
    NoSuchInterface(String),
    /// `--attach tcx` on a kernel without tcx links.
    #[error(
        "--attach tcx needs Linux 6.6 or later (tcx links); kernel {release} has none: use --attach clsact or auto"
    )]
    NoTcx {
        /// The running kernel (`uname -r`).
        release: String,
    },
    /// Removing a leftover clsact filter failed.
    #[error("removing the classifier's clsact filter from {iface}")]
    Detach {
        /// The interface.
        iface: String,
        /// Why.
        source: aya::programs::tc::TcError,
    },
}

/// Typed handles to the kernel maps of a loaded [`Datapath`].
pub struct Maps {
    classifier: Array<MapData, ClassifierTables>,
    /// The rules last compiled into `classifier` (the kernel keeps only the tables).
    rules: RuleSet,
    lanes: Array<MapData, LanePolicy>,
    control: Array<MapData, Control>,
    stats: PerCpuArray<MapData, LaneStats>,
    gateway_stats: PerCpuArray<MapData, LaneStats>,
}

fn map_err(map: &'static str) -> impl Fn(aya::maps::MapError) -> DatapathError {
    move |source| DatapathError::Map { map, source }
}

impl Maps {
    /// Takes the maps out of a loaded object.
    fn from_ebpf(ebpf: &mut Ebpf) -> Result<Self, DatapathError> {
        let mut take = |name: &'static str| ebpf.take_map(name).ok_or(DatapathError::MissingMap(name));
        Ok(Self {
            classifier: Array::try_from(take(MAP_CLASSIFIER)?).map_err(map_err(MAP_CLASSIFIER))?,
            rules: RuleSet::default(),
            lanes: Array::try_from(take(MAP_LANES)?).map_err(map_err(MAP_LANES))?,
            control: Array::try_from(take(MAP_CONTROL)?).map_err(map_err(MAP_CONTROL))?,
            stats: PerCpuArray::try_from(take(MAP_STATS)?).map_err(map_err(MAP_STATS))?,
            gateway_stats: PerCpuArray::try_from(take(MAP_GATEWAY_STATS)?).map_err(map_err(MAP_GATEWAY_STATS))?,
        })
    }

    /// Replaces every rule at once: compiles them into the classifier's tables and writes
    /// those in one map update. (A packet classified while the kernel copies the value in
    /// may see part of the old tables and part of the new: a lane of either profile, for
    /// that packet only, as with any non-atomic map update.)
    pub fn set_rules(&mut self, rules: &RuleSet) -> Result<(), DatapathError> {
        let tables = ClassifierTables::compile(rules);
        self.classifier.set(0, tables, 0).map_err(map_err(MAP_CLASSIFIER))?;
        self.rules = *rules;
        Ok(())
    }

    /// The rules in force: the last ones [`Maps::set_rules`] wrote (none after loading).
    pub fn rules(&self) -> Result<RuleSet, DatapathError> {
        Ok(self.rules)
    }

    /// Sets one lane's policy.
    pub fn set_lane(&mut self, index: usize, lane: &LanePolicy) -> Result<(), DatapathError> {
        self.lanes.set(index as u32, lane, 0).map_err(map_err(MAP_LANES))
    }

    /// One lane's policy.
    pub fn lane(&self, index: usize) -> Result<LanePolicy, DatapathError> {
        self.lanes.get(&(index as u32), 0).map_err(map_err(MAP_LANES))
    }

    /// Writes the control block.
    pub fn set_control(&mut self, control: &Control) -> Result<(), DatapathError> {
        self.control.set(0, control, 0).map_err(map_err(MAP_CONTROL))
    }

    /// The control block.
    pub fn control(&self) -> Result<Control, DatapathError> {
        self.control.get(&0, 0).map_err(map_err(MAP_CONTROL))
    }

    /// Egress counters per stats slot (lanes, then [`STATS_UNMANAGED`]), summed over CPUs.
    pub fn stats(&self) -> Result<Vec<LaneStats>, DatapathError> {
        sum_per_cpu(&self.stats, MAP_STATS)
    }

    /// The XDP gateway program's counters per stats slot, summed over CPUs.
    pub fn gateway_stats(&self) -> Result<Vec<LaneStats>, DatapathError> {
        sum_per_cpu(&self.gateway_stats, MAP_GATEWAY_STATS)
    }
}

fn sum_per_cpu(map: &PerCpuArray<MapData, LaneStats>, name: &'static str) -> Result<Vec<LaneStats>, DatapathError> {
    (0..=STATS_UNMANAGED as u32)
        .map(|slot| {
            let per_cpu = map.get(&slot, 0).map_err(map_err(name))?;
            Ok(per_cpu.iter().fold(LaneStats::default(), |acc, s| acc + *s))
        })
        .collect()
}

/// The outcome of running the classifier once on a crafted packet.
#[derive(Clone, Debug)]
pub struct TestRunOutcome {
    /// The program's return code ([`TC_ACT_UNSPEC`] to pass, [`TC_ACT_SHOT`] to drop).
    pub verdict: i32,
    /// `skb->priority` after the program ran.
    pub priority: u32,
    /// The packet as the program left it.
    pub packet: Vec<u8>,
    /// Mean run time per repetition as the kernel measured it.
    pub nanos_per_run: u64,
}

/// Offset of `priority` in `struct __sk_buff` (stable UAPI).
const SKB_CTX_PRIORITY_OFFSET: usize = 32;
/// The context passed in: the fields up to and including `priority`, all zero.
const SKB_CTX_IN_LEN: usize = 36;
/// The kernel writes its whole `struct __sk_buff` back (192 bytes on 6.x) and
/// fails with ENOSPC if the buffer is smaller; leave room for growth.
const SKB_CTX_OUT_LEN: usize = 512;

/// The loaded kernel programs and their maps.
pub struct Datapath {
    ebpf: Ebpf,
    /// The maps, shared by both programs.
    pub maps: Maps,
    tc_link: Option<(String, SchedClassifierLinkId)>,
    xdp_link: Option<(String, XdpLinkId)>,
}

impl Datapath {
    /// Loads both programs into the kernel (the verifier runs here) and creates their maps.
    pub fn load() -> Result<Self, DatapathError> {
        let mut ebpf = EbpfLoader::new().load(OBJECT)?;
        for name in [TC_PROGRAM, XDP_PROGRAM] {
            let program = ebpf.program_mut(name).ok_or(DatapathError::MissingProgram(name))?;
            let result = match program {
                aya::programs::Program::SchedClassifier(p) => p.load(),
                aya::programs::Program::Xdp(p) => p.load(),
                _ => return Err(DatapathError::MissingProgram(name)),
            };
            result.map_err(|source| DatapathError::Program { program: name, source })?;
        }
        let maps = Maps::from_ebpf(&mut ebpf)?;
        Ok(Self { ebpf, maps, tc_link: None, xdp_link: None })
    }

    fn classifier(&mut self) -> &mut SchedClassifier {
        self.ebpf.program_mut(TC_PROGRAM).and_then(|p| p.try_into().ok()).expect("checked at load")
    }

    fn xdp(&mut self) -> &mut Xdp {
        self.ebpf.program_mut(XDP_PROGRAM).and_then(|p| p.try_into().ok()).expect("checked at load")
    }

    /// Attaches the classifier to `iface`'s egress in `mode` (see [`AttachRequest::resolve`]):
    /// a tcx link, or a clsact filter on the clsact qdisc the caller made sure of with
    /// [`add_clsact`] (which says whether it added one, so that the caller can take it away
    /// again, even when this attach fails). A missing qdisc fails here.
    pub fn attach_egress(&mut self, iface: &str, mode: TcAttachMode) -> Result<(), DatapathError> {
        check_interface(iface)?;
        let options = match mode {
            TcAttachMode::Tcx => TcAttachOptions::TcxOrder(LinkOrder::default()),
            TcAttachMode::Clsact => TcAttachOptions::Netlink(NlOptions::default()),
        };
        let link = self
            .classifier()
            .attach_with_options(iface, TcAttachType::Egress, options)
            .map_err(|source| DatapathError::Program { program: TC_PROGRAM, source })?;
        self.tc_link = Some((iface.to_string(), link));
        Ok(())
    }

    /// Attaches the gateway program to `iface`'s ingress, in driver mode where the
    /// driver supports it and in generic (skb) mode otherwise; returns the mode taken
    /// (the start-up log names the fallback).
    pub fn attach_xdp(&mut self, iface: &str) -> Result<XdpAttachMode, DatapathError> {
        check_interface(iface)?;
        let xdp = self.xdp();
        let (link, mode) = match xdp.attach(iface, XdpMode::Driver) {
            Ok(link) => (link, XdpAttachMode::Driver),
            Err(_) => (
                xdp.attach(iface, XdpMode::Skb)
                    .map_err(|source| DatapathError::Program { program: XDP_PROGRAM, source })?,
                XdpAttachMode::Generic,
            ),
        };
        self.xdp_link = Some((iface.to_string(), link));
        Ok(mode)
    }

    /// Detaches both programs (dropping the [`Datapath`] does the same).
    pub fn detach(&mut self) -> Result<(), DatapathError> {
        if let Some((_, link)) = self.tc_link.take() {
            self.classifier().detach(link).map_err(|source| DatapathError::Program { program: TC_PROGRAM, source })?;
        }
        if let Some((_, link)) = self.xdp_link.take() {
            self.xdp().detach(link).map_err(|source| DatapathError::Program { program: XDP_PROGRAM, source })?;
        }
        Ok(())
    }

    /// Runs the classifier `repeat` times on `packet` (an Ethernet frame, or an IP
    /// packet when the control block says the device has no L2 header) through
    /// `BPF_PROG_TEST_RUN`, without any interface.
    pub fn run_classifier(&mut self, packet: &[u8], repeat: u32) -> Result<TestRunOutcome, DatapathError> {
        let mut out = vec![0u8; packet.len() + 256];
        let ctx_in = [0u8; SKB_CTX_IN_LEN];
        let mut ctx_out = [0u8; SKB_CTX_OUT_LEN];
        let result = self
            .classifier()
            .test_run(TestRunOptions {
                data_in: Some(packet),
                data_out: Some(&mut out),
                ctx_in: Some(&ctx_in),
                ctx_out: Some(&mut ctx_out),
                repeat,
                ..Default::default()
            })
            .map_err(|source| DatapathError::Program { program: TC_PROGRAM, source })?;
        out.truncate(result.data_size_out as usize);
        let p = SKB_CTX_PRIORITY_OFFSET;
        Ok(TestRunOutcome {
            verdict: result.return_value as i32,
            priority: u32::from_ne_bytes(ctx_out[p..p + 4].try_into().expect("4 bytes")),
            packet: out,
            nanos_per_run: result.duration.as_nanos() as u64,
        })
    }

    /// Runs the XDP program once on `frame`; returns its action (1 drop, 2 pass).
    pub fn run_xdp(&mut self, frame: &[u8]) -> Result<u32, DatapathError> {
        let result = self
            .xdp()
            .test_run(TestRunOptions { data_in: Some(frame), repeat: 1, ..Default::default() })
            .map_err(|source| DatapathError::Program { program: XDP_PROGRAM, source })?;
        Ok(result.return_value)
    }
}

fn check_interface(iface: &str) -> Result<(), DatapathError> {
    if Path::new("/sys/class/net").join(iface).exists() {
        Ok(())
    } else {
        Err(DatapathError::NoSuchInterface(iface.to_string()))
    }
}

/// How the XDP gateway program was attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpAttachMode {
    /// In the driver (native XDP): before the kernel allocates a socket buffer.
    Driver,
    /// Generic (skb) XDP, the fallback for drivers without native XDP: the same
    /// verdicts, a little later in the receive path.
    Generic,
}

/// Whether the running kernel attaches tc programs with tcx links (Linux 6.6+).
pub fn kernel_has_tcx() -> bool {
    let (major, minor) = attach::TCX_SINCE;
    aya::util::KernelVersion::current().is_ok_and(|v| v >= aya::util::KernelVersion::new(major as u8, minor as u8, 0))
}

/// Adds the clsact qdisc to `iface` if it has none; returns whether this call added it. A
/// qdisc that was there before is fine (other filters keep working beside ours) and stays its
/// owner's: `down` removes only one Bauxite added (with any filter of another tool on it, it
/// stays too). Any other failure shows when [`Datapath::attach_egress`] adds the filter.
pub fn add_clsact(iface: &str) -> bool {
    aya::programs::tc::qdisc_add_clsact(iface).is_ok()
}

/// Removes every clsact filter of the classifier from `iface`'s egress (left by a
/// daemon that died in clsact mode, which the lease made step aside); the caller
/// has checked that there is at least one (see the shaper's netlink reader).
pub fn detach_clsact_filters(iface: &str) -> Result<(), DatapathError> {
    aya::programs::tc::qdisc_detach_program(iface, TcAttachType::Egress, TC_PROGRAM)
        .map_err(|source| DatapathError::Detach { iface: iface.to_string(), source })
}

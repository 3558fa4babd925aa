//! What the running kernel offers of what Bauxite's programs need, probed the way
//! libbpf and aya do (loading a minimal program), so that `up` can say exactly what
//! is missing before it changes anything. The shaper turns these facts into
//! fallbacks or a refusal (it adds what is not eBPF: HTB).
//!
//! Each feature's minimum kernel (the README's table):
//!
//! | feature | minimum Linux | if missing |
//! |---|---|---|
//! | tc classifier programs (`BPF_PROG_TYPE_SCHED_CLS`) on clsact | 4.5 | refuse |
//! | helper `bpf_skb_pull_data` | 4.9 | refuse |
//! | XDP programs (the gateway) | 4.8 (generic mode 4.12) | refuse `--gateway-iface` |
//! | bounded loops in the programs | 5.3 | refuse (the verifier rejects the programs) |
//! | XDP links | 5.9 | attached over netlink instead (aya's own fallback) |
//! | kernel BTF (`/sys/kernel/btf/vmlinux`) | 5.4 with `CONFIG_DEBUG_INFO_BTF` | load without it: the programs need no CO-RE relocation |
//! | tcx links | 6.6 | a clsact filter that the lease makes step aside |

use std::path::Path;

use aya::programs::ProgramType;
use aya::sys::{BpfHelper, is_helper_supported, is_program_supported};

/// Every helper the programs call: its C name, its id, and the first kernel that has
/// it. A test checks this list against the calls in the compiled object.
pub const HELPERS: &[(&str, BpfHelper, &str)] = &[
    ("bpf_map_lookup_elem", BpfHelper::BPF_FUNC_map_lookup_elem, "3.19"),
    ("bpf_ktime_get_ns", BpfHelper::BPF_FUNC_ktime_get_ns, "4.1"),
    ("bpf_get_prandom_u32", BpfHelper::BPF_FUNC_get_prandom_u32, "4.1"),
    ("bpf_skb_pull_data", BpfHelper::BPF_FUNC_skb_pull_data, "4.9"),
];

/// The helpers the XDP gateway program calls (a subset: it never pulls skb data).
const XDP_HELPERS: &[&str] = &["bpf_map_lookup_elem", "bpf_ktime_get_ns", "bpf_get_prandom_u32"];

/// A helper a program type lacks on this kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingHelper {
    /// Its C name.
    pub name: &'static str,
    /// The first kernel that has it.
    pub since: &'static str,
    /// `tc` or `xdp`: the program that calls it.
    pub program: &'static str,
}

/// The eBPF facts of the running kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EbpfFeatures {
    /// The kernel's release (`uname -r`).
    pub release: String,
    /// The kernel publishes its BTF (`/sys/kernel/btf/vmlinux`).
    pub btf: bool,
    /// tcx links (6.6+).
    pub tcx: bool,
    /// The verifier accepts bounded loops (5.3+), which the parser uses.
    pub bounded_loops: bool,
    /// tc classifier programs load.
    pub tc_programs: bool,
    /// XDP programs load.
    pub xdp_programs: bool,
    /// Helpers the programs call that the kernel lacks for their program type.
    pub missing_helpers: Vec<MissingHelper>,
}

impl EbpfFeatures {
    /// Probes the running kernel (needs the privileges that loading programs needs; a
    /// probe that cannot run counts as missing, and the refusal says so).
    pub fn probe() -> Self {
        let tc_programs = is_program_supported(ProgramType::SchedClassifier).unwrap_or(false);
        let xdp_programs = is_program_supported(ProgramType::Xdp).unwrap_or(false);
        let mut missing_helpers = Vec::new();
        for (program, kind, present) in
            [("tc", ProgramType::SchedClassifier, tc_programs), ("xdp", ProgramType::Xdp, xdp_programs)]
        {
            // Without the program type, the refusal names the type, not each helper.
            if !present {
                continue;
            }
            for &(name, helper, since) in HELPERS {
                let used = program == "tc" || XDP_HELPERS.contains(&name);
                if used && !is_helper_supported(kind, helper).unwrap_or(false) {
                    missing_helpers.push(MissingHelper { name, since, program });
                }
            }
        }
        Self {
            release: kernel_release(),
            btf: Path::new("/sys/kernel/btf/vmlinux").exists(),
            tcx: crate::kernel_has_tcx(),
            bounded_loops: aya::util::KernelVersion::current()
                .is_ok_and(|v| v >= aya::util::KernelVersion::new(5, 3, 0)),
            tc_programs,
            xdp_programs,
            missing_helpers,
        }
    }
}

/// `uname -r`, or `unknown`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

//! The start-up feature probe: what `up` needs of the kernel, what this one lacks,
//! the fallback taken for each gap that has one, and a refusal naming every gap that
//! has none, before anything is attached.
//!
//! The facts ([`KernelFacts`]) are probed once; the decision ([`check`]) is a pure
//! function of them, so it is tested for the kernels robots run (5.10, 5.15, 6.1)
//! on this machine's 6.x.

use std::path::Path;

use bauxite_ebpf::features::EbpfFeatures;
use bauxite_ebpf::{AttachChoice, AttachRequest};

use crate::ShaperError;

/// Everything the probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFacts {
    /// The eBPF side.
    pub ebpf: EbpfFeatures,
    /// HTB (`sch_htb`) is loaded, built in or loadable; `None`: cannot tell (no module
    /// index, as in some containers), and `tc` will say if it is missing.
    pub htb: Option<bool>,
}

impl KernelFacts {
    /// Probes the running kernel.
    pub fn probe() -> Self {
        let ebpf = EbpfFeatures::probe();
        let htb = htb_available(Path::new("/"), &ebpf.release);
        Self { ebpf, htb }
    }
}

/// Whether `sch_htb` is loaded (or built in with parameters: `/sys/module`), or listed
/// in the kernel's module index as built in or loadable, under `root`.
fn htb_available(root: &Path, release: &str) -> Option<bool> {
    if root.join("sys/module/sch_htb").exists() {
        return Some(true);
    }
    let modules = root.join("lib/modules").join(release);
    let mut index_found = false;
    for list in ["modules.builtin", "modules.dep"] {
        if let Ok(text) = std::fs::read_to_string(modules.join(list)) {
            index_found = true;
            if text.contains("/sch_htb.ko") {
                return Some(true);
            }
        }
    }
    index_found.then_some(false)
}

/// What the probe concluded: the attach mode and the lines the start-up log prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureReport {
    /// The classifier's attach mode and why.
    pub attach: AttachChoice,
    /// Each missing feature that has a fallback: what is missing, and what is done instead.
    pub fallbacks: Vec<String>,
}

/// Decides from `facts` how `up` runs with `request` (and an XDP gateway if
/// `gateway`), or refuses naming everything the kernel lacks that has no fallback.
pub fn check(facts: &KernelFacts, request: AttachRequest, gateway: bool) -> Result<FeatureReport, ShaperError> {
    let e = &facts.ebpf;
    let mut lacks = Vec::new();
    let mut fallbacks = Vec::new();
    if !e.tc_programs {
        lacks.push("tc classifier programs (BPF_PROG_TYPE_SCHED_CLS, 4.5+)".to_string());
    }
    if !e.bounded_loops {
        lacks.push("bounded loops in the verifier (5.3+), which the packet parser uses".to_string());
    }
    if gateway && !e.xdp_programs {
        lacks.push("XDP programs (4.8+), which --gateway-iface needs".to_string());
    }
    for h in &e.missing_helpers {
        if h.program == "tc" || gateway {
            lacks.push(format!("helper {} in {} programs ({}+)", h.name, h.program, h.since));
        }
    }
    if facts.htb == Some(false) {
        lacks.push("the HTB qdisc (sch_htb: CONFIG_NET_SCH_HTB), which holds the lanes".to_string());
    }
    let attach = match request.resolve(&e.release, e.tcx) {
        Ok(choice) => Some(choice),
        Err(refused) => {
            lacks.push(refused.to_string());
            None
        }
    };
    if !lacks.is_empty() {
        return Err(ShaperError::KernelLacks { release: e.release.clone(), lacks: lacks.join("; ") });
    }
    if !e.tcx {
        fallbacks.push("tcx links (6.6+): a clsact filter instead, which the lease makes step aside".into());
    }
    if !e.btf {
        fallbacks.push(
            "kernel BTF (/sys/kernel/btf/vmlinux): loading without it (the programs need no CO-RE relocation)".into(),
        );
    }
    if facts.htb.is_none() {
        fallbacks.push("no kernel module index to look for sch_htb in: tc will say if HTB is missing".into());
    }
    Ok(FeatureReport { attach: attach.expect("no refusal, so resolved"), fallbacks })
}

#[cfg(test)]
mod tests {
    use bauxite_ebpf::TcAttachMode;
    use bauxite_ebpf::features::MissingHelper;

    use super::*;

    /// A kernel with everything, as `release` says.
    fn kernel(release: &str, tcx: bool) -> KernelFacts {
        KernelFacts {
            ebpf: EbpfFeatures {
                release: release.into(),
                btf: true,
                tcx,
                bounded_loops: true,
                tc_programs: true,
                xdp_programs: true,
                missing_helpers: vec![],
            },
            htb: Some(true),
        }
    }

    #[test]
    fn robots_kernels_fall_back_to_clsact_and_say_so() {
        for release in ["5.10.120-tegra", "5.15.0-91-generic", "6.1.0-rpi7-rpi-v8"] {
            let report = check(&kernel(release, false), AttachRequest::Auto, true).unwrap();
            assert_eq!(report.attach.mode, TcAttachMode::Clsact, "{release}");
            assert!(report.attach.reason.contains(release), "{}", report.attach.reason);
            assert!(report.fallbacks.iter().any(|f| f.contains("tcx links (6.6+)")), "{:?}", report.fallbacks);
        }
        let new = check(&kernel("6.8.0", true), AttachRequest::Auto, false).unwrap();
        assert_eq!(new.attach.mode, TcAttachMode::Tcx);
        assert!(new.fallbacks.is_empty(), "{:?}", new.fallbacks);
    }

    #[test]
    fn missing_btf_and_an_unknown_module_index_are_fallbacks_not_refusals() {
        let mut facts = kernel("5.15.0", false);
        facts.ebpf.btf = false;
        facts.htb = None;
        let report = check(&facts, AttachRequest::Clsact, false).unwrap();
        assert!(report.fallbacks.iter().any(|f| f.contains("kernel BTF")), "{:?}", report.fallbacks);
        assert!(report.fallbacks.iter().any(|f| f.contains("sch_htb")), "{:?}", report.fallbacks);
    }

    #[test]
    fn a_refusal_names_every_gap_without_a_fallback() {
        let mut facts = kernel("4.19.0", false);
        facts.ebpf.bounded_loops = false;
        facts.ebpf.xdp_programs = false;
        facts.htb = Some(false);
        facts.ebpf.missing_helpers = vec![MissingHelper { name: "bpf_skb_pull_data", since: "4.9", program: "tc" }];
        let err = check(&facts, AttachRequest::Tcx, true).unwrap_err().to_string();
        for gap in
            ["4.19.0", "bounded loops", "XDP programs", "bpf_skb_pull_data in tc programs", "sch_htb", "--attach tcx"]
        {
            assert!(err.contains(gap), "`{gap}` missing from: {err}");
        }
    }

    #[test]
    fn xdp_gaps_refuse_only_a_gateway() {
        let mut facts = kernel("5.4.0", false);
        facts.ebpf.xdp_programs = false;
        facts.ebpf.missing_helpers = vec![MissingHelper { name: "bpf_ktime_get_ns", since: "4.1", program: "xdp" }];
        assert!(check(&facts, AttachRequest::Auto, false).is_ok());
        let err = check(&facts, AttachRequest::Auto, true).unwrap_err().to_string();
        assert!(err.contains("XDP programs") && err.contains("bpf_ktime_get_ns in xdp"), "{err}");
    }

    #[test]
    fn htb_is_found_loaded_built_in_or_loadable_and_unknown_without_an_index() {
        let root = std::env::temp_dir().join(bauxite_sys::unique_name("htb-probe"));
        let modules = root.join("lib/modules/6.1.0");
        std::fs::create_dir_all(&modules).unwrap();
        assert_eq!(htb_available(&root, "5.15.0"), None, "no index for this release");
        std::fs::write(modules.join("modules.dep"), "kernel/net/sched/sch_tbf.ko:\n").unwrap();
        assert_eq!(htb_available(&root, "6.1.0"), Some(false));
        std::fs::write(modules.join("modules.builtin"), "kernel/net/sched/sch_htb.ko\n").unwrap();
        assert_eq!(htb_available(&root, "6.1.0"), Some(true));
        std::fs::create_dir_all(root.join("sys/module/sch_htb")).unwrap();
        assert_eq!(htb_available(&root, "9.9.9"), Some(true));
        std::fs::remove_dir_all(root).ok();
    }
}

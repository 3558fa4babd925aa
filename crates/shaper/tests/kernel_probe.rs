//! The start-up feature probe on the running kernel (needs root: it loads minimal
//! programs). CI's kernel is a 6.x with everything Bauxite uses, so the probe must
//! find every feature there: a probe that misreads a present feature as missing would
//! refuse `up` on robots that can run it, or push them onto a fallback for nothing.

use bauxite_ebpf::TcAttachMode;
use bauxite_ebpf::features::EbpfFeatures;
use bauxite_shaper::AttachRequest;
use bauxite_shaper::features::{KernelFacts, check};
use bauxite_sys::root_or_skip;

#[test]
fn the_probe_finds_every_feature_of_this_kernel() {
    if !root_or_skip("the_probe_finds_every_feature_of_this_kernel") {
        return;
    }
    let facts = KernelFacts::probe();
    let EbpfFeatures { ref release, tc_programs, xdp_programs, bounded_loops, tcx, ref missing_helpers, .. } =
        facts.ebpf;
    eprintln!("kernel {release}: {facts:?}");
    assert!(tc_programs && xdp_programs && bounded_loops && tcx, "{facts:?}");
    assert!(missing_helpers.is_empty(), "every helper the programs call is here: {missing_helpers:?}");
    // Built in here (Some(true)); a machine with sch_htb as an unloaded module and no
    // /lib/modules could only say None (cannot tell), never Some(false).
    assert_ne!(facts.htb, Some(false), "the shaper's tests use HTB on this kernel");

    let report = check(&facts, AttachRequest::Auto, true).expect("nothing lacking on this kernel");
    assert_eq!(report.attach.mode, TcAttachMode::Tcx);
    assert!(report.attach.reason.contains(release.as_str()), "{}", report.attach.reason);
    let forced = check(&facts, AttachRequest::Clsact, true).expect("clsact on any kernel");
    assert_eq!(forced.attach.mode, TcAttachMode::Clsact);
}

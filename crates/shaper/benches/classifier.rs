//! The classifier's cost per packet, measured by the kernel (`BPF_PROG_TEST_RUN` with
//! repeat), for the packets a robot sends and for the worst case of a full rule table.
//! The baseline is the same program stepping aside (daemon lease expired), so the
//! ratios say what classification adds on top of merely being attached.
//!
//! Run as root: `cargo bench -p bauxite-shaper --bench classifier`.

use bauxite_core::{Dscp, Match, PortRange, PortSide, Profile, Protocol, Rule, ValidatedProfile};
use bauxite_ebpf::craft::{FrameSpec, TCP, UDP, V6_DEST_OPTS, V6_HOP_BY_HOP};
use bauxite_ebpf::{Control, Datapath};
use bauxite_shaper::plan::{lane_policy, rule_set};
use bauxite_sys::monotonic_ns;

const REPEAT: u32 = 2_000_000;

fn datapath(profile: &ValidatedProfile, live: bool) -> Datapath {
    let mut dp = Datapath::load().expect("load the programs (are you root?)");
    dp.maps.set_rules(&rule_set(profile)).unwrap();
    for i in 0..profile.lanes.len() {
        dp.maps.set_lane(i, &lane_policy(profile, i)).unwrap();
    }
    let heartbeat_ns = if live { monotonic_ns() } else { 0 };
    dp.maps.set_control(&Control { heartbeat_ns, lease_ns: 3_600_000_000_000, congested: 0, l2_header: 1 }).unwrap();
    dp
}

/// Median of five runs of `REPEAT` repetitions, in ns per packet.
fn cost(dp: &mut Datapath, frame: &[u8]) -> f64 {
    let mut runs: Vec<u64> = (0..5).map(|_| dp.run_classifier(frame, REPEAT).unwrap().nanos_per_run).collect();
    runs.sort_unstable();
    runs[2] as f64
}

fn main() {
    if !bauxite_sys::is_root() {
        eprintln!("classifier benchmark: needs root (BPF_PROG_TEST_RUN); skipped");
        return;
    }
    let robot = Profile::robot().validate().expect("the built-in profile");
    let udp = |dport| FrameSpec { protocol: UDP, sport: 40000, dport, payload: 64, ..Default::default() };
    let video =
        FrameSpec { protocol: TCP, sport: 40000, dport: 8080, tcp_flags: 0x10, payload: 1448, ..Default::default() };

    // A full table of 64 rules where only the last matches: the worst case.
    let mut full = Profile::robot();
    full.rules = (0..63)
        .map(|i| Rule {
            lane: "bulk".into(),
            matches: Match::Port {
                protocol: Protocol::Tcp,
                ports: PortRange { first: 20000 + i, last: 20000 + i },
                side: PortSide::Either,
            },
        })
        .chain([Rule { lane: "critical".into(), matches: Match::Dscp(Dscp::EF) }])
        .collect();
    let full = full.validate().expect("64 rules fit");

    let baseline = cost(&mut datapath(&robot, false), &udp(7400).build());
    let mut live = datapath(&robot, true);
    let mut worst = datapath(&full, true);
    let ipv6 = FrameSpec { ipv6: true, v6_extensions: vec![V6_HOP_BY_HOP, V6_DEST_OPTS], ..udp(7401) };
    let cases = [
        ("critical UDP/IPv4 (first rule)", udp(7400).build(), false),
        ("video TCP/IPv4 (third rule)", video.build(), false),
        ("critical UDP/IPv6, 2 extension headers", ipv6.build(), false),
        ("critical UDP/IPv4 in QinQ", FrameSpec { vlans: vec![10, 20], ..udp(7400) }.build(), false),
        ("unmatched UDP (default lane)", udp(5000).build(), false),
        ("64 rules, match on the last", FrameSpec { dscp: 46, ..udp(5000) }.build(), true),
    ];
    println!("classifier cost per packet (kernel-measured, BPF_PROG_TEST_RUN, {REPEAT} repeats, median of 5)");
    println!("| packet | ns/packet | x baseline |");
    println!("|---|---:|---:|");
    println!("| baseline: lease expired, program steps aside | {baseline:.1} | 1.00 |");
    for (name, frame, full_table) in cases {
        let ns = cost(if full_table { &mut worst } else { &mut live }, &frame);
        println!("| {name} | {ns:.1} | {:.2} |", ns / baseline);
    }
}

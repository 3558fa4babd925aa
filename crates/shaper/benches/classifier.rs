//! The classifier's cost per packet, measured by the kernel (`BPF_PROG_TEST_RUN` with
//! repeat), for every rule kind at 1, 16 and `MAX_RULES` rules, the matching rule always
//! the last one (the worst case of a linear scan). The baseline is the same program
//! stepping aside (daemon lease expired), measured in the same run, so the differences
//! say what classification adds on top of merely being attached.
//!
//! Run as root: `cargo bench -p bauxite-shaper --bench classifier`.

use bauxite_core::{Dscp, MAX_RULES, Match, PortRange, PortSide, Profile, Protocol, Rule, ValidatedProfile};
use bauxite_ebpf::craft::{FrameSpec, TCP, UDP, V6_DEST_OPTS, V6_HOP_BY_HOP};
use bauxite_ebpf::{Control, Datapath};
use bauxite_shaper::plan::{lane_policy, rule_set};
use bauxite_sys::monotonic_ns;

const REPEAT: u32 = 1_000_000;
/// Rule counts measured; `MAX_RULES` last (deduplicated if it is one of the others).
const COUNTS: [usize; 4] = [1, 16, 64, MAX_RULES];

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

fn port_rule(lane: &str, protocol: Protocol, first: u16, last: u16) -> Rule {
    Rule {
        lane: lane.into(),
        matches: Match::Port { protocol, ports: PortRange { first, last }, side: PortSide::Either },
    }
}

/// One rule kind: `count` rules of which only the last matches the kind's packet.
struct Kind {
    name: &'static str,
    rules: fn(usize) -> Vec<Rule>,
    packet: FrameSpec,
}

/// `count - 1` UDP port rules that miss, then `last`.
fn port_rules_then(count: usize, width: u16, last: Rule) -> Vec<Rule> {
    (0..count as u16 - 1)
        .map(|i| port_rule("bulk", Protocol::Udp, 20000 + i * width, 20000 + i * width + width - 1))
        .chain([last])
        .collect()
}

fn kinds() -> Vec<Kind> {
    let udp = |dport| FrameSpec { protocol: UDP, sport: 40000, dport, payload: 64, ..Default::default() };
    vec![
        Kind {
            name: "UDP port",
            rules: |n| port_rules_then(n, 1, port_rule("critical", Protocol::Udp, 7400, 7400)),
            packet: udp(7400),
        },
        Kind {
            name: "TCP port range",
            rules: |n| port_rules_then(n, 100, port_rule("critical", Protocol::Tcp, 8000, 8099)),
            packet: FrameSpec { protocol: TCP, sport: 40000, dport: 8080, tcp_flags: 0x10, payload: 1448, ..udp(0) },
        },
        Kind {
            name: "DSCP",
            rules: |n| {
                let other = (0..64u8).filter(|&d| d != 46).map(|d| Dscp::new(d).expect("below 64"));
                other
                    .take(n - 1)
                    .map(|d| Rule { lane: "bulk".into(), matches: Match::Dscp(d) })
                    .chain([Rule { lane: "critical".into(), matches: Match::Dscp(Dscp::EF) }])
                    .collect()
            },
            packet: FrameSpec { dscp: 46, ..udp(5000) },
        },
        Kind {
            name: "UDP/IPv6, 2 extension headers",
            rules: |n| port_rules_then(n, 1, port_rule("critical", Protocol::Any, 7401, 7401)),
            packet: FrameSpec { ipv6: true, v6_extensions: vec![V6_HOP_BY_HOP, V6_DEST_OPTS], ..udp(7401) },
        },
        Kind {
            name: "UDP in QinQ (2 VLAN tags)",
            rules: |n| port_rules_then(n, 1, port_rule("critical", Protocol::Udp, 7400, 7400)),
            packet: FrameSpec { vlans: vec![10, 20], ..udp(7400) },
        },
        Kind {
            name: "unmatched UDP (default lane)",
            rules: |n| (0..n as u16).map(|i| port_rule("bulk", Protocol::Udp, 20000 + i, 20000 + i)).collect(),
            packet: udp(5000),
        },
    ]
}

fn main() {
    if !bauxite_sys::is_root() {
        eprintln!("classifier benchmark: needs root (BPF_PROG_TEST_RUN); skipped");
        return;
    }
    let profile_with = |rules: Vec<Rule>| {
        let mut p = Profile::robot();
        p.rules = rules;
        p.validate().expect("the benchmark's rules fit")
    };
    let robot = Profile::robot().validate().expect("the built-in profile");
    let udp = FrameSpec { protocol: UDP, sport: 40000, dport: 7400, payload: 64, ..Default::default() }.build();
    let mut counts = COUNTS.to_vec();
    counts.dedup();

    let baseline = cost(&mut datapath(&robot, false), &udp);
    println!("classifier cost per packet (kernel-measured, BPF_PROG_TEST_RUN, {REPEAT} repeats, median of 5)");
    println!("the matching rule is the last of the table; MAX_RULES = {MAX_RULES}");
    println!("| packet | rules | ns/packet | over baseline (ns) | x baseline |");
    println!("|---|---:|---:|---:|---:|");
    println!("| baseline: lease expired, program steps aside | - | {baseline:.1} | 0.0 | 1.00 |");
    for kind in kinds() {
        let frame = kind.packet.build();
        for &n in &counts {
            let mut dp = datapath(&profile_with((kind.rules)(n)), true);
            let ns = cost(&mut dp, &frame);
            println!("| {} | {n} | {ns:.1} | {:.1} | {:.2} |", kind.name, ns - baseline, ns / baseline);
        }
    }
}

//! The classifier's lookup tables give the verdicts of the linear first-match scan they
//! replaced: random profiles (rule kinds, overlapping ranges, sides, DSCP) and random
//! well-formed packets (IPv4/IPv6, extension headers, VLAN tags, fragments, protocols
//! without ports) through the kernel programs with `BPF_PROG_TEST_RUN`, against core's
//! first-match semantics (`Profile::lane_of`, `Match::matches`). Seeded and bounded: every run
//! checks the same cases. Needs root (fails instead of skipping under `CI=true`).

use bauxite_core::rng::SplitMix64;
use bauxite_core::{Dscp, MAX_RULES, Match, PacketKey, PortRange, PortSide, Profile, Protocol, Rule, ValidatedProfile};
use bauxite_ebpf::craft::{FrameSpec, TCP, UDP, V6_DEST_OPTS, V6_HOP_BY_HOP, V6_ROUTING};
use bauxite_ebpf::{ClassifierTables, Control, Datapath, TC_ACT_UNSPEC};
use bauxite_shaper::plan::{lane_policy, rule_set};
use bauxite_sys::{monotonic_ns, root_or_skip};

const SEED: u64 = 0x15;
const PROFILES: usize = 120;
const PACKETS_PER_PROFILE: usize = 60;
/// Lanes of the random profiles: as many as the kernel has room for.
const LANES: usize = bauxite_core::MAX_LANES;

fn pick<T: Copy>(rng: &mut SplitMix64, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

/// A port near the ports the rules use, so that range edges are hit, or any port.
fn port(rng: &mut SplitMix64) -> u16 {
    let near: [u16; 12] = [1, 2, 7399, 7400, 7401, 7402, 7410, 8079, 8080, 8081, 65534, 65535];
    if rng.below(4) == 0 {
        rng.below(65536) as u16
    } else {
        pick(rng, &near).saturating_add(rng.below(3) as u16).max(1)
    }
}

fn random_rule(rng: &mut SplitMix64) -> Match {
    if rng.below(4) == 0 {
        let any = rng.below(64) as u8;
        return Match::Dscp(Dscp::new(pick(rng, &[0, 10, 36, 46, 63, any])).expect("below 64"));
    }
    let first = port(rng);
    let width = pick(rng, &[0, 0, 1, 3, 100, 65535]);
    let last = first.saturating_add(width);
    Match::Port {
        protocol: pick(rng, &[Protocol::Udp, Protocol::Tcp, Protocol::Any]),
        ports: PortRange { first, last },
        side: pick(rng, &[PortSide::Dst, PortSide::Src, PortSide::Either]),
    }
}

fn random_profile(rng: &mut SplitMix64) -> ValidatedProfile {
    let mut p = Profile::robot();
    let template = p.lanes[0].clone();
    p.lanes = (0..LANES)
        .map(|i| bauxite_core::Lane { name: format!("lane{i}"), share: 1.0 / LANES as f64, ..template.clone() })
        .collect();
    p.default_lane = format!("lane{}", rng.below(LANES as u64));
    p.ack_lane = (rng.below(2) == 0).then(|| format!("lane{}", rng.below(LANES as u64)));
    let count = match rng.below(4) {
        0 => MAX_RULES,
        1 => rng.below(4) as usize,
        _ => rng.below(MAX_RULES as u64 + 1) as usize,
    };
    p.rules = (0..count)
        .map(|_| Rule { lane: format!("lane{}", rng.below(LANES as u64)), matches: random_rule(rng) })
        .collect();
    p.validate().unwrap_or_else(|e| panic!("a random profile is valid: {e}"))
}

/// A random well-formed frame, what core's matcher sees in it, the ports the kernel
/// reads (none for other protocols and later fragments), and whether it is a pure TCP
/// ACK (a whole TCP header with the ACK flag and no payload).
fn random_packet(rng: &mut SplitMix64) -> (FrameSpec, PacketKey, Option<(u16, u16)>, bool) {
    let ipv6 = rng.below(2) == 1;
    let icmp = if ipv6 { 58 } else { 1 };
    let protocol = pick(rng, &[UDP, UDP, TCP, TCP, icmp, 47]);
    let any_dscp = rng.below(64) as u8;
    let fragment_offset = pick(rng, &[None, None, None, Some(0), Some(185)]);
    let spec = FrameSpec {
        vlans: [vec![], vec![100], vec![100, 200]][rng.below(3) as usize].clone(),
        ipv6,
        dscp: pick(rng, &[0, 10, 36, 46, 63, any_dscp]),
        protocol,
        sport: port(rng),
        dport: port(rng),
        tcp_flags: pick(rng, &[0x10, 0x10, 0x18, 0x12]),
        payload: pick(rng, &[16, 0]),
        fragment_offset,
        more_fragments: fragment_offset == Some(0),
        v6_extensions: if ipv6 {
            (0..rng.below(3)).map(|_| pick(rng, &[V6_HOP_BY_HOP, V6_DEST_OPTS, V6_ROUTING])).collect()
        } else {
            vec![]
        },
        ..Default::default()
    };
    let has_ports = (protocol == UDP || protocol == TCP) && fragment_offset != Some(185);
    let ports = has_ports.then_some((spec.sport, spec.dport));
    // Port 0 is no rule's (core refuses it in a range): the key of a packet without ports.
    let (src_port, dst_port) = ports.unwrap_or((0, 0));
    let key = PacketKey { ip_proto: protocol, src_port, dst_port, dscp: spec.dscp };
    let pure_ack = protocol == TCP && has_ports && spec.payload == 0 && spec.tcp_flags & 0x17 == 0x10;
    (spec, key, ports, pure_ack)
}

/// The index of the lane core's first-match semantics gives `key`; a pure TCP ACK then
/// takes `ack_lane` if that is more urgent.
fn lane_index(profile: &ValidatedProfile, key: &PacketKey, pure_ack: bool) -> usize {
    let lane = profile.lane_of(key);
    match profile.ack_lane_index() {
        Some(ack) if pure_ack && ack < lane => ack,
        _ => lane,
    }
}

/// The lane the Rust mirror of the kernel's lookup gives.
fn mirror_lane(tables: &ClassifierTables, key: &PacketKey, ports: Option<(u16, u16)>, pure_ack: bool) -> usize {
    let lane = tables.lane(key.dscp, key.ip_proto, ports);
    (if pure_ack { tables.pure_ack_lane(lane) } else { lane }) as usize
}

fn live(dp: &mut Datapath) {
    let control = Control { heartbeat_ns: monotonic_ns(), lease_ns: 3_600_000_000_000, congested: 0, l2_header: 1 };
    dp.maps.set_control(&control).unwrap();
}

#[test]
fn the_tables_give_the_first_match_verdicts_of_the_linear_scan() {
    if !root_or_skip("the_tables_give_the_first_match_verdicts_of_the_linear_scan") {
        return;
    }
    let mut dp = Datapath::load().expect("load the programs");
    live(&mut dp);
    let mut rng = SplitMix64::new(SEED);
    for profile_no in 0..PROFILES {
        let profile = random_profile(&mut rng);
        let rules = rule_set(&profile);
        dp.maps.set_rules(&rules).unwrap();
        for lane in 0..LANES {
            dp.maps.set_lane(lane, &lane_policy(&profile, lane)).unwrap();
        }
        let tables = ClassifierTables::compile(&rules);
        let gateway_before = dp.maps.gateway_stats().unwrap();
        let mut expected_per_lane = [0u64; LANES];
        for packet_no in 0..PACKETS_PER_PROFILE {
            let (spec, key, ports, pure_ack) = random_packet(&mut rng);
            let expected = lane_index(&profile, &key, pure_ack);
            let case = || format!("profile {profile_no}, packet {packet_no}: {spec:?}\nrules: {:?}", profile.rules);
            assert_eq!(
                mirror_lane(&tables, &key, ports, pure_ack),
                expected,
                "the Rust mirror of the lookup, {}",
                case()
            );
            let out = dp.run_classifier(&spec.build(), 1).unwrap();
            assert_eq!(out.verdict, TC_ACT_UNSPEC, "{}", case());
            assert_eq!(out.priority, lane_policy(&profile, expected).priority, "tc classifier, {}", case());
            dp.run_xdp(&spec.build()).unwrap();
            expected_per_lane[expected] += 1;
        }
        // The XDP gateway program shares the lookup; its per-lane counters show its verdicts.
        let gateway_after = dp.maps.gateway_stats().unwrap();
        let seen: Vec<u64> = (0..LANES).map(|l| gateway_after[l].packets - gateway_before[l].packets).collect();
        assert_eq!(seen, expected_per_lane, "XDP gateway lanes, profile {profile_no}: {:?}", profile.rules);
    }
}

/// Without root: the compiled tables, read as the kernel reads them, agree with core's
/// first-match semantics on many more random profiles and packets.
#[test]
fn the_compiled_tables_agree_with_first_match_without_the_kernel() {
    let mut rng = SplitMix64::new(SEED + 1);
    for profile_no in 0..400 {
        let profile = random_profile(&mut rng);
        let tables = ClassifierTables::compile(&rule_set(&profile));
        for _ in 0..500 {
            let (_, key, ports, pure_ack) = random_packet(&mut rng);
            let lane = mirror_lane(&tables, &key, ports, pure_ack);
            let expected = lane_index(&profile, &key, pure_ack);
            assert_eq!(
                lane, expected,
                "profile {profile_no}: {key:?}, pure ACK {pure_ack}\nrules: {:?}",
                profile.rules
            );
        }
    }
}

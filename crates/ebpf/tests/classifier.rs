//! The classifier on crafted packets through BPF_PROG_TEST_RUN (needs root).

use bauxite_ebpf::craft::{FrameSpec, TCP, UDP, V6_DEST_OPTS, V6_HOP_BY_HOP, V6_ROUTING, ipv4_checksum};
use bauxite_ebpf::maps::{RULE_DSCP, RULE_PORT, SIDE_DST, SIDE_SRC};
use bauxite_ebpf::{Control, Datapath, LanePolicy, Rule, RuleSet, STATS_UNMANAGED, TC_ACT_SHOT, TC_ACT_UNSPEC};
use bauxite_sys::{monotonic_ns, root_or_skip};

const CRITICAL: u32 = 0x1_0010;
const TELEMETRY: u32 = 0x1_0011;
const BULK: u32 = 0x1_0012;
const CONTROL_LANE: u32 = 0x1_0013;
const EITHER: u8 = SIDE_DST | SIDE_SRC;

fn port_rule(lane: u32, proto: u8, first: u16, last: u16) -> Rule {
    Rule { port_first: first, port_last: last, kind: RULE_PORT, ip_proto: proto, side: EITHER, dscp: 0, lane }
}

/// The robot profile's rules (lanes 0 critical, 1 telemetry, 2 bulk) plus a DSCP lane 3,
/// with a live lease.
fn robot_datapath() -> Datapath {
    let mut dp = Datapath::load().expect("load the programs");
    let mut set = RuleSet { count: 4, default_lane: 1, ..Default::default() };
    set.rules[0] = port_rule(0, UDP, 7400, 7401);
    set.rules[1] = port_rule(1, UDP, 7410, 7410);
    set.rules[2] = port_rule(2, TCP, 8080, 8080);
    set.rules[3] = Rule { kind: RULE_DSCP, dscp: 36, lane: 3, ..Default::default() };
    dp.maps.set_rules(&set).unwrap();
    for (i, prio) in [CRITICAL, TELEMETRY, BULK, CONTROL_LANE].into_iter().enumerate() {
        let droppable = u8::from(i == 2);
        dp.maps.set_lane(i, &LanePolicy { priority: prio, droppable, ..Default::default() }).unwrap();
    }
    set_control(&mut dp, false);
    dp
}

fn set_control(dp: &mut Datapath, congested: bool) {
    let control = Control {
        heartbeat_ns: monotonic_ns(),
        lease_ns: 3_600_000_000_000,
        congested: congested.into(),
        l2_header: 1,
    };
    dp.maps.set_control(&control).unwrap();
}

fn udp(dport: u16) -> FrameSpec {
    FrameSpec { protocol: UDP, sport: 40000, dport, payload: 32, ..Default::default() }
}

fn tcp(sport: u16, dport: u16, flags: u8) -> FrameSpec {
    FrameSpec { protocol: TCP, sport, dport, tcp_flags: flags, payload: 1000, ..Default::default() }
}

fn priority_of(dp: &mut Datapath, frame: &[u8]) -> u32 {
    let out = dp.run_classifier(frame, 1).unwrap();
    assert_eq!(out.verdict, TC_ACT_UNSPEC, "classification alone never drops");
    out.priority
}

#[test]
fn every_lane_by_port_over_ipv4_and_ipv6() {
    if !root_or_skip("every_lane_by_port_over_ipv4_and_ipv6") {
        return;
    }
    let mut dp = robot_datapath();
    for ipv6 in [false, true] {
        let v = |mut s: FrameSpec| {
            s.ipv6 = ipv6;
            s.build()
        };
        assert_eq!(priority_of(&mut dp, &v(udp(7400))), CRITICAL, "ipv6={ipv6}");
        assert_eq!(priority_of(&mut dp, &v(udp(7401))), CRITICAL, "ipv6={ipv6}");
        assert_eq!(priority_of(&mut dp, &v(udp(7410))), TELEMETRY, "ipv6={ipv6}");
        assert_eq!(priority_of(&mut dp, &v(tcp(40000, 8080, 0x10))), BULK, "ipv6={ipv6}");
        // The robot may serve the video: the source port counts too.
        assert_eq!(priority_of(&mut dp, &v(tcp(8080, 40000, 0x10))), BULK, "ipv6={ipv6}");
        // Protocol matters: UDP 8080 is not video; unknown ports take the default lane.
        assert_eq!(priority_of(&mut dp, &v(udp(8080))), TELEMETRY, "ipv6={ipv6}");
        assert_eq!(priority_of(&mut dp, &v(udp(7402))), TELEMETRY, "ipv6={ipv6}");
    }
}

#[test]
fn dst_and_src_sides_are_honoured() {
    if !root_or_skip("dst_and_src_sides_are_honoured") {
        return;
    }
    let mut dp = robot_datapath();
    let mut set = dp.maps.rules().unwrap();
    set.rules[0].side = SIDE_DST;
    dp.maps.set_rules(&set).unwrap();
    let mut reply = udp(40000);
    reply.sport = 7400;
    assert_eq!(priority_of(&mut dp, &reply.build()), TELEMETRY);
    assert_eq!(priority_of(&mut dp, &udp(7400).build()), CRITICAL);
}

#[test]
fn vlan_and_qinq_frames_are_classified() {
    if !root_or_skip("vlan_and_qinq_frames_are_classified") {
        return;
    }
    let mut dp = robot_datapath();
    for vlans in [vec![100], vec![100, 200]] {
        for ipv6 in [false, true] {
            let frame = FrameSpec { vlans: vlans.clone(), ipv6, ..udp(7401) }.build();
            assert_eq!(priority_of(&mut dp, &frame), CRITICAL, "vlans={vlans:?} ipv6={ipv6}");
        }
    }
}

#[test]
fn ipv6_extension_headers_are_skipped() {
    if !root_or_skip("ipv6_extension_headers_are_skipped") {
        return;
    }
    let mut dp = robot_datapath();
    let frame = FrameSpec { ipv6: true, v6_extensions: vec![V6_HOP_BY_HOP, V6_ROUTING, V6_DEST_OPTS], ..udp(7400) };
    assert_eq!(priority_of(&mut dp, &frame.build()), CRITICAL);
    // More extension headers than the bounded parser follows: the default lane, not a drop.
    let deep = FrameSpec { ipv6: true, v6_extensions: vec![V6_DEST_OPTS; 8], ..udp(7400) };
    assert_eq!(priority_of(&mut dp, &deep.build()), TELEMETRY);
}

#[test]
fn fragments_first_is_classified_later_ones_take_the_default_lane() {
    if !root_or_skip("fragments_first_is_classified_later_ones_take_the_default_lane") {
        return;
    }
    let mut dp = robot_datapath();
    for ipv6 in [false, true] {
        let first = FrameSpec { ipv6, fragment_offset: Some(0), more_fragments: true, ..udp(7400) };
        assert_eq!(priority_of(&mut dp, &first.build()), CRITICAL, "ipv6={ipv6}");
        // A later fragment carries payload where the ports would be: it must not be read as ports.
        let later = FrameSpec { ipv6, fragment_offset: Some(185), ..udp(7400) };
        assert_eq!(priority_of(&mut dp, &later.build()), TELEMETRY, "ipv6={ipv6}");
    }
}

#[test]
fn truncated_and_foreign_packets_pass_in_the_default_lane() {
    if !root_or_skip("truncated_and_foreign_packets_pass_in_the_default_lane") {
        return;
    }
    let mut dp = robot_datapath();
    set_control(&mut dp, true); // even congested, odd packets are never dropped
    let mut bulk_lane = dp.maps.lane(2).unwrap();
    bulk_lane.drop_prob = u32::MAX;
    dp.maps.set_lane(2, &bulk_lane).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for ipv6 in [false, true] {
        let spec = FrameSpec { ipv6, ..tcp(40000, 8080, 0x10) };
        let full = spec.build();
        let ip = spec.ip_offset();
        // The kernel's test harness refuses frames too short for the fixed IP header
        // their EtherType announces (EINVAL before the program runs), so the cuts
        // start after it: no transport header, part of one, most of one.
        let cuts = if ipv6 { [ip + 40, ip + 41, ip + 47, ip + 59] } else { [ip + 20, ip + 21, ip + 27, ip + 39] };
        for cut in cuts {
            cases.push((format!("ipv6={ipv6} cut at {cut}"), full[..cut].to_vec()));
        }
    }
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    cases.push(("arp".into(), arp));
    let vlan_cut = FrameSpec { vlans: vec![5, 6], ..udp(7400) }.build()[..16].to_vec();
    cases.push(("vlan tag cut".into(), vlan_cut));
    // An IPv6 extension header cut short.
    let ext = FrameSpec { ipv6: true, v6_extensions: vec![V6_HOP_BY_HOP], ..udp(7400) };
    cases.push(("ipv6 extension header cut".into(), ext.build()[..ext.ip_offset() + 41].to_vec()));
    // An IPv4 header that claims options the frame does not have.
    let mut long_header = FrameSpec { ..tcp(40000, 8080, 0x10) }.build();
    long_header[14] = 0x4f;
    cases.push(("ihl beyond the frame".into(), long_header[..14 + 40].to_vec()));
    let mut short_ihl = udp(7400).build();
    short_ihl[14] = 0x43;
    cases.push(("ihl below 5".into(), short_ihl));
    let before = dp.maps.stats().unwrap()[1].odd_packets;
    for (name, frame) in &cases {
        let out = dp.run_classifier(frame, 1).unwrap_or_else(|e| panic!("{name} ({} bytes): {e}", frame.len()));
        assert_eq!(out.verdict, TC_ACT_UNSPEC, "{name}");
        assert_eq!(out.priority, TELEMETRY, "{name}");
    }
    let after = dp.maps.stats().unwrap()[1].odd_packets;
    assert_eq!(after - before, cases.len() as u64, "every one is counted as odd");
}

#[test]
fn dscp_rules_match_ipv4_and_ipv6() {
    if !root_or_skip("dscp_rules_match_ipv4_and_ipv6") {
        return;
    }
    let mut dp = robot_datapath();
    for ipv6 in [false, true] {
        let frame = FrameSpec { ipv6, dscp: 36, ..udp(5000) }.build();
        assert_eq!(priority_of(&mut dp, &frame), CONTROL_LANE, "ipv6={ipv6}");
        let frame = FrameSpec { ipv6, dscp: 38, ..udp(5000) }.build();
        assert_eq!(priority_of(&mut dp, &frame), TELEMETRY, "ipv6={ipv6}");
    }
}

#[test]
fn dscp_rewrite_keeps_ecn_and_a_valid_checksum() {
    if !root_or_skip("dscp_rewrite_keeps_ecn_and_a_valid_checksum") {
        return;
    }
    let mut dp = robot_datapath();
    dp.maps.set_lane(0, &LanePolicy { priority: CRITICAL, mark_dscp: 1, dscp: 46, ..Default::default() }).unwrap();
    for vlans in [vec![], vec![7]] {
        let spec = FrameSpec { vlans, dscp: 10, ecn: 2, ..udp(7400) };
        let out = dp.run_classifier(&spec.build(), 1).unwrap();
        let ip = &out.packet[spec.ip_offset()..spec.ip_offset() + 20];
        assert_eq!(ip[1] >> 2, 46, "DSCP rewritten");
        assert_eq!(ip[1] & 3, 2, "ECN kept");
        assert_eq!(ipv4_checksum(ip), 0, "header checksum still valid");
    }
    let spec = FrameSpec { ipv6: true, dscp: 10, ecn: 1, ..udp(7400) };
    let out = dp.run_classifier(&spec.build(), 1).unwrap();
    let ip = &out.packet[spec.ip_offset()..];
    let tclass = (ip[0] & 0x0f) << 4 | ip[1] >> 4;
    assert_eq!(ip[0] >> 4, 6, "version kept");
    assert_eq!(tclass >> 2, 46, "DSCP rewritten");
    assert_eq!(tclass & 3, 1, "ECN kept");
    assert_eq!(ip[1] & 0x0f, 0, "flow label kept");
}

#[test]
fn bulk_is_dropped_early_only_when_congested() {
    if !root_or_skip("bulk_is_dropped_early_only_when_congested") {
        return;
    }
    let mut dp = robot_datapath();
    let mut bulk = dp.maps.lane(2).unwrap();
    bulk.drop_prob = u32::MAX;
    dp.maps.set_lane(2, &bulk).unwrap();
    let video = tcp(40000, 8080, 0x10).build();
    assert_eq!(dp.run_classifier(&video, 1).unwrap().verdict, TC_ACT_UNSPEC, "not congested: never dropped");

    set_control(&mut dp, true);
    assert_eq!(dp.run_classifier(&video, 1).unwrap().verdict, TC_ACT_SHOT);
    let syn = tcp(40000, 8080, 0x02).build();
    assert_eq!(dp.run_classifier(&syn, 1).unwrap().verdict, TC_ACT_UNSPEC, "connection control is never dropped");
    assert_eq!(dp.run_classifier(&udp(7400).build(), 1).unwrap().verdict, TC_ACT_UNSPEC, "critical is never dropped");

    // Half the probability: about half the packets.
    bulk.drop_prob = u32::MAX / 2;
    dp.maps.set_lane(2, &bulk).unwrap();
    let before = dp.maps.stats().unwrap()[2];
    let drops = (0..1000).filter(|_| dp.run_classifier(&video, 1).unwrap().verdict == TC_ACT_SHOT).count();
    assert!((400..=600).contains(&drops), "{drops} of 1000 dropped at p=0.5");
    let after = dp.maps.stats().unwrap()[2];
    assert_eq!(after.packets - before.packets, 1000);
    assert_eq!(after.early_drops - before.early_drops, drops as u64);
    assert_eq!(after.bytes - before.bytes, 1000 * video.len() as u64);
}

#[test]
fn arp_and_icmp_are_never_shed_even_in_a_droppable_default_lane() {
    if !root_or_skip("arp_and_icmp_are_never_shed_even_in_a_droppable_default_lane") {
        return;
    }
    let mut dp = robot_datapath();
    set_control(&mut dp, true);
    let mut set = dp.maps.rules().unwrap();
    set.default_lane = 2; // the droppable bulk lane
    dp.maps.set_rules(&set).unwrap();
    let mut bulk = dp.maps.lane(2).unwrap();
    bulk.drop_prob = u32::MAX;
    dp.maps.set_lane(2, &bulk).unwrap();
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    let icmp = FrameSpec { protocol: 1, payload: 56, ..Default::default() }.build();
    let icmpv6 = FrameSpec { ipv6: true, protocol: 58, payload: 32, ..Default::default() }.build();
    for (name, frame) in [("arp", arp), ("icmp", icmp), ("icmpv6", icmpv6)] {
        let out = dp.run_classifier(&frame, 1).unwrap();
        assert_eq!((out.verdict, out.priority), (TC_ACT_UNSPEC, BULK), "{name}");
    }
    assert_eq!(dp.run_classifier(&udp(5000).build(), 1).unwrap().verdict, TC_ACT_SHOT, "other default traffic is shed");
}

#[test]
fn an_expired_lease_makes_the_classifier_step_aside() {
    if !root_or_skip("an_expired_lease_makes_the_classifier_step_aside") {
        return;
    }
    let mut dp = robot_datapath();
    let mut bulk = dp.maps.lane(2).unwrap();
    bulk.drop_prob = u32::MAX;
    dp.maps.set_lane(2, &bulk).unwrap();
    let control =
        Control { heartbeat_ns: monotonic_ns() - 2_000_000_000, lease_ns: 1_000_000_000, congested: 1, l2_header: 1 };
    dp.maps.set_control(&control).unwrap();
    let out = dp.run_classifier(&tcp(40000, 8080, 0x10).build(), 1).unwrap();
    assert_eq!(out.verdict, TC_ACT_UNSPEC, "a dead daemon's drop probability is ignored");
    assert_eq!(out.priority, 0, "and packets are not steered into shaped classes");
    assert_eq!(dp.maps.stats().unwrap()[STATS_UNMANAGED].packets, 1);
}

#[test]
fn the_gateway_program_drops_bulk_early_when_congested() {
    if !root_or_skip("the_gateway_program_drops_bulk_early_when_congested") {
        return;
    }
    const XDP_DROP: u32 = 1;
    const XDP_PASS: u32 = 2;
    let mut dp = robot_datapath();
    let mut bulk = dp.maps.lane(2).unwrap();
    bulk.drop_prob = u32::MAX;
    dp.maps.set_lane(2, &bulk).unwrap();
    let video = tcp(40000, 8080, 0x10).build();
    assert_eq!(dp.run_xdp(&video).unwrap(), XDP_PASS);
    set_control(&mut dp, true);
    assert_eq!(dp.run_xdp(&video).unwrap(), XDP_DROP);
    assert_eq!(dp.run_xdp(&udp(7400).build()).unwrap(), XDP_PASS);
    let gw = dp.maps.gateway_stats().unwrap();
    assert_eq!((gw[2].packets, gw[2].early_drops, gw[0].packets), (2, 1, 1));
    assert_eq!(dp.maps.stats().unwrap()[2].packets, 0, "egress counters are separate");
}

/// With an ACK lane (telemetry here), a pure TCP ACK of the bulk lane (a download's ACK
/// leaving beside an upload) takes it; an ACK that carries data, a SYN-ACK, a FIN, an
/// RST and an ACK of a more urgent lane keep their own lanes. Without one, nothing moves.
#[test]
fn pure_acks_take_the_ack_lane_when_theirs_is_less_urgent() {
    if !root_or_skip("pure_acks_take_the_ack_lane_when_theirs_is_less_urgent") {
        return;
    }
    let mut dp = robot_datapath();
    let pure_ack =
        |ipv6: bool, v6_extensions: Vec<u8>| FrameSpec { ipv6, v6_extensions, payload: 0, ..tcp(40000, 8080, 0x10) };
    assert_eq!(priority_of(&mut dp, &pure_ack(false, vec![]).build()), BULK, "no ACK lane: no change");
    let mut set = dp.maps.rules().unwrap();
    set.ack_lane = Some(1);
    set.rules[4] = port_rule(0, TCP, 9000, 9000); // a critical TCP flow
    set.count = 5;
    dp.maps.set_rules(&set).unwrap();
    for ipv6 in [false, true] {
        let extensions = if ipv6 { vec![V6_HOP_BY_HOP, V6_DEST_OPTS] } else { vec![] };
        for spec in [pure_ack(ipv6, vec![]), pure_ack(ipv6, extensions)] {
            assert_eq!(priority_of(&mut dp, &spec.build()), TELEMETRY, "{spec:?}");
        }
        let with = |flags: u8, payload: usize| FrameSpec { ipv6, payload, ..tcp(40000, 8080, flags) }.build();
        assert_eq!(priority_of(&mut dp, &with(0x10, 1)), BULK, "ipv6={ipv6}: one byte of data");
        assert_eq!(priority_of(&mut dp, &with(0x12, 0)), BULK, "ipv6={ipv6}: SYN-ACK");
        assert_eq!(priority_of(&mut dp, &with(0x11, 0)), BULK, "ipv6={ipv6}: FIN-ACK");
        assert_eq!(priority_of(&mut dp, &with(0x14, 0)), BULK, "ipv6={ipv6}: RST-ACK");
        assert_eq!(priority_of(&mut dp, &with(0x00, 0)), BULK, "ipv6={ipv6}: no ACK flag");
        let critical_ack = FrameSpec { ipv6, payload: 0, ..tcp(40000, 9000, 0x10) }.build();
        assert_eq!(priority_of(&mut dp, &critical_ack), CRITICAL, "ipv6={ipv6}: never less urgent");
    }
}

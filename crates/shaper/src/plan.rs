//! What a profile becomes on an interface: an HTB tree and the classifier's tables.

use bauxite_core::{BitRate, Match, PortSide, Profile, ValidatedProfile, paced_burst_bytes};
use bauxite_ebpf::maps::{RULE_DSCP, RULE_PORT, SIDE_DST, SIDE_SRC};
use bauxite_ebpf::{LanePolicy, Rule, RuleSet};

// Core bounds a profile by these; the kernel maps (and their mirrors in
// `bauxite-ebpf`, checked against the C header at build time) are sized by them.
// The shaper is where both are visible, so the two are tied here.
const _: () = assert!(bauxite_core::MAX_LANES == bauxite_ebpf::MAX_LANES, "core and ebpf disagree on MAX_LANES");
const _: () = assert!(bauxite_core::MAX_RULES == bauxite_ebpf::MAX_RULES, "core and ebpf disagree on MAX_RULES");

use crate::tc::{FIRST_LANE_MINOR, HTB_MAJOR, HtbLeaf, HtbTree, classid};

/// The HTB class minor of lane `index`.
pub fn lane_minor(index: usize) -> u16 {
    FIRST_LANE_MINOR + index as u16
}

/// Where a tree shapes: before the link (the uplink's egress), or after it (the
/// downlink's ingress device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Before the link: the senders are this host's, and a full lane pushes back on them.
    BeforeLink,
    /// After the link: a far sender's packets, which crossed it already.
    AfterLink,
}

/// After the link, a droppable lane holds at most this long at its rate. A packet
/// held longer than the far sender's retransmission timeout (200 ms at least) is resent
/// while it waits, and the resends fill the far queue this shaper exists to keep short:
/// at `min_rate` a 64-packet lane is 4 s.
pub const AFTER_LINK_QUEUE_TIME_MS: u64 = 100;

/// The packets a droppable lane after the link may hold at `rate` (full-size packets,
/// at least two: one leaving and one waiting).
pub fn after_link_limit(rate: BitRate) -> u32 {
    let packets = rate.bps() as f64 * AFTER_LINK_QUEUE_TIME_MS as f64 / 1e3 / (8.0 * 1514.0);
    (packets.ceil() as u32).max(2)
}

/// The HTB tree for `profile` at `rate` on `iface`: lane `i` guaranteed its share
/// and allowed to borrow up to `rate` (`Profile::lane_class`; while `held`, only
/// lane 0 borrows), served in lane order when borrowing; the droppable lanes and the
/// link class paced packet by packet at low rates (`Profile::lane_burst_bytes`). After
/// the link the droppable lanes' queues are bounded in time too ([`after_link_limit`]),
/// so they follow the rate: a tree's lines re-set them ([`HtbTree::reload_lines`]).
pub fn htb_tree(profile: &Profile, iface: &str, rate: BitRate, held: bool, placement: Placement) -> HtbTree {
    let leaves = profile
        .lanes
        .iter()
        .enumerate()
        .map(|(i, lane)| {
            let class = profile.lane_class(i, rate, held);
            HtbLeaf {
                minor: lane_minor(i),
                rate: class.guarantee,
                ceil: class.ceil,
                prio: i.min(7) as u8,
                limit_packets: match placement {
                    Placement::AfterLink if lane.drop_when_congested => lane.queue_limit.min(after_link_limit(rate)),
                    _ => lane.queue_limit,
                },
                burst_bytes: profile.lane_burst_bytes(i, class.guarantee),
                cburst_bytes: profile.lane_burst_bytes(i, class.ceil),
            }
        })
        .collect();
    HtbTree { iface: iface.to_string(), rate, burst_bytes: paced_burst_bytes(rate), leaves }
}

/// The classifier's rule table for `profile`.
pub fn rule_set(profile: &ValidatedProfile) -> RuleSet {
    let mut set = RuleSet {
        count: profile.rules.len() as u32,
        default_lane: profile.default_lane_index() as u32,
        ack_lane: profile.ack_lane_index().map(|lane| lane as u32),
        ..Default::default()
    };
    for (slot, (lane, matches)) in set.rules.iter_mut().zip(profile.resolved_rules()) {
        let lane = lane as u32;
        *slot = match *matches {
            Match::Port { protocol, ports, side } => Rule {
                port_first: ports.first,
                port_last: ports.last,
                kind: RULE_PORT,
                ip_proto: protocol.ip_proto(),
                side: match side {
                    PortSide::Dst => SIDE_DST,
                    PortSide::Src => SIDE_SRC,
                    PortSide::Either => SIDE_DST | SIDE_SRC,
                },
                dscp: 0,
                lane,
            },
            Match::Dscp(d) => Rule { kind: RULE_DSCP, dscp: d.value(), lane, ..Default::default() },
        };
    }
    set
}

/// The classifier's per-lane policy for lane `index` (drop probability starts at 0).
pub fn lane_policy(profile: &Profile, index: usize) -> LanePolicy {
    let lane = &profile.lanes[index];
    LanePolicy {
        priority: classid(HTB_MAJOR, lane_minor(index)),
        drop_prob: 0,
        mark_dscp: u8::from(lane.dscp_mark.is_some()),
        dscp: lane.dscp_mark.map_or(0, |d| d.value()),
        droppable: u8::from(lane.drop_when_congested),
        ..Default::default()
    }
}

/// A probability in [0, 1] as the classifier's fraction of `u32::MAX`.
pub fn probability_to_u32(p: f64) -> u32 {
    (p.clamp(0.0, 1.0) * f64::from(u32::MAX)).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_robot_profile_becomes_three_htb_lanes_and_three_rules() {
        let p = Profile::robot();
        let tree = htb_tree(&p, "eth0", BitRate::from_bps(1_500_000), false, Placement::BeforeLink);
        let rates: Vec<u64> = tree.leaves.iter().map(|l| l.rate.bps()).collect();
        assert_eq!(rates, [450_000, 300_000, 750_000]);
        assert!(tree.leaves.iter().all(|l| l.ceil.bps() == 1_500_000));
        assert_eq!(tree.leaves.iter().map(|l| l.prio).collect::<Vec<_>>(), [0, 1, 2]);

        let rules = rule_set(&p.clone().validate().unwrap());
        assert_eq!((rules.count, rules.default_lane, rules.ack_lane), (3, 1, Some(1)));
        assert_eq!((rules.rules[0].port_first, rules.rules[0].port_last, rules.rules[0].ip_proto), (7400, 7401, 17));
        assert_eq!((rules.rules[2].port_first, rules.rules[2].ip_proto, rules.rules[2].lane), (8080, 6, 2));

        assert_eq!(lane_policy(&p, 0).priority, 0x00ba_0010);
        assert_eq!(lane_policy(&p, 2).droppable, 1);
        assert_eq!(lane_policy(&p, 0).droppable, 0);
    }

    #[test]
    fn after_the_link_a_droppable_lane_holds_100_ms_at_its_rate() {
        let p = Profile::robot();
        let limits = |rate: u64, placement| {
            htb_tree(&p, "ifb0", BitRate::from_bps(rate), false, placement)
                .leaves
                .iter()
                .map(|l| l.limit_packets)
                .collect::<Vec<_>>()
        };
        // The robot's video lane (the third) is droppable; the others keep their limits.
        assert_eq!(limits(1_500_000, Placement::BeforeLink), [64, 64, 48]);
        // 1.5 Mbit/s for 100 ms is 12.4 full packets; at 180 kbit/s, 1.5: two.
        assert_eq!(limits(1_500_000, Placement::AfterLink), [64, 64, 13]);
        assert_eq!(limits(180_000, Placement::AfterLink), [64, 64, 2]);
        assert_eq!(limits(100_000_000, Placement::AfterLink), [64, 64, 48], "never above the profile's");
    }

    #[test]
    fn dscp_rules_and_marks_carry_over() {
        let mut p = Profile::orchestrator();
        p.lanes[0].dscp_mark = bauxite_core::Dscp::new(46);
        let rules = rule_set(&p.clone().validate().unwrap());
        assert_eq!((rules.rules[0].kind, rules.rules[0].dscp, rules.rules[0].lane), (RULE_DSCP, 36, 0));
        assert_eq!(rules.ack_lane, None, "the orchestrator moves no ACKs");
        let lane = lane_policy(&p, 0);
        assert_eq!((lane.mark_dscp, lane.dscp), (1, 46));
    }

    #[test]
    fn probabilities_scale_to_u32() {
        assert_eq!(probability_to_u32(0.0), 0);
        assert_eq!(probability_to_u32(1.0), u32::MAX);
        assert_eq!(probability_to_u32(2.0), u32::MAX);
        assert!((probability_to_u32(0.5) as i64 - (u32::MAX / 2) as i64).abs() <= 1);
    }
}

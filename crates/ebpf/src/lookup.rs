//! Compiling a rule table into the classifier's lookup tables.
//!
//! The kernel does not scan the rules: for each value a rule can look at (a DSCP, a UDP
//! or TCP destination port, a source port) a table holds the *rank* of the first rule
//! that matches it (`MAX_RULES - index`, 0 for none), and the packet's first matching
//! rule is the one of highest rank among its three entries. Port ranges are expanded here,
//! once per profile, so they cost nothing per packet. [`ClassifierTables::lane`] is the
//! same lookup in Rust, for tests that compare it with the first-match semantics.

use crate::maps::{
    ClassifierTables, DSCPS, MAX_RULES, PORT_TABLE_DST, PORT_TABLE_SRC, PORT_TABLE_TCP, PORT_TABLE_UDP, RULE_DSCP,
    RULE_PORT, RuleSet, SIDE_DST, SIDE_SRC,
};

/// IP protocol number of TCP.
const IPPROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
const IPPROTO_UDP: u8 = 17;

impl ClassifierTables {
    /// The tables of `rules`: the first `rules.count` rules (at most [`MAX_RULES`]), first
    /// match first. Rules that can never match (unknown kind, a protocol other than UDP or
    /// TCP, a DSCP above 63, no side, an empty range) take no entry, as they never matched
    /// in a scan either.
    pub fn compile(rules: &RuleSet) -> Box<Self> {
        let mut tables = Self::empty();
        tables.default_lane = rules.default_lane;
        tables.ack_lane = rules.ack_lane.map_or(0, |lane| lane.saturating_add(1));
        let count = (rules.count as usize).min(MAX_RULES);
        // Last rule first, so that an earlier rule overwrites what a later one wrote.
        for (index, rule) in rules.rules[..count].iter().enumerate().rev() {
            let rank = (MAX_RULES - index) as u8;
            tables.lane_of_rule[index] = u8::try_from(rule.lane).unwrap_or(u8::MAX);
            match rule.kind {
                RULE_DSCP if usize::from(rule.dscp) < DSCPS => tables.dscp_rank[usize::from(rule.dscp)] = rank,
                RULE_PORT if rule.port_first <= rule.port_last => {
                    let ports = usize::from(rule.port_first)..=usize::from(rule.port_last);
                    for &table in port_tables(rule.ip_proto) {
                        for (side, bit) in [(PORT_TABLE_DST, SIDE_DST), (PORT_TABLE_SRC, SIDE_SRC)] {
                            if rule.side & bit != 0 {
                                tables.port_rank[table][side][ports.clone()].fill(rank);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        tables
    }

    /// The lane the kernel gives an IP packet with this DSCP, protocol and (source,
    /// destination) ports (`None` when it carries no whole UDP or TCP header: later
    /// fragments, other protocols, truncated transport headers). The same steps as
    /// `bx_lane_of` in `classify.h`; a pure TCP ACK's is then [`Self::pure_ack_lane`].
    pub fn lane(&self, dscp: u8, ip_proto: u8, ports: Option<(u16, u16)>) -> u32 {
        let mut rank = self.dscp_rank[usize::from(dscp) % DSCPS];
        if let Some((src, dst)) = ports.filter(|_| ip_proto == IPPROTO_UDP || ip_proto == IPPROTO_TCP) {
            let table = if ip_proto == IPPROTO_TCP { PORT_TABLE_TCP } else { PORT_TABLE_UDP };
            rank = rank
                .max(self.port_rank[table][PORT_TABLE_DST][usize::from(dst)])
                .max(self.port_rank[table][PORT_TABLE_SRC][usize::from(src)]);
        }
        let lane = if rank == 0 {
            self.default_lane
        } else {
            u32::from(self.lane_of_rule[(MAX_RULES - usize::from(rank)) % MAX_RULES])
        };
        if (lane as usize) < crate::MAX_LANES { lane } else { 0 }
    }

    /// The lane the kernel gives a pure TCP ACK (no payload; no SYN, FIN or RST) whose
    /// rules give `lane`: the ACK lane when that is more urgent, as `bx_lane_of` decides.
    pub fn pure_ack_lane(&self, lane: u32) -> u32 {
        match self.ack_lane.checked_sub(1) {
            Some(ack) if ack < lane => ack,
            _ => lane,
        }
    }
}

/// The port tables a port rule for `ip_proto` fills: 0 means UDP or TCP.
fn port_tables(ip_proto: u8) -> &'static [usize] {
    match ip_proto {
        0 => &[PORT_TABLE_UDP, PORT_TABLE_TCP],
        IPPROTO_UDP => &[PORT_TABLE_UDP],
        IPPROTO_TCP => &[PORT_TABLE_TCP],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::Rule;

    const EITHER: u8 = SIDE_DST | SIDE_SRC;

    fn port(lane: u32, ip_proto: u8, first: u16, last: u16, side: u8) -> Rule {
        Rule { port_first: first, port_last: last, kind: RULE_PORT, ip_proto, side, dscp: 0, lane }
    }

    fn dscp(lane: u32, value: u8) -> Rule {
        Rule { kind: RULE_DSCP, dscp: value, lane, ..Default::default() }
    }

    fn set(default_lane: u32, rules: &[Rule]) -> Box<ClassifierTables> {
        let mut set = RuleSet { count: rules.len() as u32, default_lane, ..Default::default() };
        set.rules[..rules.len()].copy_from_slice(rules);
        ClassifierTables::compile(&set)
    }

    #[test]
    fn a_pure_ack_takes_the_ack_lane_only_when_more_urgent() {
        let mut rules = RuleSet { count: 0, default_lane: 2, ack_lane: Some(1), ..Default::default() };
        let t = ClassifierTables::compile(&rules);
        assert_eq!((t.ack_lane, t.pure_ack_lane(2), t.pure_ack_lane(1), t.pure_ack_lane(0)), (2, 1, 1, 0));
        rules.ack_lane = None;
        let t = ClassifierTables::compile(&rules);
        assert_eq!((t.ack_lane, t.pure_ack_lane(2)), (0, 2), "none: every ACK keeps its lane");
    }

    #[test]
    fn no_rules_is_the_default_lane_and_an_empty_map_is_lane_zero() {
        let t = set(3, &[]);
        assert_eq!(t.lane(46, IPPROTO_UDP, Some((1, 2))), 3);
        assert_eq!(ClassifierTables::empty().lane(46, IPPROTO_UDP, Some((1, 2))), 0);
    }

    #[test]
    fn the_first_matching_rule_wins_across_ranges_sides_and_dscp() {
        // Overlapping ranges: 7400-7409 (lane 1) before 7405 (lane 2, shadowed) before 7000-7999 (lane 3).
        let t = set(
            0,
            &[
                port(1, IPPROTO_UDP, 7400, 7409, EITHER),
                port(2, IPPROTO_UDP, 7405, 7405, EITHER),
                dscp(4, 46),
                port(3, 0, 7000, 7999, SIDE_DST),
                port(5, IPPROTO_TCP, 1, 65535, SIDE_SRC),
            ],
        );
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((50000, 7405))), 1, "the range before the shadowed exact port");
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((7409, 50000))), 1, "either side");
        assert_eq!(t.lane(46, IPPROTO_UDP, Some((50000, 7400))), 1, "a port rule before the DSCP rule");
        assert_eq!(t.lane(46, IPPROTO_UDP, Some((50000, 7500))), 4, "the DSCP rule before a later port rule");
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((50000, 7500))), 3, "protocol 0 covers UDP");
        assert_eq!(t.lane(0, IPPROTO_TCP, Some((50000, 7500))), 3, "and TCP");
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((7500, 50000))), 0, "a destination-only rule ignores the source");
        assert_eq!(t.lane(0, IPPROTO_TCP, Some((7500, 50000))), 5, "the source-side catch-all for TCP");
        assert_eq!(t.lane(0, IPPROTO_TCP, Some((65535, 65535))), 5, "the range includes its last port");
        assert_eq!(t.lane(0, IPPROTO_TCP, None), 0, "no ports: only DSCP rules apply");
        assert_eq!(t.lane(46, IPPROTO_TCP, None), 4);
        assert_eq!(t.lane(0, 1, Some((7400, 7400))), 0, "ICMP has no ports to match");
    }

    #[test]
    fn rules_past_the_count_and_rules_that_never_match_take_no_entry() {
        let mut rules = RuleSet { count: 4, default_lane: 2, ..Default::default() };
        rules.rules[0] = port(1, 1, 7400, 7400, EITHER); // ICMP "ports"
        rules.rules[1] = port(1, IPPROTO_UDP, 7400, 7400, 0); // no side
        rules.rules[2] = dscp(1, 64); // not a DSCP
        rules.rules[3] = Rule { kind: 9, ..port(1, IPPROTO_UDP, 7400, 7400, EITHER) };
        rules.rules[4] = port(1, IPPROTO_UDP, 7400, 7400, EITHER); // past the count
        let t = ClassifierTables::compile(&rules);
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((7400, 7400))), 2);
        assert!(t.port_rank.iter().flatten().flatten().all(|&r| r == 0));
        assert!(t.dscp_rank.iter().all(|&r| r == 0));
    }

    #[test]
    fn a_full_table_keeps_the_first_and_the_last_rule_apart() {
        let rules: Vec<Rule> =
            (0..MAX_RULES as u16).map(|i| port(u32::from(i % 8), IPPROTO_UDP, 100 + i, 100 + i, EITHER)).collect();
        let t = set(0, &rules);
        for i in 0..MAX_RULES as u16 {
            assert_eq!(t.lane(0, IPPROTO_UDP, Some((1, 100 + i))), u32::from(i % 8), "rule {i}");
        }
        // A lane index beyond the lanes is lane 0, as in the kernel.
        let t = set(0, &[port(9, IPPROTO_UDP, 1, 1, EITHER)]);
        assert_eq!(t.lane(0, IPPROTO_UDP, Some((1, 1))), 0);
    }
}

//! Lanes and the rules that put packets into them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most lanes a profile may have; the kernel maps are sized for this
/// (`bauxite-ebpf`'s copy is asserted equal in `bauxite-shaper`, which sees both).
pub const MAX_LANES: usize = 8;
/// The most rules a profile may have; the kernel rule table is sized for this
/// (asserted equal to `bauxite-ebpf`'s in `bauxite-shaper`).
pub const MAX_RULES: usize = 64;

/// A traffic class with its policy. A profile's lanes are ordered: the first is
/// served first at the bottleneck.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Lane {
    /// The lane's name, e.g. `critical`.
    pub name: String,
    /// The fraction of the link rate guaranteed to this lane, from
    /// [`MIN_SHARE`](crate::validate::MIN_SHARE) to 1.
    /// Every lane may borrow up to the full link rate when others are idle.
    #[schemars(range(min = crate::validate::MIN_SHARE, max = 1.0))]
    pub share: f64,
    /// DSCP written into every packet of this lane, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp_mark: Option<Dscp>,
    /// Whether this lane is discarded early while the link is congested.
    #[serde(default)]
    pub drop_when_congested: bool,
    /// The bound of this lane's queue at the bottleneck, in packets, from 1 to
    /// [`MAX_QUEUE_LIMIT`](crate::validate::MAX_QUEUE_LIMIT).
    #[serde(default = "default_queue_limit")]
    #[schemars(range(min = 1, max = crate::validate::MAX_QUEUE_LIMIT))]
    pub queue_limit: u32,
}

fn default_queue_limit() -> u32 {
    64
}

/// A Differentiated Services code point (0..=63).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dscp(u8);

impl Dscp {
    /// Expedited forwarding (46).
    pub const EF: Dscp = Dscp(46);

    /// A code point, if `value` fits in six bits.
    pub const fn new(value: u8) -> Option<Self> {
        if value < 64 { Some(Self(value)) } else { None }
    }

    /// The six-bit value.
    pub const fn value(self) -> u8 {
        self.0
    }
}

impl FromStr for Dscp {
    type Err = String;

    /// Accepts a number (`36`) or a standard name (`ef`, `af42`, `cs1`, `be`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim().to_ascii_lowercase();
        let bad = || format!("`{text}` is not a DSCP: expected 0..=63 or a name like ef, af42, cs1, be");
        if !t.is_ascii() {
            return Err(bad());
        }
        if let Ok(n) = t.parse::<u8>() {
            return Dscp::new(n).ok_or_else(bad);
        }
        let value = match t.as_str() {
            "be" | "default" | "cs0" => 0,
            "ef" => 46,
            "va" | "voice-admit" => 44,
            _ if t.len() == 3 && t.starts_with("cs") => {
                let c: u8 = t[2..].parse().map_err(|_| bad())?;
                if c > 7 {
                    return Err(bad());
                }
                c << 3
            }
            _ if t.len() == 4 && t.starts_with("af") => {
                let class: u8 = t[2..3].parse().map_err(|_| bad())?;
                let drop: u8 = t[3..4].parse().map_err(|_| bad())?;
                if !(1..=4).contains(&class) || !(1..=3).contains(&drop) {
                    return Err(bad());
                }
                (class << 3) | (drop << 1)
            }
            _ => return Err(bad()),
        };
        Ok(Dscp(value))
    }
}

impl fmt::Display for Dscp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Dscp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.0)
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::units::deserialize_from_str(d)
    }
}

/// A transport protocol a port rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// UDP only.
    Udp,
    /// TCP only.
    Tcp,
    /// UDP or TCP.
    Any,
}

impl Protocol {
    /// The IP protocol number, or 0 for any.
    pub const fn ip_proto(self) -> u8 {
        match self {
            Protocol::Udp => 17,
            Protocol::Tcp => 6,
            Protocol::Any => 0,
        }
    }
}

/// An inclusive port range, written `7400` or `7400-7401`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    /// First port of the range.
    pub first: u16,
    /// Last port of the range (inclusive).
    pub last: u16,
}

impl PortRange {
    /// Whether `port` is in the range.
    pub const fn contains(self, port: u16) -> bool {
        self.first <= port && port <= self.last
    }
}

impl FromStr for PortRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{text}` is not a port range: expected `PORT` or `FIRST-LAST` with ports 1..=65535");
        let (a, b) = match text.split_once('-') {
            Some((a, b)) => (a, b),
            None => (text, text),
        };
        let first: u16 = a.trim().parse().map_err(|_| bad())?;
        let last: u16 = b.trim().parse().map_err(|_| bad())?;
        if first == 0 || last < first {
            return Err(bad());
        }
        Ok(Self { first, last })
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last { write!(f, "{}", self.first) } else { write!(f, "{}-{}", self.first, self.last) }
    }
}

impl Serialize for PortRange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

crate::units::text_schema!(PortRange, "port-range", "integer");
crate::units::text_schema!(Dscp, "dscp", "integer");

impl<'de> Deserialize<'de> for PortRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::units::deserialize_from_str(d)
    }
}

/// Which port of a packet a port rule looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PortSide {
    /// The destination port only.
    Dst,
    /// The source port only.
    Src,
    /// Either port (the default): a robot may be the client or the server of a stream.
    #[default]
    Either,
}

/// What a rule matches on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Match {
    /// A transport protocol and a port range.
    Port {
        /// The protocol.
        protocol: Protocol,
        /// The ports.
        ports: PortRange,
        /// Which port is compared.
        side: PortSide,
    },
    /// The packet's DSCP.
    Dscp(Dscp),
}

/// What a rule looks at in a packet: the kernel classifier's view of it
/// (`bauxite-ebpf`'s `classify.h`), for code that must put traffic in the lanes the
/// kernel would (the demo's per-lane channels, tools, tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PacketKey {
    /// The IP protocol number (17 UDP, 6 TCP).
    pub ip_proto: u8,
    /// The source port; 0 when unknown or absent (no port range contains 0).
    pub src_port: u16,
    /// The destination port; 0 when unknown or absent.
    pub dst_port: u16,
    /// The DSCP (0..=63).
    pub dscp: u8,
}

impl PacketKey {
    /// A UDP packet between these ports, unmarked.
    pub const fn udp(src_port: u16, dst_port: u16) -> Self {
        Self { ip_proto: Protocol::Udp.ip_proto(), src_port, dst_port, dscp: 0 }
    }

    /// A TCP segment between these ports, unmarked.
    pub const fn tcp(src_port: u16, dst_port: u16) -> Self {
        Self { ip_proto: Protocol::Tcp.ip_proto(), src_port, dst_port, dscp: 0 }
    }
}

impl Match {
    /// Whether a packet matches, exactly as the kernel classifier decides: a port rule
    /// needs UDP or TCP (the rule's protocol, or either for `any`) and a port of the
    /// rule's side in its range; a DSCP rule needs that DSCP.
    pub fn matches(&self, packet: &PacketKey) -> bool {
        match *self {
            Match::Dscp(d) => packet.dscp == d.value(),
            Match::Port { protocol, ports, side } => {
                let proto_ok = match protocol {
                    Protocol::Any => [Protocol::Udp, Protocol::Tcp].iter().any(|p| p.ip_proto() == packet.ip_proto),
                    p => p.ip_proto() == packet.ip_proto,
                };
                let dst = matches!(side, PortSide::Dst | PortSide::Either) && ports.contains(packet.dst_port);
                let src = matches!(side, PortSide::Src | PortSide::Either) && ports.contains(packet.src_port);
                proto_ok && (dst || src)
            }
        }
    }
}

/// A rule: packets that match go into `lane`. Rules are tried in order; the first match wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "RuleText", into = "RuleText")]
pub struct Rule {
    /// The lane's name.
    pub lane: String,
    /// What the rule matches.
    pub matches: Match,
}

/// How a rule is written in YAML: `{lane, proto, ports[, side]}` or `{lane, dscp}`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RuleText {
    /// The lane of the packets this rule matches.
    lane: String,
    /// The transport the ports belong to (default: `any`, UDP or TCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    proto: Option<Protocol>,
    /// A port (`7401`) or a range (`7400-7499`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ports: Option<PortRange>,
    /// Which port is matched: `dst`, `src` or `either` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    side: Option<PortSide>,
    /// Match the DSCP instead of ports: 0 to 63 or a name (`ef`, `af41`, `cs6`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dscp: Option<Dscp>,
}

impl TryFrom<RuleText> for Rule {
    type Error = String;

    fn try_from(t: RuleText) -> Result<Self, String> {
        let matches = match (t.proto, t.ports, t.side, t.dscp) {
            (proto, Some(ports), side, None) => {
                Match::Port { protocol: proto.unwrap_or(Protocol::Any), ports, side: side.unwrap_or_default() }
            }
            (None, None, None, Some(dscp)) => Match::Dscp(dscp),
            (_, _, _, Some(_)) => {
                return Err(format!("rule for lane `{}` mixes `dscp` with port keys: use one or the other", t.lane));
            }
            _ => {
                return Err(format!(
                    "rule for lane `{}` needs `ports` (with optional `proto`, `side`) or `dscp`",
                    t.lane
                ));
            }
        };
        Ok(Rule { lane: t.lane, matches })
    }
}

impl From<Rule> for RuleText {
    fn from(r: Rule) -> Self {
        match r.matches {
            Match::Port { protocol, ports, side } => {
                RuleText { lane: r.lane, proto: Some(protocol), ports: Some(ports), side: Some(side), dscp: None }
            }
            Match::Dscp(d) => RuleText { lane: r.lane, proto: None, ports: None, side: None, dscp: Some(d) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscp_names_map_to_rfc_values() {
        assert_eq!("af42".parse::<Dscp>().unwrap().value(), 36);
        assert_eq!("AF43".parse::<Dscp>().unwrap().value(), 38);
        assert_eq!("af41".parse::<Dscp>().unwrap().value(), 34);
        assert_eq!("cs1".parse::<Dscp>().unwrap().value(), 8);
        assert_eq!("ef".parse::<Dscp>().unwrap().value(), 46);
        assert_eq!("be".parse::<Dscp>().unwrap().value(), 0);
        assert_eq!("63".parse::<Dscp>().unwrap().value(), 63);
        for bad in ["64", "af51", "af14", "cs8", "xx", "afé", "cš"] {
            assert!(bad.parse::<Dscp>().is_err(), "{bad}");
        }
    }

    #[test]
    fn port_ranges_parse_and_reject_nonsense() {
        assert_eq!("7400".parse::<PortRange>().unwrap(), PortRange { first: 7400, last: 7400 });
        assert_eq!("7400-7401".parse::<PortRange>().unwrap(), PortRange { first: 7400, last: 7401 });
        for bad in ["0", "7401-7400", "70000", "a-b", ""] {
            assert!(bad.parse::<PortRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn matching_follows_the_kernel_protocol_side_and_dscp() {
        let ports = PortRange { first: 7400, last: 7401 };
        let port = |protocol, side| Match::Port { protocol, ports, side };
        let udp_to = PacketKey::udp(40000, 7401);
        let udp_from = PacketKey::udp(7400, 40000);
        assert!(port(Protocol::Udp, PortSide::Dst).matches(&udp_to));
        assert!(!port(Protocol::Udp, PortSide::Dst).matches(&udp_from), "dst rule, src port");
        assert!(port(Protocol::Udp, PortSide::Src).matches(&udp_from));
        assert!(!port(Protocol::Udp, PortSide::Src).matches(&udp_to), "src rule, dst port");
        assert!(
            port(Protocol::Udp, PortSide::Either).matches(&udp_to)
                && port(Protocol::Udp, PortSide::Either).matches(&udp_from)
        );
        assert!(!port(Protocol::Tcp, PortSide::Either).matches(&udp_to), "wrong protocol");
        assert!(port(Protocol::Any, PortSide::Either).matches(&PacketKey::tcp(1, 7400)));
        let icmp = PacketKey { ip_proto: 1, ..udp_to };
        assert!(!port(Protocol::Any, PortSide::Either).matches(&icmp), "any is UDP or TCP only");
        assert!(!port(Protocol::Udp, PortSide::Either).matches(&PacketKey::udp(0, 0)), "no ports, no port match");
        let af42 = Match::Dscp(Dscp::new(36).unwrap());
        assert!(af42.matches(&PacketKey { dscp: 36, ..udp_to }));
        assert!(!af42.matches(&udp_to));
    }

    #[test]
    fn a_rule_is_ports_or_dscp_never_both() {
        let r: Rule = serde_yaml_ng::from_str("{lane: critical, proto: udp, ports: 7400-7401}").unwrap();
        assert_eq!(
            r.matches,
            Match::Port {
                protocol: Protocol::Udp,
                ports: PortRange { first: 7400, last: 7401 },
                side: PortSide::Either
            }
        );
        let r: Rule = serde_yaml_ng::from_str("{lane: control, dscp: af42}").unwrap();
        assert_eq!(r.matches, Match::Dscp(Dscp::new(36).unwrap()));
        assert!(serde_yaml_ng::from_str::<Rule>("{lane: x, dscp: 8, ports: 80}").is_err());
        assert!(serde_yaml_ng::from_str::<Rule>("{lane: x}").is_err());
        assert!(serde_yaml_ng::from_str::<Rule>("{lane: x, dscp: 8, colour: red}").is_err());
    }
}

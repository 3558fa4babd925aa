//! Where `rate: auto` sends its probes (`auto_rate.reflector`), and what each kind of
//! reflector measures.
//!
//! - `ADDR:PORT`: `bauxite reflect` on the far side. UDP probes stamped to the
//!   nanosecond, signed if the profile has a key, answered by a process that
//!   refuses what is not a probe.
//! - `icmp:ADDR`: any host that answers ICMP echo (`ping`), IPv4 or IPv6, so a
//!   robot talking to a cloud or a public anycast host needs nothing installed
//!   there. The far side's kernel answers; nothing is signed (an on-path host can
//!   forge answers, as it can drop the robot's traffic), and some hosts rate-limit
//!   echo replies, which the prober reads as loss.
//! - `icmp-timestamp:ADDR`: any IPv4 host that answers ICMP timestamp requests.
//!   Its replies carry the far side's clock only to the millisecond, too coarse to
//!   split a 2 ms queue into its directions: Bauxite uses their round trip, as for
//!   echo.
//!
//! All three measure the round trip, so a queue on the way back (a download
//! filling the downlink) reads as one on the uplink: the shaper then holds the
//! droppable lanes lower than the uplink needs until it drains.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

/// The most reflectors a profile may list: one is probed, the others are standbys.
pub const MAX_REFLECTORS: usize = 8;

/// The DSCP of ICMP probes (CS6, network control, RFC 4594): ICMP has no ports, so
/// a DSCP rule puts the probes in the critical lane (with any other CS6 traffic).
pub const ICMP_PROBE_DSCP: u8 = 48;

/// One reflector of `auto_rate.reflector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reflector {
    /// `bauxite reflect` at this address: `ADDR:PORT`.
    Bauxite(SocketAddr),
    /// A host answering ICMP (or ICMPv6) echo requests: `icmp:ADDR`.
    IcmpEcho(IpAddr),
    /// An IPv4 host answering ICMP timestamp requests: `icmp-timestamp:ADDR`.
    IcmpTimestamp(Ipv4Addr),
}

impl Reflector {
    /// The host the probes go to.
    pub fn ip(&self) -> IpAddr {
        match *self {
            Reflector::Bauxite(addr) => addr.ip(),
            Reflector::IcmpEcho(ip) => ip,
            Reflector::IcmpTimestamp(ip) => IpAddr::V4(ip),
        }
    }
}

impl FromStr for Reflector {
    type Err = String;

    /// `ADDR:PORT` (IPv6 as `[ADDR]:PORT`), `icmp:ADDR` or `icmp-timestamp:ADDR`.
    fn from_str(text: &str) -> Result<Self, String> {
        let unusable = |ip: IpAddr| ip.is_unspecified() || ip.is_multicast();
        let no_host = "is not an address a probe can be sent to (unspecified or multicast)";
        let reflector = if let Some(host) = text.strip_prefix("icmp-timestamp:") {
            let ip: Ipv4Addr = host.parse().map_err(|_| {
                format!("`{host}` is not an IPv4 address (ICMP timestamps exist on IPv4 only; use icmp:ADDR for IPv6)")
            })?;
            Reflector::IcmpTimestamp(ip)
        } else if let Some(host) = text.strip_prefix("icmp:") {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            Reflector::IcmpEcho(host.parse().map_err(|_| format!("`{host}` is not an IP address"))?)
        } else {
            let addr: SocketAddr = text.parse().map_err(|_| {
                "is not ADDR:PORT (`bauxite reflect`), icmp:ADDR (ICMP echo) or icmp-timestamp:ADDR".to_string()
            })?;
            if addr.port() == 0 {
                return Err("has port 0, which no reflector listens on".into());
            }
            Reflector::Bauxite(addr)
        };
        if unusable(reflector.ip()) {
            return Err(no_host.into());
        }
        Ok(reflector)
    }
}

impl fmt::Display for Reflector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reflector::Bauxite(addr) => write!(f, "{addr}"),
            Reflector::IcmpEcho(ip) => write!(f, "icmp:{ip}"),
            Reflector::IcmpTimestamp(ip) => write!(f, "icmp-timestamp:{ip}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_and_writes_back() {
        for text in ["10.0.0.2:7399", "[fd00::2]:7399", "icmp:10.0.0.2", "icmp:fd00::2", "icmp-timestamp:10.0.0.2"] {
            let r: Reflector = text.parse().unwrap();
            assert_eq!(r.to_string(), text);
        }
        assert_eq!("icmp:[fd00::2]".parse::<Reflector>().unwrap(), Reflector::IcmpEcho("fd00::2".parse().unwrap()));
        assert_eq!("icmp:8.8.8.8".parse::<Reflector>().unwrap().ip(), IpAddr::from([8, 8, 8, 8]));
    }

    #[test]
    fn unusable_reflectors_are_refused_with_the_reason() {
        for (text, why) in [
            ("10.0.0.2", "ADDR:PORT"),
            ("10.0.0.2:0", "port 0"),
            ("0.0.0.0:7399", "unspecified"),
            ("icmp:224.0.0.1", "multicast"),
            ("icmp:robot.example", "not an IP address"),
            ("icmp-timestamp:fd00::2", "IPv4 only"),
            ("tcp:10.0.0.2", "ADDR:PORT"),
        ] {
            let e = text.parse::<Reflector>().unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}

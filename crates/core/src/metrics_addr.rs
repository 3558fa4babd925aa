//! Where a daemon's Prometheus `/metrics` endpoint listens (`--metrics ADDR`, `metrics:` in a
//! config): a config value like a rate or a duration, parsed here so every config can hold one;
//! `bauxite-metrics` serves it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `PORT` (loopback: 127.0.0.1), `HOST:PORT` or `[V6]:PORT` with a numeric host, or
/// `localhost:PORT`. Nothing listens beyond loopback unless the address is written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsAddr(SocketAddr);

impl MetricsAddr {
    /// The socket address.
    pub fn socket_addr(self) -> SocketAddr {
        self.0
    }

    /// Whether only this host can connect (127.0.0.0/8 or ::1).
    pub fn is_loopback(self) -> bool {
        self.0.ip().is_loopback()
    }
}

impl fmt::Display for MetricsAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

crate::units::text_schema!(MetricsAddr, "metrics-address", "integer");

impl FromStr for MetricsAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let loopback = |port| Self(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
        if let Ok(port) = s.parse::<u16>() {
            return Ok(loopback(port));
        }
        if let Some(port) = s.strip_prefix("localhost:") {
            return port.parse().map(loopback).map_err(|_| format!("`{s}`: the port must be 0..65535"));
        }
        s.parse::<SocketAddr>().map(Self).map_err(|_| {
            format!(
                "`{s}` is not a metrics address: write PORT (loopback), HOST:PORT or [IPV6]:PORT with a numeric host"
            )
        })
    }
}

impl Serialize for MetricsAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MetricsAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::units::deserialize_from_str(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_is_loopback_and_other_hosts_must_be_written_out() {
        let a: MetricsAddr = "9464".parse().unwrap();
        assert_eq!(a.socket_addr(), "127.0.0.1:9464".parse().unwrap());
        assert!(a.is_loopback());
        assert!("localhost:9464".parse::<MetricsAddr>().unwrap().is_loopback());
        assert!("[::1]:9464".parse::<MetricsAddr>().unwrap().is_loopback());
        assert!(!"0.0.0.0:9464".parse::<MetricsAddr>().unwrap().is_loopback());
        for bad in ["", "70000", "example.org:9464", "127.0.0.1", "localhost:x"] {
            let e = bad.parse::<MetricsAddr>().unwrap_err();
            assert!(e.contains(bad.trim()), "{bad}: {e}");
        }
    }

    #[test]
    fn a_profile_holds_one_and_a_bad_one_is_named_at_its_line() {
        let robot = serde_yaml_ng::to_string(&crate::Profile::robot()).unwrap();
        assert!(!robot.contains("metrics"), "absent unless set:\n{robot}");
        let file = std::path::Path::new("robot.yaml");
        let p = crate::parse_profile(&format!("{robot}metrics: 9464\n"), file).unwrap();
        assert_eq!(p.metrics.map(|m| m.to_string()).as_deref(), Some("127.0.0.1:9464"));
        let text = format!("{robot}metrics: example.org:9464\n");
        let e = crate::parse_profile(&text, file).unwrap_err();
        assert_eq!((e.key.as_deref(), e.line), (Some("metrics"), Some(text.lines().count())), "{e}");
    }
}

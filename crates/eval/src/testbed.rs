//! The evaluation's network: the publisher, the bridge and the critical subscriber on one
//! clean L2 segment (a Linux bridge), and the slow subscriber behind the link emulator in
//! bridged mode, so DDS discovery (SPDP multicast) reaches everyone and only the slow
//! subscriber's path is impaired, as in the paper's Docker bridge network.
//!
//! ```text
//!  pub    [eth0 10.204.0.1] ─┐
//!  bridge [eth0 10.204.0.2] ─┼─ br0 (lan) ─ [emu-lan] emulator [emu-slow] ─ [eth0 10.204.0.4] slow
//!  crit   [eth0 10.204.0.3] ─┘              toward: GE loss ─▶  ◀─ back: GE loss + delay
//! ```
//!
//! Every namespace is uniquely named and deleted when the testbed is dropped (also on a
//! panic or an early return); IPv6 is off, so the only frames are the evaluation's.

use std::net::Ipv4Addr;

use bauxite_core::link::LinkChange;
use bauxite_netlab::emulator::{Direction, EmulatorConfig, EmulatorReport, Forwarding, LinkEmulator, Port};
use bauxite_netlab::veth;
use bauxite_sys::{Netns, unique_name};

use crate::EvalError;
use crate::scenario::Severity;

/// The publisher's address.
pub const PUB_ADDR: Ipv4Addr = Ipv4Addr::new(10, 204, 0, 1);
/// The bridge's address (its `dds.interfaces`).
pub const BRIDGE_ADDR: Ipv4Addr = Ipv4Addr::new(10, 204, 0, 2);
/// The critical subscriber's address.
pub const CRITICAL_ADDR: Ipv4Addr = Ipv4Addr::new(10, 204, 0, 3);
/// The slow subscriber's address.
pub const SLOW_ADDR: Ipv4Addr = Ipv4Addr::new(10, 204, 0, 4);

/// The five namespaces and the emulator.
pub struct Testbed {
    // Declared first, so dropped first: the emulator's thread lives in `lan`.
    emulator: Option<LinkEmulator>,
    /// The publisher's namespace.
    pub publisher: Netns,
    /// The bridge's.
    pub bridge: Netns,
    /// The critical subscriber's.
    pub critical: Netns,
    /// The slow subscriber's (and its probe responder's).
    pub slow: Netns,
    /// The segment's Linux bridge and the emulator.
    _lan: Netns,
    seed: u64,
}

impl Testbed {
    /// Builds the network with `severity` on the slow path (`seed` seeds its loss).
    pub fn create(severity: &Severity, seed: u64) -> Result<Self, EvalError> {
        let lan = quiet_namespace("lan")?;
        let publisher = quiet_namespace("pub")?;
        let bridge = quiet_namespace("bridge")?;
        let critical = quiet_namespace("crit")?;
        let slow = quiet_namespace("slow")?;
        lan.ip(&["link", "add", "br0", "type", "bridge", "mcast_snooping", "0"])?;
        lan.ip(&["link", "set", "br0", "up"])?;
        for (ns, port, addr) in
            [(&publisher, "p-pub", PUB_ADDR), (&bridge, "p-bridge", BRIDGE_ADDR), (&critical, "p-crit", CRITICAL_ADDR)]
        {
            veth(ns, "eth0", &lan, port)?;
            lan.ip(&["link", "set", port, "master", "br0"])?;
            address(ns, addr)?;
        }
        veth(&lan, "p-emu", &lan, "emu-lan")?;
        lan.ip(&["link", "set", "p-emu", "master", "br0"])?;
        veth(&lan, "emu-slow", &slow, "eth0")?;
        address(&slow, SLOW_ADDR)?;
        let config = EmulatorConfig {
            uplink: severity.toward(seed),
            downlink: severity.back(seed ^ 0x5eed),
            forwarding: Forwarding::Bridged,
            ..EmulatorConfig::default()
        };
        let emulator = LinkEmulator::start(&lan, Port::bridged("emu-lan"), Port::bridged("emu-slow"), config)?;
        Ok(Self { emulator: Some(emulator), publisher, bridge, critical, slow, _lan: lan, seed })
    }

    /// Switches the slow path to `severity` now, both ways.
    pub fn impair(&self, severity: &Severity) {
        if let Some(emulator) = &self.emulator {
            let (toward, back) = (severity.toward(self.seed), severity.back(self.seed ^ 0x5eed));
            emulator.apply_to(Direction::Uplink, LinkChange::Loss(toward.loss));
            emulator.apply_to(Direction::Downlink, LinkChange::Loss(back.loss));
            emulator.apply_to(Direction::Downlink, LinkChange::Delay(back.delay));
            emulator.apply_to(Direction::Downlink, LinkChange::Jitter(back.jitter));
        }
    }

    /// Stops the emulator and returns what it carried and lost each way.
    pub fn stop(&mut self) -> Result<Option<EmulatorReport>, EvalError> {
        Ok(self.emulator.take().map(LinkEmulator::stop).transpose()?)
    }
}

/// A new namespace without IPv6 (its router solicitations and reports would cross the
/// impaired link and count in its statistics).
fn quiet_namespace(role: &str) -> Result<Netns, EvalError> {
    let ns = Netns::create(&unique_name(role))?;
    ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
    ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
    Ok(ns)
}

/// Gives a host its address on the segment and a multicast route out of its one interface.
fn address(ns: &Netns, addr: Ipv4Addr) -> Result<(), EvalError> {
    ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
    ns.ip(&["route", "add", "224.0.0.0/4", "dev", "eth0"])?;
    Ok(())
}

//! The three-namespace testbed of the demo and the shaper tests:
//! `robot` — `link` — `base`, where `link` plays the constrained radio or modem.
//!
//! ```text
//!  robot [to-link 10.201.1.1] —— [to-robot 10.201.1.2] link [to-base 10.201.2.1] —— [to-link 10.201.2.2] base
//!                                                        ^ bottleneck (TBF, deep FIFO)
//! ```
//! The downlink (link → robot) may have a bottleneck of its own
//! ([`ChainOptions::downlink_rate`]).
//! Bauxite runs on the robot's egress (`to-link`), as it would on a robot whose modem
//! holds the bottleneck. The bottleneck is the kernel's TBF, or the userspace
//! [`LinkEmulator`] when the link needs what TBF cannot do (a delivery trace, delay,
//! jitter, loss, timelines): then `link` stops forwarding by itself and the
//! emulator carries every IPv4 packet in both directions.

use std::net::Ipv4Addr;

use bauxite_core::BitRate;
use bauxite_core::link::{LinkChange, LinkRate};
use bauxite_sys::{Netns, unique_name};

use crate::NetlabError;
use crate::bottleneck::Bottleneck;
use crate::emulator::{Direction, EmulatorConfig, EmulatorReport, LinkEmulator, Port};
use crate::veth::connect;

/// The robot's address.
pub const ROBOT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 1, 1);
/// The base station's address.
pub const BASE_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 2, 2);
/// The robot's interface toward the link (where Bauxite attaches).
pub const ROBOT_IFACE: &str = "to-link";
/// The link's interface toward the base (where the bottleneck is).
pub const LINK_TO_BASE: &str = "to-base";
/// The link's interface toward the robot.
pub const LINK_TO_ROBOT: &str = "to-robot";
/// The base's interface toward the link.
pub const BASE_IFACE: &str = "to-link";

/// Options of the testbed.
#[derive(Clone, Debug)]
pub struct ChainOptions {
    /// The bottleneck's initial rate.
    pub rate: BitRate,
    /// Also a bottleneck on the downlink (the link's egress toward the robot), alike
    /// but for its rate, which starts here; without one the downlink is unlimited.
    pub downlink_rate: Option<BitRate>,
    /// The bottleneck's FIFO, in bytes (a modem's deep buffer).
    pub buffer_bytes: u32,
    /// How much the link sends at once after an idle moment (see [`Bottleneck::install`]).
    pub burst_bytes: u32,
    /// Emulate the link in userspace instead (then `rate`, `buffer_bytes` and
    /// `burst_bytes` are not used: the emulator's config says everything).
    pub emulated: Option<EmulatorConfig>,
}

impl Default for ChainOptions {
    fn default() -> Self {
        // 100 KB: about half a second at 1.5 Mbit/s, like the seed's modem; bursts of
        // up to five full frames, like a radio's scheduling grant.
        Self {
            rate: BitRate::from_bps(50_000_000),
            downlink_rate: None,
            buffer_bytes: 100_000,
            burst_bytes: bauxite_core::link::DEMO_TBF_BURST_BYTES as u32,
            emulated: None,
        }
    }
}

/// What plays the bottleneck.
enum LinkStage {
    /// TBF on the uplink, and on the downlink when [`ChainOptions::downlink_rate`] says.
    Tbf(Bottleneck, Option<Bottleneck>),
    Emulated(LinkEmulator),
    /// An emulator that was stopped: the link carries nothing.
    Stopped,
}

/// robot — link — base, torn down on drop (also when a test panics).
pub struct ChainTestbed {
    /// Fields drop in order: the bottleneck (an emulator's thread) first, namespaces last.
    stage: LinkStage,
    /// The robot's namespace.
    pub robot: Netns,
    /// The link's namespace (the bottleneck).
    pub link: Netns,
    /// The base station's namespace.
    pub base: Netns,
}

impl ChainTestbed {
    /// Builds the three namespaces, their links, routes and the bottleneck.
    pub fn create(options: &ChainOptions) -> Result<Self, NetlabError> {
        let robot = Netns::create(&unique_name("robot"))?;
        let link = Netns::create(&unique_name("link"))?;
        let base = Netns::create(&unique_name("base"))?;
        connect(&robot, ROBOT_IFACE, "10.201.1.1/24", &link, "to-robot", "10.201.1.2/24")?;
        connect(&link, LINK_TO_BASE, "10.201.2.1/24", &base, "to-link", "10.201.2.2/24")?;
        robot.ip(&["route", "add", "default", "via", "10.201.1.2"])?;
        base.ip(&["route", "add", "default", "via", "10.201.2.1"])?;
        link.sysctl("net.ipv4.ip_forward", "1")?;
        let tbf = |iface, rate| Bottleneck::install(&link, iface, rate, options.buffer_bytes, options.burst_bytes);
        let stage = match &options.emulated {
            None => LinkStage::Tbf(
                tbf(LINK_TO_BASE, options.rate)?,
                options.downlink_rate.map(|rate| tbf(LINK_TO_ROBOT, rate)).transpose()?,
            ),
            Some(config) => LinkStage::Emulated(emulate(&robot, &link, &base, config.clone())?),
        };
        Ok(Self { stage, robot, link, base })
    }

    /// Changes the uplink bottleneck's rate (the radio link degrading or recovering).
    pub fn set_rate(&self, rate: BitRate) -> Result<(), NetlabError> {
        self.set_rate_of(Direction::Uplink, rate)
    }

    /// Changes one direction's bottleneck rate; an error for a downlink that has none.
    pub fn set_rate_of(&self, direction: Direction, rate: BitRate) -> Result<(), NetlabError> {
        match (&self.stage, direction) {
            (LinkStage::Tbf(uplink, _), Direction::Uplink) => uplink.set_rate(&self.link, rate),
            (LinkStage::Tbf(_, Some(downlink)), Direction::Downlink) => downlink.set_rate(&self.link, rate),
            (LinkStage::Tbf(_, None), Direction::Downlink) => Err(NetlabError::NoDownlinkBottleneck),
            (LinkStage::Emulated(emulator), _) => {
                emulator.apply_to(direction, LinkChange::Rate(LinkRate::Constant(rate)));
                Ok(())
            }
            (LinkStage::Stopped, _) => Err(NetlabError::Emulator("the link's emulator was stopped".into())),
        }
    }

    /// Who sends and who receives on `direction`: the sending namespace, the receiving
    /// one and the receiver's address.
    pub fn ends(&self, direction: Direction) -> (&Netns, &Netns, Ipv4Addr) {
        match direction {
            Direction::Uplink => (&self.robot, &self.base, BASE_ADDR),
            Direction::Downlink => (&self.base, &self.robot, ROBOT_ADDR),
        }
    }

    /// The emulator, when the link is emulated.
    pub fn emulator(&self) -> Option<&LinkEmulator> {
        match &self.stage {
            LinkStage::Emulated(emulator) => Some(emulator),
            LinkStage::Tbf(..) | LinkStage::Stopped => None,
        }
    }

    /// Stops an emulated link and returns its report (`None` for a TBF link); the
    /// link carries nothing after this.
    pub fn stop_emulator(&mut self) -> Result<Option<EmulatorReport>, NetlabError> {
        match std::mem::replace(&mut self.stage, LinkStage::Stopped) {
            LinkStage::Emulated(emulator) => emulator.stop().map(Some),
            other => {
                self.stage = other;
                Ok(None)
            }
        }
    }
}

/// Starts the emulator between the link's two interfaces. The senders on either side
/// hand the link wire-size packets (GSO off: a modem never sees 64 KB super-packets,
/// and TBF, which the emulator replaces, splits them too).
fn emulate(robot: &Netns, link: &Netns, base: &Netns, config: EmulatorConfig) -> Result<LinkEmulator, NetlabError> {
    robot.ip(&["link", "set", "dev", ROBOT_IFACE, "gso_max_segs", "1"])?;
    base.ip(&["link", "set", "dev", BASE_IFACE, "gso_max_segs", "1"])?;
    let robot_side =
        Port { iface: LINK_TO_ROBOT.into(), mac: mac_of(link, LINK_TO_ROBOT)?, peer_mac: mac_of(robot, ROBOT_IFACE)? };
    let base_side =
        Port { iface: LINK_TO_BASE.into(), mac: mac_of(link, LINK_TO_BASE)?, peer_mac: mac_of(base, BASE_IFACE)? };
    LinkEmulator::start(link, robot_side, base_side, config)
}

/// An interface's MAC address, from `ip -o link show` (`… link/ether MAC brd …`).
pub(crate) fn mac_of(ns: &Netns, iface: &str) -> Result<[u8; 6], NetlabError> {
    let line = ns.ip(&["-o", "link", "show", "dev", iface])?;
    let text = line.split_whitespace().skip_while(|w| *w != "link/ether").nth(1).unwrap_or_default();
    let bytes: Vec<u8> = text.split(':').filter_map(|b| u8::from_str_radix(b, 16).ok()).collect();
    <[u8; 6]>::try_from(bytes.as_slice())
        .map_err(|_| NetlabError::Emulator(format!("no MAC address for {iface} in `ip -o link show`: {line}")))
}

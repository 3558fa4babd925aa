//! The three-namespace testbed of the demo and the shaper tests:
//! `robot` — `link` — `base`, where `link` plays the constrained radio or modem.
//!
//! ```text
//!  robot [to-link 10.201.1.1] —— [to-robot 10.201.1.2] link [to-base 10.201.2.1] —— [to-link 10.201.2.2] base
//!                                                        ^ bottleneck (TBF, deep FIFO)
//! ```
//! Bauxite runs on the robot's egress (`to-link`), as it would on a robot whose modem
//! holds the bottleneck.

use std::net::Ipv4Addr;

use bauxite_core::BitRate;
use bauxite_sys::{Netns, unique_name};

use crate::NetlabError;
use crate::bottleneck::Bottleneck;
use crate::veth::connect;

/// The robot's address.
pub const ROBOT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 1, 1);
/// The base station's address.
pub const BASE_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 2, 2);
/// The robot's interface toward the link (where Bauxite attaches).
pub const ROBOT_IFACE: &str = "to-link";
/// The link's interface toward the base (where the bottleneck is).
pub const LINK_TO_BASE: &str = "to-base";

/// Options of the testbed.
#[derive(Clone, Debug)]
pub struct ChainOptions {
    /// The bottleneck's initial rate.
    pub rate: BitRate,
    /// The bottleneck's FIFO, in bytes (a modem's deep buffer).
    pub buffer_bytes: u32,
    /// How much the link sends at once after an idle moment (see [`Bottleneck::install`]).
    pub burst_bytes: u32,
}

impl Default for ChainOptions {
    fn default() -> Self {
        // 100 KB: about half a second at 1.5 Mbit/s, like the seed's modem.
        // 100 KB: about half a second at 1.5 Mbit/s, like the seed's modem; bursts of
        // up to five full frames, like a radio's scheduling grant.
        Self { rate: BitRate::from_bps(50_000_000), buffer_bytes: 100_000, burst_bytes: 5 * 1514 }
    }
}

/// robot — link — base, torn down on drop (also when a test panics).
pub struct ChainTestbed {
    /// Fields drop in order: namespaces go last.
    bottleneck: Bottleneck,
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
        let bottleneck =
            Bottleneck::install(&link, LINK_TO_BASE, options.rate, options.buffer_bytes, options.burst_bytes)?;
        Ok(Self { bottleneck, robot, link, base })
    }

    /// Changes the bottleneck's rate (the radio link degrading or recovering).
    pub fn set_rate(&self, rate: BitRate) -> Result<(), NetlabError> {
        self.bottleneck.set_rate(&self.link, rate)
    }
}

//! Nodes, the links between them, and static routes.
//!
//! Routing is static and computed once, as ns-3's global routing does: every
//! packet follows a shortest path (fewest hops). A node with a single link (a
//! host) needs no table, only a default route out of that link; a node with
//! several links (a router) gets a table indexed by destination, filled by one
//! breadth-first search from it. Ties between equal-length paths go to the link
//! added first, so routes never depend on anything but the build order. Keeping
//! tables only at routers keeps memory linear in the number of hosts, which is
//! what lets a star of thousands of followers build quickly.

use std::collections::VecDeque;

use bauxite_qdisc::Qdisc;

use crate::link::{Channel, LinkConfig};

/// No route: the table entry of an unreachable destination.
const NONE: u32 = u32::MAX;

/// A node: a host or a router. It forwards anything not addressed to itself.
#[derive(Clone, Debug)]
pub struct Node {
    /// A name for outputs (`orchestrator`, `follower-3`, `router-a`, ...).
    pub name: String,
    /// Channels leaving this node, in the order their links were added.
    pub out: Vec<u32>,
}

#[derive(Clone, Debug)]
enum Routes {
    /// Not computed yet, or a node without links.
    Unreachable,
    /// A host: everything leaves by its one channel.
    Default(u32),
    /// A router: the channel toward each destination node.
    Table(Vec<u32>),
}

/// The network: nodes, channels (two per link) and routes.
#[derive(Debug, Default)]
pub struct Topology {
    nodes: Vec<Node>,
    /// Every channel; a link's two directions are consecutive.
    pub channels: Vec<Channel>,
    routes: Vec<Routes>,
}

impl Topology {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node and returns its id.
    pub fn add_node(&mut self, name: impl Into<String>) -> u32 {
        self.nodes.push(Node { name: name.into(), out: Vec::new() });
        self.routes.push(Routes::Unreachable);
        (self.nodes.len() - 1) as u32
    }

    /// Adds a full-duplex link between `a` and `b` with a queue discipline (or none)
    /// on each direction; returns the channel ids `(a→b, b→a)`. Routes must be
    /// recomputed afterwards.
    pub fn add_link(
        &mut self,
        a: u32,
        b: u32,
        config: LinkConfig,
        qdisc_ab: Option<Box<dyn Qdisc>>,
        qdisc_ba: Option<Box<dyn Qdisc>>,
    ) -> (u32, u32) {
        assert!(a != b && (a as usize) < self.nodes.len() && (b as usize) < self.nodes.len());
        let ab = self.channels.len() as u32;
        self.channels.push(Channel::new(a, b, config, qdisc_ab));
        self.channels.push(Channel::new(b, a, config, qdisc_ba));
        self.nodes[a as usize].out.push(ab);
        self.nodes[b as usize].out.push(ab + 1);
        (ab, ab + 1)
    }

    /// The nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Fills every node's routes: default routes at hosts, shortest-path tables at routers.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut first_hop = vec![NONE; n];
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        for src in 0..n {
            self.routes[src] = match self.nodes[src].out.as_slice() {
                [] => Routes::Unreachable,
                [only] => Routes::Default(*only),
                outs => {
                    first_hop.fill(NONE);
                    seen.fill(false);
                    seen[src] = true;
                    for &ch in outs {
                        let next = self.channels[ch as usize].to as usize;
                        if !seen[next] {
                            seen[next] = true;
                            first_hop[next] = ch;
                            frontier.push_back(next);
                        }
                    }
                    while let Some(node) = frontier.pop_front() {
                        for &ch in &self.nodes[node].out {
                            let next = self.channels[ch as usize].to as usize;
                            if !seen[next] {
                                seen[next] = true;
                                first_hop[next] = first_hop[node];
                                frontier.push_back(next);
                            }
                        }
                    }
                    Routes::Table(first_hop.clone())
                }
            };
        }
    }

    /// The channel by which `node` sends a packet for `dst` (`dst != node`), if any.
    #[inline]
    pub fn route(&self, node: u32, dst: u32) -> Option<u32> {
        match &self.routes[node as usize] {
            Routes::Default(ch) => Some(*ch),
            Routes::Table(table) => Some(table[dst as usize]).filter(|&ch| ch != NONE),
            Routes::Unreachable => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_follow_shortest_paths() {
        // h0 - r1 - r2 - h3, plus h4 on r2.
        let mut t = Topology::new();
        let ids: Vec<u32> = ["h0", "r1", "r2", "h3", "h4"].iter().map(|n| t.add_node(*n)).collect();
        let cfg = LinkConfig::new(1_000_000, 0);
        let (h0r1, _r1h0) = t.add_link(ids[0], ids[1], cfg, None, None);
        let (r1r2, r2r1) = t.add_link(ids[1], ids[2], cfg, None, None);
        let (r2h3, _) = t.add_link(ids[2], ids[3], cfg, None, None);
        let (r2h4, _) = t.add_link(ids[2], ids[4], cfg, None, None);
        t.compute_routes();
        assert_eq!(t.route(0, 3), Some(h0r1));
        assert_eq!(t.route(1, 3), Some(r1r2));
        assert_eq!(t.route(1, 4), Some(r1r2));
        assert_eq!(t.route(2, 3), Some(r2h3));
        assert_eq!(t.route(2, 4), Some(r2h4));
        assert_eq!(t.route(2, 0), Some(r2r1));
    }
}

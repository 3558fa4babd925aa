//! Programming qdiscs and links with iproute2's `tc` and `ip`.
//!
//! HTB classes are created through `tc -batch`, which builds the kernel's rate
//! tables exactly as every operator's own `tc` would, and applies a whole tree in
//! one invocation. Everything here runs in a [`Netns`]: the daemon's own namespace,
//! or a named one in tests.

use bauxite_core::BitRate;
use bauxite_sys::{Netns, SysError};

/// The handle major of every qdisc Bauxite installs as root (`ba:`); with the
/// marker class ([`MARKER_MINOR`]) it is how `up` and `down` recognise their own tree.
pub const HTB_MAJOR: u16 = 0xba;
/// The minor of the class whose rate is the link rate; every lane is its child.
pub const LINK_CLASS_MINOR: u16 = 0x1;
/// The minor of the first lane's class; lane `i` is `0x10 + i`.
pub const FIRST_LANE_MINOR: u16 = 0x10;
/// The minor of the pass-through class, HTB's default: packets the classifier did
/// not steer (because the daemon is gone) go here, at the interface's full speed.
pub const PASSTHROUGH_MINOR: u16 = 0xff;
/// The minor of the marker class `ba:baba`: a class no packet is steered to, which
/// only Bauxite's trees have. A root `htb ba:` without it is an operator's own, and
/// neither `up` nor `down` touches it.
pub const MARKER_MINOR: u16 = 0xbaba;
/// The pass-through class's rate: effectively unlimited.
pub const PASSTHROUGH_RATE: BitRate = BitRate::from_bps(100_000_000_000);

/// A class id `major:minor` as the kernel stores it (and `skb->priority` selects it).
pub const fn classid(major: u16, minor: u16) -> u32 {
    ((major as u32) << 16) | minor as u32
}

/// One leaf of an HTB tree.
#[derive(Clone, Debug, PartialEq)]
pub struct HtbLeaf {
    /// The class minor (under [`HTB_MAJOR`]).
    pub minor: u16,
    /// Guaranteed rate.
    pub rate: BitRate,
    /// Rate it may borrow up to.
    pub ceil: BitRate,
    /// HTB priority: 0 is served first when borrowing.
    pub prio: u8,
    /// The leaf FIFO's bound.
    pub limit_packets: u32,
    /// Its token buckets, bytes: `burst` (at `rate`) and `cburst` (at `ceil`).
    pub burst_bytes: u64,
    /// See `burst_bytes`.
    pub cburst_bytes: u64,
}

/// An HTB tree: root `ba:`, a link class `ba:1` at `rate`, leaves under it, the
/// unshaped pass-through default class `ba:ff` and the marker class `ba:baba`.
#[derive(Clone, Debug, PartialEq)]
pub struct HtbTree {
    /// The interface.
    pub iface: String,
    /// The link rate.
    pub rate: BitRate,
    /// The link class's token bucket, bytes (`burst` and `cburst`).
    pub burst_bytes: u64,
    /// The leaves.
    pub leaves: Vec<HtbLeaf>,
}

/// HTB's quantum for every class: one full-size frame per round, so that lanes with
/// small shares are not starved of DRR credit nor warned about by the kernel.
const QUANTUM: u32 = 1514;

impl HtbTree {
    /// The `tc` lines that create the tree, replacing whatever root qdisc was there.
    pub fn install_lines(&self) -> Vec<String> {
        let dev = &self.iface;
        let major = format!("{HTB_MAJOR:x}");
        let mut lines = vec![
            format!("qdisc replace dev {dev} root handle {major}: htb default {PASSTHROUGH_MINOR:x}"),
            format!(
                "class replace dev {dev} parent {major}: classid {major}:{PASSTHROUGH_MINOR:x} htb rate {r} ceil {r} quantum {QUANTUM}",
                r = PASSTHROUGH_RATE
            ),
        ];
        lines.push(format!(
            "class replace dev {dev} parent {major}: classid {major}:{MARKER_MINOR:x} htb rate 8bit ceil 8bit quantum {QUANTUM}"
        ));
        lines.extend(self.reload_lines());
        lines
    }

    /// The `tc` lines that put this tree on a Bauxite tree already installed,
    /// keeping its root and every queued packet: the classes' rates
    /// ([`HtbTree::rate_lines`], creating the classes of new leaves) and each leaf's
    /// FIFO (its limit changed in place, or created for a new leaf).
    pub fn reload_lines(&self) -> Vec<String> {
        let dev = &self.iface;
        let major = format!("{HTB_MAJOR:x}");
        let mut lines = self.rate_lines();
        for leaf in &self.leaves {
            lines.push(format!(
                "qdisc replace dev {dev} parent {major}:{m:x} handle {m:x}: pfifo limit {l}",
                m = leaf.minor,
                l = leaf.limit_packets
            ));
        }
        lines
    }

    /// The `tc` lines that (re)set the link class's and the leaves' rates; also used
    /// to follow a changed link rate without touching the queues.
    pub fn rate_lines(&self) -> Vec<String> {
        let dev = &self.iface;
        let major = format!("{HTB_MAJOR:x}");
        let mut lines = vec![format!(
            "class replace dev {dev} parent {major}: classid {major}:{LINK_CLASS_MINOR:x} htb rate {r} ceil {r} burst {b}b cburst {b}b quantum {QUANTUM}",
            r = self.rate,
            b = self.burst_bytes
        )];
        for leaf in &self.leaves {
            lines.push(format!(
                "class replace dev {dev} parent {major}:{LINK_CLASS_MINOR:x} classid {major}:{m:x} htb rate {r} ceil {c} burst {b}b cburst {cb}b prio {p} quantum {QUANTUM}",
                m = leaf.minor,
                r = leaf.rate,
                c = leaf.ceil,
                b = leaf.burst_bytes,
                cb = leaf.cburst_bytes,
                p = leaf.prio
            ));
        }
        lines
    }
}

/// The `tc` lines that delete the leaf classes `minors` (and their FIFOs) of
/// Bauxite's tree on `iface`.
pub fn delete_class_lines(iface: &str, minors: &[u16]) -> Vec<String> {
    minors.iter().map(|m| format!("class del dev {iface} classid {HTB_MAJOR:x}:{m:x}")).collect()
}

/// Deletes the root qdisc of `iface`. Only for a tree the caller has checked is
/// Bauxite's (see `daemon::tree_on`): an operator's own `ba:` root is left alone.
pub fn delete_root(ns: &Netns, iface: &str) -> Result<(), SysError> {
    ns.exec("tc", &["qdisc", "del", "dev", iface, "root"]).map(|_| ())
}

/// Deletes `iface`'s clsact qdisc if no filter is left on either of its hooks (deleting it
/// would take another tool's filters with it); returns whether it was deleted. Only for a
/// qdisc Bauxite added ([`crate::state::Owner::created_clsact`]).
pub fn delete_clsact_if_unused(ns: &Netns, iface: &str) -> Result<bool, SysError> {
    if !ns.tc(&["qdisc", "show", "dev", iface])?.lines().any(|l| l.starts_with("qdisc clsact ")) {
        return Ok(false);
    }
    for hook in ["ingress", "egress"] {
        if !ns.tc(&["filter", "show", "dev", iface, hook])?.trim().is_empty() {
            return Ok(false);
        }
    }
    ns.tc(&["qdisc", "del", "dev", iface, "clsact"]).map(|_| true)
}

/// Sets the largest GSO packet the stack hands to `iface`'s qdisc.
pub fn set_gso_max_size(ns: &Netns, iface: &str, bytes: u32) -> Result<(), SysError> {
    ns.exec("ip", &["link", "set", "dev", iface, "gso_max_size", &bytes.to_string()]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> HtbTree {
        let r = |bps| BitRate::from_bps(bps);
        HtbTree {
            iface: "eth9".into(),
            rate: r(1_500_000),
            burst_bytes: 187,
            leaves: vec![
                HtbLeaf {
                    minor: 0x10,
                    rate: r(450_000),
                    ceil: r(1_500_000),
                    prio: 0,
                    limit_packets: 64,
                    burst_bytes: 1600,
                    cburst_bytes: 1600,
                },
                HtbLeaf {
                    minor: 0x12,
                    rate: r(750_000),
                    ceil: r(1_500_000),
                    prio: 2,
                    limit_packets: 48,
                    burst_bytes: 93,
                    cburst_bytes: 187,
                },
            ],
        }
    }

    #[test]
    fn the_tree_has_a_link_class_leaves_and_an_unshaped_default() {
        let lines = tree().install_lines();
        assert_eq!(lines[0], "qdisc replace dev eth9 root handle ba: htb default ff");
        assert!(lines[1].contains("classid ba:ff htb rate 100gbit"), "{}", lines[1]);
        assert!(lines[2].contains("parent ba: classid ba:baba htb"), "the marker class: {}", lines[2]);
        assert!(
            lines.iter().any(|l| l.contains("classid ba:1 htb rate 1500kbit ceil 1500kbit burst 187b cburst 187b"))
        );
        assert!(lines.iter().any(|l| {
            l.contains("parent ba:1 classid ba:10 htb rate 450kbit ceil 1500kbit burst 1600b cburst 1600b prio 0")
        }));
        assert!(lines.iter().any(|l| l.contains("classid ba:12 htb rate 750kbit ceil 1500kbit burst 93b cburst 187b")));
        assert!(lines.iter().any(|l| l.ends_with("parent ba:12 handle 12: pfifo limit 48")));
    }

    #[test]
    fn rate_changes_touch_only_classes() {
        let lines = tree().rate_lines();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.starts_with("class replace")));
    }

    #[test]
    fn a_reload_keeps_the_root_and_replaces_classes_and_fifos() {
        let lines = tree().reload_lines();
        assert!(lines.iter().all(|l| !l.contains(" root ")), "the root stays: {lines:?}");
        assert_eq!(lines.iter().filter(|l| l.starts_with("class replace")).count(), 3);
        assert!(lines.iter().any(|l| l == "qdisc replace dev eth9 parent ba:10 handle 10: pfifo limit 64"));
        assert_eq!(delete_class_lines("eth9", &[0x12]), ["class del dev eth9 classid ba:12"]);
    }

    #[test]
    fn classids_are_what_skb_priority_selects() {
        assert_eq!(classid(HTB_MAJOR, 0x10), 0x00ba_0010);
    }
}

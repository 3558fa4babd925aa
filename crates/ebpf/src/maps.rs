//! Rust mirrors of the map keys and values in `src/bpf/bauxite.h`.
//!
//! The C header is the one definition; these types follow it field by field, and
//! `build.rs` generates assertions (included at the bottom) that fail the build if
//! a size or an offset differs.
#![allow(unsafe_code)] // `aya::Pod` is an unsafe marker trait: these are plain old data.

/// Lanes the kernel maps have room for.
pub const MAX_LANES: usize = 8;
/// Rules the kernel rule table has room for.
pub const MAX_RULES: usize = 64;
/// The stats slot of packets seen while the daemon's lease had expired.
pub const STATS_UNMANAGED: usize = MAX_LANES;
/// DSCP values: the size of [`ClassifierTables::dscp_rank`].
pub const DSCPS: usize = 64;
/// Port values: the size of each port table.
pub const PORTS: usize = 65536;
/// [`ClassifierTables::port_rank`]'s first index for UDP packets.
pub const PORT_TABLE_UDP: usize = 0;
/// [`ClassifierTables::port_rank`]'s first index for TCP packets.
pub const PORT_TABLE_TCP: usize = 1;
/// [`ClassifierTables::port_rank`]'s second index for the destination port.
pub const PORT_TABLE_DST: usize = 0;
/// [`ClassifierTables::port_rank`]'s second index for the source port.
pub const PORT_TABLE_SRC: usize = 1;
/// `Rule::kind` of a protocol + port range rule.
pub const RULE_PORT: u8 = 1;
/// `Rule::kind` of a DSCP rule.
pub const RULE_DSCP: u8 = 2;
/// `Rule::side` bit: compare the destination port.
pub const SIDE_DST: u8 = 1;
/// `Rule::side` bit: compare the source port.
pub const SIDE_SRC: u8 = 2;

/// One classification rule, as the shaper writes it. The kernel does not read rules: the
/// loader compiles a [`RuleSet`] into [`ClassifierTables`] (see `lookup.rs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// First port of the range (port rules).
    pub port_first: u16,
    /// Last port of the range, inclusive (port rules).
    pub port_last: u16,
    /// [`RULE_PORT`] or [`RULE_DSCP`].
    pub kind: u8,
    /// IP protocol number, 0 for UDP or TCP.
    pub ip_proto: u8,
    /// [`SIDE_DST`] | [`SIDE_SRC`] bits.
    pub side: u8,
    /// The DSCP (DSCP rules).
    pub dscp: u8,
    /// The lane index packets that match go to.
    pub lane: u32,
}

/// Every rule of a profile, first match first: what [`ClassifierTables::compile`] reads.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// How many of `rules` are in use.
    pub count: u32,
    /// The lane of packets no rule matches.
    pub default_lane: u32,
    /// The lane of pure TCP ACKs whose rules give a less urgent one, if any.
    pub ack_lane: Option<u32>,
    /// The rules, first match wins.
    pub rules: [Rule; MAX_RULES],
}

/// `struct bx_classifier`: the rules compiled into tables indexed by what a packet
/// carries (see `bauxite.h`): 262 280 bytes, one map value, so a profile's rules are
/// replaced in one map update.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassifierTables {
    /// The lane of packets no rule matches.
    pub default_lane: u32,
    /// The lane of pure TCP ACKs plus one (0: none), for ACKs whose lane is less urgent.
    pub ack_lane: u32,
    /// By DSCP: the rank (`MAX_RULES - index`, 0 for none) of the first DSCP rule for it.
    pub dscp_rank: [u8; DSCPS],
    /// By rule index: the rule's lane.
    pub lane_of_rule: [u8; MAX_RULES],
    /// By [UDP, TCP], [destination, source] and port: the rank of the first port rule
    /// that matches it.
    pub port_rank: [[[u8; PORTS]; 2]; 2],
}

/// `struct bx_lane`: a lane's policy, written by the daemon.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LanePolicy {
    /// The value written to `skb->priority`: the lane's HTB class id.
    pub priority: u32,
    /// Early-drop probability while congested, out of `u32::MAX`.
    pub drop_prob: u32,
    /// 1 to rewrite the DSCP of the lane's packets to `dscp`.
    pub mark_dscp: u8,
    /// The DSCP to write.
    pub dscp: u8,
    /// 1 if the lane is discarded early while congested.
    pub droppable: u8,
    /// Padding.
    pub pad: u8,
    /// Padding.
    pub pad2: u32,
}

/// `struct bx_control`: the daemon's lease and the congested state.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Control {
    /// `CLOCK_MONOTONIC` time of the daemon's last heartbeat.
    pub heartbeat_ns: u64,
    /// The programs step aside when the heartbeat is older than this.
    pub lease_ns: u64,
    /// 1 while the link is congested.
    pub congested: u32,
    /// 1 if packets start with an Ethernet header, 0 on raw-IP devices.
    pub l2_header: u32,
}

/// `struct bx_lane_stats`: per-lane counters (one copy per CPU in the kernel).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneStats {
    /// Packets seen (GSO segments counted one by one).
    pub packets: u64,
    /// Bytes seen.
    pub bytes: u64,
    /// Packets discarded early.
    pub early_drops: u64,
    /// Truncated or unparsable packets (sent to the default lane).
    pub odd_packets: u64,
}

impl std::ops::Add for LaneStats {
    type Output = LaneStats;

    fn add(self, o: LaneStats) -> LaneStats {
        LaneStats {
            packets: self.packets + o.packets,
            bytes: self.bytes + o.bytes,
            early_drops: self.early_drops + o.early_drops,
            odd_packets: self.odd_packets + o.odd_packets,
        }
    }
}

// SAFETY: all of these are `repr(C)` structs of integers with explicit padding fields,
// so every bit pattern is valid and there are no uninitialised bytes.
unsafe impl aya::Pod for ClassifierTables {}
unsafe impl aya::Pod for LanePolicy {}
unsafe impl aya::Pod for Control {}
unsafe impl aya::Pod for LaneStats {}

impl ClassifierTables {
    /// All zero, as a fresh kernel map: no rules, lane 0 for everything. On the heap:
    /// 256 KiB is too much for a test thread's stack in a debug build.
    pub fn empty() -> Box<Self> {
        let mut boxed = Box::<Self>::new_uninit();
        // SAFETY: `ClassifierTables` is plain integers (`Pod` above), for which all-zero
        // bytes are a valid value; after `write_bytes` every byte is initialised.
        unsafe {
            boxed.as_mut_ptr().write_bytes(0, 1);
            boxed.assume_init()
        }
    }
}

impl Default for RuleSet {
    fn default() -> Self {
        Self { count: 0, default_lane: 0, ack_lane: None, rules: [Rule::default(); MAX_RULES] }
    }
}

include!(concat!(env!("OUT_DIR"), "/layout_check.rs"));

/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The one definition of every map key and value shared by the kernel programs
 * and the Rust loader (crates/ebpf/src/maps.rs mirrors it; build.rs checks that
 * sizes and offsets agree, so a change here that is not made there fails the build).
 */
#ifndef BAUXITE_H
#define BAUXITE_H

#include <linux/types.h>

#define BX_MAX_LANES 8
#define BX_MAX_RULES 64
/* Stats slot for packets seen while the daemon's lease had expired. */
#define BX_STATS_UNMANAGED BX_MAX_LANES
#define BX_STATS_SLOTS (BX_MAX_LANES + 1)

enum bx_rule_kind {
	BX_RULE_PORT = 1,
	BX_RULE_DSCP = 2,
};

enum bx_port_side {
	BX_SIDE_DST = 1,
	BX_SIDE_SRC = 2,
	BX_SIDE_EITHER = 3,
};

/* One classification rule; the first matching rule decides the lane. */
struct bx_rule {
	__u16 port_first;
	__u16 port_last;
	__u8 kind;     /* enum bx_rule_kind */
	__u8 ip_proto; /* 6, 17, or 0 for either */
	__u8 side;     /* enum bx_port_side */
	__u8 dscp;
	__u32 lane;
};

/* All rules in one map value, so that a profile is replaced in one update. */
struct bx_ruleset {
	__u32 count;
	__u32 default_lane;
	struct bx_rule rules[BX_MAX_RULES];
};

/* Per-lane policy, written by the daemon. */
struct bx_lane {
	__u32 priority;  /* skb->priority: the lane's HTB class id (major:minor) */
	__u32 drop_prob; /* early-drop probability while congested, out of 2^32 - 1 */
	__u8 mark_dscp;  /* 1: rewrite the packet's DSCP to dscp */
	__u8 dscp;
	__u8 droppable;  /* 1: discarded early while congested */
	__u8 pad;
	__u32 pad2;
};

/* Global state, written by the daemon. */
struct bx_control {
	__u64 heartbeat_ns; /* CLOCK_MONOTONIC time of the daemon's last beat */
	__u64 lease_ns;     /* the programs step aside when the beat is older than this */
	__u32 congested;    /* 1 while the link is congested */
	__u32 l2_header;    /* 1: packets start with an Ethernet header; 0: raw IP device */
};

/* Per-lane counters, one copy per CPU. */
struct bx_lane_stats {
	__u64 packets;
	__u64 bytes;
	__u64 early_drops;
	__u64 odd_packets; /* truncated or unparsable: sent to the default lane */
};

#endif

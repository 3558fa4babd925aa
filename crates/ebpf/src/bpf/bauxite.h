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

/* The classifier's lookup tables, compiled by the loader (crates/ebpf/src/lookup.rs)
 * from the profile's rules, first match first. A rule's "rank" is BX_MAX_RULES minus
 * its index (1 for the last possible rule, BX_MAX_RULES for the first); 0 means "no
 * rule". Each table entry holds the rank of the first rule that matches that value, so
 * the first matching rule of a packet is the highest of three ranks (DSCP, destination
 * port, source port): O(1) work per packet at any rule count, port ranges included.
 * All zero (a fresh map) means no rules: everything takes lane 0. */
#define BX_DSCPS 64
#define BX_PORTS 65536
#define BX_PORT_TABLE_UDP 0
#define BX_PORT_TABLE_TCP 1
#define BX_PORT_TABLE_DST 0
#define BX_PORT_TABLE_SRC 1

struct bx_classifier {
	__u32 default_lane;              /* the lane of packets no rule matches */
	__u32 ack_lane;                  /* pure TCP ACKs' lane plus one (0: none), see bx_lane_of */
	__u8 dscp_rank[BX_DSCPS];        /* by the packet's DSCP, IPv4 and IPv6 */
	__u8 lane_of_rule[BX_MAX_RULES]; /* by rule index (BX_MAX_RULES - rank) */
	__u8 port_rank[2][2][BX_PORTS];  /* [UDP, TCP][destination, source][port] */
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

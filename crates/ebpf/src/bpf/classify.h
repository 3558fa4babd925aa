/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Packet parsing and lane lookup shared by the tc classifier and the XDP gateway
 * program. Works on [data, data_end) so both hooks use it unchanged.
 */
#ifndef BAUXITE_CLASSIFY_H
#define BAUXITE_CLASSIFY_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "bauxite.h"

#define BX_MAX_VLAN_TAGS 2
#define BX_MAX_IPV6_EXT 6
#define BX_ETH_P_8021Q 0x8100
#define BX_ETH_P_8021AD 0x88A8

/* One value, so that a profile's rules are replaced in one map update (256 KiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bx_classifier);
} bx_classifier SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BX_MAX_LANES);
	__type(key, __u32);
	__type(value, struct bx_lane);
} bx_lanes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bx_control);
} bx_control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BX_STATS_SLOTS);
	__type(key, __u32);
	__type(value, struct bx_lane_stats);
} bx_stats SEC(".maps");

/* What the XDP gateway program saw and dropped, apart from the egress counters. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BX_STATS_SLOTS);
	__type(key, __u32);
	__type(value, struct bx_lane_stats);
} bx_gateway_stats SEC(".maps");

/* What the parser learned about a packet. */
struct bx_packet {
	void *ip;          /* start of the IP header, or NULL */
	__u8 ip_version;   /* 4, 6 or 0 */
	__u8 dscp;
	__u8 ip_proto;
	__u8 have_ports;   /* 0 for non-first fragments and truncated L4 headers */
	__u8 tcp_control;  /* SYN, FIN or RST set: never early-dropped */
	__u8 pure_ack;     /* a TCP ACK without payload (nor SYN, FIN, RST) */
	__u8 odd;          /* truncated or unknown: the default lane */
	__u16 sport;
	__u16 dport;
	__u32 l4_len;      /* the IP payload's length after the IP headers, from the IP header */
};

static __always_inline int bx_parse_l4(struct bx_packet *p, void *l4, void *data_end)
{
	if (p->ip_proto == IPPROTO_UDP) {
		struct udphdr *udp = l4;
		if ((void *)(udp + 1) > data_end)
			return -1;
		p->sport = bpf_ntohs(udp->source);
		p->dport = bpf_ntohs(udp->dest);
		p->have_ports = 1;
	} else if (p->ip_proto == IPPROTO_TCP) {
		struct tcphdr *tcp = l4;
		if ((void *)(tcp + 1) > data_end)
			return -1;
		p->sport = bpf_ntohs(tcp->source);
		p->dport = bpf_ntohs(tcp->dest);
		p->have_ports = 1;
		p->tcp_control = tcp->syn || tcp->fin || tcp->rst;
		p->pure_ack = tcp->ack && !p->tcp_control && p->l4_len == (__u32)tcp->doff * 4;
	}
	return 0;
}

static __always_inline void bx_parse_ipv6(struct bx_packet *p, void *cursor, void *data_end)
{
	struct ipv6hdr *ip6 = cursor;
	if ((void *)(ip6 + 1) > data_end) {
		p->odd = 1;
		return;
	}
	p->ip = ip6;
	p->ip_version = 6;
	p->dscp = ((ip6->priority << 4) | (ip6->flow_lbl[0] >> 4)) >> 2;
	__u8 next = ip6->nexthdr;
	cursor = ip6 + 1;
	for (int i = 0; i < BX_MAX_IPV6_EXT; i++) {
		if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS) {
			__u8 *ext = cursor;
			if ((void *)(ext + 2) > data_end) {
				p->odd = 1;
				return;
			}
			next = ext[0];
			cursor = ext + (ext[1] + 1) * 8;
		} else if (next == IPPROTO_AH) {
			__u8 *ext = cursor;
			if ((void *)(ext + 2) > data_end) {
				p->odd = 1;
				return;
			}
			next = ext[0];
			cursor = ext + (ext[1] + 2) * 4;
		} else if (next == IPPROTO_FRAGMENT) {
			__u8 *ext = cursor;
			if ((void *)(ext + 8) > data_end) {
				p->odd = 1;
				return;
			}
			next = ext[0];
			__u16 offset = ((__u16)ext[2] << 8 | ext[3]) & 0xfff8;
			cursor = ext + 8;
			if (offset != 0) {
				p->ip_proto = next; /* a later fragment: no transport header */
				return;
			}
		} else {
			break;
		}
	}
	p->ip_proto = next;
	__u32 headers = (__u8 *)cursor - (__u8 *)(ip6 + 1);
	__u32 payload = bpf_ntohs(ip6->payload_len);
	p->l4_len = payload > headers ? payload - headers : 0;
	if (bx_parse_l4(p, cursor, data_end) < 0)
		p->odd = 1;
}

static __always_inline void bx_parse(struct bx_packet *p, void *data, void *data_end, int l2_header)
{
	void *cursor = data;
	__u16 proto;

	if (l2_header) {
		struct ethhdr *eth = cursor;
		if ((void *)(eth + 1) > data_end) {
			p->odd = 1;
			return;
		}
		proto = eth->h_proto;
		cursor = eth + 1;
		for (int i = 0; i < BX_MAX_VLAN_TAGS; i++) {
			if (proto != bpf_htons(BX_ETH_P_8021Q) && proto != bpf_htons(BX_ETH_P_8021AD))
				break;
			__be16 *tag = cursor; /* TCI, then the encapsulated protocol */
			if ((void *)(tag + 2) > data_end) {
				p->odd = 1;
				return;
			}
			proto = tag[1];
			cursor = tag + 2;
		}
	} else {
		__u8 *first = cursor;
		if ((void *)(first + 1) > data_end) {
			p->odd = 1;
			return;
		}
		proto = (*first >> 4) == 6 ? bpf_htons(ETH_P_IPV6) : bpf_htons(ETH_P_IP);
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = cursor;
		if ((void *)(ip + 1) > data_end || ip->ihl < 5) {
			p->odd = 1;
			return;
		}
		p->ip = ip;
		p->ip_version = 4;
		p->dscp = ip->tos >> 2;
		p->ip_proto = ip->protocol;
		if (bpf_ntohs(ip->frag_off) & 0x1fff)
			return; /* a later fragment: no transport header */
		__u32 total = bpf_ntohs(ip->tot_len);
		p->l4_len = total > ip->ihl * 4u ? total - ip->ihl * 4u : 0;
		if (bx_parse_l4(p, (__u8 *)ip + ip->ihl * 4, data_end) < 0)
			p->odd = 1;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		bx_parse_ipv6(p, cursor, data_end);
	} else {
		p->odd = 1; /* ARP, LLDP, ...: not ours to judge */
	}
}

/* The lane of a parsed packet: the first matching rule's, else the default lane.
 * Three table reads whatever the rules (see struct bx_classifier): the first matching
 * rule is the one of highest rank among the packet's DSCP and port entries. A pure TCP
 * ACK whose lane is less urgent than the profile's ack_lane takes that lane instead: a
 * download's ACKs then leave ahead of an upload's data, which would otherwise hold
 * them (and the download's window) back by the upload's queue, as sqm-scripts'
 * ACK prioritisation avoids too. */
static __always_inline __u32 bx_lane_of(const struct bx_packet *p)
{
	__u32 zero = 0;
	struct bx_classifier *c = bpf_map_lookup_elem(&bx_classifier, &zero);
	if (!c)
		return 0;
	__u32 lane = c->default_lane;
	if (p->ip_version) {
		__u32 rank = c->dscp_rank[p->dscp & (BX_DSCPS - 1)];
		if (p->have_ports) { /* only ever set for UDP and TCP */
			__u32 table = p->ip_proto == IPPROTO_TCP ? BX_PORT_TABLE_TCP : BX_PORT_TABLE_UDP;
			__u32 dst = c->port_rank[table][BX_PORT_TABLE_DST][p->dport];
			__u32 src = c->port_rank[table][BX_PORT_TABLE_SRC][p->sport];
			rank = rank > dst ? rank : dst;
			rank = rank > src ? rank : src;
		}
		if (rank)
			lane = c->lane_of_rule[(BX_MAX_RULES - rank) & (BX_MAX_RULES - 1)];
		if (p->pure_ack && c->ack_lane && c->ack_lane - 1 < lane)
			lane = c->ack_lane - 1;
	}
	return lane < BX_MAX_LANES ? lane : 0;
}

/* The daemon's control block, or NULL when its lease has expired (fail open). */
static __always_inline struct bx_control *bx_live_control(void)
{
	__u32 zero = 0;
	struct bx_control *ctl = bpf_map_lookup_elem(&bx_control, &zero);
	if (!ctl || bpf_ktime_get_ns() - ctl->heartbeat_ns > ctl->lease_ns)
		return NULL;
	return ctl;
}

static __always_inline void bx_count(void *stats_map, __u32 slot, __u32 packets, __u64 bytes, int dropped,
				     int odd)
{
	struct bx_lane_stats *s = bpf_map_lookup_elem(stats_map, &slot);
	if (!s)
		return;
	s->packets += packets;
	s->bytes += bytes;
	s->early_drops += dropped ? packets : 0;
	s->odd_packets += odd;
}

/* Whether the lane's early-drop decision discards this packet. */
static __always_inline int bx_early_drop(const struct bx_control *ctl, const struct bx_lane *lane,
					 const struct bx_packet *p)
{
	if (!ctl->congested || !lane->droppable || p->tcp_control || lane->drop_prob == 0)
		return 0;
	/* ARP, neighbour discovery and ICMP keep every lane reachable: never shed them. */
	if (!p->ip_version || p->ip_proto == IPPROTO_ICMP || p->ip_proto == IPPROTO_ICMPV6)
		return 0;
	return bpf_get_prandom_u32() < lane->drop_prob;
}

/* Adds `from` -> `to` (16-bit words) to an Internet checksum (RFC 1624). */
static __always_inline __u16 bx_csum_replace(__u16 check, __u16 from, __u16 to)
{
	__u32 sum = (__u16)~check + (__u16)~from + to;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* Rewrites the DSCP, keeping ECN; fixes the IPv4 header checksum. */
static __always_inline void bx_mark_dscp(struct bx_packet *p, void *data_end, __u8 dscp)
{
	if (p->ip_version == 4) {
		struct iphdr *ip = p->ip;
		if ((void *)(ip + 1) > data_end)
			return;
		__u16 *word = (__u16 *)ip; /* version/ihl + tos */
		__u16 old = *word;
		ip->tos = (dscp << 2) | (ip->tos & 3);
		ip->check = bx_csum_replace(ip->check, old, *word);
	} else if (p->ip_version == 6) {
		struct ipv6hdr *ip6 = p->ip;
		if ((void *)(ip6 + 1) > data_end)
			return;
		__u8 *b = (__u8 *)ip6;
		__u8 tclass = (dscp << 2) | ((b[1] >> 4) & 3);
		b[0] = (b[0] & 0xf0) | (tclass >> 4);
		b[1] = (b[1] & 0x0f) | (tclass << 4);
	}
}

#endif

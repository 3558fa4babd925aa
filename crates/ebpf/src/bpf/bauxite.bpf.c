// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Bauxite's kernel side.
 *
 * bauxite_tc (tc egress, tcx on Linux >= 6.6, clsact before): puts every packet in
 * its lane by setting skb->priority to the lane's HTB class, rewrites DSCP where the
 * lane asks for it, and discards packets of droppable lanes early, with the
 * probability the daemon's control law sets, while the link is congested.
 *
 * bauxite_xdp (XDP, ingress of a forwarding box): applies the same early-drop
 * decision before a packet is even queued toward the constrained interface.
 *
 * Both step aside (pass everything, touch nothing) when the daemon has not renewed
 * its lease: a crashed daemon never leaves a stale drop probability behind.
 */
#include <linux/pkt_cls.h>

#include "classify.h"

/* Enough to hold Ethernet + 2 VLAN tags + IPv6 + a few extension headers + TCP. */
#define BX_PULL_BYTES 192

SEC("classifier")
int bauxite_tc(struct __sk_buff *skb)
{
	__u32 packets = skb->gso_segs ? skb->gso_segs : 1;
	struct bx_control *ctl = bx_live_control();
	if (!ctl) {
		bx_count(&bx_stats, BX_STATS_UNMANAGED, packets, skb->len, 0, 0);
		return TC_ACT_UNSPEC;
	}

	/* Headers of locally built packets are linear; forwarded ones may not be. */
	__u32 linear = skb->data_end - skb->data;
	if (linear < BX_PULL_BYTES && skb->len > linear)
		bpf_skb_pull_data(skb, skb->len < BX_PULL_BYTES ? skb->len : BX_PULL_BYTES);

	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct bx_packet p = {};
	bx_parse(&p, data, data_end, ctl->l2_header);

	__u32 lane_index = bx_lane_of(&p);
	struct bx_lane *lane = bpf_map_lookup_elem(&bx_lanes, &lane_index);
	if (!lane)
		return TC_ACT_UNSPEC;

	if (bx_early_drop(ctl, lane, &p)) {
		bx_count(&bx_stats, lane_index, packets, skb->len, 1, p.odd);
		return TC_ACT_SHOT;
	}
	skb->priority = lane->priority;
	if (lane->mark_dscp && p.ip_version && p.dscp != lane->dscp)
		bx_mark_dscp(&p, data_end, lane->dscp);
	bx_count(&bx_stats, lane_index, packets, skb->len, 0, p.odd);
	return TC_ACT_UNSPEC;
}

SEC("xdp")
int bauxite_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bx_control *ctl = bx_live_control();
	if (!ctl)
		return XDP_PASS;

	struct bx_packet p = {};
	bx_parse(&p, data, data_end, 1);
	__u32 lane_index = bx_lane_of(&p);
	struct bx_lane *lane = bpf_map_lookup_elem(&bx_lanes, &lane_index);
	if (!lane)
		return XDP_PASS;
	int drop = bx_early_drop(ctl, lane, &p);
	bx_count(&bx_gateway_stats, lane_index, 1, data_end - data, drop, p.odd);
	return drop ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Build-time layout check: prints Rust assertions that the mirror types in
 * crates/ebpf/src/maps.rs have the sizes and field offsets of bauxite.h. */
#include <stddef.h>
#include <stdio.h>

#include "bauxite.h"

#define SIZE(c, r) printf("const _: () = assert!(core::mem::size_of::<%s>() == %zu, \"%s size differs from C\");\n", #r, sizeof(struct c), #r)
#define FIELD(c, r, f) printf("const _: () = assert!(core::mem::offset_of!(%s, %s) == %zu, \"%s.%s offset differs from C\");\n", #r, #f, offsetof(struct c, f), #r, #f)
#define CONST(c, r) printf("const _: () = assert!(%s == %lld, \"%s differs from C\");\n", #r, (long long)(c), #r)

int main(void)
{
	CONST(BX_MAX_LANES, MAX_LANES);
	CONST(BX_MAX_RULES, MAX_RULES);
	CONST(BX_STATS_UNMANAGED, STATS_UNMANAGED);
	CONST(BX_DSCPS, DSCPS);
	CONST(BX_PORTS, PORTS);
	CONST(BX_PORT_TABLE_UDP, PORT_TABLE_UDP);
	CONST(BX_PORT_TABLE_TCP, PORT_TABLE_TCP);
	CONST(BX_PORT_TABLE_DST, PORT_TABLE_DST);
	CONST(BX_PORT_TABLE_SRC, PORT_TABLE_SRC);
	SIZE(bx_classifier, ClassifierTables);
	FIELD(bx_classifier, ClassifierTables, default_lane);
	FIELD(bx_classifier, ClassifierTables, ack_lane);
	FIELD(bx_classifier, ClassifierTables, dscp_rank);
	FIELD(bx_classifier, ClassifierTables, lane_of_rule);
	FIELD(bx_classifier, ClassifierTables, port_rank);
	SIZE(bx_lane, LanePolicy);
	FIELD(bx_lane, LanePolicy, priority);
	FIELD(bx_lane, LanePolicy, drop_prob);
	FIELD(bx_lane, LanePolicy, mark_dscp);
	FIELD(bx_lane, LanePolicy, dscp);
	FIELD(bx_lane, LanePolicy, droppable);
	SIZE(bx_control, Control);
	FIELD(bx_control, Control, heartbeat_ns);
	FIELD(bx_control, Control, lease_ns);
	FIELD(bx_control, Control, congested);
	FIELD(bx_control, Control, l2_header);
	SIZE(bx_lane_stats, LaneStats);
	FIELD(bx_lane_stats, LaneStats, packets);
	FIELD(bx_lane_stats, LaneStats, bytes);
	FIELD(bx_lane_stats, LaneStats, early_drops);
	FIELD(bx_lane_stats, LaneStats, odd_packets);
	return 0;
}

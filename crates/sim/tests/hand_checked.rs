//! Topologies small enough to work out by hand: delays, throughput and losses
//! must come out exactly.

use bauxite_qdisc::{Fifo, Qdisc};
use bauxite_sim::Simulator;
use bauxite_sim::app::{TcpApp, UdpApp};
use bauxite_sim::link::LinkConfig;
use bauxite_sim::topology::Topology;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn app(src: u32, dst: u32, payload: u32, pps: f64, start: u64, stop: u64) -> UdpApp {
    UdpApp {
        src,
        dst,
        src_port: 1000,
        dst_port: 2000,
        payload,
        dscp: 0,
        interval_ps: UdpApp::interval_from_pps(pps),
        start,
        stop,
        tag: 0,
        on_off: None,
        deadline: None,
    }
}

fn fifo(limit: usize) -> Option<Box<dyn Qdisc>> {
    Some(Box::new(Fifo::new(limit)))
}

#[test]
fn one_flow_over_one_link_sees_serialisation_plus_propagation() {
    let mut t = Topology::new();
    let a = t.add_node("a");
    let b = t.add_node("b");
    // 10 Mbit/s, 5 ms: a 1000-byte payload is 1028 IP bytes, 1030 on the wire:
    // 1030 · 8 / 10^7 s = 824 µs.
    t.add_link(a, b, LinkConfig::new(10_000_000, 5 * MS), fifo(10), fifo(10));
    let mut sim = Simulator::new(t);
    let flow = sim.add_app(app(a, b, 1000, 100.0, S, 2 * S));
    let counters = sim.run();
    let f = &sim.monitor().flows[flow as usize];
    let s = &f.stats;
    assert_eq!((s.tx_packets, s.rx_packets, s.lost_packets()), (100, 100, 0));
    assert_eq!(s.mean_delay_ns(), Some((824_000 + 5 * MS) as f64));
    assert_eq!(s.max_delay, 824_000 + 5 * MS);
    assert_eq!(s.mean_jitter_ns(), Some(0.0));
    // 100 packets of 1028 IP bytes over the 1 s the source was active.
    assert_eq!(s.rx_bytes, 102_800);
    assert_eq!(f.throughput_bps(), 822_400.0);
    // Last packet sent at 1.99 s arrives 5.824 ms later; then nothing is left.
    assert_eq!(counters.end_time, 2 * S - 10 * MS + 824_000 + 5 * MS);
    // Events: one send per packet and nothing else. The packet is on its last hop,
    // so it is delivered (at its arrival time, as checked) without an arrival
    // event, and the wire is idle 9 ms before the next packet comes, so the end of
    // each transmission needs no event either.
    assert_eq!(counters.events, 100);
}

#[test]
fn store_and_forward_adds_each_hop() {
    // a — r — b: 100 Mbit/s 1 ms then 10 Mbit/s 5 ms; 64-byte payload = 94 wire bytes.
    let mut t = Topology::new();
    let a = t.add_node("a");
    let r = t.add_node("r");
    let b = t.add_node("b");
    t.add_link(a, r, LinkConfig::new(100_000_000, MS), fifo(10), fifo(10));
    t.add_link(r, b, LinkConfig::new(10_000_000, 5 * MS), fifo(10), fifo(10));
    let mut sim = Simulator::new(t);
    let flow = sim.add_app(app(a, b, 64, 200.0, 0, S));
    sim.run();
    let s = &sim.monitor().flows[flow as usize].stats;
    assert_eq!(s.rx_packets, 200);
    assert_eq!(s.mean_delay_ns(), Some((7_520 + MS + 75_200 + 5 * MS) as f64));
}

#[test]
fn simultaneous_packets_queue_behind_each_other_and_overflow_drops_exactly() {
    // Four senders on one host each send one 1000-byte packet at t = 0 into a
    // 10 Mbit/s link with a one-packet device queue and a one-packet FIFO: the
    // first goes on the wire, the second waits in the device queue, the third in
    // the FIFO, the fourth is dropped.
    let mut t = Topology::new();
    let a = t.add_node("a");
    let b = t.add_node("b");
    t.add_link(a, b, LinkConfig::new(10_000_000, 0), fifo(1), fifo(1));
    let mut sim = Simulator::new(t);
    let flows: Vec<u32> = (0..4).map(|_| sim.add_app(app(a, b, 1000, 1.0, 0, 1))).collect();
    sim.run();
    let m = sim.monitor();
    let tx = 824_000;
    let delays: Vec<Option<f64>> = flows.iter().map(|&f| m.flows[f as usize].stats.mean_delay_ns()).collect();
    assert_eq!(delays, vec![Some(tx as f64), Some(2.0 * tx as f64), Some(3.0 * tx as f64), None]);
    let lost: Vec<u64> = flows.iter().map(|&f| m.flows[f as usize].stats.lost_packets()).collect();
    assert_eq!(lost, vec![0, 0, 0, 1]);
    assert_eq!(m.flows[flows[3] as usize].stats.dropped_packets, 1);
    assert_eq!(sim.topology().channels[0].stats.qdisc_drops, 1);
}

#[test]
fn jitter_and_loss_follow_flow_monitor_definitions() {
    // One link, 10 Mbit/s, no propagation delay, a one-packet device queue and a
    // one-packet FIFO. Flow A sends a 1000-byte payload (824 µs on the wire) at 0,
    // 2, 4 and 6 ms. Cross traffic: one packet at 1.9 ms, three at 3.9 ms.
    //   A0 at 0:    wire 0–0.824                       delay 0.824 ms
    //   X  at 1.9:  wire 1.9–2.724
    //   A1 at 2:    waits for X, wire 2.724–3.548      delay 1.548 ms
    //   X×3 at 3.9: one on the wire (to 4.724), one in the device queue (to 5.548),
    //               one in the FIFO (to 6.372)
    //   A2 at 4:    the FIFO is full: dropped
    //   A3 at 6:    waits to 6.372, wire to 7.196      delay 1.196 ms
    // Jitter: |1.548 − 0.824| + |1.196 − 1.548| = 1.076 ms over 3 − 1 = 2 gaps.
    let mut t = Topology::new();
    let a = t.add_node("a");
    let b = t.add_node("b");
    t.add_link(a, b, LinkConfig::new(10_000_000, 0), fifo(1), fifo(1));
    let mut sim = Simulator::new(t);
    let flow = sim.add_app(app(a, b, 1000, 500.0, 0, 7 * MS));
    sim.add_app(app(a, b, 1000, 1.0, 1_900_000, 1_900_001));
    for _ in 0..3 {
        sim.add_app(app(a, b, 1000, 1.0, 3_900_000, 3_900_001));
    }
    sim.run();
    let s = &sim.monitor().flows[flow as usize].stats;
    assert_eq!((s.tx_packets, s.rx_packets, s.dropped_packets), (4, 3, 1));
    assert_eq!(s.loss_pct(), 25.0);
    assert_eq!(s.delay_sum, 824_000 + 1_548_000 + 1_196_000);
    assert_eq!(s.jitter_sum, 1_076_000);
    assert_eq!(s.mean_jitter_ns(), Some(538_000.0));
    assert_eq!(s.last_delay, 1_196_000);
}

fn tcp(src: u32, dst: u32, start: u64, stop: u64) -> TcpApp {
    TcpApp { src, dst, src_port: 1001, dst_port: 2001, dscp: 0, start, stop, tag: 0 }
}

/// Two hosts through a 10 Mbit/s, 5 ms bottleneck between two routers (100 Mbit/s
/// access links, 1 ms), the bottleneck's discipline `qdisc` both ways: (sim, a, b).
fn dumbbell(qdisc: fn() -> Box<dyn Qdisc>) -> (Simulator, u32, u32) {
    let mut t = Topology::new();
    let (a, ra, rb, b) = (t.add_node("a"), t.add_node("ra"), t.add_node("rb"), t.add_node("b"));
    let access = LinkConfig::new(100_000_000, MS);
    t.add_link(a, ra, access, fifo(1000), fifo(1000));
    t.add_link(ra, rb, LinkConfig::new(10_000_000, 5 * MS), Some(qdisc()), Some(qdisc()));
    t.add_link(rb, b, access, fifo(1000), fifo(1000));
    (Simulator::new(t), a, b)
}

#[test]
fn one_tcp_flow_fills_the_bottleneck_and_every_byte_arrives() {
    let (mut sim, a, b) = dumbbell(|| Box::new(Fifo::new(40)));
    let flow = sim.add_tcp(tcp(a, b, S, 11 * S));
    sim.run();
    let flows = &sim.monitor().flows;
    let s = &flows[flow as usize].stats;
    // 10 Mbit/s carries 10^7 / (1500 + 2 framing) · 1500 IP bit/s: 9.987 Mbit/s. Slow
    // start (a 14 ms RTT: about 0.1 s to fill the link) and the window's saw-tooth
    // under a 40-packet FIFO (it fills at 48 ms of queue, over three times the path's
    // RTT, so the link never idles after a reduction) leave it above 95 %.
    // What is queued at the stop still arrives, within the 10 s throughput counts
    // over: at most 40 packets and a window in flight, 0.1 s of the link.
    let mbps = flows[flow as usize].throughput_bps() / 1e6;
    assert!(mbps > 0.95 * 9.987 && mbps <= 9.987 * 10.1 / 10.0, "{mbps} Mbit/s");
    // Only what the FIFO dropped is missing, and every segment it dropped was sent again.
    assert_eq!(s.tx_packets - s.rx_packets, s.dropped_packets);
    assert!(s.dropped_packets > 0, "CUBIC fills a FIFO until it drops");
    // One ACK per segment received, on a flow of its own.
    let acks = &flows[flow as usize + 1];
    assert_eq!((acks.key.src, acks.key.dst, acks.tag), (b, a, bauxite_sim::engine::ACK_TAG));
    assert_eq!(acks.stats.tx_packets, s.rx_packets);
}

#[test]
fn fq_codel_gives_tcp_its_fair_share_beside_udp_that_fifo_gives_away() {
    // TCP and an 8 Mbit/s UDP flow through 10 Mbit/s. FIFO: UDP never backs off
    // and TCP gets what is left (less, since it halves its window at its share of
    // the drops). FQ-CoDel: two flows, 5 Mbit/s each.
    let share = |qdisc: fn() -> Box<dyn Qdisc>| {
        let (mut sim, a, b) = dumbbell(qdisc);
        let tcp = sim.add_tcp(tcp(a, b, S, 11 * S));
        let udp = sim.add_app(app(a, b, 1472, 8e6 / (1500.0 * 8.0), S, 11 * S));
        sim.run();
        let flows = &sim.monitor().flows;
        (flows[tcp as usize].throughput_bps() / 1e6, flows[udp as usize].throughput_bps() / 1e6)
    };
    let (tcp_fifo, udp_fifo) = share(|| Box::new(Fifo::new(40)));
    let (tcp_fq, udp_fq) = share(|| Box::new(bauxite_qdisc::FqCodel::new(Default::default())));
    assert!(tcp_fifo < 2.5, "FIFO: TCP {tcp_fifo} Mbit/s beside UDP {udp_fifo}");
    assert!(udp_fifo > 7.0, "FIFO: UDP keeps nearly all it sends: {udp_fifo}");
    assert!((tcp_fq - 5.0).abs() < 0.5 && (udp_fq - 5.0).abs() < 0.5, "FQ-CoDel: TCP {tcp_fq}, UDP {udp_fq}");
}

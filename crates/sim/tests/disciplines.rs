//! Each discipline's defining behaviour, seen end to end through the simulator:
//! two senders behind a fast access link overload a 10 Mbit/s bottleneck.

use bauxite_qdisc::{Fifo, Qdisc, dscp};
use bauxite_sim::LimitScope;
use bauxite_sim::Simulator;
use bauxite_sim::app::UdpApp;
use bauxite_sim::link::LinkConfig;
use bauxite_sim::monitor::FlowStats;
use bauxite_sim::scheduler::{QdiscParams, Scheduler, build_qdisc};
use bauxite_sim::topology::Topology;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// A flood (1400-byte payloads at `flood_mbps`, DSCP 0) and a second flow
/// (`payload` bytes at `pps`, DSCP `mark`) from one host through a 10 Mbit/s,
/// 5 ms bottleneck running `scheduler` with `limit` packets; 10 s of traffic.
fn run(
    scheduler: Scheduler,
    limit: u32,
    flood_mbps: f64,
    (payload, pps, mark, other_start): (u32, f64, u8, u64),
) -> (FlowStats, FlowStats) {
    let mut t = Topology::new();
    let host = t.add_node("host");
    let router = t.add_node("router");
    let sink = t.add_node("sink");
    let fast = LinkConfig::new(1_000_000_000, 0);
    let fifo = || Some(Box::new(Fifo::new(10_000)) as Box<dyn Qdisc>);
    t.add_link(host, router, fast, fifo(), fifo());
    let params = QdiscParams { limit, limit_mode: LimitScope::PerQueue, seed: 7 };
    let bottleneck = LinkConfig::new(10_000_000, 5 * MS);
    t.add_link(router, sink, bottleneck, Some(build_qdisc(scheduler, params)), fifo());
    let mut sim = Simulator::new(t);
    let app = |port, payload, interval_ps, dscp, start| UdpApp {
        src: host,
        dst: sink,
        src_port: port,
        dst_port: 9,
        payload,
        dscp,
        interval_ps,
        start,
        stop: 10 * S,
        tag: 0,
        on_off: None,
        deadline: None,
    };
    let flood = sim.add_app(app(1, 1400, UdpApp::interval_from_rate(1400, flood_mbps * 1e6), dscp::DEFAULT, 0));
    let other = sim.add_app(app(2, payload, UdpApp::interval_from_pps(pps), mark, other_start));
    sim.run();
    let m = sim.monitor();
    (m.flows[flood as usize].stats.clone(), m.flows[other as usize].stats.clone())
}

fn delay_ms(s: &FlowStats) -> f64 {
    s.mean_delay_ns().unwrap() / 1e6
}

#[test]
fn fifo_makes_everyone_wait_for_the_whole_queue() {
    let (flood, sparse) = run(Scheduler::Fifo, 100, 20.0, (64, 100.0, dscp::AF42, 0));
    // 100 packets of 1430 wire bytes at 10 Mbit/s: 114 ms of queue for everyone.
    assert!(delay_ms(&sparse) > 100.0 && delay_ms(&flood) > 100.0);
    assert!(sparse.lost_packets() > 0);
}

#[test]
fn strict_priority_serves_the_top_band_first_and_starves_the_bottom() {
    // Control (AF42, band 0) at 8.8 Mbit/s against a 20 Mbit/s flood in the last band.
    let (flood, control) = run(Scheduler::Prio, 100, 20.0, (1072, 1000.0, dscp::AF42, 0));
    assert_eq!(control.lost_packets(), 0);
    assert!(delay_ms(&control) < 8.0, "{}", delay_ms(&control));
    // The flood gets only what control leaves: about 1.2 of its 20 Mbit/s.
    assert!(flood.rx_packets * 10 < flood.tx_packets, "{} of {}", flood.rx_packets, flood.tx_packets);
}

#[test]
fn drr_shares_the_link_by_quantum() {
    // Control class (quantum 3 MTU) against the default class (1 MTU), both
    // offering 20 Mbit/s of 1400-byte packets: 3 : 1 of the link.
    let (rest, control) = run(Scheduler::Drr, 100, 20.0, (1400, 20e6 / (1400.0 * 8.0), dscp::AF42, 0));
    let ratio = control.rx_bytes as f64 / rest.rx_bytes as f64;
    assert!((ratio - 3.0).abs() < 0.1, "control : rest = {ratio}");
}

#[test]
fn fair_queueing_isolates_a_sparse_flow_and_aqm_bounds_the_flood() {
    // A flood 10 % over the link: a 1000-packet FIFO lets it queue for about a second.
    let (fifo_flood, _) = run(Scheduler::Fifo, 1000, 11.0, (64, 100.0, 0, 0));
    assert!(delay_ms(&fifo_flood) > 500.0, "fifo flood {}", delay_ms(&fifo_flood));
    for scheduler in [Scheduler::FqCodel, Scheduler::FqPie] {
        let (flood, sparse) = run(scheduler, 1000, 11.0, (64, 100.0, 0, 0));
        assert_eq!(sparse.lost_packets(), 0, "{scheduler}");
        // Path 5.1 ms plus at most the packet on the wire and the one in the device queue.
        assert!(delay_ms(&sparse) < 8.0, "{scheduler} sparse {}", delay_ms(&sparse));
        // The flood's own queue is held down by its AQM, not by the limit.
        assert!(delay_ms(&flood) < delay_ms(&fifo_flood) / 5.0, "{scheduler} flood {}", delay_ms(&flood));
        assert!(flood.lost_packets() > 0);
    }
}

#[test]
fn pie_holds_the_shared_queue_near_its_target() {
    // A probe that starts once the controller has settled (5 s into a flood 10 %
    // over the link) sees the single queue's delay. A drop-tail FIFO of the same
    // 1000 packets would hold it for about a second. PIE steers to its 15 ms target.
    let (_, probe) = run(Scheduler::Pie, 1000, 11.0, (64, 100.0, 0, 5 * S));
    let queueing = delay_ms(&probe) - 5.1;
    assert!(queueing > 8.0 && queueing < 30.0, "pie: {queueing} ms of queue");
}

#[test]
fn codel_saws_around_ten_times_its_target_against_an_unresponsive_flood() {
    // CoDel against a flood that never slows down (RFC 8289 §5.4: it is designed
    // for responsive traffic). Its drop rate grows only with the square root of
    // its drop count (10·√count drops/s with the 100 ms interval): the flood's 982
    // packets/s against the 874 the link sends need a count near 120, and each
    // time the queue dips below the 5 ms target and CoDel leaves its dropping
    // state, the count restarts lower and the queue grows back. The probe (5 s to
    // 10 s, after the first climb) sees that sawtooth: a mean of 54.0 ms of queue
    // and a peak of 77.4 ms, measured with this deterministic workload (no random
    // draw anywhere). The bounds allow some ±20 % of timing change while catching
    // a broken law: without drops the queue would reach the FIFO's ~1 s, and a law
    // that dropped enough to hold the target would sit near 5 ms.
    let (_, probe) = run(Scheduler::Codel, 1000, 11.0, (64, 100.0, 0, 5 * S));
    let mean = delay_ms(&probe) - 5.1;
    let peak = probe.max_delay as f64 / 1e6 - 5.1;
    assert!((43.0..65.0).contains(&mean), "codel: {mean} ms of queue on average");
    assert!(peak < 100.0, "codel: the queue peaks at {peak} ms");
    assert!(peak > mean + 10.0, "a sawtooth, not a standing queue: peak {peak} ms, mean {mean} ms");
}

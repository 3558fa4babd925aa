//! Cut-through (a packet handed to its last hop as it leaves the channel that
//! alone feeds it, without an arrival event) changes nothing but the event count:
//! every flow's counters and every channel's counters match a run with an arrival
//! event at every hop, including on networks built to make it tempting and wrong
//! (access links slower than the bottleneck, deep device queues, zero delays,
//! equal packet sizes, so that transmissions end at the same nanosecond as
//! arrivals).

use bauxite_sim::{ClassSpec, ScenarioConfig, Scheduler, Simulator};

/// Runs `sim` and returns its flows' and channels' counters and its event count.
fn outcome(mut sim: Simulator) -> (Vec<String>, u64) {
    let counters = sim.run();
    let mut lines: Vec<String> = sim.monitor().flows.iter().map(|f| format!("{:?} {:?}", f.key, f.stats)).collect();
    lines.extend(sim.topology().channels.iter().map(|c| format!("{} -> {}: {:?}", c.from, c.to, c.stats)));
    lines.push(format!("end {} unroutable {}", counters.end_time, counters.unroutable));
    (lines, counters.events)
}

fn networks() -> Vec<ScenarioConfig> {
    let base = ScenarioConfig { duration_s: 3.0, ..ScenarioConfig::default() };
    let mut configs = Vec::new();
    for scheduler in [Scheduler::Fifo, Scheduler::Prio, Scheduler::Drr, Scheduler::FqCodel, Scheduler::FqPie] {
        configs.push(ScenarioConfig { scheduler, ..base.clone() });
        configs.push(ScenarioConfig {
            scheduler,
            access_mbps: 8.0,
            device_queue_packets: 3,
            access_delay_ms: 0.0,
            bottleneck_delay_ms: 0.0,
            ..base.clone()
        });
        configs.push(ScenarioConfig {
            scheduler,
            access_mbps: 10.0,
            bg_payload_bytes: 64,
            access_delay_ms: 0.0,
            start_jitter_ms: 3.0,
            seed: 9,
            ..base.clone()
        });
        configs.push(ScenarioConfig {
            scheduler,
            bottleneck_mbps: 200.0,
            bg_mbps: 150.0,
            bg_flows: 3,
            bottleneck_delay_ms: 0.0,
            followers: 12,
            ..base.clone()
        });
        // The orchestrator's link four times slower than the bottleneck that alone
        // feeds it, and every packet the same size: the bottleneck, kept busy by
        // twelve saturated followers, lands a packet there exactly as a
        // transmission ends, with others queued and the queue full, which is what
        // the bound on cut-through is for.
        let same = ClassSpec { payload_bytes: 1000, pps: 500.0, dscp: 0 };
        configs.push(ScenarioConfig {
            scheduler,
            followers: 12,
            access_mbps: 2.5,
            bg_flows: 0,
            access_queue_packets: 2,
            control: same,
            status: same,
            telemetry: same,
            bulk: same,
            ..base.clone()
        });
        // TCP cross traffic: its packets end in arrival events, its ACKs cross the
        // far routers' links the other way, and it keeps the bottleneck full.
        configs.push(ScenarioConfig { scheduler, tcp_flows: 2, bg_mbps: 6.0, ..base.clone() });
        // A radio bottleneck: nothing cuts through into or out of it.
        let link = Some("up=rate=8mbit,delay=5ms,ge=1%/25%/80%/0,down=rate=10mbit,delay=2ms,loss=1%".to_string());
        configs.push(ScenarioConfig { scheduler, tcp_flows: 1, link, ..base.clone() });
        configs.push(ScenarioConfig {
            scheduler,
            tcp_flows: 3,
            bg_flows: 0,
            access_mbps: 8.0,
            access_delay_ms: 0.0,
            device_queue_packets: 3,
            ..base.clone()
        });
    }
    configs
}

#[test]
fn cut_through_changes_no_counter_only_the_event_count() {
    for config in networks() {
        let (cut, cut_events) = outcome(config.build().expect("a valid network"));
        let (every_hop, every_hop_events) = outcome(config.build().expect("a valid network").without_cut_through());
        assert_eq!(cut.len(), every_hop.len());
        for (a, b) in cut.iter().zip(&every_hop) {
            assert_eq!(a, b, "{config:?}");
        }
        assert!(cut_events <= every_hop_events, "{config:?}");
    }
}

#[test]
fn the_seed_network_cuts_through_at_the_far_router() {
    // Every packet crossing the bottleneck ends one hop later: without cut-through
    // each takes an arrival event at the far router. With it, all but the few
    // that find their last link still busy (a status packet right behind a bulk
    // one into the orchestrator's) skip that event.
    let config = ScenarioConfig { duration_s: 3.0, ..ScenarioConfig::default() };
    let (_, cut) = outcome(config.build().expect("a valid network"));
    let mut sim = config.build().expect("a valid network").without_cut_through();
    let every_hop = sim.run().events;
    let crossed: u64 = sim.topology().channels[4..6].iter().map(|c| c.stats.tx_packets).sum();
    let saved = every_hop - cut;
    assert!(saved <= crossed && saved * 100 >= crossed * 99, "{saved} events saved for {crossed} packets across");
}

//! The seed's future work as study families (`access`, `burst`, `deadline`): each
//! family's shape on short runs (a snapshot of its class table), and what each shows.

mod common;

use bauxite_core::OrchestratorLane;
use bauxite_sim::output::classes_csv;
use bauxite_sim::study::{ClassSummary, Family, StudyConfig, run_study};
use bauxite_sim::{ScenarioConfig, Scheduler, StudyResult};

/// Short runs of FIFO and FQ-CoDel, DSCP off and on, at the seed's base point.
fn study(family: Family) -> StudyResult {
    let config = StudyConfig {
        families: vec![family],
        schedulers: vec![Scheduler::Fifo, Scheduler::FqCodel],
        base: ScenarioConfig { duration_s: 4.0, ..ScenarioConfig::default() },
        ..StudyConfig::default()
    };
    run_study(&config, &|_| {}).expect("the study runs")
}

fn control(result: &StudyResult, family: Family) -> Vec<&ClassSummary> {
    result.rows(family, OrchestratorLane::Control).collect()
}

fn mean(f: bauxite_sim::study::Figure) -> f64 {
    f.mean.expect("a figure")
}

#[test]
fn the_access_family_moves_the_bottleneck_to_the_followers_edge() {
    let result = study(Family::Access);
    // 5 rates × 2 schedulers × DSCP off/on × 5 classes.
    assert_eq!(result.classes.len(), 5 * 2 * 2 * 5);
    let rates: Vec<f64> = control(&result, Family::Access).iter().map(|r| r.follower_access_mbps).collect();
    assert_eq!(&rates[..4], &[1.0, 1.0, 1.0, 1.0], "the sweep's first point, every scheduler × DSCP");
    // Status leaves each follower behind its own telemetry and bulk: at 1 Mbit/s a
    // 1428-byte bulk packet ahead of it is 11.4 ms, which no scheduler at the core
    // removes; at 100 Mbit/s it is 0.1 ms.
    let status = |rate: f64| {
        result
            .rows(Family::Access, OrchestratorLane::Status)
            .find(|r| r.scheduler == Scheduler::FqCodel && r.dscp && r.follower_access_mbps == rate)
            .map(|r| mean(r.figure("delay_ms")))
            .expect("a status row")
    };
    assert!(status(1.0) > status(100.0) + 2.0, "edge {} ms vs core {} ms", status(1.0), status(100.0));
    common::assert_class_snapshot("access", &classes_csv(&result));
}

#[test]
fn the_burst_family_keeps_the_mean_rate_and_hurts_fifo_more_with_longer_bursts() {
    let result = study(Family::Burst);
    assert_eq!(result.classes.len(), 4 * 2 * 2 * 5);
    let background = |burst: f64| {
        result
            .rows(Family::Burst, OrchestratorLane::Background)
            .find(|r| r.scheduler == Scheduler::FqCodel && !r.dscp && r.bg_burst_ms == burst)
            .map(|r| r.tx_packets)
            .expect("a background row")
    };
    // The same mean rate at every burst length (a burst of 1 s in a 3 s run may end
    // the run on or off: within one burst's packets, about 1/3 of the whole).
    for burst in [1.0, 10.0, 100.0] {
        let ratio = background(burst) / background(1.0);
        assert!((ratio - 1.0).abs() < 0.02, "{burst} ms: {ratio}");
    }
    // FQ-CoDel isolates control from bursts of any length; FIFO's control loss grows with them.
    for r in control(&result, Family::Burst).iter().filter(|r| r.scheduler == Scheduler::FqCodel) {
        assert_eq!(mean(r.figure("loss_pct")), 0.0, "FQ-CoDel, {} ms bursts", r.bg_burst_ms);
    }
    // FIFO loses control at every burst length, for different reasons: 1 ms bursts
    // keep the queue full all the time, 1 s bursts overflow it for a second at a
    // time and leave it empty in between (a lower mean delay, the same harm).
    for r in control(&result, Family::Burst).iter().filter(|r| r.scheduler == Scheduler::Fifo) {
        assert!(mean(r.figure("loss_pct")) > 10.0, "FIFO, {} ms bursts", r.bg_burst_ms);
    }
    common::assert_class_snapshot("burst", &classes_csv(&result));
}

#[test]
fn the_deadline_family_counts_late_packets_as_lost() {
    let result = study(Family::Deadline);
    assert_eq!(result.classes.len(), 5 * 2 * 2 * 5);
    for r in &result.classes {
        let miss = r.deadline_miss_pct.mean;
        match r.class {
            // A robot's deadlines: control 10 ms, status 50, telemetry 200; none for bulk.
            OrchestratorLane::Control | OrchestratorLane::Status | OrchestratorLane::Telemetry => {
                let miss = miss.expect("a class with a deadline has a miss ratio");
                let loss = mean(r.figure("loss_pct"));
                assert!(
                    miss >= loss - 1e-9 && miss <= 100.0,
                    "{:?} {:?}: miss {miss} < loss {loss}",
                    r.scheduler,
                    r.class
                );
            }
            _ => assert_eq!(miss, None, "{:?} has no deadline", r.class),
        }
    }
    // Under FIFO at 16 Mbit/s of background, control waits tens of ms: most of what
    // arrives is late. FQ-CoDel's control takes the base path (~9 ms): within 10 ms.
    let at = |s: Scheduler, bg: f64| {
        control(&result, Family::Deadline)
            .into_iter()
            .find(|r| r.scheduler == s && r.dscp && r.bg_mbps == bg)
            .map(|r| (mean(r.deadline_miss_pct), mean(r.figure("loss_pct"))))
            .expect("a control row")
    };
    let (fifo_miss, fifo_loss) = at(Scheduler::Fifo, 16.0);
    assert!(fifo_miss > fifo_loss + 10.0, "FIFO: late ones count: miss {fifo_miss} %, loss {fifo_loss} %");
    let (fq_miss, _) = at(Scheduler::FqCodel, 16.0);
    assert!(fq_miss < 5.0, "FQ-CoDel meets control's 10 ms: miss {fq_miss} %");
    common::assert_class_snapshot("deadline", &classes_csv(&result));
}

#[test]
fn the_tcp_cross_family_shows_fair_queueing_keeping_control_out_of_tcps_queue() {
    let result = study(Family::TcpCross);
    // 4 counts × 2 schedulers × DSCP off/on × 5 classes.
    assert_eq!(result.classes.len(), 4 * 2 * 2 * 5);
    let at = |scheduler: Scheduler, class: OrchestratorLane, flows: u32| {
        result
            .rows(Family::TcpCross, class)
            .find(|r| r.scheduler == scheduler && r.dscp && r.tcp_flows == flows)
            .expect("a row")
    };
    for flows in [1, 2, 4, 8] {
        let (fifo, fq) = (
            at(Scheduler::Fifo, OrchestratorLane::Control, flows),
            at(Scheduler::FqCodel, OrchestratorLane::Control, flows),
        );
        let delay = |r: &ClassSummary| mean(r.figure("delay_ms"));
        // FIFO: control waits behind the queue CUBIC builds (about 5 ms or more above
        // the 7.1 ms base path); FQ-CoDel: its own flow's queue, never a drop.
        assert!(delay(fifo) > delay(fq) + 4.0, "{flows} flows: FIFO {} ms, FQ-CoDel {} ms", delay(fifo), delay(fq));
        assert_eq!(mean(fq.figure("loss_pct")), 0.0, "FQ-CoDel, {flows} flows");
        // Beside 6 Mbit/s of UDP that never backs off, FIFO leaves TCP what UDP does
        // not take; FQ-CoDel gives each flow its share, so TCP gets more.
        let tcp = |s| mean(at(s, OrchestratorLane::Background, flows).tcp_throughput_mbps);
        assert!(
            tcp(Scheduler::FqCodel) > tcp(Scheduler::Fifo),
            "{flows} flows: FQ-CoDel {} vs FIFO {}",
            tcp(Scheduler::FqCodel),
            tcp(Scheduler::Fifo)
        );
        assert!(tcp(Scheduler::Fifo) > 1.0, "{flows} flows: TCP is never starved under FIFO");
    }
    common::assert_class_snapshot("tcp-cross", &classes_csv(&result));
}

#[test]
fn the_wireless_family_loses_what_the_link_loses_and_the_reference_is_the_wire() {
    let result = study(Family::Wireless);
    common::assert_class_snapshot("wireless", &classes_csv(&result));
    // 3 links × 2 schedulers × DSCP off/on × 5 classes.
    assert_eq!(result.classes.len(), 3 * 2 * 2 * 5);
    let control = |scheduler: Scheduler, link: &str| {
        result
            .rows(Family::Wireless, OrchestratorLane::Control)
            .find(|r| r.scheduler == scheduler && r.dscp && r.link.ends_with(link))
            .map(|r| (mean(r.figure("delay_ms")), mean(r.figure("loss_pct"))))
            .expect("a control row")
    };
    // The reference radio is the seed's wire: the same figures as the compare family.
    let wire = study(Family::Compare);
    for scheduler in [Scheduler::Fifo, Scheduler::FqCodel] {
        let on_wire = wire
            .rows(Family::Compare, OrchestratorLane::Control)
            .find(|r| r.scheduler == scheduler && r.dscp)
            .map(|r| (mean(r.figure("delay_ms")), mean(r.figure("loss_pct"))))
            .expect("a compare row");
        let radio = control(scheduler, "delay=5ms");
        assert!((radio.0 - on_wire.0).abs() < 0.05, "{scheduler:?}: delay {radio:?} vs the wire's {on_wire:?}");
        assert!((radio.1 - on_wire.1).abs() < 0.5, "{scheduler:?}: loss {radio:?} vs the wire's {on_wire:?}");
    }
    // FQ-CoDel keeps control out of every queue; what it loses the link lost: 1 %
    // independently, about 3 % in Gilbert–Elliott bursts (800 packets a run: a
    // binomial's few tenths of a percent either way, the seed fixed).
    let (_, random) = control(Scheduler::FqCodel, "loss=1%");
    assert!(random > 0.3 && random < 2.0, "1 % loss: {random} %");
    let (_, bursts) = control(Scheduler::FqCodel, "ge=1%/25%/80%/0");
    assert!(bursts > 1.0 && bursts < 8.0, "Gilbert–Elliott: {bursts} %");
    common::assert_class_snapshot("wireless", &classes_csv(&result));
}

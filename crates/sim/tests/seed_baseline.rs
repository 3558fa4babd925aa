//! The seed's study, reproduced: the baseline comparison, the follower and load
//! sweeps' trends, and a snapshot of the baseline class table.

mod common;

use bauxite_core::OrchestratorLane;
use bauxite_sim::output::classes_csv;
use bauxite_sim::study::{ClassSummary, Family, StudyConfig, run_study};
use bauxite_sim::{ScenarioConfig, Scheduler, StudyResult};

fn study(families: Vec<Family>, base: ScenarioConfig) -> StudyResult {
    let config = StudyConfig { families, base, ..StudyConfig::default() };
    run_study(&config, &|_| {}).expect("the study runs")
}

fn row(rows: &StudyResult, family: Family, class: OrchestratorLane, s: Scheduler, dscp: bool) -> &ClassSummary {
    rows.rows(family, class).find(|r| r.scheduler == s && r.dscp == dscp).expect("a row for every scheduler × DSCP")
}

fn fig(r: &ClassSummary, name: &str) -> f64 {
    r.figure(name).mean.unwrap_or_else(|| panic!("{name} of {:?} {} is defined", r.scheduler, r.dscp))
}

#[test]
fn baseline_comparison_reproduces_the_seed() {
    let result = study(vec![Family::Compare], ScenarioConfig::default());
    let control = |s, dscp| row(&result, Family::Compare, OrchestratorLane::Control, s, dscp);
    let collapsed = [
        (Scheduler::Fifo, false),
        (Scheduler::Fifo, true),
        (Scheduler::PfifoFast, false),
        (Scheduler::Prio, false),
        (Scheduler::Drr, false),
    ];
    for (s, dscp) in collapsed {
        let r = control(s, dscp);
        assert!(fig(r, "loss_pct") > 50.0, "{s} dscp={dscp}: control loss {}", fig(r, "loss_pct"));
        assert!(fig(r, "delay_ms") > 30.0, "{s} dscp={dscp}: control delay {}", fig(r, "delay_ms"));
    }
    let protected = [
        (Scheduler::FqCodel, false),
        (Scheduler::FqCodel, true),
        (Scheduler::FqPie, false),
        (Scheduler::FqPie, true),
        (Scheduler::Prio, true),
        (Scheduler::PfifoFast, true),
        (Scheduler::Drr, true),
    ];
    for (s, dscp) in protected {
        let r = control(s, dscp);
        assert_eq!(fig(r, "loss_pct"), 0.0, "{s} dscp={dscp}: control loss");
        assert!(fig(r, "delay_ms") < 10.0, "{s} dscp={dscp}: control delay {}", fig(r, "delay_ms"));
        // 4 followers × 200 packets/s × 92 IP bytes: the seed's 0.589 Mbit/s.
        assert!((fig(r, "throughput_mbps") - 0.5888).abs() < 1e-9, "{s} dscp={dscp}: control throughput");
        assert_eq!(fig(r, "jain_throughput"), 1.0);
    }
    // The seed's exact control delay where every scheduler isolates control: 8.9 ms.
    assert!((fig(control(Scheduler::FqCodel, false), "delay_ms") - 8.9).abs() < 0.1);
    // Strict PRIO with DSCP protects telemetry; pfifo_fast-style leaves it with the background.
    let telemetry = |s| row(&result, Family::Compare, OrchestratorLane::Telemetry, s, true);
    assert_eq!(fig(telemetry(Scheduler::Prio), "loss_pct"), 0.0);
    assert!((fig(telemetry(Scheduler::Prio), "delay_ms") - 10.3).abs() < 0.5);
    assert!(fig(telemetry(Scheduler::PfifoFast), "loss_pct") > 50.0);
    assert!(fig(telemetry(Scheduler::PfifoFast), "delay_ms") > 30.0);

    // The chart series: a bar per scheduler × DSCP, a heatmap cell per scheduler × class.
    let charts = bauxite_sim::series::chart_data(&result);
    assert_eq!(charts.control_delay.len(), 12);
    assert_eq!(charts.heatmap_loss.len(), 6 * 5);
    assert_eq!(charts.control_loss[0].value, control(Scheduler::Fifo, false).figure("loss_pct"));
    assert!(charts.load_delay.is_empty());
}

#[test]
fn follower_sweep_fifo_loss_rises_and_fair_queueing_stays_flat() {
    let result = study(vec![Family::Followers], ScenarioConfig::default());
    let at = |s, dscp, n| {
        result
            .rows(Family::Followers, OrchestratorLane::Control)
            .find(|r| r.scheduler == s && r.dscp == dscp && r.followers == n)
            .expect("a row per follower count")
    };
    let fifo: Vec<f64> = [4, 8, 16].iter().map(|&n| fig(at(Scheduler::Fifo, false, n), "loss_pct")).collect();
    assert!(fifo[0] < fifo[1] && fifo[1] < fifo[2], "FIFO control loss over 4, 8, 16 followers: {fifo:?}");
    for s in [Scheduler::FqCodel, Scheduler::FqPie] {
        for n in [4, 8, 16] {
            assert_eq!(fig(at(s, false, n), "loss_pct"), 0.0, "{s} at {n} followers");
            assert!(fig(at(s, false, n), "delay_ms") < 10.0, "{s} at {n} followers");
        }
    }
    for n in [4, 8, 16] {
        assert_eq!(fig(at(Scheduler::Prio, true, n), "loss_pct"), 0.0, "PRIO+DSCP at {n} followers");
    }
    let lines = bauxite_sim::series::chart_data(&result).followers_loss;
    assert_eq!(lines.len(), 12);
    assert_eq!(lines[0].points.iter().map(|p| p.0).collect::<Vec<_>>(), vec![4.0, 8.0, 16.0]);
}

#[test]
fn load_sweep_fifo_degrades_past_the_bottleneck_and_fair_queueing_stays_flat() {
    let result = study(vec![Family::Load], ScenarioConfig { duration_s: 6.0, ..ScenarioConfig::default() });
    let at = |s, bg: f64| {
        result
            .rows(Family::Load, OrchestratorLane::Control)
            .find(|r| r.scheduler == s && !r.dscp && r.bg_mbps == bg)
            .expect("a row per load")
    };
    assert_eq!(fig(at(Scheduler::Fifo, 8.0), "loss_pct"), 0.0);
    let fifo: Vec<f64> = [10.0, 12.0, 14.0].iter().map(|&bg| fig(at(Scheduler::Fifo, bg), "loss_pct")).collect();
    assert!(fifo[0] > 0.0 && fifo[0] < fifo[1] && fifo[1] < fifo[2], "FIFO control loss over load: {fifo:?}");
    for bg in [8.0, 10.0, 12.0, 14.0, 16.0] {
        assert_eq!(fig(at(Scheduler::FqCodel, bg), "loss_pct"), 0.0);
        assert!(fig(at(Scheduler::FqCodel, bg), "delay_ms") < 10.0);
    }
}

/// The baseline class table, byte for byte. A change in the simulator or a queue
/// discipline that moves any figure shows up here; if it is intended, regenerate
/// with `BAUXITE_UPDATE_SNAPSHOTS=1 cargo test -p bauxite-sim --test seed_baseline`
/// and review the diff.
#[test]
fn baseline_class_table_snapshot() {
    let result = study(vec![Family::Compare], ScenarioConfig::default());
    common::assert_class_snapshot("compare", &classes_csv(&result));
}

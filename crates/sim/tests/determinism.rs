//! Same inputs and seed → byte-identical outputs, whatever the thread count.

use bauxite_sim::output::{classes_csv, flows_csv, summary_md};
use bauxite_sim::study::{Family, StudyConfig, run_study};
use bauxite_sim::{ScenarioConfig, Scheduler, StudyResult};

fn run(base: ScenarioConfig, families: Vec<Family>, seeds: u32, jobs: usize) -> StudyResult {
    let config = StudyConfig { families, base, seeds, jobs, ..StudyConfig::default() };
    run_study(&config, &|_| {}).expect("runs")
}

fn files(r: &StudyResult) -> (String, String, String) {
    (flows_csv(r), classes_csv(r), summary_md(r))
}

fn short(scheduler: Scheduler, jitter_ms: f64, seed: u64) -> ScenarioConfig {
    ScenarioConfig { scheduler, duration_s: 4.0, start_jitter_ms: jitter_ms, seed, ..ScenarioConfig::default() }
}

#[test]
fn same_inputs_give_identical_bytes() {
    // FQ-PIE draws random drops and PIE draws from its seed: the most to go wrong.
    for scheduler in [Scheduler::FqPie, Scheduler::Pie, Scheduler::FqCodel, Scheduler::Fifo] {
        let a = files(&run(short(scheduler, 50.0, 7), vec![Family::Run], 1, 1));
        let b = files(&run(short(scheduler, 50.0, 7), vec![Family::Run], 1, 1));
        assert!(a == b, "{scheduler}: outputs differ between identical runs");
    }
}

#[test]
fn thread_count_does_not_change_outputs() {
    let base = ScenarioConfig { duration_s: 3.0, start_jitter_ms: 100.0, ..ScenarioConfig::default() };
    let one = run(base.clone(), vec![Family::Compare], 2, 1);
    let two = run(base, vec![Family::Compare], 2, 2);
    assert!(files(&one) == files(&two), "outputs differ between 1 and 2 threads");
}

#[test]
fn a_different_seed_changes_results_when_starts_are_jittered() {
    let a = files(&run(short(Scheduler::Fifo, 50.0, 1), vec![Family::Run], 1, 1));
    let b = files(&run(short(Scheduler::Fifo, 50.0, 2), vec![Family::Run], 1, 1));
    assert!(a.0 != b.0 && a.1 != b.1, "seeds 1 and 2 gave the same flows");
}

#[test]
fn without_jitter_the_seed_does_not_move_a_deterministic_discipline() {
    // FIFO has no randomness of its own, and nothing else draws from the seed when
    // every application starts together.
    let a = run(short(Scheduler::Fifo, 0.0, 1), vec![Family::Run], 1, 1);
    let b = run(short(Scheduler::Fifo, 0.0, 99), vec![Family::Run], 1, 1);
    assert_eq!(classes_csv(&a), classes_csv(&b));
    assert_eq!(a.classes, b.classes);
}

#[test]
fn several_seeds_give_confidence_columns_after_the_leading_ones() {
    let base = ScenarioConfig { duration_s: 3.0, start_jitter_ms: 100.0, ..ScenarioConfig::default() };
    let config = StudyConfig {
        families: vec![Family::Compare],
        schedulers: vec![Scheduler::Fifo],
        seeds: 3,
        base,
        ..StudyConfig::default()
    };
    let result = run_study(&config, &|_| {}).unwrap();
    assert_eq!(result.runs.len(), 6);
    let csv = classes_csv(&result);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(&header[..15], &bauxite_sim::output::CLASS_COLUMNS);
    assert_eq!(
        &header[15..],
        &[
            "loss_pct_ci95",
            "delay_ms_ci95",
            "jitter_ms_ci95",
            "throughput_mbps_ci95",
            "jain_throughput_ci95",
            "jain_inverse_delay_ci95",
            "queue_packets",
            "seeds",
            "follower_access_mbps",
            "bg_burst_ms",
            "deadline_miss_pct",
            "deadline_miss_pct_ci95",
            "tcp_flows",
            "tcp_throughput_mbps",
            "tcp_throughput_mbps_ci95",
            "link"
        ]
    );
    // FIFO's control loss depends on the start phases: the three seeds differ.
    let control = result.classes.iter().find(|r| r.class == bauxite_core::OrchestratorLane::Control).unwrap();
    assert!(control.figure("loss_pct").ci95.unwrap() > 0.0);
    assert_eq!(control.seeds, 3);
}

//! Bad parameters are refused before anything runs, with the flag named.

use bauxite_sim::output::check_out_dir;
use bauxite_sim::study::{Family, StudyConfig};
use bauxite_sim::{ScenarioConfig, Scheduler, SimError};

fn error_of(config: ScenarioConfig) -> String {
    config.validate().expect_err("invalid").to_string()
}

#[test]
fn each_bad_parameter_names_its_flag() {
    let d = ScenarioConfig::default;
    let cases: Vec<(ScenarioConfig, &str)> = vec![
        (ScenarioConfig { bottleneck_mbps: 0.0, ..d() }, "--bottleneck-mbps"),
        (ScenarioConfig { access_mbps: -1.0, ..d() }, "--access-mbps"),
        (ScenarioConfig { bottleneck_mbps: f64::NAN, ..d() }, "--bottleneck-mbps"),
        (ScenarioConfig { bg_mbps: 0.0, ..d() }, "--bg-mbps"),
        (ScenarioConfig { duration_s: -5.0, ..d() }, "--duration"),
        (ScenarioConfig { duration_s: 0.0, ..d() }, "--duration"),
        (ScenarioConfig { duration_s: 0.5, ..d() }, "--duration"),
        (ScenarioConfig { followers: 0, ..d() }, "--followers"),
        (ScenarioConfig { queue_packets: 0, ..d() }, "--queue"),
        (ScenarioConfig { device_queue_packets: 0, ..d() }, "--device-queue"),
        (ScenarioConfig { bottleneck_delay_ms: -1.0, ..d() }, "--bottleneck-delay-ms"),
        (ScenarioConfig { start_jitter_ms: -1.0, ..d() }, "--start-jitter-ms"),
        (ScenarioConfig { bg_payload_bytes: 0, ..d() }, "--bg-payload"),
        // Values that used to hang or corrupt a run: a background interval that
        // rounds to 0 ps, a delay that saturates the clock, counts that exhaust
        // memory or wrap the source ports.
        (ScenarioConfig { bg_mbps: 1e11, ..d() }, "--bg-mbps"),
        (ScenarioConfig { bg_mbps: 1e300, ..d() }, "--bg-mbps"),
        (ScenarioConfig { bottleneck_delay_ms: 1e300, ..d() }, "--bottleneck-delay-ms"),
        (ScenarioConfig { access_delay_ms: 86_400_001.0, ..d() }, "--access-delay-ms"),
        (ScenarioConfig { followers: 16_001, ..d() }, "--followers"),
        (ScenarioConfig { followers: u32::MAX, ..d() }, "--followers"),
        (ScenarioConfig { bg_flows: 8_001, ..d() }, "--bg-flows"),
        // The seed's future work: access links, bursts, TCP, deadlines.
        (ScenarioConfig { follower_access_mbps: Some(0.0), ..d() }, "--follower-access-mbps"),
        (ScenarioConfig { bg_burst_ms: -1.0, ..d() }, "--bg-burst"),
        (ScenarioConfig { bg_burst_ms: 30_000.0, ..d() }, "--bg-burst"),
        (ScenarioConfig { bg_burst_ms: 10.0, bg_burst_pareto: Some(1.0), ..d() }, "--bg-burst-pareto"),
        (ScenarioConfig { bg_burst_ms: 10.0, bg_burst_pareto: Some(f64::NAN), ..d() }, "--bg-burst-pareto"),
        (ScenarioConfig { tcp_flows: 8_000, ..d() }, "--tcp-flows"),
    ];
    for (config, flag) in cases {
        let message = error_of(config);
        assert!(message.starts_with(flag), "{message:?} should name {flag}");
    }
    // The limits themselves are fine.
    let most = ScenarioConfig { followers: 16_000, bg_flows: 8_000, bottleneck_delay_ms: 86_400_000.0, ..d() };
    assert!(most.validate().is_ok());
    let mut c = d();
    c.deadlines.set("control=-3").expect("a class and a number");
    assert!(error_of(c).starts_with("--deadline"));
    let mut c = d();
    assert!(c.deadlines.set("background=10").unwrap_err().to_string().contains("background has no deadline"));
    assert!(c.deadlines.set("control=soon").unwrap_err().to_string().contains("`soon` is not a number"));
    let mut c = d();
    c.control.pps = 0.0;
    assert!(error_of(c).starts_with("--control-pps"));
    let mut c = d();
    c.telemetry.dscp = 64;
    assert!(error_of(c).starts_with("--telemetry-dscp"));
    let mut c = d();
    c.bulk.payload_bytes = 70_000;
    assert!(error_of(c).starts_with("--bulk-bytes"));
}

#[test]
fn unknown_scheduler_lists_the_known_ones() {
    let e = "wfq".parse::<Scheduler>().unwrap_err().to_string();
    assert!(e.starts_with("--scheduler") && e.contains("fq-codel"), "{e}");
    assert_eq!("FQ_CODEL".parse::<Scheduler>().unwrap(), Scheduler::FqCodel);
    assert!("nope".parse::<Family>().unwrap_err().to_string().starts_with("--family"));
}

#[test]
fn a_study_checks_every_run_before_starting() {
    let zero_seeds = StudyConfig { seeds: 0, ..StudyConfig::default() };
    assert!(zero_seeds.plan().unwrap_err().to_string().starts_with("--seeds"));
    let bad_sweep = StudyConfig { load_bg_mbps: vec![8.0, -2.0], ..StudyConfig::default() };
    assert!(bad_sweep.plan().unwrap_err().to_string().starts_with("--bg-mbps"));
    let too_many = StudyConfig { follower_counts: vec![4, 20_000], ..StudyConfig::default() };
    assert!(too_many.plan().unwrap_err().to_string().starts_with("--followers"));
    let no_followers = StudyConfig { follower_counts: vec![0], ..StudyConfig::default() };
    assert!(matches!(no_followers.plan(), Err(SimError::InvalidParameter { flag: "followers", .. })));
}

#[test]
fn several_seeds_need_start_jitter() {
    let base = ScenarioConfig { start_jitter_ms: 0.0, ..ScenarioConfig::default() };
    let identical = StudyConfig { seeds: 3, base: base.clone(), ..StudyConfig::default() };
    let e = identical.plan().unwrap_err().to_string();
    assert!(e.starts_with("--start-jitter-ms") && e.contains("--seeds 3"), "{e}");
    assert!(StudyConfig { seeds: 1, base, ..StudyConfig::default() }.plan().is_ok());
    let jittered = ScenarioConfig { start_jitter_ms: 100.0, ..ScenarioConfig::default() };
    assert!(StudyConfig { seeds: 3, base: jittered, ..StudyConfig::default() }.plan().is_ok());
}

#[test]
fn out_must_be_a_directory() {
    let file = std::env::temp_dir().join(format!("bauxite-sim-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, "x").unwrap();
    let e = check_out_dir(&file).unwrap_err().to_string();
    std::fs::remove_file(&file).unwrap();
    assert!(e.starts_with("--out"), "{e}");
}

/// Issue 10 #9: `--seeds 1000000` and `--jobs 100000` were accepted; the first grew
/// to 2.1 GB while planning, the second started thousands of threads.
#[test]
fn seeds_jobs_and_the_flows_held_are_bounded() {
    use bauxite_sim::study::{MAX_FLOW_RECORDS, MAX_SEEDS, max_jobs};
    let jittered = ScenarioConfig { start_jitter_ms: 100.0, ..ScenarioConfig::default() };
    let compare = StudyConfig { families: vec![Family::Compare], base: jittered, ..StudyConfig::default() };
    let e = StudyConfig { seeds: 1_000_000, ..compare.clone() }.plan().unwrap_err().to_string();
    assert!(e.starts_with("--seeds: 1000000 is more than 1000"), "{e}");
    assert_eq!(StudyConfig { seeds: MAX_SEEDS, ..compare.clone() }.plan().unwrap().len(), 12_000);

    let e = StudyConfig { jobs: 100_000, ..compare.clone() }.plan().unwrap_err().to_string();
    assert!(e.starts_with("--jobs: 100000 is more than"), "{e}");
    assert!(StudyConfig { jobs: max_jobs(), ..compare.clone() }.plan().is_ok());

    // 16 000 followers are 64 000 flows a run: 12 runs fit, 12 × 2 seeds do not.
    let mut crowded = compare;
    crowded.base.followers = 16_000;
    crowded.base.control.pps = 1.0;
    crowded.base.status.pps = 1.0;
    crowded.base.telemetry.pps = 1.0;
    crowded.base.bulk.pps = 1.0;
    assert!(crowded.plan().is_ok(), "{:?}", crowded.plan().err());
    let e = StudyConfig { seeds: 2, ..crowded }.plan().unwrap_err().to_string();
    assert!(e.contains("flow records") && e.contains(&MAX_FLOW_RECORDS.to_string()), "{e}");
}

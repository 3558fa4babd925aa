//! `--shard K/N` and `merge`: the shards of a study merge into exactly the files
//! an unsharded run writes, and nothing but the N shards of one study merges.

use std::path::{Path, PathBuf};

use bauxite_sim::output::write_outputs;
use bauxite_sim::shard::{merge, write_shard};
use bauxite_sim::study::{Family, MAX_FLOW_RECORDS, Shard, StudyConfig, run_shard, run_study};
use bauxite_sim::{ScenarioConfig, Scheduler, StudyResult, charts, series};
use bauxite_telemetry::chart::Formats;

/// A directory under the system's temporary one, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("bauxite-sim-shard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two families, two schedulers, two seeds: 16 short runs whose points have
/// different costs, so three shards split points (and their seeds) between them.
fn small_study() -> StudyConfig {
    StudyConfig {
        families: vec![Family::Compare, Family::Followers],
        schedulers: vec![Scheduler::FqPie, Scheduler::Fifo],
        follower_counts: vec![2],
        seeds: 2,
        jobs: 2,
        base: ScenarioConfig { duration_s: 2.0, start_jitter_ms: 100.0, seed: 5, ..ScenarioConfig::default() },
        ..StudyConfig::default()
    }
}

fn write_whole(dir: &Path, study: &StudyResult) {
    write_outputs(dir, study).expect("write");
    charts::write(dir, &series::chart_data(study), Formats::PngAndSvg).expect("charts");
}

fn run_shards(config: &StudyConfig, n: u32, root: &TempDir) -> Vec<PathBuf> {
    (0..n)
        .map(|k| {
            let dir = root.join(&format!("shard{k}"));
            let shard = run_shard(config, Shard { index: k, count: n }, &|_| {}).expect("shard runs");
            write_shard(&dir, &shard).expect("write shard");
            dir
        })
        .collect()
}

/// `summary.json` without what varies from run to run (wall-clock times, threads).
fn deterministic_summary(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for key in ["wall_s", "events_per_s", "run_wall_s_sum", "threads"] {
        v.as_object_mut().unwrap().remove(key).expect(key);
    }
    for run in v["run_details"].as_array_mut().unwrap() {
        run.as_object_mut().unwrap().remove("wall_s").expect("a run's wall_s");
    }
    v
}

#[test]
fn merged_shards_are_byte_identical_to_an_unsharded_study() {
    let root = TempDir::new("identical");
    let config = small_study();
    let whole_dir = root.join("whole");
    let whole = run_study(&config, &|_| {}).expect("runs");
    assert_eq!(whole.runs.len(), 16);
    write_whole(&whole_dir, &whole);
    let mut shards = run_shards(&config, 3, &root);
    shards.reverse(); // any order
    let merged_dir = root.join("merged");
    let (merged, _) = merge(&shards, &merged_dir).expect("merge");
    charts::write(&merged_dir, &series::chart_data(&merged), Formats::PngAndSvg).expect("charts");

    let mut names: Vec<String> = std::fs::read_dir(&whole_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "summary.json")
        .collect();
    names.sort();
    assert!(names.len() > 10, "tables and charts written: {names:?}");
    for name in &names {
        let (a, b) = (std::fs::read(whole_dir.join(name)).unwrap(), std::fs::read(merged_dir.join(name)));
        assert!(b.as_ref().is_ok_and(|b| *b == a), "{name} differs between the unsharded and the merged study");
    }
    assert_eq!(
        deterministic_summary(&whole_dir.join("summary.json")),
        deterministic_summary(&merged_dir.join("summary.json"))
    );
}

#[test]
fn only_every_shard_of_one_study_merges_and_a_refused_merge_writes_nothing() {
    let root = TempDir::new("refused");
    let config = StudyConfig { families: vec![Family::Compare], ..small_study() };
    let shards = run_shards(&config, 2, &root);
    let out = root.join("out");
    let error = |dirs: &[PathBuf]| merge(dirs, &out).expect_err("refused").to_string();

    let e = error(&shards[..1]);
    assert!(e.contains("2 shards") && e.contains("missing [1/2]"), "{e}");
    let e = error(&[shards[0].clone(), shards[0].clone(), shards[1].clone()]);
    assert!(e.contains("given twice [0/2]"), "{e}");
    let other = StudyConfig { seeds: 3, ..config.clone() };
    let other_dir = root.join("other");
    write_shard(&other_dir, &run_shard(&other, Shard { index: 1, count: 2 }, &|_| {}).unwrap()).unwrap();
    let e = error(&[shards[0].clone(), other_dir.clone()]);
    assert!(e.contains("other/summary.json") && e.contains("a different study"), "{e}");
    let e = merge(&shards, &shards[1]).expect_err("out is a shard").to_string();
    assert!(e.contains("one of the shards"), "{e}");
    std::fs::write(shards[1].join("flows.csv"), "not,a,header\n").unwrap();
    let e = error(&shards);
    assert!(e.contains("shard1/flows.csv") && e.contains("header"), "{e}");
    std::fs::write(shards[1].join("summary.json"), "{\"tool\": 1}").unwrap();
    let e = anyhow_chain(&merge(&shards, &out).expect_err("bad json"));
    assert!(e.contains("shard1/summary.json: not a shard's summary") && e.contains("line 1"), "{e}");
    assert!(!out.exists(), "a refused merge writes nothing");
}

/// The error and its sources, as the CLI prints them.
fn anyhow_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out += &format!(": {s}");
        source = s.source();
    }
    out
}

#[test]
fn shards_are_equal_contiguous_slices_and_bad_shards_are_refused() {
    let total = 1200;
    let ranges: Vec<_> = (0..7).map(|k| Shard { index: k, count: 7 }.range(total).unwrap()).collect();
    assert_eq!(ranges[0].start, 0);
    assert_eq!(ranges[6].end, total);
    for pair in ranges.windows(2) {
        assert_eq!(pair[0].end, pair[1].start, "contiguous, no gap or overlap");
    }
    assert!(ranges.iter().all(|r| r.len() == 171 || r.len() == 172), "{ranges:?}");
    for (text, why) in
        [("3", "K/N"), ("2/2", "below N"), ("0/0", "at least 1"), ("a/3", "K is not"), ("-1/3", "K is not")]
    {
        let e = text.parse::<Shard>().expect_err(text).to_string();
        assert!(e.starts_with("--shard: ") && e.contains(why), "{text}: {e}");
    }
    let e = Shard { index: 0, count: 20 }.range(16).expect_err("too many shards").to_string();
    assert!(e.contains("16 runs, fewer than its 20 shards"), "{e}");
}

#[test]
fn the_flow_record_bound_applies_to_each_shard() {
    // 100 seeds × 12 points × 4002 flows: 4.8 million records, over the bound for
    // one process; a tenth of it is under.
    let config = StudyConfig {
        families: vec![Family::Compare],
        seeds: 100,
        base: ScenarioConfig { followers: 1000, start_jitter_ms: 100.0, ..ScenarioConfig::default() },
        ..StudyConfig::default()
    };
    let e = config.plan().expect_err("too many records").to_string();
    assert!(e.contains(&MAX_FLOW_RECORDS.to_string()) && e.contains("--shard"), "{e}");
    let shard = config.plan_shard(Shard { index: 9, count: 10 }).expect("a tenth fits");
    assert_eq!(shard.len(), 120);
    assert_eq!(shard[0].config.seed, config.base.seed + 80, "the last tenth of the plan");
    let e = config.plan_shard(Shard { index: 0, count: 2 }).expect_err("a half is too much").to_string();
    assert!(e.contains("shard 0/2 would hold"), "{e}");
}

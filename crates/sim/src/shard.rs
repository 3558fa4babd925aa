//! Studies bigger than one machine: a shard's files (`bauxite sim study --shard
//! K/N`) and their merge (`bauxite sim merge`) into exactly the files an
//! unsharded study writes.
//!
//! A shard writes its runs' lines of `flows.csv` (formatted by the writer an
//! unsharded study uses) and a `summary.json` holding the study's configuration
//! and, per run, everything but its flows: class rows, counters, bottleneck
//! counters. The merge checks that the shards are the N distinct slices of one
//! study, aggregates the class rows over seeds as [`crate::run_study`] does, and
//! concatenates the shards' `flows.csv` in shard order (shards are contiguous
//! ranges of the plan), streaming it: a merged study never holds its flows, so it
//! is not bound by [`crate::study::MAX_FLOW_RECORDS`].

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::RunCounters;
use crate::error::SimError;
use crate::link::ChannelStats;
use crate::metrics::ClassRow;
use crate::output::{FLOWS_HEADER, check_out_dir, flow_lines, write_files};
use crate::scenario::ScenarioResult;
use crate::study::{Shard, ShardResult, StudyConfig, StudyResult};

/// What a shard's `summary.json` says as its `tool`; the merge refuses anything else.
const SHARD_TOOL: &str = "bauxite sim study --shard";

/// A shard's `summary.json`.
#[derive(Debug, Serialize, Deserialize)]
struct ShardFile {
    tool: String,
    /// `K/N`.
    shard: String,
    /// Runs in the whole study, and the plan index of this shard's first.
    total_runs: usize,
    first_run: usize,
    /// Wall-clock seconds and worker threads of this shard (not deterministic).
    wall_s: f64,
    threads: usize,
    study: StudyConfig,
    runs: Vec<ShardRun>,
}

/// One run of a shard: its result without the flows (those are in `flows.csv`).
#[derive(Debug, Serialize, Deserialize)]
struct ShardRun {
    /// Its index in the study's plan.
    index: usize,
    /// Its seed, checked against the plan on merge.
    seed: u64,
    classes: Vec<ClassRow>,
    counters: RunCounters,
    bottleneck: [ChannelStats; 2],
    wall_s: f64,
}

/// Writes a shard's `flows.csv`, `summary.json` and `summary.md` into `dir`;
/// returns their paths.
pub fn write_shard(dir: &Path, shard: &ShardResult) -> Result<Vec<PathBuf>, SimError> {
    let mut flows = String::from(FLOWS_HEADER);
    for (spec, result) in &shard.ran.runs {
        flow_lines(&mut flows, spec, result);
    }
    let runs = shard
        .ran
        .runs
        .iter()
        .enumerate()
        .map(|(i, (spec, r))| ShardRun {
            index: shard.first_run + i,
            seed: spec.config.seed,
            classes: r.classes.clone(),
            counters: r.counters,
            bottleneck: r.bottleneck,
            wall_s: r.wall_s,
        })
        .collect();
    let file = ShardFile {
        tool: SHARD_TOOL.into(),
        shard: shard.shard.to_string(),
        total_runs: shard.total_runs,
        first_run: shard.first_run,
        wall_s: shard.ran.wall_s,
        threads: shard.ran.threads,
        study: shard.config.clone(),
        runs,
    };
    let md = format!(
        "# bauxite sim: shard {}\n\nRuns {} to {} of a study of {}. Merge the shards with \
         `bauxite sim merge DIR... --out DIR`.\n",
        shard.shard,
        shard.first_run,
        shard.first_run + shard.ran.runs.len().saturating_sub(1),
        shard.total_runs
    );
    write_files(
        dir,
        vec![("flows.csv", flows), ("summary.json", serde_json::to_string_pretty(&file)? + "\n"), ("summary.md", md)],
    )
}

/// Merges the shard directories `dirs` (in any order) into `out`: the files an
/// unsharded study writes (`flows.csv`, `classes.csv`, `summary.json`,
/// `summary.md`; the caller draws the charts from the returned study).
/// `summary.json`'s `wall_s` is the shards' wall-clock time added, `threads` the
/// most any shard used. Fails, writing nothing, unless the directories hold each
/// shard of one study exactly once; `out` must not be one of them.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(StudyResult, Vec<PathBuf>), SimError> {
    let mut shards =
        dirs.iter().map(|d| read_shard(d).map(|(s, f)| (d.clone(), s, f))).collect::<Result<Vec<_>, _>>()?;
    shards.sort_by_key(|(_, shard, _)| shard.index);
    let config = check_one_study(&shards)?;
    let plan = config.plan_all()?;
    let mut runs = Vec::with_capacity(plan.len());
    for (dir, shard, file) in &shards {
        let range = shard.range(plan.len())?;
        let bad = |message: String| SimError::Merge { path: dir.join("summary.json"), message };
        if file.total_runs != plan.len() || file.first_run != range.start || file.runs.len() != range.len() {
            return Err(bad(format!(
                "shard {shard} should hold runs {} to {} of {}, but holds {} runs from {} of {}",
                range.start,
                range.end.saturating_sub(1),
                plan.len(),
                file.runs.len(),
                file.first_run,
                file.total_runs
            )));
        }
        for (run, index) in file.runs.iter().zip(range) {
            let spec = &plan[index];
            if run.index != index || run.seed != spec.config.seed {
                return Err(bad(format!(
                    "run {} (seed {}) is not the plan's run {index} (seed {})",
                    run.index, run.seed, spec.config.seed
                )));
            }
            let result = ScenarioResult {
                config: spec.config.clone(),
                flows: Vec::new(),
                classes: run.classes.clone(),
                counters: run.counters,
                bottleneck: run.bottleneck,
                wall_s: run.wall_s,
            };
            runs.push((spec.clone(), result));
        }
    }
    let flow_files: Vec<PathBuf> = shards.iter().map(|(d, _, _)| d.join("flows.csv")).collect();
    for input in &flow_files {
        check_flows_header(input)?;
    }
    check_not_an_input(out, dirs)?;
    check_out_dir(out)?;
    let wall_s = shards.iter().map(|(_, _, f)| f.wall_s).sum();
    let threads = shards.iter().map(|(_, _, f)| f.threads).max().unwrap_or(1);
    let study = StudyResult::from_runs(config, runs, wall_s, threads);
    let flows = out.join("flows.csv");
    concat_flows(&flow_files, &flows)?;
    let mut paths = vec![flows];
    paths.extend(crate::output::write_study_tables(out, &study)?);
    Ok((study, paths))
}

/// Reads `dir/summary.json` as a shard's.
fn read_shard(dir: &Path) -> Result<(Shard, ShardFile), SimError> {
    let path = dir.join("summary.json");
    let text = std::fs::read(&path).map_err(|source| SimError::Read { path: path.clone(), source })?;
    let file: ShardFile =
        serde_json::from_slice(&text).map_err(|source| SimError::ShardJson { path: path.clone(), source })?;
    if file.tool != SHARD_TOOL {
        return Err(SimError::Merge {
            path,
            message: format!("`tool` is `{}`, not `{SHARD_TOOL}`: not a shard's summary", file.tool),
        });
    }
    let shard = file.shard.parse::<Shard>().map_err(|e| SimError::Merge { path, message: e.to_string() })?;
    Ok((shard, file))
}

/// The study the shards (sorted by index) belong to, if they are each of its N
/// shards exactly once.
fn check_one_study(shards: &[(PathBuf, Shard, ShardFile)]) -> Result<StudyConfig, SimError> {
    let Some((first_dir, first, first_file)) = shards.first() else {
        return Err(SimError::invalid("merge", "no shard directory given"));
    };
    for (dir, shard, file) in shards {
        let bad = |message: String| SimError::Merge { path: dir.join("summary.json"), message };
        if file.study != first_file.study {
            return Err(bad(format!("a different study from {}'s", first_dir.display())));
        }
        if shard.count != first.count {
            return Err(bad(format!(
                "shard {shard} is one of {}, {} is one of {}",
                shard.count,
                first_dir.display(),
                first.count
            )));
        }
    }
    let given: Vec<u32> = shards.iter().map(|(_, s, _)| s.index).collect();
    let expected: Vec<u32> = (0..first.count).collect();
    if given != expected {
        let missing: Vec<String> =
            expected.iter().filter(|k| !given.contains(k)).map(|k| format!("{k}/{}", first.count)).collect();
        let mut twice: Vec<String> =
            given.windows(2).filter(|w| w[0] == w[1]).map(|w| format!("{}/{}", w[0], first.count)).collect();
        twice.dedup();
        return Err(SimError::invalid(
            "merge",
            format!(
                "the study has {} shards: missing [{}], given twice [{}]",
                first.count,
                missing.join(", "),
                twice.join(", ")
            ),
        ));
    }
    Ok(first_file.study.clone())
}

/// Refuses an `out` that is one of the shard directories (writing there would
/// overwrite the shard being read).
fn check_not_an_input(out: &Path, dirs: &[PathBuf]) -> Result<(), SimError> {
    let Ok(out) = out.canonicalize() else { return Ok(()) };
    if dirs.iter().any(|d| d.canonicalize().is_ok_and(|d| d == out)) {
        return Err(SimError::invalid("out", format!("{} is one of the shards being merged", out.display())));
    }
    Ok(())
}

/// Fails unless `input` starts with the `flows.csv` header this version writes.
fn check_flows_header(input: &Path) -> Result<(), SimError> {
    let read_err = |source| SimError::Read { path: input.to_path_buf(), source };
    let mut header = String::new();
    BufReader::new(File::open(input).map_err(read_err)?).read_line(&mut header).map_err(read_err)?;
    if header != FLOWS_HEADER {
        return Err(SimError::Merge {
            path: input.to_path_buf(),
            message: "the first line is not the flows.csv header this version writes".into(),
        });
    }
    Ok(())
}

/// Writes `out` as the shards' `flows.csv` files (headers checked) one after the
/// other, the header once, streaming.
fn concat_flows(inputs: &[PathBuf], out: &Path) -> Result<(), SimError> {
    let write_err = |source| SimError::Io { path: out.to_path_buf(), source };
    let mut writer = BufWriter::new(File::create(out).map_err(write_err)?);
    writer.write_all(FLOWS_HEADER.as_bytes()).map_err(write_err)?;
    for input in inputs {
        let read_err = |source| SimError::Read { path: input.clone(), source };
        let mut reader = BufReader::new(File::open(input).map_err(read_err)?);
        reader.read_line(&mut String::new()).map_err(read_err)?;
        std::io::copy(&mut reader, &mut writer).map_err(read_err)?;
    }
    writer.flush().map_err(write_err)
}

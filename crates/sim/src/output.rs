//! The result files: `flows.csv`, `classes.csv`, `summary.json`, `summary.md`.
//!
//! Every number is formatted with a fixed number of decimals from values that
//! are computed in a fixed order, so the CSV files and `summary.md` are
//! byte-identical for the same inputs and seed. Only `summary.json` records wall
//! time and events per second, which vary from run to run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::SimError;
use crate::metrics::FIGURES;
use crate::monitor::TCP;
use crate::reference::{is_seed_baseline, seed_baseline};
use crate::scenario::ScenarioResult;
use crate::scheduler::Scheduler;
use crate::study::{ClassSummary, Family, Figure, RunSpec, StudyResult};
use crate::util::{first_seen, on_off};
use bauxite_core::OrchestratorLane;

/// The leading columns of `classes.csv`, exactly as the issue specifies them.
pub const CLASS_COLUMNS: [&str; 15] = [
    "family",
    "scheduler",
    "dscp",
    "followers",
    "bg_mbps",
    "class",
    "flows",
    "tx_packets",
    "rx_packets",
    "loss_pct",
    "delay_ms",
    "jitter_ms",
    "throughput_mbps",
    "jain_throughput",
    "jain_inverse_delay",
];

/// Decimals written for each figure of [`FIGURES`].
const DECIMALS: [usize; 6] = [4, 4, 4, 6, 6, 6];

fn num(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    // "-0.0000" and "0.0000" are the same figure; write one of them.
    if s.starts_with('-') && s[1..].bytes().all(|b| b == b'0' || b == b'.') { s[1..].to_string() } else { s }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| num(v, decimals)).unwrap_or_default()
}

/// The header line of `flows.csv`.
pub const FLOWS_HEADER: &str = "family,scheduler,dscp,followers,bg_mbps,queue_packets,seed,class,src,dst,src_port,dst_port,dscp_mark,\
     tx_packets,rx_packets,lost_packets,dropped_packets,loss_pct,delay_ms,jitter_ms,max_delay_ms,throughput_mbps,\
     tx_bytes,rx_bytes,active_s,late_packets,protocol\n";

/// `flows.csv`: one line per flow per run.
pub fn flows_csv(study: &StudyResult) -> String {
    let mut out = String::from(FLOWS_HEADER);
    for (spec, result) in &study.runs {
        flow_lines(&mut out, spec, result);
    }
    out
}

/// Appends one run's lines of `flows.csv` to `out` (the one formatter of those
/// lines, for a study and for a shard alike).
pub fn flow_lines(out: &mut String, spec: &RunSpec, result: &ScenarioResult) {
    let c = &spec.config;
    for f in &result.flows {
        let s = &f.stats;
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            spec.family,
            c.scheduler,
            on_off(c.dscp),
            c.followers,
            c.bg_mbps,
            c.queue_packets,
            c.seed,
            f.class.name(),
            f.src,
            f.dst,
            f.src_port,
            f.dst_port,
            f.dscp,
            s.tx_packets,
            s.rx_packets,
            s.lost_packets(),
            s.dropped_packets,
            num(s.loss_pct(), 4),
            opt(f.delay_ms(), 4),
            opt(f.jitter_ms(), 4),
            num(s.max_delay as f64 / 1e6, 4),
            num(f.throughput_mbps(), 6),
            s.tx_bytes,
            s.rx_bytes,
            num(f.active_ns as f64 / 1e9, 6),
            s.late_packets,
            if f.protocol == TCP { "tcp" } else { "udp" },
        );
    }
}

fn count(v: f64, seeds: u32) -> String {
    if seeds <= 1 { format!("{v:.0}") } else { num(v, 1) }
}

/// `classes.csv`: one line per class per point. The leading columns are
/// [`CLASS_COLUMNS`]; with several seeds the figures are means and a `_ci95`
/// half-width column per figure follows them; `queue_packets`, `seeds`,
/// `follower_access_mbps`, `bg_burst_ms`, `deadline_miss_pct` (empty without a deadline),
/// `tcp_flows`, `tcp_throughput_mbps` (empty without TCP; both figures with their
/// `_ci95` for several seeds) and `link` (the bottleneck's SPEC, quoted; empty for the
/// wire) close the line.
pub fn classes_csv(study: &StudyResult) -> String {
    let with_ci = study.config.seeds > 1;
    let mut header: Vec<String> = CLASS_COLUMNS.iter().map(|s| s.to_string()).collect();
    if with_ci {
        header.extend(FIGURES.iter().map(|f| format!("{f}_ci95")));
    }
    header.extend(
        ["queue_packets", "seeds", "follower_access_mbps", "bg_burst_ms", "deadline_miss_pct"].map(String::from),
    );
    if with_ci {
        header.push("deadline_miss_pct_ci95".to_string());
    }
    header.extend(["tcp_flows", "tcp_throughput_mbps"].map(String::from));
    if with_ci {
        header.push("tcp_throughput_mbps_ci95".to_string());
    }
    header.push("link".to_string());
    let mut out = header.join(",");
    out.push('\n');
    for r in &study.classes {
        let mut cells = vec![
            r.family.to_string(),
            r.scheduler.to_string(),
            on_off(r.dscp).to_string(),
            r.followers.to_string(),
            r.bg_mbps.to_string(),
            r.class.name().to_string(),
            r.flows.to_string(),
            count(r.tx_packets, r.seeds),
            count(r.rx_packets, r.seeds),
        ];
        cells.extend(r.figures.iter().zip(DECIMALS).map(|(f, d)| opt(f.mean, d)));
        if with_ci {
            cells.extend(r.figures.iter().zip(DECIMALS).map(|(f, d)| opt(f.ci95, d)));
        }
        cells.push(r.queue_packets.to_string());
        cells.push(r.seeds.to_string());
        cells.push(r.follower_access_mbps.to_string());
        cells.push(r.bg_burst_ms.to_string());
        cells.push(opt(r.deadline_miss_pct.mean, 4));
        if with_ci {
            cells.push(opt(r.deadline_miss_pct.ci95, 4));
        }
        cells.push(r.tcp_flows.to_string());
        cells.push(opt(r.tcp_throughput_mbps.mean, 6));
        if with_ci {
            cells.push(opt(r.tcp_throughput_mbps.ci95, 6));
        }
        cells.push(csv_field(&r.link));
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field as RFC 4180 has it: quoted (inner quotes doubled) if it holds a
/// comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

fn figure_json(f: Figure) -> (Value, Value) {
    (json!(f.mean), json!(f.ci95))
}

fn class_json(r: &ClassSummary) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("family".into(), json!(r.family));
    m.insert("scheduler".into(), json!(r.scheduler));
    m.insert("dscp".into(), json!(on_off(r.dscp)));
    m.insert("followers".into(), json!(r.followers));
    m.insert("bg_mbps".into(), json!(r.bg_mbps));
    m.insert("queue_packets".into(), json!(r.queue_packets));
    m.insert("follower_access_mbps".into(), json!(r.follower_access_mbps));
    m.insert("bg_burst_ms".into(), json!(r.bg_burst_ms));
    m.insert("tcp_flows".into(), json!(r.tcp_flows));
    m.insert("link".into(), json!(r.link));
    m.insert("class".into(), json!(r.class));
    m.insert("seeds".into(), json!(r.seeds));
    m.insert("flows".into(), json!(r.flows));
    m.insert("tx_packets".into(), json!(r.tx_packets));
    m.insert("rx_packets".into(), json!(r.rx_packets));
    for (name, f) in FIGURES.iter().zip(r.figures) {
        let (mean, ci) = figure_json(f);
        m.insert((*name).into(), mean);
        m.insert(format!("{name}_ci95"), ci);
    }
    let (mean, ci) = figure_json(r.deadline_miss_pct);
    m.insert("deadline_miss_pct".into(), mean);
    m.insert("deadline_miss_pct_ci95".into(), ci);
    let (mean, ci) = figure_json(r.tcp_throughput_mbps);
    m.insert("tcp_throughput_mbps".into(), mean);
    m.insert("tcp_throughput_mbps_ci95".into(), ci);
    Value::Object(m)
}

/// The family whose control rows make the comparison table: `compare` if it ran,
/// otherwise `run` (a single scenario).
fn comparison_family(study: &StudyResult) -> Option<Family> {
    let families = study.families();
    [Family::Compare, Family::Run].into_iter().find(|f| families.contains(f))
}

/// Whether the comparison rows ran at the seed's baseline point, so that its
/// figures may stand beside them. Those rows are the base configuration with only
/// the scheduler and DSCP marking set (or the base alone, for `sim run`).
fn at_seed_point(study: &StudyResult) -> bool {
    is_seed_baseline(&study.config.base)
}

/// `summary.json`: counts, timing, the base configuration, the comparison table
/// (control class per scheduler × DSCP, with the seed's figures where it has them
/// and the base is the seed's scenario), every class row, and per run its events,
/// time and bottleneck counters. `run_wall_s_sum` adds the runs' wall-clock
/// times (more than `wall_s` when runs overlap on several threads).
pub fn summary_json(study: &StudyResult) -> Value {
    let seed_point = at_seed_point(study);
    let comparison: Vec<Value> = comparison_family(study)
        .map(|family| {
            study
                .rows(family, OrchestratorLane::Control)
                .map(|r| {
                    let mut v = class_json(r);
                    let seed = seed_baseline(r.scheduler, r.dscp).filter(|_| seed_point).map(|s| {
                        json!({"delay_ms": s.delay_ms, "loss_pct": s.loss_pct, "jitter_ms": s.jitter_ms,
                               "throughput_mbps": s.throughput_mbps})
                    });
                    v["seed"] = json!(seed);
                    v
                })
                .collect()
        })
        .unwrap_or_default();
    let run_wall_s_sum: f64 = study.runs.iter().map(|(_, r)| r.wall_s).sum();
    let runs: Vec<Value> = study
        .runs
        .iter()
        .map(|(spec, r)| {
            let c = &spec.config;
            let direction = |s: &crate::link::ChannelStats| {
                json!({"tx_packets": s.tx_packets, "qdisc_drops": s.qdisc_drops,
                       "max_qdisc_packets": s.max_qdisc_packets,
                       "utilisation": s.busy_ns as f64 / r.counters.end_time.max(1) as f64})
            };
            json!({
                "family": spec.family, "scheduler": c.scheduler, "dscp": on_off(c.dscp),
                "followers": c.followers, "bg_mbps": c.bg_mbps, "queue_packets": c.queue_packets,
                "seed": c.seed, "events": r.counters.events, "simulated_s": r.counters.end_time as f64 / 1e9,
                "peak_packets": r.counters.peak_packets, "wall_s": r.wall_s,
                "bottleneck": {"a_to_b": direction(&r.bottleneck[0]), "b_to_a": direction(&r.bottleneck[1])},
            })
        })
        .collect();
    json!({
        "tool": "bauxite sim",
        "families": study.families(),
        "schedulers": study.config.schedulers,
        "seeds": study.config.seeds,
        "runs": study.runs.len(),
        "events": study.events,
        "wall_s": study.wall_s,
        "events_per_s": study.events_per_s(),
        "run_wall_s_sum": run_wall_s_sum,
        "threads": study.threads,
        "base": study.config.base,
        "load_bg_mbps": study.config.load_bg_mbps,
        "follower_counts": study.config.follower_counts,
        "queue_limits": study.config.queue_limits,
        "follower_access_mbps": study.config.access_mbps,
        "burst_ms": study.config.burst_ms,
        "comparison": comparison,
        "classes": study.classes.iter().map(class_json).collect::<Vec<_>>(),
        "run_details": runs,
    })
}

fn cell(f: Figure, decimals: usize) -> String {
    match (f.mean, f.ci95) {
        (None, _) => "–".into(),
        (Some(m), None) => num(m, decimals),
        (Some(m), Some(h)) => format!("{} ± {}", num(m, decimals), num(h, decimals)),
    }
}

fn delay_loss(r: &ClassSummary) -> String {
    format!("{} / {}", cell(r.figure("delay_ms"), 1), cell(r.figure("loss_pct"), 1))
}

/// The (scheduler, DSCP) pairs of a family's rows, in plan order.
fn pairs<'a>(rows: impl Iterator<Item = &'a ClassSummary>) -> Vec<(Scheduler, bool)> {
    first_seen(rows.map(|r| (r.scheduler, r.dscp)))
}

/// A control delay / loss table of a sweep family: one line per scheduler × DSCP,
/// one column per swept value.
fn sweep_table(
    out: &mut String,
    study: &StudyResult,
    family: Family,
    title: &str,
    value: &dyn Fn(&ClassSummary) -> String,
) {
    let heading = format!("{title}: control delay (ms) / loss (%)");
    class_sweep_table(out, study, (family, OrchestratorLane::Control), &heading, value, &delay_loss);
}

/// One class's figure (`cell`) in a sweep family: one line per scheduler × DSCP, one
/// column per swept value (`value`).
fn class_sweep_table(
    out: &mut String,
    study: &StudyResult,
    (family, class): (Family, OrchestratorLane),
    heading: &str,
    value: &dyn Fn(&ClassSummary) -> String,
    cell: &dyn Fn(&ClassSummary) -> String,
) {
    let rows: Vec<&ClassSummary> = study.rows(family, class).collect();
    if rows.is_empty() {
        return;
    }
    let values = first_seen(rows.iter().map(|r| value(r)));
    let _ = writeln!(out, "\n## {heading}\n");
    let _ = writeln!(out, "| Scheduler | DSCP | {} |", values.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(values.len()));
    for (scheduler, dscp) in pairs(rows.iter().copied()) {
        let cells: Vec<String> = values
            .iter()
            .map(|v| {
                rows.iter()
                    .find(|r| r.scheduler == scheduler && r.dscp == dscp && &value(r) == v)
                    .map(|r| cell(r))
                    .unwrap_or_else(|| "–".into())
            })
            .collect();
        let _ = writeln!(out, "| {} | {} | {} |", scheduler.label(), on_off(dscp), cells.join(" | "));
    }
}

/// `summary.md`: the seed's tables, regenerated.
pub fn summary_md(study: &StudyResult) -> String {
    let mut out = String::from("# bauxite sim\n\n");
    // Counts only: wall time and events per second vary between runs and go to
    // summary.json and the terminal, so this file stays byte-identical.
    let _ = writeln!(
        out,
        "{} runs ({} seed{} per point), {} simulated events.",
        study.runs.len(),
        study.config.seeds,
        if study.config.seeds == 1 { "" } else { "s" },
        study.events,
    );
    if study.config.seeds > 1 {
        out.push_str("Figures are means over seeds ± the Student-t 95 % half-width.\n");
    }
    if let Some(family) = comparison_family(study) {
        let rows: Vec<&ClassSummary> = study.rows(family, OrchestratorLane::Control).collect();
        let b = &study.config.base;
        let _ = writeln!(
            out,
            "\n## Scheduler comparison: control class ({} followers, {} Mbit/s background per direction, queue {} packets)\n",
            b.followers, b.bg_mbps, b.queue_packets
        );
        let seed_point = at_seed_point(study);
        out.push_str("| Scheduler | DSCP | Delay (ms) | Loss (%) | Jitter (ms) | Throughput (Mbps) |");
        out.push_str(if seed_point { " Seed: delay / loss / jitter / throughput |\n" } else { "\n" });
        out.push_str("|---|---|---|---|---|---|");
        out.push_str(if seed_point { "---|\n" } else { "\n" });
        for r in &rows {
            let _ = write!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                r.scheduler.label(),
                on_off(r.dscp),
                cell(r.figure("delay_ms"), 1),
                cell(r.figure("loss_pct"), 1),
                cell(r.figure("jitter_ms"), 1),
                cell(r.figure("throughput_mbps"), 3),
            );
            if seed_point {
                match seed_baseline(r.scheduler, r.dscp) {
                    Some(s) => {
                        let _ = write!(
                            out,
                            " {:.1} / {:.1} / {:.1} / {:.3} |",
                            s.delay_ms, s.loss_pct, s.jitter_ms, s.throughput_mbps
                        );
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
        per_class_tables(&mut out, study, family);
    }
    sweep_table(&mut out, study, Family::Load, "Load sweep (background Mbit/s per direction)", &|r| {
        r.bg_mbps.to_string()
    });
    sweep_table(&mut out, study, Family::Followers, "Follower sweep (followers)", &|r| r.followers.to_string());
    sweep_table(&mut out, study, Family::Queue, "Queue-limit sweep (packets)", &|r| r.queue_packets.to_string());
    let access = |r: &ClassSummary| r.follower_access_mbps.to_string();
    sweep_table(&mut out, study, Family::Access, "Access-link sweep (followers' access Mbit/s)", &access);
    // Status leaves each follower through its own access link, behind its telemetry and bulk.
    let heading = "Access-link sweep (followers' access Mbit/s): status delay (ms) / loss (%)";
    class_sweep_table(&mut out, study, (Family::Access, OrchestratorLane::Status), heading, &access, &delay_loss);
    sweep_table(&mut out, study, Family::Burst, "Burstiness sweep (background burst ms, same mean rate)", &|r| {
        r.bg_burst_ms.to_string()
    });
    let tcp = |r: &ClassSummary| r.tcp_flows.to_string();
    sweep_table(&mut out, study, Family::TcpCross, "TCP cross-traffic sweep (CUBIC flows per direction)", &tcp);
    let heading = "TCP cross-traffic sweep (CUBIC flows per direction): TCP throughput (Mbit/s, both directions)";
    class_sweep_table(&mut out, study, (Family::TcpCross, OrchestratorLane::Background), heading, &tcp, &|r| {
        cell(r.tcp_throughput_mbps, 3)
    });
    sweep_table(&mut out, study, Family::Wireless, "Wireless sweep (the bottleneck's link)", &|r| {
        format!("`{}`", r.link)
    });
    deadline_tables(&mut out, study);
    out
}

/// The deadline family: per class with a deadline, the share of its packets lost or
/// late, per scheduler × DSCP and background rate.
fn deadline_tables(out: &mut String, study: &StudyResult) {
    let base = &study.config.base;
    for class in OrchestratorLane::ALL {
        let Some(row) = study.rows(Family::Deadline, class).next() else { continue };
        if row.deadline_miss_pct.mean.is_none() {
            continue;
        }
        let deadline = study
            .runs
            .iter()
            .find(|(spec, _)| spec.family == Family::Deadline)
            .and_then(|(spec, _)| spec.config.deadlines.of(class))
            .or(base.deadlines.of(class))
            .unwrap_or_default();
        let heading = format!(
            "Deadline sweep (background Mbit/s per direction): {} packets lost or later than {deadline} ms (%)",
            class.name()
        );
        class_sweep_table(out, study, (Family::Deadline, class), &heading, &|r| r.bg_mbps.to_string(), &|r| {
            cell(r.deadline_miss_pct, 1)
        });
    }
}

fn per_class_tables(out: &mut String, study: &StudyResult, family: Family) {
    let on: Vec<&ClassSummary> = study.classes.iter().filter(|r| r.family == family && r.dscp).collect();
    if on.is_empty() {
        return;
    }
    let classes: Vec<OrchestratorLane> =
        OrchestratorLane::ALL.into_iter().filter(|c| on.iter().any(|r| r.class == *c)).collect();
    let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
    let schedulers = pairs(on.iter().copied());
    let mut table = |title: &str, value: &dyn Fn(&ClassSummary) -> String| {
        let _ = writeln!(out, "\n## {title}, DSCP on\n");
        let _ = writeln!(out, "| Scheduler | {} |", names.join(" | "));
        let _ = writeln!(out, "|---|{}", "---|".repeat(names.len()));
        for (scheduler, _) in &schedulers {
            let cells: Vec<String> = classes
                .iter()
                .map(|c| {
                    on.iter()
                        .find(|r| r.scheduler == *scheduler && r.class == *c)
                        .map(|r| value(r))
                        .unwrap_or_else(|| "–".into())
                })
                .collect();
            let _ = writeln!(out, "| {} | {} |", scheduler.label(), cells.join(" | "));
        }
    };
    table("Per-class delay (ms) / loss (%)", &delay_loss);
    table("Per-class throughput (Mbps)", &|r| cell(r.figure("throughput_mbps"), 3));
    table("Fairness: Jain index of throughput / of 1/delay", &|r| {
        format!("{} / {}", cell(r.figure("jain_throughput"), 3), cell(r.figure("jain_inverse_delay"), 3))
    });
}

/// Fails unless `dir` can be an output directory: creates it and checks that files
/// can be written in it. Call before running anything, so a bad `--out` (a file,
/// `/sys/kernel`) wastes no time.
pub fn check_out_dir(dir: &Path) -> Result<(), SimError> {
    bauxite_core::ensure_writable_dir(dir).map_err(SimError::OutDir)
}

/// Creates `dir` and writes the four result files into it; returns their paths.
pub fn write_outputs(dir: &Path, study: &StudyResult) -> Result<Vec<PathBuf>, SimError> {
    let mut paths = write_files(dir, vec![("flows.csv", flows_csv(study))])?;
    paths.extend(write_study_tables(dir, study)?);
    Ok(paths)
}

/// Writes every result file but `flows.csv` (`classes.csv`, `summary.json`,
/// `summary.md`) into `dir`; returns their paths.
pub fn write_study_tables(dir: &Path, study: &StudyResult) -> Result<Vec<PathBuf>, SimError> {
    write_files(
        dir,
        vec![
            ("classes.csv", classes_csv(study)),
            ("summary.json", serde_json::to_string_pretty(&summary_json(study))? + "\n"),
            ("summary.md", summary_md(study)),
        ],
    )
}

/// Creates `dir` and writes each `(name, text)` into it; returns their paths.
pub fn write_files(dir: &Path, files: Vec<(&str, String)>) -> Result<Vec<PathBuf>, SimError> {
    check_out_dir(dir)?;
    std::fs::create_dir_all(dir).map_err(|source| SimError::Io { path: dir.to_path_buf(), source })?;
    let mut paths = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| SimError::Io { path: path.clone(), source })?;
        paths.push(path);
    }
    Ok(paths)
}

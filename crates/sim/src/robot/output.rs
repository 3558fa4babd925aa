//! `sim robot`'s files: `summary.json`, `summary.md`, `timeseries.csv` and the
//! charts (capacity, shaped and achieved rates; critical latency against the floor).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bauxite_telemetry::chart::{LineChart, Series};

use super::metrics::{LinkFacts, PhaseSummary, RobotSummary};
use super::{BIN_NS, PhaseTrace, SeedRun};
use crate::SimError;

/// Writes every file of a run into `dir` (checked and created first); returns their paths.
/// The time series and charts show the first seed.
pub fn write_outputs(
    dir: &Path,
    summary: &RobotSummary,
    first: &SeedRun,
    link: &LinkFacts,
) -> Result<Vec<PathBuf>, SimError> {
    crate::output::check_out_dir(dir)?;
    let files = [
        ("summary.json", serde_json::to_string_pretty(summary)? + "\n"),
        ("summary.md", summary_md(summary)),
        ("timeseries.csv", timeseries_csv(first, link)),
    ];
    let mut paths = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| SimError::Io { path: path.clone(), source })?;
        paths.push(path);
    }
    paths.extend(rates_chart(first, link).write(&dir.join("rates"))?);
    paths.extend(latency_chart(first).write(&dir.join("critical_latency"))?);
    Ok(paths)
}

/// `summary.md`: both phases side by side.
pub fn summary_md(s: &RobotSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# bauxite sim robot: profile {}, link {}, {} seed(s) of {} s, protected rate {}\n",
        s.profile, s.link.spec, s.seeds, s.duration_s, s.protected_rate
    );
    let capacity = s.link.mean_capacity_mbps.map_or("unlimited".into(), |c| format!("{c:.3} Mbit/s"));
    let _ = writeln!(
        out,
        "Mean capacity {capacity}; windows from {} s (latency from 1 s later); capacity drops at {:?} s.\n",
        s.link.drop_at_s, s.link.drops_s
    );
    let _ = writeln!(out, "| Metric | Standard stack | Bauxite protected |");
    let _ = writeln!(out, "| :--- | :---: | :---: |");
    let (a, b) = (&s.phases.standard, &s.phases.protected);
    let row = |out: &mut String, label: &str, f: &dyn Fn(&PhaseSummary) -> String| {
        let _ = writeln!(out, "| {label} | {} | {} |", f(a), f(b));
    };
    let ms = |v: f64| format!("{v:.2} ms");
    row(&mut out, "Critical latency, mean", &|p| ms(p.critical_latency_ms.mean));
    row(&mut out, "Critical latency, p99", &|p| ms(p.critical_latency_ms.p99));
    row(&mut out, "Critical latency, max", &|p| ms(p.critical_latency_ms.max));
    row(&mut out, "Critical latency from the drop, p99", &|p| ms(p.critical_latency_from_drop_ms.p99));
    row(&mut out, "Critical excess over the floor, mean", &|p| ms(p.critical_excess_ms.mean));
    row(&mut out, "Critical excess, p95", &|p| ms(p.critical_excess_ms.p95));
    row(&mut out, "Critical excess, p99", &|p| ms(p.critical_excess_ms.p99));
    row(&mut out, "Critical excess, max", &|p| ms(p.critical_excess_ms.max));
    row(&mut out, "Critical messages over 10 ms of excess", &|p| format!("{:.2} %", p.critical_over_10ms_pct));
    row(&mut out, "Critical loss", &|p| format!("{:.2} %", p.critical_loss_pct));
    row(&mut out, "Correction update delay, mean", &|p| ms(p.update_delay_ms.mean));
    row(&mut out, "Video throughput", &|p| format!("{:.3} Mbit/s", p.bulk_throughput_mbps));
    row(&mut out, "Video utilisation of what the link offered", &|p| {
        p.bulk_utilization.map_or("—".into(), |u| format!("{:.1} %", 100.0 * u))
    });
    row(&mut out, "Video frames delivered", &|p| format!("{:.1} fps", p.video_fps));
    row(&mut out, "Frame delay p50 / p95", &|p| {
        format!("{:.0} / {:.0} ms", p.frame_delay_ms.p50, p.frame_delay_ms.p95)
    });
    row(&mut out, "Frames skipped by the encoder", &|p| format!("{:.1} %", p.video_skipped_pct));
    row(&mut out, "Bulk discarded early", &|p| p.bulk_dropped_packets.to_string());
    let ttp = |p: &PhaseSummary| p.time_to_protect_ms.map_or("—".into(), |t| format!("{t:.0} ms"));
    row(&mut out, "Time from the first drop until critical excess < 2 ms", &ttp);
    let _ = writeln!(out, "\nThe video's TCP: {}", s.tcp_model);
    out
}

/// Per 100 ms bin of the first seed: capacity, the shaper's link rate and what each
/// phase delivered.
pub fn timeseries_csv(run: &SeedRun, link: &LinkFacts) -> String {
    let mut out = String::from(
        "t_s,capacity_mbps,shaper_link_rate_mbps,standard_delivered_mbps,protected_delivered_mbps,protected_video_mbps\n",
    );
    let mbps = |bytes: f64| bytes * 8.0 / (BIN_NS as f64 / 1e9) / 1e6;
    let delivered = |t: &PhaseTrace, b: usize| {
        (t.video_bytes.get(b).copied().unwrap_or(0) + t.other_bytes.get(b).copied().unwrap_or(0)) as f64
    };
    for (b, capacity) in link.capacity_bytes.iter().enumerate() {
        let t_ns = b as u64 * BIN_NS;
        let rate = rate_at(&run.protected.link_rate, t_ns).map_or(String::new(), |r| format!("{:.4}", r / 1e6));
        let _ = writeln!(
            out,
            "{:.1},{},{rate},{:.4},{:.4},{:.4}",
            t_ns as f64 / 1e9,
            if capacity.is_finite() { format!("{:.4}", mbps(*capacity)) } else { String::new() },
            mbps(delivered(&run.standard, b)),
            mbps(delivered(&run.protected, b)),
            mbps(run.protected.video_bytes.get(b).copied().unwrap_or(0) as f64),
        );
    }
    out
}

fn rate_at(changes: &[(u64, u64)], t_ns: u64) -> Option<f64> {
    changes.iter().take_while(|(at, _)| *at <= t_ns).last().map(|(_, r)| *r as f64)
}

fn rates_chart(run: &SeedRun, link: &LinkFacts) -> LineChart {
    let bin_s = BIN_NS as f64 / 1e9;
    let mbps = |bytes: f64| bytes * 8.0 / bin_s / 1e6;
    let per_bin = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
        (0..link.capacity_bytes.len()).map(|b| (b as f64 * bin_s, f(b))).filter(|(_, y)| y.is_finite()).collect()
    };
    let delivered = |t: &PhaseTrace, b: usize| {
        mbps((t.video_bytes.get(b).unwrap_or(&0) + t.other_bytes.get(b).unwrap_or(&0)) as f64)
    };
    let mut series = vec![
        Series { name: "capacity".into(), points: per_bin(&|b| mbps(link.capacity_bytes[b])), ..Series::default() },
        Series {
            name: "delivered, standard stack".into(),
            points: per_bin(&|b| delivered(&run.standard, b)),
            ..Series::default()
        },
        Series {
            name: "delivered, Bauxite".into(),
            points: per_bin(&|b| delivered(&run.protected, b)),
            ..Series::default()
        },
    ];
    if !run.protected.link_rate.is_empty() {
        let points = per_bin(&|b| rate_at(&run.protected.link_rate, b as u64 * BIN_NS).unwrap_or(f64::NAN) / 1e6);
        series.push(Series { name: "shaper's link rate".into(), points, ..Series::default() });
    }
    LineChart {
        title: "Capacity, shaper rate and delivered rate (first seed)".into(),
        x_label: "time (s)".into(),
        y_label: "Mbit/s".into(),
        series,
        markers: link.drops_ns.iter().map(|&d| (d as f64 / 1e9, "drop".to_string())).collect(),
        ..LineChart::default()
    }
}

fn latency_chart(run: &SeedRun) -> LineChart {
    let points = |t: &PhaseTrace, f: &dyn Fn(&super::CriticalMessage) -> Option<u64>| -> Vec<(f64, f64)> {
        t.critical.iter().filter_map(|m| f(m).map(|ns| (m.sent_ns as f64 / 1e9, (ns as f64 / 1e6).max(0.01)))).collect()
    };
    LineChart {
        title: "Critical latency and the link's floor (first seed)".into(),
        x_label: "send time (s)".into(),
        y_label: "latency (ms)".into(),
        log_y: true,
        series: vec![
            Series {
                name: "standard stack".into(),
                points: points(&run.standard, &|m| m.latency_ns),
                ..Series::default()
            },
            Series { name: "Bauxite".into(), points: points(&run.protected, &|m| m.latency_ns), ..Series::default() },
            Series {
                name: "link floor".into(),
                points: points(&run.protected, &|m| Some(m.floor_ns)),
                ..Series::default()
            },
        ],
        references: vec![(2.0, "2 ms".into())],
        ..LineChart::default()
    }
}

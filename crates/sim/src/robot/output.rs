//! `sim robot`'s files: `summary.json`, `summary.md`, `timeseries.csv` and the
//! charts (capacity, shaped and achieved rates; critical latency against the floor).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bauxite_telemetry::link_charts::{latency_chart, rate_at, rates_chart};

use super::metrics::{LinkFacts, LinkFigures, PhaseSummary, RobotSummary};
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
    let (standard, protected) = (&first.standard, &first.protected);
    paths.extend(rates_chart(standard, protected, link, "first seed").write(&dir.join("rates"))?);
    paths.extend(latency_chart(standard, protected, "first seed").write(&dir.join("critical_latency"))?);
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
    let _ = writeln!(
        out,
        "| Metric | Standard stack | Bauxite protected | Reference: never-dropped only | Reference: clairvoyant |"
    );
    let _ = writeln!(out, "| :--- | :---: | :---: | :---: | :---: |");
    let phases = [&s.phases.standard, &s.phases.protected, &s.oracle.never_dropped, &s.oracle.clairvoyant];
    let row = |out: &mut String, label: &str, f: &dyn Fn(&PhaseSummary) -> String| {
        let cells: Vec<String> = phases.iter().map(|p| f(p)).collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    };
    // The simulator's figures always carry the link's.
    let links: Vec<LinkFigures> = phases.iter().map(|p| p.link.clone().unwrap_or_default()).collect();
    let link_row = |out: &mut String, label: &str, f: &dyn Fn(&LinkFigures) -> String| {
        let cells: Vec<String> = links.iter().map(f).collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    };
    let ms = |v: f64| format!("{v:.2} ms");
    row(&mut out, "Critical latency, mean", &|p| ms(p.critical_latency_ms.mean));
    row(&mut out, "Critical latency, p99", &|p| ms(p.critical_latency_ms.p99));
    row(&mut out, "Critical latency, max", &|p| ms(p.critical_latency_ms.max));
    row(&mut out, "Critical latency from the drop, p99", &|p| ms(p.critical_latency_from_drop_ms.p99));
    link_row(&mut out, "Critical excess over the floor, mean", &|p| ms(p.critical_excess_ms.mean));
    link_row(&mut out, "Critical excess, p95", &|p| ms(p.critical_excess_ms.p95));
    link_row(&mut out, "Critical excess, p99", &|p| ms(p.critical_excess_ms.p99));
    link_row(&mut out, "Critical excess, max", &|p| ms(p.critical_excess_ms.max));
    link_row(&mut out, "Critical messages over 10 ms of excess", &|p| format!("{:.2} %", p.critical_over_10ms_pct));
    row(&mut out, "Critical loss", &|p| format!("{:.2} %", p.critical_loss_pct));
    row(&mut out, "Correction update delay, mean", &|p| ms(p.update_delay_ms.mean));
    row(&mut out, "Video throughput", &|p| format!("{:.3} Mbit/s", p.bulk_throughput_mbps));
    link_row(&mut out, "Video utilisation of what the link offered", &|p| {
        p.bulk_utilization.map_or("—".into(), |u| format!("{:.1} %", 100.0 * u))
    });
    row(&mut out, "Video frames delivered", &|p| format!("{:.1} fps", p.video_fps));
    link_row(&mut out, "Frame delay p50 / p95", &|p| {
        format!("{:.0} / {:.0} ms", p.frame_delay_ms.p50, p.frame_delay_ms.p95)
    });
    link_row(&mut out, "Frames skipped by the encoder", &|p| format!("{:.1} %", p.video_skipped_pct));
    row(&mut out, "Bulk discarded early", &|p| p.bulk_dropped_packets.to_string());
    let ttp = |p: &PhaseSummary| p.time_to_protect_ms.map_or("—".into(), |t| format!("{t:.0} ms"));
    row(&mut out, "Time from the first drop until critical excess < 2 ms", &ttp);
    let _ = writeln!(
        out,
        "\nThe references: *never-dropped only* runs only the traffic no shaper may drop (the never-dropped \
lanes' streams and the probes of `rate: auto`), unshaped: what no shaper can avoid. *Clairvoyant* is the protected \
phase shaped to the link's own capacity over the next base RTT plus {} ms: the best a rate controller could do.",
        super::CLAIRVOYANT_LOOKAHEAD.as_millis()
    );
    let _ = writeln!(out, "\nThe video's TCP: {}", s.tcp_model);
    out
}

/// Per 100 ms bin of the first seed: capacity, the shaper's link rate, what each
/// phase delivered, and with `rate: auto` what its law was doing for most of the bin.
pub fn timeseries_csv(run: &SeedRun, link: &LinkFacts) -> String {
    let mut out = String::from(
        "t_s,capacity_mbps,shaper_link_rate_mbps,standard_delivered_mbps,protected_delivered_mbps,protected_video_mbps,auto_phase\n",
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
            "{:.1},{},{rate},{:.4},{:.4},{:.4},{}",
            t_ns as f64 / 1e9,
            if capacity.is_finite() { format!("{:.4}", mbps(*capacity)) } else { String::new() },
            mbps(delivered(&run.standard, b)),
            mbps(delivered(&run.protected, b)),
            mbps(run.protected.video_bytes.get(b).copied().unwrap_or(0) as f64),
            longest_phase(&run.protected.rate_phase, t_ns, t_ns + BIN_NS).unwrap_or(""),
        );
    }
    out
}

/// The phase in force for the longest part of `[from, to)`, of a list of (ns, phase)
/// changes in time order; `None` before the first.
fn longest_phase(changes: &[(u64, &'static str)], from: u64, to: u64) -> Option<&'static str> {
    // From the change in force at `from` (the last at or before it) to the last before `to`.
    let first = changes.partition_point(|(at, _)| *at <= from).saturating_sub(1);
    let last = changes.partition_point(|(at, _)| *at < to);
    let mut spans: Vec<(&'static str, u64)> = Vec::new();
    for (i, &(at, phase)) in changes.iter().enumerate().take(last).skip(first) {
        let until = changes.get(i + 1).map_or(u64::MAX, |next| next.0);
        let span = until.min(to).saturating_sub(at.max(from));
        if span == 0 {
            continue;
        }
        match spans.iter_mut().find(|(p, _)| *p == phase) {
            Some((_, total)) => *total += span,
            None => spans.push((phase, span)),
        }
    }
    spans.into_iter().max_by_key(|(_, span)| *span).map(|(phase, _)| phase)
}

#[cfg(test)]
mod tests {
    use super::longest_phase;

    #[test]
    fn a_bin_is_named_by_the_phase_in_force_for_most_of_it() {
        let changes = [(0, "holding"), (30, "knee"), (50, "holding"), (200, "draining")];
        assert_eq!(longest_phase(&changes, 0, 100), Some("holding"), "80 of 100 ns, in two spans");
        assert_eq!(longest_phase(&changes, 20, 60), Some("knee"), "20 of 40 ns against 10 + 10");
        assert_eq!(longest_phase(&changes, 100, 200), Some("holding"), "in force from before the bin");
        assert_eq!(longest_phase(&changes, 150, 260), Some("draining"), "the last change lasts");
        assert_eq!(longest_phase(&[(150, "knee")], 0, 100), None, "nothing before the first change");
    }
}

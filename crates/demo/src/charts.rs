//! The demo's charts: critical latency, update delay and video throughput over time,
//! both phases, the line the mean across trials and the band their min–max.

use std::path::{Path, PathBuf};

use bauxite_core::Targets;
use bauxite_telemetry::chart::{ChartError, LineChart, Series};

use crate::analysis::PhaseData;

/// Bin width of the time series, s: fine enough to show the shaper's reaction to
/// the drop, coarse enough that every bin holds several critical messages.
const BIN_S: f64 = 0.25;

/// How the samples of one bin of one trial become one value.
#[derive(Clone, Copy)]
enum Reduce {
    /// Mean of the samples (latencies); a bin without samples has no value.
    Mean,
    /// Sum of the samples per second, scaled to Mbit/s from bytes; an empty bin is 0.
    MbitPerSecond,
}

/// One phase's series across trials: per trial, the samples of each bin reduced to
/// one value; then per bin the mean over trials (the line) and min–max (the band).
fn across_trials(name: &str, trials: &[Vec<(f64, f64)>], duration: f64, reduce: Reduce) -> Series {
    let bins = (duration / BIN_S).ceil() as usize;
    let mut per_bin: Vec<Vec<f64>> = vec![Vec::new(); bins];
    for samples in trials {
        let mut sums = vec![(0.0, 0usize); bins];
        for &(t, v) in samples {
            if let Some(bin) = sums.get_mut((t / BIN_S).floor().max(0.0) as usize) {
                bin.0 += v;
                bin.1 += 1;
            }
        }
        for (bin, (sum, n)) in sums.into_iter().enumerate() {
            match reduce {
                Reduce::Mean if n > 0 => per_bin[bin].push(sum / n as f64),
                Reduce::Mean => {}
                Reduce::MbitPerSecond => per_bin[bin].push(sum * 8.0 / BIN_S / 1e6),
            }
        }
    }
    // A bin without a sample (every message lost) is a gap, not a line across it.
    let mut series = Series { name: name.into(), max_step: Some(1.5 * BIN_S), ..Series::default() };
    for (bin, values) in per_bin.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
        let x = (bin as f64 + 0.5) * BIN_S;
        let mean = bauxite_core::stats::mean(values).expect("a bin with values");
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(*v), h.max(*v)));
        series.points.push((x, mean));
        series.band.push((x, lo, hi));
    }
    series
}

/// Writes `critical_latency`, `update_delay` and `bulk_throughput` (PNG and SVG) into `dir`.
pub fn write(
    dir: &Path,
    standard: &[PhaseData],
    protected: &[PhaseData],
    protected_label: &str,
    drop_label: &str,
    targets: &Targets,
) -> Result<Vec<PathBuf>, ChartError> {
    let Some(first) = standard.first().or(protected.first()) else { return Ok(Vec::new()) };
    let (duration, drop_at) = (first.duration, first.drop_at);
    let phases = [("standard Linux stack", standard), (protected_label, protected)];
    let both = |pick: &dyn Fn(&PhaseData) -> Vec<(f64, f64)>, reduce| {
        phases
            .iter()
            .map(|(name, trials)| {
                let samples: Vec<Vec<(f64, f64)>> = trials.iter().map(pick).collect();
                across_trials(name, &samples, duration, reduce)
            })
            .collect::<Vec<_>>()
    };
    let drop = vec![(drop_at, drop_label.to_string())];
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let target = |d: std::time::Duration| (ms(d), format!("target {}", bauxite_core::format_duration(d)));
    let trials = standard.len().max(protected.len());
    let spread = format!("mean of {trials} trials, band min–max, {} ms bins", BIN_S * 1e3);
    let charts = [
        (
            "critical_latency",
            LineChart {
                title: format!("Critical latency ({spread})"),
                x_label: "time (s)".into(),
                y_label: "one-way latency (ms, log)".into(),
                log_y: true,
                series: both(&|d| d.critical.iter().filter_map(|(t, l)| l.map(|l| (*t, l))).collect(), Reduce::Mean),
                references: vec![target(targets.critical_latency_p99)],
                markers: drop.clone(),
            },
        ),
        (
            "update_delay",
            LineChart {
                title: format!("Correction update delay ({spread})"),
                x_label: "time (s)".into(),
                y_label: "sent → consumed by the 100 Hz loop (ms, log)".into(),
                log_y: true,
                series: both(&|d| d.updates.clone(), Reduce::Mean),
                references: vec![target(targets.update_delay_mean)],
                markers: drop.clone(),
            },
        ),
        (
            "bulk_throughput",
            LineChart {
                title: format!("Video (bulk) throughput delivered ({spread})"),
                x_label: "time (s)".into(),
                y_label: "Mbit/s".into(),
                log_y: false,
                series: both(&|d| d.frames.iter().map(|(t, b)| (*t, f64::from(*b))).collect(), Reduce::MbitPerSecond),
                references: Vec::new(),
                markers: drop,
            },
        ),
    ];
    let mut written = Vec::new();
    for (stem, chart) in charts {
        written.extend(chart.write(&dir.join(stem))?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_average_within_a_trial_then_span_across_trials() {
        let a = vec![(0.1, 1.0), (0.2, 3.0), (0.6, 10.0)];
        let b = vec![(0.1, 4.0)];
        let s = across_trials("x", &[a, b], 1.0, Reduce::Mean);
        assert_eq!(s.points, vec![(0.125, 3.0), (0.625, 10.0)], "bin 0: trial means 2 and 4; bin 2: one trial");
        assert_eq!(s.band, vec![(0.125, 2.0, 4.0), (0.625, 10.0, 10.0)]);
    }

    #[test]
    fn throughput_bins_count_empty_time_as_zero() {
        let frames = vec![(0.1, 12_500.0), (0.2, 12_500.0)];
        let s = across_trials("video", &[frames], 0.5, Reduce::MbitPerSecond);
        assert_eq!(s.points, vec![(0.125, 0.8), (0.375, 0.0)], "25 kB in 250 ms is 0.8 Mbit/s");
    }
}

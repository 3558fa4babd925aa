//! `--sweep auto_rate.KEY=v1,v2,...`: the auto-rate controller's parameters over
//! links and seeds, and the throughput/delay frontier they trace.
//!
//! Each value is set on the profile's `auto_rate` policy exactly as the YAML key
//! would set it (so `probe_hold=1s,2s` or `delay_threshold=3ms,5ms`), and the
//! profile is validated again, before anything runs. Every (value, link) pair runs
//! every seed with `rate: auto`; a point is the protected phase's pooled figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use bauxite_core::link::{LinkConfig, Timeline};
use bauxite_telemetry::chart::{LineChart, Series};

use super::{RateMode, RobotConfig, simulate};
use crate::SimError;

/// A parsed `--sweep` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepSpec {
    /// The key under `auto_rate`, e.g. `probe_hold`.
    pub key: String,
    /// The values, as written.
    pub values: Vec<String>,
}

impl FromStr for SweepSpec {
    type Err = SimError;

    fn from_str(text: &str) -> Result<Self, SimError> {
        let bad = |why: &str| SimError::invalid("sweep", format!("`{text}`: {why}"));
        let (key, values) = text.split_once('=').ok_or_else(|| bad("expected auto_rate.KEY=v1,v2,..."))?;
        let key = key.trim().strip_prefix("auto_rate.").ok_or_else(|| bad("only auto_rate.KEY can be swept"))?;
        let values: Vec<String> =
            values.split(',').map(str::trim).filter(|v| !v.is_empty()).map(String::from).collect();
        if key.is_empty() || values.is_empty() {
            return Err(bad("expected auto_rate.KEY=v1,v2,..."));
        }
        if values.len() > 100 {
            return Err(bad("at most 100 values"));
        }
        Ok(Self { key: key.to_string(), values })
    }
}

impl SweepSpec {
    /// `base` with `auto_rate.KEY` set to each value in turn, each validated.
    pub fn configs(&self, base: &RobotConfig) -> Result<Vec<RobotConfig>, SimError> {
        self.values.iter().map(|v| self.with_value(base, v)).collect()
    }

    fn with_value(&self, base: &RobotConfig, value: &str) -> Result<RobotConfig, SimError> {
        let bad = |why: String| SimError::invalid("sweep", format!("auto_rate.{}={value}: {why}", self.key));
        let mut profile = base.profile.clone().into_profile();
        let mut policy = serde_json::to_value(&profile.auto_rate).map_err(|e| bad(e.to_string()))?;
        let field = policy.as_object_mut().expect("a policy is a map");
        if !field.contains_key(&self.key) {
            let known: Vec<&String> = field.keys().collect();
            return Err(bad(format!("no such key (known: {known:?})")));
        }
        // A number where it parses as one (factors), the text otherwise (rates, durations).
        let parsed = value
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| serde_json::Value::String(value.to_string()), serde_json::Value::Number);
        field.insert(self.key.clone(), parsed);
        profile.auto_rate = serde_json::from_value(policy).map_err(|e| bad(e.to_string()))?;
        let profile = profile.validate().map_err(|e| bad(e.to_string()))?;
        Ok(RobotConfig { profile, rate: RateMode::Auto, ..base.clone() })
    }
}

/// One (value, link) pair's protected-phase figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The parameter's value.
    pub value: String,
    /// The link.
    pub link: String,
    /// Video throughput after the drop, Mbit/s.
    pub bulk_throughput_mbps: f64,
    /// Of the capacity offered beyond the other traffic.
    pub bulk_utilization: Option<f64>,
    /// Critical excess over the floor, p95 (ms).
    pub critical_excess_p95_ms: f64,
    /// Critical excess over the floor, p99 (ms).
    pub critical_excess_p99_ms: f64,
    /// Critical messages with more than 10 ms of excess (%).
    pub critical_over_10ms_pct: f64,
    /// Mean time to protect after the capacity drops (ms), if there were any.
    pub time_to_protect_ms: Option<f64>,
    /// Mean time to follow the timeline's rises (ms), if there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_follow_ms: Option<f64>,
}

/// `summary.json` of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// `auto_rate.KEY`.
    pub key: String,
    /// Seeds per point.
    pub seeds: u32,
    /// Simulated seconds per run.
    pub duration_s: f64,
    /// Every point, value-major.
    pub points: Vec<SweepPoint>,
}

/// A link to sweep over: its label, its start and its timeline.
pub type SweepLink = (String, LinkConfig, Timeline);

/// Runs every value on every link, calling `done` with the count of points finished
/// (for a progress bar).
pub fn run_sweep(
    configs: &[RobotConfig],
    spec: &SweepSpec,
    links: &[SweepLink],
    seeds: u32,
    done: &dyn Fn(usize),
) -> SweepSummary {
    let mut points = Vec::new();
    for (config, value) in configs.iter().zip(&spec.values) {
        for (label, link, timeline) in links {
            let run = RobotConfig { link: link.clone(), timeline: timeline.clone(), ..config.clone() };
            let p = simulate(&run, seeds, label).summary.phases.protected;
            let l = p.link.unwrap_or_default();
            let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            points.push(SweepPoint {
                value: value.clone(),
                link: label.clone(),
                bulk_throughput_mbps: p.bulk_throughput_mbps,
                bulk_utilization: l.bulk_utilization,
                critical_excess_p95_ms: l.critical_excess_ms.p95,
                critical_excess_p99_ms: l.critical_excess_ms.p99,
                critical_over_10ms_pct: l.critical_over_10ms_pct,
                time_to_protect_ms: mean(&l.time_to_protect_after_drops_ms),
                time_to_follow_ms: mean(&l.time_to_follow_rises_ms),
            });
            done(points.len());
        }
    }
    let duration_s = configs.first().map_or(0.0, |c| c.duration.as_secs_f64());
    SweepSummary { key: format!("auto_rate.{}", spec.key), seeds, duration_s, points }
}

/// Writes `summary.json`, `summary.md` and the `frontier` chart into `dir`.
pub fn write_sweep(dir: &Path, sweep: &SweepSummary) -> Result<Vec<PathBuf>, SimError> {
    crate::output::check_out_dir(dir)?;
    let mut paths = Vec::new();
    for (name, text) in [("summary.json", serde_json::to_string_pretty(sweep)? + "\n"), ("summary.md", sweep_md(sweep))]
    {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| SimError::Io { path: path.clone(), source })?;
        paths.push(path);
    }
    paths.extend(frontier_chart(sweep).write(&dir.join("frontier"))?);
    Ok(paths)
}

/// The sweep's table.
pub fn sweep_md(sweep: &SweepSummary) -> String {
    let mut out = format!(
        "# bauxite sim robot --sweep {}: {} seed(s) of {} s per point, rate auto\n\n",
        sweep.key, sweep.seeds, sweep.duration_s
    );
    out.push_str(
        "| value | link | video Mbit/s | utilisation | excess p95 | excess p99 | > 10 ms | time to protect | time to follow a rise |\n",
    );
    out.push_str("| :---: | :--- | :---: | :---: | :---: | :---: | :---: | :---: | :---: |\n");
    for p in &sweep.points {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {} | {:.1} ms | {:.1} ms | {:.2} % | {} | {} |",
            p.value,
            p.link,
            p.bulk_throughput_mbps,
            p.bulk_utilization.map_or("—".into(), |u| format!("{:.1} %", 100.0 * u)),
            p.critical_excess_p95_ms,
            p.critical_excess_p99_ms,
            p.critical_over_10ms_pct,
            p.time_to_protect_ms.map_or("—".into(), |t| format!("{t:.0} ms")),
            p.time_to_follow_ms.map_or("—".into(), |t| format!("{t:.0} ms")),
        );
    }
    out
}

/// Per link, the points of the values in order: x the video's throughput, y the
/// critical excess p95. Down and to the right is better.
fn frontier_chart(sweep: &SweepSummary) -> LineChart {
    let mut links: Vec<&str> = Vec::new();
    for p in &sweep.points {
        if !links.contains(&p.link.as_str()) {
            links.push(&p.link);
        }
    }
    let series = links
        .iter()
        .map(|link| {
            let mut points: Vec<(f64, f64)> = sweep
                .points
                .iter()
                .filter(|p| p.link == *link)
                .map(|p| (p.bulk_throughput_mbps, p.critical_excess_p95_ms.max(0.01)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: (*link).to_string(), points, ..Series::default() }
        })
        .collect();
    LineChart {
        title: format!("Throughput/delay frontier over {}", sweep.key),
        x_label: "video throughput (Mbit/s)".into(),
        y_label: "critical excess p95 (ms)".into(),
        log_y: true,
        series,
        ..LineChart::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_values_are_set_as_the_yaml_key_would_and_checked() {
        let spec: SweepSpec = "auto_rate.delay_threshold=3ms, 8ms".parse().unwrap();
        assert_eq!(spec.values, ["3ms", "8ms"]);
        assert!("probe_hold=2s".parse::<SweepSpec>().unwrap_err().to_string().contains("auto_rate.KEY"));
        assert!("auto_rate.probe_hold=".parse::<SweepSpec>().is_err());

        let base = RobotConfig {
            profile: bauxite_core::Profile::robot().validate().unwrap(),
            workload: bauxite_core::workload::WorkloadSpec::default(),
            link: LinkConfig::default(),
            timeline: Timeline::default(),
            reverse_delay: None,
            duration: std::time::Duration::from_secs(1),
            rate: RateMode::Fixed(bauxite_core::BitRate::from_bps(1_000_000)),
            seed: 0,
        };
        let configs = spec.configs(&base).unwrap();
        let thresholds: Vec<_> = configs.iter().map(|c| c.profile.profile().auto_rate.delay_threshold).collect();
        assert_eq!(thresholds, [std::time::Duration::from_millis(3), std::time::Duration::from_millis(8)]);
        assert!(configs.iter().all(|c| c.rate == RateMode::Auto), "a sweep of the controller runs it");
        let factor: SweepSpec = "auto_rate.load_threshold=0.8".parse().unwrap();
        assert_eq!(factor.configs(&base).unwrap()[0].profile.profile().auto_rate.load_threshold, 0.8);
        for (text, says) in [
            ("auto_rate.decrease_speed=0.8", "no such key"),
            ("auto_rate.delay_threshold=fast", "delay_threshold=fast"),
        ] {
            let e = text.parse::<SweepSpec>().unwrap().configs(&base).unwrap_err().to_string();
            assert!(e.starts_with("--sweep: ") && e.contains(says), "{text}: {e}");
        }
    }
}

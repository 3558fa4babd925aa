//! `summary.json` and `summary.md`: the demo's results as types, one definition of
//! each figure ([`PhaseSummary`]), and the Markdown tables rendered from them.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use bauxite_core::figures::{LinkFacts, LinkFigures};

use crate::analysis::{CHECKPOINTS, PhaseData, PhaseSummary, checkpoint, summarize};
use crate::scenario::Scenario;

/// Everything the demo measured: `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DemoSummary {
    /// Trials run (each ran both phases).
    pub trials: u32,
    /// Phase 3: each recording's audit.
    pub audit: Vec<AuditEntry>,
    /// The link the phases ran on.
    pub link: DemoLink,
    /// Phase 2's shaper rate: a rate (`1.5mbit`) or `auto`.
    pub protected_rate: String,
    /// Which way these streams went: `up` (robot to base, Bauxite on the robot's egress) or
    /// `down` (base to robot, Bauxite on the robot's ingress). With `--direction both`
    /// each way has a summary of its own, both measured at once.
    #[serde(default = "up")]
    pub direction: String,
    /// Each phase's figures, pooled over trials.
    pub phases: Phases,
    /// Critical latency around each of [`CHECKPOINTS`].
    pub time_series_ms: Vec<Checkpoint>,
    /// Each phase of each trial: its recording and its own figures.
    pub runs: Vec<RunEntry>,
}

/// The link: `link` in `summary.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// Before the drop, Mbit/s.
    pub before_mbps: f64,
    /// After it, Mbit/s.
    pub after_mbps: f64,
    /// When it dropped, s from the start of the phase (as planned).
    pub drop_at_s: f64,
}

impl LinkSummary {
    /// The link of `scenario`.
    pub fn of(scenario: &Scenario) -> Self {
        let (drop_at, after) = scenario.drop();
        Self { before_mbps: scenario.initial_rate.mbps(), after_mbps: after.mbps(), drop_at_s: drop_at.as_secs_f64() }
    }
}

/// The link the phases ran on: `link` in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DemoLink {
    /// The seed's step drop on TBF (no `--link`).
    Step(LinkSummary),
    /// An emulated `--link` link, described as `bauxite sim robot` describes it.
    Emulated(bauxite_core::figures::LinkSummary),
}

impl DemoLink {
    /// The link of `scenario`.
    pub fn of(scenario: &Scenario) -> Self {
        match &scenario.link {
            None => Self::Step(LinkSummary::of(scenario)),
            Some(link) => {
                let duration_ns = scenario.duration.as_nanos() as u64;
                Self::Emulated(LinkFacts::of(link.config(), &scenario.timeline, duration_ns).summary(&link.spec))
            }
        }
    }
}

/// Both phases' figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Phase 1: the standard Linux stack.
    pub standard: PhaseSummary,
    /// Phase 2: Bauxite.
    pub protected: PhaseSummary,
}

/// Critical latency around one checkpoint, per phase: `[mean, sd]` across trials
/// in ms ([`checkpoint`]), `null` when no trial has a sample there.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The checkpoint, s from the start of the phase.
    pub t_s: f64,
    /// Phase 1.
    pub standard: Option<(f64, f64)>,
    /// Phase 2.
    pub protected: Option<(f64, f64)>,
}

/// One phase of one trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// Trial, from 1.
    pub trial: u32,
    /// 1 (standard stack) or 2 (Bauxite).
    pub phase: u32,
    /// Its recording, relative to the output directory.
    pub recording: String,
    /// Its figures, as `bauxite audit` must reproduce them.
    pub summary: PhaseSummary,
}

/// One recording's audit (phase 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The recording, relative to the output directory.
    pub recording: String,
    /// Whether every check held.
    pub pass: bool,
    /// Whether the figures recomputed from the file equal the live ones.
    pub reproduces_live_figures: bool,
    /// The checks that failed, or why the file could not be read.
    pub failed_checks: Vec<String>,
}

fn up() -> String {
    "up".into()
}

impl DemoSummary {
    /// The summary of phases measured under `scenario`, with phase 2 shaped at
    /// `protected_rate`. `standard[i]` and `protected[i]` are trial `i + 1`.
    pub fn new(
        scenario: &Scenario,
        protected_rate: String,
        standard: &[PhaseData],
        protected: &[PhaseData],
        runs: Vec<RunEntry>,
        audit: Vec<AuditEntry>,
    ) -> Self {
        Self {
            trials: standard.len().max(protected.len()) as u32,
            audit,
            link: DemoLink::of(scenario),
            protected_rate,
            direction: up(),
            phases: Phases { standard: summarize(standard, false), protected: summarize(protected, true) },
            time_series_ms: CHECKPOINTS
                .iter()
                .map(|&t_s| Checkpoint {
                    t_s,
                    standard: checkpoint(standard, t_s),
                    protected: checkpoint(protected, t_s),
                })
                .collect(),
            runs,
        }
    }

    /// `summary.md`: the seed's two tables (figures, and latency over time), then
    /// phase 3's audit table. `scenario` names the link in the title.
    pub fn markdown(&self, scenario: &Scenario) -> String {
        let mut out = self.figures_markdown(scenario);
        out.push_str(&self.time_series_markdown());
        out.push_str(&self.audit_markdown());
        out
    }

    /// The title and the available bandwidth: the seed's step, or the `--link` link.
    fn link_markdown(&self, scenario: &Scenario) -> (String, String) {
        let trials = self.trials;
        let rate = match self.direction.as_str() {
            "down" => format!("{} on the robot's ingress (the streams go base → robot)", self.protected_rate),
            _ => self.protected_rate.clone(),
        };
        match &self.link {
            DemoLink::Emulated(link) => {
                let title = format!(
                    "# Bauxite demo: {trials} trials, link `{}` (emulated), phase 2 rate {rate}\n\n\
                     Figures from one second after the link's first timed change ({} s) to the end of each phase, pooled over trials.\n",
                    link.spec, link.drop_at_s
                );
                let capacity = link.mean_capacity_mbps.map_or("unlimited".into(), |c| format!("{c:.3} Mbit/s mean"));
                (title, capacity)
            }
            DemoLink::Step(_) => {
                let (drop_at, after) = scenario.drop();
                let title = format!(
                    "# Bauxite demo: {trials} trials, link {} → {} at {} s, phase 2 rate {rate}\n\n\
                     Figures from one second after the drop to the end of each phase, pooled over trials.\n",
                    scenario.initial_rate,
                    after,
                    drop_at.as_secs_f64()
                );
                (title, after.to_string())
            }
        }
    }

    fn figures_markdown(&self, scenario: &Scenario) -> String {
        let (s, p) = (&self.phases.standard, &self.phases.protected);
        let ms = |v: f64| format!("{v:.2} ms");
        let (title, after) = self.link_markdown(scenario);
        let mut out = String::new();
        let _ = writeln!(out, "{title}");
        let _ = writeln!(out, "| Metric | Standard Linux stack (phase 1) | Bauxite protected (phase 2) |");
        let _ = writeln!(out, "| :--- | :---: | :---: |");
        let _ = writeln!(out, "| Available bandwidth | {after} | {after} |");
        let (sl, pl) = (&s.critical_latency_ms, &p.critical_latency_ms);
        for (label, a, b) in [
            ("Critical latency, mean", sl.mean, pl.mean),
            ("Critical latency, p99", sl.p99, pl.p99),
            ("Critical latency, max", sl.max, pl.max),
            (
                "Critical latency from the drop itself, p99",
                s.critical_latency_from_drop_ms.p99,
                p.critical_latency_from_drop_ms.p99,
            ),
            ("Correction update delay, mean", s.update_delay_ms.mean, p.update_delay_ms.mean),
            ("Correction update delay, p99", s.update_delay_ms.p99, p.update_delay_ms.p99),
        ] {
            let _ = writeln!(out, "| {label} | {} | {} |", ms(a), ms(b));
        }
        let _ = writeln!(out, "| Critical loss | {:.2} % | {:.2} % |", s.critical_loss_pct, p.critical_loss_pct);
        let _ = writeln!(
            out,
            "| Bulk (video) throughput | {:.3} Mbit/s | {:.3} Mbit/s |",
            s.bulk_throughput_mbps, p.bulk_throughput_mbps
        );
        let _ = writeln!(out, "| Video frames delivered | {:.1} fps | {:.1} fps |", s.video_fps, p.video_fps);
        let _ = writeln!(out, "| Bulk discarded early | {} | {} |", s.bulk_dropped_packets, p.bulk_dropped_packets);
        match (&s.link, &p.link) {
            (Some(a), Some(b)) => out.push_str(&link_figures_markdown(a, b, p.time_to_protect_ms)),
            _ => {
                let _ = writeln!(
                    out,
                    "| Time from the drop until critical < 2 ms | — | {:.0} ms |",
                    p.time_to_protect_ms.unwrap_or(0.0)
                );
            }
        }
        out
    }

    fn time_series_markdown(&self) -> String {
        let mut out = String::from("\n## Critical latency over time (mean ± sd across trials)\n\n");
        let _ = writeln!(out, "| Time (s) | Standard stack (ms) | Bauxite protected (ms) |");
        let _ = writeln!(out, "| :---: | :---: | :---: |");
        let cell = |v: Option<(f64, f64)>| v.map_or("—".into(), |(m, sd)| format!("{m:.2} ± {sd:.2}"));
        for c in &self.time_series_ms {
            let _ = writeln!(out, "| {:.1} | {} | {} |", c.t_s, cell(c.standard), cell(c.protected));
        }
        out
    }

    /// Phase 3's table: each recording's verdict and whether the audit reproduced the live figures.
    fn audit_markdown(&self) -> String {
        let mut out = String::from("\n## Phase 3: audit of the recordings (`bauxite audit FILE`)\n\n");
        out.push_str(
            "| Recording | Verdict | Figures recomputed from the file equal the live ones | Failed checks |\n",
        );
        out.push_str("| :--- | :---: | :---: | :--- |\n");
        for a in &self.audit {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                a.recording,
                if a.pass { "pass" } else { "FAIL" },
                if a.reproduces_live_figures { "yes" } else { "NO" },
                if a.failed_checks.is_empty() { "—".to_string() } else { a.failed_checks.join(", ") }
            );
        }
        out
    }
}

/// The rows of issue 11's figures (a `--link` run): excess over the link's floor,
/// the video's share of what the link offered, frame delay, time to protect.
fn link_figures_markdown(s: &LinkFigures, p: &LinkFigures, time_to_protect_ms: Option<f64>) -> String {
    let mut out = String::new();
    let ms = |v: f64| format!("{v:.2} ms");
    for (label, a, b) in [
        ("Critical excess over the link's floor, mean", s.critical_excess_ms.mean, p.critical_excess_ms.mean),
        ("Critical excess, p95", s.critical_excess_ms.p95, p.critical_excess_ms.p95),
        ("Critical excess, p99", s.critical_excess_ms.p99, p.critical_excess_ms.p99),
        ("Critical excess, max", s.critical_excess_ms.max, p.critical_excess_ms.max),
    ] {
        let _ = writeln!(out, "| {label} | {} | {} |", ms(a), ms(b));
    }
    let _ = writeln!(
        out,
        "| Critical messages over 10 ms of excess | {:.2} % | {:.2} % |",
        s.critical_over_10ms_pct, p.critical_over_10ms_pct
    );
    let share = |l: &LinkFigures| l.bulk_utilization.map_or("—".into(), |u| format!("{:.1} %", 100.0 * u));
    let _ = writeln!(out, "| Video share of what the link offered | {} | {} |", share(s), share(p));
    let _ = writeln!(
        out,
        "| Frame delay p50 / p95 | {:.0} / {:.0} ms | {:.0} / {:.0} ms |",
        s.frame_delay_ms.p50, s.frame_delay_ms.p95, p.frame_delay_ms.p50, p.frame_delay_ms.p95
    );
    let _ = writeln!(
        out,
        "| Frames skipped by the encoder | {:.1} % | {:.1} % |",
        s.video_skipped_pct, p.video_skipped_pct
    );
    let ttp = time_to_protect_ms.map_or("— (no capacity drop)".into(), |t| format!("{t:.0} ms"));
    let _ = writeln!(out, "| Time from the first capacity drop until critical excess < 2 ms | — | {ttp} |");
    let _ = writeln!(
        out,
        "| Time to protect after each capacity drop | — | {:?} ms |",
        p.time_to_protect_after_drops_ms.iter().map(|t| t.round()).collect::<Vec<_>>()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(latency_ms: f64) -> PhaseData {
        PhaseData {
            critical: (0..1000).map(|i| (f64::from(i) * 0.01, Some(latency_ms))).collect(),
            updates: (0..200).map(|i| (f64::from(i) * 0.05, 5.0)).collect(),
            drop_at: 5.0,
            duration: 10.0,
            target_p99_ms: 2.0,
            ..PhaseData::default()
        }
    }

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        let mut k: Vec<&str> = v.as_object().expect("an object").keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    }

    /// The keys `crates/cli/tests/demo.rs`, the audit and the README read, and the
    /// shapes of the checkpoints (`[mean, sd]` or `null`).
    #[test]
    fn summary_json_keeps_its_keys_and_shapes() {
        let scenario = Scenario::seed(std::time::Duration::from_secs(10)).unwrap();
        let (standard, protected) = ([phase(300.0)], [phase(0.5)]);
        let summary = DemoSummary::new(&scenario, "auto".into(), &standard, &protected, Vec::new(), Vec::new());
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(
            keys(&json),
            ["audit", "direction", "link", "phases", "protected_rate", "runs", "time_series_ms", "trials"]
        );
        assert_eq!(json["direction"], "up", "the seed's direction unless the demo says otherwise");
        // A summary written before the direction existed reads as the uplink's.
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("direction");
        assert_eq!(serde_json::from_value::<DemoSummary>(old).unwrap().direction, "up");
        assert_eq!(json["link"], serde_json::json!({"before_mbps": 50.0, "after_mbps": 1.5, "drop_at_s": 5.0}));
        let (s, p) = (&json["phases"]["standard"], &json["phases"]["protected"]);
        assert_eq!(keys(&s["critical_latency_ms"]), ["max", "mean", "p50", "p95", "p99"]);
        assert_eq!(keys(&s["update_delay_ms"]), ["mean", "p99"]);
        assert_eq!(s["critical_latency_ms"]["p99"], 300.0);
        assert!(s.get("time_to_protect_ms").is_none() && p["time_to_protect_ms"].is_number());
        let at = |t: f64| json["time_series_ms"].as_array().unwrap().iter().find(|c| c["t_s"] == t).unwrap().clone();
        assert_eq!(at(6.0)["standard"], serde_json::json!([300.0, 0.0]));
        assert_eq!(at(20.0)["protected"], serde_json::json!([0.5, 0.0]), "past the end: the last second");
        let back: DemoSummary = serde_json::from_value(json).unwrap();
        assert_eq!(back, summary, "summary.json reads back as the same figures");
        let md = summary.markdown(&scenario);
        assert!(md.contains("| Critical latency, p99 | 300.00 ms | 0.50 ms |"), "{md}");
    }

    /// A `--link` run's `link` is `sim robot`'s shape, and reads back as itself.
    #[test]
    fn an_emulated_links_summary_names_its_spec_and_reads_back() {
        use bauxite_core::BitRate;
        use bauxite_core::link::{LinkConfig, LinkRate, Timeline};
        let link = crate::EmulatedLink {
            spec: "rate=50mbit,timeline=examples/step-drop.yaml".into(),
            uplink: LinkConfig { rate: LinkRate::Constant(BitRate::from_bps(50_000_000)), ..LinkConfig::default() },
            downlink: LinkConfig::default(),
            measured: bauxite_netlab::emulator::Direction::Uplink,
        };
        let timeline = Timeline::of_rates(&[(std::time::Duration::from_secs(5), BitRate::from_bps(1_500_000))]);
        let scenario = Scenario::emulated(link, timeline, std::time::Duration::from_secs(10)).unwrap();
        let summary =
            DemoSummary::new(&scenario, "auto".into(), &[phase(300.0)], &[phase(0.5)], Vec::new(), Vec::new());
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["link"]["spec"], "rate=50mbit,timeline=examples/step-drop.yaml");
        assert_eq!(
            (json["link"]["drop_at_s"].clone(), json["link"]["drops_s"].clone()),
            (5.0.into(), serde_json::json!([5.0]))
        );
        assert!((json["link"]["mean_capacity_mbps"].as_f64().unwrap() - 25.75).abs() < 1e-9, "{}", json["link"]);
        assert_eq!(serde_json::from_value::<DemoSummary>(json).unwrap(), summary);
        assert!(summary.markdown(&scenario).contains("link `rate=50mbit,timeline=examples/step-drop.yaml` (emulated)"));
    }
}

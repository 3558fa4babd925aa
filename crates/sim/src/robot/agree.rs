//! `bauxite sim agree`: does `sim robot` say what `bauxite demo --link` measured on the
//! same link? Issue 12's tolerances, applied to the two `summary.json` files.
//!
//! Critical excess and video are pooled figures and compare directly: the excess p95
//! within 20 % or 5 ms, the video within 10 %. Time to protect is not one number per
//! link but one per run, and on a trace it takes one of a few values: the first whole
//! second without a critical message over 2 ms of avoidable excess begins either
//! before the trace's next fade or after it, seconds later. A mean over a handful of
//! runs then measures how many landed in each *mode*, not the model. So runs are
//! grouped into modes (values closer than twice the tolerance join one), and the two
//! agree when every mode both produced has medians within 50 ms, those modes hold at
//! least half of each side's runs, and no mode's share of runs differs between them
//! beyond chance (Fisher's exact test, two-sided, 5 %; it needs runs to see a
//! difference, which the simulator's seeds make cheap: give it 20 or more).
//! On a step drop there is one mode and this is the plain comparison of medians.

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use super::metrics::{Oracles, PhaseSummary, Phases};
use crate::SimError;

/// Issue 12's tolerance on time to protect (ms).
pub const PROTECT_TOLERANCE_MS: f64 = 50.0;
/// Below this p-value a mode's share differs beyond chance.
pub const SHARE_SIGNIFICANCE: f64 = 0.05;
/// `summary.json` files larger than this are not summaries.
const MAX_SUMMARY_BYTES: u64 = 64 << 20;

/// What both summaries hold: `bauxite demo`'s and `bauxite sim robot`'s share these keys.
#[derive(Debug, Deserialize)]
pub struct ComparedSummary {
    /// The link as both describe it (`spec`, `drops_s`).
    pub link: LinkKeys,
    /// Pooled figures per phase.
    pub phases: Phases,
    /// The simulator's references (`bauxite demo` has none).
    #[serde(default)]
    pub oracle: Option<Oracles>,
    /// Each phase of each trial or seed.
    pub runs: Vec<RunKeys>,
}

/// The link's keys that say which link it was.
#[derive(Debug, Deserialize)]
pub struct LinkKeys {
    /// The `--link` SPEC (absent for the seed demo's own step).
    #[serde(default)]
    pub spec: Option<String>,
    /// The link's capacity drops (s).
    #[serde(default)]
    pub drops_s: Vec<f64>,
    /// Its mean capacity over the run (absent on an unlimited link): two links that drop
    /// alike may differ after (a step that recovers, a longer run).
    #[serde(default)]
    pub mean_capacity_mbps: Option<f64>,
}

/// One phase of one run.
#[derive(Debug, Deserialize)]
pub struct RunKeys {
    /// 1 (standard stack) or 2 (Bauxite).
    pub phase: u32,
    /// Its own figures.
    pub summary: PhaseSummary,
}

/// Reads a `summary.json` of either command.
pub fn read_summary(path: &Path) -> Result<ComparedSummary, SimError> {
    let bytes = bauxite_core::config::read_regular_file(path, MAX_SUMMARY_BYTES)
        .map_err(|source| SimError::Input { path: path.to_path_buf(), source })?;
    serde_json::from_slice(&bytes).map_err(|source| SimError::SummaryJson { path: path.to_path_buf(), source })
}

/// Runs that took nearby values of a figure: the demo's and the simulator's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mode {
    /// The demo's runs in this mode (ms).
    pub demo: Vec<f64>,
    /// The simulator's runs in this mode (ms).
    pub sim: Vec<f64>,
}

/// Time to protect compared mode by mode.
#[derive(Clone, Debug, PartialEq)]
pub struct ProtectAgreement {
    /// The modes, in increasing time.
    pub modes: Vec<Mode>,
    /// The demo's runs.
    pub demo_runs: usize,
    /// The simulator's runs.
    pub sim_runs: usize,
}

impl ProtectAgreement {
    /// Groups both sides' per-run values into modes: sorted together, a new mode
    /// starts where the next value is more than twice the tolerance further.
    pub fn of(demo: &[f64], sim: &[f64]) -> Self {
        let mut all: Vec<(f64, bool)> =
            demo.iter().map(|&v| (v, true)).chain(sim.iter().map(|&v| (v, false))).collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut modes: Vec<Mode> = Vec::new();
        let mut last = f64::NEG_INFINITY;
        for (value, is_demo) in all {
            if modes.is_empty() || value - last > 2.0 * PROTECT_TOLERANCE_MS {
                modes.push(Mode::default());
            }
            let mode = modes.last_mut().expect("pushed above");
            if is_demo {
                mode.demo.push(value)
            } else {
                mode.sim.push(value)
            }
            last = value;
        }
        Self { modes, demo_runs: demo.len(), sim_runs: sim.len() }
    }

    /// Every mode both sides produced has medians within the tolerance, and those
    /// modes hold at least half of each side's runs: a figure that mostly lands
    /// where the other never goes is not the same figure, however few the runs.
    pub fn values_agree(&self) -> bool {
        let shared: Vec<&Mode> = self.modes.iter().filter(|m| !m.demo.is_empty() && !m.sim.is_empty()).collect();
        let close = shared.iter().all(|m| match (median(&m.demo), median(&m.sim)) {
            (Some(d), Some(s)) => (d - s).abs() <= PROTECT_TOLERANCE_MS,
            _ => unreachable!("shared modes have runs on both sides"),
        });
        let (demo_shared, sim_shared) = shared.iter().fold((0, 0), |(d, s), m| (d + m.demo.len(), s + m.sim.len()));
        close && 2 * demo_shared >= self.demo_runs && 2 * sim_shared >= self.sim_runs
    }

    /// The smallest p-value of the modes' shares (1 with a single mode).
    pub fn share_p_value(&self) -> f64 {
        self.modes
            .iter()
            .map(|m| {
                fisher_two_sided(m.demo.len(), self.demo_runs - m.demo.len(), m.sim.len(), self.sim_runs - m.sim.len())
            })
            .fold(1.0, f64::min)
    }

    /// Both conditions; `false` when either side has no run.
    pub fn agrees(&self) -> bool {
        self.demo_runs > 0 && self.sim_runs > 0 && self.values_agree() && self.share_p_value() >= SHARE_SIGNIFICANCE
    }

    /// `demo ~ sim (runs of each)` for every mode, e.g. `93 ~ 104 (1/5, 4/20)`.
    pub fn describe(&self) -> String {
        let side = |v: &[f64]| median(v).map_or("—".to_string(), |m| format!("{m:.0}"));
        self.modes
            .iter()
            .map(|m| {
                format!(
                    "{} / {} ({}/{}, {}/{})",
                    side(&m.demo),
                    side(&m.sim),
                    m.demo.len(),
                    self.demo_runs,
                    m.sim.len(),
                    self.sim_runs
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The nearest-rank median, as every Bauxite figure takes it.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    bauxite_core::stats::percentile(&sorted, 0.5)
}

/// Fisher's exact test on the 2×2 table `[[a, b], [c, d]]` (a mode's runs and the
/// other runs, demo then simulator): the probability, with the margins fixed, of a
/// table at most as likely as this one.
pub fn fisher_two_sided(a: usize, b: usize, c: usize, d: usize) -> f64 {
    let (row, col, n) = (a + b, a + c, a + b + c + d);
    let ln_fact = |k: usize| (1..=k).map(|i| (i as f64).ln()).sum::<f64>();
    let fixed = ln_fact(row) + ln_fact(n - row) + ln_fact(col) + ln_fact(n - col) - ln_fact(n);
    let ln_p = |x: usize| fixed - ln_fact(x) - ln_fact(row - x) - ln_fact(col - x) - ln_fact(n + x - row - col);
    let observed = ln_p(a);
    let lowest = (row + col).saturating_sub(n);
    // A relative margin, so that tables exactly as likely count despite rounding.
    let p: f64 = (lowest..=row.min(col)).map(ln_p).filter(|&l| l <= observed + 1e-7).map(f64::exp).sum();
    p.min(1.0)
}

/// Issue 12's table for one link: both phases, each figure demo / simulator, and
/// whether each is within its tolerance.
pub fn agreement_md(label: &str, demo: &ComparedSummary, sim: &ComparedSummary) -> String {
    let mut out = String::new();
    for (name, phase_number, d, s) in [
        ("standard", 1, &demo.phases.standard, &sim.phases.standard),
        ("Bauxite", 2, &demo.phases.protected, &sim.phases.protected),
    ] {
        let excess = |p: &PhaseSummary| p.link.as_ref().map(|l| l.critical_excess_ms.p95);
        let mut verdicts = Vec::new();
        let excess_cell = match (excess(d), excess(s)) {
            (Some(e1), Some(e2)) => {
                verdicts.push(format!("excess {}", yes((e1 - e2).abs() <= (0.2 * e1).max(5.0))));
                format!("{e1:.1} / {e2:.1} ms")
            }
            _ => "—".to_string(),
        };
        let (v1, v2) = (d.bulk_throughput_mbps, s.bulk_throughput_mbps);
        verdicts.push(format!("video {}", yes((v1 - v2).abs() <= 0.1 * v1)));
        let protect = ProtectAgreement::of(&run_values(demo, phase_number), &run_values(sim, phase_number));
        let protect_cell = if protect.modes.is_empty() {
            "—".to_string()
        } else {
            verdicts.push(format!("protect {}", yes(protect.agrees())));
            format!("{} ms; shares p = {:.2}", protect.describe(), protect.share_p_value())
        };
        let _ = writeln!(
            out,
            "| {label} | {name} | {excess_cell} | {v1:.2} / {v2:.2} | {protect_cell} | {} |",
            verdicts.join(", ")
        );
    }
    // The limits the simulator computed for this link, beside the phases they judge.
    if let Some(oracle) = &sim.oracle {
        for (name, p) in
            [("reference: never-dropped only", &oracle.never_dropped), ("reference: clairvoyant", &oracle.clairvoyant)]
        {
            let excess =
                p.link.as_ref().map_or("—".to_string(), |l| format!("— / {:.1} ms", l.critical_excess_ms.p95));
            let protect = p.time_to_protect_ms.map_or("—".to_string(), |t| format!("— / {t:.0} ms"));
            let _ = writeln!(
                out,
                "| {label} | {name} | {excess} | — / {:.2} | {protect} | (the limit) |",
                p.bulk_throughput_mbps
            );
        }
    }
    out
}

/// The table's header.
pub const AGREEMENT_HEADER: &str = "| link | phase | critical excess p95: demo / sim | video Mbit/s: demo / sim | time to protect, per mode: demo / sim (runs) | within tolerance |\n|---|---|---|---|---|---|\n";

fn yes(ok: bool) -> &'static str {
    if ok { "yes" } else { "no" }
}

/// Each run's time to protect in `phase`.
fn run_values(summary: &ComparedSummary, phase: u32) -> Vec<f64> {
    summary.runs.iter().filter(|r| r.phase == phase).filter_map(|r| r.summary.time_to_protect_ms).collect()
}

/// The link as a table names it: its SPEC with paths cut to file names.
pub fn link_label(summary: &ComparedSummary) -> String {
    let Some(spec) = &summary.link.spec else { return "the seed's step drop".to_string() };
    spec.split(',')
        .map(|part| match part.split_once('=') {
            Some((key, value)) => {
                let name = Path::new(value).file_name().map_or(value.into(), |n| n.to_string_lossy());
                format!("{key}={name}")
            }
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Refuses to compare runs of different links: their drops and their mean capacity
/// (which both compute from the same link facts) must be the same.
pub fn check_same_link(demo: &ComparedSummary, sim: &ComparedSummary) -> Result<(), String> {
    let (a, b) = (&demo.link, &sim.link);
    let same_drops =
        a.drops_s.len() == b.drops_s.len() && a.drops_s.iter().zip(&b.drops_s).all(|(x, y)| (x - y).abs() < 1e-6);
    let same_capacity = match (a.mean_capacity_mbps, b.mean_capacity_mbps) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()),
        (x, y) => x.is_none() && y.is_none(),
    };
    if same_drops && same_capacity {
        return Ok(());
    }
    let describe = |l: &LinkKeys| {
        let capacity = l.mean_capacity_mbps.map_or("unlimited".to_string(), |c| format!("{c:.3} Mbit/s"));
        format!(
            "{}, drops at {:?} s, mean capacity {capacity}",
            l.spec.as_deref().unwrap_or("the seed's step"),
            l.drops_s
        )
    };
    Err(format!("the demo's link ({}) is not the simulator's ({})", describe(a), describe(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fisher_matches_known_tables() {
        // R's fisher.test(matrix(c(3, 1, 1, 3), 2)): p = 0.4857.
        assert!((fisher_two_sided(3, 1, 1, 3) - 0.485_714).abs() < 1e-5);
        // fisher.test(matrix(c(10, 0, 0, 10), 2)): p = 1.083e-05.
        assert!((fisher_two_sided(10, 0, 0, 10) - 1.0825e-5).abs() < 1e-8);
        assert!(fisher_two_sided(2, 3, 4, 6) > 0.999, "the expected table itself");
    }

    #[test]
    fn one_mode_compares_medians() {
        let near = ProtectAgreement::of(&[204.0, 210.0, 243.0], &[215.0, 258.0, 301.0]);
        assert_eq!(near.modes.len(), 1);
        assert!(near.agrees(), "{near:?}");
        let far = ProtectAgreement::of(&[100.0, 110.0, 120.0], &[180.0, 190.0, 200.0]);
        assert_eq!(far.modes.len(), 1, "within twice the tolerance: one mode");
        assert!(!far.values_agree(), "medians 80 ms apart");
    }

    #[test]
    fn two_modes_agree_on_values_and_shares() {
        let demo = [93.0, 2767.0, 2770.0, 2776.0];
        let sim = [97.0, 105.0, 2760.0, 2775.0, 2779.0, 2781.0];
        let a = ProtectAgreement::of(&demo, &sim);
        assert_eq!(a.modes.len(), 2, "{a:?}");
        assert!(a.agrees(), "{a:?}");
        assert_eq!(a.describe(), "93 / 97 (1/4, 2/6); 2770 / 2775 (3/4, 4/6)");
    }

    #[test]
    fn shares_that_differ_beyond_chance_disagree() {
        let demo: Vec<f64> = [vec![100.0; 11], vec![2800.0; 1]].concat();
        let sim: Vec<f64> = [vec![100.0; 3], vec![2800.0; 9]].concat();
        let a = ProtectAgreement::of(&demo, &sim);
        assert!(a.values_agree(), "same values per mode");
        assert!(a.share_p_value() < SHARE_SIGNIFICANCE, "{}", a.share_p_value());
        assert!(!a.agrees());
    }

    #[test]
    fn a_mode_only_one_side_reached_counts_only_through_its_share() {
        let a = ProtectAgreement::of(&[640.0, 860.0, 3040.0], &[641.0, 855.0, 644.0, 858.0]);
        assert_eq!(a.modes.len(), 3);
        assert!(a.values_agree());
        assert!(a.agrees(), "one outlier in three runs is chance: {a:?}");
        assert!(!ProtectAgreement::of(&[], &[1.0]).agrees(), "nothing to compare");
        let disjoint = ProtectAgreement::of(&[301.0, 301.0, 301.0], &[1.0, 1.0, 1.0]);
        assert!(disjoint.share_p_value() >= SHARE_SIGNIFICANCE, "three runs each cannot show it by shares");
        assert!(!disjoint.agrees(), "no value in common");
    }
}

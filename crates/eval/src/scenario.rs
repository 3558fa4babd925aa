//! The paper's scenarios (seed 004, section V-D): four baseline runs without the bridge, five
//! bridge runs with the classifier (toggle included), one ablation with classification off;
//! the impairment severities; and the run lengths.

use std::time::Duration;

use bauxite_core::link::{GilbertElliott, LinkConfig, LossModel};
use serde::Serialize;

use crate::EvalError;
use crate::implementation::{Implementation, WriterSettings};

/// How bad the slow subscriber's path is. Loss is Gilbert–Elliott in netem's terms
/// (`p`, `r`, `1-h`, `1-k`), applied per frame in both directions; the way back also carries
/// the paper's probe return-path delay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Severity {
    /// `clean`, `mild`, `moderate` or `strong`.
    pub name: &'static str,
    /// The loss toward the slow subscriber and back; none when clean.
    pub loss: Option<GilbertElliott>,
    /// One-way delay added on the way back (slow → the rest).
    pub back_delay_ms: u64,
    /// ± this much jitter on it.
    pub back_jitter_ms: u64,
}

impl Severity {
    /// No impairment.
    pub const CLEAN: Severity = Severity { name: "clean", loss: None, back_delay_ms: 0, back_jitter_ms: 0 };
    /// Fades of about 10 frames (every frame lost) every 330 frames or so: 3 % of the time.
    pub const MILD: Severity = Severity {
        name: "mild",
        loss: Some(GilbertElliott { p: 0.003, r: 0.1, loss_bad: 1.0, loss_good: 0.001 }),
        back_delay_ms: 20,
        back_jitter_ms: 10,
    };
    /// Fades of about 10 frames every 100 frames or so: 9 % of the time. Frequent enough that
    /// the classifier's 10 s probe window nearly always holds a loss (fades every 250 frames let
    /// it promote between them within a quick run), but not always: on the quiet path a demoted
    /// subscriber leaves (3 Hz of 6-fragment samples, 5 Hz probes, answers alone on the way
    /// back), a Monte Carlo of this chain finds a 12 s stretch without a lost probe, enough to
    /// promote, about every 80 s.
    pub const MODERATE: Severity = Severity {
        name: "moderate",
        loss: Some(GilbertElliott { p: 0.01, r: 0.1, loss_bad: 1.0, loss_good: 0.001 }),
        back_delay_ms: 20,
        back_jitter_ms: 10,
    };
    /// Fades of about 50 frames every 170 frames or so: 23 % of the time; and a way back slow
    /// enough that the probes' RTT crosses the 50 ms demotion threshold by delay alone.
    pub const STRONG: Severity = Severity {
        name: "strong",
        loss: Some(GilbertElliott { p: 0.006, r: 0.02, loss_bad: 1.0, loss_good: 0.001 }),
        back_delay_ms: 60,
        back_jitter_ms: 10,
    };
    /// Every severity, mildest first.
    pub const ALL: [Severity; 4] = [Self::CLEAN, Self::MILD, Self::MODERATE, Self::STRONG];

    /// The link toward the slow subscriber (the bridge's or publisher's frames, the probes).
    pub fn toward(&self, seed: u64) -> LinkConfig {
        LinkConfig { loss: self.loss_model(), seed, ..LinkConfig::default() }
    }

    /// The link back from it (acknowledgements, probe answers).
    pub fn back(&self, seed: u64) -> LinkConfig {
        LinkConfig {
            loss: self.loss_model(),
            delay: Duration::from_millis(self.back_delay_ms),
            jitter: Duration::from_millis(self.back_jitter_ms),
            seed,
            ..LinkConfig::default()
        }
    }

    fn loss_model(&self) -> LossModel {
        self.loss.map_or(LossModel::None, LossModel::GilbertElliott)
    }

    /// netem's notation, for the report: `gemodel p 1% r 25% 1-h 90% 1-k 1%, back +60±10 ms`.
    pub fn describe(&self) -> String {
        match self.loss {
            None => "no impairment".into(),
            Some(ge) => format!(
                "gemodel p {}% r {}% 1-h {}% 1-k {}% (mean loss {:.1} %) both ways; back +{}±{} ms",
                ge.p * 100.0,
                ge.r * 100.0,
                ge.loss_bad * 100.0,
                ge.loss_good * 100.0,
                ge.mean_loss() * 100.0,
                self.back_delay_ms,
                self.back_jitter_ms
            ),
        }
    }
}

/// What sits between the publisher and the subscribers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// Nothing: both subscribers read the publisher's RELIABLE writer.
    Baseline,
    /// The bridge with its classifier.
    Bridge,
    /// The bridge with classification off (every subscriber stays UNKNOWN, treated as healthy).
    Ablation,
    /// Two bridges of a hot-standby group: the active one is SIGKILLed and restarted, and
    /// later the one active then is SIGKILLed (seed 004's future work: redundancy).
    Failover,
}

/// One scenario: a setup, a severity, and whether the impairment is toggled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// Its name (`bridge-strong`).
    pub name: String,
    /// What is between publisher and subscribers.
    pub setup: Setup,
    /// The severity (the impaired one, for a toggle).
    pub severity: Severity,
    /// Clean, then impaired, then clean again.
    pub toggle: bool,
    /// The publisher's history: KEEP_LAST 10 instead of the collapsing writer.
    pub keep_last: bool,
}

impl Scenario {
    fn new(setup: Setup, severity: Severity) -> Self {
        let prefix = match setup {
            Setup::Baseline => "baseline",
            Setup::Bridge => "bridge",
            Setup::Ablation => "ablation",
            Setup::Failover => "bridge-failover",
        };
        Self { name: format!("{prefix}-{}", severity.name), setup, severity, toggle: false, keep_last: false }
    }

    /// The paper's ten runs, plus the baseline with ROS 2's default KEEP_LAST 10 writer (the
    /// issue asks for both kinds of writer).
    pub fn all() -> Vec<Scenario> {
        let mut v: Vec<Scenario> = Severity::ALL.iter().map(|s| Self::new(Setup::Baseline, *s)).collect();
        v.push(Scenario {
            name: "baseline-keep-last-strong".into(),
            keep_last: true,
            ..Self::new(Setup::Baseline, Severity::STRONG)
        });
        v.extend(Severity::ALL.iter().map(|s| Self::new(Setup::Bridge, *s)));
        v.push(Scenario { name: "bridge-toggle".into(), toggle: true, ..Self::new(Setup::Bridge, Severity::STRONG) });
        v.push(Self::new(Setup::Ablation, Severity::MODERATE));
        // ROS 2's default KEEP_LAST 10 writer, as a talker has: a KEEP_ALL writer waits for
        // the killed bridge's reader until DDS's lease drops it (Cyclone's 10 s), like for any
        // subscriber that dies unannounced, and the run would measure that instead.
        v.push(Scenario {
            name: "bridge-failover".into(),
            keep_last: true,
            ..Self::new(Setup::Failover, Severity::CLEAN)
        });
        v
    }

    /// When a failover run SIGKILLs its active bridge, from the publisher's start: after the
    /// settling time, the first at 40 % of the run (the killed bridge is restarted at once and
    /// rejoins as the standby), the second at 70 % (the bridge active since the first), each
    /// with seconds of stream around it. None for the other setups.
    pub fn kills(&self, timing: &Timing) -> Vec<Duration> {
        if self.setup != Setup::Failover {
            return Vec::new();
        }
        vec![timing.duration.mul_f64(0.4), timing.duration.mul_f64(0.7)]
    }

    /// `--quick`'s default set: what the three checks need (a collapsing baseline, the
    /// bridge at every severity, the ablation and its bridge twin).
    pub fn quick() -> Vec<Scenario> {
        const QUICK: [&str; 6] =
            ["baseline-strong", "bridge-clean", "bridge-mild", "bridge-moderate", "bridge-strong", "ablation-moderate"];
        Self::all().into_iter().filter(|s| QUICK.contains(&s.name.as_str())).collect()
    }

    /// `--scenario`'s value: `all`, or names separated by commas; `None` is the default set.
    pub fn select(value: Option<&str>, quick: bool) -> Result<Vec<Scenario>, EvalError> {
        let all = Self::all();
        match value {
            None if quick => Ok(Self::quick()),
            None | Some("all") => Ok(all),
            Some(list) => list
                .split(',')
                .map(|name| {
                    all.iter().find(|s| s.name == name.trim()).cloned().ok_or_else(|| {
                        let known: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
                        EvalError::Usage(format!("--scenario: no scenario `{name}` (known: all, {})", known.join(", ")))
                    })
                })
                .collect(),
        }
    }

    /// Whether a bridge runs.
    pub fn bridged(&self) -> bool {
        self.setup != Setup::Baseline
    }

    /// The publisher's writer for `implementation`.
    pub fn writer(&self, implementation: Implementation) -> WriterSettings {
        if self.keep_last { WriterSettings::KEEP_LAST_10 } else { implementation.collapsing_writer() }
    }

    /// How long this scenario runs, and when a toggle switches.
    pub fn timing(&self, lengths: &Lengths) -> Timing {
        if self.toggle {
            let (before, during, after) = lengths.toggle;
            Timing {
                duration: before + during + after,
                impaired_from: Some(before),
                impaired_until: Some(before + during),
            }
        } else if self.severity.loss.is_none() {
            Timing { duration: lengths.clean, impaired_from: None, impaired_until: None }
        } else {
            let duration = if self.setup == Setup::Baseline { lengths.impaired_baseline } else { lengths.impaired };
            Timing { duration, impaired_from: Some(lengths.discovery), impaired_until: None }
        }
    }
}

/// Run lengths.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lengths {
    /// An impaired run with the bridge.
    pub impaired: Duration,
    /// An impaired run without it. A writer that recovers between fades (Cyclone's) publishes
    /// in bursts: over the paper-length run its 12 s windows averaged above 25 Hz 8.8 % of the
    /// time (mean 13.1 Hz), its 24 and 36 s windows never (at most 23.2 and 21.8 Hz), so a
    /// quick baseline needs more than 12 s of figures to show what it does.
    pub impaired_baseline: Duration,
    /// A clean run.
    pub clean: Duration,
    /// A toggle run: clean, impaired, clean.
    pub toggle: (Duration, Duration, Duration),
    /// Figures start this long after the publisher's first sample: discovery, the impairment's
    /// start, and the classifier's first verdict (its 10 s window needs 2 s of probes and three
    /// evaluations: about 6 s).
    pub settle: Duration,
    /// An impaired run is clean for this long after the publisher starts, so discovery is over
    /// before the fades begin, as when the paper's harness impaired running containers (over a
    /// faded link, Fast DDS's discovery once took a whole quick run: 0.3 Hz received).
    pub discovery: Duration,
}

impl Lengths {
    /// The paper's: 180 s impaired, 120 s clean, 240 s toggle (60 clean, 120 impaired, 60 clean).
    pub const PAPER: Lengths = Lengths {
        impaired: Duration::from_secs(180),
        impaired_baseline: Duration::from_secs(180),
        clean: Duration::from_secs(120),
        toggle: (Duration::from_secs(60), Duration::from_secs(120), Duration::from_secs(60)),
        settle: Duration::from_secs(15),
        discovery: Duration::from_secs(3),
    };
    /// `--quick`: long enough for the classifier to demote before the figures start, and for
    /// 30 s of figures after the settling time, clean runs too, so that the critical p95 comes
    /// from 900 samples: with 12 s (360 samples, its 18 slowest deciding it) one stretch of a
    /// few seconds in which the machine slowed every process (seen in about one quick run in
    /// eight, 2–8 ms samples against a p50 near 1 ms) decided a run's p95; 32 s of figures for
    /// an impaired baseline. The demotion usually comes with the first fades, 4–7.5 s after the
    /// impairment starts at 3 s; without a fade it rests on the RTT alone: the probe window's
    /// 10 s mean passes the 50 ms threshold 8.3 s after the way back turns 60 ms slow (strong),
    /// and three consecutive bad evaluations, one a second, demote by 14 s after the start.
    /// A CI run saw it (first fade 7.6 s late, demoted at 13.0 s), when the figures began at
    /// 13 s and counted a second of 10 Hz noncritical forwarding: they begin at 16 s now.
    pub const QUICK: Lengths = Lengths {
        impaired: Duration::from_secs(46),
        impaired_baseline: Duration::from_secs(48),
        clean: Duration::from_secs(46),
        toggle: (Duration::from_secs(10), Duration::from_secs(20), Duration::from_secs(25)),
        settle: Duration::from_secs(16),
        discovery: Duration::from_secs(3),
    };
}

/// When a run starts and stops its impairment, from the publisher's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// The whole run.
    pub duration: Duration,
    /// Impaired from (none: never impaired).
    pub impaired_from: Option<Duration>,
    /// ...until (none: to the end).
    pub impaired_until: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_has_four_baselines_five_bridge_runs_and_an_ablation() {
        let all = Scenario::all();
        let count = |setup, keep_last| all.iter().filter(|s| s.setup == setup && s.keep_last == keep_last).count();
        assert_eq!(count(Setup::Baseline, false), 4);
        assert_eq!(count(Setup::Bridge, false), 5);
        assert_eq!(count(Setup::Ablation, false), 1);
        assert_eq!(count(Setup::Baseline, true), 1, "the KEEP_LAST kind, reported too");
        assert_eq!(Scenario::quick().len(), 6);
    }

    #[test]
    fn selection_names_an_unknown_scenario() {
        assert_eq!(Scenario::select(Some("bridge-mild,ablation-moderate"), true).unwrap().len(), 2);
        assert_eq!(Scenario::select(Some("all"), true).unwrap().len(), Scenario::all().len());
        let e = Scenario::select(Some("bridge-mild,bridge-awful"), false).unwrap_err().to_string();
        assert!(e.contains("`bridge-awful`") && e.contains("bridge-toggle"), "{e}");
    }

    #[test]
    fn a_quick_baseline_measures_longer_than_a_quick_bridge_run() {
        let quick = Scenario::quick();
        let length = |name: &str| quick.iter().find(|s| s.name == name).unwrap().timing(&Lengths::QUICK).duration;
        assert_eq!(length("baseline-strong"), Duration::from_secs(48));
        assert_eq!(length("bridge-strong"), Duration::from_secs(46));
        assert_eq!(length("ablation-moderate"), Duration::from_secs(46));
        assert_eq!(length("bridge-clean") - Lengths::QUICK.settle, Duration::from_secs(30), "a bridge run's figures");
        let figures = length("baseline-strong") - Lengths::QUICK.settle;
        assert!(figures > Duration::from_secs(24), "{figures:?} of figures: Cyclone's bursts need more than 24 s");
    }

    #[test]
    fn a_toggle_is_clean_impaired_clean_and_severities_grow() {
        let toggle = Scenario::select(Some("bridge-toggle"), false).unwrap().remove(0);
        let t = toggle.timing(&Lengths::PAPER);
        assert_eq!(t.duration, Duration::from_secs(240));
        assert_eq!(
            (t.impaired_from, t.impaired_until),
            (Some(Duration::from_secs(60)), Some(Duration::from_secs(180)))
        );
        let losses: Vec<f64> = Severity::ALL.iter().map(|s| s.loss.map_or(0.0, |l| l.mean_loss())).collect();
        assert!(losses.windows(2).all(|w| w[0] < w[1]), "{losses:?}");
        for s in Severity::ALL {
            s.toward(1).loss.validate().unwrap();
        }
        // Only strong crosses the 50 ms demotion RTT by delay alone (its mean RTT is 60 ms + LAN).
        let rtt_floor = |s: &Severity| s.back(1).delay.saturating_sub(s.back(1).jitter);
        assert!(rtt_floor(&Severity::STRONG) > Duration::from_millis(49));
        assert!(Severity::MODERATE.back(1).delay + Severity::MODERATE.back(1).jitter < Duration::from_millis(50));
    }
}

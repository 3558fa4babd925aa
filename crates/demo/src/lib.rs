//! The seed-000 reference demo: on a link that drops from 50 to 1.5 Mbit/s, the
//! standard stack (phase 1) against Bauxite (phase 2), over several trials, each
//! phase recorded live to MCAP; then phase 3, every recording audited from the file
//! alone ([`audit`]); the seed's two tables regenerated from measurement, charts and
//! a Foxglove layout for the recordings.
#![deny(missing_docs)]

pub mod analysis;
pub mod audit;
pub mod charts;
mod live;
pub mod run;
pub mod scenario;
pub mod summary;

use serde::Serialize;

use bauxite_telemetry::foxglove::{self, Panel};
use bauxite_telemetry::link_charts::{latency_chart, rates_chart};

use analysis::{PhaseData, summarize};
pub use audit::{AuditError, AuditReport, audit};
pub use run::{DemoDirection, DemoError, DemoOptions};
pub use scenario::{EmulatedLink, Scenario, ScenarioError};
pub use summary::{AuditEntry, DemoLink, DemoSummary, RunEntry};

/// What a finished demo produced: each way's `summary.json` as a value (one way, or
/// up and down with `--direction both`), and `summary.md` as written (to print
/// without reading it back).
#[derive(Clone, Debug)]
pub struct DemoResults {
    /// `summary.json` of each way, in [`DemoDirection::ways`]'s order.
    pub summaries: Vec<DemoSummary>,
    /// `summary.md`.
    pub markdown: String,
}

/// One way's runs as the trials collect them, and where its results go.
struct WayRuns {
    way: bauxite_netlab::emulator::Direction,
    /// The output directory of this way: the demo's, or its `up/` or `down/` with `--direction both`.
    out: std::path::PathBuf,
    standard: Vec<PhaseData>,
    protected: Vec<PhaseData>,
    runs: Vec<RunEntry>,
}

/// One phase of one trial as `telemetry.json` lists it: the raw series the figures
/// come from.
#[derive(Serialize)]
struct RawRun<'a> {
    trial: u32,
    phase: u32,
    critical: &'a [(f64, Option<f64>)],
    update_delay: &'a [(f64, f64)],
    video_frames: &'a [(f64, u32)],
    bulk_dropped_packets: u64,
}

/// `telemetry.json`: every phase's raw series, in trial and phase order.
#[derive(Serialize)]
struct RawTelemetry<'a> {
    runs: Vec<RawRun<'a>>,
}

impl<'a> RawTelemetry<'a> {
    fn of(standard: &'a [PhaseData], protected: &'a [PhaseData]) -> Self {
        let trials = standard.iter().zip(protected).zip(1..);
        let runs = trials
            .flat_map(|((s, p), trial)| [(trial, 1, s), (trial, 2, p)])
            .map(|(trial, phase, data)| RawRun {
                trial,
                phase,
                critical: &data.critical,
                update_delay: &data.updates,
                video_frames: &data.frames,
                bulk_dropped_packets: data.bulk_dropped_packets,
            })
            .collect();
        Self { runs }
    }
}

/// Runs every trial, then audits every recording, and writes into `options.out`:
/// `trial-NN/phase{1,2}.mcap` (with `profile.yaml` and the daemons' logs),
/// `summary.json`, `summary.md`, `telemetry.json`, `foxglove_layout.json` and the
/// charts. With `--direction both` each way's recordings and results go into `up/`
/// and `down/`, the daemons' logs stay in `trial-NN/`, and `summary.md` and
/// `summary.json` hold both ways. `progress` hears, before each phase, how many
/// phases are done and what runs next.
pub fn run(options: &DemoOptions, mut progress: impl FnMut(u64, &str)) -> Result<DemoResults, DemoError> {
    let io = DemoError::io;
    std::fs::create_dir_all(&options.out).map_err(io(options.out.display().to_string()))?;
    let ways = options.direction.ways();
    let mut collected: Vec<WayRuns> = (ways.iter())
        .map(|&way| WayRuns {
            way,
            out: match ways.len() {
                1 => options.out.clone(),
                _ => options.out.join(DemoDirection::name_of(way)),
            },
            standard: Vec::new(),
            protected: Vec::new(),
            runs: Vec::new(),
        })
        .collect();
    for trial in 1..=options.trials {
        let dir = options.out.join(format!("trial-{trial:02}"));
        for way in &collected {
            let trial_dir = way.out.join(format!("trial-{trial:02}"));
            std::fs::create_dir_all(&trial_dir).map_err(io(trial_dir.display().to_string()))?;
        }
        std::fs::create_dir_all(&dir).map_err(io(dir.display().to_string()))?;
        for phase in [1, 2] {
            if options.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(DemoError::Interrupted);
            }
            let done = u64::from(trial - 1) * 2 + u64::from(phase - 1);
            progress(done, &format!("trial {trial}/{}: phase {phase}", options.trials));
            let recording = format!("trial-{trial:02}/phase{phase}.mcap");
            let mcaps: Vec<_> = collected.iter().map(|way| way.out.join(&recording)).collect();
            let measured = run::run_phase(options, trial, phase, &dir, &mcaps)?;
            for (way, data) in collected.iter_mut().zip(measured) {
                let summary = summarize(std::slice::from_ref(&data), phase == 2);
                way.runs.push(RunEntry { trial, phase, recording: recording.clone(), summary });
                if phase == 1 { way.standard.push(data) } else { way.protected.push(data) }
            }
        }
    }
    // Phase 3: every recording audited from the file alone, and its figures compared
    // with what the live run measured.
    progress(u64::from(options.trials) * 2, "phase 3: audit of the recordings");
    let mut results = DemoResults { summaries: Vec::new(), markdown: String::new() };
    for way in &collected {
        let (summary, markdown) = write_way(options, way)?;
        if ways.len() > 1 {
            let heading = match way.way {
                bauxite_netlab::emulator::Direction::Uplink => "Uplink (robot → base)",
                bauxite_netlab::emulator::Direction::Downlink => "Downlink (base → robot), at the same time",
            };
            results.markdown.push_str(&format!("## {heading}: results in {}/\n\n", way.out.display()));
        }
        results.markdown.push_str(&markdown);
        results.summaries.push(summary);
    }
    if ways.len() > 1 {
        let write = |name: &str, bytes: Vec<u8>| {
            let path = options.out.join(name);
            std::fs::write(&path, bytes).map_err(io(path.display().to_string()))
        };
        let both = serde_json::json!({
            "direction": options.direction.to_string(),
            "up": results.summaries[0],
            "down": results.summaries[1],
        });
        write("summary.json", serde_json::to_vec_pretty(&both).expect("JSON"))?;
        write("summary.md", results.markdown.clone().into_bytes())?;
    }
    Ok(results)
}

/// Audits one way's recordings and writes its results into its directory:
/// `summary.json`, `summary.md`, `telemetry.json`, `foxglove_layout.json` and the
/// charts; returns its summary and `summary.md`.
fn write_way(options: &DemoOptions, way: &WayRuns) -> Result<(DemoSummary, String), DemoError> {
    let io = DemoError::io;
    let (standard, protected) = (&way.standard, &way.protected);
    let audits = way.runs.iter().map(|run| audit_run(&way.out, run)).collect();
    let rate = options.rate.map_or("auto".to_string(), |r| r.to_string());
    let scenario = options.scenario.measuring(way.way);
    let mut summary = DemoSummary::new(&scenario, rate.clone(), standard, protected, way.runs.clone(), audits);
    summary.direction = DemoDirection::name_of(way.way).to_string();
    let markdown = summary.markdown(&scenario);
    let write = |name: &str, bytes: Vec<u8>| {
        let path = way.out.join(name);
        std::fs::write(&path, bytes).map_err(io(path.display().to_string()))
    };
    write("summary.json", serde_json::to_vec_pretty(&summary).expect("JSON"))?;
    write("telemetry.json", serde_json::to_vec(&RawTelemetry::of(standard, protected)).expect("JSON"))?;
    write("summary.md", markdown.clone().into_bytes())?;
    write("foxglove_layout.json", serde_json::to_vec_pretty(&foxglove::layout(&layout_panels())).expect("JSON"))?;
    let label = match way.way {
        bauxite_netlab::emulator::Direction::Uplink => format!("Bauxite (rate {rate})"),
        bauxite_netlab::emulator::Direction::Downlink => format!("Bauxite on the robot's ingress (rate {rate})"),
    };
    let targets = run::protected_profile(options.rate, options.direction)?.into_profile().targets;
    let drop_label = match &scenario.link {
        None => format!("link drops to {}", scenario.drop().1),
        Some(_) => "first link change".to_string(),
    };
    charts::write(&way.out, standard, protected, &label, &drop_label, &targets)?;
    if let (Some(s), Some(p)) =
        (standard.first().and_then(|d| d.link.as_ref()), protected.first().and_then(|d| d.link.as_ref()))
    {
        rates_chart(&s.trace, &p.trace, &s.facts, "trial 1").write(&way.out.join("rates"))?;
        latency_chart(&s.trace, &p.trace, "trial 1").write(&way.out.join("critical_latency_floor"))?;
    }
    Ok((summary, markdown))
}

/// Audits one run's recording and compares its figures with the live ones. One
/// unreadable recording is reported as such; it does not cost the run's results.
fn audit_run(out: &std::path::Path, run: &RunEntry) -> AuditEntry {
    match audit::audit(&out.join(&run.recording)) {
        Ok(report) => AuditEntry {
            recording: run.recording.clone(),
            pass: report.pass,
            reproduces_live_figures: report.summary == run.summary,
            failed_checks: report.checks.iter().filter(|c| !c.pass).map(|c| c.name.clone()).collect(),
        },
        Err(e) => AuditEntry {
            recording: run.recording.clone(),
            pass: false,
            reproduces_live_figures: false,
            failed_checks: vec![format!("unreadable: {e}")],
        },
    }
}

/// The Foxglove layout for the demo's recordings: latency per lane, the control
/// loop's update delay, throughput per lane, the shaper's state over time, and the
/// raw run and shaper messages.
pub fn layout_panels() -> Vec<Vec<Panel>> {
    let plot = |title: &str, paths: &[&str]| Panel::Plot {
        title: title.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
    };
    vec![
        vec![
            plot(
                "Latency per lane (ms)",
                &["/bauxite/lanes/critical/latency.latency_ms", "/bauxite/lanes/telemetry/latency.latency_ms"],
            ),
            plot("Correction update delay (ms)", &["/bauxite/control/update_delay.delay_ms"]),
            plot(
                "Throughput per lane (bit/s)",
                &[
                    "/bauxite/lanes/bulk/counters.bitrate_bps",
                    "/bauxite/lanes/telemetry/counters.bitrate_bps",
                    "/bauxite/lanes/critical/counters.bitrate_bps",
                ],
            ),
        ],
        vec![
            Panel::StateTransitions {
                paths: vec!["/bauxite/shaper/state.congested".into(), "/bauxite/shaper/state.daemon".into()],
            },
            plot("Shaper: link rate (bit/s)", &["/bauxite/shaper/state.link_rate_bps"]),
            plot("Bulk: early-drop probability", &["/bauxite/shaper/state.lanes[:]{droppable==true}.drop_probability"]),
            Panel::RawMessages { topic: "/bauxite/demo/phase".into() },
            Panel::RawMessages { topic: "/bauxite/shaper/state".into() },
        ],
    ]
}

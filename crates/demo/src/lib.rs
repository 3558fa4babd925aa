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

use std::fmt::Write as _;

use bauxite_telemetry::foxglove::{self, Panel};
use serde_json::json;

use analysis::{CHECKPOINTS, PhaseData, PhaseSummary, checkpoint, summarize};
pub use audit::{AuditError, AuditReport, audit};
pub use run::{DemoError, DemoOptions};

/// Runs every trial, then audits every recording, and writes into `options.out`:
/// `trial-NN/phase{1,2}.mcap` (with `profile.yaml` and the daemons' logs),
/// `summary.json`, `summary.md`, `telemetry.json`, `foxglove_layout.json` and the
/// charts. `progress` hears, before each phase, how many phases are done and what
/// runs next.
pub fn run(options: &DemoOptions, mut progress: impl FnMut(u64, &str)) -> Result<serde_json::Value, DemoError> {
    let io = |what: String| move |e| DemoError::Io(what.clone(), e);
    std::fs::create_dir_all(&options.out).map_err(io(options.out.display().to_string()))?;
    let (mut standard, mut protected) = (Vec::new(), Vec::new());
    let mut raw = Vec::new();
    let mut runs = Vec::new();
    for trial in 1..=options.trials {
        let dir = options.out.join(format!("trial-{trial:02}"));
        std::fs::create_dir_all(&dir).map_err(io(dir.display().to_string()))?;
        for phase in [1, 2] {
            if options.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(DemoError::Interrupted);
            }
            let done = u64::from(trial - 1) * 2 + u64::from(phase - 1);
            progress(done, &format!("trial {trial}/{}: phase {phase}", options.trials));
            let data = run::run_phase(options, trial, phase, &dir, &dir.join(format!("phase{phase}.mcap")))?;
            let recording = format!("trial-{trial:02}/phase{phase}.mcap");
            runs.push(json!({"trial": trial, "phase": phase, "recording": recording, "summary": summarize(std::slice::from_ref(&data), phase == 2)}));
            raw.push(json!({
                "trial": trial,
                "phase": phase,
                "critical": data.critical,
                "update_delay": data.updates,
                "video_frames": data.frames,
                "bulk_dropped_packets": data.bulk_dropped_packets,
            }));
            if phase == 1 { standard.push(data) } else { protected.push(data) }
        }
    }
    // Phase 3: every recording audited from the file alone, and its figures compared
    // with what the live run measured.
    progress(u64::from(options.trials) * 2, "phase 3: audit of the recordings");
    let mut audits = Vec::new();
    for run in &runs {
        let file = options.out.join(run["recording"].as_str().expect("a path"));
        // One unreadable recording is reported as such; it does not cost the run's results.
        audits.push(match audit::audit(&file) {
            Ok(report) => json!({
                "recording": run["recording"],
                "pass": report.pass,
                "reproduces_live_figures": serde_json::to_value(&report.summary).expect("JSON") == run["summary"],
                "failed_checks": report.checks.iter().filter(|c| !c.pass).map(|c| c.name.clone()).collect::<Vec<_>>(),
            }),
            Err(e) => json!({
                "recording": run["recording"],
                "pass": false,
                "reproduces_live_figures": false,
                "failed_checks": [format!("unreadable: {e}")],
            }),
        });
    }
    let summary = json!({
        "trials": options.trials,
        "audit": audits,
        "link": {"before_mbps": options.fast.mbps(), "after_mbps": options.slow.mbps(), "drop_at_s": options.drop_at.as_secs_f64()},
        "protected_rate": options.rate.map_or("auto".to_string(), |r| r.to_string()),
        "phases": {"standard": summarize(&standard, false), "protected": summarize(&protected, true)},
        "time_series_ms": CHECKPOINTS.iter().map(|t| json!({
            "t_s": t,
            "standard": checkpoint(&standard, *t),
            "protected": checkpoint(&protected, *t),
        })).collect::<Vec<_>>(),
        "runs": runs,
    });
    let write = |name: &str, bytes: Vec<u8>| {
        let path = options.out.join(name);
        std::fs::write(&path, bytes).map_err(io(path.display().to_string()))
    };
    write("summary.json", serde_json::to_vec_pretty(&summary).expect("JSON"))?;
    write("telemetry.json", serde_json::to_vec(&json!({"runs": raw})).expect("JSON"))?;
    write("summary.md", (markdown(options, &standard, &protected) + &audit_markdown(&audits)).into_bytes())?;
    write("foxglove_layout.json", serde_json::to_vec_pretty(&foxglove::layout(&layout_panels())).expect("JSON"))?;
    let label = format!("Bauxite (rate {})", options.rate.map_or("auto".into(), |r| r.to_string()));
    let targets = run::protected_profile(options.rate).targets;
    charts::write(&options.out, &standard, &protected, &label, options.slow, &targets)?;
    Ok(summary)
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
                paths: vec!["/bauxite/shaper/state.congested".into(), "/bauxite/shaper/state.active".into()],
            },
            plot("Shaper: link rate (bit/s)", &["/bauxite/shaper/state.link_rate_bps"]),
            plot("Bulk: early-drop probability", &["/bauxite/shaper/state.bulk_drop_probability"]),
            Panel::RawMessages { topic: "/bauxite/demo/phase".into() },
            Panel::RawMessages { topic: "/bauxite/shaper/state".into() },
        ],
    ]
}

/// Phase 3's table: each recording's verdict and whether the audit reproduced the live figures.
fn audit_markdown(audits: &[serde_json::Value]) -> String {
    let mut out = String::from("\n## Phase 3: audit of the recordings (`bauxite audit FILE`)\n\n");
    out.push_str("| Recording | Verdict | Figures recomputed from the file equal the live ones | Failed checks |\n");
    out.push_str("| :--- | :---: | :---: | :--- |\n");
    for a in audits {
        let failed: Vec<&str> =
            a["failed_checks"].as_array().into_iter().flatten().filter_map(|c| c.as_str()).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            a["recording"].as_str().unwrap_or("?"),
            if a["pass"] == true { "pass" } else { "FAIL" },
            if a["reproduces_live_figures"] == true { "yes" } else { "NO" },
            if failed.is_empty() { "—".to_string() } else { failed.join(", ") }
        );
    }
    out
}

fn markdown(options: &DemoOptions, standard: &[PhaseData], protected: &[PhaseData]) -> String {
    let (s, p): (PhaseSummary, PhaseSummary) = (summarize(standard, false), summarize(protected, true));
    let ms = |v: &serde_json::Value, k: &str| format!("{:.2} ms", v[k].as_f64().unwrap_or(f64::NAN));
    let mut out = String::new();
    let rate = options.rate.map_or("auto".into(), |r| r.to_string());
    let _ = writeln!(
        out,
        "# Bauxite demo: {} trials, link {} → {} at {} s, phase 2 rate {rate}\n",
        options.trials,
        options.fast,
        options.slow,
        options.drop_at.as_secs_f64()
    );
    let _ = writeln!(out, "Figures from one second after the drop to the end of each phase, pooled over trials.\n");
    let _ = writeln!(out, "| Metric | Standard Linux stack (phase 1) | Bauxite protected (phase 2) |");
    let _ = writeln!(out, "| :--- | :---: | :---: |");
    let _ = writeln!(out, "| Available bandwidth | {} | {} |", options.slow, options.slow);
    for (label, key) in
        [("Critical latency, mean", "mean"), ("Critical latency, p99", "p99"), ("Critical latency, max", "max")]
    {
        let _ =
            writeln!(out, "| {label} | {} | {} |", ms(&s.critical_latency_ms, key), ms(&p.critical_latency_ms, key));
    }
    let _ = writeln!(
        out,
        "| Critical latency from the drop itself, p99 | {} | {} |",
        ms(&s.critical_latency_from_drop_ms, "p99"),
        ms(&p.critical_latency_from_drop_ms, "p99")
    );
    for (label, key) in [("Correction update delay, mean", "mean"), ("Correction update delay, p99", "p99")] {
        let _ = writeln!(out, "| {label} | {} | {} |", ms(&s.update_delay_ms, key), ms(&p.update_delay_ms, key));
    }
    let _ = writeln!(out, "| Critical loss | {:.2} % | {:.2} % |", s.critical_loss_pct, p.critical_loss_pct);
    let _ = writeln!(
        out,
        "| Bulk (video) throughput | {:.3} Mbit/s | {:.3} Mbit/s |",
        s.bulk_throughput_mbps, p.bulk_throughput_mbps
    );
    let _ = writeln!(out, "| Video frames delivered | {:.1} fps | {:.1} fps |", s.video_fps, p.video_fps);
    let _ = writeln!(out, "| Bulk discarded early | {} | {} |", s.bulk_dropped_packets, p.bulk_dropped_packets);
    let _ = writeln!(
        out,
        "| Time from the drop until critical < 2 ms | — | {:.0} ms |",
        p.time_to_protect_ms.unwrap_or(0.0)
    );
    let _ = writeln!(out, "\n## Critical latency over time (mean ± sd across trials)\n");
    let _ = writeln!(out, "| Time (s) | Standard stack (ms) | Bauxite protected (ms) |");
    let _ = writeln!(out, "| :---: | :---: | :---: |");
    let cell = |v: Option<(f64, f64)>| v.map_or("—".into(), |(m, sd)| format!("{m:.2} ± {sd:.2}"));
    for t in CHECKPOINTS {
        let _ = writeln!(out, "| {t:.1} | {} | {} |", cell(checkpoint(standard, t)), cell(checkpoint(protected, t)));
    }
    out
}

//! The study's charts: the chart series ([`crate::series`]) drawn with the shared
//! chart module of `bauxite-telemetry`, PNG and SVG, next to the data they draw
//! (as the demo's are in its crate).

use std::path::{Path, PathBuf};

use bauxite_telemetry::chart::{BarChart, ChartError, Formats, Heatmap, LineChart, Series};

use crate::series::{Bar, Cell, ChartData, Line};
use crate::study::Figure;
use crate::util::{first_seen, on_off};
use bauxite_core::OrchestratorLane;

fn mean(f: &Figure) -> f64 {
    f.mean.unwrap_or(f64::NAN)
}

/// Bars per scheduler, one group per DSCP mode.
fn bars(title: &str, y_label: &str, bars: &[Bar]) -> BarChart {
    let order = first_seen(bars.iter().map(|b| b.scheduler));
    let group = |dscp: bool| {
        let values = order
            .iter()
            .map(|s| bars.iter().find(|b| b.scheduler == *s && b.dscp == dscp).map_or(f64::NAN, |b| mean(&b.value)))
            .collect();
        (format!("DSCP {}", on_off(dscp)), values)
    };
    BarChart {
        title: title.into(),
        y_label: y_label.into(),
        categories: order.iter().map(|s| s.label().to_string()).collect(),
        groups: vec![group(false), group(true)],
    }
}

/// How a heatmap reads: its unit, which end of its scale is good, and how many
/// decimals its cells print.
#[derive(Clone, Copy)]
struct Scale {
    unit: &'static str,
    higher_is_better: bool,
    decimals: usize,
}

/// Delay and loss: lower is better, one decimal (as in the Markdown tables).
const fn lower_is_better(unit: &'static str) -> Scale {
    Scale { unit, higher_is_better: false, decimals: 1 }
}

/// Jain's index: 1 is perfectly fair, so higher is better; two decimals, since
/// the values that matter sit between 0.9 and 1.
const JAIN: Scale = Scale { unit: "", higher_is_better: true, decimals: 2 };

/// Schedulers down, classes across.
fn heatmap(title: &str, scale: Scale, cells: &[Cell]) -> Heatmap {
    let rows = first_seen(cells.iter().map(|c| c.scheduler));
    let classes = OrchestratorLane::ALL;
    Heatmap {
        title: title.into(),
        rows: rows.iter().map(|s| s.label().to_string()).collect(),
        columns: classes.iter().map(|c| c.name().to_string()).collect(),
        values: rows
            .iter()
            .map(|s| {
                classes
                    .iter()
                    .map(|c| {
                        cells.iter().find(|x| x.scheduler == *s && x.class == *c).map_or(f64::NAN, |x| mean(&x.value))
                    })
                    .collect()
            })
            .collect(),
        unit: scale.unit.into(),
        higher_is_better: scale.higher_is_better,
        decimals: scale.decimals,
    }
}

/// One line per scheduler × DSCP, with the 95 % interval as a band when several seeds ran.
fn sweep(title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> LineChart {
    let series = lines
        .iter()
        .map(|l| {
            let points: Vec<(f64, f64)> =
                l.points.iter().filter(|(_, f)| f.mean.is_some()).map(|(x, f)| (*x, mean(f))).collect();
            let band = l.points.iter().filter_map(|(x, f)| Some((*x, f.mean? - f.ci95?, f.mean? + f.ci95?))).collect();
            Series { name: format!("{} DSCP {}", l.scheduler.label(), on_off(l.dscp)), points, band, max_step: None }
        })
        .collect();
    LineChart { title: title.into(), x_label: x_label.into(), y_label: y_label.into(), series, ..LineChart::default() }
}

/// Writes every chart the data has series for into `dir` as `formats`; returns the files.
pub fn write(dir: &Path, data: &ChartData, formats: Formats) -> Result<Vec<PathBuf>, ChartError> {
    let mut files = Vec::new();
    if !data.control_delay.is_empty() {
        files.extend(
            bars("Control delay per scheduler", "mean delay (ms)", &data.control_delay)
                .write_as(&dir.join("control_delay"), formats)?,
        );
        files.extend(
            bars("Control loss per scheduler", "loss (%)", &data.control_loss)
                .write_as(&dir.join("control_loss"), formats)?,
        );
    }
    if !data.heatmap_delay.is_empty() {
        files.extend(
            heatmap("Delay per class (ms; DSCP on where both modes ran)", lower_is_better("ms"), &data.heatmap_delay)
                .write_as(&dir.join("heatmap_delay"), formats)?,
        );
        files.extend(
            heatmap("Loss per class (%; DSCP on where both modes ran)", lower_is_better("%"), &data.heatmap_loss)
                .write_as(&dir.join("heatmap_loss"), formats)?,
        );
        let jain = "Jain fairness per class";
        files.extend(
            heatmap(&format!("{jain}: throughput"), JAIN, &data.fairness_throughput)
                .write_as(&dir.join("fairness_throughput"), formats)?,
        );
        files.extend(
            heatmap(&format!("{jain}: inverse delay"), JAIN, &data.fairness_inverse_delay)
                .write_as(&dir.join("fairness_inverse_delay"), formats)?,
        );
    }
    let sweeps = [
        ("load", "background load per direction (Mbit/s)", &data.load_delay, &data.load_loss),
        ("followers", "followers", &data.followers_delay, &data.followers_loss),
        ("queue", "queue limit (packets)", &data.queue_delay, &data.queue_loss),
        ("access", "followers' access link (Mbit/s)", &data.access_delay, &data.access_loss),
        ("burst", "background burst length (ms; same mean rate)", &data.burst_delay, &data.burst_loss),
        ("tcp_cross", "TCP connections per direction", &data.tcp_cross_delay, &data.tcp_cross_loss),
    ];
    for (name, x_label, delay, loss) in sweeps {
        if delay.is_empty() {
            continue;
        }
        files.extend(
            sweep(&format!("Control delay: {name} sweep"), x_label, "mean delay (ms)", delay)
                .write_as(&dir.join(format!("{name}_sweep_delay")), formats)?,
        );
        files.extend(
            sweep(&format!("Control loss: {name} sweep"), x_label, "loss (%)", loss)
                .write_as(&dir.join(format!("{name}_sweep_loss")), formats)?,
        );
    }
    if !data.deadline_miss.is_empty() {
        files.extend(
            sweep(
                "Control packets lost or late for the deadline",
                "background load per direction (Mbit/s)",
                "missed (%)",
                &data.deadline_miss,
            )
            .write_as(&dir.join("deadline_sweep_miss"), formats)?,
        );
    }
    if !data.wireless_delay.is_empty() {
        let x_label = "the bottleneck's link (1, 2, …: the study's --wireless-values, in order)";
        files.extend(
            sweep("Control delay: wireless sweep", x_label, "mean delay (ms)", &data.wireless_delay)
                .write_as(&dir.join("wireless_sweep_delay"), formats)?,
        );
        files.extend(
            sweep("Control loss: wireless sweep", x_label, "loss (%)", &data.wireless_loss)
                .write_as(&dir.join("wireless_sweep_loss"), formats)?,
        );
    }
    if !data.tcp_cross_tcp.is_empty() {
        files.extend(
            sweep(
                "TCP cross traffic's throughput beside UDP",
                "TCP connections per direction",
                "TCP throughput, both directions (Mbit/s)",
                &data.tcp_cross_tcp,
            )
            .write_as(&dir.join("tcp_cross_sweep_tcp"), formats)?,
        );
    }
    Ok(files)
}

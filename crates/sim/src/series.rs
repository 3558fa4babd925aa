//! The data series the study's charts draw, extracted from the aggregated class
//! rows so that a plotting module needs no knowledge of families or tables.
//!
//! Every value is a [`Figure`] (mean over seeds and, with several seeds, a 95 %
//! half-width for error bars). Series are in plan order: schedulers in the
//! study's order, DSCP off before on, swept values ascending as configured.

use crate::metrics::FIGURES;
use crate::scheduler::Scheduler;
use crate::study::{ClassSummary, Family, Figure, StudyResult};
use bauxite_core::OrchestratorLane;

/// One bar: a scheduler × DSCP mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Scheduler.
    pub scheduler: Scheduler,
    /// DSCP marking on.
    pub dscp: bool,
    /// The value.
    pub value: Figure,
}

/// One heatmap cell: a scheduler × class.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Scheduler (rows).
    pub scheduler: Scheduler,
    /// Class (columns).
    pub class: OrchestratorLane,
    /// The value.
    pub value: Figure,
}

/// One line of a sweep chart: a scheduler × DSCP mode over the swept values.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Scheduler.
    pub scheduler: Scheduler,
    /// DSCP marking on.
    pub dscp: bool,
    /// (swept value, figure) in sweep order.
    pub points: Vec<(f64, Figure)>,
}

/// Everything the study's charts need.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChartData {
    /// Control delay per scheduler × DSCP at the comparison point (ms).
    pub control_delay: Vec<Bar>,
    /// Control loss per scheduler × DSCP at the comparison point (%).
    pub control_loss: Vec<Bar>,
    /// Delay per scheduler × class at the comparison point, DSCP on where it ran (ms).
    pub heatmap_delay: Vec<Cell>,
    /// Loss per scheduler × class, DSCP on, at the comparison point (%).
    pub heatmap_loss: Vec<Cell>,
    /// Jain index of throughput per scheduler × class, DSCP on.
    pub fairness_throughput: Vec<Cell>,
    /// Jain index of inverse delay per scheduler × class, DSCP on.
    pub fairness_inverse_delay: Vec<Cell>,
    /// Control delay against background Mbit/s per direction.
    pub load_delay: Vec<Line>,
    /// Control loss against background Mbit/s per direction.
    pub load_loss: Vec<Line>,
    /// Control delay against follower count.
    pub followers_delay: Vec<Line>,
    /// Control loss against follower count.
    pub followers_loss: Vec<Line>,
    /// Control delay against queue limit (packets).
    pub queue_delay: Vec<Line>,
    /// Control loss against queue limit (packets).
    pub queue_loss: Vec<Line>,
    /// Control delay against the followers' access-link rate (Mbit/s).
    pub access_delay: Vec<Line>,
    /// Control loss against the followers' access-link rate (Mbit/s).
    pub access_loss: Vec<Line>,
    /// Control delay against the background's burst length (ms).
    pub burst_delay: Vec<Line>,
    /// Control loss against the background's burst length (ms).
    pub burst_loss: Vec<Line>,
    /// Control packets lost or late for their deadline against background Mbit/s (%).
    pub deadline_miss: Vec<Line>,
    /// Control delay against TCP connections per direction.
    pub tcp_cross_delay: Vec<Line>,
    /// Control loss against TCP connections per direction.
    pub tcp_cross_loss: Vec<Line>,
    /// The background's TCP throughput (Mbit/s) against TCP connections per direction.
    pub tcp_cross_tcp: Vec<Line>,
    /// Control delay against the wireless family's link (its number, from 1).
    pub wireless_delay: Vec<Line>,
    /// Control loss against the wireless family's link (its number, from 1).
    pub wireless_loss: Vec<Line>,
}

fn figure_index(name: &str) -> usize {
    FIGURES.iter().position(|f| *f == name).expect("a figure name")
}

fn bars(rows: &[&ClassSummary], figure: &str) -> Vec<Bar> {
    let i = figure_index(figure);
    rows.iter().map(|r| Bar { scheduler: r.scheduler, dscp: r.dscp, value: r.figures[i] }).collect()
}

fn cells(rows: &[&ClassSummary], figure: &str) -> Vec<Cell> {
    let i = figure_index(figure);
    rows.iter().map(|r| Cell { scheduler: r.scheduler, class: r.class, value: r.figures[i] }).collect()
}

fn lines(study: &StudyResult, family: Family, figure: &str, x: &dyn Fn(&ClassSummary) -> f64) -> Vec<Line> {
    let i = figure_index(figure);
    lines_of(study, (family, OrchestratorLane::Control), &|r| r.figures[i], x)
}

/// A class's `value` against `x`, one line per scheduler × DSCP.
fn lines_of(
    study: &StudyResult,
    (family, class): (Family, OrchestratorLane),
    value: &dyn Fn(&ClassSummary) -> Figure,
    x: &dyn Fn(&ClassSummary) -> f64,
) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for r in study.rows(family, class) {
        let point = (x(r), value(r));
        match out.iter_mut().find(|l| l.scheduler == r.scheduler && l.dscp == r.dscp) {
            Some(line) => line.points.push(point),
            None => out.push(Line { scheduler: r.scheduler, dscp: r.dscp, points: vec![point] }),
        }
    }
    out
}

/// The wireless family's x: its link's number in the study's list, from 1 (the
/// chart's axis names them).
fn link_number(study: &StudyResult) -> impl Fn(&ClassSummary) -> f64 + '_ {
    |r| study.config.wireless_links.iter().position(|l| *l == r.link).map_or(0.0, |i| (i + 1) as f64)
}

/// Extracts the chart series of `study`; families that did not run give empty series.
/// The comparison charts use the `compare` family, or the `run` family for `sim run`.
pub fn chart_data(study: &StudyResult) -> ChartData {
    let families = study.families();
    let compare = [Family::Compare, Family::Run].into_iter().find(|f| families.contains(f));
    let (control, dscp_on): (Vec<&ClassSummary>, Vec<&ClassSummary>) = match compare {
        Some(family) => (study.rows(family, OrchestratorLane::Control).collect(), {
            // DSCP on where both modes ran (the seed's heatmaps); a single
            // DSCP-off run still gets its own.
            let rows = || study.classes.iter().filter(move |r| r.family == family);
            if rows().any(|r| r.dscp) { rows().filter(|r| r.dscp).collect() } else { rows().collect() }
        }),
        None => (Vec::new(), Vec::new()),
    };
    ChartData {
        control_delay: bars(&control, "delay_ms"),
        control_loss: bars(&control, "loss_pct"),
        heatmap_delay: cells(&dscp_on, "delay_ms"),
        heatmap_loss: cells(&dscp_on, "loss_pct"),
        fairness_throughput: cells(&dscp_on, "jain_throughput"),
        fairness_inverse_delay: cells(&dscp_on, "jain_inverse_delay"),
        load_delay: lines(study, Family::Load, "delay_ms", &|r| r.bg_mbps),
        load_loss: lines(study, Family::Load, "loss_pct", &|r| r.bg_mbps),
        followers_delay: lines(study, Family::Followers, "delay_ms", &|r| r.followers as f64),
        followers_loss: lines(study, Family::Followers, "loss_pct", &|r| r.followers as f64),
        queue_delay: lines(study, Family::Queue, "delay_ms", &|r| r.queue_packets as f64),
        queue_loss: lines(study, Family::Queue, "loss_pct", &|r| r.queue_packets as f64),
        access_delay: lines(study, Family::Access, "delay_ms", &|r| r.follower_access_mbps),
        access_loss: lines(study, Family::Access, "loss_pct", &|r| r.follower_access_mbps),
        burst_delay: lines(study, Family::Burst, "delay_ms", &|r| r.bg_burst_ms),
        burst_loss: lines(study, Family::Burst, "loss_pct", &|r| r.bg_burst_ms),
        deadline_miss: lines_of(study, (Family::Deadline, OrchestratorLane::Control), &|r| r.deadline_miss_pct, &|r| {
            r.bg_mbps
        }),
        tcp_cross_delay: lines(study, Family::TcpCross, "delay_ms", &|r| f64::from(r.tcp_flows)),
        tcp_cross_loss: lines(study, Family::TcpCross, "loss_pct", &|r| f64::from(r.tcp_flows)),
        tcp_cross_tcp: lines_of(
            study,
            (Family::TcpCross, OrchestratorLane::Background),
            &|r| r.tcp_throughput_mbps,
            &|r| f64::from(r.tcp_flows),
        ),
        wireless_delay: lines(study, Family::Wireless, "delay_ms", &link_number(study)),
        wireless_loss: lines(study, Family::Wireless, "loss_pct", &link_number(study)),
    }
}

//! Charts of one run on a link that varies, drawn alike by `bauxite sim robot` and
//! `bauxite demo --link` from core's figures' inputs: capacity, the shaper's rate
//! and the delivered rate over time; critical latency against the link's floor.

use bauxite_core::figures::{BIN_NS, CriticalMessage, LinkFacts, PhaseTrace};

use crate::chart::{LineChart, Series};

/// The shaper's rate in force at `t_ns` from its changes `(ns, bit/s)`.
pub fn rate_at(changes: &[(u64, u64)], t_ns: u64) -> Option<f64> {
    changes.iter().take_while(|(at, _)| *at <= t_ns).last().map(|(_, r)| *r as f64)
}

/// Capacity, delivered rate of both phases and the shaper's rate, per bin; `run`
/// names the run shown (e.g. `first seed`).
pub fn rates_chart(standard: &PhaseTrace, protected: &PhaseTrace, link: &LinkFacts, run: &str) -> LineChart {
    let bin_s = BIN_NS as f64 / 1e9;
    let mbps = |bytes: f64| bytes * 8.0 / bin_s / 1e6;
    let per_bin = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
        (0..link.capacity_bytes.len()).map(|b| (b as f64 * bin_s, f(b))).filter(|(_, y)| y.is_finite()).collect()
    };
    let delivered = |t: &PhaseTrace, b: usize| {
        mbps((t.video_bytes.get(b).unwrap_or(&0) + t.other_bytes.get(b).unwrap_or(&0)) as f64)
    };
    let mut series = vec![
        Series { name: "capacity".into(), points: per_bin(&|b| mbps(link.capacity_bytes[b])), ..Series::default() },
        Series {
            name: "delivered, standard stack".into(),
            points: per_bin(&|b| delivered(standard, b)),
            ..Series::default()
        },
        Series {
            name: "delivered, Bauxite".into(),
            points: per_bin(&|b| delivered(protected, b)),
            ..Series::default()
        },
    ];
    if !protected.link_rate.is_empty() {
        let points = per_bin(&|b| rate_at(&protected.link_rate, b as u64 * BIN_NS).unwrap_or(f64::NAN) / 1e6);
        series.push(Series { name: "shaper's link rate".into(), points, ..Series::default() });
    }
    LineChart {
        title: format!("Capacity, shaper rate and delivered rate ({run})"),
        x_label: "time (s)".into(),
        y_label: "Mbit/s".into(),
        series,
        markers: link.drops_ns.iter().map(|&d| (d as f64 / 1e9, "drop".to_string())).collect(),
        ..LineChart::default()
    }
}

/// Critical latency of both phases and the link's floor, per message; `run` names
/// the run shown.
pub fn latency_chart(standard: &PhaseTrace, protected: &PhaseTrace, run: &str) -> LineChart {
    let points = |t: &PhaseTrace, f: &dyn Fn(&CriticalMessage) -> Option<u64>| -> Vec<(f64, f64)> {
        t.critical.iter().filter_map(|m| f(m).map(|ns| (m.sent_ns as f64 / 1e9, (ns as f64 / 1e6).max(0.01)))).collect()
    };
    LineChart {
        title: format!("Critical latency and the link's floor ({run})"),
        x_label: "send time (s)".into(),
        y_label: "latency (ms)".into(),
        log_y: true,
        series: vec![
            Series { name: "standard stack".into(), points: points(standard, &|m| m.latency_ns), ..Series::default() },
            Series { name: "Bauxite".into(), points: points(protected, &|m| m.latency_ns), ..Series::default() },
            Series { name: "link floor".into(), points: points(protected, &|m| Some(m.floor_ns)), ..Series::default() },
        ],
        references: vec![(2.0, "2 ms".into())],
        ..LineChart::default()
    }
}

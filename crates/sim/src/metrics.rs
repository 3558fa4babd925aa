//! From flows to the seed's class figures: per-class aggregation and Jain's
//! fairness index. Means and the Student-t confidence intervals over seeds are
//! `bauxite_core::stats`'s, shared with every other part.

use bauxite_core::stats::mean;
use bauxite_qdisc::Nanos;
use serde::{Deserialize, Serialize};

use crate::monitor::{FlowStats, TCP};
use bauxite_core::OrchestratorLane;

/// One flow of a finished run, with names instead of node ids.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    /// Its traffic class.
    pub class: OrchestratorLane,
    /// Source node name.
    pub src: String,
    /// Destination node name.
    pub dst: String,
    /// Source UDP port.
    pub src_port: u16,
    /// Destination UDP port.
    pub dst_port: u16,
    /// DSCP it carried.
    pub dscp: u8,
    /// IP protocol number: 17 UDP, 6 TCP.
    pub protocol: u8,
    /// How long its source was sending.
    pub active_ns: Nanos,
    /// Its application's deadline, if it has one.
    pub deadline: Option<Nanos>,
    /// The flow monitor's counters.
    pub stats: FlowStats,
}

impl FlowRecord {
    /// Received IP bits per second over the source's active time, in Mbit/s.
    pub fn throughput_mbps(&self) -> f64 {
        self.stats.throughput_bps(self.active_ns) / 1e6
    }

    /// Mean delay in ms, if anything arrived.
    pub fn delay_ms(&self) -> Option<f64> {
        self.stats.mean_delay_ns().map(|ns| ns / 1e6)
    }

    /// Mean jitter in ms, if two packets arrived.
    pub fn jitter_ms(&self) -> Option<f64> {
        self.stats.mean_jitter_ns().map(|ns| ns / 1e6)
    }
}

/// The figures of one traffic class in one run: the columns of `classes.csv`.
/// A shard's `summary.json` carries them to `bauxite sim merge` (JSON numbers
/// read back to the same bits: serde_json's `float_roundtrip`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassRow {
    /// The class.
    pub class: OrchestratorLane,
    /// Flows in the class.
    pub flows: u64,
    /// Packets sent, all flows.
    pub tx_packets: u64,
    /// Packets received, all flows.
    pub rx_packets: u64,
    /// Lost packets over sent packets, all flows together, percent.
    pub loss_pct: f64,
    /// Mean over the flows that received anything of each flow's mean delay, ms.
    pub delay_ms: Option<f64>,
    /// Mean over the flows that received two or more packets of each flow's mean jitter, ms.
    pub jitter_ms: Option<f64>,
    /// Sum over flows of received IP bits over the source's active time, Mbit/s.
    pub throughput_mbps: f64,
    /// Jain's index of the flows' throughputs.
    pub jain_throughput: Option<f64>,
    /// Jain's index of the flows' inverse mean delays (flows that received anything).
    pub jain_inverse_delay: Option<f64>,
    /// With a deadline: packets lost or later than it over packets sent, all flows
    /// together, percent.
    pub deadline_miss_pct: Option<f64>,
    /// With TCP flows in the class: their throughput, Mbit/s (part of
    /// `throughput_mbps`), the share TCP cross traffic gets beside UDP.
    #[serde(default)]
    pub tcp_throughput_mbps: Option<f64>,
}

/// The figures of a class row, by column name, in column order.
pub const FIGURES: [&str; 6] =
    ["loss_pct", "delay_ms", "jitter_ms", "throughput_mbps", "jain_throughput", "jain_inverse_delay"];

impl ClassRow {
    /// The figures in [`FIGURES`] order.
    pub fn figures(&self) -> [Option<f64>; 6] {
        [
            Some(self.loss_pct),
            self.delay_ms,
            self.jitter_ms,
            Some(self.throughput_mbps),
            self.jain_throughput,
            self.jain_inverse_delay,
        ]
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`: 1 when all equal, 1/n when one takes
/// everything. `None` for no values or all zeros (fairness of nothing is undefined).
pub fn jain(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    (!values.is_empty() && squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

/// One row per class present among `flows`, in class order.
pub fn class_rows(flows: &[FlowRecord]) -> Vec<ClassRow> {
    OrchestratorLane::ALL
        .iter()
        .filter_map(|&class| {
            let members: Vec<&FlowRecord> = flows.iter().filter(|f| f.class == class).collect();
            if members.is_empty() {
                return None;
            }
            let tx: u64 = members.iter().map(|f| f.stats.tx_packets).sum();
            let rx: u64 = members.iter().map(|f| f.stats.rx_packets).sum();
            let delays: Vec<f64> = members.iter().filter_map(|f| f.delay_ms()).collect();
            let jitters: Vec<f64> = members.iter().filter_map(|f| f.jitter_ms()).collect();
            let throughputs: Vec<f64> = members.iter().map(|f| f.throughput_mbps()).collect();
            let inverse: Vec<f64> = delays.iter().map(|d| 1.0 / d).collect();
            let late: u64 = members.iter().map(|f| f.stats.late_packets).sum();
            let has_deadline = members.iter().any(|f| f.deadline.is_some());
            let tcp: Vec<f64> = members.iter().filter(|f| f.protocol == TCP).map(|f| f.throughput_mbps()).collect();
            Some(ClassRow {
                class,
                flows: members.len() as u64,
                tx_packets: tx,
                rx_packets: rx,
                loss_pct: if tx == 0 { 0.0 } else { 100.0 * (tx - rx) as f64 / tx as f64 },
                delay_ms: mean(&delays),
                jitter_ms: mean(&jitters),
                throughput_mbps: throughputs.iter().sum(),
                jain_throughput: jain(&throughputs),
                jain_inverse_delay: jain(&inverse),
                deadline_miss_pct: has_deadline
                    .then(|| if tx == 0 { 0.0 } else { 100.0 * (tx - rx + late) as f64 / tx as f64 }),
                tcp_throughput_mbps: (!tcp.is_empty()).then(|| tcp.iter().sum()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(class: OrchestratorLane, tx: u64, rx: u64, delay_ms: u64) -> FlowRecord {
        FlowRecord {
            class,
            src: "a".into(),
            dst: "b".into(),
            src_port: 1,
            dst_port: 2,
            dscp: 0,
            protocol: crate::monitor::UDP,
            active_ns: 1_000_000_000,
            deadline: None,
            stats: FlowStats {
                tx_packets: tx,
                rx_packets: rx,
                rx_bytes: rx * 100,
                delay_sum: rx * delay_ms * 1_000_000,
                ..FlowStats::default()
            },
        }
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }

    #[test]
    fn class_rows_pool_loss_and_average_flow_means() {
        let flows = [
            flow(OrchestratorLane::Control, 100, 100, 10),
            flow(OrchestratorLane::Control, 100, 50, 30),
            flow(OrchestratorLane::Bulk, 10, 0, 0),
        ];
        let rows = class_rows(&flows);
        assert_eq!(rows.len(), 2);
        let c = &rows[0];
        assert_eq!((c.class, c.flows, c.tx_packets, c.rx_packets), (OrchestratorLane::Control, 2, 200, 150));
        assert_eq!(c.loss_pct, 25.0);
        // Mean of flow means, not packet-weighted: (10 + 30) / 2.
        assert_eq!(c.delay_ms, Some(20.0));
        // 100·100 + 50·100 bytes over 1 s.
        assert!((c.throughput_mbps - 0.12).abs() < 1e-12);
        let b = &rows[1];
        assert_eq!((b.loss_pct, b.delay_ms, b.jain_throughput), (100.0, None, None));
    }
}

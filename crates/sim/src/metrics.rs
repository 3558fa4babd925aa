//! From flows to the seed's class figures: per-class aggregation, Jain's
//! fairness index, and means with Student-t confidence intervals over seeds.

use bauxite_qdisc::Nanos;

use crate::monitor::FlowStats;
use crate::scenario::TrafficClass;

/// One flow of a finished run, with names instead of node ids.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    /// Its traffic class.
    pub class: TrafficClass,
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
    /// How long its source was sending.
    pub active_ns: Nanos,
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
#[derive(Clone, Debug, PartialEq)]
pub struct ClassRow {
    /// The class.
    pub class: TrafficClass,
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

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// One row per class present among `flows`, in class order.
pub fn class_rows(flows: &[FlowRecord]) -> Vec<ClassRow> {
    TrafficClass::ALL
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
            })
        })
        .collect()
}

/// The two-sided 95 % Student-t quantile (the 0.975 quantile) for `df` degrees
/// of freedom; NaN for 0.
///
/// Up to 30 degrees of freedom from the standard table (three decimals); beyond,
/// the Cornish-Fisher expansion of the t quantile about the normal one (Abramowitz
/// and Stegun 26.7.5, terms to `1/df⁴`), which is within 1e-5 of the exact value
/// from 31 degrees of freedom on and tends to 1.960 as `df` grows. (A coarse table
/// that used, say, 40 degrees of freedom's 2.021 for all of 31 to 40 would make
/// those intervals too narrow.)
pub fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    /// The standard normal 0.975 quantile.
    const Z: f64 = 1.959_963_984_540_054;
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => {
            let (n, z) = (df as f64, Z);
            let z2 = z * z;
            let g1 = z * (z2 + 1.0) / 4.0;
            let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
            let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
            let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
            z + (g1 + (g2 + (g3 + g4 / n) / n) / n) / n
        }
    }
}

/// Mean and 95 % confidence half-width (Student t, n − 1 degrees of freedom) of
/// `values`; the half-width is `None` with fewer than two values.
pub fn mean_ci95(values: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = values.len();
    let Some(m) = mean(values) else { return (None, None) };
    if n < 2 {
        return (Some(m), None);
    }
    let var = values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    (Some(m), Some(t95(n - 1) * (var / n as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(class: TrafficClass, tx: u64, rx: u64, delay_ms: u64) -> FlowRecord {
        FlowRecord {
            class,
            src: "a".into(),
            dst: "b".into(),
            src_port: 1,
            dst_port: 2,
            dscp: 0,
            active_ns: 1_000_000_000,
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
            flow(TrafficClass::Control, 100, 100, 10),
            flow(TrafficClass::Control, 100, 50, 30),
            flow(TrafficClass::Bulk, 10, 0, 0),
        ];
        let rows = class_rows(&flows);
        assert_eq!(rows.len(), 2);
        let c = &rows[0];
        assert_eq!((c.class, c.flows, c.tx_packets, c.rx_packets), (TrafficClass::Control, 2, 200, 150));
        assert_eq!(c.loss_pct, 25.0);
        // Mean of flow means, not packet-weighted: (10 + 30) / 2.
        assert_eq!(c.delay_ms, Some(20.0));
        // 100·100 + 50·100 bytes over 1 s.
        assert!((c.throughput_mbps - 0.12).abs() < 1e-12);
        let b = &rows[1];
        assert_eq!((b.loss_pct, b.delay_ms, b.jain_throughput), (100.0, None, None));
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let known = [
            (1, 12.706),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (60, 2.000),
            (61, 2.000),
            (120, 1.980),
            (121, 1.980),
            (1000, 1.962),
            (usize::MAX, 1.960),
        ];
        for (df, t) in known {
            assert_eq!(round3(t95(df)), t, "df {df}: {}", t95(df));
        }
        // Exact quantiles (R's qt(0.975, df)) where the table stops.
        for (df, t) in [(31, 2.039_513), (50, 2.008_559), (100, 1.983_972)] {
            assert!((t95(df) - t).abs() < 1e-5, "df {df}: {} vs {t}", t95(df));
        }
        assert!(t95(0).is_nan());
        // Never narrower with fewer degrees of freedom.
        assert!((1..500).all(|df| t95(df) > t95(df + 1)));
    }

    #[test]
    fn confidence_interval_uses_student_t() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(m, Some(2.0));
        // s = 1, n = 3: 4.303 / sqrt(3).
        assert!((h.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci95(&[5.0]), (Some(5.0), None));
    }
}

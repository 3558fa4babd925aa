//! The shaper's Prometheus metrics (`bauxite up --metrics ADDR`), served by `bauxite-metrics`.
//!
//! A [`ShaperCollector`] reads the shaper's snapshot ([`StatusReader`], what `bauxite status`
//! prints) at each scrape, so every figure is the kernel's own at that moment, with no copy to
//! keep in step. Names after node_exporter's qdisc collector and Prometheus conventions:
//!
//! Every family with its type, labels and help is on the generated reference page,
//! `docs/reference/metrics.md` (`bauxite reference`, from these registrations).
//!
//! and, for `bauxite reflect --metrics ADDR`, [`ReflectorMetrics`]:
//! `bauxite_reflector_answered_total` and `bauxite_reflector_refused_total{reason}` (the
//! reasons of [`Refusal`]).

use std::sync::Mutex;

use bauxite_core::{DaemonState, LaneSnapshot, ShaperSnapshot};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::StatusReader;
use crate::reflect::Refusal;

/// Reads the shaper on each of its interfaces at each scrape: the uplink's, and the
/// downlink's IFB device when the ingress is shaped too.
pub struct ShaperCollector {
    readers: Mutex<Vec<StatusReader>>,
    ifaces: Vec<String>,
}

impl std::fmt::Debug for ShaperCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShaperCollector").field("ifaces", &self.ifaces).finish_non_exhaustive()
    }
}

impl ShaperCollector {
    /// A collector of `ifaces` in the calling thread's network namespace.
    pub fn new(ifaces: &[String]) -> Result<Self, crate::ShaperError> {
        let readers = ifaces.iter().map(|i| StatusReader::new(i)).collect::<Result<_, _>>()?;
        Ok(Self { readers: Mutex::new(readers), ifaces: ifaces.to_vec() })
    }

    /// Registers it (prefix `bauxite`) in `registry`.
    pub fn register(self, registry: &mut Registry) {
        registry.sub_registry_with_prefix("bauxite").register_collector(Box::new(self));
    }
}

type Labels<'a> = [(&'static str, &'a str)];

/// One family: `name` with one sample per labels and value, as counters or gauges.
fn family<'a, V, M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    (name, help, kind): (&str, &str, MetricType),
    metric: fn(V) -> M,
    samples: impl IntoIterator<Item = (&'a Labels<'a>, V)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in samples {
        metric(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Encodes snapshots, one per shaped interface (the uplink's, and the downlink's IFB),
/// each family once with a series per interface: Prometheus refuses a family given twice.
/// Separate from the reading, so fixed ones can be served too.
fn encode_snapshots(all: &[ShaperSnapshot], encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    use MetricType::{Counter, Gauge};
    let ifaces: Vec<[(&str, &str); 1]> = all.iter().map(|s| [("iface", s.iface.as_str())]).collect();
    family(
        encoder,
        ("shaper_running", "1 while a daemon renews its lease and the lanes are enforced", Gauge),
        ConstGauge::new,
        ifaces.iter().zip(all).map(|(k, s)| (&k[..], i64::from(s.daemon == DaemonState::Running))),
    )?;
    let running: Vec<(&Labels, &ShaperSnapshot)> =
        ifaces.iter().zip(all).filter(|(_, s)| s.daemon == DaemonState::Running).map(|(k, s)| (&k[..], s)).collect();
    if running.is_empty() {
        return Ok(());
    }
    let per_iface = |f: fn(&ShaperSnapshot) -> i64| running.iter().map(move |&(k, s)| (k, f(s)));
    family(
        encoder,
        ("congested", "1 while the link is congested (bulk lanes dropped early)", Gauge),
        ConstGauge::new,
        per_iface(|s| i64::from(s.congested)),
    )?;
    family(
        encoder,
        ("congestion_episodes", "Congested episodes so far", Counter),
        ConstCounter::new,
        running.iter().map(|&(k, s)| (k, s.congestion_episodes)),
    )?;
    family(
        encoder,
        ("link_rate_bits_per_second", "The link rate: fixed, or the auto-rate estimate", Gauge),
        ConstGauge::new,
        per_iface(|s| s.link_rate_bps as i64),
    )?;
    family(
        encoder,
        ("shaped_rate_bits_per_second", "The rate the lanes are shaped to", Gauge),
        ConstGauge::new,
        per_iface(|s| s.rate_bps as i64),
    )?;
    family(
        encoder,
        (
            "link_estimate_failing",
            "1 while rate auto's reflector does not answer: not protected, the droppable lanes held at min_rate and the other lanes but the first held too",
            Gauge,
        ),
        ConstGauge::new,
        per_iface(|s| i64::from(s.link_estimate_failing)),
    )?;
    let lanes: Vec<([(&str, &str); 2], &LaneSnapshot)> = running
        .iter()
        .flat_map(|&(_, s)| s.lanes.iter().map(|l| ([("iface", s.iface.as_str()), ("lane", l.name.as_str())], l)))
        .collect();
    let per_lane = |f: fn(&LaneSnapshot) -> u64| lanes.iter().map(move |(k, l)| (&k[..], f(l)));
    family(
        encoder,
        ("lane_packets", "Packets the classifier put in the lane (dropped ones included)", Counter),
        ConstCounter::new,
        per_lane(|l| l.packets),
    )?;
    family(
        encoder,
        ("lane_bytes", "Bytes the classifier put in the lane", Counter),
        ConstCounter::new,
        per_lane(|l| l.bytes),
    )?;
    family(
        encoder,
        ("lane_early_drops", "Packets discarded early by the classifier while congested", Counter),
        ConstCounter::new,
        per_lane(|l| l.early_drops),
    )?;
    family(
        encoder,
        ("lane_queue_drops", "Packets dropped by the lane's full queue", Counter),
        ConstCounter::new,
        per_lane(|l| l.queue_drops),
    )?;
    let gauge = |f: fn(&LaneSnapshot) -> u64| per_lane(f).map(|(k, v)| (k, v as i64));
    family(
        encoder,
        ("lane_backlog_packets", "Packets waiting in the lane's queue", Gauge),
        ConstGauge::new,
        gauge(|l| l.backlog_packets),
    )?;
    family(
        encoder,
        ("lane_backlog_bytes", "Bytes waiting in the lane's queue", Gauge),
        ConstGauge::new,
        gauge(|l| l.backlog_bytes),
    )?;
    let ratio = |f: fn(&LaneSnapshot) -> f64| lanes.iter().map(move |(k, l)| (&k[..], f(l)));
    family(
        encoder,
        ("lane_queue_delay_seconds", "Estimated queue delay of the lane", Gauge),
        ConstGauge::new,
        ratio(|l| l.queue_delay_ms / 1e3),
    )?;
    family(
        encoder,
        ("lane_drop_probability", "The early-drop probability in force", Gauge),
        ConstGauge::new,
        ratio(|l| l.drop_probability),
    )
}

/// Probe RTT buckets (seconds): 1 ms to 2 s, about 2x apart; a calm link answers in a few
/// ms, a saturated modem FIFO in hundreds.
const RTT_BUCKETS: [f64; 12] = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IfaceLabels {
    iface: String,
}

/// Registers `bauxite_probe_rtt_seconds{iface}` and returns the histogram the daemon fills
/// ([`crate::UpOptions::probe_rtt`]).
pub fn probe_rtt_histogram(registry: &mut Registry, iface: &str) -> Histogram {
    let family =
        Family::<IfaceLabels, Histogram, fn() -> Histogram>::new_with_constructor(|| Histogram::new(RTT_BUCKETS));
    let histogram = family.get_or_create(&IfaceLabels { iface: iface.to_string() }).clone();
    registry.sub_registry_with_prefix("bauxite").register(
        "probe_rtt_seconds",
        "Round-trip times of the rate: auto probes",
        family,
    );
    histogram
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// The reflector's answers and refusals (prefix `bauxite_reflector`).
#[derive(Clone, Debug, Default)]
pub struct ReflectorMetrics {
    answered: Counter,
    refused: Family<ReasonLabels, Counter>,
}

impl ReflectorMetrics {
    /// Registers the counters in `registry`, every refusal reason at 0.
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self::default();
        let r = registry.sub_registry_with_prefix("bauxite_reflector");
        r.register("answered", "Probe requests answered", m.answered.clone());
        r.register("refused", "Datagrams not answered, by reason", m.refused.clone());
        for reason in Refusal::ALL {
            // Only the series is wanted: the guard is dropped at once.
            drop(m.refused.get_or_create(&ReasonLabels { reason: reason.name() }));
        }
        m
    }

    /// Counts one verdict of [`crate::reflect::Reflector::answer`].
    pub fn count(&self, verdict: Result<(), Refusal>) {
        match verdict {
            Ok(()) => {
                self.answered.inc();
            }
            Err(r) => {
                self.refused.get_or_create(&ReasonLabels { reason: r.name() }).inc();
            }
        }
    }
}

/// Shaper snapshots that never change, served as [`ShaperCollector`] serves live ones: the
/// tests' scrapes and the example the metrics reference page is generated from.
#[derive(Debug)]
struct FixedSnapshots(Vec<ShaperSnapshot>);

impl Collector for FixedSnapshots {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        encode_snapshots(&self.0, &mut encoder)
    }
}

/// Registers `snapshots` (prefix `bauxite`) in `registry`, fixed: what a scrape of shapers
/// in those states exports.
pub fn register_snapshots(registry: &mut Registry, snapshots: Vec<ShaperSnapshot>) {
    registry.sub_registry_with_prefix("bauxite").register_collector(Box::new(FixedSnapshots(snapshots)));
}

impl Collector for ShaperCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut readers = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        let snapshots: Vec<ShaperSnapshot> = readers
            .iter_mut()
            .zip(&self.ifaces)
            .map(|(reader, iface)| {
                reader.read().unwrap_or_else(|e| {
                    // A failed read is a scrape without lane figures, not a failed scrape.
                    tracing::warn!(iface, "reading the shaper for metrics: {e}");
                    ShaperSnapshot::down(iface.clone())
                })
            })
            .collect();
        encode_snapshots(&snapshots, &mut encoder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bauxite_core::LaneSnapshot;

    fn text(s: ShaperSnapshot) -> String {
        let mut registry = Registry::default();
        register_snapshots(&mut registry, vec![s]);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        out
    }

    #[test]
    fn a_running_shaper_exports_its_lanes_and_rates() {
        let lane = |name: &str, packets| LaneSnapshot {
            name: name.into(),
            packets,
            bytes: packets * 100,
            drop_probability: 0.25,
            queue_delay_ms: 12.0,
            backlog_packets: 3,
            ..Default::default()
        };
        let s = ShaperSnapshot {
            iface: "wwan0".into(),
            daemon: DaemonState::Running,
            congested: true,
            link_rate_bps: 1_500_000,
            rate_bps: 1_425_000,
            lanes: vec![lane("critical", 7), lane("bulk", 9)],
            ..ShaperSnapshot::down("wwan0")
        };
        let out = text(s);
        for line in [
            "# TYPE bauxite_lane_packets counter",
            "bauxite_lane_packets_total{iface=\"wwan0\",lane=\"critical\"} 7",
            "bauxite_lane_bytes_total{iface=\"wwan0\",lane=\"bulk\"} 900",
            "bauxite_lane_backlog_packets{iface=\"wwan0\",lane=\"bulk\"} 3",
            "bauxite_lane_drop_probability{iface=\"wwan0\",lane=\"bulk\"} 0.25",
            "bauxite_lane_queue_delay_seconds{iface=\"wwan0\",lane=\"critical\"} 0.012",
            "bauxite_congested{iface=\"wwan0\"} 1",
            "bauxite_link_rate_bits_per_second{iface=\"wwan0\"} 1500000",
            "bauxite_shaped_rate_bits_per_second{iface=\"wwan0\"} 1425000",
            "bauxite_shaper_running{iface=\"wwan0\"} 1",
        ] {
            assert!(out.contains(&format!("{line}\n")), "no `{line}` in:\n{out}");
        }
    }

    #[test]
    fn the_uplink_and_the_downlink_share_each_family() {
        let running = |iface: &str| ShaperSnapshot {
            daemon: DaemonState::Running,
            lanes: vec![LaneSnapshot { name: "critical".into(), packets: 4, ..Default::default() }],
            ..ShaperSnapshot::down(iface)
        };
        let mut registry = Registry::default();
        register_snapshots(&mut registry, vec![running("wwan0"), running("bx-wwan0"), ShaperSnapshot::down("eth9")]);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        for family in ["bauxite_shaper_running", "bauxite_lane_packets", "bauxite_congested"] {
            assert_eq!(out.matches(&format!("# TYPE {family} ")).count(), 1, "{family} once:\n{out}");
        }
        for line in [
            "bauxite_lane_packets_total{iface=\"wwan0\",lane=\"critical\"} 4",
            "bauxite_lane_packets_total{iface=\"bx-wwan0\",lane=\"critical\"} 4",
            "bauxite_shaper_running{iface=\"eth9\"} 0",
        ] {
            assert!(out.contains(&format!("{line}\n")), "no `{line}` in:\n{out}");
        }
        assert!(!out.contains("bauxite_congested{iface=\"eth9\"}"), "a shaper that is down has no lane figures");
    }

    #[test]
    fn a_shaper_that_is_not_running_exports_only_that() {
        let out = text(ShaperSnapshot::down("wwan0"));
        assert!(out.contains("bauxite_shaper_running{iface=\"wwan0\"} 0\n"), "{out}");
        assert!(!out.contains("bauxite_lane_"), "{out}");
    }
}

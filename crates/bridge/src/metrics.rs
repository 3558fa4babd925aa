//! The bridge's Prometheus metrics (`bauxite bridge --metrics ADDR`, or `metrics:` in its
//! config), served by `bauxite-metrics`.
//!
//! The control loop already turns the forwarders' counters into per-report deltas
//! ([`TopicReport`]); it adds the same deltas here, so the counters are exactly the totals the
//! status lines and the recording add up to, updated once per report (1 s). Every topic and path
//! exists from the first scrape (at 0), so Prometheus's `increase()` sees the first samples too.
//!
//! Every family with its type, labels and help is on the generated reference page,
//! `docs/reference/metrics.md` (`bauxite reference`, from these registrations).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use crate::classifier::{State, SubscriberReport};
use crate::redundancy::Role;
use crate::supervisor::Mode;
use crate::telemetry::{PathReport, TopicReport};

/// The two output paths, as label values.
pub const PATHS: [&str; 2] = ["critical", "noncritical"];
const STATES: [State; 3] = [State::Unknown, State::Critical, State::Noncritical];
const MODES: [Mode; 3] = [Mode::Normal, Mode::Degraded, Mode::Emergency];

/// Forwarding latency buckets (seconds): 100 µs to 1 s, about 2.5x apart; a healthy bridge
/// forwards in well under a millisecond, a blocked writer in hundreds.
const LATENCY_BUCKETS: [f64; 11] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.25, 1.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TopicLabels {
    topic: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PathLabels {
    topic: String,
    path: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DropLabels {
    topic: String,
    path: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    subscriber: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SubscriberLabels {
    subscriber: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModeLabels {
    mode: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RoleLabels {
    role: String,
}

type Latency = Family<PathLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The bridge's metric families (cheap handles onto what the registry serves).
#[derive(Clone)]
pub struct BridgeMetrics {
    received: Family<TopicLabels, Counter>,
    forwarded: Family<PathLabels, Counter>,
    dropped: Family<DropLabels, Counter>,
    write_errors: Family<PathLabels, Counter>,
    latency: Latency,
    readers: Family<PathLabels, Gauge>,
    forwarding: Family<PathLabels, Gauge>,
    subscriber_state: Family<StateLabels, Gauge>,
    subscriber_rtt: Family<SubscriberLabels, Gauge<f64, AtomicU64>>,
    mode: Family<ModeLabels, Gauge>,
    mode_changes: Counter,
    role: Family<RoleLabels, Gauge>,
}

impl BridgeMetrics {
    /// Registers every family in `registry` (prefix `bauxite_bridge`), with a series for each
    /// of `topics` (as configured) and both paths.
    pub fn register(registry: &mut Registry, topics: &[String]) -> Self {
        let m = Self {
            received: Family::default(),
            forwarded: Family::default(),
            dropped: Family::default(),
            write_errors: Family::default(),
            latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            readers: Family::default(),
            forwarding: Family::default(),
            subscriber_state: Family::default(),
            subscriber_rtt: Family::default(),
            mode: Family::default(),
            mode_changes: Counter::default(),
            role: Family::default(),
        };
        let r = registry.sub_registry_with_prefix("bauxite_bridge");
        r.register("samples_received", "Samples taken from the input topic", m.received.clone());
        r.register("samples_forwarded", "Samples written on an output path", m.forwarded.clone());
        r.register(
            "samples_dropped",
            "Samples not forwarded on a path: rate_limited, suspended (policy), stale (older than max_age), overflow (queue full)",
            m.dropped.clone(),
        );
        r.register("write_errors", "Failed or blocked writes on a path", m.write_errors.clone());
        r.register("forward_latency_seconds", "Arrival-to-written time of forwarded samples", m.latency.clone());
        r.register("matched_readers", "DDS readers matched to a path's writer", m.readers.clone());
        r.register(
            "path_forwarding",
            "1 while the policy lets a path forward, 0 while it is stopped or suspended",
            m.forwarding.clone(),
        );
        r.register(
            "subscriber_state",
            "1 for each subscriber's current classifier state, 0 for the others",
            m.subscriber_state.clone(),
        );
        r.register(
            "subscriber_probe_rtt_seconds",
            "Mean probe round-trip time of the last evaluation",
            m.subscriber_rtt.clone(),
        );
        r.register("supervisor_mode", "1 for the supervisor's current mode, 0 for the others", m.mode.clone());
        r.register("mode_changes", "Supervisor mode changes", m.mode_changes.clone());
        r.register(
            "redundancy_role",
            "In a hot-standby group, 1 for this bridge's current role (joining, standby, active, rejoining), 0 for the others",
            m.role.clone(),
        );
        // Creating a series is all that is wanted here; the guards `get_or_create` returns are
        // dropped at once.
        for topic in topics {
            drop(m.received.get_or_create(&TopicLabels { topic: topic.clone() }));
            for path in PATHS {
                let labels = PathLabels { topic: topic.clone(), path: path.into() };
                drop(m.forwarded.get_or_create(&labels));
                drop(m.write_errors.get_or_create(&labels));
                drop(m.latency.get_or_create(&labels));
                drop(m.readers.get_or_create(&labels));
                // The supervisor starts in Normal mode, where both paths forward.
                m.forwarding.get_or_create(&labels).set(1);
                for reason in ["rate_limited", "suspended", "stale", "overflow"] {
                    let labels = DropLabels { topic: topic.clone(), path: path.into(), reason: reason.into() };
                    drop(m.dropped.get_or_create(&labels));
                }
            }
        }
        m.set_mode(Mode::Normal);
        m
    }

    /// Adds one report interval of `topic` (as configured); `latencies_us` are the interval's
    /// forwarding latencies of the critical and noncritical paths.
    pub fn add_report(&self, topic: &str, report: &TopicReport, received: u64, latencies_us: [&[u32]; 2]) {
        self.received.get_or_create(&TopicLabels { topic: topic.into() }).inc_by(received);
        let paths = [&report.critical, &report.noncritical];
        let open = [report.decision.critical, report.decision.noncritical_hz.is_some()];
        for (k, path) in PATHS.into_iter().enumerate() {
            self.add_path(topic, path, paths[k], latencies_us[k]);
            let labels = PathLabels { topic: topic.into(), path: path.into() };
            self.forwarding.get_or_create(&labels).set(i64::from(open[k]));
        }
    }

    fn add_path(&self, topic: &str, path: &str, p: &PathReport, latencies_us: &[u32]) {
        let labels = PathLabels { topic: topic.into(), path: path.into() };
        self.forwarded.get_or_create(&labels).inc_by(p.forwarded);
        self.write_errors.get_or_create(&labels).inc_by(p.errors);
        self.readers.get_or_create(&labels).set(p.readers as i64);
        for (reason, n) in
            [("rate_limited", p.rate_limited), ("suspended", p.suspended), ("stale", p.stale), ("overflow", p.overflow)]
        {
            let labels = DropLabels { topic: topic.into(), path: path.into(), reason: reason.into() };
            self.dropped.get_or_create(&labels).inc_by(n);
        }
        let histogram = self.latency.get_or_create(&labels);
        for &us in latencies_us {
            histogram.observe(f64::from(us) / 1e6);
        }
    }

    /// Sets the classifier's view of every subscriber.
    pub fn set_subscribers(&self, subscribers: &[SubscriberReport]) {
        for s in subscribers {
            for state in STATES {
                let labels = StateLabels { subscriber: s.name.clone(), state: state.to_string().to_lowercase() };
                self.subscriber_state.get_or_create(&labels).set(i64::from(state == s.state));
            }
            if let Some(rtt_ms) = s.reading.and_then(|r| r.rtt_ms) {
                self.subscriber_rtt.get_or_create(&SubscriberLabels { subscriber: s.name.clone() }).set(rtt_ms / 1e3);
            }
        }
    }

    /// Sets the supervisor's mode.
    pub fn set_mode(&self, mode: Mode) {
        for m in MODES {
            self.mode.get_or_create(&ModeLabels { mode: m.to_string().to_lowercase() }).set(i64::from(m == mode));
        }
    }

    /// Sets this bridge's role in its hot-standby group.
    pub fn set_role(&self, role: Role) {
        for r in Role::ALL {
            self.role.get_or_create(&RoleLabels { role: r.name().into() }).set(i64::from(r == role));
        }
    }

    /// Counts a mode change.
    pub fn mode_changed(&self) {
        self.mode_changes.inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classifier::Health;
    use crate::policy::Decision;

    fn encode(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
        text
    }

    #[test]
    fn reports_add_up_to_counters_and_states_are_one_hot() {
        let mut registry = Registry::default();
        let m = BridgeMetrics::register(&mut registry, &["/scan".into()]);
        let text = encode(&registry);
        // Every series exists before the first sample.
        assert!(
            text.contains("bauxite_bridge_samples_forwarded_total{topic=\"/scan\",path=\"noncritical\"} 0\n"),
            "{text}"
        );
        assert!(text.contains("bauxite_bridge_supervisor_mode{mode=\"normal\"} 1\n"), "{text}");
        assert!(text.contains("bauxite_bridge_path_forwarding{topic=\"/scan\",path=\"noncritical\"} 1\n"), "{text}");
        let path = |forwarded, rate_limited| PathReport { forwarded, rate_limited, readers: 1, ..Default::default() };
        let report = TopicReport {
            input: "rt/scan".into(),
            input_hz: 30.0,
            critical: path(30, 0),
            noncritical: path(10, 20),
            decision: Decision { critical: true, noncritical_hz: None },
        };
        for _ in 0..2 {
            m.add_report("/scan", &report, 30, [&[200, 400], &[3000]]);
        }
        m.set_mode(Mode::Degraded);
        m.mode_changed();
        m.set_subscribers(&[SubscriberReport {
            name: "far".into(),
            state: State::Noncritical,
            health: Health::Degraded,
            overridden: false,
            reading: None,
        }]);
        let text = encode(&registry);
        for line in [
            "bauxite_bridge_samples_received_total{topic=\"/scan\"} 60",
            "bauxite_bridge_samples_forwarded_total{topic=\"/scan\",path=\"critical\"} 60",
            "bauxite_bridge_samples_dropped_total{topic=\"/scan\",path=\"noncritical\",reason=\"rate_limited\"} 40",
            "bauxite_bridge_forward_latency_seconds_count{topic=\"/scan\",path=\"critical\"} 4",
            "bauxite_bridge_forward_latency_seconds_bucket{le=\"0.00025\",topic=\"/scan\",path=\"critical\"} 2",
            "bauxite_bridge_path_forwarding{topic=\"/scan\",path=\"noncritical\"} 0",
            "bauxite_bridge_matched_readers{topic=\"/scan\",path=\"critical\"} 1",
            "bauxite_bridge_supervisor_mode{mode=\"degraded\"} 1",
            "bauxite_bridge_supervisor_mode{mode=\"normal\"} 0",
            "bauxite_bridge_mode_changes_total 1",
            "bauxite_bridge_subscriber_state{subscriber=\"far\",state=\"noncritical\"} 1",
            "bauxite_bridge_subscriber_state{subscriber=\"far\",state=\"critical\"} 0",
        ] {
            assert!(text.contains(&format!("{line}\n")), "no `{line}` in:\n{text}");
        }
    }
}

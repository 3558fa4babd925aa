//! The running bridge: one forwarder per topic, and a control loop that probes, classifies,
//! supervises, applies the policy and reports.
//!
//! Everything DDS is created in [`Bridge::start`], before the first sample moves: a bad config
//! or a failing participant stops the start, nothing half-runs. The control loop owns the pure
//! state machines (classifier, supervisor) and feeds them the bridge clock; the forwarding
//! threads only read the decision it leaves in each topic's shared state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::classifier::{Classifier, Health};
use crate::config::BridgeConfig;
use crate::diagnostics::{DiagnosticsPublisher, level};
use crate::forward::{Forwarder, PathStats};
use crate::metrics::BridgeMetrics;
use crate::policy::decide;
use crate::probe::{Answer, Prober};
use crate::redundancy::{Elector, Role};
use crate::supervisor::{Mode, ModeChange, Supervisor, Vitals};
use crate::telemetry::{ClassifierReport, PathReport, Recording, SupervisorReport, TopicReport, percentiles};
use crate::{BridgeError, Clock, Nanos};
use bauxite_core::diagnostics::{DiagnosticStatus, KeyValue};

/// What the bridge looks like now (for logs, tests and the benchmark).
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// The supervisor's mode.
    pub mode: Option<Mode>,
    /// The last report of each topic.
    pub topics: Vec<TopicReport>,
    /// The last classifier report.
    pub classifier: Option<ClassifierReport>,
    /// Every mode change so far.
    pub mode_changes: Vec<ModeChange>,
    /// The role in a hot-standby group (none outside one).
    pub role: Option<Role>,
}

/// A running bridge.
pub struct Bridge {
    id: String,
    stop: Arc<AtomicBool>,
    control: Option<JoinHandle<Result<(), BridgeError>>>,
    status: Arc<Mutex<Status>>,
    /// The `/metrics` endpoint, when configured; closes with the bridge.
    _metrics_server: Option<bauxite_metrics::MetricsServer>,
}

/// Counter values at the previous report, to turn totals into per-interval figures.
#[derive(Default, Clone, Copy)]
struct Seen {
    received: u64,
    forwarded: [u64; 2],
    rate_limited: [u64; 2],
    suspended: [u64; 2],
    stale: [u64; 2],
    overflow: [u64; 2],
    errors: [u64; 2],
}

impl Bridge {
    /// Creates every DDS entity and starts forwarding.
    pub fn start(config: BridgeConfig) -> Result<Self, BridgeError> {
        let clock = Clock::new();
        let id = format!("bauxite-bridge-{}-{}", std::process::id(), clock.unix_ns(0) % 1_000_000_000);
        // Outputs first: a recording that cannot be written must stop the start before any DDS
        // participant exists (issue 10 #10).
        let recording = config.telemetry.record.as_deref().map(Recording::create).transpose()?;
        let (metrics, metrics_server) = match config.metrics {
            Some(addr) => {
                let mut registry = bauxite_metrics::Registry::default();
                let topics: Vec<String> = config.topics.iter().map(|t| t.name.clone()).collect();
                let metrics = BridgeMetrics::register(&mut registry, &topics);
                (Some(metrics), Some(bauxite_metrics::MetricsServer::start(addr, registry)?))
            }
            None => (None, None),
        };
        let participants = crate::dds::Participants::new(&config.dds)?;
        let group = config
            .redundancy
            .as_ref()
            .map(|r| Elector::beacon(&participants.noncritical, r, &id, clock.unix_ns(0)))
            .transpose()?;
        let keep = config.redundancy.as_ref().map_or(0, |r| r.keep);
        let mut forwarders = Vec::new();
        for topic in &config.topics {
            let in_group = group.as_ref().map(|(beacon, _)| (beacon, keep));
            let f = Forwarder::start(&participants, topic, &config.policy, in_group, clock)?;
            tracing::info!(
                "forwarding {} ({}) → {} (RELIABLE), {} (BEST_EFFORT)",
                f.names.input,
                f.names.type_name,
                f.names.critical,
                f.names.noncritical
            );
            forwarders.push(f);
        }
        let elector = match (group, &config.redundancy) {
            (Some((beacon, reader)), Some(r)) => {
                let topics = forwarders.iter().map(|f| f.shared.clone()).collect();
                Some(Elector::run(beacon, reader, r, topics, clock)?)
            }
            _ => None,
        };
        let prober = if config.classifier.enabled {
            Some(Prober::start(&participants.noncritical, &config.classifier, &id, clock)?)
        } else {
            None
        };
        let diagnostics = if config.diagnostics.enabled {
            Some(DiagnosticsPublisher::start(&participants.noncritical, &config.diagnostics.topic)?)
        } else {
            None
        };
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new(Status::default()));
        let control = Control {
            configured: config.subscribers.iter().map(|s| s.name.clone()).collect(),
            classifier: Classifier::new(
                config.classifier.clone(),
                &config.subscribers.iter().map(|s| (s.name.clone(), s.override_state)).collect::<Vec<_>>(),
            ),
            supervisor: Supervisor::new(config.supervisor.clone()),
            config,
            clock,
            id: id.clone(),
            forwarders,
            elector,
            prober,
            diagnostics,
            recording,
            metrics,
            status: status.clone(),
            seen: Vec::new(),
            last_vitals: Vitals::default(),
            errors_total: 0,
            last_reason: String::from("started"),
        };
        let thread_stop = stop.clone();
        let control = std::thread::Builder::new()
            .name("bx-control".into())
            .spawn(move || {
                // The participants live as long as the loop that uses them.
                let _participants = participants;
                control.run(&thread_stop)
            })
            .map_err(|e| BridgeError::io("starting the control thread", e))?;
        Ok(Self { id, stop, control: Some(control), status, _metrics_server: metrics_server })
    }

    /// The id the bridge's probes carry.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A copy of the current status.
    pub fn status(&self) -> Status {
        self.status.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether the control loop has ended by itself (an error); [`Bridge::stop`] returns why.
    pub fn has_stopped(&self) -> bool {
        self.control.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Stops forwarding, finishes the recording and returns the final status.
    pub fn stop(mut self) -> Result<Status, BridgeError> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.control.take() {
            t.join().map_err(|_| BridgeError::ControlPanicked)??;
        }
        Ok(self.status())
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.control.take() {
            let _ = t.join();
        }
    }
}

/// Runs a bridge until `stop` is set (SIGINT/SIGTERM in the CLI) or its control loop ends
/// with an error (then returned: a bridge that stopped working must not look alive).
pub fn run(config: BridgeConfig, stop: &AtomicBool) -> Result<Status, BridgeError> {
    let bridge = Bridge::start(config)?;
    tracing::info!(id = bridge.id(), "bridge running");
    while !stop.load(Ordering::Relaxed) && !bridge.has_stopped() {
        std::thread::sleep(Duration::from_millis(100));
    }
    bridge.stop()
}

struct Control {
    config: BridgeConfig,
    clock: Clock,
    id: String,
    /// Names of the configured subscribers; others are heard ones.
    configured: Vec<String>,
    forwarders: Vec<Forwarder>,
    /// The hot-standby election, in a group.
    elector: Option<Elector>,
    prober: Option<(Prober, mpsc::Receiver<Answer>)>,
    classifier: Classifier,
    supervisor: Supervisor,
    diagnostics: Option<DiagnosticsPublisher>,
    recording: Option<Recording>,
    metrics: Option<BridgeMetrics>,
    status: Arc<Mutex<Status>>,
    seen: Vec<(Seen, Nanos)>,
    last_vitals: Vitals,
    /// Errors of all topics up to the previous tick.
    errors_total: u64,
    last_reason: String,
}

/// The environment variable of the debug-only fault injection (see [`inject_fault`]).
pub const FAULT_ENV: &str = "BAUXITE_BRIDGE_FAULT";

/// Debug builds only: `BAUXITE_BRIDGE_FAULT=control-panic` panics the control thread as it
/// starts, so a test can prove that a panic in a worker thread ends the `bauxite` process
/// (issue 10 #2) now that no config can cause one. Release builds compile this to nothing.
fn inject_fault() {
    #[cfg(debug_assertions)]
    if std::env::var(FAULT_ENV).is_ok_and(|v| v == "control-panic") {
        panic!("{FAULT_ENV}=control-panic: injected fault");
    }
}

/// The control loop's period for anything without its own schedule.
const REPORT_EVERY: Duration = Duration::from_secs(1);

fn ns(d: Duration) -> Nanos {
    d.as_nanos().min(u128::from(u64::MAX)) as Nanos
}

/// A periodic deadline.
struct Every {
    period: Nanos,
    next: Nanos,
}

impl Every {
    fn new(period: Duration, first: Nanos) -> Self {
        Self { period: ns(period).max(1), next: first }
    }

    /// Whether the deadline has passed; if so, schedules the next one (skipping missed ones).
    fn due(&mut self, now: Nanos) -> bool {
        if now < self.next {
            return false;
        }
        self.next += self.period;
        if self.next <= now {
            self.next = now + self.period;
        }
        true
    }
}

/// Whether an enabled schedule is due (see [`Every::due`]).
fn due(every: &mut Option<Every>, now: Nanos) -> bool {
    every.as_mut().is_some_and(|e| e.due(now))
}

impl Control {
    fn run(mut self, stop: &AtomicBool) -> Result<(), BridgeError> {
        inject_fault();
        let now = self.clock.now();
        let c = &self.config;
        // Only what is enabled has a schedule: a deadline nobody advances would never let the
        // loop sleep.
        let probing = self.prober.is_some();
        let mut probe = probing.then(|| Every::new(Duration::from_secs_f64(1.0 / c.classifier.probe_rate_hz), now));
        let mut evaluate =
            probing.then(|| Every::new(c.classifier.evaluate_every, now + ns(c.classifier.evaluate_every)));
        let mut tick = Some(Every::new(c.supervisor.tick, now + ns(c.supervisor.tick)));
        let mut report = Some(Every::new(REPORT_EVERY, now + ns(REPORT_EVERY)));
        let mut log = Some(Every::new(c.telemetry.status_every, now + ns(c.telemetry.status_every)));
        let mut diag = self.diagnostics.is_some().then(|| Every::new(c.diagnostics.period, now));
        self.seen = vec![(Seen::default(), now); self.forwarders.len()];
        self.apply_policy();
        let result = loop {
            if stop.load(Ordering::Relaxed) {
                break Ok(());
            }
            let now = self.clock.now();
            if let Some((prober, _)) = &mut self.prober
                && due(&mut probe, now)
            {
                let seq = prober.send(now);
                self.classifier.probe_sent(seq, now);
            }
            if let Some((_, answers)) = &self.prober {
                for a in answers.try_iter() {
                    self.classifier.reply(&a.subscriber, a.seq, a.at);
                }
            }
            if due(&mut evaluate, now) {
                self.evaluate(now)?;
            }
            if due(&mut tick, now) {
                self.supervise(now)?;
            }
            if due(&mut report, now) {
                self.report(now)?;
            }
            if due(&mut log, now) {
                self.log_status();
            }
            if due(&mut diag, now) {
                self.publish_diagnostics(now);
            }
            let next = [&probe, &evaluate, &tick, &report, &log, &diag]
                .into_iter()
                .filter_map(|e| e.as_ref().map(|e| e.next))
                .min()
                .unwrap_or(now)
                .saturating_sub(self.clock.now());
            let wait = Duration::from_nanos(next).min(Duration::from_millis(50));
            // Answers are timestamped on arrival by the reply thread, so waking late for them
            // costs no accuracy: a plain sleep is enough.
            std::thread::sleep(wait);
        };
        for f in self.forwarders.drain(..) {
            f.stop();
        }
        if let Some(r) = self.recording.take() {
            r.finish()?;
        }
        result
    }

    fn evaluate(&mut self, now: Nanos) -> Result<(), BridgeError> {
        let transitions = self.classifier.evaluate(now);
        for t in &transitions {
            let r = &t.reading;
            tracing::info!(
                "subscriber {}: {} → {} (rtt {} ms, loss {:.1} %, {} probes)",
                t.subscriber,
                t.from,
                t.to,
                r.rtt_ms.map_or("-".into(), |v| format!("{v:.1}")),
                r.loss_pct,
                r.samples
            );
        }
        let report = ClassifierReport { subscribers: self.classifier.report(), transitions };
        if let Some(m) = &self.metrics {
            m.set_subscribers(&report.subscribers);
        }
        if !report.transitions.is_empty() {
            self.apply_policy();
        }
        if let Some(rec) = &mut self.recording {
            rec.classifier(self.clock.unix_ns(now), &report)?;
        }
        self.lock_status().classifier = Some(report);
        Ok(())
    }

    fn lock_status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The health of every subscriber of `topic`: the configured ones that read it, and every
    /// subscriber heard but not configured (it may read any topic).
    fn healths(&self, topic: &str) -> Vec<Health> {
        let mut out: Vec<Health> = self.config.subscribers_of(topic).map(|s| self.classifier.health(&s.name)).collect();
        out.extend(
            self.classifier.report().into_iter().filter(|r| !self.configured.contains(&r.name)).map(|r| r.health),
        );
        out
    }

    fn apply_policy(&self) {
        let mode = self.supervisor.mode();
        for f in &self.forwarders {
            let d = decide(&self.config.policy, mode, self.healths(&f.shared.name));
            if d != f.shared.decision() {
                tracing::info!(
                    "{}: critical {}, noncritical {}",
                    f.shared.name,
                    if d.critical { "on" } else { "stopped" },
                    d.noncritical_hz.map_or("suspended".into(), |hz| format!("{hz} Hz"))
                );
                f.shared.set_decision(d);
            }
        }
    }

    fn supervise(&mut self, now: Nanos) -> Result<(), BridgeError> {
        let errors: u64 = self.forwarders.iter().map(|f| f.shared.errors()).sum();
        let vitals = Vitals {
            queue_fill: self.forwarders.iter().map(|f| f.shared.queue_fill()).fold(0.0, f64::max),
            lag_ms: self.forwarders.iter().map(|f| f.shared.lag(now)).max().unwrap_or(0) as f64 / 1e6,
            errors: errors.saturating_sub(self.errors_total),
        };
        self.errors_total = errors;
        let change = self.supervisor.observe(vitals, now);
        if let Some(c) = &change {
            let line = format!("supervisor: {} → {} ({})", c.from, c.to, c.reason);
            match c.to {
                Mode::Emergency => tracing::error!("{line}"),
                Mode::Degraded => tracing::warn!("{line}"),
                Mode::Normal => tracing::info!("{line}"),
            }
            if c.to == Mode::Emergency {
                // Stopping forwarding includes what is queued: nothing stale goes out later.
                for f in &self.forwarders {
                    f.shared.critical_queue.clear();
                    f.shared.noncritical_queue.clear();
                }
            }
            self.last_reason = c.reason.clone();
            if let Some(m) = &self.metrics {
                m.mode_changed();
            }
            self.apply_policy();
            self.lock_status().mode_changes.push(c.clone());
        }
        self.last_vitals = vitals;
        if change.is_some() {
            self.publish_diagnostics(now);
        }
        self.lock_status().mode = Some(self.supervisor.mode());
        if let Some(m) = &self.metrics {
            m.set_mode(self.supervisor.mode());
        }
        if let Some(rec) = &mut self.recording {
            let r = SupervisorReport { mode: self.supervisor.mode(), vitals, change };
            rec.supervisor(self.clock.unix_ns(now), &r)?;
        }
        Ok(())
    }

    fn report(&mut self, now: Nanos) -> Result<(), BridgeError> {
        let mut reports = Vec::new();
        for (i, f) in self.forwarders.iter().enumerate() {
            let (seen, since) = self.seen[i];
            let secs = (now.saturating_sub(since) as f64 / 1e9).max(1e-9);
            let s = &f.shared;
            let mut next = Seen { received: s.received.load(Ordering::Relaxed), ..seen };
            let mut latencies_us: [Vec<u32>; 2] = Default::default();
            let mut path = |k: usize, p: &PathStats, topic: &str, overflow_total: u64| {
                let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                let (fw, rl, su, st, er) =
                    (load(&p.forwarded), load(&p.rate_limited), load(&p.suspended), load(&p.stale), load(&p.errors));
                let overflow = overflow_total + load(&p.abandoned);
                latencies_us[k] = p.take_latencies();
                let lat = percentiles(latencies_us[k].clone());
                let r = PathReport {
                    topic: topic.to_string(),
                    rate_hz: (fw - seen.forwarded[k]) as f64 / secs,
                    forwarded: fw - seen.forwarded[k],
                    rate_limited: rl - seen.rate_limited[k],
                    suspended: su - seen.suspended[k],
                    stale: st - seen.stale[k],
                    overflow: overflow - seen.overflow[k],
                    errors: er - seen.errors[k],
                    readers: p.matched.load(Ordering::Relaxed),
                    latency_p50_ms: lat.map(|l| l.0),
                    latency_p99_ms: lat.map(|l| l.1),
                    latency_max_ms: lat.map(|l| l.2),
                };
                next.forwarded[k] = fw;
                next.rate_limited[k] = rl;
                next.suspended[k] = su;
                next.stale[k] = st;
                next.overflow[k] = overflow;
                next.errors[k] = er;
                r
            };
            let critical = path(0, &s.critical, &f.names.critical, s.critical_queue.dropped());
            let noncritical = path(1, &s.noncritical, &f.names.noncritical, s.noncritical_queue.dropped());
            let report = TopicReport {
                input: f.names.input.clone(),
                input_hz: (next.received - seen.received) as f64 / secs,
                critical,
                noncritical,
                decision: s.decision(),
            };
            if let Some(m) = &self.metrics {
                let [critical_us, noncritical_us] = &latencies_us;
                m.add_report(&s.name, &report, next.received - seen.received, [critical_us, noncritical_us]);
            }
            self.seen[i] = (next, now);
            reports.push(report);
        }
        if let Some(rec) = &mut self.recording {
            for r in &reports {
                rec.paths(self.clock.unix_ns(now), r)?;
            }
        }
        let role = self.elector.as_ref().map(Elector::role);
        if let (Some(m), Some(role)) = (&self.metrics, role) {
            m.set_role(role);
        }
        let mut status = self.lock_status();
        status.topics = reports;
        status.role = role;
        Ok(())
    }

    fn log_status(&self) {
        let status = self.lock_status().clone();
        for t in &status.topics {
            tracing::info!("{t}");
        }
        if let Some(c) = &status.classifier {
            for s in &c.subscribers {
                let reading = s.reading.map_or(String::from("no reading yet"), |r| {
                    format!(
                        "rtt {} ms, loss {:.1} % over {} probes",
                        r.rtt_ms.map_or("-".into(), |v| format!("{v:.1}")),
                        r.loss_pct,
                        r.samples
                    )
                });
                let pinned = if s.overridden { " (override)" } else { "" };
                tracing::info!("subscriber {}: {}{pinned}, {reading}", s.name, s.state);
            }
        }
        tracing::info!("mode {}", self.supervisor.mode());
        if let Some(role) = status.role {
            tracing::info!("role {role}");
        }
    }

    fn publish_diagnostics(&self, now: Nanos) {
        let Some(d) = &self.diagnostics else { return };
        let mode = self.supervisor.mode();
        let v = &self.last_vitals;
        let mut values = vec![
            KeyValue { key: "mode".into(), value: mode.to_string() },
            KeyValue { key: "queue_fill".into(), value: format!("{:.2}", v.queue_fill) },
            KeyValue { key: "callback_lag_ms".into(), value: format!("{:.1}", v.lag_ms) },
            KeyValue { key: "errors_in_window".into(), value: self.supervisor.errors_in_window().to_string() },
        ];
        if let Some(e) = &self.elector {
            values.push(KeyValue { key: "role".into(), value: e.role().to_string() });
        }
        for f in &self.forwarders {
            let s = &f.shared;
            values.push(KeyValue {
                key: format!("{} forwarded critical/noncritical", f.names.input),
                value: format!(
                    "{}/{}",
                    s.critical.forwarded.load(Ordering::Relaxed),
                    s.noncritical.forwarded.load(Ordering::Relaxed)
                ),
            });
        }
        for s in self.classifier.report() {
            values.push(KeyValue { key: format!("subscriber {}", s.name), value: s.state.to_string() });
        }
        let message = match mode {
            Mode::Normal => "forwarding".to_string(),
            Mode::Degraded => format!("noncritical forwarding suspended: {}", self.last_reason),
            Mode::Emergency => format!("forwarding stopped: {}", self.last_reason),
        };
        d.publish(
            self.clock.unix_ns(now),
            DiagnosticStatus {
                level: level(mode),
                name: "bauxite_bridge".into(),
                message,
                hardware_id: self.id.clone(),
                values,
            },
        );
    }
}

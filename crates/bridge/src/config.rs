//! The bridge's YAML configuration: topics and their QoS, subscribers and overrides, classifier
//! thresholds, rates, supervisor limits, diagnostics and telemetry.
//!
//! Every constant of the seed is a default here and every one can be changed. Unknown keys and
//! bad values are errors that name the file, the line and the key ([`ConfigError`] from
//! `bauxite-core`); values are checked while they are parsed (so the YAML parser's position is
//! the value's), relations between values afterwards. Nothing is started from a file that fails.
//!
//! ```yaml
//! dds: {domain_id: 0, interfaces: [127.0.0.1]}
//! topics:
//!   - {name: /scan, type: sensor_msgs/msg/LaserScan}      # → rt/scan/critical, rt/scan/noncritical
//! subscribers:
//!   - {name: slow_nav, topics: [/scan]}
//!   - {name: logger, override: noncritical}
//! classifier: {demote_rtt: 50ms, promote_rtt: 35ms}
//! policy: {noncritical_hz: 10, degraded_hz: 3}
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use bauxite_core::units::{deserialize_from_str, duration_text};
use bauxite_core::{
    ConfigError, MetricsAddr, Shown, format_duration, locate, parse_duration, parse_yaml, read_config, within,
};
use serde::{Deserialize, Deserializer, Serialize};

/// The JSON Schema of a bridge config file (`bauxite bridge schema`): every key with its type,
/// default, bounds and doc comment. Relations between keys are checked by [`parse`] only.
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(BridgeConfig)
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// The DDS domain and network.
    #[serde(default)]
    pub dds: DdsConfig,
    /// The input topics; each gets a critical and a noncritical output.
    pub topics: Vec<TopicConfig>,
    /// Known subscribers (probe responder names), with optional overrides.
    #[serde(default)]
    pub subscribers: Vec<SubscriberConfig>,
    /// Probe-based health classification.
    #[serde(default)]
    pub classifier: ClassifierConfig,
    /// Rates, queues and stale-sample dropping.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// The safety supervisor's limits.
    #[serde(default)]
    pub supervisor: SupervisorConfig,
    /// The diagnostics topic.
    #[serde(default)]
    pub diagnostics: DiagnosticsConfig,
    /// Logs and recordings.
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// Serve Prometheus metrics on `/metrics` at this address (`PORT` is loopback's); off when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsAddr>,
    /// Hot standby: bridges with the same group elect one that writes; the others stand by
    /// with their writers matched ([`crate::redundancy`]). Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redundancy: Option<RedundancyConfig>,
}

/// Which DDS domain, over which interfaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DdsConfig {
    /// The DDS domain (ROS 2's `ROS_DOMAIN_ID`).
    #[serde(default, deserialize_with = "count::<_, DomainId, _>")]
    #[schemars(with = "InRange<DomainId>")]
    pub domain_id: u16,
    /// The one interface address to use (all interfaces when absent): every UDP socket binds
    /// it, and discovery announces and multicast use only it. `[127.0.0.1]` keeps everything
    /// on this host. A list for the day RustDDS can listen on several addresses; today it holds
    /// one IPv4 address, since RustDDS binds one address per port (vendor/README.md).
    #[serde(default)]
    pub interfaces: Option<Vec<IpAddr>>,
}

/// DDS reliability, as a reader or writer asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reliability {
    /// Retransmit until acknowledged.
    Reliable,
    /// Send once.
    BestEffort,
}

/// One input topic and its two outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicConfig {
    /// The input topic (a ROS 2 name such as `/scan`, or a DDS name when `ros2` is false).
    #[serde(deserialize_with = "topic_name")]
    pub name: String,
    /// Its type (`sensor_msgs/msg/LaserScan`, or the DDS type name when `ros2` is false).
    #[serde(rename = "type", deserialize_with = "type_name")]
    pub type_name: String,
    /// Map names and types with ROS 2's conventions (`/scan` → `rt/scan`,
    /// `pkg/msg/T` → `pkg::msg::dds_::T_`).
    #[serde(default = "yes")]
    pub ros2: bool,
    /// The critical (RELIABLE) output; `<name>/critical` by default.
    #[serde(default, deserialize_with = "some_topic_name", skip_serializing_if = "Option::is_none")]
    pub critical: Option<String>,
    /// The noncritical (BEST_EFFORT) output; `<name>/noncritical` by default.
    #[serde(default, deserialize_with = "some_topic_name", skip_serializing_if = "Option::is_none")]
    pub noncritical: Option<String>,
    /// QoS of the three DDS entities.
    #[serde(default)]
    pub qos: TopicQos,
}

/// QoS of a topic's reader and writers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicQos {
    /// The input reader's reliability. A RELIABLE reader matches only RELIABLE publishers;
    /// a BEST_EFFORT one matches both.
    #[serde(default = "reliable")]
    pub input: Reliability,
    /// KEEP_LAST depth of the reader and both writers. The reader's is what matters: samples
    /// that arrive while more than `depth` wait to be taken are overwritten inside RustDDS,
    /// silently. ROS 2's usual 10 lost 7 % at 8 000 samples/s of 1 KB; 100 kept up to 15 000.
    #[serde(default = "hundred", deserialize_with = "count::<_, Depth, _>")]
    #[schemars(with = "InRange<Depth>")]
    pub depth: usize,
    /// Unacknowledged samples the critical writer may hold before a write blocks
    /// (RustDDS sizes a RELIABLE writer's window from RESOURCE_LIMITS, not from the depth).
    /// 256 is 8.5 s at 30 Hz: a reader that stops acknowledging is usually dropped by its
    /// lease (10 s in Cyclone) about when the window fills, and 256 samples in flight keep
    /// loopback throughput near RustDDS's own (32 gave a third of it). It costs up to 256
    /// samples of memory per topic.
    #[serde(default = "two_fifty_six", deserialize_with = "count::<_, CriticalWindow, _>")]
    #[schemars(with = "InRange<CriticalWindow>")]
    pub critical_window: usize,
    /// How long one critical write may block on a full window before it is retried.
    #[serde(
        default = "twenty_ms",
        serialize_with = "duration_text::serialize",
        deserialize_with = "span::<_, Blocking>"
    )]
    #[schemars(with = "InSpan<Blocking>")]
    pub critical_blocking: Duration,
}

impl Default for TopicQos {
    fn default() -> Self {
        Self { input: Reliability::Reliable, depth: 100, critical_window: 256, critical_blocking: twenty_ms() }
    }
}

impl TopicConfig {
    /// The DDS topic name of `name` under this topic's naming convention.
    fn dds(&self, name: &str) -> String {
        if self.ros2 { ros2_topic(name) } else { name.to_string() }
    }

    /// The input's DDS topic name.
    pub fn dds_input(&self) -> String {
        self.dds(&self.name)
    }

    /// The critical output's name (as configured, before DDS mapping).
    pub fn critical_name(&self) -> String {
        self.critical.clone().unwrap_or_else(|| format!("{}/critical", self.name.trim_end_matches('/')))
    }

    /// The noncritical output's name (as configured, before DDS mapping).
    pub fn noncritical_name(&self) -> String {
        self.noncritical.clone().unwrap_or_else(|| format!("{}/noncritical", self.name.trim_end_matches('/')))
    }

    /// The critical output's DDS topic name.
    pub fn dds_critical(&self) -> String {
        self.dds(&self.critical_name())
    }

    /// The noncritical output's DDS topic name.
    pub fn dds_noncritical(&self) -> String {
        self.dds(&self.noncritical_name())
    }

    /// The DDS type name, shared by the input and both outputs.
    pub fn dds_type(&self) -> String {
        if self.ros2 { ros2_type(&self.type_name) } else { self.type_name.clone() }
    }
}

/// ROS 2's DDS name of a topic: `/scan` and `scan` become `rt/scan`.
pub fn ros2_topic(name: &str) -> String {
    format!("rt/{}", name.trim_start_matches('/'))
}

/// ROS 2's DDS name of a message type: `sensor_msgs/msg/LaserScan` becomes
/// `sensor_msgs::msg::dds_::LaserScan_`.
pub fn ros2_type(name: &str) -> String {
    match name.rsplit_once('/') {
        Some((scope, leaf)) => format!("{}::dds_::{leaf}_", scope.replace('/', "::")),
        None => name.to_string(),
    }
}

/// A manual classification that wins over probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Override {
    /// Always CRITICAL (healthy, normal noncritical rate).
    Critical,
    /// Always NONCRITICAL (degraded rate).
    Noncritical,
}

/// A subscriber the bridge knows by its probe responder's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriberConfig {
    /// The name its probe responder answers with.
    pub name: String,
    /// A fixed state instead of the probes' verdict.
    #[serde(default, rename = "override")]
    pub override_state: Option<Override>,
    /// The input topics whose noncritical output it reads (all when absent).
    #[serde(default)]
    pub topics: Option<Vec<String>>,
}

/// The classifier's constants (seed 004, section III-C); defaults are the seed's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ClassifierConfig {
    /// Send probes and classify; off, every subscriber stays UNKNOWN (the seed's ablation).
    pub enabled: bool,
    /// The probe topic (BEST_EFFORT); a ROS 2 name, `rt/` is added.
    #[serde(deserialize_with = "topic_name")]
    pub probe_topic: String,
    /// The topic probe responders answer on.
    #[serde(deserialize_with = "topic_name")]
    pub reply_topic: String,
    /// Probes per second.
    #[serde(deserialize_with = "number::<_, ProbeRate>")]
    #[schemars(with = "InRange<ProbeRate>")]
    pub probe_rate_hz: f64,
    /// At most this many resolved probes per subscriber count.
    #[serde(deserialize_with = "count::<_, Samples, _>")]
    #[schemars(with = "InRange<Samples>")]
    pub window_samples: usize,
    /// ...and only those sent within this long.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, ProbeWindow>")]
    #[schemars(with = "InSpan<ProbeWindow>")]
    pub window: Duration,
    /// How often subscribers are evaluated. The seed does not say; 1 s makes three consecutive
    /// evaluations span 3 s, well inside its ~20 s detection and recovery.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Evaluation>")]
    #[schemars(with = "InSpan<Evaluation>")]
    pub evaluate_every: Duration,
    /// A probe unanswered for this long is lost.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, ReplyTimeout>")]
    #[schemars(with = "InSpan<ReplyTimeout>")]
    pub reply_timeout: Duration,
    /// Fewer resolved probes than this give no verdict.
    #[serde(deserialize_with = "count::<_, Samples, _>")]
    #[schemars(with = "InRange<Samples>")]
    pub min_samples: usize,
    /// Demote when the mean RTT is above this...
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Rtt>")]
    #[schemars(with = "InSpan<Rtt>")]
    pub demote_rtt: Duration,
    /// ...or the loss is above this (percent).
    #[serde(deserialize_with = "number::<_, Percent>")]
    #[schemars(with = "InRange<Percent>")]
    pub demote_loss_pct: f64,
    /// Promote only when the mean RTT is below this...
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Rtt>")]
    #[schemars(with = "InSpan<Rtt>")]
    pub promote_rtt: Duration,
    /// ...and the loss below this (percent).
    #[serde(deserialize_with = "number::<_, Percent>")]
    #[schemars(with = "InRange<Percent>")]
    pub promote_loss_pct: f64,
    /// Consecutive evaluations needed for either move.
    #[serde(deserialize_with = "count::<_, Consecutive, _>")]
    #[schemars(with = "InRange<Consecutive>")]
    pub consecutive: u32,
    /// Let UNKNOWN stand (treated as degraded); false treats UNKNOWN as CRITICAL.
    pub allow_unknown_state: bool,
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            probe_topic: "/bauxite/probe".into(),
            reply_topic: "/bauxite/probe_reply".into(),
            probe_rate_hz: 5.0,
            window_samples: 50,
            window: Duration::from_secs(10),
            evaluate_every: Duration::from_secs(1),
            reply_timeout: Duration::from_secs(1),
            min_samples: 10,
            demote_rtt: Duration::from_millis(50),
            demote_loss_pct: 1.5,
            promote_rtt: Duration::from_millis(35),
            promote_loss_pct: 0.5,
            consecutive: 3,
            allow_unknown_state: false,
        }
    }
}

/// Rates, queues and stale dropping; defaults are the seed's rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// The noncritical path's rate while its subscribers are healthy.
    #[serde(deserialize_with = "number::<_, SampleRate>")]
    #[schemars(with = "InRange<SampleRate>")]
    pub noncritical_hz: f64,
    /// ...and while any of them is degraded.
    #[serde(deserialize_with = "number::<_, SampleRate>")]
    #[schemars(with = "InRange<SampleRate>")]
    pub degraded_hz: f64,
    /// Token-bucket depth in samples (more than one, or jittery input loses rate).
    #[serde(deserialize_with = "number::<_, Burst>")]
    #[schemars(with = "InRange<Burst>")]
    pub burst: f64,
    /// Noncritical samples older than this when their turn comes are dropped.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, MaxAge>")]
    #[schemars(with = "InSpan<MaxAge>")]
    pub max_age: Duration,
    /// The critical writer's queue (drop-oldest).
    #[serde(deserialize_with = "count::<_, Queue, _>")]
    #[schemars(with = "InRange<Queue>")]
    pub critical_queue: usize,
    /// The noncritical writer's queue (drop-oldest).
    #[serde(deserialize_with = "count::<_, Queue, _>")]
    #[schemars(with = "InRange<Queue>")]
    pub noncritical_queue: usize,
    /// EMERGENCY stops the critical path too (the seed's "stop all forwarding").
    pub emergency_stops_critical: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            noncritical_hz: 10.0,
            degraded_hz: 3.0,
            burst: 2.0,
            max_age: Duration::from_millis(500),
            critical_queue: 64,
            noncritical_queue: 8,
            emergency_stops_critical: true,
        }
    }
}

/// Limits that move the supervisor from NORMAL to DEGRADED: reaching any one counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Fill of the fullest queue, 0–1.
    #[serde(deserialize_with = "number::<_, Fraction>")]
    #[schemars(with = "InRange<Fraction>")]
    pub queue_fill: f64,
    /// Callback lag.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Lag>")]
    #[schemars(with = "InSpan<Lag>")]
    pub lag: Duration,
    /// Errors within the error window.
    #[serde(deserialize_with = "count::<_, Errors, _>")]
    #[schemars(with = "InRange<Errors>")]
    pub errors: u64,
}

/// Limits the bridge must stay at or under for `hold` to step down from DEGRADED.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RecoverLimits {
    /// Fill of the fullest queue, 0–1.
    #[serde(deserialize_with = "number::<_, Fraction>")]
    #[schemars(with = "InRange<Fraction>")]
    pub queue_fill: f64,
    /// Callback lag.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Lag>")]
    #[schemars(with = "InSpan<Lag>")]
    pub lag: Duration,
    /// Errors within the error window.
    #[serde(deserialize_with = "count::<_, Errors, _>")]
    #[schemars(with = "InRange<Errors>")]
    pub errors: u64,
    /// How long the calm must last.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Hold>")]
    #[schemars(with = "InSpan<Hold>")]
    pub hold: Duration,
}

/// Limits that, held for `after`, mean extreme failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EmergencyLimits {
    /// Fill of the fullest queue, 0–1.
    #[serde(deserialize_with = "number::<_, Fraction>")]
    #[schemars(with = "InRange<Fraction>")]
    pub queue_fill: f64,
    /// Callback lag.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Lag>")]
    #[schemars(with = "InSpan<Lag>")]
    pub lag: Duration,
    /// Errors within the error window.
    #[serde(deserialize_with = "count::<_, Errors, _>")]
    #[schemars(with = "InRange<Errors>")]
    pub errors: u64,
    /// How long without a break.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Hold>")]
    #[schemars(with = "InSpan<Hold>")]
    pub after: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self { queue_fill: 0.5, lag: Duration::from_millis(100), errors: 5 }
    }
}

impl Default for RecoverLimits {
    fn default() -> Self {
        Self { queue_fill: 0.2, lag: Duration::from_millis(20), errors: 0, hold: Duration::from_secs(5) }
    }
}

impl Default for EmergencyLimits {
    fn default() -> Self {
        Self { queue_fill: 1.0, lag: Duration::from_secs(2), errors: 100, after: Duration::from_secs(3) }
    }
}

impl EmergencyLimits {
    /// The three limits without the duration.
    pub fn limits(&self) -> Limits {
        Limits { queue_fill: self.queue_fill, lag: self.lag, errors: self.errors }
    }
}

/// The safety supervisor's tick and limits (the seed gives no numbers; these are ours).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SupervisorConfig {
    /// How often vital signs are taken.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Tick>")]
    #[schemars(with = "InSpan<Tick>")]
    pub tick: Duration,
    /// Errors are summed over this long.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, ErrorWindow>")]
    #[schemars(with = "InSpan<ErrorWindow>")]
    pub error_window: Duration,
    /// NORMAL → DEGRADED.
    pub degrade: Limits,
    /// DEGRADED → NORMAL (and EMERGENCY → DEGRADED uses `degrade` with this hold).
    pub recover: RecoverLimits,
    /// → EMERGENCY.
    pub emergency: EmergencyLimits,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            tick: Duration::from_millis(100),
            error_window: Duration::from_secs(1),
            degrade: Limits::default(),
            recover: RecoverLimits::default(),
            emergency: EmergencyLimits::default(),
        }
    }
}

/// Where the bridge reports itself (a `diagnostic_msgs/DiagnosticArray`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DiagnosticsConfig {
    /// Publish at all.
    pub enabled: bool,
    /// The ROS 2 topic (`rt/` is added).
    #[serde(deserialize_with = "topic_name")]
    pub topic: String,
    /// How often (and at every mode change).
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Period>")]
    #[schemars(with = "InSpan<Period>")]
    pub period: Duration,
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        Self { enabled: true, topic: "/diagnostics".into(), period: Duration::from_secs(1) }
    }
}

/// A hot-standby group: every bridge started with the same `group` reads the inputs and keeps
/// its writers matched; one of them, elected, writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedundancyConfig {
    /// The group's name, required (letters, digits, `_`, `-`): its heartbeat topic is
    /// `/bauxite/redundancy/<group>`.
    #[serde(deserialize_with = "group_name")]
    pub group: String,
    /// Between heartbeats.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, HeartbeatEvery>")]
    #[schemars(with = "InSpan<HeartbeatEvery>")]
    pub heartbeat: Duration,
    /// An active bridge silent this long is taken over (at least three heartbeats).
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Lease>")]
    #[schemars(with = "InSpan<Lease>")]
    pub lease: Duration,
    /// How long a starting bridge listens for an active one before it may take over (long
    /// enough for DDS discovery, so a restarted bridge joins as a standby).
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, Join>")]
    #[schemars(with = "InSpan<Join>")]
    pub join: Duration,
    /// Input samples kept per topic, written on a takeover when the last active bridge is
    /// not known to have sent them (at most the critical queue).
    #[serde(deserialize_with = "count::<_, Queue, _>")]
    #[schemars(with = "InRange<Queue>")]
    pub keep: usize,
}

impl Default for RedundancyConfig {
    fn default() -> Self {
        Self {
            group: String::new(),
            heartbeat: Duration::from_millis(20),
            lease: Duration::from_millis(80),
            join: Duration::from_secs(2),
            keep: 32,
        }
    }
}

impl RedundancyConfig {
    fn check(&self, policy: &PolicyConfig) -> Result<(), Invalid> {
        if self.group.is_empty() {
            return Err(Invalid::new("redundancy.group", "a hot-standby group needs a name"));
        }
        if self.lease < 3 * self.heartbeat {
            return Err(Invalid::new(
                "redundancy.lease",
                format!(
                    "{} is less than three heartbeats ({}): a late heartbeat would hand over",
                    format_duration(self.lease),
                    format_duration(3 * self.heartbeat)
                ),
            ));
        }
        if self.keep > policy.critical_queue {
            return Err(Invalid::new(
                "redundancy.keep",
                format!(
                    "{} is more than policy.critical_queue ({}): a takeover would drop the oldest",
                    self.keep, policy.critical_queue
                ),
            ));
        }
        Ok(())
    }
}

/// A group name: one ROS 2 name segment.
struct GroupName(String);

impl FromStr for GroupName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("`{s}` is not a group name (letters, digits, `_` and `-`)"));
        }
        Ok(Self(s.to_string()))
    }
}

fn group_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    deserialize_from_str::<D, GroupName>(d).map(|g| g.0)
}

/// Status logs and the MCAP recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// A status line per topic this often.
    #[serde(serialize_with = "duration_text::serialize", deserialize_with = "span::<_, StatusEvery>")]
    #[schemars(with = "InSpan<StatusEvery>")]
    pub status_every: Duration,
    /// Record classifier, path and supervisor telemetry to this MCAP file.
    pub record: Option<PathBuf>,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self { status_every: Duration::from_secs(5), record: None }
    }
}

fn yes() -> bool {
    true
}
fn reliable() -> Reliability {
    Reliability::Reliable
}
fn hundred() -> usize {
    100
}
fn two_fifty_six() -> usize {
    256
}
fn twenty_ms() -> Duration {
    Duration::from_millis(20)
}

/// The range a number of the file must fall in; checked while it is parsed, so a bad value is
/// reported at its own line. Every number has one: a value that is positive but absurd (a probe
/// rate of 1e-300 Hz, a queue of 4 billion samples) would otherwise pass and then panic, spin or
/// exhaust memory in the running bridge.
trait Range {
    const MIN: f64;
    const MAX: f64;
    /// Only whole numbers.
    const WHOLE: bool;
    /// Why the range ends where it does, when the bounds do not say it themselves.
    const WHY: &'static str;
}

/// Declares a [`Range`]: `Name: min..=max`, optionally `whole` and a reason.
macro_rules! range {
    (@whole) => { false };
    (@whole whole) => { true };
    ($($(#[$doc:meta])* $name:ident: $min:literal ..= $max:literal $(, $whole:ident)? $(; $why:literal)?;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl Range for $name {
            const MIN: f64 = $min as f64;
            const MAX: f64 = $max as f64;
            const WHOLE: bool = range!(@whole $($whole)?);
            const WHY: &'static str = concat!("" $(, " (", $why, ")")?);
        }
    )*};
}

range! {
    /// RTPS ports are 7400 + 250 × domain + offsets: domain 233 starts at 65 650 and wraps.
    DomainId: 0..=232, whole; "the RTPS ports of higher domains pass 65535";
    /// A KEEP_LAST history: samples of memory per reader and writer.
    Depth: 1..=10_000, whole;
    /// Unacknowledged critical samples: memory per topic.
    CriticalWindow: 1..=65_536, whole;
    /// Probes per second: one control-loop wake-up each.
    ProbeRate: 0.1..=100;
    /// Resolved probes kept or needed per subscriber.
    Samples: 1..=10_000, whole;
    /// A loss threshold.
    Percent: 0..=100;
    /// Evaluations in a row.
    Consecutive: 1..=1_000, whole;
    /// A forwarding rate in samples per second.
    SampleRate: 0.01..=100_000;
    /// Token-bucket depth in samples.
    Burst: 1..=10_000;
    /// A drop-oldest queue in samples: memory per topic.
    Queue: 1..=65_536, whole;
    /// A queue fill.
    Fraction: 0..=1;
    /// Errors within the error window.
    Errors: 0..=1_000_000, whole;
}

/// A number within `R`; also what a bounded field's JSON Schema says it is.
struct InRange<R>(f64, PhantomData<R>);

impl<R: Range> schemars::JsonSchema for InRange<R> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "bounded-number".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        if R::WHOLE {
            schemars::json_schema!({"type": "integer", "minimum": R::MIN as i64, "maximum": R::MAX as i64})
        } else {
            schemars::json_schema!({"type": "number", "minimum": R::MIN, "maximum": R::MAX})
        }
    }
}

impl<R: Range> FromStr for InRange<R> {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
        let v = within(v, R::MIN..=R::MAX).map_err(|e| format!("{e}{}", R::WHY))?;
        if R::WHOLE && v.fract() != 0.0 {
            return Err(format!("{} is not a whole number", v.shown()));
        }
        Ok(Self(v, PhantomData))
    }
}

fn number<'de, D: Deserializer<'de>, R: Range>(d: D) -> Result<f64, D::Error> {
    deserialize_from_str::<D, InRange<R>>(d).map(|v| v.0)
}

/// A whole number within `R` (every whole range fits `u16`, `u32`, `u64` and `usize`).
fn count<'de, D: Deserializer<'de>, R: Range, T: TryFrom<u64>>(d: D) -> Result<T, D::Error> {
    let v = number::<D, R>(d)?;
    T::try_from(v as u64).map_err(|_| serde::de::Error::custom(format!("`{v}` is too large")))
}

/// The range a duration of the file must fall in; like [`Range`], it keeps a valid-looking
/// value from spinning a thread (`supervisor.tick: 1ns`) or never firing.
trait Span {
    const MIN: Duration;
    const MAX: Duration;
}

/// Declares a [`Span`]: `Name: min..=max` as `Duration` expressions.
macro_rules! span {
    ($($(#[$doc:meta])* $name:ident: $min:expr, $max:expr;)*) => {$(
        $(#[$doc])*
        struct $name;
        impl Span for $name {
            const MIN: Duration = $min;
            const MAX: Duration = $max;
        }
    )*};
}

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

span! {
    /// How long one critical write may block before it is retried.
    Blocking: ms(1), secs(10);
    /// How far back the classifier looks.
    ProbeWindow: ms(100), secs(600);
    /// Between classifier evaluations.
    Evaluation: ms(10), secs(60);
    /// Before a probe counts as lost.
    ReplyTimeout: ms(1), secs(60);
    /// A demotion or promotion RTT.
    Rtt: ms(1), secs(60);
    /// Noncritical samples older than this are dropped.
    MaxAge: ms(1), secs(600);
    /// A callback-lag limit.
    Lag: ms(1), secs(600);
    /// How long a calm or an emergency must last.
    Hold: ms(10), secs(3600);
    /// The supervisor's tick: one control-loop wake-up each.
    Tick: ms(10), secs(10);
    /// Errors are summed over this long.
    ErrorWindow: ms(10), secs(3600);
    /// Between diagnostics messages.
    Period: ms(10), secs(3600);
    /// Between status lines.
    StatusEvery: ms(100), secs(3600);
    /// Between a hot standby's heartbeats: four election ticks each.
    HeartbeatEvery: ms(4), secs(10);
    /// A hot standby's lease.
    Lease: ms(12), secs(60);
    /// A starting hot standby's listening.
    Join: ms(0), secs(600);
}

/// A duration within `S`; also what a bounded duration's JSON Schema says it is.
struct InSpan<S>(Duration, PhantomData<S>);

impl<S: Span> schemars::JsonSchema for InSpan<S> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "bounded-duration".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let range = format!("{} to {}", format_duration(S::MIN), format_duration(S::MAX));
        schemars::json_schema!({"type": "string", "format": "duration", "x-range": range})
    }
}

impl<S: Span> FromStr for InSpan<S> {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let d = parse_duration(s).map_err(|e| e.to_string())?;
        within(d, S::MIN..=S::MAX).map(|d| Self(d, PhantomData))
    }
}

fn span<'de, D: Deserializer<'de>, S: Span>(d: D) -> Result<Duration, D::Error> {
    deserialize_from_str::<D, InSpan<S>>(d).map(|v| v.0)
}

/// A topic name: non-empty, no whitespace, no empty segment, no trailing `/`.
struct TopicName(String);

impl FromStr for TopicName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        bauxite_core::diagnostics::check_topic_name(s).map(|()| Self(s.to_string()))
    }
}

fn topic_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    deserialize_from_str::<D, TopicName>(d).map(|t| t.0)
}
fn some_topic_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    topic_name(d).map(Some)
}

/// A type name: `pkg/msg/Type` (ROS 2) or any non-empty DDS name.
struct TypeName(String);

impl FromStr for TypeName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() || s.chars().any(char::is_whitespace) {
            return Err(format!("`{s}` is not a type name (like `sensor_msgs/msg/LaserScan`)"));
        }
        Ok(Self(s.to_string()))
    }
}

fn type_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    deserialize_from_str::<D, TypeName>(d).map(|t| t.0)
}

/// A relation between values that does not hold; located in the text afterwards.
struct Invalid {
    key: String,
    /// The offending value as the file writes it, when the key alone may not find its line
    /// (a key written on several lines).
    value: Option<String>,
    message: String,
}

impl Invalid {
    fn new(key: impl Into<String>, message: impl fmt::Display) -> Self {
        Self { key: key.into(), value: None, message: message.to_string() }
    }

    /// Located by its value too.
    fn with_value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }
}

impl BridgeConfig {
    /// Checks what single values cannot: names, references and the order of thresholds.
    fn check(&self) -> Result<(), Invalid> {
        self.dds.check()?;
        self.check_topics()?;
        self.check_subscribers()?;
        self.classifier.check()?;
        self.policy.check()?;
        self.supervisor.check()?;
        self.redundancy.as_ref().map_or(Ok(()), |r| r.check(&self.policy))
    }

    /// At least one topic; ROS 2 type names; no DDS name used twice (inputs, outputs and the
    /// bridge's own probe, reply and diagnostics topics).
    fn check_topics(&self) -> Result<(), Invalid> {
        if self.topics.is_empty() {
            return Err(Invalid::new("topics", "at least one topic is needed"));
        }
        let mut dds_names = std::collections::BTreeSet::new();
        dds_names.insert(ros2_topic(&self.classifier.probe_topic));
        dds_names.insert(ros2_topic(&self.classifier.reply_topic));
        dds_names.insert(ros2_topic(&self.diagnostics.topic));
        if let Some(r) = &self.redundancy {
            dds_names.insert(ros2_topic(&crate::redundancy::heartbeat_topic(&r.group)));
        }
        for (i, t) in self.topics.iter().enumerate() {
            if t.ros2 && !t.type_name.contains('/') {
                return Err(Invalid::new(
                    format!("topics[{i}].type"),
                    format!("`{}` is not a ROS 2 type (`pkg/msg/Type`); set `ros2: false` for DDS names", t.type_name),
                )
                .with_value(&t.type_name));
            }
            for (what, name, dds) in [
                ("name", t.name.clone(), t.dds_input()),
                ("critical", t.critical_name(), t.dds_critical()),
                ("noncritical", t.noncritical_name(), t.dds_noncritical()),
            ] {
                if !dds_names.insert(dds.clone()) {
                    let e = Invalid::new(format!("topics[{i}].{what}"), format!("`{name}` ({dds}) is used twice"));
                    return Err(e.with_value(name));
                }
            }
        }
        Ok(())
    }

    /// Each subscriber listed once, reading only bridged topics.
    fn check_subscribers(&self) -> Result<(), Invalid> {
        use crate::classifier::{MAX_SUBSCRIBERS, check_subscriber_name};
        if self.subscribers.len() > MAX_SUBSCRIBERS {
            return Err(Invalid::new(
                "subscribers",
                format!("{} subscribers listed; at most {MAX_SUBSCRIBERS}", self.subscribers.len()),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, s) in self.subscribers.iter().enumerate() {
            check_subscriber_name(&s.name)
                .map_err(|e| Invalid::new(format!("subscribers[{i}].name"), e).with_value(&s.name))?;
            if !names.insert(&s.name) {
                return Err(Invalid::new(
                    format!("subscribers[{i}].name"),
                    format!("subscriber `{}` is listed twice", s.name),
                )
                .with_value(&s.name));
            }
            for topic in s.topics.iter().flatten() {
                if !self.topics.iter().any(|t| &t.name == topic) {
                    return Err(Invalid::new(
                        format!("subscribers[{i}].topics"),
                        format!("`{topic}` is not one of the bridged topics"),
                    )
                    .with_value(topic));
                }
            }
        }
        Ok(())
    }

    /// The subscribers configured for `topic` (those without a topic list read every topic).
    pub fn subscribers_of<'a>(&'a self, topic: &'a str) -> impl Iterator<Item = &'a SubscriberConfig> + 'a {
        self.subscribers.iter().filter(move |s| s.topics.as_ref().is_none_or(|ts| ts.iter().any(|t| t == topic)))
    }
}

impl DdsConfig {
    /// `interfaces` names what the sockets can bind: one IPv4 address.
    fn check(&self) -> Result<(), Invalid> {
        match self.interfaces.as_deref() {
            None | Some([IpAddr::V4(_)]) => Ok(()),
            Some([]) => Err(Invalid::new("dds.interfaces", "name one address, or leave it out for all")),
            Some([IpAddr::V6(ip)]) => {
                Err(Invalid::new("dds.interfaces", format!("{ip} is IPv6; RustDDS's transport is IPv4 only")))
            }
            Some(_) => Err(Invalid::new(
                "dds.interfaces",
                "name one address: RustDDS binds one address per port, so more could not be bound exactly",
            )),
        }
    }
}

impl ClassifierConfig {
    /// Promotion thresholds at or below demotion ones (hysteresis), and enough samples.
    fn check(&self) -> Result<(), Invalid> {
        if self.promote_rtt > self.demote_rtt {
            return Err(Invalid::new("classifier.promote_rtt", "must not exceed demote_rtt"));
        }
        if self.promote_loss_pct > self.demote_loss_pct {
            return Err(Invalid::new("classifier.promote_loss_pct", "must not exceed demote_loss_pct"));
        }
        if self.min_samples > self.window_samples {
            return Err(Invalid::new("classifier.min_samples", "must not exceed window_samples"));
        }
        Ok(())
    }
}

impl PolicyConfig {
    /// Degraded subscribers never get more than healthy ones.
    fn check(&self) -> Result<(), Invalid> {
        if self.degraded_hz > self.noncritical_hz {
            return Err(Invalid::new("policy.degraded_hz", "must not exceed noncritical_hz"));
        }
        Ok(())
    }
}

impl SupervisorConfig {
    /// recover ≤ degrade ≤ emergency, limit by limit.
    fn check(&self) -> Result<(), Invalid> {
        let ordered = |a: &Limits, b: &Limits| a.queue_fill <= b.queue_fill && a.lag <= b.lag && a.errors <= b.errors;
        let recover =
            Limits { queue_fill: self.recover.queue_fill, lag: self.recover.lag, errors: self.recover.errors };
        if !ordered(&recover, &self.degrade) {
            return Err(Invalid::new("supervisor.recover", "each recover limit must be ≤ its degrade limit"));
        }
        if !ordered(&self.degrade, &self.emergency.limits()) {
            return Err(Invalid::new("supervisor.emergency", "each emergency limit must be ≥ its degrade limit"));
        }
        Ok(())
    }
}

/// Reads and checks a bridge config file.
pub fn load(path: &Path) -> Result<BridgeConfig, ConfigError> {
    parse(&read_config(path)?, path)
}

/// Parses and checks bridge config YAML; `file` is only used in errors.
pub fn parse(text: &str, file: &Path) -> Result<BridgeConfig, ConfigError> {
    let config: BridgeConfig = parse_yaml(text, file)?;
    config.check().map_err(|e| ConfigError {
        file: file.to_path_buf(),
        line: line_of(text, &e),
        key: Some(e.key),
        message: e.message,
    })?;
    Ok(config)
}

/// The line of a relational error: its key's (with its value when known), or else its
/// section's (a key the file leaves to its default, such as a topic's `critical`).
fn line_of(text: &str, e: &Invalid) -> Option<usize> {
    let section = e.key.split(['.', '[']).next().unwrap_or(&e.key);
    locate(text, &e.key, e.value.as_deref()).or_else(|| locate(text, section, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds the schema (and so the reference page) states are the ones parsing
    /// enforces: just past each bound is refused naming that key, and the bound itself is not
    /// refused as out of range (a relation to another key may still refuse it).
    #[test]
    fn the_schema_states_the_bounds_parsing_enforces() {
        use bauxite_core::schema_bounds::{beyond, bounded_keys, dotted, set_at};
        let keys = bounded_keys(&json_schema());
        assert!(keys.len() >= 30, "only {} bounded keys in the schema", keys.len());
        let base: serde_yaml_ng::Value = serde_yaml_ng::from_str(GOOD).unwrap();
        let file = Path::new("bridge.yaml");
        for (path, lo, hi) in keys {
            let name = dotted(&path);
            let with = |value| parse(&serde_yaml_ng::to_string(&set_at(&base, &path, value)).unwrap(), file);
            for (bound, up) in [(&lo, false), (&hi, true)] {
                let past = beyond(bound, up);
                let refusal = with(past.clone()).expect_err(&format!("{name} = {past:?} (past {bound:?}) is read"));
                assert_eq!(refusal.key.as_deref(), Some(name.as_str()), "{name} = {past:?}: {refusal}");
                assert!(refusal.message.contains("is not between"), "{name} = {past:?}: {refusal}");
                if let Err(e) = with(bound.clone()) {
                    let out_of_range = e.key.as_deref() == Some(name.as_str()) && e.message.contains("is not between");
                    assert!(!out_of_range, "{name} = {bound:?} is refused: {e}");
                }
            }
        }
    }

    const GOOD: &str = "\
dds: {domain_id: 3, interfaces: [127.0.0.1]}
topics:
  - name: /scan
    type: sensor_msgs/msg/LaserScan
  - {name: /odom, type: nav_msgs/msg/Odometry, critical: /odom_safe}
subscribers:
  - {name: slow_nav, topics: [/scan]}
  - {name: logger, override: noncritical}
classifier:
  demote_rtt: 60ms
policy:
  degraded_hz: 2
";

    fn parse_text(text: &str) -> Result<BridgeConfig, ConfigError> {
        parse(text, Path::new("bridge.yaml"))
    }

    #[test]
    fn a_good_file_loads_with_the_seeds_defaults() {
        let c = parse_text(GOOD).unwrap();
        assert_eq!(c.dds.domain_id, 3);
        assert_eq!(c.topics[0].dds_input(), "rt/scan");
        assert_eq!(c.topics[0].dds_critical(), "rt/scan/critical");
        assert_eq!(c.topics[0].dds_noncritical(), "rt/scan/noncritical");
        assert_eq!(c.topics[0].dds_type(), "sensor_msgs::msg::dds_::LaserScan_");
        assert_eq!(c.topics[1].dds_critical(), "rt/odom_safe");
        assert_eq!(c.classifier.demote_rtt, Duration::from_millis(60));
        assert_eq!(c.classifier.promote_rtt, Duration::from_millis(35));
        assert_eq!(c.policy.degraded_hz, 2.0);
        assert_eq!(c.policy.noncritical_hz, 10.0);
        assert_eq!(c.subscribers[1].override_state, Some(Override::Noncritical));
        assert_eq!(c.subscribers_of("/scan").count(), 2);
        assert_eq!(c.subscribers_of("/odom").map(|s| s.name.as_str()).collect::<Vec<_>>(), ["logger"]);
    }

    #[test]
    fn dds_names_pass_through_when_not_ros2() {
        let c = parse_text("topics:\n  - {name: Square, type: ShapeType, ros2: false}\n").unwrap();
        assert_eq!(c.topics[0].dds_input(), "Square");
        assert_eq!(c.topics[0].dds_critical(), "Square/critical");
        assert_eq!(c.topics[0].dds_type(), "ShapeType");
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let e = parse_text(&GOOD.replace("  demote_rtt: 60ms", "  demote_rtt: 60ms\n  colour: blue")).unwrap_err();
        assert_eq!(e.line, Some(11), "{e}");
        assert_eq!(e.key.as_deref(), Some("classifier.colour"), "{e}");
        assert!(e.to_string().starts_with("bridge.yaml:11"), "{e}");
        let e = parse_text(&format!("{GOOD}colour: blue\n")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(13), Some("colour")), "{e}");
    }

    #[test]
    fn bad_values_name_their_line_and_key() {
        let e = parse_text(&GOOD.replace("demote_rtt: 60ms", "demote_rtt: soon")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(10), Some("classifier.demote_rtt")), "{e}");
        let e = parse_text(&GOOD.replace("degraded_hz: 2", "degraded_hz: -2")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(12), Some("policy.degraded_hz")), "{e}");
        assert!(e.message.contains("between 0.01 and 100000"), "{e}");
        let e = parse_text(&GOOD.replace("override: noncritical", "override: sometimes")).unwrap_err();
        assert_eq!(e.line, Some(8), "{e}");
        let e = parse_text(&GOOD.replace("name: /scan", "name: /scan/")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(3), Some("topics[0].name")), "{e}");
        let text = format!("{GOOD}supervisor:\n  degrade: {{queue_fill: 1.5}}\n");
        let e = parse_text(&text).unwrap_err();
        assert_eq!(e.line, Some(14), "{e}");
        assert!(e.message.contains("between 0 and 1"), "{e}");
    }

    /// Issue 10 #2 and #7: values that passed and then panicked (a probe rate of 1e-300 Hz),
    /// spun a core (1e300 Hz, a 1 ns tick) or wrapped the RTPS ports (domain 233).
    #[test]
    fn every_rate_duration_and_size_is_bounded_at_its_line_and_key() {
        let cases = [
            ("classifier: {probe_rate_hz: 1e-300}", "classifier.probe_rate_hz", "1e-300 is not between 0.1 and 100"),
            ("classifier: {probe_rate_hz: 1e300}", "classifier.probe_rate_hz", "1e300 is not between 0.1 and 100"),
            ("classifier: {probe_rate_hz: .nan}", "classifier.probe_rate_hz", "between"),
            ("classifier: {window: 1ns}", "classifier.window", "between 100ms and 600s"),
            ("classifier: {evaluate_every: 1ns}", "classifier.evaluate_every", "between 10ms and 60s"),
            ("classifier: {reply_timeout: 1000000s}", "classifier.reply_timeout", "between 1ms and 60s"),
            ("classifier: {window_samples: 4294967295}", "classifier.window_samples", "between 1 and 10000"),
            ("classifier: {consecutive: 2.5}", "classifier.consecutive", "a whole number"),
            ("policy: {noncritical_hz: 1e300}", "policy.noncritical_hz", "between 0.01 and 100000"),
            ("policy: {burst: 1e9}", "policy.burst", "between 1 and 10000"),
            ("policy: {critical_queue: 4294967295}", "policy.critical_queue", "between 1 and 65536"),
            ("policy: {max_age: 1ns}", "policy.max_age", "between 1ms and 600s"),
            ("supervisor: {tick: 1ns}", "supervisor.tick", "between 10ms and 10s"),
            ("supervisor: {tick: 1000s}", "supervisor.tick", "between 10ms and 10s"),
            ("supervisor: {error_window: 1ns}", "supervisor.error_window", "between 10ms and 3600s"),
            ("supervisor:\n  emergency: {errors: 1e12}", "supervisor.emergency.errors", "between 0 and 1000000"),
            ("supervisor:\n  recover: {hold: 1ns}", "supervisor.recover.hold", "between 10ms and 3600s"),
            ("diagnostics: {period: 1ns}", "diagnostics.period", "between 10ms and 3600s"),
            ("telemetry: {status_every: 1ns}", "telemetry.status_every", "between 100ms and 3600s"),
            ("dds: {domain_id: 233}", "dds.domain_id", "pass 65535"),
            ("metrics: example.org:9464", "metrics", "not a metrics address"),
            ("metrics: 70000", "metrics", "not a metrics address"),
        ];
        let topic = "topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\n";
        for (section, key, why) in cases {
            let text = format!("{topic}{section}\n");
            let e = parse_text(&text).expect_err(section);
            assert_eq!(e.key.as_deref(), Some(key), "{section}: {e}");
            assert_eq!(e.line, Some(text.lines().count()), "{section}: {e}");
            assert!(e.message.contains(why), "{section}: {e}");
        }
        let qos = "topics:\n  - name: /scan\n    type: sensor_msgs/msg/LaserScan\n    qos: {depth: 1000000}\n";
        let e = parse_text(qos).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("topics[0].qos.depth")), "{e}");
        let e = parse_text(&qos.replace("depth: 1000000", "critical_blocking: 1ns")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("topics[0].qos.critical_blocking"), "{e}");
        // Interfaces: exactly what the sockets can bind.
        for bad in ["[]", "[127.0.0.1, 10.0.0.1]", "['::1']"] {
            let e = parse_text(&format!("dds:\n  interfaces: {bad}\n{topic}")).expect_err(bad);
            assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("dds.interfaces")), "{bad}: {e}");
        }
        // The edges themselves are allowed.
        let c = parse_text(&format!("{topic}dds: {{domain_id: 232}}\nsupervisor: {{tick: 10ms}}\n")).unwrap();
        assert_eq!((c.dds.domain_id, c.supervisor.tick), (232, Duration::from_millis(10)));
    }

    #[test]
    fn relations_between_values_are_checked_and_located() {
        let e = parse_text(&GOOD.replace("topics: [/scan]", "topics: [/lidar]")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(7), Some("subscribers[0].topics")), "{e}");
        let e = parse_text(&GOOD.replace("demote_rtt: 60ms", "promote_rtt: 80ms")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(10), Some("classifier.promote_rtt")), "{e}");
        let e = parse_text(&GOOD.replace("degraded_hz: 2", "degraded_hz: 20")).unwrap_err();
        assert_eq!(e.line, Some(12), "{e}");
        let e = parse_text(&GOOD.replace("critical: /odom_safe", "critical: /scan/noncritical")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(5), Some("topics[1].critical")), "{e}");
        let e = parse_text(&GOOD.replace("name: logger", "name: slow_nav")).unwrap_err();
        assert_eq!(e.line, Some(8), "{e}");
        let e = parse_text(&GOOD.replace("name: logger", "name: 'log ger'")).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(8), Some("subscribers[1].name")), "{e}");
        // A name the file leaves to its default is found at its section.
        let text = GOOD.replace("topics:\n", "topics:\n  - {name: /scan/critical, type: a/msg/B}\n");
        let e = parse_text(&text).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("topics[1].critical")), "{e}");
        let e = parse_text("topics: []\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = parse_text("topics:\n  - {name: /scan, type: LaserScan}\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("topics[0].type")), "{e}");
    }

    #[test]
    fn nested_sections_take_defaults_for_what_they_omit() {
        let c = parse_text(&format!("{GOOD}supervisor:\n  recover: {{hold: 2s}}\n")).unwrap();
        assert_eq!(c.supervisor.recover.hold, Duration::from_secs(2));
        assert_eq!(c.supervisor.recover.queue_fill, 0.2);
        assert_eq!(c.supervisor.degrade, Limits::default());
        let e = parse_text(&format!("{GOOD}supervisor:\n  recover: {{queue_fill: 0.9}}\n")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("supervisor.recover"), "{e}");
    }

    #[test]
    fn a_missing_required_key_is_named() {
        let e = parse_text("topics:\n  - {name: /scan}\n").unwrap_err();
        assert!(e.message.contains("type"), "{e}");
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn a_hot_standby_group_is_checked_and_bad_values_are_named_at_their_line() {
        let topic = "topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\n";
        let c = parse_text(&format!("{topic}redundancy: {{group: base-1}}\n")).unwrap();
        let r = c.redundancy.clone().expect("a group");
        assert_eq!((r.group.as_str(), r.heartbeat, r.lease, r.keep), ("base-1", ms(20), ms(80), 32));
        assert_eq!(parse_text(&serde_yaml_ng::to_string(&c).unwrap()).unwrap(), c);
        assert_eq!(parse_text(GOOD).unwrap().redundancy, None, "off unless configured");
        let cases = [
            ("redundancy:\n  group: 'a b'", "redundancy.group", "not a group name"),
            ("redundancy:\n  colour: blue", "redundancy.colour", "unknown field"),
            ("redundancy:\n  heartbeat: 1ms", "redundancy.heartbeat", "between 4ms and 10s"),
            ("redundancy:\n  group: g\n  lease: 50ms", "redundancy.lease", "less than three heartbeats (60ms)"),
            ("redundancy:\n  group: g\n  keep: 100", "redundancy.keep", "more than policy.critical_queue (64)"),
            ("redundancy:\n  lease: 1s", "redundancy.group", "needs a name"),
        ];
        for (section, key, why) in cases {
            let text = format!("{topic}{section}\n");
            let e = parse_text(&text).expect_err(section);
            assert_eq!(e.key.as_deref(), Some(key), "{section}: {e}");
            assert!(e.message.contains(why), "{section}: {e}");
            assert!(e.line.is_some_and(|l| l >= 3), "{section}: {e}");
        }
        // The heartbeat topic is a DDS name like any other: an input may not take it.
        let clash = "topics:\n  - {name: /bauxite/redundancy/g, type: a/msg/B}\nredundancy: {group: g}\n";
        assert!(parse_text(clash).is_err());
    }

    #[test]
    fn metrics_are_off_by_default_and_a_bare_port_is_loopback() {
        assert_eq!(parse_text(GOOD).unwrap().metrics, None);
        let text = "topics:\n  - {name: /scan, type: sensor_msgs/msg/LaserScan}\nmetrics: 9464\n";
        let c = parse_text(text).unwrap();
        assert_eq!(c.metrics.map(|m| m.to_string()).as_deref(), Some("127.0.0.1:9464"));
        assert_eq!(parse_text(&serde_yaml_ng::to_string(&c).unwrap()).unwrap(), c);
    }

    #[test]
    fn defaults_round_trip_through_yaml() {
        let c = parse_text(GOOD).unwrap();
        let text = serde_yaml_ng::to_string(&c).unwrap();
        assert_eq!(parse_text(&text).unwrap(), c, "{text}");
    }
}

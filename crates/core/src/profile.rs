//! Profiles: lanes + rules + the policies of the congested state, early drop and link rate.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::lane::{Dscp, Lane, Match, PortRange, PortSide, Protocol, Rule};
use crate::orchestrator::OrchestratorLane;
use crate::units::{BitRate, duration_text};

/// A complete shaping profile. Lanes are ordered from most to least urgent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The profile's name, for logs and reports.
    pub name: String,
    /// The bottleneck rate the lanes share.
    #[schemars(extend("x-range" = "64kbit to 100gbit, or auto"))]
    pub rate: RateSetting,
    /// Lanes, most urgent first.
    pub lanes: Vec<Lane>,
    /// Classification rules, first match wins.
    pub rules: Vec<Rule>,
    /// The lane of packets no rule matches (and of packets too odd to parse).
    pub default_lane: String,
    /// The lane of pure TCP ACKs (no payload) whose rules give a less urgent lane. A
    /// download's ACKs then leave ahead of an upload's data instead of waiting behind it,
    /// which would stretch the download's round trip by the upload's queue and slow its
    /// reaction to the shaper's drops (sqm-scripts prioritise ACKs alike). Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_lane: Option<String>,
    /// The fraction of the link rate the lanes are shaped to. Running a little under
    /// the link keeps the standing queue on Bauxite's side of the bottleneck, where
    /// lanes are separated, instead of in the modem's single FIFO.
    #[serde(default = "default_headroom")]
    #[schemars(range(min = crate::validate::MIN_HEADROOM, max = 1.0))]
    pub headroom: f64,
    /// When the link counts as congested.
    #[serde(default)]
    pub congestion: CongestionPolicy,
    /// The early-drop control law for lanes with `drop_when_congested`.
    #[serde(default)]
    pub early_drop: EarlyDropPolicy,
    /// How `rate: auto` finds the link rate.
    #[serde(default)]
    pub auto_rate: AutoRatePolicy,
    /// What the protected traffic must achieve; `bauxite audit` checks recordings against it.
    #[serde(default)]
    pub targets: Targets,
    /// Serve the shaper's Prometheus metrics here (`bauxite up`; `--metrics` overrides);
    /// off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<crate::MetricsAddr>,
    /// Publish the shaper's state as ROS 2 diagnostics (`bauxite up`); off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<crate::diagnostics::DiagnosticsSettings>,
    /// Which directions of the link `bauxite up` shapes: `up` (the interface's egress, the
    /// robot's uplink), `down` (its ingress, the downlink, through an IFB device) or `both`.
    /// `down` and `both` need `ingress`.
    #[serde(default, skip_serializing_if = "Direction::is_up")]
    pub direction: Direction,
    /// The downlink, shaped on the interface's ingress (`direction: down` or `both`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<IngressPolicy>,
}

/// Which directions of the link are shaped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The interface's egress only (the robot's uplink).
    #[default]
    Up,
    /// Its ingress only (the downlink), redirected through an IFB device.
    Down,
    /// Both.
    Both,
}

impl Direction {
    /// Whether the egress is shaped.
    pub fn shapes_egress(self) -> bool {
        matches!(self, Direction::Up | Direction::Both)
    }

    /// Whether the ingress is shaped.
    pub fn shapes_ingress(self) -> bool {
        matches!(self, Direction::Down | Direction::Both)
    }

    fn is_up(&self) -> bool {
        *self == Direction::Up
    }
}

/// The downlink as the robot shapes it on its own ingress. The far end's queue (the
/// tower's, the base's) cannot be reordered from here: ingress shaping only works by
/// discarding bulk early, below the downlink's rate, so that a TCP sender backs off
/// before that queue fills. An unresponsive UDP flood keeps it full whatever is done here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IngressPolicy {
    /// The downlink's rate, or `auto` to measure it with the probes of `auto_rate` (the
    /// same reflectors and bounds), from the bytes that arrive over it.
    #[schemars(extend("x-range" = "64kbit to 100gbit, or auto"))]
    pub rate: RateSetting,
    /// The fraction of `rate` the ingress lanes are shaped to. Lower than the uplink's
    /// `headroom` by default: a TCP sender's burst arrives at the downlink's full rate, and
    /// only a clear margin lets the far queue drain between bursts.
    #[serde(default = "default_ingress_headroom")]
    #[schemars(range(min = crate::validate::MIN_HEADROOM, max = 1.0))]
    pub headroom: f64,
}

fn default_ingress_headroom() -> f64 {
    0.9
}

impl IngressPolicy {
    /// A downlink of `rate` with the default headroom.
    pub fn at(rate: RateSetting) -> Self {
        Self { rate, headroom: default_ingress_headroom() }
    }
}

/// The UDP port `bauxite reflect` listens on unless told otherwise.
pub const DEFAULT_REFLECTOR_PORT: u16 = 7399;

/// The bottleneck rate: a known value or measured continuously.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSetting {
    /// A configured rate, e.g. `1.5mbit`.
    Fixed(BitRate),
    /// Estimated from delay probes to a reflector (see [`AutoRatePolicy`]).
    Auto,
}

impl FromStr for RateSetting {
    type Err = crate::units::UnitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim().eq_ignore_ascii_case("auto") {
            Ok(RateSetting::Auto)
        } else {
            text.parse().map(RateSetting::Fixed)
        }
    }
}

impl fmt::Display for RateSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateSetting::Fixed(r) => r.fmt(f),
            RateSetting::Auto => f.write_str("auto"),
        }
    }
}

impl schemars::JsonSchema for RateSetting {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "rate-or-auto".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "integer"], "format": "rate-or-auto"})
    }
}

impl Serialize for RateSetting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RateSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::units::deserialize_from_str(d)
    }
}

/// The congested state and its hysteresis.
///
/// The link is congested when a droppable lane's queue delay (backlog over the
/// lane's departure rate) exceeds `enter_delay`, or when its backlog exceeds
/// `enter_backlog_packets`. It stays congested until neither has held for `exit_hold`:
/// a video encoder that briefly pauses must not switch protection off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CongestionPolicy {
    /// Queue delay of a droppable lane above which the link is congested.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 10s"))]
    pub enter_delay: Duration,
    /// Backlog (packets) of a droppable lane above which the link is congested.
    #[schemars(range(min = 1, max = crate::validate::MAX_QUEUE_LIMIT))]
    pub enter_backlog_packets: u32,
    /// How long the condition must stay clear before the congested state ends.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 600s"))]
    pub exit_hold: Duration,
    /// How often lane statistics are read.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 100ms"))]
    pub poll_interval: Duration,
}

impl Default for CongestionPolicy {
    fn default() -> Self {
        Self {
            enter_delay: Duration::from_millis(10),
            enter_backlog_packets: 8,
            exit_hold: Duration::from_secs(2),
            poll_interval: Duration::from_millis(10),
        }
    }
}

/// The PIE control law (RFC 8033) that sets the early-drop probability of droppable
/// lanes from their queue delay. The defaults are the RFC's, except `target`, which
/// is lower because a 1.5 Mbit/s link turns every queued video packet into 8 ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EarlyDropPolicy {
    /// Queue delay the controller steers towards.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 10s"))]
    pub target: Duration,
    /// How often the drop probability is recomputed (PIE's T_UPDATE).
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 1s"))]
    pub update_interval: Duration,
    /// PIE's alpha (per second of delay error), RFC 8033 default 0.125.
    #[schemars(range(min = 0.0, max = crate::validate::MAX_PIE_GAIN))]
    pub alpha: f64,
    /// PIE's beta (per second of delay trend), RFC 8033 default 1.25.
    #[schemars(range(min = 0.0, max = crate::validate::MAX_PIE_GAIN))]
    pub beta: f64,
    /// Bursts shorter than this pass without drops (PIE's MAX_BURST).
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ns to 10s"))]
    pub max_burst: Duration,
}

impl Default for EarlyDropPolicy {
    fn default() -> Self {
        Self {
            target: Duration::from_millis(15),
            update_interval: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
        }
    }
}

/// `rate: auto`: follow a link whose rate nobody announces, from delay probes to a
/// reflector beyond it and the bytes the shaper sent (`bauxite_control`'s
/// `RateController` says how): drain a queue as soon as the probes see one, resume
/// at the capacity it revealed, and probe upwards after a hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AutoRatePolicy {
    /// The reflectors on the far side of the bottleneck, one or a list (at most
    /// [`crate::MAX_REFLECTORS`]): `ADDR:PORT` for `bauxite reflect`, `icmp:ADDR` for
    /// any host answering ping, `icmp-timestamp:ADDR` for ICMP timestamps
    /// ([`crate::reflector`] says what each measures). The first is probed; the others
    /// are standbys, probed now and then, that replace it when it stops answering.
    #[serde(deserialize_with = "one_or_many", skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "one_or_many_schema")]
    pub reflector: Vec<String>,
    /// A file holding the key probes are signed with (HMAC-SHA256; the reflector runs
    /// with the same file as `--key-file`). None: probes are not signed.
    pub key_file: Option<std::path::PathBuf>,
    /// The rate assumed at start, and the rate an unloaded link relaxes up to.
    #[schemars(extend("x-range" = "64kbit to 100gbit, and min_rate to max_rate"))]
    pub base_rate: BitRate,
    /// Never shape below this: enough for the lanes that are never dropped (seed 000's
    /// critical and telemetry streams and the probes take about 0.14 Mbit/s). The
    /// controller also never goes below 1.25 times what those lanes were offered over
    /// the last second.
    #[schemars(extend("x-range" = "64kbit to 100gbit, and at most max_rate"))]
    pub min_rate: BitRate,
    /// Never shape above this.
    #[schemars(extend("x-range" = "64kbit to 100gbit"))]
    pub max_rate: BitRate,
    /// How often a probe is sent. Each is 70 bytes on the wire in the critical lane
    /// (56 kbit/s at 10 ms; a quarter of that while held on a slow quiet link); a queue
    /// is seen a few probes after it starts.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ms to 1s"))]
    pub probe_interval: Duration,
    /// Queue delay at the link, beyond one full packet's serialisation, that counts
    /// as a standing queue.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "100us to 1s"))]
    pub delay_threshold: Duration,
    /// A standing queue is drained in about this long: the rate is the capacity
    /// times `1 - queue / drain_time`, so a queue deeper than this stops the
    /// droppable lanes until it is gone.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "10ms to 10s"))]
    pub drain_time: Duration,
    /// After a queue, the rate stays at the capacity it revealed for this long
    /// before probing upwards. Probing past the link fills the modem's FIFO, which
    /// delays critical traffic too: a longer hold protects it better, a shorter one
    /// finds a link that recovered sooner.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1ns to 3600s"))]
    pub probe_hold: Duration,
    /// Each upward probe that finds the link where it was doubles the hold, up to
    /// this: a link that stays put is probed (and its critical lane delayed a few
    /// milliseconds) ever more rarely; a link that recovers after a long stable
    /// spell is found up to this much later.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "probe_hold to 3600s"))]
    pub probe_hold_max: Duration,
    /// How long an upward probe's first step (1.2× the rate known good) lasts before
    /// the rate doubles: long enough to empty a token bucket on the way. On a link whose
    /// probes wait milliseconds anyway (a radio) the step lasts a quarter of it.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "10ms to 60s"))]
    pub ramp_time: Duration,
    /// The link counts as loaded when the shaper sends more than this fraction of
    /// what it may; only a loaded link tells whether more rate is available.
    #[schemars(range(min = 0.1, max = 1.0))]
    pub load_threshold: f64,
}

impl Default for AutoRatePolicy {
    fn default() -> Self {
        Self {
            reflector: Vec::new(),
            key_file: None,
            base_rate: BitRate::from_bps(10_000_000),
            min_rate: BitRate::from_bps(200_000),
            max_rate: BitRate::from_bps(100_000_000),
            probe_interval: Duration::from_millis(10),
            delay_threshold: Duration::from_millis(2),
            drain_time: Duration::from_millis(100),
            probe_hold: Duration::from_secs(1),
            probe_hold_max: Duration::from_secs(8),
            ramp_time: Duration::from_millis(800),
            load_threshold: 0.75,
        }
    }
}

/// The service the critical lane is promised (seed 000: critical latency under 2 ms,
/// correction update delay under 10 ms, nothing lost). Measured from one second after
/// a rate change, the time the shaper is given to adapt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Targets {
    /// Mean one-way latency of critical messages.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1us to 10s"))]
    pub critical_latency_mean: Duration,
    /// 99th percentile of that latency.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1us to 10s"))]
    pub critical_latency_p99: Duration,
    /// Mean correction update delay (message sent → consumed by the control loop). A
    /// 100 Hz loop alone adds 5 ms on average, so the mean is what can be promised.
    #[serde(with = "duration_text")]
    #[schemars(with = "crate::units::DurationText")]
    #[schemars(extend("x-range" = "1us to 10s"))]
    pub update_delay_mean: Duration,
    /// Critical messages lost, percent.
    #[schemars(range(min = 0.0, max = 100.0))]
    pub critical_loss_pct: f64,
}

impl Default for Targets {
    fn default() -> Self {
        Self {
            critical_latency_mean: Duration::from_micros(1500),
            critical_latency_p99: Duration::from_millis(2),
            update_delay_mean: Duration::from_millis(10),
            critical_loss_pct: 0.0,
        }
    }
}

fn default_headroom() -> f64 {
    0.95
}

/// `auto_rate.reflector`: one reflector, or a list of them.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

/// The JSON Schema of a profile file (`bauxite profile schema`): every key with its type,
/// default, bounds and doc comment, for editors (yaml-language-server) and the generated
/// reference page. Relations between keys (rules naming lanes, shares summing to at most 1)
/// are checked by [`Profile::validate`] only.
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(Profile)
}

/// The JSON Schema of what [`one_or_many`] reads.
fn one_or_many_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}, "maxItems": crate::MAX_REFLECTORS},
    ]})
}

/// A problem found while checking a profile, with the key it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ProfileError {
    /// Dotted path of the offending key, e.g. `rules[2].lane`.
    pub key: String,
    /// The value at that key, when it helps to find it in a file.
    pub value: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ProfileError {
    pub(crate) fn new(key: impl Into<String>, value: Option<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), value, message: message.into() }
    }
}

/// The least rate a lane is guaranteed (HTB needs one; a droppable lane draining at
/// `min_rate` gets this much).
pub const MIN_GUARANTEE: BitRate = BitRate::from_bps(8_000);

/// A lane's HTB class ([`Profile::lane_class`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneClass {
    /// What it may always send.
    pub guarantee: BitRate,
    /// What it may send borrowing from the other lanes (HTB's `ceil`).
    pub ceil: BitRate,
}

/// HTB's default token bucket: iproute2 sizes it `rate / HZ` plus a 1600-byte MTU,
/// and HZ is 10⁹ on kernels with high-resolution timers, so the MTU is all of it.
pub const HTB_DEFAULT_BURST_BYTES: u64 = 1600;
/// The most a paced bucket holds, in time at its rate (see [`paced_burst_bytes`]).
pub const PACED_BURST: Duration = Duration::from_millis(1);

/// The token bucket of the classes that carry the droppable lanes, and of the link
/// class above every lane: HTB's default, or [`PACED_BURST`] of `rate` if less.
///
/// HTB lets a class send while its bucket is not in debt, so a full bucket of 1600
/// bytes lets two full-size packets leave back to back (the first leaves 86 bytes).
/// On a fast link that pair is a fraction of a millisecond; at 1.5 Mbit/s it is
/// 16 ms of a modem's FIFO, and a critical message arriving behind it waits for both:
/// in the namespaces 15 % of the critical messages on an emulated 1.5 Mbit/s link
/// waited behind two packets or more with the default bucket, under 5 % with
/// 1 ms of the rate (README, *Against the netns demo*). The lanes never dropped keep
/// the default: their messages are small and must not wait for their own bucket.
pub fn paced_burst_bytes(rate: BitRate) -> u64 {
    let paced = (rate.bps() as f64 / 8.0 * PACED_BURST.as_secs_f64()) as u64;
    paced.clamp(1, HTB_DEFAULT_BURST_BYTES)
}

/// The names of the built-in profiles.
pub const BUILTIN_PROFILES: &[&str] = &["robot", "orchestrator"];

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Profile> {
        match name {
            "robot" => Some(Self::robot()),
            "orchestrator" => Some(Self::orchestrator()),
            _ => None,
        }
    }

    /// Seed 000: UDP 7400 (navigation corrections) and 7401 (steering) are critical,
    /// UDP 7410 is telemetry, TCP 8080 (video) is bulk and is discarded early when the
    /// link is congested. Unknown traffic shares the telemetry lane: it must neither
    /// delay steering nor be thrown away with the video.
    pub fn robot() -> Profile {
        let lane = |name: &str, share: f64, drop: bool, limit: u32| Lane {
            name: name.into(),
            share,
            dscp_mark: None,
            drop_when_congested: drop,
            queue_limit: limit,
        };
        let port_rule = |lane: &str, protocol, first, last| Rule {
            lane: lane.into(),
            matches: Match::Port { protocol, ports: PortRange { first, last }, side: PortSide::Either },
        };
        Profile {
            name: "robot".into(),
            rate: RateSetting::Fixed(BitRate::from_bps(1_500_000)),
            lanes: vec![
                lane("critical", 0.3, false, 64),
                lane("telemetry", 0.2, false, 64),
                lane("bulk", 0.5, true, 48),
            ],
            rules: vec![
                port_rule("critical", Protocol::Udp, 7400, 7401),
                port_rule("telemetry", Protocol::Udp, 7410, 7410),
                port_rule("bulk", Protocol::Tcp, 8080, 8080),
            ],
            default_lane: "telemetry".into(),
            ack_lane: Some("telemetry".into()),
            headroom: default_headroom(),
            congestion: CongestionPolicy::default(),
            early_drop: EarlyDropPolicy::default(),
            auto_rate: AutoRatePolicy::default(),
            targets: Targets::default(),
            metrics: None,
            diagnostics: None,
            direction: Direction::Up,
            ingress: None,
        }
    }

    /// Seed 003: lanes by DSCP ([`OrchestratorLane`]) — control AF42, status AF43,
    /// telemetry AF41, bulk CS1, everything else background. Strict order as in the
    /// seed's 4-band PRIO.
    pub fn orchestrator() -> Profile {
        use OrchestratorLane::{Background, Bulk, Control, Status, Telemetry};
        let lane = |l: OrchestratorLane, share: f64, drop: bool| Lane {
            name: l.name().into(),
            share,
            dscp_mark: None,
            drop_when_congested: drop,
            queue_limit: 40,
        };
        let dscp_rule = |l: OrchestratorLane| Rule {
            lane: l.name().into(),
            matches: Match::Dscp(Dscp::new(l.dscp()).expect("built-in DSCP")),
        };
        Profile {
            name: "orchestrator".into(),
            rate: RateSetting::Fixed(BitRate::from_bps(10_000_000)),
            lanes: vec![
                lane(Control, 0.15, false),
                lane(Status, 0.1, false),
                lane(Telemetry, 0.15, false),
                lane(Bulk, 0.3, true),
                lane(Background, 0.3, true),
            ],
            rules: [Control, Status, Telemetry, Bulk].map(dscp_rule).to_vec(),
            default_lane: Background.name().into(),
            ack_lane: None,
            headroom: default_headroom(),
            congestion: CongestionPolicy::default(),
            early_drop: EarlyDropPolicy::default(),
            auto_rate: AutoRatePolicy::default(),
            targets: Targets::default(),
            metrics: None,
            diagnostics: None,
            direction: Direction::Up,
            ingress: None,
        }
    }

    /// The rate the lanes are shaped to on a link of `link_rate`.
    pub fn shaped_rate(&self, link_rate: BitRate) -> BitRate {
        link_rate.scaled(self.headroom)
    }

    /// Lane `lane`'s class while the shaper sends at `shaped`: its guarantee is its
    /// share of the rate, and it may borrow up to `shaped`. With `rate: auto`, the
    /// shaped `min_rate` is kept for the lanes that are never dropped (shared among
    /// them by their shares) and only the rest is shared among all lanes. A
    /// controller that drains the link's queue at `min_rate` then stops the droppable
    /// lanes, instead of leaving them a guarantee that the critical lane, and the rate
    /// probes riding it, would queue behind. The guarantees add up to `shaped`; none
    /// is below [`MIN_GUARANTEE`].
    ///
    /// `held`: the link may be out (`rate: auto` hears no answer). Every lane but
    /// lane 0, the most urgent (the one the probes ride), is held at
    /// [`MIN_GUARANTEE`] and borrows nothing: what it sends into a link that is out
    /// waits in the modem's FIFO ahead of every critical message sent after it (a 5 s
    /// outage queued 27 KB of telemetry there: 50 ms more for the critical messages
    /// behind it when the link came back at 4.4 Mbit/s), while held in its own lane it
    /// waits harmlessly (`bauxite_control::SilenceHold` decides when).
    pub fn lane_class(&self, lane: usize, shaped: BitRate, held: bool) -> LaneClass {
        if held {
            if lane > 0 {
                return LaneClass { guarantee: MIN_GUARANTEE, ceil: MIN_GUARANTEE };
            }
            let others = MIN_GUARANTEE.bps() * (self.lanes.len() as u64).saturating_sub(1);
            let guarantee = BitRate::from_bps(shaped.bps().saturating_sub(others)).max(MIN_GUARANTEE);
            return LaneClass { guarantee, ceil: shaped.max(guarantee) };
        }
        let l = &self.lanes[lane];
        let kept = match self.rate {
            RateSetting::Auto => self.shaped_rate(self.auto_rate.min_rate).min(shaped).bps() as f64,
            RateSetting::Fixed(_) => 0.0,
        };
        let never_dropped: f64 = self.lanes.iter().filter(|l| !l.drop_when_congested).map(|l| l.share).sum();
        let shared = (shaped.bps() as f64 - kept) * l.share;
        let own = if l.drop_when_congested || never_dropped <= 0.0 { 0.0 } else { kept * l.share / never_dropped };
        LaneClass { guarantee: BitRate::from_bps((shared + own) as u64).max(MIN_GUARANTEE), ceil: shaped }
    }

    /// The token bucket, in bytes, of lane `lane`'s class at `rate` (its guarantee,
    /// or its ceiling for the bucket it borrows with): [`paced_burst_bytes`] for a
    /// droppable lane, HTB's default for the others.
    pub fn lane_burst_bytes(&self, lane: usize, rate: BitRate) -> u64 {
        if self.lanes[lane].drop_when_congested { paced_burst_bytes(rate) } else { HTB_DEFAULT_BURST_BYTES }
    }

    /// The index of the lane called `name`.
    pub fn lane_index(&self, name: &str) -> Option<usize> {
        self.lanes.iter().position(|l| l.name == name)
    }
}

#[cfg(test)]
mod tests {
    use crate::schema_bounds::{beyond, bounded_keys, dotted, set_at};
    use serde_yaml_ng::Value as Yaml;

    /// The bounds the schema (and so the reference page) states are the ones validation
    /// enforces: just past each bound is refused naming that key, and the bound itself is
    /// not refused because of that key. Keys bounded by other keys too are held apart.
    #[test]
    fn the_schema_states_the_bounds_validation_enforces() {
        let keys = bounded_keys(&json_schema());
        assert!(keys.len() >= 25, "only {} bounded keys in the schema", keys.len());
        let mut base = serde_yaml_ng::to_value(Profile::robot()).unwrap();
        base["diagnostics"] = serde_yaml_ng::to_value(crate::diagnostics::DiagnosticsSettings::default()).unwrap();
        base["direction"] = serde_yaml_ng::to_value(Direction::Both).unwrap();
        let downlink = IngressPolicy::at(RateSetting::Fixed(BitRate::from_bps(20_000_000)));
        base["ingress"] = serde_yaml_ng::to_value(downlink).unwrap();
        let related = ["auto_rate.base_rate", "auto_rate.min_rate", "auto_rate.probe_hold", "rate"];
        for (path, lo, hi) in keys {
            let dotted = dotted(&path);
            let with = |value: Yaml| {
                let doc = set_at(&base, &path, value);
                serde_yaml_ng::from_str::<Profile>(&serde_yaml_ng::to_string(&doc).unwrap())
                    .map_err(|e| e.to_string())
                    .and_then(|p| p.validate().map(drop).map_err(|e| e.key))
            };
            for (bound, up) in [(&lo, false), (&hi, true)] {
                if dotted == "auto_rate.probe_hold_max" && !up {
                    continue; // its lower bound is probe_hold
                }
                let past = beyond(bound, up);
                // Refused by validation (naming the key) or already by the parser (whose
                // message names the key's path).
                let refusal = with(past.clone());
                assert!(
                    refusal.as_ref().is_err_and(|e| *e == dotted || e.starts_with(&format!("{dotted}: "))),
                    "{dotted} = {past:?} (past {bound:?}): {refusal:?}"
                );
                if !related.contains(&dotted.as_str()) {
                    assert!(with(bound.clone()) != Err(dotted.clone()), "{dotted} = {bound:?} is refused");
                }
            }
        }
    }

    use super::*;
    use crate::lane::PacketKey;

    #[test]
    fn droppable_lanes_are_paced_packet_by_packet_at_low_rates_only() {
        let p = Profile::robot();
        let r = BitRate::from_bps;
        // 1 ms of 1.5 Mbit/s: under a full packet, so HTB never sends two back to back.
        assert_eq!(p.lane_burst_bytes(2, r(1_500_000)), 187);
        // From 12.8 Mbit/s on, 1 ms holds HTB's default: it is kept.
        assert_eq!(p.lane_burst_bytes(2, r(12_800_000)), HTB_DEFAULT_BURST_BYTES);
        assert_eq!(p.lane_burst_bytes(2, r(100_000_000)), HTB_DEFAULT_BURST_BYTES);
        // The critical lane keeps the default at any rate; a bucket is never empty.
        assert_eq!(p.lane_burst_bytes(0, r(1_500_000)), HTB_DEFAULT_BURST_BYTES);
        assert_eq!(paced_burst_bytes(r(1)), 1);
    }

    #[test]
    fn with_rate_auto_min_rate_is_kept_for_the_lanes_never_dropped() {
        let mut p = Profile::robot();
        p.rate = RateSetting::Auto;
        let guarantees = |p: &Profile, shaped: u64| -> Vec<u64> {
            (0..3).map(|i| p.lane_class(i, BitRate::from_bps(shaped), false).guarantee.bps()).collect()
        };
        // At the shaped min_rate (0.95 × 200 kbit/s): critical and telemetry share it
        // 3:2, bulk is guaranteed only the floor.
        assert_eq!(guarantees(&p, 190_000), [114_000, 76_000, MIN_GUARANTEE.bps()]);
        // Above it, the rest is shared by every lane; the guarantees add up to the rate.
        let g = guarantees(&p, 1_425_000);
        assert!(g.iter().sum::<u64>().abs_diff(1_425_000) <= 3, "{g:?}");
        assert_eq!(g[2], 617_500, "bulk: its half of what lies above min_rate");
        // A fixed rate keeps plain shares.
        p.rate = RateSetting::Fixed(BitRate::from_bps(1_500_000));
        assert_eq!(guarantees(&p, 1_500_000), [450_000, 300_000, 750_000]);
    }

    #[test]
    fn held_only_lane_0_borrows_and_the_others_keep_the_least_guarantee() {
        let mut p = Profile::robot();
        p.rate = RateSetting::Auto;
        let shaped = BitRate::from_bps(190_000);
        let classes: Vec<LaneClass> = (0..3).map(|i| p.lane_class(i, shaped, true)).collect();
        assert_eq!(classes[0], LaneClass { guarantee: BitRate::from_bps(174_000), ceil: shaped });
        for held in &classes[1..] {
            assert_eq!(*held, LaneClass { guarantee: MIN_GUARANTEE, ceil: MIN_GUARANTEE });
        }
        // Not held, every lane may borrow up to the shaped rate.
        assert!((0..3).all(|i| p.lane_class(i, shaped, false).ceil == shaped));
    }

    #[test]
    fn builtins_are_valid_and_follow_the_seeds() {
        for name in BUILTIN_PROFILES {
            Profile::builtin(name).unwrap().validate().unwrap();
        }
        let robot = Profile::robot();
        assert_eq!(robot.lanes.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["critical", "telemetry", "bulk"]);
        assert!(robot.lanes[2].drop_when_congested && !robot.lanes[0].drop_when_congested);
        let orch = Profile::orchestrator();
        let dscp_of = |lane: &str| {
            orch.rules.iter().find_map(|r| match r.matches {
                Match::Dscp(d) if r.lane == lane => Some(d.value()),
                _ => None,
            })
        };
        assert_eq!(
            [dscp_of("control"), dscp_of("status"), dscp_of("telemetry"), dscp_of("bulk")],
            [Some(36), Some(38), Some(34), Some(8)]
        );
    }

    #[test]
    fn packets_go_to_the_first_matching_rules_lane_else_the_default() {
        let lane_of = |p: &crate::ValidatedProfile, packet| p.lanes[p.lane_of(&packet)].name.clone();
        let robot = Profile::robot().validate().unwrap();
        assert_eq!(lane_of(&robot, PacketKey::udp(40000, 7401)), "critical");
        assert_eq!(lane_of(&robot, PacketKey::udp(7400, 40000)), "critical", "robot as the server: either side");
        assert_eq!(lane_of(&robot, PacketKey::tcp(40000, 8080)), "bulk");
        assert_eq!(lane_of(&robot, PacketKey::udp(40000, 8080)), "telemetry", "UDP 8080 is no rule's: default");
        let mut dst_only = Profile::robot();
        dst_only.rules[0].matches =
            Match::Port { protocol: Protocol::Udp, ports: PortRange { first: 7400, last: 7401 }, side: PortSide::Dst };
        let dst_only = dst_only.validate().unwrap();
        assert_eq!(lane_of(&dst_only, PacketKey::udp(7400, 40000)), "telemetry", "the rule's side is honoured");
        let orch = Profile::orchestrator().validate().unwrap();
        for lane in OrchestratorLane::ALL {
            let packet = PacketKey { dscp: lane.dscp(), ..PacketKey::udp(1, 2) };
            assert_eq!(lane_of(&orch, packet), lane.name());
        }
    }
}

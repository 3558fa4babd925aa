//! The seed-003 scenario: one orchestrator, two routers joined by a bottleneck,
//! N followers, background traffic both ways — every parameter settable, the
//! defaults reproducing the seed's study.
//!
//! ```text
//!  orchestrator ─100M/1ms─ router A ══10M/5ms══ router B ─100M/1ms─ follower 0..N
//!          bg-a ─100M/1ms─┘   (scheduler under test,   └─100M/1ms─ bg-b
//!                              both directions)
//! ```
//!
//! Control goes orchestrator → each follower; status, telemetry and bulk go each
//! follower → orchestrator; background goes bg-a ⇄ bg-b at `bg_mbps` per direction.
//! Sizes are UDP payloads: an IP datagram adds 28 bytes (UDP 8 + IPv4 20) and the
//! wire adds PPP's 2. That reading is what reproduces the seed's control
//! throughput: 0.589 Mbit/s for 4 followers at 200 packets/s is 92 IP bytes a packet,
//! 64 + 28.

use std::time::Instant;

use bauxite_core::OrchestratorLane;
use bauxite_qdisc::rng::{SplitMix64, mix64};
use bauxite_qdisc::{LimitScope, Nanos};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::app::{OnOff, Pareto, TcpApp, UdpApp};
use crate::engine::{ACK_TAG, RunCounters, Simulator};
use crate::error::SimError;
use crate::link::{ChannelStats, LinkConfig, Radio};
use bauxite_core::link::{LinkModel, QueueLimit, load_link_directions};

/// A radio link's configuration: `bauxite_core`'s link model ([`LinkConfig`] here is
/// a wire's).
type RadioLink = bauxite_core::link::LinkConfig;
use crate::metrics::{ClassRow, FlowRecord, class_rows};
use crate::scheduler::{QdiscParams, Scheduler, build_qdisc};
use crate::topology::Topology;

/// The UDP destination port of a lane's flows (part of every flow's 5-tuple).
pub fn lane_port(lane: OrchestratorLane) -> u16 {
    5000 + lane.index() as u16
}

/// The lane of a flow tag (the tag is the lane's index).
pub fn lane_of_tag(tag: u32) -> OrchestratorLane {
    OrchestratorLane::ALL[tag as usize]
}

/// One application class: packet size, rate and DSCP mark.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassSpec {
    /// UDP payload bytes.
    pub payload_bytes: u32,
    /// Packets per second per flow.
    pub pps: f64,
    /// DSCP when marking is on.
    pub dscp: u8,
}

/// Every parameter of one scenario. [`Default`] is the seed's baseline comparison
/// point with FIFO: 4 followers, 12 Mbit/s background per direction, 40 packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioConfig {
    /// The discipline on both directions of the bottleneck.
    pub scheduler: Scheduler,
    /// Whether applications mark DSCP (off: everything is DSCP 0).
    pub dscp: bool,
    /// Number of followers, 1 to [`MAX_FOLLOWERS`].
    pub followers: u32,
    /// Background payload rate per direction, Mbit/s (ns-3 `OnOffApplication`'s
    /// `DataRate` counts payload bits; the wire carries 1430/1400 of it).
    pub bg_mbps: f64,
    /// Background flows per direction, sharing `bg_mbps` equally, 0 to
    /// [`MAX_BG_FLOWS`]. One per direction is the seed's "two bidirectional
    /// background-traffic endpoints".
    pub bg_flows: u32,
    /// Background UDP payload bytes.
    pub bg_payload_bytes: u32,
    /// Packet limit of the bottleneck discipline.
    pub queue_packets: u32,
    /// Whether a multi-band discipline's limit is per band or shared (`--limit-mode
    /// per-band|shared`, written the same way in `summary.json`).
    #[serde(serialize_with = "as_text", deserialize_with = "from_text")]
    pub limit_mode: LimitScope,
    /// Packets the device transmit queue holds under the discipline, on every link.
    /// 1 is what ns-3's traffic-control examples set (`DropTailQueue` `MaxSize` 1p)
    /// and what the seed's 8.9 ms fair-queueing delay implies: the base path delay is
    /// 7.09 ms and a control packet the scheduler serves first still waits about
    /// 1.7 ms for the packet being sent and the one in the device queue. ns-3's own
    /// default (100 packets) would add 110 ms whatever the scheduler.
    pub device_queue_packets: u32,
    /// Bottleneck rate, Mbit/s.
    pub bottleneck_mbps: f64,
    /// Bottleneck one-way propagation delay, ms (at most [`MAX_DELAY_MS`]).
    pub bottleneck_delay_ms: f64,
    /// Access link rate (orchestrator, followers, background endpoints), Mbit/s.
    pub access_mbps: f64,
    /// Access link one-way propagation delay, ms (at most [`MAX_DELAY_MS`]).
    pub access_delay_ms: f64,
    /// Packet limit of the drop-tail FIFO on every access link direction (never
    /// full in the seed's scenarios; 1000 is Linux's and ns-3's default queue length).
    pub access_queue_packets: u32,
    /// Control class (orchestrator → each follower).
    pub control: ClassSpec,
    /// Status class (each follower → orchestrator).
    pub status: ClassSpec,
    /// Telemetry class (each follower → orchestrator).
    pub telemetry: ClassSpec,
    /// Bulk class (each follower → orchestrator).
    pub bulk: ClassSpec,
    /// When every application stops (and the simulation, once the network drains), s.
    pub duration_s: f64,
    /// When applications start, s.
    pub app_start_s: f64,
    /// Each application starts a uniform random offset in `[0, start_jitter_ms)` after
    /// `app_start_s` (drawn from `seed`); 0 starts them all together.
    pub start_jitter_ms: f64,
    /// Background flows start this much later than the other applications, ms. It
    /// sets the phase between the background's packet train and the classes' trains,
    /// to which FIFO's control loss is sensitive when everything starts together
    /// (see the README's scheduler-simulator section).
    pub bg_start_offset_ms: f64,
    /// Seed of every random draw (start offsets, the disciplines' own randomness).
    pub seed: u64,
    /// The background in bursts of this length, ms, each followed by a silence as
    /// long, at twice `bg_mbps` while on, so that the mean stays `bg_mbps` (0: a
    /// steady rate, the seed's).
    #[serde(default)]
    pub bg_burst_ms: f64,
    /// With bursts: each burst's length and the silence after it drawn from a Pareto
    /// distribution of this shape (> 1) whose means are `bg_burst_ms` (none: every
    /// burst and silence exactly `bg_burst_ms`). A steady background has no bursts to
    /// draw (the study's families other than burst).
    #[serde(default)]
    pub bg_burst_pareto: Option<f64>,
    /// Each class's application deadline: a packet that arrives later is as good as
    /// lost (`deadline_miss_pct`). None by default.
    #[serde(default)]
    pub deadlines: Deadlines,
    /// The followers' access links' rate, Mbit/s, where it differs from `access_mbps`
    /// (the access family sweeps it: the bottleneck moves to the robots' edge).
    #[serde(default)]
    pub follower_access_mbps: Option<f64>,
    /// Bulk TCP connections (CUBIC, [`crate::tcp`]) per direction between the
    /// background endpoints, beside the UDP background: cross traffic that fills
    /// whatever queue it is given and backs off on loss (the tcp-cross family).
    #[serde(default)]
    pub tcp_flows: u32,
    /// The bottleneck as a radio link instead of a wire at `bottleneck_mbps`: a
    /// `--link` SPEC (a delivery trace or a rate, loss, Gilbert–Elliott bursts, delay,
    /// jitter; `bauxite_core::link`) for both directions, or `up=SPEC,down=SPEC` for
    /// the followers' uplink (B → A) and downlink (A → B). The scheduler under test
    /// still holds the queue: the SPEC's buffer keys are not used; its delay replaces
    /// `bottleneck_delay_ms`. The wireless family.
    #[serde(default)]
    pub link: Option<String>,
}

/// Each application class's deadline, ms (`--deadline CLASS=MS`; none: no deadline).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deadlines {
    /// Control.
    pub control_ms: Option<f64>,
    /// Status.
    pub status_ms: Option<f64>,
    /// Telemetry.
    pub telemetry_ms: Option<f64>,
    /// Bulk.
    pub bulk_ms: Option<f64>,
}

impl Deadlines {
    /// The deadlines of the `deadline` family: what a robot's control loop, its status
    /// display and its telemetry can wait (bulk has none).
    pub const ROBOT: Deadlines =
        Deadlines { control_ms: Some(10.0), status_ms: Some(50.0), telemetry_ms: Some(200.0), bulk_ms: None };

    /// A class's deadline, ms.
    pub fn of(&self, class: OrchestratorLane) -> Option<f64> {
        match class {
            OrchestratorLane::Control => self.control_ms,
            OrchestratorLane::Status => self.status_ms,
            OrchestratorLane::Telemetry => self.telemetry_ms,
            OrchestratorLane::Bulk => self.bulk_ms,
            OrchestratorLane::Background => None,
        }
    }

    /// A class's deadline slot, for setting it.
    pub fn of_mut(&mut self, class: OrchestratorLane) -> Option<&mut Option<f64>> {
        match class {
            OrchestratorLane::Control => Some(&mut self.control_ms),
            OrchestratorLane::Status => Some(&mut self.status_ms),
            OrchestratorLane::Telemetry => Some(&mut self.telemetry_ms),
            OrchestratorLane::Bulk => Some(&mut self.bulk_ms),
            OrchestratorLane::Background => None,
        }
    }

    /// Sets one from `CLASS=MS` (`control=10`, `status=50ms`); the error names what is wrong.
    pub fn set(&mut self, text: &str) -> Result<(), SimError> {
        let bad = |why: String| SimError::invalid("deadline", format!("`{text}`: {why}"));
        let (class, ms) = text.split_once('=').ok_or_else(|| bad("expected CLASS=MS, e.g. control=10".into()))?;
        let class = OrchestratorLane::ALL
            .into_iter()
            .find(|c| c.name() == class.trim())
            .ok_or_else(|| bad("the classes are control, status, telemetry and bulk".into()))?;
        let ms = ms.trim().trim_end_matches("ms");
        let ms: f64 = ms.parse().map_err(|_| bad(format!("`{ms}` is not a number of milliseconds")))?;
        let slot = self.of_mut(class).ok_or_else(|| bad("background has no deadline".into()))?;
        *slot = Some(ms);
        Ok(())
    }
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        Self {
            scheduler: Scheduler::Fifo,
            dscp: true,
            followers: 4,
            bg_mbps: 12.0,
            bg_flows: 1,
            bg_payload_bytes: 1400,
            queue_packets: 40,
            limit_mode: LimitScope::PerQueue,
            device_queue_packets: 1,
            bottleneck_mbps: 10.0,
            bottleneck_delay_ms: 5.0,
            access_mbps: 100.0,
            access_delay_ms: 1.0,
            access_queue_packets: 1000,
            control: ClassSpec { payload_bytes: 64, pps: 200.0, dscp: OrchestratorLane::Control.dscp() },
            status: ClassSpec { payload_bytes: 96, pps: 100.0, dscp: OrchestratorLane::Status.dscp() },
            telemetry: ClassSpec { payload_bytes: 512, pps: 50.0, dscp: OrchestratorLane::Telemetry.dscp() },
            bulk: ClassSpec { payload_bytes: 1400, pps: 20.0, dscp: OrchestratorLane::Bulk.dscp() },
            duration_s: 20.0,
            app_start_s: 1.0,
            start_jitter_ms: 0.0,
            bg_start_offset_ms: 0.0,
            seed: 1,
            bg_burst_ms: 0.0,
            bg_burst_pareto: None,
            deadlines: Deadlines::default(),
            follower_access_mbps: None,
            tcp_flows: 0,
            link: None,
        }
    }
}

/// Largest UDP payload of an IPv4 datagram.
const MAX_PAYLOAD: u32 = 65_507;

/// The first source port of the applications: flow `i` of a class sends from
/// port `FIRST_SRC_PORT + i`, so that flows between the same two nodes differ in
/// their 5-tuple. The ephemeral range 49152..=65535 holds 16384 ports.
const FIRST_SRC_PORT: u16 = 49152;

/// The most followers a scenario may have: one source port each in the ephemeral
/// range (16384 ports), with room to spare.
pub const MAX_FOLLOWERS: u32 = 16_000;

/// The most background flows per direction: the two directions' flows take
/// `2 × bg_flows` source ports of the ephemeral range.
pub const MAX_BG_FLOWS: u32 = 8_000;

/// The longest propagation delay of a link, ms (one day), which keeps every event
/// time far inside the 64-bit nanosecond clock.
pub const MAX_DELAY_MS: f64 = 86_400_000.0;

fn positive(flag: &'static str, value: f64) -> Result<(), SimError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(SimError::invalid(flag, format!("must be a positive number (got {value})")))
    }
}

fn non_negative(flag: &'static str, value: f64) -> Result<(), SimError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(SimError::invalid(flag, format!("must be zero or positive (got {value})")))
    }
}

fn at_least_one(flag: &'static str, value: u32) -> Result<(), SimError> {
    if value >= 1 { Ok(()) } else { Err(SimError::invalid(flag, "must be at least 1 (got 0)")) }
}

fn at_most(flag: &'static str, value: u32, max: u32, why: &str) -> Result<(), SimError> {
    if value <= max { Ok(()) } else { Err(SimError::invalid(flag, format!("at most {max} (got {value}): {why}"))) }
}

fn delay(flag: &'static str, ms: f64) -> Result<(), SimError> {
    non_negative(flag, ms)?;
    if ms > MAX_DELAY_MS {
        return Err(SimError::invalid(flag, format!("at most one day ({MAX_DELAY_MS} ms; got {ms})")));
    }
    Ok(())
}

/// `summary.json` writes the limit scope as the command line spells it.
fn as_text<S: Serializer>(scope: &LimitScope, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(scope)
}

fn from_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LimitScope, D::Error> {
    String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
}

fn ms_to_ns(ms: f64) -> Nanos {
    (ms * 1e6).round() as Nanos
}

fn mbps_to_bps(mbps: f64) -> u64 {
    (mbps * 1e6).round() as u64
}

impl ScenarioConfig {
    /// The class spec of an application class (background has none).
    pub fn class(&self, class: OrchestratorLane) -> Option<&ClassSpec> {
        match class {
            OrchestratorLane::Control => Some(&self.control),
            OrchestratorLane::Status => Some(&self.status),
            OrchestratorLane::Telemetry => Some(&self.telemetry),
            OrchestratorLane::Bulk => Some(&self.bulk),
            OrchestratorLane::Background => None,
        }
    }

    /// Checks every parameter; the error names the offending flag.
    pub fn validate(&self) -> Result<(), SimError> {
        at_least_one("followers", self.followers)?;
        at_most("followers", self.followers, MAX_FOLLOWERS, "each follower's flows need their own source port")?;
        at_most("bg-flows", self.bg_flows, MAX_BG_FLOWS, "each background flow needs its own source port")?;
        at_most(
            "tcp-flows",
            self.bg_flows + self.tcp_flows,
            MAX_BG_FLOWS,
            "each background flow, UDP or TCP, needs its own source port",
        )?;
        positive("bg-mbps", self.bg_mbps).map_err(|e| match e {
            SimError::InvalidParameter { flag, message } => SimError::InvalidParameter {
                flag,
                message: format!("{message}; use --bg-flows 0 for no background traffic"),
            },
            e => e,
        })?;
        at_least_one("queue", self.queue_packets)?;
        at_least_one("device-queue", self.device_queue_packets)?;
        at_least_one("access-queue", self.access_queue_packets)?;
        positive("bottleneck-mbps", self.bottleneck_mbps)?;
        positive("access-mbps", self.access_mbps)?;
        delay("bottleneck-delay-ms", self.bottleneck_delay_ms)?;
        delay("access-delay-ms", self.access_delay_ms)?;
        if let Some(rate) = self.follower_access_mbps {
            positive("follower-access-mbps", rate)?;
        }
        let follower_access = self.follower_access_mbps.unwrap_or(self.access_mbps);
        for (flag, rate) in [
            ("bottleneck-mbps", self.bottleneck_mbps),
            ("access-mbps", self.access_mbps),
            ("follower-access-mbps", follower_access),
        ] {
            if mbps_to_bps(rate) == 0 {
                return Err(SimError::invalid(flag, format!("{rate} Mbit/s rounds to 0 bit/s")));
            }
        }
        let payloads = [
            ("bg-payload", self.bg_payload_bytes),
            ("control-bytes", self.control.payload_bytes),
            ("status-bytes", self.status.payload_bytes),
            ("telemetry-bytes", self.telemetry.payload_bytes),
            ("bulk-bytes", self.bulk.payload_bytes),
        ];
        for (flag, bytes) in payloads {
            if !(1..=MAX_PAYLOAD).contains(&bytes) {
                return Err(SimError::invalid(
                    flag,
                    format!("must be 1..={MAX_PAYLOAD} bytes of UDP payload (got {bytes})"),
                ));
            }
        }
        if self.bg_flows > 0 && self.bg_interval_ps() < 1000 {
            let most = f64::from(self.bg_payload_bytes) * 8e3 * f64::from(self.bg_flows);
            return Err(SimError::invalid(
                "bg-mbps",
                format!(
                    "{} Mbit/s in {} flow(s) of {}-byte payloads is more than one packet a nanosecond per flow \
                     (at most {most} Mbit/s)",
                    self.bg_mbps, self.bg_flows, self.bg_payload_bytes
                ),
            ));
        }
        for (flag, pps) in [
            ("control-pps", self.control.pps),
            ("status-pps", self.status.pps),
            ("telemetry-pps", self.telemetry.pps),
            ("bulk-pps", self.bulk.pps),
        ] {
            positive(flag, pps)?;
            if pps > 1e9 {
                return Err(SimError::invalid(flag, format!("{pps} packets/s is more than one a nanosecond")));
            }
        }
        for (flag, dscp) in [
            ("control-dscp", self.control.dscp),
            ("status-dscp", self.status.dscp),
            ("telemetry-dscp", self.telemetry.dscp),
            ("bulk-dscp", self.bulk.dscp),
        ] {
            if dscp > 63 {
                return Err(SimError::invalid(flag, format!("a DSCP is 0..=63 (got {dscp})")));
            }
        }
        positive("duration", self.duration_s)?;
        non_negative("start", self.app_start_s)?;
        non_negative("start-jitter-ms", self.start_jitter_ms)?;
        non_negative("bg-start-offset-ms", self.bg_start_offset_ms)?;
        if self.app_start_s + (self.start_jitter_ms + self.bg_start_offset_ms) / 1e3 >= self.duration_s {
            return Err(SimError::invalid(
                "duration",
                format!(
                    "{} s leaves no time to send: applications start at {} s (+ up to {} ms jitter, + {} ms for background)",
                    self.duration_s, self.app_start_s, self.start_jitter_ms, self.bg_start_offset_ms
                ),
            ));
        }
        if self.duration_s > 86_400.0 {
            return Err(SimError::invalid("duration", "at most one simulated day (86400 s)"));
        }
        non_negative("bg-burst", self.bg_burst_ms)?;
        if self.bg_burst_ms > 0.0 && self.bg_flows > 0 && self.bg_interval_ps() < 2000 {
            return Err(SimError::invalid(
                "bg-burst",
                "bursts at twice the background's rate: more than one packet a nanosecond",
            ));
        }
        if let Some(shape) = self.bg_burst_pareto
            && !(shape.is_finite() && shape > 1.0 && shape <= 100.0)
        {
            return Err(SimError::invalid(
                "bg-burst-pareto",
                format!("a Pareto shape of more than 1 (a finite mean) and at most 100 (got {shape})"),
            ));
        }
        if self.bg_burst_ms > self.duration_s * 1e3 {
            return Err(SimError::invalid(
                "bg-burst",
                format!("{} ms is longer than the run ({} s)", self.bg_burst_ms, self.duration_s),
            ));
        }
        if self.link.is_some() {
            self.radio_links()?;
        }
        for class in OrchestratorLane::ALL {
            if let Some(ms) = self.deadlines.of(class) {
                positive("deadline", ms)?;
                delay("deadline", ms)?;
            }
        }
        Ok(())
    }

    /// The background's on/off pattern: bursts of [`ScenarioConfig::bg_burst_ms`] at
    /// twice the mean rate, as many packets as fit, each burst's period that many
    /// packets at the mean rate (so the mean is exact). `None` for a steady background.
    fn bg_on_off(&self, flow: u32) -> Option<OnOff> {
        (self.bg_burst_ms > 0.0).then(|| {
            let interval_ps = self.bg_interval_ps();
            let gap_ps = interval_ps / 2;
            let burst_ps = self.bg_burst_ms * 1e9;
            let burst_packets = ((burst_ps / gap_ps.max(1) as f64).round() as u64).max(1);
            // Each flow its own stream of Pareto draws.
            let pareto =
                self.bg_burst_pareto.map(|shape| Pareto::new(shape, mix64(self.seed ^ 0x5041_5245 ^ u64::from(flow))));
            OnOff { burst_packets, gap_ps, period_ps: burst_packets * interval_ps, pareto }
        })
    }

    /// The packet interval of each background flow, in picoseconds.
    fn bg_interval_ps(&self) -> u64 {
        UdpApp::interval_from_rate(self.bg_payload_bytes, self.bg_mbps * 1e6 / f64::from(self.bg_flows))
    }

    /// The bottleneck's radio links, A → B and B → A (the followers' downlink and
    /// uplink), if [`ScenarioConfig::link`] is given: each direction's own random
    /// stream, and an unbounded buffer (the device queue bounds what waits there).
    pub fn radio_links(&self) -> Result<Option<[RadioLink; 2]>, SimError> {
        let Some(text) = &self.link else { return Ok(None) };
        let bad = |e: String| SimError::invalid("link", e);
        let (_, directions, timeline) = load_link_directions(text, None).map_err(|e| bad(e.to_string()))?;
        if !timeline.steps.is_empty() {
            return Err(bad("a timeline is `sim robot`'s; the study's bottleneck keeps one link".into()));
        }
        let (up, down) = directions.resolve(true, true);
        let radio = |link: RadioLink, direction: u64| RadioLink {
            queue: QueueLimit::default(),
            seed: mix64(link.seed ^ mix64(self.seed) ^ direction),
            ..link
        };
        Ok(Some([radio(down, 0), radio(up, 1)]))
    }

    /// The bottleneck's link parameters.
    pub fn bottleneck_link(&self) -> LinkConfig {
        LinkConfig {
            device_queue_packets: self.device_queue_packets,
            ..LinkConfig::new(mbps_to_bps(self.bottleneck_mbps), ms_to_ns(self.bottleneck_delay_ms))
        }
    }

    /// An access link's parameters.
    pub fn access_link(&self) -> LinkConfig {
        LinkConfig {
            device_queue_packets: self.device_queue_packets,
            ..LinkConfig::new(mbps_to_bps(self.access_mbps), ms_to_ns(self.access_delay_ms))
        }
    }

    /// A follower's access link: [`ScenarioConfig::access_link`] at
    /// [`ScenarioConfig::follower_access_mbps`] if given.
    pub fn follower_access_link(&self) -> LinkConfig {
        let rate = self.follower_access_mbps.unwrap_or(self.access_mbps);
        LinkConfig { rate_bps: mbps_to_bps(rate), ..self.access_link() }
    }

    /// Builds the network and its applications (after [`ScenarioConfig::validate`]).
    pub fn build(&self) -> Result<Simulator, SimError> {
        self.build_with_bottleneck().map(|(sim, _)| sim)
    }

    /// [`ScenarioConfig::build`], also returning the bottleneck's channel ids (A→B, B→A).
    fn build_with_bottleneck(&self) -> Result<(Simulator, [u32; 2]), SimError> {
        self.validate()?;
        let mut topo = Topology::new();
        let orchestrator = topo.add_node("orchestrator");
        let router_a = topo.add_node("router-a");
        let router_b = topo.add_node("router-b");
        let bg_a = topo.add_node("bg-a");
        let bg_b = topo.add_node("bg-b");
        let followers: Vec<u32> = (0..self.followers).map(|i| topo.add_node(format!("follower-{i}"))).collect();

        let access = self.access_link();
        let access_queue = self.access_queue_packets as usize;
        let fifo = || Some(Box::new(bauxite_qdisc::Fifo::new(access_queue)) as Box<dyn bauxite_qdisc::Qdisc>);
        let params = |direction: u64| QdiscParams {
            limit: self.queue_packets,
            limit_mode: self.limit_mode,
            seed: mix64(self.seed ^ 0x5144_6973_6300 ^ direction),
        };
        topo.add_link(orchestrator, router_a, access, fifo(), fifo());
        topo.add_link(bg_a, router_a, access, fifo(), fifo());
        let (a_to_b, b_to_a) = topo.add_link(
            router_a,
            router_b,
            self.bottleneck_link(),
            Some(build_qdisc(self.scheduler, params(0))),
            Some(build_qdisc(self.scheduler, params(1))),
        );
        if let Some(links) = self.radio_links()? {
            for (ch, link) in [a_to_b, b_to_a].into_iter().zip(links) {
                topo.channels[ch as usize].radio = Some(Box::new(Radio::new(LinkModel::new(&link, 0))));
            }
        }
        topo.add_link(router_b, bg_b, access, fifo(), fifo());
        let follower_access = self.follower_access_link();
        for &f in &followers {
            topo.add_link(router_b, f, follower_access, fifo(), fifo());
        }

        let mut sim = Simulator::new(topo);
        let mut rng = SplitMix64::new(mix64(self.seed));
        let start = (self.app_start_s * 1e9).round() as Nanos;
        let stop = (self.duration_s * 1e9).round() as Nanos;
        let jitter = ms_to_ns(self.start_jitter_ms);
        let bg_offset = ms_to_ns(self.bg_start_offset_ms);
        // One packet train: (payload bytes, interval in ps, DSCP when marking is on).
        type Train = (u32, u64, u8);
        let mut add =
            |sim: &mut Simulator, class: OrchestratorLane, (src, dst, index): (u32, u32, u32), train: Train| {
                let (payload, interval_ps, dscp) = train;
                let offset = if class == OrchestratorLane::Background { bg_offset } else { 0 };
                sim.add_app(UdpApp {
                    src,
                    dst,
                    src_port: u16::try_from(index)
                        .ok()
                        .and_then(|i| FIRST_SRC_PORT.checked_add(i))
                        .expect("validate() keeps every source port in the ephemeral range"),
                    dst_port: lane_port(class),
                    payload,
                    dscp: if self.dscp { dscp } else { 0 },
                    interval_ps,
                    start: start + rng.below(jitter) + offset,
                    stop,
                    tag: class as u32,
                    on_off: if class == OrchestratorLane::Background { self.bg_on_off(index) } else { None },
                    deadline: self.deadlines.of(class).map(ms_to_ns),
                });
            };
        let train = |c: &ClassSpec| (c.payload_bytes, UdpApp::interval_from_pps(c.pps), c.dscp);
        // Draw order (and so each application's start offset) is fixed: control
        // flows, then each follower's status, telemetry and bulk, then background.
        for (i, &f) in followers.iter().enumerate() {
            add(&mut sim, OrchestratorLane::Control, (orchestrator, f, i as u32), train(&self.control));
        }
        for (i, &f) in followers.iter().enumerate() {
            for class in [OrchestratorLane::Status, OrchestratorLane::Telemetry, OrchestratorLane::Bulk] {
                let spec = self.class(class).expect("an application class");
                add(&mut sim, class, (f, orchestrator, i as u32), train(spec));
            }
        }
        if self.bg_flows > 0 {
            let bg = (self.bg_payload_bytes, self.bg_interval_ps(), 0);
            for j in 0..self.bg_flows {
                add(&mut sim, OrchestratorLane::Background, (bg_a, bg_b, j), bg);
                add(&mut sim, OrchestratorLane::Background, (bg_b, bg_a, self.bg_flows + j), bg);
            }
        }
        // TCP cross traffic after the UDP background, in the draw order and the
        // source ports: each direction's connections in turn.
        let first_tcp_port = 2 * self.bg_flows;
        for j in 0..2 * self.tcp_flows {
            let (src, dst) = if j < self.tcp_flows { (bg_a, bg_b) } else { (bg_b, bg_a) };
            sim.add_tcp(TcpApp {
                src,
                dst,
                src_port: FIRST_SRC_PORT + (first_tcp_port + j) as u16,
                dst_port: lane_port(OrchestratorLane::Background),
                dscp: 0,
                start: start + rng.below(jitter) + bg_offset,
                stop,
                tag: OrchestratorLane::Background as u32,
            });
        }
        Ok((sim, [a_to_b, b_to_a]))
    }
}

/// Everything one scenario run produced.
#[derive(Clone, Debug)]
pub struct ScenarioResult {
    /// The configuration that ran.
    pub config: ScenarioConfig,
    /// Per-flow records, in build order.
    pub flows: Vec<FlowRecord>,
    /// Per-class aggregates, in class order.
    pub classes: Vec<ClassRow>,
    /// Events, end time, peak packets.
    pub counters: RunCounters,
    /// Counters of the bottleneck's A→B and B→A directions.
    pub bottleneck: [ChannelStats; 2],
    /// Wall-clock seconds the run took (not part of any deterministic output).
    pub wall_s: f64,
}

/// Validates, builds and runs one scenario to completion.
pub fn run_scenario(config: &ScenarioConfig) -> Result<ScenarioResult, SimError> {
    let began = Instant::now();
    let (mut sim, [a_to_b, b_to_a]) = config.build_with_bottleneck()?;
    let counters = sim.run();
    let topo = sim.topology();
    let bottleneck = [topo.channels[a_to_b as usize].stats, topo.channels[b_to_a as usize].stats];
    let names: Vec<String> = topo.nodes().iter().map(|n| n.name.clone()).collect();
    let monitor = sim.take_monitor();
    let flows: Vec<FlowRecord> = monitor
        .flows
        .into_iter()
        .filter(|f| f.tag != ACK_TAG)
        .map(|f| FlowRecord {
            class: lane_of_tag(f.tag),
            src: names[f.key.src as usize].clone(),
            dst: names[f.key.dst as usize].clone(),
            src_port: f.key.src_port,
            dst_port: f.key.dst_port,
            dscp: f.dscp,
            protocol: f.key.protocol,
            active_ns: f.active_ns,
            deadline: f.deadline,
            stats: f.stats,
        })
        .collect();
    let classes = class_rows(&flows);
    Ok(ScenarioResult {
        config: config.clone(),
        flows,
        classes,
        counters,
        bottleneck,
        wall_s: began.elapsed().as_secs_f64(),
    })
}

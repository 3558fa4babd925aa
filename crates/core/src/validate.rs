//! Checking a [`Profile`] once, into a [`ValidatedProfile`] whose lane references are
//! resolved to indices, and the bounds every number of a profile must lie within.
//!
//! Every number a profile holds is bounded on both sides. A value outside what
//! `tc`, HTB or the kernel accept would pass here and then fail inside `tc -batch`
//! with no file, line or key; a value the kernel accepts but no robot link needs
//! (a 4-billion-packet queue) would let one config exhaust the robot's memory.

use std::collections::HashSet;
use std::ops::{Deref, RangeInclusive};
use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::config::{self, Shown};
use crate::lane::{Lane, MAX_LANES, MAX_RULES, Match, PacketKey, Rule};
use crate::profile::{
    AutoRatePolicy, CongestionPolicy, Direction, EarlyDropPolicy, IngressPolicy, Profile, ProfileError, RateSetting,
    Targets,
};
use crate::reflector::{MAX_REFLECTORS, Reflector};
use crate::units::BitRate;

/// The slowest link a profile may shape: 64 kbit/s, the default air rate of the SiK
/// telemetry radios robots carry, and about the slowest link that carries IP control
/// traffic at all (one 1500-byte frame already takes 188 ms). With
/// [`MIN_HEADROOM`] and [`MIN_SHARE`] the smallest guaranteed lane rate is
/// 64 000 × 0.5 × 0.01 = 320 bit/s, well above the 8 bit/s (1 byte/s) floor of
/// `tc`, which refuses `rate 1bit` as a zero byte rate.
pub const MIN_LINK_RATE: BitRate = BitRate::from_bps(64_000);
/// The fastest link a profile may shape: 100 Gbit/s, the rate of the HTB tree's
/// pass-through class; a lane shaped faster than it would shape nothing. Robot
/// links top out at 10 Gbit/s (a tethered wired link).
pub const MAX_LINK_RATE: BitRate = BitRate::from_bps(100_000_000_000);
/// The smallest headroom: shaping under half the link wastes more of it than a
/// modem's queue costs the critical lane.
pub const MIN_HEADROOM: f64 = 0.5;
/// The smallest share a lane may be guaranteed (1 %): smaller lanes belong merged
/// into another; see [`MIN_LINK_RATE`] for the rate it gives on the slowest link.
pub const MIN_SHARE: f64 = 0.01;
/// The longest lane queue, in packets: 10 240 is fq_codel's default limit, the
/// longest queue the kernel sets up on its own. Bauxite sets `gso_max_size` to the
/// MTU, so at 1500 bytes a full lane holds 15 MB; the 4 294 967 295 a `u32` allows
/// let one lane queue a gigabyte.
pub const MAX_QUEUE_LIMIT: u32 = 10_240;
/// The longest queue delay a threshold or target may name: 10 s. Control traffic
/// delayed that long has timed out at every robot stack, so a larger threshold
/// never triggers on anything that still matters.
pub const MAX_QUEUE_DELAY: Duration = Duration::from_secs(10);
/// The largest PIE `alpha` and `beta`: 2 per second, the top of Linux `sch_pie`'s
/// range (0 to 32, in sixteenths); RFC 8033's defaults are 0.125 and 1.25.
pub const MAX_PIE_GAIN: f64 = 2.0;
/// The longest a profile name may be (it appears in logs and status lines).
pub const MAX_NAME_LEN: usize = 64;

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

/// A profile that passed [`Profile::validate`]: the only way to get one, so whoever
/// holds one (the shaper, the demo) need not check it again. Rules and the default
/// lane are resolved to lane indices, and the reflectors to addresses.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedProfile {
    profile: Profile,
    rule_lanes: Vec<usize>,
    default_lane: usize,
    ack_lane: Option<usize>,
    reflectors: Vec<Reflector>,
}

impl Deref for ValidatedProfile {
    type Target = Profile;

    fn deref(&self) -> &Profile {
        &self.profile
    }
}

impl Serialize for ValidatedProfile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.profile.serialize(s)
    }
}

impl ValidatedProfile {
    /// The profile itself.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile, to change and validate again.
    pub fn into_profile(self) -> Profile {
        self.profile
    }

    /// The lane index of rule `rule` (as `rules[rule]` lists it).
    pub fn rule_lane(&self, rule: usize) -> usize {
        self.rule_lanes[rule]
    }

    /// Every rule with the index of its lane, first match first.
    pub fn resolved_rules(&self) -> impl Iterator<Item = (usize, &Match)> {
        self.rule_lanes.iter().copied().zip(self.profile.rules.iter().map(|r| &r.matches))
    }

    /// The index of the lane a packet goes to: the first rule it matches, else the
    /// default lane (as the kernel classifier decides).
    pub fn lane_of(&self, packet: &PacketKey) -> usize {
        self.resolved_rules().find(|(_, m)| m.matches(packet)).map_or(self.default_lane, |(lane, _)| lane)
    }

    /// The index of the lane of packets no rule matches.
    pub fn default_lane_index(&self) -> usize {
        self.default_lane
    }

    /// The index of `ack_lane`, the lane of pure TCP ACKs whose own is less urgent.
    pub fn ack_lane_index(&self) -> Option<usize> {
        self.ack_lane
    }

    /// The reflectors of `rate: auto` (`auto_rate.reflector`), in the profile's
    /// order: the first is probed, the others are its standbys. Empty if none.
    pub fn reflectors(&self) -> &[Reflector] {
        &self.reflectors
    }

    /// What shapes the downlink, when this profile shapes it: the same lanes and rules at
    /// `ingress.rate` (with the profile's `auto_rate` when that is `auto`) and
    /// `ingress.headroom`, and nothing that belongs to the egress daemon alone (metrics,
    /// diagnostics).
    pub fn for_ingress(&self) -> Option<ValidatedProfile> {
        let ingress = self.profile.ingress.as_ref().filter(|_| self.profile.direction.shapes_ingress())?;
        let mut profile = self.profile.clone();
        profile.rate = ingress.rate;
        profile.headroom = ingress.headroom;
        let reflectors = match ingress.rate {
            RateSetting::Auto => self.reflectors.clone(),
            RateSetting::Fixed(_) => {
                profile.auto_rate = AutoRatePolicy::default();
                Vec::new()
            }
        };
        profile.metrics = None;
        profile.diagnostics = None;
        profile.direction = Direction::Up;
        profile.ingress = None;
        Some(ValidatedProfile { profile, reflectors, ..self.clone() })
    }

    /// This profile with the downlink shaped too at `rate` (the command line's
    /// `--ingress`): `direction: down` stays, `up` becomes `both`.
    pub fn with_ingress(mut self, rate: RateSetting) -> Result<Self, ProfileError> {
        check_rate("ingress.rate", rate, &self.reflectors, "`--ingress auto`")?;
        let kept = self.profile.ingress.as_ref().map(|i| IngressPolicy { rate, headroom: i.headroom });
        self.profile.ingress = Some(kept.unwrap_or_else(|| IngressPolicy::at(rate)));
        if self.profile.direction == Direction::Up {
            self.profile.direction = Direction::Both;
        }
        Ok(self)
    }

    /// This profile with another link rate (the command line's `--rate`): only the
    /// rate is checked again.
    pub fn with_rate(mut self, rate: RateSetting) -> Result<Self, ProfileError> {
        check_rate("rate", rate, &self.reflectors, "`rate: auto`")?;
        self.profile.rate = rate;
        Ok(self)
    }

    /// Puts a rule sending `matches` to lane `lane` ahead of every other rule (the
    /// daemon's rate probes); only the rule count is checked again.
    ///
    /// # Panics
    /// If `lane` is not a lane index of this profile.
    pub fn prepend_rule(&mut self, lane: usize, matches: Match) -> Result<(), ProfileError> {
        assert!(lane < self.profile.lanes.len(), "lane {lane} of a profile with {} lanes", self.lanes.len());
        check_rule_count(self.profile.rules.len() + 1)?;
        let name = self.profile.lanes[lane].name.clone();
        self.profile.rules.insert(0, Rule { lane: name, matches });
        self.rule_lanes.insert(0, lane);
        Ok(())
    }
}

impl Profile {
    /// Checks everything a deserializer cannot (references between keys, the bounds
    /// of every number) and resolves lane names to indices. This is the only check a
    /// profile needs: keep the [`ValidatedProfile`] instead of checking again.
    pub fn validate(self) -> Result<ValidatedProfile, ProfileError> {
        check_name(&self.name)?;
        check_lanes(&self.lanes)?;
        check_rule_count(self.rules.len())?;
        let rule_lanes = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, rule)| resolve_lane(&self, &format!("rules[{i}].lane"), &rule.lane))
            .collect::<Result<Vec<_>, _>>()?;
        let default_lane = resolve_lane(&self, "default_lane", &self.default_lane)?;
        let ack_lane = self.ack_lane.as_ref().map(|lane| resolve_lane(&self, "ack_lane", lane)).transpose()?;
        within("headroom", self.headroom, MIN_HEADROOM..=1.0, "shaping under half the link wastes it")?;
        check_congestion(&self.congestion)?;
        check_early_drop(&self.early_drop)?;
        let reflectors = check_auto_rate(&self.auto_rate)?;
        check_rate("rate", self.rate, &reflectors, "`rate: auto`")?;
        check_targets(&self.targets)?;
        check_ingress(self.direction, self.ingress.as_ref(), &reflectors)?;
        if let Some(d) = &self.diagnostics {
            check_diagnostics(d)?;
        }
        Ok(ValidatedProfile { profile: self, rule_lanes, default_lane, ack_lane, reflectors })
    }
}

/// Fails unless `min <= value <= max`, naming `key`, the range and why it is bounded.
fn within<T: PartialOrd + Shown>(key: &str, value: T, range: RangeInclusive<T>, why: &str) -> Result<(), ProfileError> {
    let shown = value.shown();
    config::within(value, range).map(drop).map_err(|e| ProfileError::new(key, Some(shown), format!("{e}: {why}")))
}

fn check_name(name: &str) -> Result<(), ProfileError> {
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN || name.chars().any(char::is_control) {
        return Err(ProfileError::new(
            "name",
            Some(name.to_string()),
            format!("a profile name is 1 to {MAX_NAME_LEN} printable characters"),
        ));
    }
    Ok(())
}

fn check_lanes(lanes: &[Lane]) -> Result<(), ProfileError> {
    if lanes.is_empty() {
        return Err(ProfileError::new("lanes", None, "a profile needs at least one lane"));
    }
    if lanes.len() > MAX_LANES {
        return Err(ProfileError::new("lanes", None, format!("{} lanes given, at most {MAX_LANES}", lanes.len())));
    }
    let mut names = HashSet::new();
    for (i, lane) in lanes.iter().enumerate() {
        check_lane(i, lane)?;
        if !names.insert(lane.name.as_str()) {
            return Err(ProfileError::new(
                format!("lanes[{i}].name"),
                Some(lane.name.clone()),
                format!("lane `{}` is defined twice", lane.name),
            ));
        }
    }
    let total_share: f64 = lanes.iter().map(|l| l.share).sum();
    if total_share > 1.0 + 1e-9 {
        return Err(ProfileError::new(
            "lanes",
            None,
            format!("lane shares add up to {total_share:.3}; the guaranteed shares cannot exceed the link (1.0)"),
        ));
    }
    Ok(())
}

fn check_lane(i: usize, lane: &Lane) -> Result<(), ProfileError> {
    let key = |k: &str| format!("lanes[{i}].{k}");
    let valid_name = !lane.name.is_empty()
        && lane.name.len() <= 32
        && lane.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(ProfileError::new(
            key("name"),
            Some(lane.name.clone()),
            "lane names are 1 to 32 letters, digits, `_` or `-`",
        ));
    }
    within(&key("share"), lane.share, MIN_SHARE..=1.0, "a lane is guaranteed 1 % to 100 % of the link")?;
    within(
        &key("queue_limit"),
        lane.queue_limit,
        1..=MAX_QUEUE_LIMIT,
        "a queue holds at least one packet, and at most fq_codel's default limit",
    )
}

fn check_rule_count(count: usize) -> Result<(), ProfileError> {
    if count > MAX_RULES {
        return Err(ProfileError::new("rules", None, format!("{count} rules given, at most {MAX_RULES}")));
    }
    Ok(())
}

fn resolve_lane(profile: &Profile, key: &str, name: &str) -> Result<usize, ProfileError> {
    profile
        .lane_index(name)
        .ok_or_else(|| ProfileError::new(key, Some(name.to_string()), format!("no lane is called `{name}`")))
}

/// A link rate at `key`: a fixed one within bounds, or `auto` with a reflector to probe
/// (`auto_named` says how the caller spelt it, for the error).
fn check_rate(key: &str, rate: RateSetting, reflectors: &[Reflector], auto_named: &str) -> Result<(), ProfileError> {
    match rate {
        RateSetting::Fixed(r) => check_link_rate(key, r),
        RateSetting::Auto if reflectors.is_empty() => Err(ProfileError::new(
            "auto_rate.reflector",
            None,
            format!(
                "{auto_named} needs a reflector on the far side: `bauxite reflect` there (e.g. 10.0.0.2:7399), or \
                 any host that answers ping (icmp:10.0.0.2)"
            ),
        )),
        RateSetting::Auto => Ok(()),
    }
}

/// `direction: down` or `both` needs the downlink's rate; an `ingress` that nothing uses is
/// a mistake worth naming (the robot's downlink would stay unprotected while the file says
/// otherwise).
fn check_ingress(
    direction: Direction,
    ingress: Option<&IngressPolicy>,
    reflectors: &[Reflector],
) -> Result<(), ProfileError> {
    match (direction.shapes_ingress(), ingress) {
        (true, None) => Err(ProfileError::new(
            "direction",
            Some(format!("{direction:?}").to_lowercase()),
            "shaping the downlink needs its rate: add `ingress: {rate: 20mbit}` (the downlink's rate)",
        )),
        (false, Some(_)) => Err(ProfileError::new(
            "ingress",
            None,
            "`ingress` is given but `direction` is `up`: set `direction: both` (or `down`) to shape the downlink",
        )),
        (_, Some(i)) => {
            check_rate("ingress.rate", i.rate, reflectors, "`ingress: {rate: auto}`")?;
            within("ingress.headroom", i.headroom, MIN_HEADROOM..=1.0, "shaping under half the link wastes it")
        }
        (false, None) => Ok(()),
    }
}

fn check_link_rate(key: &str, rate: BitRate) -> Result<(), ProfileError> {
    within(key, rate, MIN_LINK_RATE..=MAX_LINK_RATE, "from a robot's telemetry radio to HTB's pass-through rate")
}

fn check_diagnostics(d: &crate::diagnostics::DiagnosticsSettings) -> Result<(), ProfileError> {
    crate::diagnostics::check_topic_name(&d.topic)
        .map_err(|e| ProfileError::new("diagnostics.topic", Some(d.topic.clone()), e))?;
    within(
        "diagnostics.period",
        d.period,
        10 * MS..=3600 * SEC,
        "a status more often than every 10 ms floods /diagnostics, one rarer than an hour is stale",
    )?;
    within("diagnostics.domain_id", u32::from(d.domain_id), 0..=232, "DDS maps domains 0 to 232 onto UDP ports")?;
    match d.interfaces.as_slice() {
        [std::net::IpAddr::V4(_)] => Ok(()),
        _ => Err(ProfileError::new(
            "diagnostics.interfaces",
            Some(format!("{:?}", d.interfaces)),
            "give one IPv4 address (RustDDS binds one address per port), e.g. [127.0.0.1]",
        )),
    }
}

fn check_congestion(c: &CongestionPolicy) -> Result<(), ProfileError> {
    within(
        "congestion.poll_interval",
        c.poll_interval,
        MS..=100 * MS,
        "the detector must see a queue within the daemon's 1 s lease, and more often than every millisecond costs CPU for nothing",
    )?;
    within(
        "congestion.enter_delay",
        c.enter_delay,
        MS..=MAX_QUEUE_DELAY,
        "the queue delay is read every poll (at least 1 ms apart); control traffic queued 10 s has timed out",
    )?;
    within(
        "congestion.enter_backlog_packets",
        c.enter_backlog_packets,
        1..=MAX_QUEUE_LIMIT,
        "a backlog above the longest lane queue is never reached",
    )?;
    within(
        "congestion.exit_hold",
        c.exit_hold,
        MS..=600 * SEC,
        "a hold over 10 minutes keeps dropping bulk long after the link recovered",
    )
}

fn check_early_drop(ed: &EarlyDropPolicy) -> Result<(), ProfileError> {
    let gain_why = "Linux sch_pie accepts 0 to 2 (0 to 32 sixteenths)";
    within("early_drop.alpha", ed.alpha, 0.0..=MAX_PIE_GAIN, gain_why)?;
    within("early_drop.beta", ed.beta, 0.0..=MAX_PIE_GAIN, gain_why)?;
    within(
        "early_drop.target",
        ed.target,
        MS..=MAX_QUEUE_DELAY,
        "PIE cannot steer a delay finer than its 1 ms update, and 10 s has timed out every control message",
    )?;
    within(
        "early_drop.update_interval",
        ed.update_interval,
        MS..=SEC,
        "PIE's T_UPDATE: RFC 8033 uses 15 ms; slower than 1 s it cannot follow a link change",
    )?;
    within(
        "early_drop.max_burst",
        ed.max_burst,
        Duration::ZERO..=MAX_QUEUE_DELAY,
        "a burst allowance longer than the longest queue delay disables early drop",
    )
}

/// Checks `auto_rate` and returns its reflectors.
fn check_auto_rate(ar: &AutoRatePolicy) -> Result<Vec<Reflector>, ProfileError> {
    for (key, rate) in [
        ("auto_rate.min_rate", ar.min_rate),
        ("auto_rate.max_rate", ar.max_rate),
        ("auto_rate.base_rate", ar.base_rate),
    ] {
        check_link_rate(key, rate)?;
    }
    if ar.min_rate > ar.max_rate {
        return Err(ProfileError::new(
            "auto_rate.min_rate",
            Some(ar.min_rate.to_string()),
            "is above auto_rate.max_rate",
        ));
    }
    within(
        "auto_rate.base_rate",
        ar.base_rate,
        ar.min_rate..=ar.max_rate,
        "it must lie between min_rate and max_rate",
    )?;
    check_auto_rate_timing(ar)?;
    within(
        "auto_rate.load_threshold",
        ar.load_threshold,
        0.1..=1.0,
        "the fraction of the shaped rate at which the link counts as loaded",
    )?;
    if ar.key_file.as_ref().is_some_and(|f| f.as_os_str().is_empty()) {
        return Err(ProfileError::new("auto_rate.key_file", Some(String::new()), "must name a file"));
    }
    check_reflectors(&ar.reflector)
}

fn check_auto_rate_timing(ar: &AutoRatePolicy) -> Result<(), ProfileError> {
    within(
        "auto_rate.probe_interval",
        ar.probe_interval,
        MS..=SEC,
        "probes must come often enough to follow the link, and not faster than 1000 a second",
    )?;
    within(
        "auto_rate.delay_threshold",
        ar.delay_threshold,
        Duration::from_micros(100)..=SEC,
        "below 100 us the threshold is inside any link's jitter; a queue of 1 s has long hurt control traffic",
    )?;
    within(
        "auto_rate.drain_time",
        ar.drain_time,
        10 * MS..=10 * SEC,
        "a queue is drained in this long: under 10 ms every queue stops the droppable lanes, over 10 s one barely drains",
    )?;
    within(
        "auto_rate.probe_hold",
        ar.probe_hold,
        Duration::ZERO..=3600 * SEC,
        "a hold over an hour never finds a link that recovered",
    )?;
    within(
        "auto_rate.probe_hold_max",
        ar.probe_hold_max,
        ar.probe_hold..=3600 * SEC,
        "at least probe_hold (it caps the hold's doubling), and a hold over an hour never finds a link that recovered",
    )?;
    within(
        "auto_rate.ramp_time",
        ar.ramp_time,
        10 * MS..=60 * SEC,
        "the rate doubles every ramp_time while probing: under 10 ms it overshoots any link before a probe returns",
    )
}

/// Reads `auto_rate.reflector`: each entry a [`Reflector`], none twice, at most
/// [`MAX_REFLECTORS`].
fn check_reflectors(texts: &[String]) -> Result<Vec<Reflector>, ProfileError> {
    if texts.len() > MAX_REFLECTORS {
        return Err(ProfileError::new(
            "auto_rate.reflector",
            Some(format!("{} reflectors", texts.len())),
            format!("at most {MAX_REFLECTORS}: one is probed, the others stand by"),
        ));
    }
    let mut reflectors: Vec<Reflector> = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let key =
            if texts.len() == 1 { "auto_rate.reflector".to_string() } else { format!("auto_rate.reflector[{i}]") };
        let bad = |why: String| ProfileError::new(&key, Some(text.clone()), format!("`{text}` {why}"));
        let reflector: Reflector = text.parse().map_err(bad)?;
        if reflectors.contains(&reflector) {
            return Err(bad("is listed twice".into()));
        }
        reflectors.push(reflector);
    }
    Ok(reflectors)
}

fn check_targets(t: &Targets) -> Result<(), ProfileError> {
    let why = "a promise tighter than a microsecond cannot be measured, and 10 s is no promise";
    for (key, value) in [
        ("targets.critical_latency_mean", t.critical_latency_mean),
        ("targets.critical_latency_p99", t.critical_latency_p99),
        ("targets.update_delay_mean", t.update_delay_mean),
    ] {
        within(key, value, Duration::from_micros(1)..=MAX_QUEUE_DELAY, why)?;
    }
    within("targets.critical_loss_pct", t.critical_loss_pct, 0.0..=100.0, "a percentage")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::{PortRange, PortSide, Protocol};

    fn key_of(p: Profile) -> String {
        p.validate().unwrap_err().key
    }

    #[test]
    fn diagnostics_settings_are_checked_and_named() {
        use crate::diagnostics::DiagnosticsSettings;
        let with = |edit: &dyn Fn(&mut DiagnosticsSettings)| {
            let mut p = Profile::robot();
            let mut d = DiagnosticsSettings::default();
            edit(&mut d);
            p.diagnostics = Some(d);
            p
        };
        assert!(with(&|_| {}).validate().is_ok(), "the defaults: /diagnostics, 1 s, domain 0, loopback");
        assert_eq!(key_of(with(&|d| d.topic = "/a//b".into())), "diagnostics.topic");
        assert_eq!(key_of(with(&|d| d.period = Duration::from_millis(1))), "diagnostics.period");
        assert_eq!(key_of(with(&|d| d.domain_id = 233)), "diagnostics.domain_id");
        assert_eq!(key_of(with(&|d| d.interfaces = vec![])), "diagnostics.interfaces");
        assert_eq!(key_of(with(&|d| d.interfaces = vec!["::1".parse().unwrap()])), "diagnostics.interfaces");
    }

    #[test]
    fn builtins_validate_and_resolve_their_lanes() {
        let robot = Profile::robot().validate().unwrap();
        assert_eq!(robot.resolved_rules().map(|(lane, _)| lane).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(robot.default_lane_index(), 1);
        assert_eq!(robot.ack_lane_index(), Some(1), "pure ACKs in telemetry");
        assert!(robot.reflectors().is_empty());
        let mut p = Profile::robot();
        p.ack_lane = Some("acks".into());
        let e = p.validate().unwrap_err();
        assert_eq!((e.key.as_str(), e.message.as_str()), ("ack_lane", "no lane is called `acks`"));
        let orch = Profile::orchestrator().validate().unwrap();
        assert_eq!(orch.default_lane_index(), 4);
        assert_eq!((0..4).map(|i| orch.rule_lane(i)).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn validation_names_the_key() {
        let mut p = Profile::robot();
        p.rules[1].lane = "nonesuch".into();
        assert_eq!(key_of(p), "rules[1].lane");

        let mut p = Profile::robot();
        p.lanes[0].share = 0.9;
        assert!(p.validate().unwrap_err().message.contains("add up"));

        let mut p = Profile::robot();
        p.lanes[1].name = "critical".into();
        assert_eq!(key_of(p), "lanes[1].name");

        let mut p = Profile::robot();
        p.congestion.poll_interval = Duration::from_secs(2);
        assert_eq!(key_of(p), "congestion.poll_interval");

        let mut p = Profile::robot();
        p.rate = RateSetting::Auto;
        assert_eq!(key_of(p.clone()), "auto_rate.reflector");
        p.auto_rate.reflector = vec!["10.0.0.2:7399".into()];
        assert_eq!(p.clone().validate().unwrap().reflectors(), [Reflector::Bauxite("10.0.0.2:7399".parse().unwrap())]);
        p.auto_rate.reflector = vec!["10.0.0.2:7399".into(), "icmp:fd00::1".into(), "icmp-timestamp:10.0.0.3".into()];
        assert_eq!(p.validate().unwrap().reflectors().len(), 3, "a reflector and its standbys");
    }

    /// Issue 10 #3: each of these passed validation and then failed in `tc -batch`
    /// or queued a gigabyte.
    #[test]
    fn every_number_is_bounded() {
        type Edit = fn(&mut Profile);
        let cases: &[(&str, Edit)] = &[
            ("rate", |p| p.rate = RateSetting::Fixed(BitRate::from_bps(1))),
            ("rate", |p| p.rate = RateSetting::Fixed(BitRate::from_bps(1_000_000_000_000))),
            ("lanes[0].share", |p| p.lanes[0].share = 1e-300),
            ("lanes[0].share", |p| p.lanes[0].share = f64::NAN),
            ("lanes[2].queue_limit", |p| p.lanes[2].queue_limit = u32::MAX),
            ("lanes[2].queue_limit", |p| p.lanes[2].queue_limit = 0),
            ("headroom", |p| p.headroom = 0.01),
            ("headroom", |p| p.headroom = f64::INFINITY),
            ("congestion.enter_backlog_packets", |p| p.congestion.enter_backlog_packets = u32::MAX),
            ("congestion.enter_backlog_packets", |p| p.congestion.enter_backlog_packets = 0),
            ("congestion.enter_delay", |p| p.congestion.enter_delay = Duration::from_nanos(1)),
            ("congestion.exit_hold", |p| p.congestion.exit_hold = Duration::from_secs(601)),
            ("early_drop.alpha", |p| p.early_drop.alpha = 1e300),
            ("early_drop.beta", |p| p.early_drop.beta = -1.0),
            ("early_drop.target", |p| p.early_drop.target = Duration::from_secs(11)),
            ("early_drop.update_interval", |p| p.early_drop.update_interval = Duration::from_micros(10)),
            ("early_drop.max_burst", |p| p.early_drop.max_burst = Duration::from_secs(3600)),
            ("auto_rate.min_rate", |p| p.auto_rate.min_rate = BitRate::from_bps(8)),
            ("auto_rate.max_rate", |p| p.auto_rate.max_rate = BitRate::from_bps(u64::MAX)),
            ("auto_rate.base_rate", |p| p.auto_rate.base_rate = BitRate::from_bps(100_000)),
            ("auto_rate.probe_interval", |p| p.auto_rate.probe_interval = Duration::from_nanos(1)),
            ("auto_rate.delay_threshold", |p| p.auto_rate.delay_threshold = Duration::from_nanos(1)),
            ("auto_rate.drain_time", |p| p.auto_rate.drain_time = Duration::from_millis(1)),
            ("auto_rate.ramp_time", |p| p.auto_rate.ramp_time = Duration::from_secs(61)),
            ("auto_rate.load_threshold", |p| p.auto_rate.load_threshold = 1e-300),
            ("auto_rate.probe_hold", |p| p.auto_rate.probe_hold = Duration::from_secs(3601)),
            ("auto_rate.reflector", |p| p.auto_rate.reflector = vec!["0.0.0.0:7399".into()]),
            ("auto_rate.reflector", |p| p.auto_rate.reflector = vec!["10.0.0.2:0".into()]),
            ("auto_rate.reflector[1]", |p| {
                p.auto_rate.reflector = vec!["icmp:10.0.0.2".into(), "icmp:10.0.0.2".into()]
            }),
            ("auto_rate.reflector[1]", |p| p.auto_rate.reflector = vec!["icmp:10.0.0.2".into(), "10.0.0.2".into()]),
            ("auto_rate.reflector", |p| p.auto_rate.reflector = vec!["icmp:10.0.0.9".into(); MAX_REFLECTORS + 1]),
            ("targets.critical_latency_mean", |p| p.targets.critical_latency_mean = Duration::from_nanos(1)),
            ("targets.critical_latency_p99", |p| p.targets.critical_latency_p99 = Duration::from_secs(11)),
            ("targets.update_delay_mean", |p| p.targets.update_delay_mean = Duration::from_secs(11)),
            ("targets.critical_loss_pct", |p| p.targets.critical_loss_pct = 101.0),
            ("name", |p| p.name = "x".repeat(65)),
            ("name", |p| p.name = String::new()),
        ];
        for (key, edit) in cases {
            let mut p = Profile::robot();
            edit(&mut p);
            let e = p.validate().expect_err(key);
            assert_eq!(&e.key, key, "{e}");
            assert!(e.message.len() < 200, "a short message: {e}");
        }
    }

    #[test]
    fn the_bounds_themselves_are_accepted() {
        let mut p = Profile::robot();
        p.rate = RateSetting::Fixed(MIN_LINK_RATE);
        p.headroom = MIN_HEADROOM;
        p.lanes[0].share = MIN_SHARE;
        p.lanes[2].queue_limit = MAX_QUEUE_LIMIT;
        p.early_drop.alpha = MAX_PIE_GAIN;
        p.clone().validate().unwrap();
        p.rate = RateSetting::Fixed(MAX_LINK_RATE);
        p.validate().unwrap();
    }

    #[test]
    fn the_smallest_lane_rate_is_above_tcs_floor() {
        // tc refuses rates under 1 byte/s; every allowed combination stays above it.
        let slowest = MIN_LINK_RATE.scaled(MIN_HEADROOM).scaled(MIN_SHARE);
        assert!(slowest.bps() >= 8, "{slowest}");
    }

    #[test]
    fn with_rate_checks_only_the_rate() {
        let p = Profile::robot().validate().unwrap();
        let fast = p.clone().with_rate(RateSetting::Fixed(BitRate::from_bps(50_000_000))).unwrap();
        assert_eq!(fast.rate, RateSetting::Fixed(BitRate::from_bps(50_000_000)));
        assert_eq!(p.clone().with_rate(RateSetting::Fixed(BitRate::from_bps(1))).unwrap_err().key, "rate");
        assert_eq!(p.with_rate(RateSetting::Auto).unwrap_err().key, "auto_rate.reflector");
    }

    #[test]
    fn a_prepended_rule_shifts_the_resolved_lanes() {
        let mut p = Profile::robot().validate().unwrap();
        let probe =
            Match::Port { protocol: Protocol::Udp, ports: PortRange { first: 7399, last: 7399 }, side: PortSide::Dst };
        p.prepend_rule(0, probe).unwrap();
        assert_eq!(p.resolved_rules().map(|(lane, _)| lane).collect::<Vec<_>>(), [0, 0, 1, 2]);
        assert_eq!(p.rules[0].lane, "critical");
        // The result is what validating the changed profile gives.
        assert_eq!(p.clone().into_profile().validate().unwrap(), p);

        let mut full = Profile::robot();
        full.rules = vec![full.rules[0].clone(); MAX_RULES];
        let mut full = full.validate().unwrap();
        assert_eq!(full.prepend_rule(0, probe).unwrap_err().key, "rules");
    }
}

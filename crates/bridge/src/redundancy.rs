//! Hot standby: bridges started with the same `redundancy.group` elect one active bridge.
//!
//! Every bridge of a group subscribes to the inputs and keeps its writers created and matched,
//! so a standby can take over at once; only the active one writes. Each bridge publishes a
//! [`Heartbeat`] on the group's topic every `heartbeat`; a standby takes over when the active
//! bridge has been silent for `lease` (its writers were matched long before). The active
//! bridge announces each critical sample — the publisher's writer GUID and sequence number,
//! which every bridge sees alike — in a heartbeat *before* it writes it, and a standby keeps
//! the last `keep` input samples of each topic; on taking over it writes those newer than the
//! last one announced. A sample announced but never written is lost (at most the one being
//! written when the active bridge died); none is written twice.
//!
//! The election ([`Election`]) is a pure state machine fed with `now`, like the classifier and
//! the supervisor: its tests replay exact timelines. Its rules:
//! - **Join**: a bridge starts `Joining` and writes nothing for `join` (long enough for DDS
//!   discovery), so a restarted bridge hears the active one and becomes a standby; nothing
//!   flaps. A group's first bridge is active after `join`.
//! - **Take over**: with no active bridge heard within `lease`, the most senior live standby
//!   (earliest start, then the smaller id) takes over with a term one above any it has heard.
//! - **Split brain**: of two active bridges, the one with the higher term stays (on equal
//!   terms, the senior one); the other stops on the first heartbeat it hears from it.
//! - **Pauses**: an active bridge may write only until half a lease after its last periodic
//!   heartbeat (the *gate*). A bridge that was paused (SIGSTOP, a starved thread) finds its
//!   gate closed, writes nothing and listens for a lease (`Rejoining`) before it resumes, by
//!   when a bridge that took over meanwhile has been heard (it heartbeats four times a
//!   lease); its queued samples go with it if it stands down. A paused standby gives every peer a fresh lease instead of
//!   judging it by a silence it did not watch.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rustdds::DomainParticipant;
use serde::{Deserialize, Serialize};

use crate::config::RedundancyConfig;
use crate::dds::{self, DdsError};
use crate::forward::{Sample, TopicShared};
use crate::{Clock, Nanos};

/// What part a bridge of a group plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Just started: listening for an active bridge, writing nothing.
    Joining,
    /// Reading and keeping the inputs, writers matched, writing nothing.
    Standby,
    /// Writing.
    Active,
    /// Was active and paused beyond its gate: writing nothing until it has listened.
    Rejoining,
}

impl Role {
    /// Every role, in the order of their numbers.
    pub const ALL: [Role; 4] = [Role::Joining, Role::Standby, Role::Active, Role::Rejoining];

    /// The role's name in logs, status and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Role::Joining => "joining",
            Role::Standby => "standby",
            Role::Active => "active",
            Role::Rejoining => "rejoining",
        }
    }

    /// Whether peers must count this bridge as (possibly) writing.
    fn claims_active(self) -> bool {
        matches!(self, Role::Active | Role::Rejoining)
    }

    fn from_u8(v: u8) -> Self {
        Self::ALL.get(usize::from(v)).copied().unwrap_or(Role::Joining)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an input sample came from: the publisher's writer GUID and its sequence number, the
/// same for every bridge that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Origin {
    /// The publisher's RTPS writer GUID.
    pub writer: [u8; 16],
    /// The sample's RTPS sequence number from that writer.
    pub seq: i64,
}

/// The last critical sample a bridge announced from one publisher on one topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    /// The topic as configured.
    pub topic: String,
    /// Its origin.
    pub origin: Origin,
}

/// A bridge's heartbeat. IDL: `module bauxite_msgs { module msg { module dds_ {
/// struct BridgeOrigin_ { octet writer[16]; long long seq; };
/// struct BridgeSent_ { string topic; BridgeOrigin_ origin; };
/// struct BridgeHeartbeat_ { string bridge; unsigned long long started_ns;
/// unsigned long long term; octet role; sequence<BridgeSent_> sent; }; }; }; };`
/// (`role`: 0 joining, 1 standby, 2 active, 3 rejoining).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// The sending bridge's id.
    pub bridge: String,
    /// When it started (Unix ns): seniority.
    pub started_ns: u64,
    /// The term it became active in (0 if never).
    pub term: u64,
    /// Its role ([`Role`] as a number).
    pub role: u8,
    /// The last critical sample it announced, per topic and publisher.
    pub sent: Vec<Sent>,
}

/// The heartbeat's DDS type name.
pub const HEARTBEAT_TYPE: &str = "bauxite_msgs::msg::dds_::BridgeHeartbeat_";

/// The group's heartbeat topic (ROS 2 style; `rt/` is added on the wire).
pub fn heartbeat_topic(group: &str) -> String {
    format!("/bauxite/redundancy/{group}")
}

/// The timing of an election, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Between periodic heartbeats.
    pub heartbeat: Nanos,
    /// An active bridge silent this long is taken over.
    pub lease: Nanos,
    /// How long a new bridge listens before it may become active.
    pub join: Nanos,
}

impl Timing {
    /// The configured timing.
    pub fn of(config: &RedundancyConfig) -> Self {
        let ns = |d: Duration| d.as_nanos().min(u128::from(u64::MAX)) as Nanos;
        Self { heartbeat: ns(config.heartbeat), lease: ns(config.lease), join: ns(config.join) }
    }

    /// How long after a periodic heartbeat an active bridge may write: half a lease, so a
    /// bridge that stopped heartbeating stops writing before anyone takes over.
    fn gate(&self) -> Nanos {
        self.lease / 2
    }
}

/// What the bridge that wrote before a takeover is known to have sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Predecessor {
    /// Its id.
    pub bridge: String,
    /// When it was last heard.
    pub heard: Nanos,
    /// The last sample it announced per (topic, publisher).
    pub sent: BTreeMap<(String, [u8; 16]), i64>,
}

impl Predecessor {
    fn merge(&mut self, sent: &[Sent]) {
        for s in sent {
            let seq = self.sent.entry((s.topic.clone(), s.origin.writer)).or_insert(s.origin.seq);
            *seq = (*seq).max(s.origin.seq);
        }
    }

    /// Whether a sample of `topic` that arrived at `received` must be written by the bridge
    /// taking over: newer than the last one announced from its publisher; from a publisher
    /// never announced, only if it arrived after the predecessor was last heard.
    pub fn missed(&self, topic: &str, origin: Option<Origin>, received: Nanos, heartbeat: Nanos) -> bool {
        let announced = origin.and_then(|o| self.sent.get(&(topic.to_string(), o.writer)).map(|&s| (o.seq, s)));
        match announced {
            Some((seq, last)) => seq > last,
            None => received + heartbeat > self.heard,
        }
    }
}

/// A change of role, with what the runtime must do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Became a standby after joining.
    Standby {
        /// The active bridge heard, if one was.
        to: Option<String>,
    },
    /// Was active (or rejoining) and heard `to` outrank it: stopped writing.
    StoodDown {
        /// The bridge that stays active.
        to: String,
    },
    /// Took over: write what the predecessor (if one was heard) is not known to have sent.
    TookOver {
        /// The last active bridge heard.
        from: Option<Predecessor>,
    },
    /// Paused beyond the gate: listening before writing again.
    Rejoining,
    /// Listened and heard no one who took over: writing again.
    Resumed,
}

#[derive(Debug, Clone)]
struct Peer {
    started_ns: u64,
    role: Role,
    heard: Nanos,
}

/// The election of one bridge: its role, term and what it has heard of its peers.
#[derive(Debug)]
pub struct Election {
    bridge: String,
    started_ns: u64,
    timing: Timing,
    role: Role,
    /// When the current role began.
    since: Nanos,
    term: u64,
    max_term: u64,
    peers: BTreeMap<String, Peer>,
    last_active: Option<Predecessor>,
    last_tick: Nanos,
    /// The last periodic heartbeat (`None` forces one now).
    last_heartbeat: Option<Nanos>,
}

impl Election {
    /// A bridge `bridge` that started at `started_ns` (Unix ns), joining at `now`.
    pub fn new(bridge: &str, started_ns: u64, timing: Timing, now: Nanos) -> Self {
        Self {
            bridge: bridge.to_string(),
            started_ns,
            timing,
            role: Role::Joining,
            since: now,
            term: 0,
            max_term: 0,
            peers: BTreeMap::new(),
            last_active: None,
            last_tick: now,
            last_heartbeat: None,
        }
    }

    /// The current role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The term this bridge was last active in (0 if never).
    pub fn term(&self) -> u64 {
        self.term
    }

    /// Until when this bridge may write (0: not at all).
    pub fn gate_until(&self) -> Nanos {
        match (self.role, self.last_heartbeat) {
            (Role::Active, Some(at)) => at + self.timing.gate(),
            _ => 0,
        }
    }

    /// Whether `a` wins against `b` when both are active: the higher term, then the senior.
    fn outranks(a: (u64, u64, &str), b: (u64, u64, &str)) -> bool {
        (std::cmp::Reverse(a.0), a.1, a.2) < (std::cmp::Reverse(b.0), b.1, b.2)
    }

    fn set(&mut self, role: Role, now: Nanos) {
        self.role = role;
        self.since = now;
    }

    /// A peer's heartbeat heard at `now` (the caller skips this bridge's own).
    pub fn hear(&mut self, hb: &Heartbeat, now: Nanos) -> Option<Change> {
        let role = Role::from_u8(hb.role);
        self.max_term = self.max_term.max(hb.term);
        self.peers.insert(hb.bridge.clone(), Peer { started_ns: hb.started_ns, role, heard: now });
        if !role.claims_active() {
            return None;
        }
        match &mut self.last_active {
            Some(p) if p.bridge == hb.bridge => p.heard = now,
            last => *last = Some(Predecessor { bridge: hb.bridge.clone(), heard: now, sent: BTreeMap::new() }),
        }
        if let Some(p) = &mut self.last_active {
            p.merge(&hb.sent);
        }
        let theirs = (hb.term, hb.started_ns, hb.bridge.as_str());
        let mine = (self.term, self.started_ns, self.bridge.as_str());
        let change = match self.role {
            Role::Joining => Change::Standby { to: Some(hb.bridge.clone()) },
            Role::Active | Role::Rejoining if Self::outranks(theirs, mine) => {
                Change::StoodDown { to: hb.bridge.clone() }
            }
            _ => return None,
        };
        self.set(Role::Standby, now);
        Some(change)
    }

    /// Advances the election to `now` (called every few milliseconds).
    pub fn tick(&mut self, now: Nanos) -> Option<Change> {
        let gap = now.saturating_sub(self.last_tick);
        self.last_tick = now;
        if gap > self.timing.gate() {
            // This bridge was not looking: judge no peer by that silence.
            for p in self.peers.values_mut() {
                p.heard = p.heard.max(now);
            }
        }
        let lease = self.timing.lease;
        self.peers.retain(|_, p| now.saturating_sub(p.heard) <= lease);
        let active_heard = self.peers.values().any(|p| p.role.claims_active());
        match self.role {
            Role::Active if now >= self.gate_until() && self.last_heartbeat.is_some() => {
                self.set(Role::Rejoining, now);
                Some(Change::Rejoining)
            }
            Role::Rejoining if now >= self.since + self.timing.lease => {
                self.set(Role::Active, now);
                self.last_heartbeat = None;
                Some(Change::Resumed)
            }
            Role::Joining if now >= self.since + self.timing.join => {
                self.set(Role::Standby, now);
                if active_heard { Some(Change::Standby { to: None }) } else { self.take_over_if_senior(now) }
            }
            Role::Standby if !active_heard => self.take_over_if_senior(now),
            _ => None,
        }
    }

    /// Takes over unless a more senior standby is alive (it will).
    fn take_over_if_senior(&mut self, now: Nanos) -> Option<Change> {
        let me = (self.started_ns, self.bridge.as_str());
        let senior_alive = self.peers.iter().any(|(id, p)| p.role == Role::Standby && (p.started_ns, id.as_str()) < me);
        if senior_alive {
            return (self.since == now).then_some(Change::Standby { to: None });
        }
        self.term = self.max_term.max(self.term) + 1;
        self.max_term = self.term;
        self.set(Role::Active, now);
        self.last_heartbeat = None;
        Some(Change::TookOver { from: self.last_active.take() })
    }

    /// Whether a periodic heartbeat is due at `now`; if so, it counts as sent (and, while
    /// active, opens the gate until half a lease later).
    pub fn heartbeat_due(&mut self, now: Nanos) -> bool {
        let due = self.last_heartbeat.is_none_or(|at| now >= at + self.timing.heartbeat);
        if due {
            self.last_heartbeat = Some(now);
        }
        due
    }
}

type Writer = dds::TypedWriter<Heartbeat>;
type Reader = dds::TypedReader<Heartbeat>;

/// What every thread of a bridge in a group shares: its heartbeat writer, its announcements,
/// its role and the gate.
pub struct Beacon {
    bridge: String,
    started_ns: u64,
    writer: Mutex<Writer>,
    sent: Mutex<Vec<Sent>>,
    term: AtomicU64,
    role: AtomicU8,
    /// Until when this bridge may write (bridge clock ns; 0: not at all).
    gate_until: AtomicU64,
}

impl std::fmt::Debug for Beacon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Beacon").field("bridge", &self.bridge).field("role", &self.role()).finish()
    }
}

impl Beacon {
    /// The current role.
    pub fn role(&self) -> Role {
        Role::from_u8(self.role.load(Ordering::Relaxed))
    }

    /// Whether this bridge may write at `now`.
    pub fn may_write(&self, now: Nanos) -> bool {
        now < self.gate_until.load(Ordering::Acquire)
    }

    /// Announces that the critical sample `origin` of `topic` is about to be written, and
    /// publishes it at once: a standby that takes over after this skips it.
    pub fn announce(&self, topic: &str, origin: Option<Origin>) {
        let Some(origin) = origin else { return };
        {
            let mut sent = lock(&self.sent);
            match sent.iter_mut().find(|s| s.origin.writer == origin.writer && s.topic == topic) {
                Some(s) => s.origin.seq = s.origin.seq.max(origin.seq),
                None => sent.push(Sent { topic: topic.to_string(), origin }),
            }
        }
        self.publish();
    }

    fn publish(&self) {
        let hb = Heartbeat {
            bridge: self.bridge.clone(),
            started_ns: self.started_ns,
            term: self.term.load(Ordering::Relaxed),
            role: self.role.load(Ordering::Relaxed),
            sent: lock(&self.sent).clone(),
        };
        if let Err(e) = lock(&self.writer).write(hb, None) {
            tracing::debug!("heartbeat not sent: {e}");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The last input samples of one topic, kept by every bridge of a group, and whether this
/// bridge forwards them (the flag and the samples change together, so a takeover neither
/// misses nor doubles a sample arriving meanwhile).
#[derive(Debug)]
pub struct Kept {
    inner: Mutex<KeptSamples>,
}

#[derive(Debug)]
struct KeptSamples {
    forwarding: bool,
    capacity: usize,
    samples: VecDeque<(Nanos, Sample)>,
}

impl Kept {
    /// Keeps the last `capacity` samples; forwarding nothing until a takeover.
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(KeptSamples {
                forwarding: false,
                capacity: capacity.max(1),
                samples: VecDeque::with_capacity(capacity.max(1)),
            }),
        }
    }

    /// Keeps a sample that arrived at `received`; whether to forward it too.
    pub fn keep(&self, sample: &Sample, received: Nanos) -> bool {
        let mut k = lock(&self.inner);
        if k.samples.len() == k.capacity {
            k.samples.pop_front();
        }
        k.samples.push_back((received, sample.clone()));
        k.forwarding
    }

    /// Starts forwarding; first hands `replay` the kept samples `missed` says the predecessor
    /// did not send, oldest first. Returns how many.
    pub fn forward_from(
        &self,
        missed: impl Fn(&Sample, Nanos) -> bool,
        mut replay: impl FnMut(Sample, Nanos),
    ) -> usize {
        let mut k = lock(&self.inner);
        let mut n = 0;
        for (received, s) in &k.samples {
            if missed(s, *received) {
                replay(s.clone(), *received);
                n += 1;
            }
        }
        k.forwarding = true;
        n
    }

    /// Stops forwarding; `clear` empties the queues while no sample can be forwarded.
    pub fn stop_forwarding(&self, clear: impl FnOnce()) {
        let mut k = lock(&self.inner);
        k.forwarding = false;
        clear();
    }
}

/// The running election: a thread that hears the group, ticks the [`Election`], publishes the
/// periodic heartbeats and switches the topics' forwarding.
pub struct Elector {
    beacon: Arc<Beacon>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Elector {
    /// Creates the group's heartbeat writer and reader on `participant`; the thread starts
    /// with [`Elector::run`] once the topics exist.
    pub fn beacon(
        participant: &DomainParticipant,
        config: &RedundancyConfig,
        bridge: &str,
        started_ns: u64,
    ) -> Result<(Arc<Beacon>, HeartbeatReader), DdsError> {
        let topic = heartbeat_topic(&config.group);
        let writer = dds::typed_writer::<Heartbeat>(participant, &topic, HEARTBEAT_TYPE)?;
        let reader = dds::typed_reader::<Heartbeat>(participant, &topic, HEARTBEAT_TYPE)?;
        let beacon = Beacon {
            bridge: bridge.to_string(),
            started_ns,
            writer: Mutex::new(writer),
            sent: Mutex::new(Vec::new()),
            term: AtomicU64::new(0),
            role: AtomicU8::new(Role::Joining as u8),
            gate_until: AtomicU64::new(0),
        };
        Ok((Arc::new(beacon), HeartbeatReader(reader)))
    }

    /// Starts the election thread for `topics`.
    pub fn run(
        beacon: Arc<Beacon>,
        reader: HeartbeatReader,
        config: &RedundancyConfig,
        topics: Vec<Arc<TopicShared>>,
        clock: Clock,
    ) -> Result<Self, DdsError> {
        let timing = Timing::of(config);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("bx-elect".into())
            .spawn({
                let (beacon, stop) = (beacon.clone(), stop.clone());
                move || elect(&beacon, reader.0, timing, &topics, clock, &stop)
            })
            .map_err(|e| DdsError::new("election thread", e))?;
        Ok(Self { beacon, stop, thread: Some(thread) })
    }

    /// The current role.
    pub fn role(&self) -> Role {
        self.beacon.role()
    }
}

impl Drop for Elector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The group's heartbeat reader, handed from [`Elector::beacon`] to [`Elector::run`].
pub struct HeartbeatReader(Reader);

fn elect(
    beacon: &Beacon,
    mut reader: Reader,
    timing: Timing,
    topics: &[Arc<TopicShared>],
    clock: Clock,
    stop: &std::sync::atomic::AtomicBool,
) {
    // Four ticks per heartbeat: a lapse is seen within a quarter heartbeat of the lease.
    let tick = Duration::from_nanos((timing.heartbeat / 4).max(1_000_000));
    let mut election = Election::new(&beacon.bridge, beacon.started_ns, timing, clock.now());
    tracing::info!(bridge = %beacon.bridge, "role joining: listening for the group's active bridge");
    while !stop.load(Ordering::Relaxed) {
        let now = clock.now();
        let mut changes = Vec::new();
        while let Ok(Some(s)) = reader.take_next_sample() {
            let hb = s.into_value();
            if hb.bridge != beacon.bridge {
                changes.extend(election.hear(&hb, now));
            }
        }
        changes.extend(election.tick(now));
        for change in changes {
            apply(beacon, &election, change, timing, topics);
        }
        if election.heartbeat_due(now) {
            beacon.gate_until.store(election.gate_until(), Ordering::Release);
            beacon.publish();
        } else if !election.role().claims_active() {
            beacon.gate_until.store(0, Ordering::Release);
        }
        std::thread::sleep(tick);
    }
    beacon.gate_until.store(0, Ordering::Release);
}

/// Carries a change of role out on every topic.
fn apply(beacon: &Beacon, election: &Election, change: Change, timing: Timing, topics: &[Arc<TopicShared>]) {
    let role = election.role();
    beacon.term.store(election.term(), Ordering::Relaxed);
    beacon.role.store(role as u8, Ordering::Relaxed);
    match change {
        Change::TookOver { from } => {
            let mut replayed = 0;
            for t in topics {
                replayed += t.take_over(from.as_ref(), timing.heartbeat);
            }
            let from = from.map_or_else(|| "no active bridge heard".to_string(), |p| format!("from {}", p.bridge));
            tracing::info!(
                "role active: took over ({from}; term {}, {replayed} kept samples written)",
                election.term()
            );
        }
        Change::Standby { to } => match to {
            Some(to) => tracing::info!("role standby: {to} is active"),
            None => tracing::info!("role standby"),
        },
        Change::StoodDown { to } => {
            beacon.gate_until.store(0, Ordering::Release);
            for t in topics {
                t.stand_by();
            }
            tracing::warn!("role standby: stood down, {to} is active");
        }
        Change::Rejoining => {
            beacon.gate_until.store(0, Ordering::Release);
            tracing::warn!("role rejoining: paused past the gate; listening before writing again");
        }
        Change::Resumed => tracing::info!("role active: resumed, no other bridge took over (term {})", election.term()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const T: Timing = Timing { heartbeat: 20 * MS, lease: 80 * MS, join: 1_000 * MS };

    fn hb(bridge: &str, started_ns: u64, term: u64, role: Role) -> Heartbeat {
        Heartbeat { bridge: bridge.into(), started_ns, term, role: role as u8, sent: Vec::new() }
    }

    /// Ticks every 5 ms from `from` to `to`, sending heartbeats when due; the changes.
    fn run(
        e: &mut Election,
        from: Nanos,
        to: Nanos,
        mut heard: impl FnMut(Nanos) -> Option<Heartbeat>,
    ) -> Vec<(Nanos, Change)> {
        let mut out = Vec::new();
        let mut now = from;
        while now <= to {
            if let Some(h) = heard(now) {
                out.extend(e.hear(&h, now).map(|c| (now, c)));
            }
            out.extend(e.tick(now).map(|c| (now, c)));
            e.heartbeat_due(now);
            now += 5 * MS;
        }
        out
    }

    #[test]
    fn a_lone_bridge_becomes_active_after_the_join_window_and_writes_only_then() {
        let mut e = Election::new("a", 1, T, 0);
        let changes = run(&mut e, 0, 1_200 * MS, |_| None);
        assert_eq!(changes, vec![(1_000 * MS, Change::TookOver { from: None })]);
        assert_eq!((e.role(), e.term()), (Role::Active, 1));
        assert!(e.gate_until() > 1_200 * MS, "the gate is open while heartbeats go out");
    }

    #[test]
    fn a_restarted_bridge_hears_the_active_one_and_stays_standby() {
        let mut e = Election::new("b", 9, T, 0);
        let changes = run(&mut e, 0, 3_000 * MS, |now| (now % (20 * MS) == 0).then(|| hb("a", 1, 1, Role::Active)));
        assert_eq!(changes, vec![(0, Change::Standby { to: Some("a".into()) })]);
        assert_eq!(e.gate_until(), 0);
    }

    #[test]
    fn a_standby_takes_over_one_lease_after_the_active_bridge_falls_silent() {
        let mut e = Election::new("b", 9, T, 0);
        let dies = 2_000 * MS;
        let mut active = hb("a", 1, 3, Role::Active);
        active.sent = vec![Sent { topic: "/scan".into(), origin: Origin { writer: [7; 16], seq: 41 } }];
        let changes = run(&mut e, 0, 2_500 * MS, |now| (now < dies && now % (20 * MS) == 0).then(|| active.clone()));
        let (at, took) = changes.last().expect("a takeover");
        let Change::TookOver { from: Some(from) } = took else { panic!("{took:?}") };
        // Last heard at 1980 ms; silent for more than the 80 ms lease at 2065 ms.
        assert_eq!(*at, 2_065 * MS);
        assert!(*at - dies <= 100 * MS, "within 100 ms of its death");
        assert_eq!((e.term(), from.bridge.as_str()), (4, "a"));
        let o = |seq| Some(Origin { writer: [7; 16], seq });
        assert!(!from.missed("/scan", o(41), 0, T.heartbeat), "announced: sent");
        assert!(from.missed("/scan", o(42), 0, T.heartbeat), "newer: missed");
        assert!(!from.missed("/scan", Some(Origin { writer: [8; 16], seq: 1 }), 1_900 * MS, T.heartbeat));
        assert!(from.missed("/scan", Some(Origin { writer: [8; 16], seq: 1 }), 1_990 * MS, T.heartbeat));
    }

    #[test]
    fn of_two_standbys_only_the_senior_takes_over() {
        let mut junior = Election::new("c", 20, T, 0);
        let changes =
            run(&mut junior, 0, 2_000 * MS, |now| (now % (20 * MS) == 0).then(|| hb("b", 10, 0, Role::Standby)));
        assert_eq!(changes, vec![(1_000 * MS, Change::Standby { to: None })]);
        let mut senior = Election::new("b", 10, T, 0);
        let changes =
            run(&mut senior, 0, 2_000 * MS, |now| (now % (20 * MS) == 0).then(|| hb("c", 20, 0, Role::Standby)));
        assert_eq!(changes, vec![(1_000 * MS, Change::TookOver { from: None })]);
    }

    #[test]
    fn of_two_active_bridges_the_lower_term_stands_down_at_the_first_heartbeat() {
        let mut e = Election::new("a", 1, T, 0);
        run(&mut e, 0, 1_100 * MS, |_| None);
        assert_eq!(e.term(), 1);
        // A bridge that took over while this one was cut off: term 2 wins over seniority.
        assert_eq!(e.hear(&hb("b", 9, 2, Role::Active), 1_105 * MS), Some(Change::StoodDown { to: "b".into() }));
        assert_eq!(e.gate_until(), 0);
        // The other way round: a junior active bridge on the same term stands down to it.
        let mut junior = Election::new("z", 99, T, 0);
        run(&mut junior, 0, 1_100 * MS, |_| None);
        assert!(junior.hear(&hb("a", 1, 1, Role::Active), 1_105 * MS).is_some());
        let mut senior = Election::new("a", 1, T, 0);
        run(&mut senior, 0, 1_100 * MS, |_| None);
        assert_eq!(senior.hear(&hb("z", 99, 1, Role::Active), 1_105 * MS), None);
    }

    #[test]
    fn a_paused_active_bridge_closes_its_gate_listens_and_stands_down_to_the_one_that_took_over() {
        let mut e = Election::new("a", 1, T, 0);
        run(&mut e, 0, 1_100 * MS, |_| None);
        // SIGSTOP for 300 ms: the gate (half a lease after the last heartbeat) has closed.
        let resumed = 1_400 * MS;
        assert!(e.gate_until() <= resumed);
        assert_eq!(e.tick(resumed), Some(Change::Rejoining));
        assert!(!e.heartbeat_due(resumed) || e.gate_until() == 0, "no gate while rejoining");
        assert_eq!(e.hear(&hb("b", 9, 2, Role::Active), resumed + 5 * MS), Some(Change::StoodDown { to: "b".into() }));
        // Nobody took over: after a lease of listening it resumes.
        let mut alone = Election::new("a", 1, T, 0);
        run(&mut alone, 0, 1_100 * MS, |_| None);
        assert_eq!(alone.tick(resumed), Some(Change::Rejoining));
        assert_eq!(alone.tick(resumed + 75 * MS), None);
        assert_eq!(alone.tick(resumed + 80 * MS), Some(Change::Resumed));
        assert!(alone.heartbeat_due(resumed + 80 * MS));
        assert!(alone.gate_until() > resumed + 80 * MS);
    }

    #[test]
    fn a_paused_standby_gives_the_active_bridge_a_fresh_lease() {
        let mut e = Election::new("b", 9, T, 0);
        run(&mut e, 0, 1_500 * MS, |now| (now % (20 * MS) == 0).then(|| hb("a", 1, 1, Role::Active)));
        // Paused 500 ms: its own silence is no evidence against the active bridge.
        assert_eq!(e.tick(2_000 * MS), None);
        let changes =
            run(&mut e, 2_005 * MS, 2_300 * MS, |now| (now % (20 * MS) == 0).then(|| hb("a", 1, 1, Role::Active)));
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn kept_samples_are_replayed_oldest_first_and_forwarding_switches_with_them() {
        use crate::raw::RawSample;
        let kept = Kept::new(3);
        let sample = |seq| Sample {
            raw: RawSample {
                representation: rustdds::RepresentationIdentifier::CDR_LE,
                payload: rustdds::bytes::Bytes::new(),
            },
            source_timestamp: None,
            origin: Some(Origin { writer: [1; 16], seq }),
        };
        for seq in 1..=5 {
            assert!(!kept.keep(&sample(seq), seq as Nanos));
        }
        let mut replayed = Vec::new();
        let n =
            kept.forward_from(|s, _| s.origin.is_some_and(|o| o.seq > 3), |s, _| replayed.push(s.origin.unwrap().seq));
        assert_eq!((n, replayed), (2, vec![4, 5]), "the last three kept, two after the announced 3");
        assert!(kept.keep(&sample(6), 6));
        let mut cleared = false;
        kept.stop_forwarding(|| cleared = true);
        assert!(cleared && !kept.keep(&sample(7), 7));
    }
}

//! The simulator proper: the event loop that moves packets between applications,
//! nodes and channels.
//!
//! Three kinds of event drive everything (see [`Event`]): an application sends,
//! a transmitter finishes a packet, a packet reaches the end of a wire. Between
//! events nothing changes, so the clock jumps from one to the next. The hot path
//! allocates nothing: packets live in a [`PacketPool`], events are `Copy`, and
//! drops are collected in one reused buffer.
//!
//! A packet put on the wire of its last hop is delivered right then, stamped with
//! its arrival time, rather than by an arrival event: a delivery touches nothing
//! but its own flow's counters, and a flow's packets cross their last wire in
//! order, so the flow monitor sees the same deliveries in the same order at the
//! same times — with one event per packet fewer (a seventh of a 3-hop run's).
//!
//! Cut-through: a packet whose next channel is its last hop, when that channel is
//! fed by the one it is leaving and nothing else (the seed's bottleneck feeding
//! each follower's and background sink's access link), is handed to it as it
//! leaves, with the clock set to its arrival, instead of by an arrival event. Its
//! arrival would change nothing but that channel, which no other packet reaches
//! first, so the result is the same when the channel is idle and empty at the
//! arrival with no other arrival for it pending: the packet goes straight onto its
//! wire and is delivered. What differs is the sequence number of that
//! transmission's end, taken as the packet leaves rather than as it arrives; it
//! orders the end before an arrival into the channel at the same nanosecond, which
//! changes nothing unless packets already wait in the queue discipline then
//! (an arrival-first order would count one more queued packet, and might drop).
//! That takes at least `device queue + 1` packets arriving during the
//! transmission, each at least one smallest packet's serialisation on the feeding
//! channel apart, so a packet cuts through only if it is on this channel for less
//! than that ([`Channel::cut_through_below`]). Outputs are byte-identical; about an
//! eighth of the seed's comparison runs' events go.
//!
//! [`Channel::cut_through_below`]: crate::link::Channel::cut_through_below

use bauxite_qdisc::{Nanos, Packet as QPacket, Verdict};

use crate::app::UdpApp;
use crate::event::{Event, EventQueue};
use crate::monitor::{FlowKey, FlowMonitor};
use crate::packet::{PacketPool, SimPacket};
use crate::topology::Topology;

/// IP protocol number of UDP.
const UDP: u8 = 17;

/// What a finished run reports besides the flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunCounters {
    /// Events processed.
    pub events: u64,
    /// Simulated time of the last event or delivery.
    pub end_time: Nanos,
    /// Packets dropped for want of a route.
    pub unroutable: u64,
    /// The most packets alive at once.
    pub peak_packets: u64,
}

/// Where a channel's packets come from, as the applications' routes say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feed {
    /// No application's route crosses it.
    Nothing,
    /// Applications on its sending node.
    Local,
    /// Only channel `0`.
    From(u32),
    /// More than one of the above.
    Mixed,
}

/// A network with its applications, ready to run.
pub struct Simulator {
    now: Nanos,
    events: EventQueue,
    topology: Topology,
    pool: PacketPool,
    apps: Vec<(UdpApp, u64)>,
    app_flow: Vec<u32>,
    monitor: FlowMonitor,
    drops: Vec<QPacket>,
    counters: RunCounters,
    cut_through: bool,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now)
            .field("pending_events", &self.events.len())
            .field("apps", &self.apps.len())
            .field("counters", &self.counters)
            .finish()
    }
}

impl Simulator {
    /// A simulator over `topology`; routes are computed here.
    pub fn new(mut topology: Topology) -> Self {
        topology.compute_routes();
        Self {
            now: 0,
            events: EventQueue::new(),
            topology,
            pool: PacketPool::new(),
            apps: Vec::new(),
            app_flow: Vec::new(),
            monitor: FlowMonitor::default(),
            drops: Vec::new(),
            counters: RunCounters::default(),
            cut_through: true,
        }
    }

    /// Turns cut-through (see the module docs) off, so that every hop takes an
    /// arrival event: the same results with more events, which is how the tests
    /// check that cut-through changes nothing.
    pub fn without_cut_through(mut self) -> Self {
        self.cut_through = false;
        self
    }

    /// Adds a UDP application and the monitored flow it creates; returns the flow index.
    pub fn add_app(&mut self, app: UdpApp) -> u32 {
        let key = FlowKey { src: app.src, dst: app.dst, src_port: app.src_port, dst_port: app.dst_port, protocol: UDP };
        let flow = self.monitor.add(key, app.dscp, app.tag, app.active_ns(), app.deadline);
        let index = self.apps.len() as u32;
        if let Some(t) = app.send_time(0) {
            self.events.schedule(t, Event::AppSend(index));
        }
        self.apps.push((app, 0));
        self.app_flow.push(flow);
        flow
    }

    /// The network (for its channels' counters after a run).
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The flow monitor.
    pub fn monitor(&self) -> &FlowMonitor {
        &self.monitor
    }

    /// Takes the flow monitor out, leaving an empty one.
    pub fn take_monitor(&mut self) -> FlowMonitor {
        std::mem::take(&mut self.monitor)
    }

    /// Runs until no event is left: every application has stopped and every
    /// packet has been delivered or dropped.
    pub fn run(&mut self) -> RunCounters {
        self.plan_cut_through();
        while let Some((time, event)) = self.events.pop() {
            debug_assert!(time >= self.now, "time went backwards");
            self.now = time;
            self.counters.events += 1;
            match event {
                Event::AppSend(app) => self.app_send(app),
                Event::TxComplete(ch) => {
                    self.topology.channels[ch as usize].busy = false;
                    self.service(ch);
                }
                Event::Arrive(slot) => {
                    let channel = self.pool.get(slot).channel;
                    let node = self.topology.channels[channel as usize].to;
                    self.forward(node, slot);
                }
            }
        }
        self.counters.end_time = self.counters.end_time.max(self.now);
        self.counters.peak_packets = self.pool.high_water() as u64;
        self.counters
    }

    /// Marks the channels a packet may cut through into: those whose packets all
    /// come off one other channel, by every application's route. The bound on a
    /// packet's transmission there is (device queue + 1) serialisations of the
    /// smallest packet any application sends on that feeding channel.
    fn plan_cut_through(&mut self) {
        let channels = self.topology.channels.len();
        let mut feeds = vec![Feed::Nothing; channels];
        for (app, _) in &self.apps {
            let (mut node, mut from) = (app.src, Feed::Local);
            // A route is a shortest path, so it crosses each channel at most once.
            for _ in 0..channels {
                if node == app.dst {
                    break;
                }
                let Some(ch) = self.topology.route(node, app.dst) else { break };
                let feed = &mut feeds[ch as usize];
                *feed = if *feed == Feed::Nothing || *feed == from { from } else { Feed::Mixed };
                from = Feed::From(ch);
                node = self.topology.channels[ch as usize].to;
            }
        }
        let smallest = self.apps.iter().map(|(app, _)| app.ip_len()).min().unwrap_or(0);
        for (down, feed) in feeds.into_iter().enumerate() {
            let sole_feeder = match feed {
                Feed::From(up) if self.cut_through => Some(up),
                _ => None,
            };
            let below = sole_feeder.map_or(0, |up| {
                let up = &self.topology.channels[up as usize].config;
                let queue = self.topology.channels[down].config.device_queue_packets as u64;
                up.tx_time(smallest + up.framing_bytes).saturating_mul(queue + 1)
            });
            let channel = &mut self.topology.channels[down];
            channel.sole_feeder = sole_feeder;
            channel.cut_through_below = below;
            channel.arrivals_pending = 0;
        }
    }

    fn app_send(&mut self, index: u32) {
        let (app, sent) = &mut self.apps[index as usize];
        let flow = self.app_flow[index as usize];
        let packet = SimPacket {
            flow,
            dst: app.dst,
            ip_len: app.ip_len(),
            dscp: app.dscp,
            sent_at: self.now,
            channel: u32::MAX,
        };
        let src = app.src;
        *sent += 1;
        if let Some(next) = app.send_time(*sent) {
            self.events.schedule(next, Event::AppSend(index));
        }
        self.monitor.on_tx(flow, packet.ip_len, self.now);
        let slot = self.pool.alloc(packet);
        self.forward(src, slot);
    }

    /// The packet in `slot` reaches its destination at `at`: counted, and its slot freed.
    fn deliver(&mut self, slot: u32, at: Nanos) {
        let packet = self.pool.get(slot);
        self.monitor.on_rx(packet.flow, packet.ip_len, at - packet.sent_at, at);
        self.counters.end_time = self.counters.end_time.max(at);
        self.pool.free(slot);
    }

    /// A packet is at `node`: deliver it there or send it on toward its destination.
    fn forward(&mut self, node: u32, slot: u32) {
        let packet = *self.pool.get(slot);
        if packet.dst == node {
            self.deliver(slot, self.now);
            return;
        }
        let Some(ch) = self.topology.route(node, packet.dst) else {
            self.counters.unroutable += 1;
            self.monitor.on_drop(packet.flow);
            self.pool.free(slot);
            return;
        };
        let channel = &mut self.topology.channels[ch as usize];
        if channel.sole_feeder.is_some() {
            // The arrival event counted when this packet left its feeder has run.
            channel.arrivals_pending -= 1;
        }
        self.enter(ch, slot);
    }

    /// The packet in `slot` is offered to channel `ch` at the current time.
    fn enter(&mut self, ch: u32, slot: u32) {
        let packet = *self.pool.get(slot);
        let hash = self.monitor.flows[packet.flow as usize].hash;
        self.settle_completion(ch);
        let channel = &mut self.topology.channels[ch as usize];
        let through = channel.empty_passes_through
            && channel.qdisc.is_some()
            && channel.qdisc_len == 0
            && channel.device_has_room();
        if through {
            // What offering it and the dequeue that would follow at once would do.
            channel.stats.max_qdisc_packets = channel.stats.max_qdisc_packets.max(1);
            channel.device.push_back(slot);
        } else if let Some(qdisc) = channel.qdisc.as_mut() {
            let verdict = qdisc.enqueue(QPacket::new(slot as u64, packet.ip_len, packet.dscp, hash), self.now);
            channel.qdisc_len = qdisc.len();
            channel.stats.max_qdisc_packets = channel.stats.max_qdisc_packets.max(channel.qdisc_len as u64);
            if verdict == Verdict::Dropped || !channel.drops_only_arrivals {
                self.collect_qdisc_drops(ch);
            }
        } else if channel.device_has_room() {
            channel.device.push_back(slot);
        } else {
            channel.stats.device_drops += 1;
            self.monitor.on_drop(packet.flow);
            self.pool.free(slot);
            return;
        }
        self.service(ch);
    }

    /// Keeps channel `ch` busy (see [`Simulator::fill`]), then schedules the end of
    /// the transmission under way if anything waits for it. Nothing waiting, and a
    /// queue discipline whose empty dequeue changes nothing ([`Qdisc::empty_dequeue_is_noop`]):
    /// the completion event would only mark the wire idle, so it stays
    /// unscheduled — its sequence number reserved — until a packet arrives for the
    /// channel ([`Simulator::settle_completion`]). On a lightly loaded link that
    /// is one event per packet fewer, and the order of every other event is kept.
    ///
    /// [`Qdisc::empty_dequeue_is_noop`]: bauxite_qdisc::Qdisc::empty_dequeue_is_noop
    fn service(&mut self, ch: u32) {
        self.fill(ch);
        let channel = &mut self.topology.channels[ch as usize];
        if let Some((done, seq)) = channel.completion
            && (!channel.idle_dequeue_is_noop || !channel.device.is_empty() || channel.qdisc_len > 0)
        {
            channel.completion = None;
            self.events.schedule_reserved(done, seq, Event::TxComplete(ch));
        }
    }

    /// Before a packet is offered to channel `ch`: an unscheduled completion whose
    /// turn has passed has made the wire idle; one still to come is scheduled now,
    /// in its reserved place, since a packet will be waiting for it.
    fn settle_completion(&mut self, ch: u32) {
        let channel = &mut self.topology.channels[ch as usize];
        if let Some((done, seq)) = channel.completion.take() {
            if self.events.has_passed(done, seq) {
                channel.busy = false;
            } else {
                self.events.schedule_reserved(done, seq, Event::TxComplete(ch));
            }
        }
    }

    /// Starts the next transmission when the wire is idle and refills the device
    /// queue from the queue discipline while it has room (ns-3's flow control
    /// between the traffic-control layer and the device).
    fn fill(&mut self, ch: u32) {
        loop {
            let channel = &mut self.topology.channels[ch as usize];
            if !channel.busy
                && let Some(slot) = channel.device.pop_front()
            {
                let packet = self.pool.get_mut(slot);
                packet.channel = ch;
                let packet = *packet;
                let tx = channel.tx_time(packet.ip_len + channel.config.framing_bytes);
                channel.busy = true;
                channel.stats.tx_packets += 1;
                channel.stats.tx_bytes += packet.ip_len as u64;
                channel.stats.busy_ns += tx;
                // Scenario validation bounds rates, delays and durations far below
                // this; a hand-built topology that overflows stops here rather than
                // scheduling into the past.
                let done = self.now.checked_add(tx).expect("simulated time overflows u64 nanoseconds");
                let arrive = done.checked_add(channel.config.delay).expect("simulated time overflows u64 nanoseconds");
                channel.completion = Some((done, self.events.reserve()));
                if channel.to == packet.dst {
                    self.deliver(slot, arrive);
                } else if !self.cut_through(ch, slot, arrive) {
                    self.events.schedule(arrive, Event::Arrive(slot));
                }
                continue;
            }
            if !channel.device_has_room() || (channel.qdisc_len == 0 && channel.idle_dequeue_is_noop) {
                return;
            }
            let Some(qdisc) = channel.qdisc.as_mut() else { return };
            let next = qdisc.dequeue(self.now);
            channel.qdisc_len = qdisc.len();
            // An AQM may drop at dequeue, before (or instead of) handing a packet out.
            if !channel.drops_only_arrivals {
                self.collect_qdisc_drops(ch);
            }
            match next {
                Some(p) => self.topology.channels[ch as usize].device.push_back(p.id as u32),
                None => return,
            }
        }
    }

    /// Hands the packet in `slot`, leaving channel `up`, to its next channel as of
    /// its arrival at `arrive` (see the module docs); false, and that channel
    /// counts an arrival pending, when the packet must arrive by an event instead.
    fn cut_through(&mut self, up: u32, slot: u32, arrive: Nanos) -> bool {
        let packet = *self.pool.get(slot);
        let node = self.topology.channels[up as usize].to;
        let Some(down) = self.topology.route(node, packet.dst) else { return false };
        let channel = &mut self.topology.channels[down as usize];
        if channel.sole_feeder != Some(up) {
            return false;
        }
        let free_by_arrival = match (channel.busy, channel.completion) {
            (false, _) => true,
            (true, Some((done, _))) => done <= arrive,
            // A completion event is pending, so a packet waits for it.
            (true, None) => false,
        };
        let can = channel.to == packet.dst
            && channel.arrivals_pending == 0
            && free_by_arrival
            && channel.idle_dequeue_is_noop
            && channel.device.is_empty()
            && channel.qdisc_len == 0
            && channel.tx_time(packet.ip_len + channel.config.framing_bytes) < channel.cut_through_below;
        if !can {
            channel.arrivals_pending += 1;
            return false;
        }
        // The transmission under way there ends by the arrival: the wire is idle then.
        channel.busy = false;
        channel.completion = None;
        let now = std::mem::replace(&mut self.now, arrive);
        self.enter(down, slot);
        self.now = now;
        true
    }

    /// Accounts and frees every packet the queue discipline of `ch` has dropped.
    fn collect_qdisc_drops(&mut self, ch: u32) {
        let channel = &mut self.topology.channels[ch as usize];
        let Some(qdisc) = channel.qdisc.as_mut() else { return };
        qdisc.drain_drops(&mut self.drops);
        for dropped in self.drops.drain(..) {
            let slot = dropped.id as u32;
            channel.stats.qdisc_drops += 1;
            self.monitor.on_drop(self.pool.get(slot).flow);
            self.pool.free(slot);
        }
    }
}

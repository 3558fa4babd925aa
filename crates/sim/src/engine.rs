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
//! TCP cross traffic ([`TcpApp`]) rides the same path: its segments and ACKs are
//! packets like any other, but a delivery makes the connection act (an ACK goes
//! back, the sender's window opens), so a TCP packet's last hop ends in an arrival
//! event at its arrival time rather than in a delivery stamped ahead of the clock.
//! Each connection has one timer event in flight at most that is current
//! ([`Event::TcpTimer`]): the start, then the retransmission timeout.
//!
//! A radio channel ([`crate::link::Radio`]) is polled when its link model says
//! something is due ([`Event::RadioPoll`]): a packet leaving (the device queue has
//! room again) or arriving at the far end (or lost). Nothing cuts through into or
//! out of one.
//!
//! [`Channel::cut_through_below`]: crate::link::Channel::cut_through_below

use bauxite_qdisc::{Nanos, Packet as QPacket, Verdict};

use crate::app::{TcpApp, UdpApp};
use crate::event::{Event, EventQueue};
use crate::monitor::{FlowKey, FlowMonitor, TCP, UDP};
use crate::packet::{PacketPool, SimPacket};
use crate::tcp;
use crate::topology::Topology;

/// The flow monitor's tag of a TCP connection's ACKs: no class's traffic, so a
/// scenario leaves these flows out of its figures.
pub const ACK_TAG: u32 = u32::MAX;
/// Bytes a TCP sender has to send: more than any run sends, so it always has data.
const ENDLESS_BYTES: u64 = 1 << 50;

/// One TCP connection: its application, both ends' state and its two flows.
#[derive(Debug)]
struct TcpConnection {
    app: TcpApp,
    sender: tcp::Sender,
    receiver: tcp::Receiver,
    data_flow: u32,
    ack_flow: u32,
    /// The due time of the timer event that counts (others pending are stale).
    timer: Option<Nanos>,
}

/// What a TCP packet in a pool slot carries: its connection, its transmission
/// number (an ACK's: the one it acknowledges), a segment's byte range, or an ACK's
/// cumulative acknowledgement (in `start`: every byte before it arrived).
#[derive(Clone, Copy, Debug, Default)]
struct TcpCarried {
    connection: u32,
    len: u32,
    tx: u64,
    start: u64,
}

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
    connections: Vec<TcpConnection>,
    /// By pool slot: what the TCP packet in it carries (stale for other packets).
    carried: Vec<TcpCarried>,
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
            connections: Vec::new(),
            carried: Vec::new(),
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
    pub fn add_app(&mut self, mut app: UdpApp) -> u32 {
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

    /// Adds a TCP connection and its two monitored flows (the data, then the ACKs,
    /// tagged [`ACK_TAG`]); returns the data flow's index.
    pub fn add_tcp(&mut self, app: TcpApp) -> u32 {
        let data =
            FlowKey { src: app.src, dst: app.dst, src_port: app.src_port, dst_port: app.dst_port, protocol: TCP };
        let acks =
            FlowKey { src: app.dst, dst: app.src, src_port: app.dst_port, dst_port: app.src_port, protocol: TCP };
        let data_flow = self.monitor.add(data, app.dscp, app.tag, app.active_ns(), None);
        let ack_flow = self.monitor.add(acks, app.dscp, ACK_TAG, app.active_ns(), None);
        let index = self.connections.len() as u32;
        if app.start < app.stop {
            self.events.schedule(app.start, Event::TcpTimer(index));
        }
        let timer = (app.start < app.stop).then_some(app.start);
        let (sender, receiver) = (tcp::Sender::default(), tcp::Receiver::default());
        self.connections.push(TcpConnection { app, sender, receiver, data_flow, ack_flow, timer });
        data_flow
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
                Event::TcpTimer(connection) => self.tcp_timer(connection),
                Event::RadioPoll(ch) => self.radio_poll(ch),
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
        // Every packet's (source, destination, IP bytes): the applications', and
        // each TCP connection's full segments one way and ACKs the other.
        let udp = self.apps.iter().map(|(app, _)| (app.src, app.dst, app.ip_len()));
        let segments = self.connections.iter().map(|c| (c.app.src, c.app.dst, tcp::MSS + tcp::HEADER));
        let acks = self.connections.iter().map(|c| (c.app.dst, c.app.src, tcp::HEADER));
        let routes: Vec<(u32, u32, u32)> = udp.chain(segments).chain(acks).collect();
        for &(src, dst, _) in &routes {
            let (mut node, mut from) = (src, Feed::Local);
            // A route is a shortest path, so it crosses each channel at most once.
            for _ in 0..channels {
                if node == dst {
                    break;
                }
                let Some(ch) = self.topology.route(node, dst) else { break };
                let feed = &mut feeds[ch as usize];
                *feed = if *feed == Feed::Nothing || *feed == from { from } else { Feed::Mixed };
                from = Feed::From(ch);
                node = self.topology.channels[ch as usize].to;
            }
        }
        let smallest = routes.iter().map(|&(_, _, ip_len)| ip_len).min().unwrap_or(0);
        for (down, feed) in feeds.into_iter().enumerate() {
            let is_radio = |ch: usize| self.topology.channels[ch].radio.is_some();
            let sole_feeder = match feed {
                Feed::From(up) if self.cut_through && !is_radio(up as usize) && !is_radio(down) => Some(up),
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
            tcp: false,
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

    /// The packet in `slot` reaches its destination at `at`: counted, and its slot
    /// freed; a TCP packet (delivered at the current time) makes its connection act.
    fn deliver(&mut self, slot: u32, at: Nanos) {
        let packet = *self.pool.get(slot);
        self.monitor.on_rx(packet.flow, packet.ip_len, at - packet.sent_at, at);
        self.counters.end_time = self.counters.end_time.max(at);
        self.pool.free(slot);
        if packet.tcp {
            debug_assert_eq!(at, self.now, "a TCP packet arrives by an event");
            self.tcp_delivered(packet, self.carried[slot as usize]);
        }
    }

    /// A TCP segment reached its receiver (an ACK for it goes back) or an ACK its
    /// sender (which sends what its window now allows).
    fn tcp_delivered(&mut self, packet: SimPacket, carried: TcpCarried) {
        let index = carried.connection;
        let connection = &mut self.connections[index as usize];
        if packet.flow == connection.ack_flow {
            connection.sender.on_ack_cumulative(carried.tx, carried.start, self.now);
            self.tcp_send(index);
            return;
        }
        let delivered_to = connection.receiver.on_segment(carried.start, carried.len);
        let ack = SimPacket {
            flow: connection.ack_flow,
            dst: connection.app.src,
            ip_len: tcp::HEADER,
            dscp: packet.dscp,
            sent_at: self.now,
            channel: u32::MAX,
            tcp: true,
        };
        let from = connection.app.dst;
        let carried = TcpCarried { connection: index, len: 0, tx: carried.tx, start: delivered_to };
        self.send_tcp_packet(from, ack, carried);
    }

    /// Connection `index` sends what its window allows, then arms its timer.
    /// Nothing leaves before its start or from its stop on.
    fn tcp_send(&mut self, index: u32) {
        loop {
            let connection = &mut self.connections[index as usize];
            let app = &connection.app;
            if self.now < app.start || self.now >= app.stop {
                return;
            }
            let Some(segment) = connection.sender.next_segment() else { break };
            connection.sender.sent(segment, self.now);
            let packet = SimPacket {
                flow: connection.data_flow,
                dst: app.dst,
                ip_len: segment.wire_len(),
                dscp: app.dscp,
                sent_at: self.now,
                channel: u32::MAX,
                tcp: true,
            };
            let carried = TcpCarried { connection: index, len: segment.len, tx: segment.tx, start: segment.start };
            let from = app.src;
            self.send_tcp_packet(from, packet, carried);
        }
        let connection = &mut self.connections[index as usize];
        if let Some(due) = connection.sender.timeout_at()
            && connection.timer.is_none_or(|pending| pending > due)
        {
            connection.timer = Some(due);
            self.events.schedule(due.max(self.now), Event::TcpTimer(index));
        }
    }

    /// Counts `packet` sent and sends it from `node`.
    fn send_tcp_packet(&mut self, node: u32, packet: SimPacket, carried: TcpCarried) {
        self.monitor.on_tx(packet.flow, packet.ip_len, self.now);
        let slot = self.pool.alloc(packet);
        if self.carried.len() <= slot as usize {
            self.carried.resize(slot as usize + 1, TcpCarried::default());
        }
        self.carried[slot as usize] = carried;
        self.forward(node, slot);
    }

    /// Connection `index`'s timer event: the start, a retransmission timeout, or a
    /// stale event (the timer has moved since) that does nothing.
    fn tcp_timer(&mut self, index: u32) {
        let connection = &mut self.connections[index as usize];
        if connection.timer != Some(self.now) {
            return;
        }
        connection.timer = None;
        if self.now == connection.app.start && connection.sender.written() == 0 {
            connection.sender.write(ENDLESS_BYTES, self.now);
        } else if let Some(due) = connection.sender.timeout_at() {
            if due > self.now {
                // An ACK moved the timeout later since this event was scheduled.
                connection.timer = Some(due);
                self.events.schedule(due, Event::TcpTimer(index));
                return;
            }
            connection.sender.on_timeout(self.now);
        }
        self.tcp_send(index);
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
        if self.topology.channels[ch as usize].radio.is_some() {
            return self.fill_radio(ch);
        }
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
                if channel.to == packet.dst && !packet.tcp {
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

    /// Hands radio channel `ch`'s link model packets (from its device queue, then its
    /// queue discipline) while its buffer has room, and has it polled when it next
    /// has something due. Out of line: a wire's [`Simulator::fill`] is the hot loop.
    #[cold]
    #[inline(never)]
    fn fill_radio(&mut self, ch: u32) {
        loop {
            let channel = &mut self.topology.channels[ch as usize];
            // A packet that passed an empty discipline waits in `device` for the model
            // (whose buffer the room was counted in): it goes first, room or not.
            let slot = match channel.device.pop_front() {
                Some(slot) => slot,
                None if !channel.device_has_room() => break,
                None => {
                    let Some(qdisc) = channel.qdisc.as_mut() else { break };
                    if channel.qdisc_len == 0 && channel.idle_dequeue_is_noop {
                        break;
                    }
                    let next = qdisc.dequeue(self.now);
                    channel.qdisc_len = qdisc.len();
                    if !channel.drops_only_arrivals {
                        self.collect_qdisc_drops(ch);
                    }
                    match next {
                        Some(p) => p.id as u32,
                        None => break,
                    }
                }
            };
            let channel = &mut self.topology.channels[ch as usize];
            let packet = self.pool.get_mut(slot);
            packet.channel = ch;
            let wire = packet.ip_len + channel.config.framing_bytes;
            let radio = channel.radio.as_mut().expect("a radio channel");
            // The buffer is unbounded: the device queue's room, checked above, bounds it.
            radio.model.enqueue(self.now, u64::from(slot), wire);
        }
        let now = self.now;
        let radio = self.topology.channels[ch as usize].radio.as_mut().expect("a radio channel");
        if let Some(due) = radio.model.next_event_ns().map(|t| t.max(now))
            && radio.poll_at.is_none_or(|pending| pending > due)
        {
            radio.poll_at = Some(due);
            self.events.schedule(due, Event::RadioPoll(ch));
        }
    }

    /// Radio channel `ch`'s poll: what left its link arrives at the far end (or was
    /// lost), and the room it left is filled. A stale poll (one since moved) does nothing.
    fn radio_poll(&mut self, ch: u32) {
        let channel = &mut self.topology.channels[ch as usize];
        let radio = channel.radio.as_mut().expect("a radio channel");
        if radio.poll_at != Some(self.now) {
            return;
        }
        radio.poll_at = None;
        let mut outcomes = std::mem::take(&mut radio.outcomes);
        radio.model.poll(self.now, &mut outcomes);
        let to = channel.to;
        for outcome in outcomes.drain(..) {
            let slot = outcome.token as u32;
            let packet = *self.pool.get(slot);
            let stats = &mut self.topology.channels[ch as usize].stats;
            stats.tx_packets += 1;
            stats.tx_bytes += u64::from(packet.ip_len);
            if outcome.delivered_ns.is_some() {
                self.forward(to, slot);
            } else {
                stats.link_losses += 1;
                self.monitor.on_drop(packet.flow);
                self.pool.free(slot);
            }
        }
        self.topology.channels[ch as usize].radio.as_mut().expect("a radio channel").outcomes = outcomes;
        self.fill_radio(ch);
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

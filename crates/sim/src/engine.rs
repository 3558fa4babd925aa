//! The simulator proper: the event loop that moves packets between applications,
//! nodes and channels.
//!
//! Three kinds of event drive everything (see [`Event`]): an application sends,
//! a transmitter finishes a packet, a packet reaches the end of a wire. Between
//! events nothing changes, so the clock jumps from one to the next. The hot path
//! allocates nothing: packets live in a [`PacketPool`], events are `Copy`, and
//! drops are collected in one reused buffer.

use bauxite_qdisc::{Nanos, Packet as QPacket};

use crate::app::UdpApp;
use crate::event::{Event, EventQueue};
use crate::monitor::{FlowKey, FlowMonitor};
use crate::packet::{PacketPool, SimPacket};
use crate::topology::Topology;

/// IP protocol number of UDP.
const UDP: u8 = 17;

/// What a finished run reports besides the flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCounters {
    /// Events processed.
    pub events: u64,
    /// Simulated time of the last event.
    pub end_time: Nanos,
    /// Packets dropped for want of a route.
    pub unroutable: u64,
    /// The most packets alive at once.
    pub peak_packets: u64,
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
        }
    }

    /// Adds a UDP application and the monitored flow it creates; returns the flow index.
    pub fn add_app(&mut self, app: UdpApp) -> u32 {
        let key = FlowKey { src: app.src, dst: app.dst, src_port: app.src_port, dst_port: app.dst_port, protocol: UDP };
        let flow = self.monitor.add(key, app.dscp, app.tag, app.active_ns());
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

    /// Runs until no event is left (every application has stopped and every
    /// packet has been delivered or dropped) or the next event is after `until`.
    pub fn run(&mut self, until: Option<Nanos>) -> RunCounters {
        while let Some((time, event)) = self.events.pop() {
            if until.is_some_and(|u| time > u) {
                self.events.schedule(time, event);
                break;
            }
            debug_assert!(time >= self.now, "time went backwards");
            self.now = time;
            self.counters.events += 1;
            match event {
                Event::AppSend(app) => self.app_send(app),
                Event::TxComplete(ch) => {
                    self.topology.channels[ch as usize].busy = false;
                    self.service(ch);
                }
                Event::Arrive { channel, packet } => {
                    let node = self.topology.channels[channel as usize].to;
                    self.forward(node, packet);
                }
            }
        }
        self.counters.end_time = self.now;
        self.counters.peak_packets = self.pool.high_water() as u64;
        self.counters
    }

    fn app_send(&mut self, index: u32) {
        let (app, sent) = &mut self.apps[index as usize];
        let flow = self.app_flow[index as usize];
        let packet = SimPacket { flow, dst: app.dst, ip_len: app.ip_len(), dscp: app.dscp, sent_at: self.now };
        let src = app.src;
        *sent += 1;
        if let Some(next) = app.send_time(*sent) {
            self.events.schedule(next, Event::AppSend(index));
        }
        self.monitor.on_tx(flow, packet.ip_len, self.now);
        let slot = self.pool.alloc(packet);
        self.forward(src, slot);
    }

    /// A packet is at `node`: deliver it there or send it on toward its destination.
    fn forward(&mut self, node: u32, slot: u32) {
        let packet = *self.pool.get(slot);
        if packet.dst == node {
            self.monitor.on_rx(packet.flow, packet.ip_len, self.now - packet.sent_at, self.now);
            self.pool.free(slot);
            return;
        }
        let Some(ch) = self.topology.route(node, packet.dst) else {
            self.counters.unroutable += 1;
            self.monitor.on_drop(packet.flow);
            self.pool.free(slot);
            return;
        };
        let hash = self.monitor.flows[packet.flow as usize].hash;
        let channel = &mut self.topology.channels[ch as usize];
        if let Some(qdisc) = channel.qdisc.as_mut() {
            qdisc.enqueue(QPacket::new(slot as u64, packet.ip_len, packet.dscp, hash), self.now);
            channel.stats.max_qdisc_packets = channel.stats.max_qdisc_packets.max(qdisc.len() as u64);
            self.collect_qdisc_drops(ch);
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

    /// Keeps channel `ch` busy: starts the next transmission when the wire is idle
    /// and refills the device queue from the queue discipline while it has room
    /// (ns-3's flow control between the traffic-control layer and the device).
    fn service(&mut self, ch: u32) {
        loop {
            let channel = &mut self.topology.channels[ch as usize];
            if !channel.busy
                && let Some(slot) = channel.device.pop_front()
            {
                let packet = self.pool.get(slot);
                let wire = packet.ip_len + channel.config.framing_bytes;
                let tx = channel.config.tx_time(wire);
                channel.busy = true;
                channel.stats.tx_packets += 1;
                channel.stats.tx_bytes += packet.ip_len as u64;
                channel.stats.busy_ns += tx;
                // Scenario validation bounds rates, delays and durations far below
                // this; a hand-built topology that overflows stops here rather than
                // scheduling into the past.
                let done = self.now.checked_add(tx).expect("simulated time overflows u64 nanoseconds");
                let arrive = done.checked_add(channel.config.delay).expect("simulated time overflows u64 nanoseconds");
                self.events.schedule(done, Event::TxComplete(ch));
                self.events.schedule(arrive, Event::Arrive { channel: ch, packet: slot });
                continue;
            }
            if !channel.device_has_room() {
                return;
            }
            let Some(qdisc) = channel.qdisc.as_mut() else { return };
            let next = qdisc.dequeue(self.now);
            // An AQM may drop at dequeue, before (or instead of) handing a packet out.
            self.collect_qdisc_drops(ch);
            match next {
                Some(p) => self.topology.channels[ch as usize].device.push_back(p.id as u32),
                None => return,
            }
        }
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

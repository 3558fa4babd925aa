//! Per-class counters of the HTB tree, read over rtnetlink.
//!
//! The daemon reads them every few milliseconds to measure each lane's backlog and
//! departure rate; spawning `tc -s` that often would cost more CPU than the shaping.

use netlink_packet_core::{NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::tc::{TcAttribute, TcMessage, TcStats2};
use netlink_sys::protocols::NETLINK_ROUTE;
use netlink_sys::{Socket, SocketAddr};

/// One class's counters (`tc -s class show`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// `major:minor` as a 32-bit class id.
    pub classid: u32,
    /// Bytes sent (counted at dequeue).
    pub bytes: u64,
    /// Packets sent.
    pub packets: u64,
    /// Packets dropped by the class's queue.
    pub drops: u64,
    /// Times the class was over its rate.
    pub overlimits: u64,
    /// Packets waiting.
    pub qlen: u32,
    /// Bytes waiting.
    pub backlog: u32,
}

/// A netlink socket for repeated class dumps.
pub struct ClassStatsReader {
    socket: Socket,
    buffer: Vec<u8>,
    sequence: u32,
}

impl ClassStatsReader {
    /// Opens a route netlink socket in this process's network namespace.
    pub fn new() -> std::io::Result<Self> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(Self { socket, buffer: vec![0; 64 * 1024], sequence: 0 })
    }

    /// Every class of the interface with index `ifindex`.
    pub fn dump(&mut self, ifindex: u32) -> std::io::Result<Vec<ClassStats>> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut request = TcMessage::default();
        request.header.index = ifindex as i32;
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        header.sequence_number = self.sequence;
        let mut packet =
            NetlinkMessage::new(header, NetlinkPayload::from(RouteNetlinkMessage::GetTrafficClass(request)));
        packet.finalize();
        let mut out = vec![0; packet.buffer_len()];
        packet.serialize(&mut out);
        self.socket.send(&out, 0)?;

        let mut classes = Vec::new();
        loop {
            let size = self.socket.recv(&mut &mut self.buffer[..], 0)?;
            let mut offset = 0;
            while offset < size {
                let message = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buffer[offset..size])
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
                let length = message.header.length as usize;
                match message.payload {
                    NetlinkPayload::Done(_) => return Ok(classes),
                    NetlinkPayload::Error(e) => {
                        return Err(e.to_io());
                    }
                    NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewTrafficClass(class))
                        if message.header.sequence_number == self.sequence =>
                    {
                        classes.push(parse(&class));
                    }
                    _ => {}
                }
                if length == 0 {
                    break;
                }
                offset += length;
            }
        }
    }
}

fn parse(class: &TcMessage) -> ClassStats {
    let handle = class.header.handle;
    let mut stats =
        ClassStats { classid: (u32::from(handle.major) << 16) | u32::from(handle.minor), ..Default::default() };
    for attribute in &class.attributes {
        if let TcAttribute::Stats2(parts) = attribute {
            for part in parts {
                match part {
                    TcStats2::Basic(b) => {
                        stats.bytes = b.bytes;
                        stats.packets = u64::from(b.packets);
                    }
                    TcStats2::Queue(q) => {
                        stats.drops = u64::from(q.drops);
                        stats.overlimits = u64::from(q.overlimits);
                        stats.qlen = q.qlen;
                        stats.backlog = q.backlog;
                    }
                    _ => {}
                }
            }
        }
    }
    stats
}

//! The building blocks every discipline shares: a FIFO that counts its bytes, and
//! how a limit applies when a discipline has several queues.

use std::collections::VecDeque;

use crate::Packet;

/// A FIFO of packets with its byte count kept up to date, so backlog questions
/// (CoDel's one-MTU rule, the fattest flow, `backlog_bytes`) cost nothing. The
/// ring buffer grows to the largest backlog once and is reused: no allocation per
/// packet.
#[derive(Clone, Debug, Default)]
pub(crate) struct PacketQueue {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl PacketQueue {
    /// Appends at the tail.
    pub(crate) fn push_back(&mut self, packet: Packet) {
        self.bytes += u64::from(packet.len);
        self.packets.push_back(packet);
    }

    /// Takes the head.
    pub(crate) fn pop_front(&mut self) -> Option<Packet> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.len);
        Some(packet)
    }

    /// The head, left in place.
    pub(crate) fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }

    /// Packets queued.
    pub(crate) fn len(&self) -> usize {
        self.packets.len()
    }

    /// Whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes queued.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// How the packet limit of a discipline with several queues (bands, classes)
/// counts. Linux and ns-3 differ here: ns-3's PRIO gives each FIFO child its own
/// limit while pfifo_fast counts all bands against one; which one reproduces a
/// study depends on how it was configured, so it is a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LimitScope {
    /// Each queue holds up to `limit` packets on its own.
    #[default]
    PerQueue,
    /// All queues together hold up to `limit` packets.
    Shared,
}

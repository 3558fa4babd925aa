//! Packets in flight, kept in a pool of reusable slots.
//!
//! A packet is born when an application sends it and dies when it is delivered
//! or dropped; between the two it is an index into this pool. Queue disciplines
//! see only [`bauxite_qdisc::Packet`] (which carries the index as its `id`), and
//! freed slots are reused, so the steady state allocates nothing per packet.

use bauxite_qdisc::Nanos;

/// What the simulator knows about one packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// The flow (index into the flow monitor) the packet belongs to.
    pub flow: u32,
    /// The node it is addressed to.
    pub dst: u32,
    /// Size of the IP datagram in bytes (UDP payload + 8 + 20).
    pub ip_len: u32,
    /// The DSCP in its IP header.
    pub dscp: u8,
    /// When the source's IP layer sent it (where ns-3's FlowMonitor starts its delay).
    pub sent_at: Nanos,
    /// The channel it is crossing or last crossed, which its arrival event names.
    pub channel: u32,
    /// A TCP segment or ACK: its delivery makes its connection act, so it arrives
    /// by an event at its arrival time (see [`crate::engine`]).
    pub tcp: bool,
}

/// A slab of packets with a free list.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<SimPacket>,
    free: Vec<u32>,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `packet` and returns its slot.
    pub fn alloc(&mut self, packet: SimPacket) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = packet;
                slot
            }
            None => {
                self.slots.push(packet);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The packet in `slot`.
    pub fn get(&self, slot: u32) -> &SimPacket {
        &self.slots[slot as usize]
    }

    /// The packet in `slot`, to update.
    pub fn get_mut(&mut self, slot: u32) -> &mut SimPacket {
        &mut self.slots[slot as usize]
    }

    /// Returns `slot` to the pool.
    pub fn free(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "packet slot {slot} freed twice");
        self.free.push(slot);
    }

    /// Packets currently alive.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The most packets ever alive at once (the pool's size).
    pub fn high_water(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_freed_slots() {
        let mut pool = PacketPool::new();
        let p = SimPacket { flow: 1, dst: 2, ip_len: 92, dscp: 36, sent_at: 5, channel: 0, tcp: false };
        let a = pool.alloc(p);
        let b = pool.alloc(SimPacket { flow: 2, ..p });
        assert_ne!(a, b);
        pool.free(a);
        let c = pool.alloc(SimPacket { flow: 3, ..p });
        assert_eq!(c, a);
        assert_eq!(pool.get(c).flow, 3);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.high_water(), 2);
    }
}

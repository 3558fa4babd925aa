//! Strict priority over N FIFO bands, classified by DSCP: the seed's
//! "PFIFO_FAST-style" (3 bands) and "PRIO" (4 bands) schedulers.
//!
//! Dequeue always serves the lowest-numbered non-empty band, so a higher band
//! waits as long as a lower one has packets: that is the point (control never
//! queues behind bulk) and the price (bulk can starve). The seed implements both
//! of its priority schedulers this way in ns-3 — a PRIO queue disc with FIFO
//! children and packet filters that map DSCP to a band — so the two differ only
//! in their map ([`PrioConfig::pfifo_fast_style`], [`PrioConfig::seed_prio`]).

use bauxite_core::OrchestratorLane::{Control, Status, Telemetry};

use crate::dscp::{self, DscpMap};
use crate::queue::{LimitScope, PacketQueue};
use crate::{Nanos, Packet, Qdisc, Verdict};

/// The configuration of a [`Prio`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrioConfig {
    /// Number of bands; band 0 is served first.
    pub bands: usize,
    /// DSCP → band.
    pub map: DscpMap,
    /// Packet limit, per band or shared as `scope` says.
    pub limit: usize,
    /// Whether `limit` applies to each band or to all bands together. ns-3's PRIO
    /// gives each FIFO child its own limit; Linux pfifo_fast shares one. The
    /// seed does not say how its 40-packet queue was applied to the bands.
    pub scope: LimitScope,
}

impl PrioConfig {
    /// The seed's PFIFO_FAST-style scheduler: three bands, AF42 (control) → 0,
    /// AF43 (status) → 1, everything else → 2.
    ///
    /// From the seed: it "separates control and status but still leaves telemetry
    /// grouped with lower-priority/default traffic", so AF41 (telemetry), CS1
    /// (bulk) and default (background, and everything when DSCP marking is off)
    /// share the last band. With marking off, this is a FIFO.
    pub fn pfifo_fast_style(limit: usize) -> Self {
        Self {
            bands: 3,
            map: dscp::map_with(2, &[(Control.dscp(), 0), (Status.dscp(), 1)]),
            limit,
            scope: LimitScope::PerQueue,
        }
    }

    /// The seed's four-band strict-priority PRIO: AF42 (control) → 0, AF43
    /// (status) → 1, AF41 (telemetry) → 2, everything else (CS1 bulk, default
    /// background) → 3.
    ///
    /// From the seed: "AF42 is treated as the highest-priority control class;
    /// AF43 is placed below it; AF41 is placed lower still in the strict-priority
    /// configuration; and bulk or default traffic remains in the lowest-priority
    /// band".
    pub fn seed_prio(limit: usize) -> Self {
        Self {
            bands: 4,
            map: dscp::map_with(3, &[(Control.dscp(), 0), (Status.dscp(), 1), (Telemetry.dscp(), 2)]),
            limit,
            scope: LimitScope::PerQueue,
        }
    }

    /// The same configuration with the limit shared across bands.
    pub fn shared_limit(mut self) -> Self {
        self.scope = LimitScope::Shared;
        self
    }
}

/// Strict priority over FIFO bands.
#[derive(Clone, Debug)]
pub struct Prio {
    bands: Vec<PacketQueue>,
    map: DscpMap,
    limit: usize,
    scope: LimitScope,
    len: usize,
    bytes: u64,
    drops: Vec<Packet>,
}

impl Prio {
    /// A PRIO scheduler with empty bands.
    ///
    /// # Panics
    /// If there are no bands, the limit is 0, or the map names a band that does
    /// not exist.
    pub fn new(config: PrioConfig) -> Self {
        assert!(config.bands > 0 && config.bands <= 256, "PRIO needs 1..=256 bands");
        assert!(config.limit > 0, "PRIO needs room for at least one packet");
        dscp::check_map(&config.map, config.bands, "band");
        Self {
            bands: vec![PacketQueue::default(); config.bands],
            map: config.map,
            limit: config.limit,
            scope: config.scope,
            len: 0,
            bytes: 0,
            drops: Vec::new(),
        }
    }

    /// The band a packet with this DSCP (0..=63, not the TOS byte) goes to.
    pub fn band_of(&self, dscp: u8) -> usize {
        dscp::classify(&self.map, dscp)
    }

    /// Packets queued in `band`.
    pub fn band_len(&self, band: usize) -> usize {
        self.bands[band].len()
    }
}

impl Qdisc for Prio {
    fn enqueue(&mut self, mut packet: Packet, now: Nanos) -> Verdict {
        packet.enqueued_at = now;
        let band = self.band_of(packet.dscp);
        let full = match self.scope {
            LimitScope::PerQueue => self.bands[band].len() >= self.limit,
            LimitScope::Shared => self.len >= self.limit,
        };
        if full {
            // Drop-tail, like pfifo_fast: a full queue refuses the arrival even if
            // it outranks what is queued; nothing is pushed out.
            self.drops.push(packet);
            return Verdict::Dropped;
        }
        self.len += 1;
        self.bytes += u64::from(packet.len);
        self.bands[band].push_back(packet);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<Packet> {
        let packet = self.bands.iter_mut().find(|b| !b.is_empty())?.pop_front()?;
        self.len -= 1;
        self.bytes -= u64::from(packet.len);
        Some(packet)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn drain_drops(&mut self, out: &mut Vec<Packet>) {
        out.append(&mut self.drops);
    }

    /// Dequeue reads an empty queue and returns, keeping no clock.
    fn empty_dequeue_is_noop(&self) -> bool {
        true
    }

    /// A full queue (or band) refuses the arriving packet; nothing else is dropped.
    fn drops_only_arrivals(&self) -> bool {
        true
    }

    /// Its band, with room for at least one packet, hands it back; no other state.
    fn empty_passes_through(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dscp::{AF41, AF42, AF43, CS1, DEFAULT};

    fn pkt(id: u64, dscp: u8) -> Packet {
        Packet::new(id, 100, dscp, 0)
    }

    fn drain(q: &mut Prio) -> Vec<u64> {
        std::iter::from_fn(|| q.dequeue(0)).map(|p| p.id).collect()
    }

    #[test]
    fn the_seed_maps() {
        let pf = Prio::new(PrioConfig::pfifo_fast_style(10));
        assert_eq!([AF42, AF43, AF41, CS1, DEFAULT, 46].map(|d| pf.band_of(d)), [0, 1, 2, 2, 2, 2]);
        let prio = Prio::new(PrioConfig::seed_prio(10));
        assert_eq!([AF42, AF43, AF41, CS1, DEFAULT, 46].map(|d| prio.band_of(d)), [0, 1, 2, 3, 3, 3]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not a code point")]
    fn a_tos_byte_is_not_a_dscp() {
        // AF42 in a TOS byte is AF42 << 2 = 144: the caller must pass tos >> 2.
        Prio::new(PrioConfig::seed_prio(10)).band_of(AF42 << 2);
    }

    #[test]
    fn strict_priority_serves_lower_bands_first_and_fifo_within_a_band() {
        let mut q = Prio::new(PrioConfig::seed_prio(10));
        // Arrivals in reverse priority order, two per band.
        let arrivals = [(0, CS1), (1, AF41), (2, AF43), (3, AF42), (4, DEFAULT), (5, AF41), (6, AF43), (7, AF42)];
        for (id, d) in arrivals {
            assert_eq!(q.enqueue(pkt(id, d), id), Verdict::Queued);
        }
        assert_eq!(drain(&mut q), [3, 7, 2, 6, 1, 5, 0, 4]);
        // A control packet that arrives while bulk waits goes out next.
        q.enqueue(pkt(10, CS1), 0);
        q.enqueue(pkt(11, CS1), 0);
        assert_eq!(q.dequeue(1).unwrap().id, 10);
        q.enqueue(pkt(12, AF42), 2);
        assert_eq!(drain(&mut q), [12, 11]);
    }

    #[test]
    fn without_marking_everything_shares_the_lowest_band_like_a_fifo() {
        let mut q = Prio::new(PrioConfig::pfifo_fast_style(5));
        for id in 0..7 {
            q.enqueue(pkt(id, DEFAULT), id);
        }
        assert_eq!((q.band_len(0), q.band_len(1), q.band_len(2)), (0, 0, 5));
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops.iter().map(|p| p.id).collect::<Vec<_>>(), [5, 6]);
        assert_eq!(drain(&mut q), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn per_band_limit_protects_other_bands() {
        let mut q = Prio::new(PrioConfig::seed_prio(3));
        for id in 0..5 {
            q.enqueue(pkt(id, DEFAULT), 0);
        }
        assert_eq!(q.band_len(3), 3, "bulk band full at its own limit");
        for id in 10..13 {
            assert_eq!(q.enqueue(pkt(id, AF42), 0), Verdict::Queued, "control still has its own room");
        }
        assert_eq!(q.enqueue(pkt(13, AF42), 0), Verdict::Dropped);
        assert_eq!(q.len(), 6);
        assert_eq!(q.backlog_bytes(), 600);
    }

    #[test]
    fn shared_limit_lets_a_flooded_band_starve_others_of_room() {
        let mut q = Prio::new(PrioConfig::seed_prio(3).shared_limit());
        for id in 0..3 {
            q.enqueue(pkt(id, DEFAULT), 0);
        }
        assert_eq!(q.enqueue(pkt(10, AF42), 0), Verdict::Dropped, "no room left for control");
        let mut drops = Vec::new();
        q.drain_drops(&mut drops);
        assert_eq!(drops.iter().map(|p| p.id).collect::<Vec<_>>(), [10], "drop-tail: bulk is not pushed out");
        q.dequeue(0);
        assert_eq!(q.enqueue(pkt(11, AF42), 0), Verdict::Queued);
        assert_eq!(drain(&mut q), [11, 1, 2]);
    }

    #[test]
    #[should_panic(expected = "maps to band 3")]
    fn rejects_a_map_naming_a_missing_band() {
        let mut config = PrioConfig::pfifo_fast_style(10);
        config.map[5] = 3;
        Prio::new(config);
    }
}

//! DSCP code points and the DSCP → queue maps of the class-based disciplines
//! (PRIO, DRR).
//!
//! The seed marks its lanes with these values (RFC 2474 / RFC 2597 / RFC 4594,
//! defined once with the lanes in [`bauxite_core::orchestrator`]) and its priority
//! schedulers classify on them alone.

pub use bauxite_core::orchestrator::dscp::{AF41, AF42, AF43, CS1, DEFAULT};

/// A DSCP → queue map, one entry per code point (64).
pub type DscpMap = [u8; 64];

/// A map that sends every code point to `queue` except the listed ones.
///
/// # Panics
/// If an exception names a DSCP above 63.
pub fn map_with(queue: u8, exceptions: &[(u8, u8)]) -> DscpMap {
    let mut map = [queue; 64];
    for &(dscp, q) in exceptions {
        assert!(dscp < 64, "DSCP {dscp} is not a code point (0..=63)");
        map[usize::from(dscp)] = q;
    }
    map
}

/// The index of a packet's queue.
///
/// `dscp` must be the six-bit code point (0..=63), not the TOS / traffic-class
/// byte it sits in: the DSCP of a TOS byte is `tos >> 2`, and its low two bits
/// are ECN. A value above 63 is a caller's bug (debug builds panic); release
/// builds look up its low six bits rather than index out of the map.
pub(crate) fn classify(map: &DscpMap, dscp: u8) -> usize {
    debug_assert!(dscp < 64, "DSCP {dscp} is not a code point (0..=63); pass tos >> 2, not the TOS byte");
    usize::from(map[usize::from(dscp & 63)])
}

/// Asserts that every entry of `map` names one of `queues` queues.
pub(crate) fn check_map(map: &DscpMap, queues: usize, what: &str) {
    for (dscp, &q) in map.iter().enumerate() {
        assert!(usize::from(q) < queues, "DSCP {dscp} maps to {what} {q}, but there are only {queues}");
    }
}

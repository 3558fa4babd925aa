//! DSCP code points and the DSCP → queue maps of the class-based disciplines
//! (PRIO, DRR).
//!
//! The seed marks its classes with these values (RFC 2474 / RFC 2597 / RFC 4594)
//! and its priority schedulers classify on them alone.

/// Default forwarding (best effort), also what unmarked traffic carries.
pub const DEFAULT: u8 = 0;
/// Class selector 1, "lower effort": the seed's bulk class.
pub const CS1: u8 = 8;
/// Assured forwarding class 4, low drop precedence: the seed's telemetry.
pub const AF41: u8 = 34;
/// Assured forwarding class 4, medium drop precedence: the seed's control.
pub const AF42: u8 = 36;
/// Assured forwarding class 4, high drop precedence: the seed's status.
pub const AF43: u8 = 38;

/// A DSCP → queue map, one entry per code point (64).
pub type DscpMap = [u8; 64];

/// A map that sends every code point to `queue` except the listed ones.
pub fn map_with(queue: u8, exceptions: &[(u8, u8)]) -> DscpMap {
    let mut map = [queue; 64];
    for &(dscp, q) in exceptions {
        map[usize::from(dscp & 63)] = q;
    }
    map
}

/// The index of a packet's queue: DSCPs above 63 (not a valid code point) are
/// taken modulo 64, as the six DSCP bits of a TOS byte would be.
pub(crate) fn classify(map: &DscpMap, dscp: u8) -> usize {
    usize::from(map[usize::from(dscp & 63)])
}

/// Asserts that every entry of `map` names one of `queues` queues.
pub(crate) fn check_map(map: &DscpMap, queues: usize, what: &str) {
    for (dscp, &q) in map.iter().enumerate() {
        assert!(usize::from(q) < queues, "DSCP {dscp} maps to {what} {q}, but there are only {queues}");
    }
}

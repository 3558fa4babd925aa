//! The building blocks every discipline shares: a FIFO that counts its bytes, and
//! how a limit applies when a discipline has several queues.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use crate::Packet;

/// A FIFO of packets with its byte count kept up to date, so backlog questions
/// (CoDel's one-MTU rule, the fattest flow, `backlog_bytes`) cost nothing. The
/// ring buffer grows to the largest backlog once and is reused: no allocation per
/// packet.
///
/// `pub` only because the per-flow AQM trait of the FQ disciplines names it; the
/// module is private, so nothing outside the crate can name or build one.
#[derive(Clone, Debug, Default)]
pub struct PacketQueue {
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
///
/// As text (the simulator's `--limit-mode`) it is `per-band` or `shared`: the
/// queues it applies to are the bands of PRIO and the classes of DRR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LimitScope {
    /// Each queue holds up to `limit` packets on its own (`per-band`): ns-3's
    /// PRIO with a FIFO child per band, each child given the queue size.
    #[default]
    PerQueue,
    /// All queues together hold up to `limit` packets (`shared`): Linux pfifo_fast.
    Shared,
}

impl LimitScope {
    /// The text form: `per-band` or `shared`.
    pub fn name(self) -> &'static str {
        match self {
            LimitScope::PerQueue => "per-band",
            LimitScope::Shared => "shared",
        }
    }
}

impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that is neither `per-band` nor `shared`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLimitScopeError(String);

impl fmt::Display for ParseLimitScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not per-band or shared", self.0)
    }
}

impl std::error::Error for ParseLimitScopeError {}

impl FromStr for LimitScope {
    type Err = ParseLimitScopeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "per-band" => Ok(LimitScope::PerQueue),
            "shared" => Ok(LimitScope::Shared),
            _ => Err(ParseLimitScopeError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_scope_round_trips_through_its_text() {
        for scope in [LimitScope::PerQueue, LimitScope::Shared] {
            assert_eq!(scope.to_string().parse::<LimitScope>(), Ok(scope));
        }
        assert_eq!(LimitScope::default().to_string(), "per-band");
        assert_eq!("per-queue".parse::<LimitScope>().unwrap_err().to_string(), "`per-queue` is not per-band or shared");
    }
}

//! A modem-like bottleneck: a token bucket with a deep drop-tail FIFO.
//!
//! TBF rather than HTB because TBF splits GSO super-packets into wire-size packets,
//! as a modem sees them; and it exists on every kernel (no netem needed). On a kernel
//! that has netem, delay and loss can be added under it by the caller.

use bauxite_core::BitRate;
use bauxite_sys::Netns;

use crate::NetlabError;

/// The bottleneck on one interface of a namespace.
#[derive(Clone, Debug)]
pub struct Bottleneck {
    ns: String,
    iface: String,
    buffer_bytes: u32,
    burst_bytes: u32,
}

impl Bottleneck {
    /// Installs a bottleneck of `rate` with a FIFO of `buffer_bytes` on `iface`'s egress.
    ///
    /// `burst_bytes` is how much the link may send at once after an idle moment. A
    /// wire serializes packet by packet (burst = one frame): a small packet then
    /// waits for the frame ahead of it, on average half a frame time (4 ms for 1514 B
    /// at 1.5 Mbit/s) whatever any scheduler does. Radios grant capacity in slots and
    /// send what is queued in one go, which a burst of several frames models.
    pub fn install(
        ns: &Netns,
        iface: &str,
        rate: BitRate,
        buffer_bytes: u32,
        burst_bytes: u32,
    ) -> Result<Self, NetlabError> {
        let b = Self {
            ns: ns.name().ok_or(NetlabError::Unnamed("a bottleneck lives in a named namespace"))?.to_string(),
            iface: iface.to_string(),
            buffer_bytes,
            burst_bytes: burst_bytes.max(1600),
        };
        b.apply(ns, "replace", rate)?;
        Ok(b)
    }

    /// Changes the rate, keeping the queue and its contents.
    pub fn set_rate(&self, ns: &Netns, rate: BitRate) -> Result<(), NetlabError> {
        self.apply(ns, "change", rate)
    }

    fn apply(&self, ns: &Netns, verb: &str, rate: BitRate) -> Result<(), NetlabError> {
        debug_assert_eq!(ns.name(), Some(self.ns.as_str()));
        // At least one millisecond of tokens, so fast links stay exact.
        let burst = (rate.bytes_per_sec() / 1000).max(u64::from(self.burst_bytes)).to_string();
        let rate = rate.to_string();
        let limit = self.buffer_bytes.to_string();
        ns.tc(&["qdisc", verb, "dev", &self.iface, "root", "tbf", "rate", &rate, "burst", &burst, "limit", &limit])
            .map(|_| ())?;
        Ok(())
    }
}

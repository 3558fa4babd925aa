//! What the simulator's integration tests share: generated links.

use std::sync::Arc;

use bauxite_core::link::{DeliveryTrace, OPPORTUNITY_BYTES};

/// A mahimahi trace of `seconds` whose capacity in each millisecond is
/// `bps_at(ms)` bit/s (called once per millisecond, in order): the opportunities
/// that rate grants, a fraction carried over to the next millisecond.
pub fn trace_of_rates(seconds: u64, mut bps_at: impl FnMut(u64) -> f64) -> Arc<DeliveryTrace> {
    let (mut lines, mut credit) = (Vec::new(), 0.0f64);
    for ms in 0..seconds * 1000 {
        credit += bps_at(ms) / 8e3 / f64::from(OPPORTUNITY_BYTES);
        while credit >= 1.0 {
            credit -= 1.0;
            lines.push(ms + 1);
        }
    }
    lines.push(seconds * 1000);
    let text: String = lines.iter().map(|ms| format!("{ms}\n")).collect();
    Arc::new(DeliveryTrace::parse(&text).expect("a generated trace parses"))
}

//! What the simulator's integration tests share: generated links and snapshots.
//! Each test binary uses some of them.
#![allow(dead_code)]

use std::sync::Arc;

use bauxite_core::link::{DeliveryTrace, OPPORTUNITY_BYTES};
use bauxite_sim::robot::PhaseSummary;

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

/// A phase's critical excess over the link's floor (a phase on a varying link).
pub fn critical_excess(p: &PhaseSummary) -> bauxite_core::figures::ExcessMs {
    p.link.clone().expect("link figures").critical_excess_ms
}

/// Checks `csv` against `tests/snapshots/{name}_classes.csv` byte for byte, naming
/// the first line that differs. `BAUXITE_UPDATE_SNAPSHOTS=1` rewrites the snapshot
/// instead: review its diff, since a change in the simulator or a discipline that
/// moves any figure shows up here.
pub fn assert_class_snapshot(name: &str, csv: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/snapshots/{name}_classes.csv"));
    if std::env::var_os("BAUXITE_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, csv).unwrap();
    }
    let expected = std::fs::read_to_string(&path).expect("the snapshot exists (BAUXITE_UPDATE_SNAPSHOTS=1 writes it)");
    if csv != expected {
        let first = csv.lines().zip(expected.lines()).position(|(a, b)| a != b);
        panic!(
            "{name}: the class table changed (first differing line {first:?}):\n  got:  {:?}\n  want: {:?}",
            first.and_then(|i| csv.lines().nth(i)),
            first.and_then(|i| expected.lines().nth(i))
        );
    }
}

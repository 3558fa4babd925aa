use bauxite_core::link::{DEMO_TBF_BURST_BYTES, LinkConfig, LinkRate, Timeline};
use bauxite_core::workload::WorkloadSpec;
use bauxite_core::{BitRate, Profile};
use bauxite_sim::robot::{Phase, RateMode, RobotConfig, run_phase};
use std::time::Duration;
fn main() {
    let seed: u64 = std::env::args().nth(1).map_or(0, |s| s.parse().unwrap());
    let config = RobotConfig {
        profile: Profile::robot().validate().unwrap(),
        workload: WorkloadSpec::default(),
        link: LinkConfig {
            rate: LinkRate::Constant(BitRate::from_bps(50_000_000)),
            burst_bytes: Some(DEMO_TBF_BURST_BYTES),
            ..LinkConfig::default()
        },
        timeline: Timeline::of_rates(&[(Duration::from_secs(5), BitRate::from_bps(1_500_000))]),
        duration: Duration::from_secs(20),
        rate: RateMode::Auto,
        seed,
    };
    let p = run_phase(&config, Phase::Protected);
    let mut rates = p.link_rate.iter().peekable();
    let mut last = 0;
    for m in &p.critical {
        while let Some(&&(t, r)) = rates.peek() {
            if t <= m.sent_ns {
                if t > 0 {
                    println!("{:8.3} rate {:.3}", t as f64 / 1e9, r as f64 / 1e6);
                }
                last = r;
                rates.next();
            } else {
                break;
            }
        }
        let l = m.latency_ns.unwrap_or(u64::MAX);
        if m.sent_ns > 4_990_000_000 && l > 2_000_000 {
            println!("{:8.3} lat {:.2} ms (rate {:.3})", m.sent_ns as f64 / 1e9, l as f64 / 1e6, last as f64 / 1e6);
        }
    }
}

//! What the link emulator itself adds to a packet's latency (needs root):
//! `sudo cargo bench -p bauxite-netlab --bench emulator`.
//!
//! Two testbeds in the same run, one after the other: the kernel forwarding through
//! a TBF of 1 Gbit/s, and the emulator with a constant 1 Gbit/s link (an empty
//! queue: 1 000 probes a second of 200 bytes). Printed: one-way latency p50/p99/max
//! through each, the difference, and the emulator's own time per packet from reading
//! it to sending it on, beyond what the model asked (`sent - delivered`), which is
//! the figure to keep at or under 0.1 ms at p99.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bauxite_core::BitRate;
use bauxite_core::link::{LinkConfig, LinkRate};
use bauxite_core::stats::Summary;
use bauxite_netlab::emulator::{EmulatorConfig, Fate};
use bauxite_netlab::testbed::BASE_ADDR;
use bauxite_netlab::traffic::{UdpStream, receive_udp, send_udp};
use bauxite_netlab::{ChainOptions, ChainTestbed};

const SECONDS: u64 = 5;

fn probe_latencies_ms(tb: &ChainTestbed) -> Vec<f64> {
    let dst = SocketAddr::from((BASE_ADDR, 9200));
    let rx = tb.base.run(move || UdpSocket::bind(dst)).expect("bind");
    rx.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let tx = tb.robot.run(|| UdpSocket::bind("0.0.0.0:0")).expect("bind");
    let stop = Arc::new(AtomicBool::new(false));
    let receiver = {
        let stop = stop.clone();
        std::thread::spawn(move || receive_udp(&rx, &stop).expect("receive"))
    };
    let spec = UdpStream { stream: 9200, dst, rate_hz: 1000.0, size: 200 };
    let sender = {
        let stop = stop.clone();
        std::thread::spawn(move || send_udp(&tx, &spec, &stop))
    };
    std::thread::sleep(Duration::from_secs(SECONDS));
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let (arrivals, _) = receiver.join().unwrap();
    arrivals.iter().skip(100).map(|a| a.latency_ms()).collect()
}

fn line(name: &str, values: Vec<f64>) -> (f64, f64) {
    let s = Summary::of(&values);
    println!("{name:<44} n={:>5}  p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms", s.count, s.p50, s.p99, s.max);
    (s.p50, s.p99)
}

fn main() {
    if !bauxite_sys::is_root() {
        eprintln!("the emulator benchmark needs root (network namespaces, packet sockets): run it with sudo");
        return;
    }
    let fast = BitRate::from_bps(1_000_000_000);
    let kernel = ChainTestbed::create(&ChainOptions { rate: fast, ..ChainOptions::default() }).expect("testbed");
    let direct = line("kernel forwarding (TBF 1 Gbit/s)", probe_latencies_ms(&kernel));
    drop(kernel);

    let config = EmulatorConfig {
        uplink: LinkConfig { rate: LinkRate::Constant(fast), ..LinkConfig::default() },
        record_fates: true,
        ..EmulatorConfig::default()
    };
    let mut emulated =
        ChainTestbed::create(&ChainOptions { emulated: Some(config), ..ChainOptions::default() }).expect("testbed");
    let through = line("emulator (constant 1 Gbit/s, empty queue)", probe_latencies_ms(&emulated));
    let report = emulated.stop_emulator().expect("stop").expect("report");
    let own: Vec<f64> = report
        .fates
        .iter()
        .filter_map(|f| match f.fate {
            Fate::Delivered { delivered_ns, sent_ns, .. } => Some((sent_ns - delivered_ns) as f64 / 1e6),
            _ => None,
        })
        .collect();
    let (own_p50, own_p99) = line("emulator's own time (sent - delivered)", own);
    if !report.realtime {
        println!("(the emulator's thread did not get a real-time priority: scheduling delays included)");
    }
    println!(
        "added end to end: p50 {:+.3} ms, p99 {:+.3} ms; emulator's own p99 {own_p99:.3} ms ({}), p50 {own_p50:.3} ms",
        through.0 - direct.0,
        through.1 - direct.1,
        if own_p99 <= 0.1 { "within the 0.1 ms target" } else { "over the 0.1 ms target" }
    );
}

//! The raw-IP testbed's forwarder on real packets (needs root): the uplink is the
//! link model's (its rate and its buffer), and every packet's checksums are checked.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bauxite_core::BitRate;
use bauxite_core::link::{LinkConfig, LinkRate};
use bauxite_netlab::TunTestbed;
use bauxite_netlab::traffic::{tcp_flood, tcp_sink};
use bauxite_netlab::tun::TUN_BASE_V6;
use bauxite_sys::{monotonic_ns, root_or_skip};

/// TCP over IPv6 through a 4 Mbit/s uplink with a 30 KB buffer: the base receives at
/// the link's rate, the buffer overflows now and then (TCP probes past it), and every
/// packet that crossed had right checksums.
#[test]
fn the_uplink_runs_at_the_models_rate_and_overflows_its_buffer() {
    if !root_or_skip("the_uplink_runs_at_the_models_rate_and_overflows_its_buffer") {
        return;
    }
    let rate = BitRate::from_bps(4_000_000);
    let mut uplink = LinkConfig { rate: LinkRate::Constant(rate), ..LinkConfig::default() };
    uplink.queue.bytes = Some(30_000);
    let mut tb = TunTestbed::create(uplink).expect("TUN testbed");
    let stop = Arc::new(AtomicBool::new(false));
    let addr = SocketAddr::from((TUN_BASE_V6, 8080));
    let listener = tb.base.run(move || TcpListener::bind(addr).expect("bind TCP"));
    let (s1, s2) = (stop.clone(), stop.clone());
    let sink = tb.base.spawn(move || tcp_sink(listener, &s1));
    let flood = tb.robot.spawn(move || tcp_flood(TcpStream::connect(addr).expect("connect TCP"), &s2));
    std::thread::sleep(Duration::from_secs(1));
    let from = monotonic_ns();
    std::thread::sleep(Duration::from_secs(3));
    let to = monotonic_ns();
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    let received = sink.join().unwrap().expect("TCP sink").throughput_bps(from, to);
    let uplink = tb.stop_forwarder().expect("the forwarder's report");
    eprintln!("TCP through a 4 Mbit/s TUN uplink: {:.3} Mbit/s; {uplink:?}", received / 1e6);
    // The link's rate counts IP length + 4 bytes; TCP payload is ~95 % of that. The
    // model paces in its own clock, so a loaded machine can only make delivery late,
    // never faster: the upper bound is exact up to TCP's headers, the lower one leaves
    // a quarter for a busy machine's ramp-up.
    assert!(received < rate.bps() as f64, "never faster than the link: {received}");
    assert!(received > 0.75 * rate.bps() as f64, "about the link's rate: {received}");
    assert!(uplink.queue_full > 0, "CUBIC overfills a 30 KB buffer: {uplink:?}");
    // Nearly all are TCP; the kernel's own ICMPv6 (neighbour and router discovery) is not checked.
    assert!(uplink.ipv6 > 500 && uplink.l4_checked + 10 >= uplink.ipv6, "{uplink:?}");
    assert_eq!(uplink.bad_l4, 0, "{uplink:?}");
}

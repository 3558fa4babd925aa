//! The link emulator as a cable (needs root): in bridged mode every frame crosses it
//! unchanged, so ARP resolves and multicast reaches the far side, each direction runs
//! its own model, and a change applied mid-run takes effect.
//!
//! ```text
//!  a [eth0 10.203.0.1] —— [to-a] link [to-b] —— [eth0 10.203.0.2] b
//!                              ^ bridged emulator
//! ```

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bauxite_core::link::{LinkChange, LinkConfig, LossModel};
use bauxite_netlab::emulator::{Direction, EmulatorConfig, EmulatorReport, Forwarding, LinkEmulator, Port};
use bauxite_netlab::veth;
use bauxite_sys::{Netns, root_or_skip, unique_name};

const A: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 2);
const GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 42);

/// The emulator applies a change on its next loop turn, at most 20 ms after it is sent
/// (its longest sleep), on a real-time thread; 300 ms covers that on a loaded machine.
const CHANGE_SETTLES: Duration = Duration::from_millis(300);

struct Cable {
    emulator: Option<LinkEmulator>,
    a: Netns,
    b: Netns,
    // Dropped last: the emulator's thread lives in it.
    _link: Netns,
}

impl Cable {
    fn new(uplink: LinkConfig, downlink: LinkConfig) -> Self {
        let a = Netns::create(&unique_name("l2a")).unwrap();
        let link = Netns::create(&unique_name("l2link")).unwrap();
        let b = Netns::create(&unique_name("l2b")).unwrap();
        // No IPv6: its router solicitations and reports would cross the lossy link too,
        // and the counts below are of the test's datagrams alone.
        for ns in [&a, &link, &b] {
            ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1").unwrap();
            ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1").unwrap();
        }
        // a and b share one subnet: only an L2 path joins them. Each end's veth is made,
        // then the address is added, so ARP has to cross the emulator.
        veth(&a, "eth0", &link, "to-a").unwrap();
        veth(&link, "to-b", &b, "eth0").unwrap();
        for (ns, addr) in [(&a, "10.203.0.1/24"), (&b, "10.203.0.2/24")] {
            ns.ip(&["addr", "add", addr, "dev", "eth0"]).unwrap();
            ns.ip(&["route", "add", "224.0.0.0/4", "dev", "eth0"]).unwrap();
        }
        let config = EmulatorConfig { uplink, downlink, forwarding: Forwarding::Bridged, ..EmulatorConfig::default() };
        let emulator = LinkEmulator::start(&link, Port::bridged("to-a"), Port::bridged("to-b"), config).unwrap();
        Self { emulator: Some(emulator), a, b, _link: link }
    }

    fn stop(&mut self) -> EmulatorReport {
        self.emulator.take().unwrap().stop().unwrap()
    }

    fn apply(&self, direction: Direction, change: LinkChange) {
        self.emulator.as_ref().unwrap().apply_to(direction, change);
        std::thread::sleep(CHANGE_SETTLES);
    }
}

fn socket(ns: &Netns, addr: Ipv4Addr, port: u16) -> UdpSocket {
    let s = ns.run(move || UdpSocket::bind((addr, port))).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    s
}

/// Sends `count` datagrams from `tx` to `to`, 1 ms apart, and counts what `rx` receives
/// until nothing has come for its read timeout after the last send.
fn send_and_count(tx: &UdpSocket, rx: &UdpSocket, to: SocketAddr, count: u32) -> u32 {
    let sent = Arc::new(AtomicBool::new(false));
    let receiver = {
        let (rx, sent) = (rx.try_clone().unwrap(), sent.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            let mut got = 0;
            loop {
                match rx.recv(&mut buf) {
                    Ok(_) => got += 1,
                    Err(_) if sent.load(Ordering::Relaxed) => return got,
                    Err(_) => {}
                }
            }
        })
    };
    for i in 0..count {
        tx.send_to(&i.to_be_bytes(), to).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    sent.store(true, Ordering::Relaxed);
    receiver.join().unwrap()
}

#[test]
fn arp_and_multicast_cross_a_bridged_emulator_unchanged() {
    if !root_or_skip("arp_and_multicast_cross_a_bridged_emulator_unchanged") {
        return;
    }
    let mut cable = Cable::new(LinkConfig::default(), LinkConfig::default());
    // Unicast needs ARP answered across the emulator first.
    let (tx, rx) = (socket(&cable.a, A, 0), socket(&cable.b, B, 7001));
    assert_eq!(send_and_count(&tx, &rx, SocketAddr::from((B, 7001)), 200), 200, "unicast a → b");
    // Multicast: b joins the group on its interface; a sends to the group.
    let group_rx = cable.b.run(|| UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 7002))).unwrap();
    group_rx.join_multicast_v4(&GROUP, &B).unwrap();
    group_rx.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    assert_eq!(send_and_count(&tx, &group_rx, SocketAddr::from((GROUP, 7002)), 200), 200, "multicast a → group");
    let report = cable.stop();
    assert!(report.uplink.delivered >= 400 && report.downlink.delivered >= 1, "{report:?}");
    assert_eq!(report.uplink.not_ipv4 + report.downlink.not_ipv4, 0, "bridging carries every frame");
    assert_eq!(report.uplink.lost + report.downlink.lost, 0);
}

#[test]
fn each_direction_has_its_own_loss_and_a_change_takes_effect_mid_run() {
    if !root_or_skip("each_direction_has_its_own_loss_and_a_change_takes_effect_mid_run") {
        return;
    }
    let mut cable = Cable::new(LinkConfig::default(), LinkConfig::default());
    let (a, b) = (socket(&cable.a, A, 7003), socket(&cable.b, B, 7004));
    let (to_a, to_b) = (SocketAddr::from((A, 7003)), SocketAddr::from((B, 7004)));
    // ARP resolved both ways on the clean cable, so no datagram below waits for it.
    assert_eq!(send_and_count(&a, &b, to_b, 20), 20);
    assert_eq!(send_and_count(&b, &a, to_a, 20), 20);
    cable.apply(Direction::Uplink, LinkChange::Loss(LossModel::Bernoulli(0.3)));
    let up = send_and_count(&a, &b, to_b, 1000);
    let down = send_and_count(&b, &a, to_a, 1000);
    // 1000 draws at 30 %: the standard deviation is 14.5 datagrams; 600..800 is ±6.9 of them.
    assert!((600..=800).contains(&up), "a → b loses 30 %: {up} of 1000 arrived");
    assert_eq!(down, 1000, "b → a has no loss");
    // Mid-run: the uplink becomes clean and the downlink loses everything.
    cable.apply(Direction::Uplink, LinkChange::Loss(LossModel::None));
    cable.apply(Direction::Downlink, LinkChange::Loss(LossModel::Bernoulli(1.0)));
    assert_eq!(send_and_count(&a, &b, to_b, 300), 300, "a → b after the change");
    assert_eq!(send_and_count(&b, &a, to_a, 300), 0, "b → a after the change");
    let report = cable.stop();
    assert_eq!(u64::from(1000 - up), report.uplink.lost, "the uplink's losses are the datagrams a → b missed");
    assert!(report.downlink.lost >= 300, "{:?}", report.downlink);
}

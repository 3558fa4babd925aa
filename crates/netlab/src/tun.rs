//! The raw-IP testbed: a robot whose uplink is a layer-3 device, as an LTE modem in
//! raw-IP mode (`wwan0`, qmi_wwan) or a VPN tunnel is. Its packets start at the IP
//! header, so the classifier takes its raw-IP parse (`l2_header = 0`).
//!
//! ```text
//!  robot [bxtun0 10.203.0.1, fd00:203::1] ~~ forwarder (one thread) ~~ [bxtun0 10.203.0.2, fd00:203::2] base
//! ```
//! Each namespace has a TUN device; a userspace forwarder holds both devices' file
//! descriptors and carries every packet across at a real-time priority (see
//! `become_a_link`). The uplink goes through `bauxite_core::link`'s model, as in the
//! link emulator (a modem's rate and buffer, delay, loss; a packet counts its IP
//! length plus mm-link's 4-byte TUN header); the downlink is unlimited. On the way it
//! checks every uplink packet's checksums (IPv4 header, TCP, UDP over IPv4 and IPv6)
//! and counts packets by DSCP, so a test can tell that a DSCP rewrite on a raw-IP
//! device kept every checksum right.

#![allow(unsafe_code)] // TUNSETIFF on an ifreq: the kernel's TUN API has no safe wrapper in std or libc.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use bauxite_core::link::{Admission, LinkConfig, LinkModel, Outcome};
use bauxite_sys::{Netns, monotonic_ns, unique_name};

use crate::NetlabError;
use crate::emulator::TUN_HDR_LEN;
use crate::packet_socket::{become_a_link, wait_readable};

/// The TUN device's name in both namespaces.
pub const TUN_IFACE: &str = "bxtun0";
/// The robot's IPv4 address.
pub const TUN_ROBOT_V4: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 1);
/// The base's IPv4 address.
pub const TUN_BASE_V4: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 2);
/// The robot's IPv6 address.
pub const TUN_ROBOT_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x203, 0, 0, 0, 0, 0, 1);
/// The base's IPv6 address.
pub const TUN_BASE_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x203, 0, 0, 0, 0, 0, 2);

/// `TUNSETIFF` (`_IOW('T', 202, int)`).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// The longest the forwarder waits before it looks at its stop flag.
const POLL_NS: u64 = 20_000_000;

/// What the forwarder saw of the robot's uplink.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UplinkReport {
    /// IPv4 packets carried.
    pub ipv4: u64,
    /// IPv6 packets carried.
    pub ipv6: u64,
    /// IPv4 packets whose header checksum was wrong.
    pub bad_ipv4_header: u64,
    /// TCP or UDP packets (IPv4 or IPv6) whose checksum was wrong.
    pub bad_l4: u64,
    /// TCP and UDP packets whose checksum was verified.
    pub l4_checked: u64,
    /// Packets per DSCP value.
    pub by_dscp: BTreeMap<u8, u64>,
    /// Packets the uplink's full buffer refused.
    pub queue_full: u64,
    /// Packets lost on the uplink after its bottleneck (the model's loss).
    pub lost: u64,
}

/// The running forwarder: its stop flag and its thread.
struct Forwarder {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<UplinkReport, NetlabError>>,
}

/// robot — forwarder — base over TUN devices; torn down on drop (also when a test
/// panics): the forwarder stops first, then the namespaces go with their devices.
pub struct TunTestbed {
    forwarder: Option<Forwarder>,
    /// The robot's namespace (its uplink is [`TUN_IFACE`]).
    pub robot: Netns,
    /// The base station's namespace.
    pub base: Netns,
}

impl TunTestbed {
    /// Builds the two namespaces, their TUN devices and addresses, and starts the
    /// forwarder with `uplink` as the robot → base link.
    pub fn create(uplink: LinkConfig) -> Result<Self, NetlabError> {
        let robot = Netns::create(&unique_name("tunrobot"))?;
        let base = Netns::create(&unique_name("tunbase"))?;
        let robot_tun = robot.run(|| open_tun(TUN_IFACE)).map_err(NetlabError::socket("creating the robot's TUN"))?;
        let base_tun = base.run(|| open_tun(TUN_IFACE)).map_err(NetlabError::socket("creating the base's TUN"))?;
        for (ns, v4, peer, v6) in
            [(&robot, TUN_ROBOT_V4, TUN_BASE_V4, TUN_ROBOT_V6), (&base, TUN_BASE_V4, TUN_ROBOT_V4, TUN_BASE_V6)]
        {
            ns.ip(&["addr", "add", &v4.to_string(), "peer", &peer.to_string(), "dev", TUN_IFACE])?;
            ns.ip(&["-6", "addr", "add", &format!("{v6}/64"), "dev", TUN_IFACE, "nodad"])?;
            ns.ip(&["link", "set", TUN_IFACE, "up"])?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || Forwarding::new(&uplink).run(&robot_tun, &base_tun, &stop))
        };
        Ok(Self { forwarder: Some(Forwarder { stop, thread }), robot, base })
    }

    /// Stops the forwarder and returns what it saw of the uplink.
    pub fn stop_forwarder(&mut self) -> Result<UplinkReport, NetlabError> {
        let Some(Forwarder { stop, thread }) = self.forwarder.take() else {
            return Err(NetlabError::Emulator("the TUN forwarder was already stopped".into()));
        };
        stop.store(true, Ordering::Relaxed);
        thread.join().map_err(|_| NetlabError::Emulator("the TUN forwarder panicked".into()))?
    }
}

impl Drop for TunTestbed {
    fn drop(&mut self) {
        let _ = self.stop_forwarder();
    }
}

/// Creates TUN device `name` (raw IP: no packet-information header) in the calling
/// thread's namespace; the device lives as long as the returned file.
fn open_tun(name: &str) -> std::io::Result<File> {
    let file = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open("/dev/net/tun")?;
    // SAFETY: ifreq is plain data; all-zero is a valid value to fill in.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in request.ifr_name.iter_mut().zip(name.bytes().take(libc::IFNAMSIZ - 1)) {
        *dst = src as libc::c_char;
    }
    request.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one ifreq, which outlives the call.
    if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut request) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

/// The forwarder's state: the uplink's model and the packets in it.
struct Forwarding {
    uplink: LinkModel,
    in_link: HashMap<u64, Vec<u8>>,
    next_token: u64,
    outcomes: Vec<Outcome>,
    report: UplinkReport,
}

impl Forwarding {
    fn new(uplink: &LinkConfig) -> Self {
        Self {
            uplink: LinkModel::new(uplink, monotonic_ns()),
            in_link: HashMap::new(),
            next_token: 0,
            outcomes: Vec::new(),
            report: UplinkReport::default(),
        }
    }

    /// Carries packets between the two devices until `stop`: the uplink's through the
    /// model (checked on the way in), the downlink's at once.
    fn run(mut self, robot: &File, base: &File, stop: &AtomicBool) -> Result<UplinkReport, NetlabError> {
        become_a_link();
        let mut buf = vec![0u8; 65_536];
        let fds = [robot.as_raw_fd(), base.as_raw_fd()];
        while !stop.load(Ordering::Relaxed) {
            let now = monotonic_ns();
            let wait = self.uplink.next_event_ns().map_or(POLL_NS, |at| at.saturating_sub(now).min(POLL_NS));
            wait_readable(&fds, Some(wait)).map_err(NetlabError::socket("waiting for TUN packets"))?;
            while let Some(n) = read_packet(robot, &mut buf)? {
                self.admit(&buf[..n]);
            }
            self.deliver_due(base)?;
            while let Some(n) = read_packet(base, &mut buf)? {
                write_packet(robot, &buf[..n])?;
            }
        }
        Ok(self.report)
    }

    /// Checks one uplink packet and puts it into the link.
    fn admit(&mut self, packet: &[u8]) {
        inspect(packet, &mut self.report);
        let token = self.next_token;
        self.next_token += 1;
        match self.uplink.enqueue(monotonic_ns(), token, packet.len() as u32 + TUN_HDR_LEN) {
            Admission::Queued => {
                self.in_link.insert(token, packet.to_vec());
            }
            Admission::QueueFull => self.report.queue_full += 1,
        }
    }

    /// Writes to the base every packet the link has delivered by now.
    fn deliver_due(&mut self, base: &File) -> Result<(), NetlabError> {
        self.uplink.poll(monotonic_ns(), &mut self.outcomes);
        for outcome in std::mem::take(&mut self.outcomes) {
            let Some(packet) = self.in_link.remove(&outcome.token) else { continue };
            match outcome.delivered_ns {
                Some(_) => write_packet(base, &packet)?,
                None => self.report.lost += 1,
            }
        }
        Ok(())
    }
}

fn read_packet(mut tun: &File, buf: &mut [u8]) -> Result<Option<usize>, NetlabError> {
    match tun.read(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(NetlabError::socket("reading a TUN packet")(e)),
    }
}

fn write_packet(mut tun: &File, packet: &[u8]) -> Result<(), NetlabError> {
    match tun.write(packet) {
        Ok(_) => Ok(()),
        // The far device's queue is full: a link drops the packet, as a modem would.
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
        Err(e) => Err(NetlabError::socket("writing a TUN packet")(e)),
    }
}

/// Counts one uplink packet and checks its checksums.
fn inspect(packet: &[u8], report: &mut UplinkReport) {
    let Some(ip) = IpView::parse(packet) else { return };
    *report.by_dscp.entry(ip.dscp).or_default() += 1;
    if ip.version == 4 {
        report.ipv4 += 1;
        if fold(sum(&packet[..ip.header_len])) != 0xffff {
            report.bad_ipv4_header += 1;
        }
    } else {
        report.ipv6 += 1;
    }
    if let Some(ok) = ip.l4_checksum_ok(packet) {
        report.l4_checked += 1;
        if !ok {
            report.bad_l4 += 1;
        }
    }
}

/// The parts of an IP header the checks need.
#[derive(Debug, PartialEq, Eq)]
struct IpView {
    version: u8,
    dscp: u8,
    header_len: usize,
    protocol: u8,
    /// Whether the L4 header is in this packet (not a later fragment, not behind an
    /// IPv6 extension header, which the test traffic never has).
    l4_here: bool,
}

impl IpView {
    fn parse(p: &[u8]) -> Option<Self> {
        match p.first()? >> 4 {
            4 if p.len() >= 20 => {
                let fragment_offset = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
                Some(Self {
                    version: 4,
                    dscp: p[1] >> 2,
                    header_len: usize::from(p[0] & 0x0f) * 4,
                    protocol: p[9],
                    l4_here: fragment_offset == 0,
                })
            }
            6 if p.len() >= 40 => Some(Self {
                version: 6,
                dscp: ((p[0] & 0x0f) << 2) | (p[1] >> 6),
                header_len: 40,
                protocol: p[6],
                l4_here: true,
            }),
            _ => None,
        }
    }

    /// Whether the TCP or UDP checksum is right; `None` for other packets and for a
    /// UDP datagram over IPv4 that carries no checksum (0).
    fn l4_checksum_ok(&self, p: &[u8]) -> Option<bool> {
        if !self.l4_here || !matches!(self.protocol, 6 | 17) || p.len() < self.header_len + 8 {
            return None;
        }
        let segment = &p[self.header_len..];
        if self.version == 4 && self.protocol == 17 && segment[6..8] == [0, 0] {
            return None;
        }
        let length = segment.len() as u32;
        let pseudo = if self.version == 4 {
            sum(&p[12..20]) + u32::from(self.protocol) + length
        } else {
            sum(&p[8..40]) + u32::from(self.protocol) + length
        };
        Some(fold(pseudo + sum(segment)) == 0xffff)
    }
}

/// The one's-complement sum of `bytes` as 16-bit big-endian words, not yet folded.
fn sum(bytes: &[u8]) -> u32 {
    bytes.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum()
}

/// Folds a sum to 16 bits (0xffff when a checksum over it is right).
fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 UDP datagram from 10.0.0.1:1000 to 10.0.0.2:7401 with DSCP EF and
    /// both checksums right (computed by hand from the RFC 1071 sum).
    fn udp4() -> Vec<u8> {
        let mut p = vec![
            0x45,
            46 << 2,
            0,
            32,
            0,
            1,
            0,
            0,
            64,
            17,
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2, // IPv4
            0x03,
            0xe8,
            0x1c,
            0xe9,
            0,
            12,
            0,
            0,
            b'p',
            b'i',
            b'n',
            b'g', // UDP + payload
        ];
        let header = !fold(sum(&p[..20]));
        p[10..12].copy_from_slice(&header.to_be_bytes());
        let pseudo = sum(&p[12..20]) + 17 + 12;
        let udp = !fold(pseudo + sum(&p[20..]));
        p[26..28].copy_from_slice(&udp.to_be_bytes());
        p
    }

    #[test]
    fn right_checksums_pass_and_a_changed_byte_fails_them() {
        let mut report = UplinkReport::default();
        inspect(&udp4(), &mut report);
        assert_eq!((report.ipv4, report.bad_ipv4_header, report.l4_checked, report.bad_l4), (1, 0, 1, 0));
        assert_eq!(report.by_dscp.get(&46), Some(&1));

        let mut tos_changed = udp4();
        tos_changed[1] = 8 << 2; // a DSCP rewrite without the checksum update
        let mut payload_changed = udp4();
        payload_changed[31] ^= 1;
        let mut report = UplinkReport::default();
        inspect(&tos_changed, &mut report);
        inspect(&payload_changed, &mut report);
        assert_eq!((report.bad_ipv4_header, report.bad_l4), (1, 1), "{report:?}");
    }

    #[test]
    fn ipv6_traffic_class_and_udp_checksum_are_read() {
        let mut p = vec![0u8; 48];
        p[0] = 0x60 | (46 >> 2);
        p[1] = (46 & 3) << 6;
        p[4..6].copy_from_slice(&8u16.to_be_bytes());
        p[6] = 17;
        p[7] = 64;
        p[23] = 1; // ::1 -> ::2
        p[39] = 2;
        p[40..48].copy_from_slice(&[0x03, 0xe8, 0x1c, 0xe9, 0, 8, 0, 0]);
        let pseudo = sum(&p[8..40]) + 17 + 8;
        let udp = !fold(pseudo + sum(&p[40..]));
        p[46..48].copy_from_slice(&udp.to_be_bytes());
        let view = IpView::parse(&p).unwrap();
        assert_eq!((view.version, view.dscp, view.protocol), (6, 46, 17));
        assert_eq!(view.l4_checksum_ok(&p), Some(true));
        p[41] ^= 0xff;
        assert_eq!(view.l4_checksum_ok(&p), Some(false));
    }
}

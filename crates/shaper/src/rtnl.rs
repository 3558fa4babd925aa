//! What the shaper reads from the kernel over rtnetlink: links, the root qdisc, the
//! HTB classes' counters, the eBPF filters on the clsact egress hook, link events and
//! the network namespace's cookie.
//!
//! A netlink socket belongs to the network namespace of the thread that opened it,
//! for as long as it lives. So an [`Rtnl`] opened by a thread placed in a namespace
//! (`setns`) keeps reading that namespace from any thread: this is what lets the
//! demo read the shaper in-process, and `status` never spawn `tc` or `ip`. The
//! daemon reads the class counters every few milliseconds; spawning `tc -s` that
//! often would cost more CPU than the shaping.

use std::os::fd::AsRawFd;

use netlink_packet_core::{NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::link::{LinkAttribute, LinkLayerType, LinkMessage};
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage, TcOption, TcStats2};
use netlink_packet_utils::nla::Nla;
use netlink_sys::protocols::NETLINK_ROUTE;
use netlink_sys::{Socket, SocketAddr};

/// One class's counters (`tc -s class show`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// `major:minor` as a 32-bit class id.
    pub classid: u32,
    /// Bytes sent (counted at dequeue).
    pub bytes: u64,
    /// Packets sent.
    pub packets: u64,
    /// Packets dropped by the class's queue.
    pub drops: u64,
    /// Times the class was over its rate.
    pub overlimits: u64,
    /// Packets waiting.
    pub qlen: u32,
    /// Bytes waiting.
    pub backlog: u32,
}

/// A network interface as the shaper needs to know it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Its index: unique in the namespace and not reused while the namespace lives
    /// (the kernel allocates indices upward), so it tells a recreated interface of
    /// the same name from the one `up` shaped.
    pub index: u32,
    /// Its MTU.
    pub mtu: u32,
    /// Its `gso_max_size`.
    pub gso_max_size: u32,
    /// Packets start with an Ethernet header (Ethernet, veth, loopback) rather than
    /// raw IP (tun, wwan modems, WireGuard).
    pub l2_header: bool,
}

/// The root qdisc of an interface: its kind and handle major (`0` for the kernel's
/// default qdiscs, which have no handle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootQdisc {
    /// `htb`, `fq_codel`, `noqueue`, …
    pub kind: String,
    /// The handle's major.
    pub major: u16,
}

/// A route netlink socket for requests and dumps.
pub struct Rtnl {
    socket: Socket,
    buffer: Vec<u8>,
    sequence: u32,
}

fn invalid(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}

impl Rtnl {
    /// Opens a route netlink socket in the calling thread's network namespace.
    pub fn new() -> std::io::Result<Self> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(Self { socket, buffer: vec![0; 64 * 1024], sequence: 0 })
    }

    /// The socket's network namespace cookie (`SO_NETNS_COOKIE`, Linux 5.14): a
    /// number the kernel never gives another namespace until reboot, unlike the
    /// namespace's inode, which it reuses.
    pub fn netns_cookie(&self) -> std::io::Result<u64> {
        const SO_NETNS_COOKIE: libc::c_int = 71;
        let mut cookie = 0u64;
        let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
        #[allow(unsafe_code)]
        // SAFETY: getsockopt on our own open socket, writing at most `len` bytes into `cookie`.
        let rc = unsafe {
            libc::getsockopt(
                self.socket.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_NETNS_COOKIE,
                (&mut cookie as *mut u64).cast(),
                &mut len,
            )
        };
        if rc == 0 { Ok(cookie) } else { Err(std::io::Error::last_os_error()) }
    }

    /// Sends `message` and collects the answers until the end of the dump (or the
    /// one answer of a plain request).
    fn request(&mut self, message: RouteNetlinkMessage, dump: bool) -> std::io::Result<Vec<RouteNetlinkMessage>> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
        header.sequence_number = self.sequence;
        let mut packet = NetlinkMessage::new(header, NetlinkPayload::from(message));
        packet.finalize();
        let mut out = vec![0; packet.buffer_len()];
        packet.serialize(&mut out);
        self.socket.send(&out, 0)?;

        let mut answers = Vec::new();
        loop {
            let size = self.socket.recv(&mut &mut self.buffer[..], 0)?;
            let mut offset = 0;
            while offset < size {
                let message =
                    NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buffer[offset..size]).map_err(invalid)?;
                let length = message.header.length as usize;
                let ours = message.header.sequence_number == self.sequence;
                match message.payload {
                    NetlinkPayload::Done(_) if ours => return Ok(answers),
                    NetlinkPayload::Error(e) if ours => return Err(e.to_io()),
                    NetlinkPayload::InnerMessage(inner) if ours => {
                        answers.push(inner);
                        if !dump {
                            return Ok(answers);
                        }
                    }
                    _ => {}
                }
                if length == 0 {
                    break;
                }
                offset += length;
            }
        }
    }

    /// The interface called `name`, or `None` if there is none.
    pub fn link(&mut self, name: &str) -> std::io::Result<Option<Link>> {
        let mut request = LinkMessage::default();
        request.attributes.push(LinkAttribute::IfName(name.to_string()));
        match self.request(RouteNetlinkMessage::GetLink(request), false) {
            Ok(answers) => Ok(answers.into_iter().find_map(|m| match m {
                RouteNetlinkMessage::NewLink(link) => Some(parse_link(&link)),
                _ => None,
            })),
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The root qdisc of the interface with index `ifindex`.
    pub fn root_qdisc(&mut self, ifindex: u32) -> std::io::Result<Option<RootQdisc>> {
        let mut request = TcMessage::default();
        request.header.index = ifindex as i32;
        let answers = self.request(RouteNetlinkMessage::GetQueueDiscipline(request), true)?;
        Ok(answers.into_iter().find_map(|m| match m {
            RouteNetlinkMessage::NewQueueDiscipline(q)
                if q.header.index == ifindex as i32 && q.header.parent == TcHandle::ROOT =>
            {
                let kind = q.attributes.iter().find_map(|a| match a {
                    TcAttribute::Kind(k) => Some(k.clone()),
                    _ => None,
                })?;
                Some(RootQdisc { kind, major: q.header.handle.major })
            }
            _ => None,
        }))
    }

    /// Every class of the interface with index `ifindex`.
    pub fn classes(&mut self, ifindex: u32) -> std::io::Result<Vec<ClassStats>> {
        let mut request = TcMessage::default();
        request.header.index = ifindex as i32;
        let answers = self.request(RouteNetlinkMessage::GetTrafficClass(request), true)?;
        Ok(answers
            .iter()
            .filter_map(|m| match m {
                RouteNetlinkMessage::NewTrafficClass(class) => Some(parse_class(class)),
                _ => None,
            })
            .collect())
    }
}

/// The clsact egress hook (`tc filter show dev IF egress`): parent `ffff:fff3`.
const CLSACT_EGRESS: TcHandle = TcHandle { major: 0xffff, minor: TcHandle::MIN_EGRESS };
/// `TCA_BPF_NAME`: the attribute of a bpf filter that holds its program's name.
const TCA_BPF_NAME: u16 = 7;

impl Rtnl {
    /// The program names of the bpf filters on the clsact egress hook of interface
    /// `ifindex` (one entry per filter; none without a clsact qdisc). tcx links are
    /// not filters and do not show here.
    pub fn egress_bpf_filters(&mut self, ifindex: u32) -> std::io::Result<Vec<String>> {
        let mut request = TcMessage::default();
        request.header.index = ifindex as i32;
        request.header.parent = CLSACT_EGRESS;
        let answers = match self.request(RouteNetlinkMessage::GetTrafficFilter(request), true) {
            Ok(answers) => answers,
            // No clsact qdisc: no hook, so no filters.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(answers
            .iter()
            .filter_map(|m| match m {
                RouteNetlinkMessage::NewTrafficFilter(f) => bpf_filter_name(f),
                _ => None,
            })
            .collect())
    }
}

/// The program name of a bpf filter; `None` for other filters (and for the dump's
/// per-priority chain headers, which carry no options). netlink-packet-route does not
/// know `bpf` filters: their options come as one attribute holding the nested ones.
fn bpf_filter_name(filter: &TcMessage) -> Option<String> {
    if !filter.attributes.iter().any(|a| matches!(a, TcAttribute::Kind(k) if k == "bpf")) {
        return None;
    }
    filter.attributes.iter().find_map(|a| match a {
        TcAttribute::Options(options) => options.iter().find_map(|o| match o {
            TcOption::Other(nested) => {
                let mut value = vec![0; nested.value_len()];
                nested.emit_value(&mut value);
                nested_attribute(&value, TCA_BPF_NAME).map(|name| {
                    String::from_utf8_lossy(name.split(|b| *b == 0).next().unwrap_or_default()).into_owned()
                })
            }
            _ => None,
        }),
        _ => None,
    })
}

/// The value of the first attribute of type `kind` in a run of netlink attributes.
fn nested_attribute(mut buffer: &[u8], kind: u16) -> Option<&[u8]> {
    while buffer.len() >= 4 {
        let length = usize::from(u16::from_ne_bytes([buffer[0], buffer[1]]));
        let nla_kind = u16::from_ne_bytes([buffer[2], buffer[3]]) & 0x3fff;
        if length < 4 || length > buffer.len() {
            return None;
        }
        if nla_kind == kind {
            return Some(&buffer[4..length]);
        }
        buffer = &buffer[length.next_multiple_of(4).min(buffer.len())..];
    }
    None
}

fn parse_link(link: &LinkMessage) -> Link {
    let mut out = Link {
        index: link.header.index,
        mtu: 1500,
        gso_max_size: 0,
        l2_header: matches!(link.header.link_layer_type, LinkLayerType::Ether | LinkLayerType::Loopback),
    };
    for attribute in &link.attributes {
        match attribute {
            LinkAttribute::Mtu(m) => out.mtu = *m,
            LinkAttribute::GsoMaxSize(g) => out.gso_max_size = *g,
            _ => {}
        }
    }
    out
}

fn parse_class(class: &TcMessage) -> ClassStats {
    let handle = class.header.handle;
    let mut stats =
        ClassStats { classid: (u32::from(handle.major) << 16) | u32::from(handle.minor), ..Default::default() };
    for attribute in &class.attributes {
        if let TcAttribute::Stats2(parts) = attribute {
            for part in parts {
                match part {
                    TcStats2::Basic(b) => {
                        stats.bytes = b.bytes;
                        stats.packets = u64::from(b.packets);
                    }
                    TcStats2::Queue(q) => {
                        stats.drops = u64::from(q.drops);
                        stats.overlimits = u64::from(q.overlimits);
                        stats.qlen = q.qlen;
                        stats.backlog = q.backlog;
                    }
                    _ => {}
                }
            }
        }
    }
    stats
}

/// What happened to the watched interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkChange {
    /// The interface was deleted (`RTM_DELLINK`), or the name now belongs to
    /// another interface (a new index).
    Gone,
}

/// Link events (`RTM_NEWLINK`/`RTM_DELLINK`) of one interface, read without
/// blocking from the daemon's control loop.
pub struct LinkWatch {
    socket: Socket,
    buffer: Vec<u8>,
    name: String,
    index: u32,
}

impl LinkWatch {
    /// Subscribes to link events in the calling thread's network namespace for the
    /// interface `name` with index `index`.
    pub fn new(name: &str, index: u32) -> std::io::Result<Self> {
        const RTMGRP_LINK: u32 = 1;
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind(&SocketAddr::new(0, RTMGRP_LINK))?;
        socket.set_non_blocking(true)?;
        Ok(Self { socket, buffer: vec![0; 64 * 1024], name: name.to_string(), index })
    }

    /// Reads the events queued since the last call; `Some(Gone)` if the interface
    /// was deleted or replaced. When the kernel dropped events (the socket's buffer
    /// overflowed), it asks for the link by name instead.
    pub fn poll(&mut self) -> std::io::Result<Option<LinkChange>> {
        loop {
            let size = match self.socket.recv(&mut &mut self.buffer[..], 0) {
                Ok(size) => size,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    let now = Rtnl::new()?.link(&self.name)?;
                    return Ok(now.is_none_or(|l| l.index != self.index).then_some(LinkChange::Gone));
                }
                Err(e) => return Err(e),
            };
            if link_events(&self.buffer[..size]).any(|e| self.changes_us(&e)) {
                return Ok(Some(LinkChange::Gone));
            }
        }
    }
}

/// A link event: its type, the link's index and (when present) its name.
struct LinkEvent {
    kind: u16,
    index: u32,
    name: Option<String>,
}

impl LinkWatch {
    /// Whether `event` deletes our interface or gives its name to another.
    fn changes_us(&self, event: &LinkEvent) -> bool {
        const RTM_NEWLINK: u16 = 16;
        const RTM_DELLINK: u16 = 17;
        match event.kind {
            RTM_DELLINK => event.index == self.index,
            RTM_NEWLINK => event.index != self.index && event.name.as_deref() == Some(self.name.as_str()),
            _ => false,
        }
    }
}

/// The link events in one datagram, read field by field (`nlmsghdr`, `ifinfomsg`,
/// `rtattr`s) rather than with `netlink-packet-route`, which refuses whole messages
/// whose per-family attributes are newer than it knows; only the index and the name
/// matter here.
fn link_events(buffer: &[u8]) -> impl Iterator<Item = LinkEvent> + '_ {
    const NLMSG_HDRLEN: usize = 16;
    const IFINFOMSG_LEN: usize = 16;
    const IFLA_IFNAME: u16 = 3;
    let u16_at = |b: &[u8], i: usize| b.get(i..i + 2).map(|v| u16::from_ne_bytes([v[0], v[1]]));
    let u32_at = |b: &[u8], i: usize| b.get(i..i + 4).map(|v| u32::from_ne_bytes([v[0], v[1], v[2], v[3]]));
    let mut offset = 0;
    std::iter::from_fn(move || {
        let message = buffer.get(offset..)?;
        let length = u32_at(message, 0)? as usize;
        if length < NLMSG_HDRLEN || length > message.len() {
            return None;
        }
        offset += (length + 3) & !3;
        let message = &message[..length];
        let kind = u16_at(message, 4)?;
        let index = u32_at(message, NLMSG_HDRLEN + 4).unwrap_or(0);
        let mut name = None;
        let mut at = NLMSG_HDRLEN + IFINFOMSG_LEN;
        while let (Some(len), Some(kind)) = (u16_at(message, at), u16_at(message, at + 2)) {
            let len = usize::from(len);
            if len < 4 || at + len > message.len() {
                break;
            }
            if kind == IFLA_IFNAME {
                let value = &message[at + 4..at + len];
                name = Some(String::from_utf8_lossy(value.split(|b| *b == 0).next().unwrap_or(value)).into_owned());
            }
            at += (len + 3) & !3;
        }
        Some(LinkEvent { kind, index, name })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `nlmsghdr` + `ifinfomsg` + an `IFLA_IFNAME` attribute, as the kernel sends.
    fn message(kind: u16, index: u32, name: &str) -> Vec<u8> {
        let mut attr = Vec::new();
        let value = [name.as_bytes(), &[0]].concat();
        attr.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
        attr.extend_from_slice(&3u16.to_ne_bytes());
        attr.extend_from_slice(&value);
        attr.resize(attr.len().next_multiple_of(4), 0);
        let mut m = vec![0u8; 32];
        m[0..4].copy_from_slice(&((32 + attr.len()) as u32).to_ne_bytes());
        m[4..6].copy_from_slice(&kind.to_ne_bytes());
        m[20..24].copy_from_slice(&index.to_ne_bytes());
        m.extend_from_slice(&attr);
        m
    }

    #[test]
    fn a_bpf_filters_name_is_found_among_its_nested_attributes() {
        // TCA_BPF_FD (6) then TCA_BPF_NAME (7) "bauxite_tc\0" padded to 4 bytes.
        let mut nested = vec![8, 0, 6, 0, 3, 0, 0, 0];
        nested.extend_from_slice(&[15, 0, 7, 0]);
        nested.extend_from_slice(b"bauxite_tc\0\0");
        assert_eq!(nested_attribute(&nested, 7), Some(&b"bauxite_tc\0"[..]));
        assert_eq!(nested_attribute(&nested, 9), None);
        assert_eq!(nested_attribute(&[200, 0, 7, 0], 7), None, "a length past the end is no attribute");
    }

    #[test]
    fn link_events_tell_a_deleted_or_replaced_interface_from_others() {
        let events: Vec<_> =
            link_events(&[message(16, 7, "bx0peer"), message(17, 5, "bx0"), message(16, 6, "bx0")].concat())
                .map(|e| (e.kind, e.index, e.name))
                .collect();
        assert_eq!(events, [(16, 7, Some("bx0peer".into())), (17, 5, Some("bx0".into())), (16, 6, Some("bx0".into()))]);
        let watch = |index| LinkWatch {
            socket: Socket::new(NETLINK_ROUTE).unwrap(),
            buffer: Vec::new(),
            name: "bx0".into(),
            index,
        };
        let event = |kind, index, name: &str| LinkEvent { kind, index, name: Some(name.into()) };
        let ours = watch(5);
        assert!(ours.changes_us(&event(17, 5, "bx0")), "deleted");
        assert!(ours.changes_us(&event(16, 6, "bx0")), "its name on a new index");
        assert!(!ours.changes_us(&event(16, 5, "bx0")), "a change of the same interface");
        assert!(!ours.changes_us(&event(16, 7, "bx0peer")), "another interface");
        assert!(!ours.changes_us(&event(17, 7, "bx0peer")), "another interface deleted");
        assert_eq!(link_events(&[1, 2, 3]).count(), 0, "a truncated datagram yields nothing");
    }
}

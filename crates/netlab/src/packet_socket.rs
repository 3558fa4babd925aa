//! An `AF_PACKET` socket bound to one interface, for the link emulator.
//!
//! It receives the IPv4 frames (or, for a bridging emulator, every frame) that arrive
//! on the interface (not the ones sent from it: `PACKET_IGNORE_OUTGOING`, Linux 4.20)
//! and sends frames out of it. Each frame
//! carries a virtio-net header (`PACKET_VNET_HDR`) both ways: veth hands locally
//! generated TCP and UDP on with their checksum still to be filled in
//! (`CHECKSUM_PARTIAL`), and passing the header through tells the receiving kernel
//! so, instead of the emulator computing every checksum or the far end dropping
//! the packet as corrupt.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The virtio-net header in front of every frame (`struct virtio_net_hdr`).
pub const VNET_HDR_LEN: usize = 10;

/// A packet socket on one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

fn check(rc: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(rc)
}

impl PacketSocket {
    /// Opens a non-blocking socket on `iface` of the calling thread's network namespace,
    /// receiving IPv4 frames, or every frame when `all_frames`.
    pub fn open(iface: &str, all_frames: bool) -> io::Result<Self> {
        let name = std::ffi::CString::new(iface).map_err(|_| io::Error::other("interface name with a NUL"))?;
        // SAFETY: `name` is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no network interface called `{iface}`")));
        }
        let ethertype = if all_frames { libc::ETH_P_ALL } else { libc::ETH_P_IP };
        let protocol = (ethertype as u16).to_be() as libc::c_int;
        // SAFETY: plain socket(2) call; the result is checked before use.
        let raw = check(
            unsafe {
                libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, protocol)
            },
            "socket(AF_PACKET)",
        )?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let socket = Self { fd, ifindex };
        socket.set_option(libc::SOL_PACKET, libc::PACKET_VNET_HDR, 1, "PACKET_VNET_HDR")?;
        socket.set_option(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")?;
        // A burst of a deep modem buffer's worth must not overflow the receive queue.
        socket.set_option(libc::SOL_SOCKET, libc::SO_RCVBUF, 4 << 20, "SO_RCVBUF")?;
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value to fill in.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol as u16;
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a valid sockaddr_ll of the length passed.
        check(
            unsafe {
                libc::bind(
                    socket.fd.as_raw_fd(),
                    (&addr as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            },
            "bind(AF_PACKET)",
        )?;
        Ok(socket)
    }

    fn set_option(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int, what: &str) -> io::Result<()> {
        // SAFETY: `value` is a valid c_int of the length passed.
        check(
            unsafe {
                libc::setsockopt(
                    self.fd.as_raw_fd(),
                    level,
                    name,
                    (&value as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as u32,
                )
            },
            what,
        )
        .map(drop)
    }

    /// Receives one frame (virtio-net header first) into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
        }
        let n = n as usize;
        if n > buf.len() {
            return Err(io::Error::other(format!("a {n}-byte frame does not fit the {}-byte buffer", buf.len())));
        }
        Ok(Some(n))
    }

    /// Sends one frame (virtio-net header first) out of the interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value to fill in.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = self.ifindex;
        // SAFETY: `frame` is valid for reads of its length and `addr` of the length passed.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                0,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if n < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (`None`: no timeout),
/// with nanosecond precision (ppoll). Returns which descriptors are readable.
pub fn wait_readable(fds: &[RawFd], timeout_ns: Option<u64>) -> io::Result<Vec<bool>> {
    let mut polls: Vec<libc::pollfd> =
        fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let timeout = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let timeout_ptr = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `polls` is a valid array of its length; the timespec outlives the call.
    let rc = unsafe { libc::ppoll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout_ptr, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(vec![false; fds.len()]) } else { Err(e) };
    }
    Ok(polls.iter().map(|p| p.revents & (libc::POLLIN | libc::POLLERR) != 0).collect())
}

/// Makes the calling thread a link: its timers fire within 1 µs of their time instead
/// of the default 50 µs (its departures are timers), and it runs at a real-time
/// priority, so a packet does not wait for a busy core to schedule it (netem runs in
/// the kernel's softirq, ahead of every task; this is the closest a thread gets).
/// Returns whether the real-time priority was granted (it needs CAP_SYS_NICE).
///
/// The thread sleeps in `ppoll` whenever it has nothing due, so it cannot starve the
/// machine; the kernel's real-time throttling (95 % of each second) bounds it anyway.
pub fn become_a_link() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: both calls take plain values and affect only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0);
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0
    }
}

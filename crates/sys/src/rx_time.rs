//! When a datagram reached its socket, by the kernel's clock, not when a thread got
//! around to reading it.
//!
//! A latency measured at `recv` includes the receiving thread's wake-up, which on a
//! loaded 2-core machine is milliseconds at the tail: a measurement of the network
//! would then move with whatever else the machine runs. The kernel stamps each
//! datagram as it is queued to the socket (`SO_TIMESTAMPNS`, on `CLOCK_REALTIME`);
//! [`recv`] hands it back on `CLOCK_MONOTONIC`, the clock senders stamp with.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::clock::{monotonic_ns, realtime_ns};

/// Asks the kernel to stamp every datagram `socket` receives (a UDP or a raw socket).
pub fn enable(socket: &impl AsFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    #[allow(unsafe_code)]
    // SAFETY: a valid socket and a c_int option value of the size given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Receives one datagram into `buffer`: its length and, if the socket was
/// [`enable`]d, when the kernel queued it (`CLOCK_MONOTONIC` ns). The socket's
/// read timeout applies as to `UdpSocket::recv`.
pub fn recv(socket: &impl AsFd, buffer: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    // Room for one control message holding a timespec, 8-byte aligned.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec { iov_base: buffer.as_mut_ptr().cast(), iov_len: buffer.len() };
    #[allow(unsafe_code)]
    // SAFETY: an all-zero msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    #[allow(unsafe_code)]
    // SAFETY: `msg` points at a live buffer and control area of the lengths given.
    let n = unsafe { libc::recvmsg(socket.as_fd().as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, kernel_stamp(&msg).map(to_monotonic)))
}

/// The `SCM_TIMESTAMPNS` control message of a received `msg`, if any (realtime ns).
fn kernel_stamp(msg: &libc::msghdr) -> Option<u64> {
    #[allow(unsafe_code)]
    // SAFETY: the CMSG macros walk the control area recvmsg filled, within
    // msg_controllen; the timespec is read unaligned from the message's data.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    None
}

/// A `CLOCK_REALTIME` time of the last few milliseconds on `CLOCK_MONOTONIC`: the
/// two clocks' offset is read now (it only moves when the wall clock is stepped).
/// Each reading brackets the monotonic clock between two wall-clock reads, and the
/// tightest of three counts: a thread preempted between two reads would otherwise
/// shift the stamp by as long as it waited.
fn to_monotonic(realtime: u64) -> u64 {
    let bracket = || {
        let (before, mono, after) = (realtime_ns(), monotonic_ns(), realtime_ns());
        (after.saturating_sub(before), mono, before / 2 + after / 2)
    };
    let (_, mono, real) = [bracket(), bracket(), bracket()].into_iter().min_by_key(|b| b.0).expect("three readings");
    (mono + realtime).saturating_sub(real)
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;

    use super::*;

    #[test]
    fn a_datagram_is_stamped_when_it_arrives_not_when_it_is_read() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        enable(&receiver).unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut buffer = [0u8; 64];
        // The kernel turns its receive stamps on by a deferred work item: until it has
        // run, recvmsg stamps at the read. So try until a stamp comes from before the
        // read (at most 100 tries of 50 ms; the first or second does it on an idle machine).
        for _ in 0..100 {
            let before = monotonic_ns();
            sender.send_to(b"stamp me", receiver.local_addr().unwrap()).unwrap();
            // The datagram waits in the socket while this thread sleeps.
            std::thread::sleep(std::time::Duration::from_millis(50));
            let slept = monotonic_ns();
            let (n, stamp) = recv(&receiver, &mut buffer).unwrap();
            assert_eq!(&buffer[..n], b"stamp me");
            let stamp = stamp.expect("SO_TIMESTAMPNS is on");
            // 1 ms covers reading the clocks' offset (only a stepped wall clock moves it).
            assert!(stamp + 1_000_000 >= before, "stamped {stamp}, sent at {before}");
            if stamp < slept {
                return;
            }
        }
        panic!("no datagram was stamped before it was read");
    }

    #[test]
    fn without_enable_there_is_no_stamp() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender.send_to(b"x", receiver.local_addr().unwrap()).unwrap();
        let mut buffer = [0u8; 8];
        assert_eq!(recv(&receiver, &mut buffer).unwrap(), (1, None));
    }
}

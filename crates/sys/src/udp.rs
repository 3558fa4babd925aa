//! The UDP sockets a process holds, with the kernel's own counters for each: where a
//! benchmark looks to tell datagrams a receive buffer had no room for from losses anywhere
//! else (the kernel counts the first per socket, and nothing in user space sees them).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use crate::SysError;

/// One UDP socket, as `/proc/<pid>/net/udp{,6}` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpSocketStats {
    /// The address and port it is bound to.
    pub local: SocketAddr,
    /// Its inode (`socket:[inode]` in `/proc/<pid>/fd`).
    pub inode: u64,
    /// Bytes waiting in its receive buffer now (the kernel's `rx_queue`, in skb truesize).
    pub rx_queue_bytes: u64,
    /// Datagrams the kernel dropped on their way into this socket since it was created: a
    /// full receive buffer (`SO_RCVBUF`), or a failed checksum or socket filter (`sk_drops`).
    pub drops: u64,
}

/// The UDP sockets (IPv4 and IPv6) process `pid` holds open, read from its network
/// namespace's `/proc/<pid>/net/udp{,6}` and matched to its own descriptors in
/// `/proc/<pid>/fd`. Sockets of other processes in the same namespace are left out.
pub fn udp_sockets(pid: u32) -> Result<Vec<UdpSocketStats>, SysError> {
    let fd_dir = format!("/proc/{pid}/fd");
    let io = |what: String| move |source| SysError::Io { what, source };
    let inodes: BTreeSet<u64> = std::fs::read_dir(&fd_dir)
        .map_err(io(format!("reading {fd_dir}")))?
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok())
        .collect();
    let mut out = Vec::new();
    for table in ["udp", "udp6"] {
        let path = format!("/proc/{pid}/net/{table}");
        let text = std::fs::read_to_string(&path).map_err(io(format!("reading {path}")))?;
        let sockets = parse_udp_table(&text).map_err(|(line, why)| SysError::Io {
            what: format!("{path}:{line}: {why}"),
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })?;
        out.extend(sockets.into_iter().filter(|s| inodes.contains(&s.inode)));
    }
    Ok(one_per_inode(out))
}

/// The table entries with each socket once. The kernel prints its UDP table a page at a time,
/// resuming by position in the hash chains; when another thread opens or closes a socket
/// between two pages, entries shift and one already printed can be printed again (seen: a
/// participant's two sockets read back as three while other tests made theirs). An inode is
/// one socket, so the first entry for it stands.
fn one_per_inode(sockets: Vec<UdpSocketStats>) -> Vec<UdpSocketStats> {
    let mut seen = BTreeSet::new();
    sockets.into_iter().filter(|s| seen.insert(s.inode)).collect()
}

/// This process's UDP sockets and the receive buffer each has now: `SO_RCVBUF` as the
/// kernel reports it, which on Linux is twice what was set (the other half is its
/// bookkeeping), after any clamp to `net.core.rmem_max`. What a library asked for is not
/// always what it got, and nothing else tells.
pub fn own_udp_receive_buffers() -> Result<Vec<(SocketAddr, usize)>, SysError> {
    let fd_dir = "/proc/self/fd";
    let fds: Vec<(libc::c_int, u64)> = std::fs::read_dir(fd_dir)
        .map_err(|source| SysError::Io { what: format!("reading {fd_dir}"), source })?
        .filter_map(|e| {
            let e = e.ok()?;
            let fd = e.file_name().to_str()?.parse().ok()?;
            let link = std::fs::read_link(e.path()).ok()?;
            Some((fd, link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()?))
        })
        .collect();
    let sockets = udp_sockets(std::process::id())?;
    Ok(sockets
        .iter()
        .filter_map(|s| {
            let &(fd, _) = fds.iter().find(|&&(_, inode)| inode == s.inode)?;
            Some((s.local, receive_buffer(fd)?))
        })
        .collect())
}

/// `SO_RCVBUF` of descriptor `fd`; `None` if it is not a socket (any more).
fn receive_buffer(fd: libc::c_int) -> Option<usize> {
    let mut size: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    #[allow(unsafe_code)]
    // SAFETY: `size` and `len` are valid and writable, and `len` is `size`'s size; a closed or
    // non-socket descriptor only makes the call fail.
    let got = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, std::ptr::from_mut(&mut size).cast(), &mut len)
    };
    (got == 0).then(|| usize::try_from(size).ok()).flatten()
}

/// Parses the kernel's UDP table (header line first); an error gives the 1-based line and
/// what is wrong with it.
fn parse_udp_table(text: &str) -> Result<Vec<UdpSocketStats>, (usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
        let [_, local, _, _, queues, _, _, _, _, inode, _, _, drops] = fields[..] else {
            return Err((n + 1, format!("{} fields, not the 13 of a UDP socket", fields.len())));
        };
        let bad = |what: &str| (n + 1, format!("bad {what}"));
        let rx_queue = queues.split_once(':').map(|(_, rx)| rx).ok_or_else(|| bad("tx_queue:rx_queue"))?;
        out.push(UdpSocketStats {
            local: parse_address(local).ok_or_else(|| bad("local_address"))?,
            inode: inode.parse().map_err(|_| bad("inode"))?,
            rx_queue_bytes: u64::from_str_radix(rx_queue, 16).map_err(|_| bad("rx_queue"))?,
            drops: drops.parse().map_err(|_| bad("drops"))?,
        });
    }
    Ok(out)
}

/// `0100007F:1F90` → 127.0.0.1:8080: the kernel prints the address as 32-bit words in host
/// order (little-endian on every architecture Bauxite runs on) and the port in hex.
fn parse_address(text: &str) -> Option<SocketAddr> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Option<Vec<u32>> =
        (0..addr.len() / 8).map(|i| u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16).ok()).collect();
    let bytes: Vec<u8> = words?.iter().flat_map(|w| w.to_le_bytes()).collect();
    let ip: IpAddr = match (addr.len(), bytes.len()) {
        (8, 4) => <[u8; 4]>::try_from(bytes).ok()?.into(),
        (32, 16) => <[u8; 16]>::try_from(bytes).ok()?.into(),
        _ => return None,
    };
    Some((ip, port).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_table_gives_address_queue_inode_and_drops() {
        let text = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
            \x20 512: 0100007F:A6A5 00000000:0000 07 00000000:00012C00 00:00000000 00000000     0        0 4242 2 0000000000000000 17\n\
            \x20 513: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 99 2 0000000000000000 0\n";
        let sockets = parse_udp_table(text).expect("parsed");
        assert_eq!(
            sockets,
            [
                UdpSocketStats {
                    local: "127.0.0.1:42661".parse().unwrap(),
                    inode: 4242,
                    rx_queue_bytes: 0x12c00,
                    drops: 17
                },
                UdpSocketStats { local: "[::1]:53".parse().unwrap(), inode: 99, rx_queue_bytes: 0, drops: 0 },
            ]
        );
        let e = parse_udp_table("header\n 1: 0100007F:A6A5 only four\n").expect_err("short line");
        assert_eq!(e.0, 2, "{e:?}");
        let e = parse_udp_table(&text.replace(" 17\n", " x\n")).expect_err("bad drops");
        assert_eq!(e, (2, "bad drops".into()));
    }

    /// A table read across a change lists a socket twice: it counts once, as first listed.
    #[test]
    fn a_socket_listed_twice_counts_once() {
        let entry = |port, inode, drops| UdpSocketStats {
            local: SocketAddr::from(([127, 0, 0, 1], port)),
            inode,
            rx_queue_bytes: 0,
            drops,
        };
        let read = vec![entry(43412, 7, 1), entry(43413, 8, 0), entry(43412, 7, 5)];
        assert_eq!(one_per_inode(read), [entry(43412, 7, 1), entry(43413, 8, 0)]);
    }

    #[test]
    fn a_socket_this_process_holds_is_found_with_its_port() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let port = socket.local_addr().expect("addr").port();
        let mine = udp_sockets(std::process::id()).expect("read /proc");
        let found: Vec<_> = mine.iter().filter(|s| s.local.port() == port).collect();
        assert_eq!(found.len(), 1, "{mine:?}");
        assert_eq!(found[0].drops, 0);
        // A receive buffer of the kernel's minimum (about 4.6 KB) that nobody reads, and
        // 200 datagrams of 1 KB sent to it over loopback: most cannot fit, and the kernel
        // counts each as a drop of this socket.
        let small: libc::c_int = 1;
        #[allow(unsafe_code)]
        // SAFETY: a valid socket descriptor, and a pointer to a c_int with its size.
        let set = unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&socket),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                std::ptr::from_ref(&small).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0, "SO_RCVBUF: {}", std::io::Error::last_os_error());
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind the sender");
        for _ in 0..200 {
            sender.send_to(&[0; 1000], ("127.0.0.1", port)).expect("send");
        }
        // Loopback hands the datagrams to the receive path in softirq, which a loaded
        // machine may run a little after `send_to` returns: read until the drops are
        // counted, waiting up to 10 s only so that a broken counter fails instead of
        // hanging.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let receiver = loop {
            let after = udp_sockets(std::process::id()).expect("read /proc again");
            let receiver = *after.iter().find(|s| s.local.port() == port).expect("still there");
            if receiver.drops >= 190 || std::time::Instant::now() > deadline {
                break receiver;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        assert!(receiver.drops >= 190, "{receiver:?}");
        assert!(receiver.rx_queue_bytes > 0, "{receiver:?}");
        let buffers = own_udp_receive_buffers().expect("own buffers");
        let (_, buffer) = buffers.iter().find(|(a, _)| a.port() == port).expect("the receiver is listed");
        assert!(*buffer < 64 * 1024, "SO_RCVBUF was set to the minimum: {buffer}");
        let e = udp_sockets(u32::MAX).expect_err("no such process").to_string();
        assert!(e.contains(&format!("/proc/{}/fd", u32::MAX)), "{e}");
    }
}

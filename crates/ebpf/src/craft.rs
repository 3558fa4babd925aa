//! Crafted Ethernet frames for the classifier's tests and benchmark.
//!
//! Only what exercising the parser needs: VLAN tags, IPv4 (with fragment fields)
//! and IPv6 (with extension headers), UDP and TCP, and a checker for the IPv4
//! header checksum.

/// IP protocol number of TCP.
pub const TCP: u8 = 6;
/// IP protocol number of UDP.
pub const UDP: u8 = 17;
/// IPv6 extension header: hop-by-hop options.
pub const V6_HOP_BY_HOP: u8 = 0;
/// IPv6 extension header: destination options.
pub const V6_DEST_OPTS: u8 = 60;
/// IPv6 extension header: routing.
pub const V6_ROUTING: u8 = 43;

/// What to put in a frame. `Default` is an IPv4 UDP datagram with no VLAN tag.
#[derive(Clone, Debug, Default)]
pub struct FrameSpec {
    /// 802.1Q tags (VLAN ids), outermost first; two tags make a QinQ frame.
    pub vlans: Vec<u16>,
    /// IPv6 instead of IPv4.
    pub ipv6: bool,
    /// The DSCP.
    pub dscp: u8,
    /// The ECN bits.
    pub ecn: u8,
    /// [`TCP`] or [`UDP`] (0 means UDP).
    pub protocol: u8,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// TCP flags byte (e.g. 0x02 SYN, 0x10 ACK).
    pub tcp_flags: u8,
    /// Payload bytes after the transport header.
    pub payload: usize,
    /// IPv4: fragment offset in 8-byte units. IPv6: adds a fragment header with it.
    pub fragment_offset: Option<u16>,
    /// IPv4: the more-fragments flag.
    pub more_fragments: bool,
    /// IPv6 extension headers (8 bytes each) before the transport header.
    pub v6_extensions: Vec<u8>,
}

impl FrameSpec {
    /// Builds the frame.
    pub fn build(&self) -> Vec<u8> {
        let protocol = if self.protocol == 0 { UDP } else { self.protocol };
        let mut l4 = Vec::new();
        l4.extend_from_slice(&self.sport.to_be_bytes());
        l4.extend_from_slice(&self.dport.to_be_bytes());
        if protocol == TCP {
            l4.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, self.tcp_flags, 0xff, 0xff, 0, 0, 0, 0]);
        } else {
            l4.extend_from_slice(&((8 + self.payload) as u16).to_be_bytes());
            l4.extend_from_slice(&[0, 0]);
        }
        l4.extend(std::iter::repeat_n(0xabu8, self.payload));

        let mut frame = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
        for vid in &self.vlans {
            frame.extend_from_slice(&[0x81, 0x00]);
            frame.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
        }
        let tos = (self.dscp << 2) | (self.ecn & 3);
        if self.ipv6 {
            frame.extend_from_slice(&[0x86, 0xdd]);
            let mut ext = Vec::new();
            let mut headers: Vec<u8> = self.v6_extensions.clone();
            if self.fragment_offset.is_some() {
                headers.push(44);
            }
            let mut chain = headers.clone();
            chain.push(protocol);
            for (i, &kind) in headers.iter().enumerate() {
                let next = chain[i + 1];
                if kind == 44 {
                    let off = self.fragment_offset.unwrap_or(0) << 3;
                    ext.extend_from_slice(&[next, 0]);
                    ext.extend_from_slice(&(off | self.more_fragments as u16).to_be_bytes());
                    ext.extend_from_slice(&[0, 0, 0, 7]);
                } else {
                    ext.extend_from_slice(&[next, 0, 1, 4, 0, 0, 0, 0]); // PadN option
                }
            }
            let first = chain[0];
            let payload_len = (ext.len() + l4.len()) as u16;
            frame.extend_from_slice(&[0x60 | (tos >> 4), tos << 4, 0, 0]);
            frame.extend_from_slice(&payload_len.to_be_bytes());
            frame.extend_from_slice(&[first, 64]);
            frame.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            frame.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            frame.extend_from_slice(&ext);
        } else {
            frame.extend_from_slice(&[0x08, 0x00]);
            let total = (20 + l4.len()) as u16;
            let frag = (self.fragment_offset.unwrap_or(0) & 0x1fff) | if self.more_fragments { 0x2000 } else { 0 };
            let mut ip = vec![0x45, tos];
            ip.extend_from_slice(&total.to_be_bytes());
            ip.extend_from_slice(&[0x12, 0x34]);
            ip.extend_from_slice(&frag.to_be_bytes());
            ip.extend_from_slice(&[64, protocol, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            let sum = ipv4_checksum(&ip);
            ip[10..12].copy_from_slice(&sum.to_be_bytes());
            frame.extend_from_slice(&ip);
        }
        frame.extend_from_slice(&l4);
        frame
    }

    /// Where the IP header starts in frames built from this spec.
    pub fn ip_offset(&self) -> usize {
        14 + 4 * self.vlans.len()
    }
}

/// The Internet checksum of an IPv4 header whose checksum field is zero; over a
/// header with its checksum filled in, a valid header gives 0.
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

//! Constant-bit-rate and on/off UDP applications.
//!
//! An application sends one UDP datagram of a fixed payload every interval from
//! its start time until (not including) its stop time, all with the same DSCP
//! mark. The k-th packet leaves at `start + k·interval`, computed from k rather
//! than by adding intervals, so a 933 333.33 ns interval does not drift. The
//! interval is kept in picoseconds: over a 20 s run the rounding moves no packet
//! by more than a microsecond's fraction. An on/off application ([`OnOff`]) sends
//! its packets in bursts instead, at the same mean rate.

use bauxite_qdisc::Nanos;

/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;
/// IPv4 header bytes (no options).
pub const IPV4_HEADER_BYTES: u32 = 20;

/// One constant-rate UDP sender and the flow it creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdpApp {
    /// Sending node.
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    /// Source UDP port (part of the flow's 5-tuple).
    pub src_port: u16,
    /// Destination UDP port.
    pub dst_port: u16,
    /// UDP payload bytes per packet.
    pub payload: u32,
    /// DSCP mark (0..=63).
    pub dscp: u8,
    /// Time between packets, in picoseconds; must be positive (a zero interval
    /// would send every packet at the same instant, forever).
    pub interval_ps: u64,
    /// Time of the first packet.
    pub start: Nanos,
    /// No packet leaves at or after this time.
    pub stop: Nanos,
    /// A label the caller uses to group flows (e.g. a traffic-class index).
    pub tag: u32,
    /// Bursts instead of a steady rate (`interval_ps` is then not used).
    pub on_off: Option<OnOff>,
    /// The application's deadline: a packet later than this counts as missed.
    pub deadline: Option<Nanos>,
}

/// Sending in bursts: `burst_packets` packets `gap_ps` apart, a burst every
/// `period_ps`. The mean rate is `burst_packets` per period, the rate while on one
/// per gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff {
    /// Packets per burst, at least 1.
    pub burst_packets: u64,
    /// Time between a burst's packets, ps.
    pub gap_ps: u64,
    /// Time from one burst's start to the next's, ps.
    pub period_ps: u64,
}

impl UdpApp {
    /// The interval of `pps` packets per second, in picoseconds.
    pub fn interval_from_pps(pps: f64) -> u64 {
        (1e12 / pps).round() as u64
    }

    /// The interval that carries `rate_bps` of UDP payload (ns-3's `OnOffApplication`
    /// counts the payload only, so its `DataRate` is a payload rate).
    pub fn interval_from_rate(payload: u32, rate_bps: f64) -> u64 {
        (payload as f64 * 8.0 * 1e12 / rate_bps).round() as u64
    }

    /// Size of each IP datagram: payload + UDP + IPv4 headers.
    pub fn ip_len(&self) -> u32 {
        self.payload + UDP_HEADER_BYTES + IPV4_HEADER_BYTES
    }

    /// When the k-th packet (from 0) is due, or `None` at or after the stop time.
    ///
    /// # Panics
    /// If `interval_ps` is zero.
    pub fn send_time(&self, k: u64) -> Option<Nanos> {
        assert!(self.interval_ps > 0, "a UDP application needs a positive interval");
        let offset_ps = match self.on_off {
            None => k as u128 * self.interval_ps as u128,
            Some(b) => {
                let n = b.burst_packets.max(1);
                (k / n) as u128 * b.period_ps as u128 + (k % n) as u128 * b.gap_ps as u128
            }
        };
        let offset = ((offset_ps + 500) / 1000).min(u64::MAX as u128) as u64;
        let t = self.start.saturating_add(offset);
        (t < self.stop).then_some(t)
    }

    /// How long the source is active (stop − start), the denominator of throughput.
    pub fn active_ns(&self) -> Nanos {
        self.stop.saturating_sub(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_evenly_spaced_without_drift() {
        let app = UdpApp {
            src: 0,
            dst: 1,
            src_port: 1,
            dst_port: 2,
            payload: 1400,
            dscp: 0,
            interval_ps: UdpApp::interval_from_rate(1400, 12e6),
            start: 1_000_000_000,
            stop: 2_000_000_000,
            tag: 0,
            on_off: None,
            deadline: None,
        };
        assert_eq!(app.interval_ps, 933_333_333);
        assert_eq!(app.send_time(0), Some(1_000_000_000));
        assert_eq!(app.send_time(3), Some(1_002_800_000));
        // 1 s at 1071.43 packets/s: packets 0..=1071 fit before the stop.
        assert!(app.send_time(1071).is_some());
        assert_eq!(app.send_time(1072), None);
        assert_eq!(app.ip_len(), 1428);
        assert_eq!(UdpApp::interval_from_pps(200.0), 5_000_000_000);
    }

    #[test]
    fn bursts_keep_the_mean_rate_and_send_at_twice_it_while_on() {
        // 12 Mbit/s of 1400-byte payloads (one every 933.3 µs) in bursts of 10 ms:
        // 21 packets 466.7 µs apart, a burst every 21 mean intervals (19.6 ms).
        let interval_ps = UdpApp::interval_from_rate(1400, 12e6);
        let app = UdpApp {
            src: 0,
            dst: 1,
            src_port: 1,
            dst_port: 2,
            payload: 1400,
            dscp: 0,
            interval_ps,
            start: 0,
            stop: 10_000_000_000,
            tag: 0,
            on_off: Some(OnOff { burst_packets: 21, gap_ps: interval_ps / 2, period_ps: 21 * interval_ps }),
            deadline: None,
        };
        assert_eq!(app.send_time(1), Some(466_667), "twice the rate within a burst");
        assert_eq!(app.send_time(20), Some(9_333_333), "the burst's last packet");
        assert_eq!(app.send_time(21), Some(19_600_000), "the next burst, a period after the first");
        let sent = (0..).take_while(|&k| app.send_time(k).is_some()).count() as f64;
        let mean_bps = sent * 1400.0 * 8.0 / 10.0;
        assert!((mean_bps - 12e6).abs() < 12e6 * 0.003, "the mean rate is kept: {mean_bps}");
    }

    #[test]
    #[should_panic(expected = "positive interval")]
    fn a_zero_interval_is_refused_rather_than_sent_forever() {
        let app = UdpApp {
            src: 0,
            dst: 1,
            src_port: 1,
            dst_port: 2,
            payload: 1400,
            dscp: 0,
            interval_ps: UdpApp::interval_from_rate(1400, 1e17),
            start: 0,
            stop: 1,
            tag: 0,
            on_off: None,
            deadline: None,
        };
        app.send_time(0);
    }
}

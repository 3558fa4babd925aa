//! Constant-bit-rate and on/off UDP applications, and bulk TCP senders.
//!
//! An application sends one UDP datagram of a fixed payload every interval from
//! its start time until (not including) its stop time, all with the same DSCP
//! mark. The k-th packet leaves at `start + k·interval`, computed from k rather
//! than by adding intervals, so a 933 333.33 ns interval does not drift. The
//! interval is kept in picoseconds: over a 20 s run the rounding moves no packet
//! by more than a microsecond's fraction. An on/off application ([`OnOff`]) sends
//! its packets in bursts instead, at the same mean rate: bursts of one length, or
//! of Pareto-distributed lengths and silences ([`Pareto`]), whose heavy tail gives
//! traffic that stays bursty at every time scale (as measured LAN and web traffic).

use bauxite_qdisc::Nanos;
use bauxite_qdisc::rng::{SplitMix64, mix64};

/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;
/// IPv4 header bytes (no options).
pub const IPV4_HEADER_BYTES: u32 = 20;

/// One constant-rate UDP sender and the flow it creates.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOff {
    /// Packets per burst, at least 1.
    pub burst_packets: u64,
    /// Time between a burst's packets, ps.
    pub gap_ps: u64,
    /// Time from one burst's start to the next's, ps.
    pub period_ps: u64,
    /// Pareto-distributed bursts and silences instead of fixed ones.
    pub pareto: Option<Pareto>,
}

/// Each burst's length and the silence after it drawn from a Pareto distribution of
/// `shape` whose means are the fixed pattern's burst (`burst_packets` × gap) and
/// silence (period − burst), so the mean rate is kept in expectation. A shape of 1 to
/// 2 has a finite mean and an infinite variance: some bursts last far longer than
/// the mean, the self-similar traffic ns-3's `OnOffApplication` makes with Pareto
/// on and off times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pareto {
    shape: f64,
    seed: u64,
    /// The burst the last packet asked for was in (the bursts are drawn in turn).
    cursor: BurstCursor,
}

/// Where a Pareto on/off application's current burst begins: the burst's number,
/// the index of its first packet, its start (ps after the application's start) and
/// its packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BurstCursor {
    index: u64,
    first_k: u64,
    start_ps: u128,
    packets: u64,
}

impl Pareto {
    /// Bursts of shape `shape` (> 1), drawn from `seed` (one stream per application).
    pub fn new(shape: f64, seed: u64) -> Self {
        Self { shape, seed, cursor: BurstCursor::default() }
    }

    /// The offset of packet `k` from the application's start, ps: the bursts are
    /// walked from the last one asked about (or from the first, if `k` is before it).
    fn offset_ps(&mut self, on_off: &OnOff, k: u64) -> u128 {
        if k < self.cursor.first_k || self.cursor.packets == 0 {
            self.cursor = BurstCursor { packets: self.burst(on_off, 0).0, ..BurstCursor::default() };
        }
        let mut c = self.cursor;
        while k >= c.first_k + c.packets {
            let (packets, period) = self.burst(on_off, c.index);
            let next = c.index + 1;
            c = BurstCursor {
                index: next,
                first_k: c.first_k + packets,
                start_ps: c.start_ps + period,
                packets: self.burst(on_off, next).0,
            };
        }
        self.cursor = c;
        c.start_ps + (k - c.first_k) as u128 * on_off.gap_ps as u128
    }

    /// A draw with mean `mean_ps`: `x_m / U^(1/α)` with `x_m = mean (α − 1) / α`.
    fn draw(&self, index: u64, stream: u64, mean_ps: f64) -> f64 {
        let mut rng = SplitMix64::new(mix64(self.seed ^ mix64(index.wrapping_mul(2).wrapping_add(stream))));
        let u = 1.0 - rng.next_f64(); // (0, 1]
        mean_ps * (self.shape - 1.0) / self.shape / u.powf(1.0 / self.shape)
    }

    /// Burst `index` of `on_off`: its packets and the time from its start to the next's.
    fn burst(&self, on_off: &OnOff, index: u64) -> (u64, u128) {
        let gap = on_off.gap_ps.max(1) as f64;
        let on = self.draw(index, 0, on_off.burst_packets as f64 * gap);
        let off = self.draw(index, 1, on_off.period_ps.saturating_sub(on_off.burst_packets * on_off.gap_ps) as f64);
        let packets = ((on / gap).round() as u64).max(1);
        (packets, packets as u128 * on_off.gap_ps as u128 + off as u128)
    }
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
    /// Pareto bursts are drawn in turn, so asking for packets in order (as a run
    /// does) walks them once.
    pub fn send_time(&mut self, k: u64) -> Option<Nanos> {
        assert!(self.interval_ps > 0, "a UDP application needs a positive interval");
        let offset_ps = match &mut self.on_off {
            None => k as u128 * self.interval_ps as u128,
            Some(b) => {
                let pattern = OnOff { pareto: None, ..*b };
                match b.pareto.as_mut() {
                    Some(pareto) => pareto.offset_ps(&pattern, k),
                    None => {
                        let n = b.burst_packets.max(1);
                        (k / n) as u128 * b.period_ps as u128 + (k % n) as u128 * b.gap_ps as u128
                    }
                }
            }
        };
        // Picoseconds to the nearest nanosecond, in u64 (whose division is several
        // times cheaper than u128's) unless the offset is beyond 213 days.
        let offset = match u64::try_from(offset_ps + 500) {
            Ok(ps) => ps / 1000,
            Err(_) => ((offset_ps + 500) / 1000).min(u64::MAX as u128) as u64,
        };
        let t = self.start.saturating_add(offset);
        (t < self.stop).then_some(t)
    }

    /// How long the source is active (stop − start), the denominator of throughput.
    pub fn active_ns(&self) -> Nanos {
        self.stop.saturating_sub(self.start)
    }
}

/// A bulk TCP sender ([`crate::tcp`]: CUBIC, one ACK per segment) and its
/// receiver: cross traffic that backs off when the bottleneck drops or queues, as
/// the UDP background does not. It always has data, sends from `start`, and sends
/// nothing (new or again) from `stop` on, so the network drains. Its ACKs go back
/// as a flow of their own, with the same DSCP (as Linux's ACKs carry the socket's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpApp {
    /// Sending node.
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    /// Source TCP port.
    pub src_port: u16,
    /// Destination TCP port.
    pub dst_port: u16,
    /// DSCP mark of the segments and of their ACKs.
    pub dscp: u8,
    /// When the connection starts sending (established; no handshake).
    pub start: Nanos,
    /// No segment leaves at or after this time.
    pub stop: Nanos,
    /// A label the caller uses to group flows.
    pub tag: u32,
}

impl TcpApp {
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
        let mut app = UdpApp {
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

    /// 12 Mbit/s of 1400-byte payloads (one every 933.3 µs) from 0 to `stop_s`, in
    /// bursts of 10 ms: 21 packets 466.7 µs apart, a burst every 21 mean intervals
    /// (19.6 ms), each burst and silence drawn from `pareto` if given.
    fn bursty(stop_s: u64, pareto: Option<Pareto>) -> UdpApp {
        let interval_ps = UdpApp::interval_from_rate(1400, 12e6);
        UdpApp {
            src: 0,
            dst: 1,
            src_port: 1,
            dst_port: 2,
            payload: 1400,
            dscp: 0,
            interval_ps,
            start: 0,
            stop: stop_s * 1_000_000_000,
            tag: 0,
            on_off: Some(OnOff { burst_packets: 21, gap_ps: interval_ps / 2, period_ps: 21 * interval_ps, pareto }),
            deadline: None,
        }
    }

    #[test]
    fn bursts_keep_the_mean_rate_and_send_at_twice_it_while_on() {
        let mut app = bursty(10, None);
        assert_eq!(app.send_time(1), Some(466_667), "twice the rate within a burst");
        assert_eq!(app.send_time(20), Some(9_333_333), "the burst's last packet");
        assert_eq!(app.send_time(21), Some(19_600_000), "the next burst, a period after the first");
        let sent = (0..).take_while(|&k| app.send_time(k).is_some()).count() as f64;
        let mean_bps = sent * 1400.0 * 8.0 / 10.0;
        assert!((mean_bps - 12e6).abs() < 12e6 * 0.003, "the mean rate is kept: {mean_bps}");
    }

    #[test]
    fn pareto_bursts_keep_the_mean_rate_in_expectation_and_vary_in_length() {
        // The pattern above with Pareto(1.5) bursts and silences, over 200 s.
        let mut app = bursty(200, Some(Pareto::new(1.5, 7)));
        let interval_ps = app.interval_ps;
        let times: Vec<u64> = (0..).map_while(|k| app.send_time(k)).collect();
        let mean_bps = times.len() as f64 * 1400.0 * 8.0 / 200.0;
        // A Pareto(1.5) mean converges slowly (infinite variance): within 20 %.
        assert!((mean_bps / 12e6 - 1.0).abs() < 0.2, "{mean_bps}");
        // Within a burst, packets are the gap apart; bursts differ in length.
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let on_gap = (interval_ps / 2).div_ceil(1000);
        let bursts: Vec<usize> = gaps.split(|&g| g > on_gap + 1).map(|run| run.len() + 1).filter(|&n| n > 0).collect();
        let (shortest, longest) = (bursts.iter().min().unwrap(), bursts.iter().max().unwrap());
        assert!(*longest > 10 * *shortest, "heavy-tailed bursts: {shortest} to {longest} packets");
        // Asking again from the start gives the same times (the draws are seeded).
        assert_eq!(app.send_time(0), Some(times[0]));
        assert_eq!(app.send_time(1000), Some(times[1000]));
    }

    #[test]
    #[should_panic(expected = "positive interval")]
    fn a_zero_interval_is_refused_rather_than_sent_forever() {
        let mut app = UdpApp {
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

//! Delivery traces in mahimahi's `mm-link` format.
//!
//! A trace is one line per delivery opportunity, each line a timestamp in whole
//! milliseconds from the start of the trace; an opportunity carries
//! [`OPPORTUNITY_BYTES`] (a 1500-byte packet plus mahimahi's 4-byte TUN header).
//! Repeated timestamps are several opportunities in the same millisecond, and the
//! trace repeats when it ends, shifted by its last timestamp (mahimahi's
//! wraparound). These are `mm-link`'s semantics exactly, so results on the public
//! cellular traces compare with the literature that used them (Sprout, NSDI 2013).
//!
//! A trace may also be written as rates ([`DeliveryTrace::parse_rates`]): CSV rows
//! `time_s,rate_mbps`, each rate holding from its time to the next row's, the last
//! for as long as the step before it. They are turned into opportunities as a
//! link at that rate would offer them: the `k`-th whole opportunity of bytes is
//! offered in the millisecond when the rate's cumulative bytes reach it.

use std::fmt;
use std::path::Path;

/// Bytes one delivery opportunity carries (mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// The largest trace file read: an hour at 60 Mbit/s is about 18 million lines (130 MB).
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

const NS_PER_MS: u64 = 1_000_000;

/// A parsed delivery trace: opportunity times in milliseconds, nondecreasing, the
/// last one positive (it is also the period of the repetition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    ms: Vec<u64>,
}

/// Why a trace was not accepted: the file (when there is one), the 1-based line and
/// what is wrong, in the form `file:line: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The file, or `<trace>` when parsed from text.
    pub file: String,
    /// The offending line, when one is to blame.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for TraceError {}

impl DeliveryTrace {
    /// Reads a trace file: a regular file of at most [`MAX_TRACE_BYTES`].
    pub fn load(path: &Path) -> Result<Self, TraceError> {
        let error = |message: String| TraceError { file: path.display().to_string(), line: None, message };
        let bytes = crate::config::read_regular_file(path, MAX_TRACE_BYTES).map_err(|e| match e {
            crate::config::FileReadError::Io(io) => error(format!("cannot read: {io}")),
            other => error(other.to_string()),
        })?;
        let text = String::from_utf8(bytes).map_err(|_| error("not text: a trace is lines of milliseconds".into()))?;
        let rates = text.lines().next().is_some_and(|line| line.contains(','));
        let parsed = if rates { Self::parse_rates(&text) } else { Self::parse(&text) };
        parsed.map_err(|e| TraceError { file: path.display().to_string(), ..e })
    }

    /// Parses trace text (as mm-link does: no empty lines, nondecreasing whole
    /// milliseconds, a nonzero length). Surrounding whitespace and a final newline are allowed.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let error = |line: Option<usize>, message: String| TraceError { file: "<trace>".into(), line, message };
        let mut ms: Vec<u64> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let field = line.trim();
            if field.is_empty() {
                return Err(error(Some(i + 1), "empty line (each line is one opportunity's millisecond)".into()));
            }
            let t: u64 = field
                .parse()
                .map_err(|_| error(Some(i + 1), format!("`{field}` is not a whole number of milliseconds")))?;
            if ms.last().is_some_and(|&last| t < last) {
                return Err(error(
                    Some(i + 1),
                    format!("{t} ms comes before the previous line's {} ms", ms[ms.len() - 1]),
                ));
            }
            ms.push(t);
        }
        match ms.last() {
            None => Err(error(None, "no opportunities".into())),
            Some(0) => Err(error(None, "the trace must last more than 0 ms".into())),
            Some(_) => Ok(Self { ms }),
        }
    }

    /// Parses a trace written as rates: CSV rows `time_s,rate_mbps` (an optional
    /// header row `time_s,rate_mbps` first), times increasing from 0, rates at least
    /// 0, each rate holding until the next row's time and the last one for as long as
    /// the step before it (1 s if it is the only row). The trace cannot end in an
    /// outage: mahimahi repeats a trace from its last opportunity, so a final zero
    /// rate would vanish; put the outage earlier.
    pub fn parse_rates(text: &str) -> Result<Self, TraceError> {
        let error = |line: Option<usize>, message: String| TraceError { file: "<trace>".into(), line, message };
        let mut steps: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = Some(i + 1);
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if i == 0 && fields == ["time_s", "rate_mbps"] {
                continue;
            }
            let [time, rate] = fields[..] else {
                return Err(error(line_no, format!("`{line}` is not `time_s,rate_mbps`")));
            };
            let number = |field: &str, what: &str| {
                field
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| error(line_no, format!("{what} `{field}` is not a number of at least 0")))
            };
            let (time, rate) = (number(time, "time_s")?, number(rate, "rate_mbps")?);
            match steps.last() {
                None if time != 0.0 => return Err(error(line_no, format!("the first row is at {time} s, not 0"))),
                Some(&(last, _)) if time <= last => {
                    return Err(error(line_no, format!("{time} s does not come after the previous row's {last} s")));
                }
                _ => steps.push((time, rate)),
            }
        }
        let Some(&(last_time, last_rate)) = steps.last() else { return Err(error(None, "no rows".into())) };
        if last_rate == 0.0 {
            return Err(error(None, "the trace ends in an outage (rate 0), which mahimahi's repetition drops".into()));
        }
        let last_step = if steps.len() > 1 { last_time - steps[steps.len() - 2].0 } else { 1.0 };
        let end_ms = ((last_time + last_step) * 1000.0).round() as u64;
        let step_at = |m: u64, step: &mut usize| {
            while *step + 1 < steps.len() && steps[*step + 1].0 * 1000.0 < m as f64 {
                *step += 1;
            }
            steps[*step].1 * 1e6 / 8.0 / 1000.0
        };
        // The credit starts with what the last opportunity lacks, so that it is
        // offered in the last millisecond: the trace's period (its last timestamp) is
        // then the rows' length, as it must be for the repetition to keep the rates.
        let mut step = 0;
        let total: f64 = (1..=end_ms).map(|m| step_at(m, &mut step)).sum();
        let opportunity = f64::from(OPPORTUNITY_BYTES);
        if total < opportunity {
            return Err(error(None, "the rates never add up to one 1504-byte opportunity".into()));
        }
        let mut credit = (opportunity - total % opportunity) % opportunity;
        let (mut ms, mut step) = (Vec::new(), 0);
        for m in 1..=end_ms {
            credit += step_at(m, &mut step);
            // A millionth of a byte of rounding must not lose the last one.
            while credit >= opportunity - 1e-6 {
                credit -= opportunity;
                ms.push(m);
            }
        }
        Ok(Self { ms })
    }

    /// What `bauxite link trace-stats` prints: the trace's length, mean rate, the
    /// spread of its one-second rates and its silent seconds (no opportunity at all).
    pub fn stats(&self) -> TraceStats {
        let seconds = self.capacity_bps(1000);
        let mut sorted: Vec<f64> = seconds.iter().map(|bps| bps / 1e6).collect();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| crate::stats::percentile(&sorted, q).unwrap_or(0.0);
        TraceStats {
            duration_s: self.period_ms() as f64 / 1000.0,
            opportunities: self.ms.len(),
            mean_mbps: self.mean_bps() / 1e6,
            one_second_mbps: [at(0.05), at(0.25), at(0.5), at(0.75), at(0.95)],
            silent_seconds: seconds.iter().filter(|&&bps| bps == 0.0).count(),
        }
    }

    /// A trace of a constant `bits_per_second` for `period_ms` (for tests and timelines):
    /// opportunities spread as evenly as whole milliseconds allow.
    pub fn constant(bits_per_second: u64, period_ms: u64) -> Self {
        let per_ms = bits_per_second as f64 / 8.0 / f64::from(OPPORTUNITY_BYTES) / 1000.0;
        let total = (per_ms * period_ms as f64).round().max(1.0) as u64;
        let ms = (1..=total).map(|k| (k * period_ms).div_ceil(total)).collect();
        Self { ms }
    }

    /// Opportunities per repetition.
    pub fn len(&self) -> usize {
        self.ms.len()
    }

    /// Always false: a trace has at least one opportunity.
    pub fn is_empty(&self) -> bool {
        self.ms.is_empty()
    }

    /// The repetition period in milliseconds (the last timestamp).
    pub fn period_ms(&self) -> u64 {
        self.ms[self.ms.len() - 1]
    }

    /// The mean capacity in bits per second.
    pub fn mean_bps(&self) -> f64 {
        self.ms.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / (self.period_ms() as f64 / 1000.0)
    }

    /// The time of the `k`-th opportunity (0-based, counting across repetitions),
    /// in nanoseconds from the start of the trace.
    pub fn opportunity_ns(&self, k: u64) -> u64 {
        let n = self.ms.len() as u64;
        ((k / n) * self.period_ms() + self.ms[(k % n) as usize]) * NS_PER_MS
    }

    /// The index of the first opportunity strictly after `t_ns` (from the start of
    /// the trace): the first one a packet arriving at `t_ns` can use.
    pub fn first_after_ns(&self, t_ns: u64) -> u64 {
        let period_ns = self.period_ms() * NS_PER_MS;
        let (rep, within_ns) = (t_ns / period_ns, t_ns % period_ns);
        // Whole milliseconds: an opportunity at m ms is after `within_ns` when m*1e6 > within_ns.
        let idx = self.ms.partition_point(|&m| m * NS_PER_MS <= within_ns) as u64;
        rep * self.ms.len() as u64 + idx
    }

    /// Capacity per bin of `bin_ms` over one repetition, in bits per second (for charts).
    pub fn capacity_bps(&self, bin_ms: u64) -> Vec<f64> {
        let bins = self.period_ms().div_ceil(bin_ms.max(1)) as usize;
        let mut bytes = vec![0u64; bins.max(1)];
        for &m in &self.ms {
            let bin = ((m / bin_ms.max(1)) as usize).min(bytes.len() - 1);
            bytes[bin] += u64::from(OPPORTUNITY_BYTES);
        }
        bytes.iter().map(|&b| b as f64 * 8.0 * 1000.0 / bin_ms.max(1) as f64).collect()
    }
}

/// A trace's figures ([`DeliveryTrace::stats`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TraceStats {
    /// One repetition's length.
    pub duration_s: f64,
    /// Opportunities per repetition.
    pub opportunities: usize,
    /// The mean capacity.
    pub mean_mbps: f64,
    /// The 5th, 25th, 50th, 75th and 95th percentiles of the one-second capacities.
    pub one_second_mbps: [f64; 5],
    /// Whole seconds (of the one-second bins) without a single opportunity.
    pub silent_seconds: usize,
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [p5, p25, p50, p75, p95] = self.one_second_mbps;
        writeln!(f, "length         {:.3} s ({} opportunities of 1504 bytes)", self.duration_s, self.opportunities)?;
        writeln!(f, "mean           {:.3} Mbit/s", self.mean_mbps)?;
        writeln!(f, "1 s rates      p5 {p5:.3}  p25 {p25:.3}  p50 {p50:.3}  p75 {p75:.3}  p95 {p95:.3} Mbit/s")?;
        writeln!(f, "silent seconds {}", self.silent_seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mm_link_traces_and_refuses_what_mm_link_refuses() {
        let trace = DeliveryTrace::parse("1\n1\n3\n10\n").unwrap();
        assert_eq!((trace.len(), trace.period_ms()), (4, 10));
        for (text, line, what) in [
            ("1\n\n3\n", Some(2), "empty line"),
            ("1\nx\n", Some(2), "`x` is not"),
            ("5\n3\n", Some(2), "before the previous"),
            ("0\n0\n", None, "more than 0 ms"),
            ("", None, "no opportunities"),
            ("-1\n", Some(1), "not a whole number"),
        ] {
            let e = DeliveryTrace::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(what), "{text:?}: {e}");
        }
    }

    /// A sparse 1 GB file is refused by its size, before a byte is read (so neither the
    /// time nor the memory of reading it is spent), and its error names the file.
    #[test]
    fn a_sparse_gigabyte_trace_is_refused_by_its_size_unread() {
        let path = std::env::temp_dir().join(format!("bauxite-sparse-{}.up", std::process::id()));
        std::fs::File::create(&path).unwrap().set_len(1 << 30).unwrap();
        let e = DeliveryTrace::load(&path).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert_eq!(e.file, path.display().to_string());
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    /// The traces shipped in `examples/traces/` load, and are what their README says
    /// they are (60 s, the mean rates it gives, the tunnel's outage).
    #[test]
    fn the_example_traces_are_what_their_readme_says() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces");
        for (file, mean_mbps, silent) in [
            ("lte-drive.up", 5.6, 0..=0),
            ("evdo-drive.up", 0.9, 0..=0),
            ("tunnel.up", 4.4, 5..=8),
            ("handover.csv", 4.6, 0..=0),
        ] {
            let stats = DeliveryTrace::load(&dir.join(file)).unwrap_or_else(|e| panic!("{e}")).stats();
            assert!((stats.duration_s - 60.0).abs() < 0.01, "{file}: {stats}");
            assert!((stats.mean_mbps - mean_mbps).abs() < 0.05, "{file}: {stats}");
            assert!(silent.contains(&stats.silent_seconds), "{file}: {stats}");
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(name == "README.md" || readme.contains(&format!("`{name}`")), "{name} is not in the README");
        }
    }

    #[test]
    fn opportunities_repeat_shifted_by_the_last_timestamp() {
        let trace = DeliveryTrace::parse("0\n4\n10\n").unwrap();
        let ms: Vec<u64> = (0..7).map(|k| trace.opportunity_ns(k) / NS_PER_MS).collect();
        // mahimahi's wraparound: base += last timestamp, so 10 and 10+0 coincide.
        assert_eq!(ms, [0, 4, 10, 10, 14, 20, 20]);
    }

    #[test]
    fn the_first_usable_opportunity_is_strictly_after_the_arrival() {
        let trace = DeliveryTrace::parse("2\n2\n5\n10\n").unwrap();
        assert_eq!(trace.first_after_ns(0), 0);
        assert_eq!(trace.first_after_ns(2 * NS_PER_MS - 1), 0);
        assert_eq!(trace.first_after_ns(2 * NS_PER_MS), 2, "both opportunities at 2 ms are gone");
        assert_eq!(trace.first_after_ns(9 * NS_PER_MS), 3);
        assert_eq!(trace.first_after_ns(10 * NS_PER_MS), 4, "the next repetition");
        assert_eq!(trace.opportunity_ns(4), 12 * NS_PER_MS);
    }

    #[test]
    fn a_rate_csv_becomes_the_opportunities_of_those_rates() {
        // 12.032 Mbit/s is one opportunity per ms; 0 is an outage; 6.016 one per 2 ms.
        let trace = DeliveryTrace::parse_rates("time_s,rate_mbps\n0,12.032\n1,0\n3,6.016\n").unwrap();
        assert_eq!(trace.period_ms(), 5000, "the last rate holds as long as the step before it");
        // An opportunity is offered at the end of the millisecond that filled it: the
        // first second's last one is at 1000 ms, which counts in the next second.
        let seconds = trace.capacity_bps(1000);
        assert_eq!(seconds[..3], [999.0 * 1504.0 * 8.0, 1504.0 * 8.0, 0.0]);
        assert_eq!(trace.len(), 2000);
        let stats = trace.stats();
        assert_eq!((stats.silent_seconds, stats.opportunities), (1, 2000), "{stats}");
        assert!((stats.mean_mbps - 2000.0 * 1504.0 * 8.0 / 5.0 / 1e6).abs() < 1e-9, "{stats}");
        assert_eq!(DeliveryTrace::parse_rates("0,1.5\n").unwrap().period_ms(), 1000, "one row: one second");
        for (text, line, what) in [
            ("0,1\n1\n", Some(2), "is not `time_s,rate_mbps`"),
            ("0,1\n1,-2\n", Some(2), "rate_mbps `-2`"),
            ("0,1\n0.5,x\n", Some(2), "rate_mbps `x`"),
            ("1,1\n", Some(1), "not 0"),
            ("0,1\n2,1\n2,3\n", Some(3), "does not come after"),
            ("0,5\n1,0\n", None, "ends in an outage"),
            ("0,0.001\n", None, "never add up"),
            ("time_s,rate_mbps\n", None, "no rows"),
        ] {
            let e = DeliveryTrace::parse_rates(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_constant_trace_has_the_asked_mean_rate() {
        for bps in [1_500_000u64, 12_000_000, 50_000_000] {
            let trace = DeliveryTrace::constant(bps, 1000);
            assert!((trace.mean_bps() / bps as f64 - 1.0).abs() < 0.01, "{bps}: {}", trace.mean_bps());
            assert!(trace.ms.windows(2).all(|w| w[0] <= w[1]));
        }
        let rates = DeliveryTrace::parse("1\n1\n2\n1000\n").unwrap().capacity_bps(500);
        assert_eq!(rates, [3.0 * 1504.0 * 8.0 * 2.0, 1504.0 * 8.0 * 2.0]);
    }
}

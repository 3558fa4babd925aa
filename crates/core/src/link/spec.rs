//! The link as users write it: `--link trace=FILE,queue=100kb,delay=20ms`, and a
//! timeline file of changes at given times.
//!
//! One place configures every stage, so the demo, the simulator and the bridge
//! evaluation describe links the same way.
//!
//! | key | value | stage |
//! |---|---|---|
//! | `rate` | `1.5mbit`, `unlimited` | constant rate |
//! | `trace` | a mahimahi `mm-link` file | trace-driven rate (instead of `rate`) |
//! | `queue` | `100kb`, `64kib`, `1500b` | drop-tail buffer in bytes (default 100 KB) |
//! | `queue_packets` | `100` | drop-tail buffer in packets |
//! | `burst` | `7570b` | a constant rate as a token bucket of this many bytes (Linux TBF's `burst`; the demo's TBF holds 5 full packets); without it a wire, serialising each packet |
//! | `delay` | `20ms` | propagation delay |
//! | `jitter` | `5ms` | delay varies uniformly within ± this, never reordering |
//! | `loss` | `1%` or `0.01` | independent loss |
//! | `ge` | `p/r/1-h/1-k`, e.g. `1%/25%/80%/0` | Gilbert–Elliott bursty loss (netem's order) |
//! | `seed` | `7` | loss and jitter's random stream |
//! | `timeline` | a YAML file | changes at given times (see [`Timeline`]) |

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::loss::{GilbertElliott, LossModel};
use super::model::{LinkChange, LinkConfig, LinkRate, QueueLimit};
use super::trace::DeliveryTrace;
use crate::units::{BitRate, deserialize_from_str, parse_duration};

/// The longest delay or jitter a link may have: a geostationary hop is 0.25 s; ten
/// seconds covers any radio, and keeps a typo from holding packets for a day.
pub const MAX_LINK_DELAY: Duration = Duration::from_secs(10);

/// The largest buffer: far beyond any modem's, small enough to keep in memory.
pub const MAX_QUEUE_BYTES: u64 = 1 << 30;

/// How the rate is given.
#[derive(Clone, Debug, PartialEq)]
pub enum RateSpec {
    /// No rate limit.
    Unlimited,
    /// A constant rate.
    Constant(BitRate),
    /// A trace file, read when the link is built.
    Trace(PathBuf),
}

/// A parsed `--link` value. See the module documentation for its keys.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// The rate stage.
    pub rate: RateSpec,
    /// The buffer.
    pub queue: QueueLimit,
    /// A constant rate's token bucket, bytes.
    pub burst_bytes: Option<u64>,
    /// Propagation delay.
    pub delay: Duration,
    /// Delay jitter.
    pub jitter: Duration,
    /// Loss.
    pub loss: LossModel,
    /// The random stream's seed.
    pub seed: u64,
    /// Changes over time, read when the link is built.
    pub timeline: Option<PathBuf>,
}

impl Default for LinkSpec {
    fn default() -> Self {
        let config = LinkConfig::default();
        Self {
            rate: RateSpec::Unlimited,
            queue: config.queue,
            burst_bytes: config.burst_bytes,
            delay: config.delay,
            jitter: config.jitter,
            loss: config.loss,
            seed: config.seed,
            timeline: None,
        }
    }
}

/// Why a link description was refused: what is wrong, naming the key or file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpecError(pub String);

impl fmt::Display for LinkSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LinkSpecError {}

impl FromStr for LinkSpec {
    type Err = LinkSpecError;

    fn from_str(text: &str) -> Result<Self, LinkSpecError> {
        let mut spec = LinkSpec::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| LinkSpecError(format!("link `{item}`: expected key=value (e.g. delay=20ms)")))?;
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(LinkSpecError(format!("link: `{key}` given twice")));
            }
            seen.push(key);
            let bad = |why: String| LinkSpecError(format!("link `{key}={value}`: {why}"));
            match key {
                "rate" => spec.rate = parse_rate(value).map_err(bad)?,
                "trace" => spec.rate = RateSpec::Trace(PathBuf::from(value)),
                "queue" => spec.queue.bytes = Some(parse_queue_bytes(value).map_err(bad)?),
                "queue_packets" => spec.queue.packets = Some(parse_count(value).map_err(bad)?),
                "burst" => spec.burst_bytes = Some(parse_burst_bytes(value).map_err(bad)?),
                "delay" => spec.delay = parse_link_delay(value).map_err(bad)?,
                "jitter" => spec.jitter = parse_link_delay(value).map_err(bad)?,
                "loss" => spec.loss = LossModel::Bernoulli(parse_probability(value).map_err(bad)?),
                "ge" => spec.loss = parse_gilbert_elliott(value).map_err(bad)?,
                "seed" => spec.seed = value.parse().map_err(|_| bad("not a whole number".into()))?,
                "timeline" => spec.timeline = Some(PathBuf::from(value)),
                _ => {
                    return Err(LinkSpecError(format!(
                        "link: unknown key `{key}` (known: rate, trace, queue, queue_packets, burst, delay, jitter, loss, ge, seed, timeline)"
                    )));
                }
            }
        }
        if seen.contains(&"rate") && seen.contains(&"trace") {
            return Err(LinkSpecError("link: give `rate` or `trace`, not both".into()));
        }
        if seen.contains(&"burst") && !matches!(spec.rate, RateSpec::Constant(_)) {
            return Err(LinkSpecError("link: `burst` is a constant rate's bucket: give it with `rate=RATE`".into()));
        }
        if seen.contains(&"loss") && seen.contains(&"ge") {
            return Err(LinkSpecError("link: give `loss` or `ge`, not both".into()));
        }
        Ok(spec)
    }
}

impl LinkSpec {
    /// The link's starting configuration, reading the trace file if there is one.
    pub fn config(&self) -> Result<LinkConfig, LinkSpecError> {
        Ok(LinkConfig {
            rate: match &self.rate {
                RateSpec::Unlimited => LinkRate::Unlimited,
                RateSpec::Constant(rate) => LinkRate::Constant(*rate),
                RateSpec::Trace(path) => load_trace(path)?,
            },
            queue: self.queue,
            burst_bytes: self.burst_bytes,
            delay: self.delay,
            jitter: self.jitter,
            loss: self.loss,
            seed: self.seed,
        })
    }

    /// The timeline, read from its file (empty without one).
    pub fn timeline(&self) -> Result<Timeline, LinkSpecError> {
        match &self.timeline {
            None => Ok(Timeline::default()),
            Some(path) => Timeline::load(path),
        }
    }
}

fn load_trace(path: &Path) -> Result<LinkRate, LinkSpecError> {
    DeliveryTrace::load(path).map(|t| LinkRate::Trace(Arc::new(t))).map_err(|e| LinkSpecError(e.to_string()))
}

/// The link a command is given: a `--link` value and, optionally, a `--timeline`
/// file (the same as `timeline=FILE` in the value; one or the other). Returns the
/// label of the results (the value, with the timeline), the starting link and its
/// timeline, every file read; errors name the key, or the file and line.
pub fn load_link(text: &str, timeline: Option<&Path>) -> Result<(String, LinkConfig, Timeline), LinkSpecError> {
    let mut spec: LinkSpec = text.parse()?;
    let mut label = text.to_string();
    if let Some(file) = timeline {
        if spec.timeline.is_some() {
            return Err(LinkSpecError("link: give the timeline as `timeline=FILE` or as --timeline, not both".into()));
        }
        spec.timeline = Some(file.to_path_buf());
        label = format!("{text},timeline={}", file.display());
    }
    Ok((label, spec.config()?, spec.timeline()?))
}

/// A `--link` value's links by direction. Mahimahi's traces come in `.up`/`.down`
/// pairs, and a run that measures one direction still carries the other's ACKs and
/// probe answers.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkDirections {
    /// `SPEC`: the link of the direction(s) the run measures; a direction it does not
    /// measure is the return path, uncongested, with the same delay.
    Measured(LinkConfig),
    /// `up=SPEC,down=SPEC`: each direction's own link (robot → far end, and back); a
    /// direction left out is uncongested, with the given one's delay.
    Each {
        /// The uplink.
        up: Option<LinkConfig>,
        /// The downlink.
        down: Option<LinkConfig>,
    },
}

impl LinkDirections {
    /// The uplink's and the downlink's links for a run that measures the uplink
    /// (`measures_up`), the downlink (`measures_down`) or both.
    pub fn resolve(&self, measures_up: bool, measures_down: bool) -> (LinkConfig, LinkConfig) {
        let return_path = |of: &LinkConfig| LinkConfig { delay: of.delay, ..LinkConfig::default() };
        match self {
            Self::Measured(link) => (
                if measures_up || !measures_down { link.clone() } else { return_path(link) },
                if measures_down { link.clone() } else { return_path(link) },
            ),
            Self::Each { up: Some(up), down: Some(down) } => (up.clone(), down.clone()),
            Self::Each { up: Some(up), down: None } => (up.clone(), return_path(up)),
            Self::Each { up: None, down: Some(down) } => (return_path(down), down.clone()),
            Self::Each { up: None, down: None } => (LinkConfig::default(), LinkConfig::default()),
        }
    }
}

/// A `--link` value that may give each direction (`up=SPEC,down=SPEC`, either left
/// out) or one link (`SPEC`, see [`LinkDirections::Measured`]), and the optional
/// `--timeline` file, which changes the direction(s) the run measures. Returns the
/// label of the results, the links and the timeline; errors name the direction and
/// the key, or the file and line.
pub fn load_link_directions(
    text: &str,
    timeline: Option<&Path>,
) -> Result<(String, LinkDirections, Timeline), LinkSpecError> {
    let Some(parts) = split_directions(text)? else {
        let (label, link, timeline) = load_link(text, timeline)?;
        return Ok((label, LinkDirections::Measured(link), timeline));
    };
    let (mut up, mut down) = (None, None);
    for (direction, spec) in parts {
        let in_direction = |e: LinkSpecError| LinkSpecError(format!("{direction}=: {e}"));
        let parsed: LinkSpec = spec.parse().map_err(in_direction)?;
        if parsed.timeline.is_some() {
            return Err(LinkSpecError(format!(
                "{direction}=: give the timeline with --timeline (it changes the direction(s) the run measures)"
            )));
        }
        let link = parsed.config().map_err(in_direction)?;
        let slot = if direction == "up" { &mut up } else { &mut down };
        if slot.replace(link).is_some() {
            return Err(LinkSpecError(format!("link: `{direction}=` given twice")));
        }
    }
    let mut label = text.to_string();
    let timeline = match timeline {
        None => Timeline::default(),
        Some(file) => {
            label = format!("{text},timeline={}", file.display());
            Timeline::load(file)?
        }
    };
    Ok((label, LinkDirections::Each { up, down }, timeline))
}

/// `up=A,…,down=B,…` split into its directions' SPECs (`None` for a value that names
/// no direction): a new part starts at each item `up=` or `down=`, which no key of a
/// SPEC is.
fn split_directions(text: &str) -> Result<Option<Vec<(&'static str, String)>>, LinkSpecError> {
    let direction_of = |item: &str| match item.trim_start() {
        i if i.starts_with("up=") => Some("up"),
        i if i.starts_with("down=") => Some("down"),
        _ => None,
    };
    // Each part: its direction and its SPEC's items.
    let mut parts: Vec<(&'static str, Vec<&str>)> = Vec::new();
    let mut before_any = None;
    for item in text.split(',') {
        match (direction_of(item), parts.last_mut()) {
            (Some(direction), _) => parts.push((direction, vec![&item.trim_start()[direction.len() + 1..]])),
            (None, Some((_, items))) => items.push(item),
            (None, None) => before_any = before_any.or(Some(item)).filter(|i| !i.trim().is_empty()),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    if let Some(item) = before_any {
        return Err(LinkSpecError(format!(
            "link `{item}`: with up= or down=, every key belongs to one (e.g. up=trace=A.up,queue=100kb,down=trace=A.down)"
        )));
    }
    let mut out = Vec::new();
    for (direction, items) in parts {
        let spec = items.join(",");
        if spec.trim().is_empty() {
            return Err(LinkSpecError(format!("link: `{direction}=` names no link (e.g. {direction}=rate=1.5mbit)")));
        }
        out.push((direction, spec));
    }
    Ok(Some(out))
}

/// The 1-based line of each top-level list item (`- ...`) of a timeline file: where
/// each step starts, for errors.
fn step_lines(text: &str) -> Vec<usize> {
    text.lines().enumerate().filter(|(_, l)| *l == "-" || l.starts_with("- ")).map(|(i, _)| i + 1).collect()
}

fn parse_rate(value: &str) -> Result<RateSpec, String> {
    if value == "unlimited" {
        return Ok(RateSpec::Unlimited);
    }
    value.parse::<BitRate>().map(RateSpec::Constant).map_err(|e| e.to_string())
}

/// `100kb` (10^3), `64kib` (2^10), `1mb`, `1500b` or a plain number of bytes.
pub fn parse_queue_bytes(value: &str) -> Result<u64, String> {
    let lower = value.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale: u64 = match &lower[digits.len()..] {
        "" | "b" => 1,
        "kb" => 1000,
        "kib" => 1 << 10,
        "mb" => 1_000_000,
        "mib" => 1 << 20,
        unit => return Err(format!("unknown unit `{unit}` (b, kb, kib, mb, mib)")),
    };
    let number: f64 = digits.parse().map_err(|_| format!("`{digits}` is not a number"))?;
    let bytes = number * scale as f64;
    if !(1.0..=MAX_QUEUE_BYTES as f64).contains(&bytes) {
        return Err(format!("must be between 1 byte and {MAX_QUEUE_BYTES} bytes"));
    }
    Ok(bytes as u64)
}

/// A token bucket must hold a full packet, or that packet never leaves.
fn parse_burst_bytes(value: &str) -> Result<u64, String> {
    let bytes = parse_queue_bytes(value)?;
    if bytes < 1514 {
        return Err("a bucket must hold a full packet: at least 1514 bytes".into());
    }
    Ok(bytes)
}

fn parse_count(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err("must be a whole number of packets from 1 to 1000000".into()),
    }
}

/// A delay or jitter: `0` or a duration up to [`MAX_LINK_DELAY`].
fn parse_link_delay(value: &str) -> Result<Duration, String> {
    if value.trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(Duration::ZERO);
    }
    let d = parse_duration(value).map_err(|e| e.to_string())?;
    if d > MAX_LINK_DELAY {
        return Err(format!("more than the {}s a link may delay", MAX_LINK_DELAY.as_secs()));
    }
    Ok(d)
}

/// `1%` or `0.01`.
fn parse_probability(value: &str) -> Result<f64, String> {
    let (number, scale) = match value.strip_suffix('%') {
        Some(percent) => (percent, 100.0),
        None => (value, 1.0),
    };
    let p = number.trim().parse::<f64>().map_err(|_| format!("`{value}` is not a probability"))? / scale;
    if (0.0..=1.0).contains(&p) { Ok(p) } else { Err(format!("`{value}` is not between 0 and 1 (0 % and 100 %)")) }
}

fn parse_gilbert_elliott(value: &str) -> Result<LossModel, String> {
    let parts: Vec<&str> = value.split('/').collect();
    let [p, r, loss_bad, loss_good] = parts[..] else {
        return Err("expected p/r/1-h/1-k, e.g. 1%/25%/80%/0".into());
    };
    Ok(LossModel::GilbertElliott(GilbertElliott {
        p: parse_probability(p)?,
        r: parse_probability(r)?,
        loss_bad: parse_probability(loss_bad)?,
        loss_good: parse_probability(loss_good)?,
    }))
}

/// Changes to a link at given times from the start of a run, in time order.
///
/// As a YAML file, a list of steps, each with `at` and one or more changes:
/// ```yaml
/// - {at: 5s, rate: 1.5mbit}            # the seed-000 step drop
/// - {at: 20s, trace: verizon.up}      # a trace, from its beginning
/// - {at: 30s, delay: 40ms, jitter: 5ms, loss: 2%, queue: 50kb}
/// - {at: 40s, ge: 1%/25%/80%/0}
/// - {at: 50s, rate: unlimited, loss: 0}
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// (time from the start, change), sorted by time; simultaneous changes keep their order.
    pub steps: Vec<(Duration, LinkChange)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepText {
    #[serde(deserialize_with = "deserialize_from_str")]
    at: TimeText,
    #[serde(default, deserialize_with = "text")]
    rate: Option<String>,
    #[serde(default)]
    trace: Option<PathBuf>,
    #[serde(default, deserialize_with = "text")]
    queue: Option<String>,
    #[serde(default)]
    queue_packets: Option<usize>,
    #[serde(default, deserialize_with = "text")]
    delay: Option<String>,
    #[serde(default, deserialize_with = "text")]
    jitter: Option<String>,
    #[serde(default, deserialize_with = "text")]
    loss: Option<String>,
    #[serde(default, deserialize_with = "text")]
    ge: Option<String>,
}

/// A value as its text, whether YAML wrote it as a string or a number (`loss: 0`).
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct AnyText(String);
    impl FromStr for AnyText {
        type Err = std::convert::Infallible;
        fn from_str(text: &str) -> Result<Self, Self::Err> {
            Ok(AnyText(text.to_string()))
        }
    }
    deserialize_from_str::<D, AnyText>(d).map(|t| Some(t.0))
}

/// A time from the start of a run: `0`, `5s`, `1500ms`.
struct TimeText(Duration);

impl FromStr for TimeText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_link_time(text).map(TimeText)
    }
}

fn parse_link_time(text: &str) -> Result<Duration, String> {
    if text.trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(Duration::ZERO);
    }
    parse_duration(text).map_err(|e| e.to_string())
}

impl Timeline {
    /// A timeline of constant rates: `(at, rate)` pairs (the demo's step drop is one).
    pub fn of_rates(steps: &[(Duration, BitRate)]) -> Self {
        let mut timeline =
            Self { steps: steps.iter().map(|&(at, rate)| (at, LinkChange::Rate(LinkRate::Constant(rate)))).collect() };
        timeline.steps.sort_by_key(|(at, _)| *at);
        timeline
    }

    /// Reads a timeline file; errors name the file, the line and the key. Trace files
    /// are found relative to the timeline's directory.
    pub fn load(path: &Path) -> Result<Self, LinkSpecError> {
        let text = crate::config::read_config(path).map_err(|e| LinkSpecError(e.to_string()))?;
        let steps: Vec<StepText> = crate::config::parse_yaml(&text, path).map_err(|e| LinkSpecError(e.to_string()))?;
        if steps.is_empty() {
            // An empty file (or only comments) is most likely the wrong file: a run
            // without the change it was given for would look like a result.
            return Err(LinkSpecError(format!(
                "{}: no steps (a timeline is a list such as `- {{at: 5s, rate: 1.5mbit}}`)",
                path.display()
            )));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let step_lines = step_lines(&text);
        let mut timeline = Timeline::default();
        for (i, step) in steps.into_iter().enumerate() {
            let changes_before = timeline.steps.len();
            let at = step.at.0;
            let place = match step_lines.get(i) {
                Some(line) => format!("{}:{line}", path.display()),
                None => path.display().to_string(),
            };
            let bad =
                |key: &str, why: String| LinkSpecError(format!("{place}: step {} (at {at:?}): `{key}`: {why}", i + 1));
            let mut push = |change| timeline.steps.push((at, change));
            if let Some(rate) = &step.rate {
                let rate = match parse_rate(rate).map_err(|e| bad("rate", e))? {
                    RateSpec::Unlimited => LinkRate::Unlimited,
                    RateSpec::Constant(r) => LinkRate::Constant(r),
                    RateSpec::Trace(_) => unreachable!("parse_rate never reads a file"),
                };
                push(LinkChange::Rate(rate));
            }
            if let Some(trace) = &step.trace {
                push(LinkChange::Rate(load_trace(&base.join(trace)).map_err(|e| bad("trace", e.0))?));
            }
            if step.queue.is_some() || step.queue_packets.is_some() {
                let bytes = step.queue.as_deref().map(parse_queue_bytes).transpose().map_err(|e| bad("queue", e))?;
                push(LinkChange::Queue(QueueLimit { bytes, packets: step.queue_packets }));
            }
            if let Some(delay) = &step.delay {
                push(LinkChange::Delay(parse_link_delay(delay).map_err(|e| bad("delay", e))?));
            }
            if let Some(jitter) = &step.jitter {
                push(LinkChange::Jitter(parse_link_delay(jitter).map_err(|e| bad("jitter", e))?));
            }
            if let Some(loss) = &step.loss {
                let p = parse_probability(loss).map_err(|e| bad("loss", e))?;
                push(LinkChange::Loss(if p == 0.0 { LossModel::None } else { LossModel::Bernoulli(p) }));
            }
            if let Some(ge) = &step.ge {
                push(LinkChange::Loss(parse_gilbert_elliott(ge).map_err(|e| bad("ge", e))?));
            }
            if timeline.steps.len() == changes_before {
                return Err(bad(
                    "at",
                    "changes nothing: give rate, trace, queue, queue_packets, delay, jitter, loss or ge".into(),
                ));
            }
        }
        timeline.steps.sort_by_key(|(at, _)| *at);
        Ok(timeline)
    }

    /// The steps due in `(after, until]`, for a driver that wakes now and then.
    pub fn due(&self, after: Option<Duration>, until: Duration) -> impl Iterator<Item = &(Duration, LinkChange)> {
        self.steps.iter().filter(move |(at, _)| after.is_none_or(|a| *at > a) && *at <= until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_spec_names_every_stage() {
        let spec: LinkSpec =
            "trace=up.trace, queue=100kb,delay=20ms,jitter=2ms,ge=1%/25%/80%/0,seed=9".parse().unwrap();
        assert_eq!(spec.rate, RateSpec::Trace(PathBuf::from("up.trace")));
        assert_eq!(spec.queue, QueueLimit { bytes: Some(100_000), packets: None });
        assert_eq!((spec.delay, spec.jitter), (Duration::from_millis(20), Duration::from_millis(2)));
        assert_eq!(
            spec.loss,
            LossModel::GilbertElliott(GilbertElliott { p: 0.01, r: 0.25, loss_bad: 0.8, loss_good: 0.0 })
        );
        assert_eq!(spec.seed, 9);
        let spec: LinkSpec = "rate=1.5mbit,queue=64kib,queue_packets=100,loss=0.5%,delay=0".parse().unwrap();
        assert_eq!(spec.rate, RateSpec::Constant(BitRate::from_bps(1_500_000)));
        assert_eq!(spec.queue, QueueLimit { bytes: Some(65_536), packets: Some(100) });
        assert_eq!((spec.loss, spec.delay), (LossModel::Bernoulli(0.005), Duration::ZERO));
        assert_eq!(spec.burst_bytes, None, "a wire unless a bucket is given");
        let spec: LinkSpec = "rate=1.5mbit,burst=7570b".parse().unwrap();
        assert_eq!(spec.config().unwrap().burst_bytes, Some(7570));
    }

    #[test]
    fn a_link_value_gives_each_direction_or_the_measured_ones() {
        let rate = |bps| LinkRate::Constant(BitRate::from_bps(bps));
        let (label, links, timeline) =
            load_link_directions("up=rate=1.5mbit,queue=50kb,delay=20ms, down=rate=8mbit", None).unwrap();
        assert_eq!(label, "up=rate=1.5mbit,queue=50kb,delay=20ms, down=rate=8mbit");
        assert!(timeline.steps.is_empty());
        let (up, down) = links.resolve(true, false);
        assert_eq!(
            (up.rate.clone(), up.queue.bytes, up.delay),
            (rate(1_500_000), Some(50_000), Duration::from_millis(20))
        );
        assert_eq!((down.rate.clone(), down.delay), (rate(8_000_000), Duration::ZERO), "each its own keys");
        assert_eq!(links.resolve(false, true), (up.clone(), down.clone()), "given links whatever is measured");

        // One direction given: the other is its return path, uncongested with its delay.
        let (_, links, _) = load_link_directions("down=rate=2mbit,delay=30ms", None).unwrap();
        let (up, down) = links.resolve(false, true);
        assert_eq!((up.rate, up.delay), (LinkRate::Unlimited, Duration::from_millis(30)));
        assert_eq!(down.rate, rate(2_000_000));

        // A plain SPEC is the link of whatever the run measures.
        let (_, links, _) = load_link_directions("rate=3mbit,delay=10ms", None).unwrap();
        let measured = |(up, down): (LinkConfig, LinkConfig)| (up.rate, down.rate);
        assert_eq!(measured(links.resolve(true, false)), (rate(3_000_000), LinkRate::Unlimited));
        assert_eq!(measured(links.resolve(false, true)), (LinkRate::Unlimited, rate(3_000_000)));
        assert_eq!(measured(links.resolve(true, true)), (rate(3_000_000), rate(3_000_000)));
        assert_eq!(links.resolve(false, true).0.delay, Duration::from_millis(10), "the return path's delay");
    }

    #[test]
    fn bad_link_directions_are_named() {
        for (text, says) in [
            ("rate=1mbit,up=rate=2mbit", "every key belongs to one"),
            ("up=rate=1mbit,up=rate=2mbit", "`up=` given twice"),
            ("up=,down=rate=1mbit", "`up=` names no link"),
            ("up=rate=fast", "up=: link `rate=fast`"),
            ("down=rate=1mbit,bandwidth=2", "down=: link: unknown key `bandwidth`"),
            ("down=rate=1mbit,timeline=x.yaml", "give the timeline with --timeline"),
        ] {
            let e = load_link_directions(text, None).expect_err(text);
            assert!(e.0.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn bad_link_specs_name_the_key_and_why() {
        for (text, says) in [
            ("rate=fast", "rate=fast"),
            ("queue=10furlongs", "unknown unit"),
            ("queue=0", "between 1 byte"),
            ("delay=1h", "delay=1h"),
            ("delay=11s", "more than the 10s"),
            ("loss=150%", "not between 0 and 1"),
            ("ge=1%/2%", "expected p/r/1-h/1-k"),
            ("bandwidth=3mbit", "unknown key `bandwidth`"),
            ("delay", "expected key=value"),
            ("rate=1mbit,trace=x", "not both"),
            ("delay=1ms,delay=2ms", "given twice"),
            ("seed=-1", "whole number"),
            ("rate=1mbit,burst=1000b", "at least 1514 bytes"),
            ("trace=x,burst=8kb", "constant rate's bucket"),
        ] {
            let e = text.parse::<LinkSpec>().unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_missing_trace_file_is_named() {
        let spec: LinkSpec = "trace=/nonexistent/up.trace".parse().unwrap();
        let e = spec.config().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/up.trace") && e.contains("cannot read"), "{e}");
    }

    #[test]
    fn timelines_read_from_yaml_in_time_order() {
        let dir = std::env::temp_dir().join(format!("bauxite-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.up"), "1\n2\n").unwrap();
        let path = dir.join("timeline.yaml");
        std::fs::write(
            &path,
            "- {at: 5s, rate: 1.5mbit}\n- {at: 0, rate: 50mbit, loss: 0}\n- {at: 8s, trace: t.up, delay: 20ms, loss: 1%}\n",
        )
        .unwrap();
        let timeline = Timeline::load(&path).unwrap();
        let times: Vec<u64> = timeline.steps.iter().map(|(at, _)| at.as_millis() as u64).collect();
        assert_eq!(times, [0, 0, 5000, 8000, 8000, 8000]);
        assert_eq!(timeline.steps[1].1, LinkChange::Loss(LossModel::None));
        assert_eq!(timeline.steps[2].1, LinkChange::Rate(LinkRate::Constant(BitRate::from_bps(1_500_000))));
        assert!(matches!(&timeline.steps[3].1, LinkChange::Rate(LinkRate::Trace(t)) if t.len() == 2));
        assert_eq!(timeline.due(Some(Duration::from_secs(5)), Duration::from_secs(9)).count(), 3);

        std::fs::write(&path, "- {at: 5s, rate: 1.5mbit}\n- {at: 6s, jitter: 20s}\n").unwrap();
        let e = Timeline::load(&path).unwrap_err().to_string();
        assert!(e.contains("timeline.yaml:2: step 2") && e.contains("`jitter`") && e.contains("10s"), "{e}");
        // A missing trace names the timeline's line and the trace file.
        std::fs::write(&path, "# a comment\n- at: 1s\n  trace: missing.up\n").unwrap();
        let e = load_link("queue=50kb", Some(&path)).unwrap_err().to_string();
        assert!(e.contains("timeline.yaml:2: step 1") && e.contains("missing.up"), "{e}");
        let e = load_link(&format!("timeline={}", path.display()), Some(&path)).unwrap_err().to_string();
        assert!(e.contains("not both"), "{e}");
        std::fs::write(&path, "- {at: 5s, bandwidth: 1mbit}\n").unwrap();
        let e = Timeline::load(&path).unwrap_err().to_string();
        assert!(e.contains("timeline.yaml:1") && e.contains("bandwidth"), "{e}");
        // An empty file, or only comments, is not a timeline; nor is a step that changes nothing.
        for empty in ["", "# only a comment\n", "[]\n"] {
            std::fs::write(&path, empty).unwrap();
            let e = Timeline::load(&path).unwrap_err().to_string();
            assert!(e.contains("timeline.yaml: no steps"), "{empty:?}: {e}");
        }
        std::fs::write(&path, "- {at: 5s, rate: 1mbit}\n- {at: 6s}\n").unwrap();
        let e = Timeline::load(&path).unwrap_err().to_string();
        assert!(e.contains("timeline.yaml:2: step 2") && e.contains("changes nothing"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

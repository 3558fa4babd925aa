//! Loading configs (profiles, and the YAML every Bauxite config is written in), with errors that name the file, the line and the key.

use std::fmt;
use std::io::Read;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::profile::{Profile, ProfileError};
use crate::units::{BitRate, format_duration};
use crate::validate::ValidatedProfile;

/// The largest config file read: 1 MiB. Bauxite's configs are a few kilobytes (the
/// largest possible profile, 8 lanes and 64 rules, is under 8 KiB); a bound keeps
/// `--config /dev/zero` or a wrong multi-gigabyte file from filling memory.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Why a config file was not accepted. Nothing is applied when this is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line the problem is on, when it can be told.
    pub line: Option<usize>,
    /// The offending key (dotted path), when it can be told.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Reads and validates a profile file.
pub fn load_profile(path: &Path) -> Result<ValidatedProfile, ConfigError> {
    parse_profile(&read_config(path)?, path)
}

/// Parses and validates profile YAML read from `file`. A relative path in it
/// (`auto_rate.key_file`) is taken from the file's directory, as a reader of the file
/// expects, not from wherever the daemon was started.
pub fn parse_profile(text: &str, file: &Path) -> Result<ValidatedProfile, ConfigError> {
    let mut profile: Profile = parse_yaml(text, file)?;
    if let Some(key_file) = profile.auto_rate.key_file.as_mut()
        && key_file.is_relative()
        && !key_file.as_os_str().is_empty()
    {
        *key_file = file.parent().unwrap_or(Path::new("")).join(&*key_file);
    }
    profile.validate().map_err(|e| validation_error(e, text, file))
}

/// A config file's text; a file that cannot be read is an error naming it.
///
/// Only a regular file (or a link to one) of at most [`MAX_CONFIG_BYTES`] is read:
/// a FIFO would block `open` until a writer came, and a device such as `/dev/zero`
/// never ends. The file is opened non-blocking and checked again once open, so a
/// path swapped for a FIFO after the first check cannot block either.
pub fn read_config(path: &Path) -> Result<String, ConfigError> {
    let error = |message: String| ConfigError { file: path.to_path_buf(), line: None, key: None, message };
    let bytes = read_regular_file(path, MAX_CONFIG_BYTES).map_err(|e| match e {
        FileReadError::TooLarge { .. } => {
            error(format!("is larger than {} KiB; a config is a few kilobytes", MAX_CONFIG_BYTES >> 10))
        }
        FileReadError::NotRegular(kind) => error(format!("is {kind}, not a regular file; a config must be a file")),
        e => error(e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|e| error(format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

/// Why [`read_regular_file`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum FileReadError {
    /// The file could not be opened or read.
    #[error("cannot read it")]
    Io(#[source] std::io::Error),
    /// Not a regular file (a FIFO would block forever, a device never end).
    #[error("is {0}, not a regular file")]
    NotRegular(&'static str),
    /// More than the caller's limit.
    #[error("is larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: u64,
    },
}

/// Reads a regular file (or a link to one) of at most `max` bytes, and nothing else:
/// a FIFO is refused without waiting for its writer, `/dev/zero` without reading it.
/// Every file Bauxite reads from a user (configs, traces, keys) goes through here.
pub fn read_regular_file(path: &Path, max: u64) -> Result<Vec<u8>, FileReadError> {
    let kind = std::fs::metadata(path).map_err(FileReadError::Io)?.file_type();
    if !kind.is_file() {
        return Err(FileReadError::NotRegular(file_kind(kind)));
    }
    let file = open_nonblocking(path).map_err(FileReadError::Io)?;
    // Checked again once open: the path may have been swapped in between.
    let kind = file.metadata().map_err(FileReadError::Io)?.file_type();
    if !kind.is_file() {
        return Err(FileReadError::NotRegular(file_kind(kind)));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(FileReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(FileReadError::TooLarge { max });
    }
    Ok(bytes)
}

/// Opens `path` for reading without waiting for a FIFO's writer.
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // It changes nothing for a regular file.
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// What a non-regular file is, for messages.
fn file_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() { "a directory" } else { "a special file" }
}

/// Deserializes YAML (every Bauxite config: profiles, the bridge's) into `T`; an error
/// names `file`, the line and the key's dotted path. Types should deny unknown fields,
/// so that a misspelt key is an error here rather than a silently ignored setting.
pub fn parse_yaml<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, ConfigError> {
    serde_yaml_ng::from_str(text).map_err(|e| {
        let mut error = yaml_error(&e, file);
        // The parser gives no position for a second document (found by fuzzing): point
        // at the marker that starts it.
        if error.line.is_none() && error.message.contains("more than one document") {
            error.line = second_document_line(text);
        }
        error
    })
}

/// The 1-based line where a second document starts: its `---` (the first document may or
/// may not start with one), or else the first line indented less than the first document's
/// first line (`  a: 1` then ` !b`), which the parser also reads as a new document.
fn second_document_line(text: &str) -> Option<usize> {
    let content = |l: &&str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| content(l) && *l != "---")?;
    let marker = (first + 1..lines.len()).find(|&i| lines[i] == "---" || lines[i].starts_with("--- "));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let dedent = (first + 1..lines.len()).find(|&i| content(&lines[i]) && indent(lines[i]) < indent(lines[first]));
    marker.or(dedent).map(|i| i + 1)
}

/// serde_yaml_ng prints `path.to.key: message at line L column C`; an unknown field is
/// named inside the message, after the path of its parent.
fn yaml_error(e: &serde_yaml_ng::Error, file: &Path) -> ConfigError {
    let full = e.to_string();
    let message = full.split(" at line ").next().unwrap_or(&full).to_string();
    let (path, message) = match message.split_once(": ") {
        Some((k, m)) if !k.contains(' ') => (Some(k.to_string()), m.to_string()),
        _ => (None, message),
    };
    let unknown = message.split("unknown field `").nth(1).and_then(|r| r.split('`').next());
    let key = match (path, unknown) {
        (Some(p), Some(u)) => Some(format!("{p}.{u}")),
        (None, Some(u)) => Some(u.to_string()),
        (p, None) => p,
    };
    ConfigError { file: file.to_path_buf(), line: e.location().map(|l| l.line()), key, message }
}

fn validation_error(e: ProfileError, text: &str, file: &Path) -> ConfigError {
    ConfigError {
        file: file.to_path_buf(),
        line: locate(text, &e.key, e.value.as_deref()),
        key: Some(e.key),
        message: e.message,
    }
}

/// A bounded value as a config error shows it: as a config would write it.
pub trait Shown {
    /// The value, written for a message.
    fn shown(&self) -> String;
}

impl Shown for f64 {
    /// Plain decimal between 1e-3 and 1e9; outside it an exponent, so that `1e-300`
    /// stays `1e-300` rather than 300 digits (the YAML parser hands numbers over in full).
    fn shown(&self) -> String {
        if *self == 0.0 || !self.is_finite() || (1e-3..1e9).contains(&self.abs()) {
            format!("{self}")
        } else {
            format!("{self:e}")
        }
    }
}

impl Shown for u32 {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl Shown for BitRate {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl Shown for Duration {
    fn shown(&self) -> String {
        format_duration(*self)
    }
}

/// The one bounds check of config values (profiles, the bridge's): `value` when
/// `min <= value <= max`, else the message `VALUE is not between MIN and MAX` (NaN is
/// never within). Callers add the key and why the range ends where it does.
pub fn within<T: PartialOrd + Shown>(value: T, range: RangeInclusive<T>) -> Result<T, String> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(format!("{} is not between {} and {}", value.shown(), range.start().shown(), range.end().shown()))
}

/// Finds the line of `key` (a dotted path such as `rules[2].lane`) in YAML text.
///
/// The YAML parser keeps no positions once a document is deserialized, so checks that
/// span several keys (in profiles and the bridge's config) find their line again here: the line that writes the leaf key
/// inside the top-level section (inside its n-th list item for `section[n]`),
/// preferably with `value`.
pub fn locate(text: &str, key: &str, value: Option<&str>) -> Option<usize> {
    let top = key.split(['.', '[']).next()?;
    let leaf = key.rsplit('.').next()?.split('[').next()?;
    let lines: Vec<&str> = text.lines().collect();
    let section = lines.iter().position(|l| l.starts_with(&format!("{top}:")))?;
    if leaf == top && value.is_none() {
        return Some(section + 1);
    }
    let end = (section + 1..lines.len())
        .find(|&i| lines[i].starts_with(|c: char| !c.is_whitespace() && c != '-' && c != '#'))
        .unwrap_or(lines.len());
    let index = key.split_once('[').and_then(|(_, rest)| rest.split(']').next()).and_then(|i| i.parse().ok());
    let (from, to) = index.and_then(|n| list_item(&lines, section, end, n)).unwrap_or((section, end));
    let writes_leaf = |line: &str, value: Option<&str>| {
        let Some(pos) = line.find(&format!("{leaf}:")) else { return false };
        let before = line[..pos].chars().last();
        let at_key_start = matches!(before, None | Some(' ' | '{' | ',' | '-'));
        let after = line[pos + leaf.len() + 1..].trim_start().trim_start_matches(['"', '\'']);
        at_key_start && value.is_none_or(|v| after.starts_with(v))
    };
    // With the value first (the same key may appear on several lines), then without
    // (the value may be written differently from how it prints, `1e-3` for `0.001`).
    [value, None].into_iter().find_map(|v| (from..to).find(|&i| writes_leaf(lines[i], v))).map(|i| i + 1)
}

/// The lines `[first, end)` of the `n`-th item (from 0) of the YAML list between
/// `section` and `end`: items are the lines that start with `- ` at the indentation
/// of the first one.
fn list_item(lines: &[&str], section: usize, end: usize, n: usize) -> Option<(usize, usize)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let is_item = |l: &str| l.trim_start().starts_with("- ") || l.trim() == "-";
    let first = (section..end).find(|&i| is_item(lines[i]))?;
    let width = indent(lines[first]);
    let items: Vec<usize> = (first..end).filter(|&i| is_item(lines[i]) && indent(lines[i]) == width).collect();
    let start = *items.get(n)?;
    Some((start, items.get(n + 1).copied().unwrap_or(end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_key_file_is_read_from_the_profiles_directory() {
        let mut robot = Profile::robot();
        robot.rate = crate::RateSetting::Auto;
        robot.auto_rate.reflector = vec!["10.0.0.2:7399".into()];
        robot.auto_rate.key_file = Some("keys/probe.key".into());
        let yaml = serde_yaml_ng::to_string(&robot).unwrap();
        let profile = parse_profile(&yaml, Path::new("/etc/bauxite/wwan0.yaml")).unwrap();
        assert_eq!(profile.auto_rate.key_file.as_deref(), Some(Path::new("/etc/bauxite/keys/probe.key")));
        let yaml = yaml.replace("keys/probe.key", "/run/keys/probe.key");
        let profile = parse_profile(&yaml, Path::new("/etc/bauxite/wwan0.yaml")).unwrap();
        assert_eq!(profile.auto_rate.key_file.as_deref(), Some(Path::new("/run/keys/probe.key")), "absolute stays");
    }

    const GOOD: &str = "\
name: test
rate: 2mbit
lanes:
  - {name: critical, share: 0.3}
  - {name: bulk, share: 0.5, drop_when_congested: true}
rules:
  - {lane: critical, proto: udp, ports: 7400-7401}
  - {lane: bulk, proto: tcp, ports: 8080}
default_lane: bulk
";

    fn parse(text: &str) -> Result<ValidatedProfile, ConfigError> {
        parse_profile(text, Path::new("bx.yaml"))
    }

    #[test]
    fn a_good_file_loads() {
        let p = parse(GOOD).unwrap();
        assert_eq!(p.lanes.len(), 2);
        assert_eq!(p.rate.to_string(), "2mbit");
    }

    #[test]
    fn a_second_document_is_refused_at_its_line() {
        // The whole profile indented, then a line indented less (found by fuzzing).
        let dedented = GOOD.lines().map(|l| format!("  {l}\n")).collect::<String>() + " !- x\n";
        for (text, line) in [(format!("{GOOD}---\nname: x\n"), 10), (format!("---\n{GOOD}--- \n"), 11), (dedented, 10)]
        {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.to_string().starts_with(&format!("bx.yaml:{line}: ")), "{e}");
        }
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let text = GOOD.replace("default_lane: bulk", "default_lane: bulk\ncolour: blue");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(10), "{e}");
        assert_eq!(e.key.as_deref(), Some("colour"), "{e}");
        assert!(e.to_string().starts_with("bx.yaml:10"), "{e}");
    }

    #[test]
    fn a_bad_value_names_its_line_and_key() {
        let text = GOOD.replace("rate: 2mbit", "rate: 2mbps");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("ambiguous"), "{e}");
        let text = GOOD.replace("share: 0.3", "share: lots");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert_eq!(e.key.as_deref(), Some("lanes[0].share"), "{e}");
    }

    #[test]
    fn a_dangling_lane_reference_is_found_in_the_file() {
        let text = GOOD.replace("{lane: bulk, proto: tcp", "{lane: video, proto: tcp");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("rules[1].lane"));
        assert_eq!(e.line, Some(8), "{e}");
        let text = GOOD.replace("default_lane: bulk", "default_lane: nowhere");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(9), "{e}");
    }

    #[test]
    fn shaping_the_downlink_needs_its_rate_and_bad_values_are_located() {
        let both = format!("{GOOD}direction: both\ningress: {{rate: 20mbit}}\n");
        let p = parse(&both).unwrap();
        let ingress = p.for_ingress().expect("direction both shapes the downlink");
        assert_eq!(ingress.rate, crate::RateSetting::Fixed(crate::BitRate::from_bps(20_000_000)));
        assert_eq!((ingress.headroom, ingress.lanes.len()), (0.9, p.lanes.len()));
        assert!(ingress.metrics.is_none() && ingress.for_ingress().is_none());
        assert!(parse(GOOD).unwrap().for_ingress().is_none(), "direction up by default");
        // A measured downlink needs the probes' reflector, and shapes with it.
        let auto = format!("{GOOD}direction: down\ningress: {{rate: auto}}\n");
        assert_eq!(parse(&auto).unwrap_err().key.as_deref(), Some("auto_rate.reflector"));
        let auto = format!("{auto}auto_rate: {{reflector: \"10.0.0.2:7399\"}}\n");
        let ingress = parse(&auto).unwrap().for_ingress().expect("direction down");
        assert_eq!((ingress.rate, ingress.reflectors().len()), (crate::RateSetting::Auto, 1));
        let cases = [
            (format!("{GOOD}direction: both\n"), 10, "direction"),
            (format!("{GOOD}direction: sideways\n"), 10, "direction"),
            (format!("{GOOD}ingress: {{rate: 20mbit}}\n"), 10, "ingress"),
            (format!("{GOOD}direction: down\ningress: {{rate: 1bit}}\n"), 11, "ingress.rate"),
            (format!("{GOOD}direction: down\ningress: {{rate: 20mbit, headroom: 0.1}}\n"), 11, "ingress.headroom"),
            (format!("{GOOD}direction: down\ningress: {{rate: 20mbit, burst: 3}}\n"), 11, "ingress"),
        ];
        for (text, line, key) in cases {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}\n{e}");
            assert!(e.key.as_deref().is_some_and(|k| k.starts_with(key)), "{key}: {e}");
        }
    }

    #[test]
    fn builtins_round_trip_through_yaml() {
        for name in crate::profile::BUILTIN_PROFILES {
            let p = Profile::builtin(name).unwrap();
            let text = serde_yaml_ng::to_string(&p).unwrap();
            assert_eq!(parse(&text).unwrap().profile(), &p, "{text}");
        }
    }

    /// Issue 10 #3: out-of-range numbers are found on their line, in the right list
    /// item, even when written differently from how they print.
    #[test]
    fn an_out_of_range_number_names_its_line_and_key() {
        let text = GOOD.replace("{name: bulk, share: 0.5,", "{name: bulk, share: 1e-300,");
        let e = parse(&text).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(5), Some("lanes[1].share")), "{e}");
        let text = GOOD.replace("{name: bulk, share: 0.5,", "{name: bulk, share: 0.5, queue_limit: 4294967295,");
        let e = parse(&text).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(5), Some("lanes[1].queue_limit")), "{e}");
        let text = GOOD.replace("rate: 2mbit", "rate: 1bit");
        let e = parse(&text).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("rate")), "{e}");
        assert!(e.to_string().starts_with("bx.yaml:2: `rate`: 1bit is not between 64kbit and 100gbit"), "{e}");
        let block = GOOD.replace(
            "  - {name: critical, share: 0.3}\n  - {name: bulk, share: 0.5, drop_when_congested: true}",
            "- name: critical\n  share: 0.3\n- name: bulk\n  drop_when_congested: true\n  share: 0.00001",
        );
        let e = parse(&block).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (Some(8), Some("lanes[1].share")), "{block}\n{e}");
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("bx-config-{}-{name}", std::process::id()))
    }

    /// Issue 10 #9: `--config /dev/zero` grew to 3.9 GB and a FIFO blocked forever.
    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let e = read_config(Path::new("/dev/zero")).unwrap_err();
        assert!(e.message.contains("a device, not a regular file"), "{e}");
        let e = read_config(Path::new("/tmp")).unwrap_err();
        assert!(e.message.contains("a directory"), "{e}");

        let fifo = scratch("fifo");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        // No writer ever opens the FIFO: a blocking read would hang this test.
        let e = read_config(&fifo).unwrap_err();
        std::fs::remove_file(&fifo).unwrap();
        assert!(e.message.contains("a FIFO, not a regular file"), "{e}");

        let big = scratch("big.yaml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let e = read_config(&big).unwrap_err();
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize]).unwrap();
        let at_limit = read_config(&big);
        std::fs::remove_file(&big).unwrap();
        assert!(e.message.contains("larger than 1024 KiB"), "{e}");
        assert_eq!(at_limit.unwrap().len(), MAX_CONFIG_BYTES as usize);

        let link = scratch("link.yaml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_config(&link).unwrap_err();
        std::fs::remove_file(&link).unwrap();
        assert!(e.message.contains("a device"), "{e}");
    }

    /// One bounds check and one way of showing numbers, for profiles and the bridge alike.
    #[test]
    fn within_shows_values_as_a_config_writes_them() {
        assert_eq!(within(0.5, 0.1..=100.0), Ok(0.5));
        assert_eq!(within(1e-300, 0.1..=100.0), Err("1e-300 is not between 0.1 and 100".into()));
        assert_eq!(within(1e300, 0.1..=100.0), Err("1e300 is not between 0.1 and 100".into()));
        assert_eq!(within(f64::NAN, 0.0..=1.0), Err("NaN is not between 0 and 1".into()));
        let ms = Duration::from_millis;
        assert_eq!(within(ms(1), ms(10)..=ms(10_000)), Err("1ms is not between 10ms and 10s".into()));
    }
}

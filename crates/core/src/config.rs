//! Loading configs (profiles, and the YAML every Bauxite config is written in), with errors that name the file, the line and the key.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::profile::{Profile, ProfileError};

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
pub fn load_profile(path: &Path) -> Result<Profile, ConfigError> {
    parse_profile(&read_config(path)?, path)
}

/// Parses and validates profile YAML; `file` is only used in errors.
pub fn parse_profile(text: &str, file: &Path) -> Result<Profile, ConfigError> {
    let profile: Profile = parse_yaml(text, file)?;
    profile.validate().map_err(|e| validation_error(e, text, file))?;
    Ok(profile)
}

/// A config file's text; a file that cannot be read is an error naming it.
pub fn read_config(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        key: None,
        message: format!("cannot read: {e}"),
    })
}

/// Deserializes YAML (every Bauxite config: profiles, the bridge's) into `T`; an error
/// names `file`, the line and the key's dotted path. Types should deny unknown fields,
/// so that a misspelt key is an error here rather than a silently ignored setting.
pub fn parse_yaml<T: DeserializeOwned>(text: &str, file: &Path) -> Result<T, ConfigError> {
    serde_yaml_ng::from_str(text).map_err(|e| yaml_error(&e, file))
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

/// Finds the line of `key` (a dotted path such as `rules[2].lane`) in YAML text.
///
/// The YAML parser keeps no positions once a document is deserialized, so checks that
/// span several keys find their line again here: the first line after the top-level
/// section that writes the leaf key (with `value`, when given).
fn locate(text: &str, key: &str, value: Option<&str>) -> Option<usize> {
    let top = key.split(['.', '[']).next()?;
    let leaf = key.rsplit('.').next()?.split('[').next()?;
    let index: usize =
        key.split_once('[').and_then(|(_, rest)| rest.split(']').next()).and_then(|i| i.parse().ok()).unwrap_or(0);
    let lines: Vec<&str> = text.lines().collect();
    let section = lines.iter().position(|l| l.starts_with(&format!("{top}:")))?;
    if leaf == top && value.is_none() {
        return Some(section + 1);
    }
    let writes_leaf = |line: &str| {
        let Some(pos) = line.find(&format!("{leaf}:")) else { return false };
        let before = line[..pos].chars().last();
        let at_key_start = matches!(before, None | Some(' ' | '{' | ',' | '-'));
        let after = line[pos + leaf.len() + 1..].trim_start().trim_start_matches(['"', '\'']);
        at_key_start && value.is_none_or(|v| after.starts_with(v))
    };
    let hits: Vec<usize> = (section..lines.len()).filter(|&i| writes_leaf(lines[i])).collect();
    // Several hits with a value: the n-th list item is the best guess; else the first.
    hits.get(if value.is_some() { 0 } else { index }).or(hits.first()).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn parse(text: &str) -> Result<Profile, ConfigError> {
        parse_profile(text, Path::new("bx.yaml"))
    }

    #[test]
    fn a_good_file_loads() {
        let p = parse(GOOD).unwrap();
        assert_eq!(p.lanes.len(), 2);
        assert_eq!(p.rate.to_string(), "2mbit");
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
    fn builtins_round_trip_through_yaml() {
        for name in crate::profile::BUILTIN_PROFILES {
            let p = Profile::builtin(name).unwrap();
            let text = serde_yaml_ng::to_string(&p).unwrap();
            assert_eq!(parse(&text).unwrap(), p, "{text}");
        }
    }
}

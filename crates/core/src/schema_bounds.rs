//! The bounds a config's JSON Schema states, for the tests that hold each schema (and so the
//! generated reference page) to what the config's parser and validation enforce: a numeric
//! `minimum`/`maximum`, or an `x-range` of durations or rates written "LOW to HIGH".

use serde_json::Value as Json;
use serde_yaml_ng::Value as Yaml;

use crate::units::{BitRate, parse_duration};

/// A key's YAML path (`auto_rate`, `probe_hold`; the first item of a list as index 0) and its
/// two bounds, as YAML values.
pub type BoundedKey = (Vec<Yaml>, Yaml, Yaml);

/// Every key of `schema` that states both of its bounds.
pub fn bounded_keys(schema: &schemars::Schema) -> Vec<BoundedKey> {
    let root = schema.as_value();
    let mut out = Vec::new();
    walk(root, root, &[], &mut out);
    out
}

fn walk(root: &Json, schema: &Json, path: &[Yaml], out: &mut Vec<BoundedKey>) {
    let resolve = |s: &Json| match s.get("$ref").and_then(Json::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).cloned().unwrap_or_default(),
        None => s.clone(),
    };
    let Some(properties) = resolve(schema).get("properties").and_then(Json::as_object).cloned() else {
        return;
    };
    for (key, property) in properties {
        let mut here = path.to_vec();
        here.push(Yaml::String(key));
        let property = resolve(&property);
        let variants = property.get("anyOf").and_then(Json::as_array).cloned().unwrap_or_default();
        for nested in variants.iter().chain(property.get("items")).map(&resolve) {
            let list = nested.get("properties").is_some() && property.get("items").is_some();
            let at = if list { [here.clone(), vec![Yaml::Number(0.into())]].concat() } else { here.clone() };
            walk(root, &nested, &at, out);
        }
        walk(root, &property, &here, out);
        let yaml = |v: &Json| serde_yaml_ng::to_value(v).expect("JSON is YAML");
        if let (Some(lo), Some(hi)) = (property.get("minimum"), property.get("maximum")) {
            out.push((here.clone(), yaml(lo), yaml(hi)));
        }
        let range = property.get("x-range").and_then(Json::as_str).and_then(|r| r.split(',').next());
        if let Some((lo, hi)) = range.and_then(|r| r.split_once(" to "))
            && (parse_duration(lo).is_ok() || lo.parse::<BitRate>().is_ok())
        {
            out.push((here, Yaml::String(lo.into()), Yaml::String(hi.into())));
        }
    }
}

/// The dotted name configs' errors use for `path`: `auto_rate.probe_hold`, `lanes[0].share`.
pub fn dotted(path: &[Yaml]) -> String {
    let mut name = String::new();
    for step in path {
        match step {
            Yaml::Number(n) => name.push_str(&format!("[{n}]")),
            key => {
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(key.as_str().unwrap_or_default());
            }
        }
    }
    name
}

/// `doc` with the value at `path` replaced by `value`.
pub fn set_at(doc: &Yaml, path: &[Yaml], value: Yaml) -> Yaml {
    let mut doc = doc.clone();
    let mut at = &mut doc;
    for step in path {
        at = match step {
            Yaml::Number(n) => &mut at[n.as_u64().unwrap_or_default() as usize],
            key => &mut at[key.as_str().unwrap_or_default()],
        };
    }
    *at = value;
    doc
}

/// `bound` moved just past itself: down (`up` false) or up. A number by one (a whole one) or
/// by a millionth; a rate by a thousandth; a duration by a thousandth and a nanosecond.
pub fn beyond(bound: &Yaml, up: bool) -> Yaml {
    let sign = if up { 1.0 } else { -1.0 };
    match bound {
        Yaml::Number(n) if n.is_f64() => {
            let v = n.as_f64().unwrap_or_default();
            Yaml::from(v * (1.0 + sign * 1e-6) + sign * 1e-9)
        }
        Yaml::Number(n) => Yaml::from(n.as_i64().unwrap_or_default() + sign as i64),
        Yaml::String(t) => match t.parse::<BitRate>() {
            Ok(rate) => Yaml::String(format!("{}", (rate.bps() as f64 * (1.0 + sign * 1e-3)).round() as u64)),
            Err(_) => {
                let ns = parse_duration(t).map(|d| d.as_nanos() as f64).unwrap_or_default();
                Yaml::String(format!("{}ns", (ns * (1.0 + sign * 1e-3)).round() as i64 + sign as i64))
            }
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_found_in_nested_objects_lists_and_ranges() {
        let schema: schemars::Schema = serde_json::from_value(serde_json::json!({
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "lanes": {"type": "array", "items": {"properties": {"share": {"minimum": 0.01, "maximum": 1.0}}}},
            },
            "$defs": {"A": {"properties": {"hold": {"x-range": "1ms to 10s, and more"}, "other": {"x-range": "probe_hold to 1s"}}}},
        }))
        .unwrap();
        let keys = bounded_keys(&schema);
        let names: Vec<String> = keys.iter().map(|(p, _, _)| dotted(p)).collect();
        assert_eq!(names, ["a.hold", "lanes[0].share"]);
        assert_eq!(keys[0].2, Yaml::String("10s".into()));
        assert_eq!(beyond(&Yaml::String("10s".into()), true), Yaml::String("10010000001ns".into()));
        assert_eq!(beyond(&Yaml::from(1), false), Yaml::from(0));
        assert_eq!(beyond(&Yaml::String("64kbit".into()), false), Yaml::String("63936".into()));
    }
}

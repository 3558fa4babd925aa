//! Foxglove layouts: a file that arranges panels over a recording's channels, so a
//! recording opens in Foxglove ready to read, without plugins or manual setup.
//!
//! A layout is the JSON Foxglove imports (`configById` panel settings plus a
//! `layout` split tree). Panels address message fields with Foxglove's message
//! paths, `<topic>.<field>`, stamped with the message's log time, which Bauxite
//! sets to the event's own time.

use serde_json::{Value, json};

/// One panel of a layout.
#[derive(Clone, Debug)]
pub enum Panel {
    /// Lines of numeric fields over time.
    Plot {
        /// Panel title.
        title: String,
        /// Message paths, `<topic>.<field>`.
        paths: Vec<String>,
    },
    /// Bands that show when a (boolean or enum) field changes.
    StateTransitions {
        /// Message paths, `<topic>.<field>`.
        paths: Vec<String>,
    },
    /// The latest message of a channel, as a tree.
    RawMessages {
        /// The channel.
        topic: String,
    },
}

impl Panel {
    /// The message paths (or topic) the panel reads, for checking them against a recording.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Panel::Plot { paths, .. } | Panel::StateTransitions { paths } => paths.iter().map(String::as_str).collect(),
            Panel::RawMessages { topic } => vec![topic.as_str()],
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Panel::Plot { .. } => "Plot",
            Panel::StateTransitions { .. } => "StateTransitions",
            Panel::RawMessages { .. } => "RawMessages",
        }
    }

    fn config(&self) -> Value {
        let series = |paths: &[String]| {
            paths
                .iter()
                .map(|p| json!({"value": p, "enabled": true, "timestampMethod": "receiveTime"}))
                .collect::<Vec<_>>()
        };
        match self {
            Panel::Plot { title, paths } => json!({
                "title": title,
                "paths": series(paths),
                "showLegend": true,
                "legendDisplay": "floating",
                "showXAxisLabels": true,
                "showYAxisLabels": true,
                "isSynced": true,
                "xAxisVal": "timestamp",
            }),
            Panel::StateTransitions { paths } => json!({"paths": series(paths), "isSynced": true}),
            Panel::RawMessages { topic } => json!({"topicPath": topic, "diffEnabled": false, "expansion": "all"}),
        }
    }
}

/// A layout: panels in columns, each column split evenly into rows.
pub fn layout(columns: &[Vec<Panel>]) -> Value {
    let mut config = serde_json::Map::new();
    let mut column_trees = Vec::new();
    for (c, panels) in columns.iter().enumerate() {
        let ids: Vec<String> = panels
            .iter()
            .enumerate()
            .map(|(r, panel)| {
                let id = format!("{}!bx{c}{r}", panel.kind());
                config.insert(id.clone(), panel.config());
                id
            })
            .collect();
        column_trees.push(split(ids.into_iter().map(Value::String).collect(), "column"));
    }
    json!({
        "configById": config,
        "globalVariables": {},
        "userNodes": {},
        "linkedGlobalVariables": [],
        "playbackConfig": {"speed": 1},
        "layout": split(column_trees, "row"),
    })
}

/// A split tree giving each of `nodes` an equal share along `direction`.
fn split(mut nodes: Vec<Value>, direction: &str) -> Value {
    match nodes.len() {
        0 => Value::Null,
        1 => nodes.pop().expect("one node"),
        n => {
            let rest = nodes.split_off(1);
            json!({
                "first": nodes.pop().expect("first node"),
                "second": split(rest, direction),
                "direction": direction,
                "splitPercentage": 100.0 / n as f64,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panel_is_configured_and_placed_once() {
        let plot = |t: &str| Panel::Plot { title: t.into(), paths: vec![format!("/a/{t}.x")] };
        let value = layout(&[vec![plot("p"), plot("q"), plot("r")], vec![Panel::RawMessages { topic: "/a/b".into() }]]);
        let ids: Vec<&String> = value["configById"].as_object().unwrap().keys().collect();
        assert_eq!(ids.len(), 4);
        let tree = value["layout"].to_string();
        for id in ids {
            assert_eq!(tree.matches(&format!("\"{id}\"")).count(), 1, "{id} placed once in {tree}");
        }
        assert_eq!(value["layout"]["direction"], "row");
        assert_eq!(value["layout"]["first"]["splitPercentage"].as_f64().unwrap(), 100.0 / 3.0, "three equal rows");
        assert_eq!(value["configById"]["Plot!bx00"]["paths"][0]["value"], "/a/p.x");
    }
}

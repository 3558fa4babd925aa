//! A real Prometheus server for the metrics tests (Debian's `prometheus`, installed by
//! `scripts/install-deps`), and its HTTP API on loopback, for `tests/bridge.rs` and
//! `tests/shaper_metrics.rs`.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

/// A Prometheus config scraping `target` (HOST:PORT) every second as job `job`.
pub fn scrape_config(job: &str, target: &str) -> String {
    format!(
        "global: {{scrape_interval: 1s, scrape_timeout: 1s}}\n\
         scrape_configs:\n  - job_name: {job}\n    static_configs:\n      - targets: ['{target}']\n"
    )
}

/// The arguments that run Prometheus on `127.0.0.1:port` with its config and data in `dir`.
pub fn args(dir: &Path, port: u16) -> Vec<String> {
    vec![
        format!("--config.file={}", dir.join("prometheus.yml").display()),
        format!("--storage.tsdb.path={}", dir.join("tsdb").display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
    ]
}

/// Whether Debian's `prometheus` server is installed; panics under CI=true if not.
pub fn prometheus_or_skip(test: &str) -> bool {
    if Path::new(PROMETHEUS).exists() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{test} needs {PROMETHEUS} (scripts/install-deps installs Debian's prometheus), and CI=true: not a skip"
        );
    }
    eprintln!("skipping {test}: no {PROMETHEUS}; run scripts/install-deps");
    false
}

pub const PROMETHEUS: &str = "/usr/bin/prometheus";

/// A loopback port nobody listens on now (the kernel's pick, released for the child to bind).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A plain HTTP/1.0 GET on loopback: the body, if the status is 200.
pub fn http_get(port: u16, target: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {target} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    // Go's server answers an HTTP/1.0 request as HTTP/1.0.
    head.split_whitespace().nth(1).is_some_and(|code| code == "200").then(|| body.to_string())
}

/// Percent-encodes a PromQL query for a URL.
fn url_encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of an instant PromQL query that returns one series (None: no series yet).
pub fn prom_query(port: u16, query: &str) -> Option<f64> {
    let body = http_get(port, &format!("/api/v1/query?query={}", url_encode(query)))?;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}"));
    assert_eq!(v["status"], "success", "{body}");
    let result = v["data"]["result"].as_array()?;
    assert!(result.len() <= 1, "{query}: {body}");
    result.first()?["value"][1].as_str()?.parse().ok()
}

/// Waits until `query` has a value satisfying `ok`; returns it.
pub fn prom_until(port: u16, query: &str, timeout: Duration, ok: impl Fn(f64) -> bool) -> f64 {
    let deadline = Instant::now() + timeout;
    let mut last = None;
    while Instant::now() < deadline {
        last = prom_query(port, query);
        if let Some(v) = last.filter(|&v| ok(v)) {
            return v;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("Prometheus: `{query}` is {last:?} after {timeout:?}");
}

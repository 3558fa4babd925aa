//! Prometheus metrics for Bauxite's daemons: a [`MetricsAddr`] to listen on and a
//! [`MetricsServer`] that answers `GET /metrics` with the OpenMetrics text of a
//! [`prometheus_client`] registry.
//!
//! The text format is the Prometheus project's own client's (`prometheus-client`), never written
//! by hand. The server is a small one on a std `TcpListener` in one thread: a scrape every few
//! seconds from one Prometheus needs no async runtime, and the daemons it lives in (`bauxite up`,
//! `bauxite bridge`, `bauxite reflect`) are thread-based. It reads every connection without
//! blocking, each with a deadline for its whole request and at most [`MAX_CONNECTIONS`] at a
//! time (the oldest is dropped for a new one), so neither idle connections nor a client that
//! sends a byte a second can keep a scrape waiting, and its memory stays bounded.
//!
//! Metrics are off unless asked for (`--metrics ADDR` or a `metrics:` config key). A bare port
//! (`9464`) listens on loopback (127.0.0.1) only; another host is used only when written out
//! (`0.0.0.0:9464`), and then a warning is logged: nothing listens beyond loopback unless
//! configured to.
#![deny(missing_docs)]

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use bauxite_core::MetricsAddr;
pub use prometheus_client::registry::Registry;

/// Why metrics could not be served.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The address could not be bound (in use, not local, no permission).
    #[error("serving metrics on {addr}")]
    Bind {
        /// The address asked for.
        addr: MetricsAddr,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The server thread could not start.
    #[error("starting the metrics thread")]
    Thread(#[source] std::io::Error),
}

/// The media type of the OpenMetrics text `prometheus-client` writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long the accept loop sleeps when nobody is connecting; also how soon it sees a stop.
const IDLE_POLL: Duration = Duration::from_millis(50);
/// …and how often it looks at the connections it holds while it holds any.
const BUSY_POLL: Duration = Duration::from_millis(2);
/// A client gets this long, in all, to send its request, and then as long to take the
/// answer: a slow or silent one is dropped, not waited for.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest request head read (a scrape's is a few hundred bytes).
const MAX_REQUEST: usize = 8 * 1024;
/// Connections held at once: a new one beyond them drops the oldest (at most
/// `MAX_CONNECTIONS × MAX_REQUEST` bytes of requests are held).
pub const MAX_CONNECTIONS: usize = 256;

/// A running `/metrics` endpoint; stops (and closes its socket) when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Binds `addr` and serves `registry` from a thread until dropped. Fails at once if the
    /// address cannot be bound, so a daemon can refuse to start.
    pub fn start(addr: MetricsAddr, registry: Registry) -> Result<Self, MetricsError> {
        let bind = |source| MetricsError::Bind { addr, source };
        let listener = TcpListener::bind(addr.socket_addr()).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let local = listener.local_addr().map_err(bind)?;
        if !addr.is_loopback() {
            tracing::warn!("metrics are served on {local}, beyond loopback, as configured");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let registry = Arc::new(registry);
        let thread = std::thread::Builder::new()
            .name("bx-metrics".into())
            .spawn(move || accept_loop(&listener, &registry, &thread_stop))
            .map_err(MetricsError::Thread)?;
        tracing::info!("metrics on http://{local}/metrics");
        Ok(Self { addr: local, stop, thread: Some(thread) })
    }

    /// The address actually bound (its port is the real one when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A connection whose request head is still coming.
struct Pending {
    stream: TcpStream,
    peer: SocketAddr,
    head: Vec<u8>,
    deadline: Instant,
}

/// What reading a [`Pending`] connection gave.
enum HeadRead {
    /// Nothing more yet.
    Waiting,
    /// The head is complete (or as long as it may be, or the client closed its side).
    Complete,
    /// The connection is gone.
    Gone,
}

fn accept_loop(listener: &TcpListener, registry: &Registry, stop: &AtomicBool) {
    let mut pending: VecDeque<Pending> = VecDeque::new();
    while !stop.load(Ordering::Relaxed) {
        loop {
            match listener.accept() {
                Ok((stream, peer)) => {
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if pending.len() == MAX_CONNECTIONS {
                        pending.pop_front();
                    }
                    let deadline = Instant::now() + CLIENT_TIMEOUT;
                    pending.push_back(Pending { stream, peer, head: Vec::with_capacity(512), deadline });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => {
                    tracing::warn!("accepting a metrics connection: {e}");
                    break;
                }
            }
        }
        let now = Instant::now();
        pending.retain_mut(|p| match read_some(p) {
            HeadRead::Waiting => now < p.deadline,
            HeadRead::Gone => false,
            HeadRead::Complete => {
                let head = String::from_utf8_lossy(&p.head).into_owned();
                if let Err(e) = answer(&p.stream, &head, registry) {
                    tracing::debug!("metrics request from {}: {e}", p.peer);
                }
                false
            }
        });
        std::thread::sleep(if pending.is_empty() { IDLE_POLL } else { BUSY_POLL });
    }
}

/// Reads what `p`'s client has sent, without waiting.
fn read_some(p: &mut Pending) -> HeadRead {
    let mut chunk = [0u8; 1024];
    loop {
        if p.head.len() >= MAX_REQUEST || p.head.windows(4).any(|w| w == b"\r\n\r\n") {
            return HeadRead::Complete;
        }
        match p.stream.read(&mut chunk[..(MAX_REQUEST - p.head.len()).min(1024)]) {
            Ok(0) if p.head.is_empty() => return HeadRead::Gone,
            Ok(0) => return HeadRead::Complete,
            Ok(n) => p.head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return HeadRead::Waiting,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return HeadRead::Gone,
        }
    }
}

/// One metric family as a scrape shows it: what the metrics reference page lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyDoc {
    /// The name a query uses: `_total` included for a counter; a histogram's samples add
    /// `_bucket`, `_sum` and `_count` to it.
    pub name: String,
    /// `counter`, `gauge`, `histogram`, ...
    pub kind: String,
    /// The help text.
    pub help: String,
    /// The label names its series carry, in order of first appearance (a histogram's `le`
    /// left out).
    pub labels: Vec<String>,
}

/// Every family `registry` serves, in its order, read back from the text a scrape gets, so
/// the description is of what Prometheus sees. Labels are learnt from the series that exist:
/// a family without one lists none.
pub fn describe(registry: &Registry) -> Result<Vec<FamilyDoc>, std::fmt::Error> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry)?;
    let mut families: Vec<FamilyDoc> = Vec::new();
    let mut helps = std::collections::HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            helps.insert(name.to_string(), help.to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let help = helps.remove(name).unwrap_or_default();
            let name = if kind == "counter" { format!("{name}_total") } else { name.to_string() };
            families.push(FamilyDoc { name, kind: kind.to_string(), help, labels: Vec::new() });
        } else if !line.starts_with('#')
            && let Some(family) = families.last_mut()
        {
            for label in label_names(line) {
                if label != "le" && !family.labels.contains(&label) {
                    family.labels.push(label);
                }
            }
        }
    }
    Ok(families)
}

/// The label names of one sample line, `name{a="x",b="y"} 1`. prometheus-client writes label
/// values as they are, unescaped, so Bauxite's label values never hold a quote: lane, topic
/// and subscriber names are checked where they are read.
fn label_names(sample: &str) -> Vec<String> {
    let Some(open) = sample.find('{') else { return Vec::new() };
    let mut names = Vec::new();
    let mut rest = &sample[open + 1..];
    while let Some((name, after)) = rest.split_once("=\"") {
        names.push(name.trim_start_matches(',').to_string());
        let Some((_, tail)) = after.split_once('"') else { break };
        rest = tail;
        if rest.starts_with('}') {
            break;
        }
    }
    names
}

/// Answers one HTTP/1.x request head and closes the connection.
fn answer(mut stream: &TcpStream, head: &str, registry: &Registry) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let request_line = head.lines().next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let path = target.split('?').next().unwrap_or_default();
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let mut text = String::new();
            match prometheus_client::encoding::text::encode(&mut text, registry) {
                Ok(()) => ("200 OK", CONTENT_TYPE, text),
                Err(_) => ("500 Internal Server Error", "text/plain", "encoding the metrics failed\n".to_string()),
            }
        }
        (_, "/metrics") => ("405 Method Not Allowed", "text/plain", "only GET /metrics\n".to_string()),
        _ => ("404 Not Found", "text/plain", "metrics are on /metrics\n".to_string()),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        response.push_str(&body);
    }
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn describe_reads_back_every_family_with_its_labels() {
        use prometheus_client::encoding::EncodeLabelSet;
        use prometheus_client::metrics::family::Family;
        use prometheus_client::metrics::gauge::Gauge;
        use prometheus_client::metrics::histogram::Histogram;
        #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
        struct Labels {
            iface: String,
            lane: String,
        }
        let mut registry = Registry::default();
        registry.register("bauxite_events", "Events seen", Counter::<u64>::default());
        let lanes = Family::<Labels, Gauge>::default();
        // A value with `=` and `,` in it must not end the label list early.
        drop(lanes.get_or_create(&Labels { iface: "a=b,c".into(), lane: "bulk".into() }));
        registry.register("bauxite_backlog", "Packets waiting", lanes);
        let histogram = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(|| Histogram::new([0.1]));
        drop(histogram.get_or_create(&Labels { iface: "wwan0".into(), lane: "critical".into() }));
        registry.register("bauxite_rtt_seconds", "Round trips", histogram);
        registry.register("bauxite_unseen", "No series yet", Family::<Labels, Gauge>::default());
        let doc = |name: &str, kind: &str, help: &str, labels: &[&str]| FamilyDoc {
            name: name.into(),
            kind: kind.into(),
            help: help.into(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
        };
        assert_eq!(
            describe(&registry).unwrap(),
            [
                doc("bauxite_events_total", "counter", "Events seen.", &[]),
                doc("bauxite_backlog", "gauge", "Packets waiting.", &["iface", "lane"]),
                doc("bauxite_rtt_seconds", "histogram", "Round trips.", &["iface", "lane"]),
                doc("bauxite_unseen", "gauge", "No series yet.", &[]),
            ]
        );
    }

    #[test]
    fn serves_the_registry_on_slash_metrics_only() {
        let mut registry = Registry::default();
        let counter = Counter::<u64>::default();
        registry.register("bauxite_test_events", "Events seen", counter.clone());
        counter.inc_by(3);
        let server = MetricsServer::start("0".parse().unwrap(), registry).unwrap();
        let addr = server.local_addr();
        assert!(addr.ip().is_loopback());
        let ok = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains(CONTENT_TYPE), "{ok}");
        assert!(ok.contains("# TYPE bauxite_test_events counter"), "{ok}");
        assert!(ok.contains("\nbauxite_test_events_total 3\n"), "{ok}");
        assert!(ok.ends_with("# EOF\n"), "{ok}");
        counter.inc();
        assert!(get(addr, "GET /metrics HTTP/1.0\r\n\r\n").contains("bauxite_test_events_total 4\n"));
        assert!(get(addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
        assert!(get(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
        drop(server);
        assert!(TcpStream::connect(addr).is_err(), "the socket closes with the server");
    }

    /// Issue 28's metrics endpoint under attack: 300 idle connections (more than it
    /// holds), a client sending a byte every 50 ms, and one sending a 1 MB header. A
    /// scrape made meanwhile is answered at once, the trickling client is dropped at its
    /// deadline, and the huge header gets an answer after its first 8 KB.
    #[test]
    fn idle_slow_and_huge_clients_cannot_keep_a_scrape_waiting() {
        let mut registry = Registry::default();
        registry.register("bauxite_test_events", "Events seen", Counter::<u64>::default());
        let server = MetricsServer::start("0".parse().unwrap(), registry).unwrap();
        let addr = server.local_addr();
        let idle: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let trickler = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            let started = Instant::now();
            // Until the server closes it (a write then fails), or 30 s.
            while started.elapsed() < Duration::from_secs(30) {
                if s.write_all(b"G").is_err() {
                    return started.elapsed();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            started.elapsed()
        });
        let huge = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut header = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
            header.resize(1 << 20, b'a');
            // The server stops reading after 8 KB: the rest may be refused.
            let _ = s.write_all(&header);
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        });
        std::thread::sleep(Duration::from_millis(200));
        let asked = Instant::now();
        let ok = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let waited = asked.elapsed();
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        // Milliseconds on a quiet machine; a serial server would have waited for the idle
        // connections' timeouts (seconds each). 1 s leaves a loaded 2-core machine's
        // scheduling room.
        assert!(waited < Duration::from_secs(1), "the scrape waited {waited:?}");
        let dropped_after = trickler.join().unwrap();
        assert!(
            dropped_after >= CLIENT_TIMEOUT && dropped_after < Duration::from_secs(10),
            "a byte every 50 ms was dropped after {dropped_after:?}"
        );
        let answer = huge.join().unwrap();
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer:.200}");
        drop(idle);
    }

    #[test]
    fn an_address_in_use_is_an_error_naming_it() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr: MetricsAddr = taken.local_addr().unwrap().to_string().parse().unwrap();
        let e = MetricsServer::start(addr, Registry::default()).err().expect("in use");
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}

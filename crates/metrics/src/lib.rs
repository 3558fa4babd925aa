//! Prometheus metrics for Bauxite's daemons: a [`MetricsAddr`] to listen on and a
//! [`MetricsServer`] that answers `GET /metrics` with the OpenMetrics text of a
//! [`prometheus_client`] registry.
//!
//! The text format is the Prometheus project's own client's (`prometheus-client`), never written
//! by hand. The server is a small blocking one on a std `TcpListener` in one thread: a scrape
//! every few seconds from one Prometheus needs no async runtime, and the daemons it lives in
//! (`bauxite up`, `bauxite bridge`, `bauxite reflect`) are thread-based.
//!
//! Metrics are off unless asked for (`--metrics ADDR` or a `metrics:` config key). A bare port
//! (`9464`) listens on loopback (127.0.0.1) only; another host is used only when written out
//! (`0.0.0.0:9464`), and then a warning is logged: nothing listens beyond loopback unless
//! configured to.
#![deny(missing_docs)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

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
/// A client gets this long to send its request and read the answer, so a stuck one cannot hold
/// the single serving thread for long.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest request head read (a scrape's is a few hundred bytes).
const MAX_REQUEST: usize = 8 * 1024;

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

fn accept_loop(listener: &TcpListener, registry: &Registry, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                if let Err(e) = answer(stream, registry) {
                    tracing::debug!("metrics request from {peer}: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(IDLE_POLL),
            Err(e) => {
                tracing::warn!("accepting a metrics connection: {e}");
                std::thread::sleep(IDLE_POLL);
            }
        }
    }
}

/// Answers one HTTP/1.x request and closes the connection.
fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let head = read_head(&mut stream)?;
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

/// Reads until the blank line that ends an HTTP request head (or [`MAX_REQUEST`] bytes).
fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while buf.len() < MAX_REQUEST && !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
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

    #[test]
    fn an_address_in_use_is_an_error_naming_it() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr: MetricsAddr = taken.local_addr().unwrap().to_string().parse().unwrap();
        let e = MetricsServer::start(addr, Registry::default()).err().expect("in use");
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}

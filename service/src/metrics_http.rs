//! The metrics port: `GET /metrics`, `GET /healthz` (the process is alive) and
//! `GET /readyz` ([`Readiness`]). Each connection is answered on a thread of its own (at
//! most [`MAX_CONNECTIONS`] at once; past it a connection gets `503` at once), within one
//! overall deadline per request ([`REQUEST_DEADLINE`]: reading the request and writing
//! the answer), so that neither a slow client nor idle connections hold a scrape back.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::ServeError;
use crate::health::Readiness;
use crate::metrics::Metrics;
use crate::store::Store;

/// Connections answered at once.
pub(crate) const MAX_CONNECTIONS: usize = 64;
/// The whole of one request: reading it and writing the answer.
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// The longest request head read.
const MAX_HEAD: usize = 4096;

/// What the port serves.
pub(crate) struct Served {
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) readiness: Readiness,
}

/// Serves `GET /metrics`, `/healthz` and `/readyz` on `addr`; the bound address.
pub(crate) fn serve(addr: SocketAddr, served: Served) -> Result<SocketAddr, ServeError> {
    let served = Arc::new(served);
    let listener =
        TcpListener::bind(addr).map_err(|e| ServeError::Io(format!("--metrics {addr}"), e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ServeError::Io("metrics address".into(), e))?;
    let busy = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                if busy.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    busy.fetch_sub(1, Ordering::AcqRel);
                    refuse(stream);
                    continue;
                }
                let (served, done) = (Arc::clone(&served), Arc::clone(&busy));
                let spawned = std::thread::Builder::new()
                    .name("metrics-conn".into())
                    .stack_size(128 << 10)
                    .spawn(move || {
                        // A panic (a bug) loses this answer, never the slot.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            answer(stream, &served)
                        }));
                        done.fetch_sub(1, Ordering::AcqRel);
                    });
                if spawned.is_err() {
                    busy.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })
        .map_err(|e| ServeError::Io("metrics thread".into(), e))?;
    Ok(bound)
}

/// Too many connections at once: `503`, without waiting for the client.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(true);
    let _ = stream.write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}

/// The time left before `deadline`, or a timeout error.
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(std::io::ErrorKind::TimedOut.into())
    } else {
        Ok(d)
    }
}

/// Whether the request head asks for `GET path` (with or without a query).
fn is_get(head: &str, path: &str) -> bool {
    head.strip_prefix("GET ")
        .and_then(|rest| rest.strip_prefix(path))
        .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('?'))
}

fn answer(mut stream: TcpStream, served: &Served) -> std::io::Result<()> {
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let mut buf = [0u8; MAX_HEAD];
    let mut n = 0;
    while n < buf.len() {
        stream.set_read_timeout(Some(left(deadline)?))?;
        let got = stream.read(&mut buf[n..])?;
        if got == 0 {
            break;
        }
        n += got;
        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    const JSON: &str = "application/json";
    let (status, kind, body) = if is_get(&head, "/metrics") {
        (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            served.metrics.render(Some(served.store.as_ref())),
        )
    } else if is_get(&head, "/healthz") {
        ("200 OK", JSON, "{\"alive\":true}\n".to_string())
    } else if is_get(&head, "/readyz") {
        let (ready, body) = served.readiness.check();
        let status = if ready {
            "200 OK"
        } else {
            "503 Service Unavailable"
        };
        (status, JSON, format!("{body}\n"))
    } else {
        (
            "404 Not Found",
            "text/plain",
            "try GET /metrics, /healthz or /readyz\n".to_string(),
        )
    };
    let out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut rest = out.as_bytes();
    while !rest.is_empty() {
        stream.set_write_timeout(Some(left(deadline)?))?;
        let wrote = stream.write(rest)?;
        if wrote == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        rest = &rest[wrote..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_get;

    #[test]
    fn paths() {
        assert!(is_get("GET /readyz HTTP/1.1\r\n", "/readyz"));
        assert!(is_get("GET /metrics?x=1 HTTP/1.1\r\n", "/metrics"));
        assert!(!is_get("GET /readyzz HTTP/1.1\r\n", "/readyz"));
        assert!(!is_get("POST /readyz HTTP/1.1\r\n", "/readyz"));
        assert!(!is_get("GET /ready", "/readyz"));
    }
}

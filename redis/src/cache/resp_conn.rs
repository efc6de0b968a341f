//! [`RespConn`]: a connection speaking RESP over TCP, TLS or a Unix socket, reading
//! frames with `resp.rs`'s parser from a buffer.

use std::io::{self, Read, Write};
use std::net::TcpStream;
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::resp::{encode, parse, Frame};
use crate::conn::tls::TlsStream;

/// The stream under a [`RespConn`]: TCP, TLS over TCP, or a Unix socket.
pub(crate) enum Link {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
    #[cfg(unix)]
    Unix(UnixStream),
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Link::Tcp(_) => "Link::Tcp",
            Link::Tls(_) => "Link::Tls",
            #[cfg(unix)]
            Link::Unix(_) => "Link::Unix",
        })
    }
}

impl Link {
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Link::Tcp(s) => s.set_read_timeout(d),
            Link::Tls(s) => s.sock.set_read_timeout(d),
            #[cfg(unix)]
            Link::Unix(s) => s.set_read_timeout(d),
        }
    }

    pub(crate) fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Link::Tcp(s) => s.set_write_timeout(d),
            Link::Tls(s) => s.sock.set_write_timeout(d),
            #[cfg(unix)]
            Link::Unix(s) => s.set_write_timeout(d),
        }
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Tcp(s) => s.read(buf),
            Link::Tls(s) => s.read(buf),
            #[cfg(unix)]
            Link::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Link::Tcp(s) => s.write(buf),
            Link::Tls(s) => s.write(buf),
            #[cfg(unix)]
            Link::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Link::Tcp(s) => s.flush(),
            Link::Tls(s) => s.flush(),
            #[cfg(unix)]
            Link::Unix(s) => s.flush(),
        }
    }
}

/// A connection speaking RESP (over TCP, TLS or a Unix socket), with a read buffer.
#[derive(Debug)]
pub(crate) struct RespConn {
    stream: Link,
    buf: Vec<u8>,
    /// The read timeout currently set on the socket.
    timeout: Option<Duration>,
}

impl RespConn {
    pub(crate) fn new(stream: Link) -> Self {
        RespConn {
            stream,
            buf: Vec::new(),
            timeout: None,
        }
    }

    pub(crate) fn send(&mut self, args: &[&[u8]]) -> io::Result<()> {
        self.stream.write_all(&encode(args))?;
        // TLS buffers what it encrypts: send it now.
        self.stream.flush()
    }

    /// The next frame, or `Ok(None)` if none arrived by `until`.
    pub(crate) fn read(&mut self, until: Instant) -> io::Result<Option<Frame>> {
        loop {
            if let Some((frame, used)) = parse(&self.buf)? {
                self.buf.drain(..used);
                return Ok(Some(frame));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let left = left.max(Duration::from_millis(1));
            if self.timeout != Some(left) {
                self.stream.set_read_timeout(Some(left))?;
                self.timeout = Some(left);
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

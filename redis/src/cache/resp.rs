//! Just enough RESP2 for a subscriber connection: commands out, replies and pushed
//! messages in, parsed from a buffer so that a read timeout in the middle of a frame loses
//! nothing (the `redis` crate's sync `PubSub` has no `SSUBSCRIBE`, and its timeouts
//! mid-frame are not recoverable). This file is the pure part (frames, the parser, the
//! encoder: the fuzz target `resp_parse` includes it as it is); the connection over TCP,
//! TLS or a Unix socket is `resp_conn.rs`.

use std::io;

/// A reply frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Frame>>),
}

impl Frame {
    /// The items of an array of bulk strings, e.g. `[message, channel, payload]`.
    pub(crate) fn strings(&self) -> Option<Vec<&[u8]>> {
        match self {
            Frame::Array(Some(items)) => items
                .iter()
                .map(|f| match f {
                    Frame::Bulk(Some(b)) | Frame::Simple(b) => Some(&b[..]),
                    Frame::Int(_) => Some(&b""[..]),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

/// The largest frame accepted (a pushed payload is an entry key, a few hundred bytes).
const MAX_FRAME: usize = 1 << 20;

/// Parses one frame from the start of `buf`: the frame and the bytes it took, `Ok(None)`
/// when more bytes are needed.
pub(crate) fn parse(buf: &[u8]) -> io::Result<Option<(Frame, usize)>> {
    parse_nested(buf, 0)
}

/// How deep arrays may nest (the subscriber's replies and pushes are flat arrays); deeper
/// ones are refused rather than parsed by recursion as deep as the server likes.
const MAX_DEPTH: usize = 8;

fn parse_nested(buf: &[u8], depth: usize) -> io::Result<Option<(Frame, usize)>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("RESP: {what}"));
    let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
        if buf.len() > MAX_FRAME {
            return Err(bad("line too long"));
        }
        return Ok(None);
    };
    // Empty when the buffer starts with CRLF (no type byte): refused below as an unknown
    // frame type.
    let line = buf.get(1..end).unwrap_or_default();
    let next = end + 2;
    let int = || -> io::Result<i64> {
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("bad integer"))
    };
    match buf.first() {
        Some(b'+') => Ok(Some((Frame::Simple(line.to_vec()), next))),
        Some(b'-') => Ok(Some((Frame::Error(line.to_vec()), next))),
        Some(b':') => Ok(Some((Frame::Int(int()?), next))),
        Some(b'$') => {
            let n = int()?;
            if n < 0 {
                return Ok(Some((Frame::Bulk(None), next)));
            }
            let n = usize::try_from(n).map_err(|_| bad("bad length"))?;
            if n > MAX_FRAME {
                return Err(bad("bulk too long"));
            }
            if buf.len() < next + n + 2 {
                return Ok(None);
            }
            Ok(Some((
                Frame::Bulk(Some(buf[next..next + n].to_vec())),
                next + n + 2,
            )))
        }
        Some(b'*') => {
            let n = int()?;
            if n < 0 {
                return Ok(Some((Frame::Array(None), next)));
            }
            if n > 1024 {
                return Err(bad("array too long"));
            }
            if depth >= MAX_DEPTH {
                return Err(bad("arrays nested too deep"));
            }
            let mut items = Vec::new();
            let mut at = next;
            for _ in 0..n {
                match parse_nested(&buf[at..], depth + 1)? {
                    Some((frame, used)) => {
                        items.push(frame);
                        at += used;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Frame::Array(Some(items)), at)))
        }
        _ => Err(bad("unknown frame type")),
    }
}

/// A command as RESP.
pub(crate) fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_whole_and_partial_frames() {
        let msg = b"*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$3\r\nkey\r\n";
        for cut in 0..msg.len() {
            assert_eq!(parse(&msg[..cut]).expect("ok"), None, "cut at {cut}");
        }
        let (frame, used) = parse(msg).expect("ok").expect("frame");
        assert_eq!(used, msg.len());
        assert_eq!(frame.strings(), Some(vec![&b"smessage"[..], b"ch", b"key"]));
        assert_eq!(
            parse(b"-MOVED 1 h:1\r\n").expect("ok"),
            Some((Frame::Error(b"MOVED 1 h:1".to_vec()), 14))
        );
        assert_eq!(
            parse(b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n")
                .expect("ok")
                .map(|(f, _)| f.strings().map(|s| s.len())),
            Some(Some(3))
        );
        assert!(parse(b"?x\r\n").is_err());
        assert_eq!(encode(&[b"PING"]), b"*1\r\n$4\r\nPING\r\n");
    }

    /// Found by fuzz/fuzz_targets/resp_parse.rs: a reply starting with CRLF (no type
    /// byte) panicked on `&buf[1..0]`.
    #[test]
    fn a_line_without_a_type_byte_is_refused() {
        for bad in [&b"\r\n"[..], b"\r\n+OK\r\n", b"\r\n\0\0"] {
            let err = parse(bad).expect_err("refused");
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        }
    }

    /// Arrays nested deeper than MAX_DEPTH are refused: 800 KB of `*1\r\n` from the
    /// server used to overflow the stack (an abort, not a panic) by recursing once per
    /// level.
    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let deep = b"*1\r\n".repeat(200_000);
        let err = parse(&deep).expect_err("refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let mut ok = b"*1\r\n".repeat(MAX_DEPTH);
        ok.extend_from_slice(b":1\r\n");
        let (_, used) = parse(&ok).expect("at the limit").expect("complete");
        assert_eq!(used, ok.len());
        let mut over = b"*1\r\n".repeat(MAX_DEPTH + 1);
        over.extend_from_slice(b":1\r\n");
        assert!(parse(&over).is_err());
    }
}

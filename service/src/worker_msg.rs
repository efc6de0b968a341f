//! Messages of loader workers as the broker reads them (header type + JSON body +
//! payload), as strictly as the client socket reads requests: exactly the fields of
//! docs/protocol.md (unknown ones are `BAD_TYPE`), a payload only where one is taken,
//! 1–64 kinds, and `failed` codes a worker may use (never one the service keeps for
//! itself, so that a worker's code cannot pass for a transport error).

use keyroute::frame::{MsgType, TransportError};
use serde::Deserialize;

use crate::proto::{bad_body, body, no_payload, Answer};

/// The most kinds one worker may declare, and the largest capacity.
pub(crate) const MAX_WORKER_KINDS: usize = 64;
pub(crate) const MAX_WORKER_CAPACITY: usize = 1024;
/// The longest `failed` code (the stores keep at most this many bytes of it).
pub(crate) const MAX_WORKER_CODE_LEN: usize = keyroute::cache::MAX_ERROR_CODE_LEN;
/// The first byte of the codes the service records for its own (transport) failures; a
/// worker's code may not start with it.
pub(crate) const RESERVED_CODE_PREFIX: char = '~';

/// A worker message, its body read.
#[derive(Debug)]
pub(crate) enum WorkerMsg {
    /// `worker.ready {kinds, capacity}`: a declaration and the heartbeat.
    Ready { kinds: Vec<String>, capacity: usize },
    /// `loaded {fence}` + the value.
    Loaded { fence: u64, value: Vec<u8> },
    /// `failed {fence, code, message}`.
    Failed {
        fence: u64,
        code: String,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ready {
    kinds: Vec<String>,
    #[serde(default = "one")]
    capacity: usize,
}

fn one() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Loaded {
    fence: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Failed {
    fence: u64,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// Whether `code` is one a worker may send in `failed`: 1–64 printable ASCII bytes
/// (no space), not starting with `~`.
pub(crate) fn check_worker_code(code: &str) -> Result<(), Answer> {
    let ok = !code.is_empty()
        && code.len() <= MAX_WORKER_CODE_LEN
        && code.bytes().all(|b| b.is_ascii_graphic())
        && !code.starts_with(RESERVED_CODE_PREFIX);
    if ok {
        Ok(())
    } else {
        Err(bad_body(format!(
            "the code {code:?} is not 1-{MAX_WORKER_CODE_LEN} printable ASCII bytes \
             (no space) not starting with {RESERVED_CODE_PREFIX:?}"
        )))
    }
}

/// Reads a worker message of type `t` (a request type: replies were refused before).
/// `None` payload is an absent third frame.
pub(crate) fn parse_worker(
    t: MsgType,
    b: &[u8],
    payload: Option<Vec<u8>>,
) -> Result<WorkerMsg, Answer> {
    let no_payload = |p: &Option<Vec<u8>>| no_payload(t, p);
    Ok(match t {
        MsgType::WorkerReady => {
            no_payload(&payload)?;
            let Ready { kinds, capacity } = body(b)?;
            if !(1..=MAX_WORKER_KINDS).contains(&kinds.len())
                || !(1..=MAX_WORKER_CAPACITY).contains(&capacity)
            {
                return Err(bad_body(format!(
                    "1 to {MAX_WORKER_KINDS} kinds and a capacity in 1..={MAX_WORKER_CAPACITY}"
                )));
            }
            if let Some(bad) = kinds
                .iter()
                .find(|k| keyroute::cache::check_kind(k.as_bytes()).is_err())
            {
                return Err(bad_body(format!("bad kind {bad:?}")));
            }
            WorkerMsg::Ready { kinds, capacity }
        }
        MsgType::Loaded => {
            let Loaded { fence } = body(b)?;
            let Some(value) = payload else {
                return Err(bad_body("loaded needs the value as a payload frame"));
            };
            WorkerMsg::Loaded { fence, value }
        }
        MsgType::Failed => {
            no_payload(&payload)?;
            let Failed {
                fence,
                code,
                message,
            } = body(b)?;
            let code = code.unwrap_or_else(|| "BACKEND_ERROR".into());
            check_worker_code(&code)?;
            WorkerMsg::Failed {
                fence,
                code,
                message: message.unwrap_or_default(),
            }
        }
        _ => return Err(Answer::Transport(TransportError::UnknownType)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(r: Result<WorkerMsg, Answer>) -> String {
        match r {
            Err(Answer::Data { code, .. }) => code,
            Err(Answer::Transport(t)) => t.name().into(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strict_like_the_client_socket() {
        let ready = |b: &[u8]| parse_worker(MsgType::WorkerReady, b, None);
        assert!(matches!(
            ready(br#"{"kinds":["cards"],"capacity":2}"#),
            Ok(WorkerMsg::Ready { capacity: 2, .. })
        ));
        for bad in [
            &br#"{"kinds":[],"capacity":1}"#[..],
            br#"{"kinds":["cards"],"capacity":1,"x":1}"#,
            br#"{"kinds":["a{b}"]}"#,
            br#"{"kinds":["cards"],"capacity":0}"#,
            b"[1]",
            b"nope",
        ] {
            assert_eq!(
                code_of(ready(bad)),
                "BAD_TYPE",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            code_of(parse_worker(
                MsgType::WorkerReady,
                br#"{"kinds":["a"]}"#,
                Some(vec![])
            )),
            "BAD_TYPE"
        );
        assert_eq!(
            code_of(parse_worker(MsgType::Loaded, br#"{"fence":1}"#, None)),
            "BAD_TYPE"
        );
        assert_eq!(
            code_of(parse_worker(
                MsgType::Loaded,
                br#"{"fence":1,"code":"X"}"#,
                Some(vec![])
            )),
            "BAD_TYPE"
        );
        assert!(matches!(
            parse_worker(MsgType::Failed, br#"{"fence":1,"code":"QUEUE_FULL"}"#, None),
            Ok(WorkerMsg::Failed { .. })
        ));
        for code in ["", "~QUEUE_FULL", "has space", "\u{e9}"] {
            let b = serde_json::json!({ "fence": 1, "code": code }).to_string();
            assert_eq!(
                code_of(parse_worker(MsgType::Failed, b.as_bytes(), None)),
                "BAD_TYPE"
            );
        }
        assert_eq!(
            code_of(parse_worker(MsgType::Load, b"{}", None)),
            "UNKNOWN_TYPE"
        );
    }
}

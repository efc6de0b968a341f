//! The client socket's reader as the broker runs it, for the fuzz target
//! `service_request` (fuzz/fuzz_targets/service_request.rs): not part of the public API.

use keyroute::frame::{Header, MsgType};

use crate::proto::{reply_frames, Answer};

/// What reading one client message gave.
#[derive(Debug)]
pub struct Read {
    /// Whether the body (and payload) was accepted as a request of its type.
    pub accepted: bool,
    /// The code of a data-error refusal (`None`: accepted, or a transport error).
    pub data_error: Option<String>,
    /// The reply frames built for that answer (an ok answer for an accepted request).
    pub frames: Vec<Vec<u8>>,
}

/// Reads a message of type `t` with `body` and `payload` as the broker does
/// (`cmd::parse`: every type's reader), then builds the reply frames of the answer.
pub fn read_request(
    header: &Header<'_>,
    t: MsgType,
    body: &[u8],
    payload: Option<Vec<u8>>,
) -> Read {
    let (accepted, answer) = match crate::cmd::parse(t, body, payload) {
        Ok(request) => {
            let _ = request.loads();
            (true, Answer::json(serde_json::json!({ "ok": true })))
        }
        Err(answer) => (false, answer),
    };
    let data_error = match &answer {
        Answer::Data { code, .. } => Some(code.clone()),
        _ => None,
    };
    let _ = answer.outcome();
    Read {
        accepted,
        data_error,
        frames: reply_frames(header, answer),
    }
}

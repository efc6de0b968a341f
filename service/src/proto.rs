//! What the service answers and how it writes it (header + JSON body + payload), and the
//! body reading every message type shares (each type's own is in [`crate::cmd`]).

use keyroute::error::ErrorCode;
use keyroute::frame::{
    Header, HeaderError, MsgType, TransportError, FLAG_DATA_ERROR, MAX_HEADER_LEN, SYSTEM,
};
use serde_json::Value as Json;

/// What a request is answered with (also what a [`Store`](crate::store::Store) call
/// that fails returns: the client gets it as is).
///
/// ```
/// use keyroute_serve::Answer;
/// let a = Answer::Data { code: "NOT_FOUND".into(), message: "no value".into() };
/// assert!(matches!(a, Answer::Data { .. }));
/// ```
#[derive(Debug, Clone)]
pub enum Answer {
    /// Success: a JSON body (or empty) and maybe a payload.
    Ok {
        /// The JSON body (empty when `None`).
        body: Option<Json>,
        /// The payload frame.
        payload: Option<Vec<u8>>,
    },
    /// A data error (flag bit 0): `{"code","message"}`.
    Data {
        /// The code (an `ErrorCode` name, or a loader's code).
        code: String,
        /// What happened.
        message: String,
    },
    /// A transport error in the header, empty body.
    Transport(TransportError),
}

impl Answer {
    pub(crate) fn data(code: ErrorCode, message: impl Into<String>) -> Answer {
        Answer::Data {
            code: code.as_str().to_string(),
            message: message.into(),
        }
    }

    pub(crate) fn payload(payload: Vec<u8>) -> Answer {
        Answer::Ok {
            body: None,
            payload: Some(payload),
        }
    }

    pub(crate) fn json(body: Json) -> Answer {
        Answer::Ok {
            body: Some(body),
            payload: None,
        }
    }

    /// The label metrics use: "ok", a transport error's name or a data error's code.
    pub(crate) fn outcome(&self) -> &str {
        match self {
            Answer::Ok { .. } => "ok",
            Answer::Data { code, .. } => code,
            Answer::Transport(t) => t.name(),
        }
    }
}

/// The frames of a reply to `header` (whose session id is echoed).
pub(crate) fn reply_frames(header: &Header<'_>, answer: Answer) -> Vec<Vec<u8>> {
    let mut h = header.reply(0);
    let (body, payload) = match answer {
        Answer::Ok { body, payload } => (
            body.map(|b| serde_json::to_vec(&b).unwrap_or_default())
                .unwrap_or_default(),
            payload,
        ),
        Answer::Data { code, message } => {
            h.flags = FLAG_DATA_ERROR;
            let body = serde_json::json!({ "code": code, "message": message });
            (serde_json::to_vec(&body).unwrap_or_default(), None)
        }
        Answer::Transport(t) => {
            h.transport_error = t.number();
            (Vec::new(), None)
        }
    };
    let mut head = vec![0u8; h.encoded_len()];
    // The session id came from a decoded header: at most 255 bytes, so this cannot fail.
    let _ = h.encode_into(&mut head);
    let mut frames = vec![head, body];
    if let Some(p) = payload {
        frames.push(p);
    }
    frames
}

/// The frames of a reply, with a panic while encoding it (a bug) caught: then the reply
/// is the data error `INTERNAL`, and the second value is true.
pub(crate) fn reply_frames_guarded(header: &Header<'_>, answer: Answer) -> (Vec<Vec<u8>>, bool) {
    guarded(header, answer, reply_frames)
}

fn guarded(
    header: &Header<'_>,
    answer: Answer,
    encode: fn(&Header<'_>, Answer) -> Vec<Vec<u8>>,
) -> (Vec<Vec<u8>>, bool) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| encode(header, answer))) {
        Ok(frames) => (frames, false),
        Err(_) => (reply_frames(header, internal("encoding the reply")), true),
    }
}

/// The answer to a request whose handling panicked (a bug in keyroute serve).
pub(crate) fn internal(while_doing: &str) -> Answer {
    Answer::data(
        ErrorCode::Internal,
        format!(
            "a bug in keyroute serve while {while_doing} (a caught panic); the service goes on"
        ),
    )
}

/// The transport error for a header frame that did not decode: `UNKNOWN_SYSTEM` when its
/// only fault is its system byte (it is a good header of another system), `BAD_HEADER`
/// otherwise.
pub(crate) fn header_refusal(head: &[u8], e: HeaderError) -> TransportError {
    if !matches!(e, HeaderError::BadSystem(_)) {
        return TransportError::BadHeader;
    }
    let mut ours = [0u8; MAX_HEADER_LEN];
    let Some(copy) = ours.get_mut(..head.len()) else {
        return TransportError::BadHeader;
    };
    copy.copy_from_slice(head);
    copy[1] = SYSTEM;
    match Header::decode(copy) {
        Ok(_) => TransportError::UnknownSystem,
        Err(_) => TransportError::BadHeader,
    }
}

/// A bad body: `BAD_TYPE` (the generic code for input of the wrong shape) with what was
/// wrong.
pub(crate) fn bad_body(why: impl std::fmt::Display) -> Answer {
    Answer::data(ErrorCode::BadType, format!("bad body: {why}"))
}

/// Reads a JSON object body (empty = `{}`) into `T`; anything else is `BAD_TYPE`.
pub(crate) fn body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Answer> {
    let text = if bytes.is_empty() { b"{}" } else { bytes };
    let json: Json = serde_json::from_slice(text).map_err(bad_body)?;
    if !json.is_object() {
        return Err(bad_body("not a JSON object"));
    }
    serde_json::from_value(json).map_err(bad_body)
}

/// `BAD_TYPE` when a message of type `t`, which takes no payload, came with one.
pub(crate) fn no_payload(t: MsgType, payload: &Option<Vec<u8>>) -> Result<(), Answer> {
    if payload.is_some() {
        Err(bad_body(format!("{} takes no payload frame", t.name())))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_encoding_is_answered_internal() {
        let h = Header::request(MsgType::CacheGet, [7; 16]);
        let (frames, panicked) = reply_frames_guarded(&h, Answer::json(serde_json::json!({})));
        assert!(!panicked);
        assert_eq!(frames[1], b"{}");
        fn boom(_: &Header<'_>, _: Answer) -> Vec<Vec<u8>> {
            panic!("injected: a bug in an encoder")
        }
        let (frames, panicked) = guarded(&h, Answer::json(serde_json::json!({})), boom);
        assert!(panicked);
        let back = Header::decode(&frames[0]).unwrap();
        assert_eq!((back.request_id, back.flags), ([7; 16], FLAG_DATA_ERROR));
        let body: Json = serde_json::from_slice(&frames[1]).unwrap();
        assert_eq!(body["code"], "INTERNAL");
    }

    #[test]
    fn protocol_md_lists_every_transport_error() {
        let doc = include_str!("../../docs/protocol.md");
        let rows: Vec<(u16, &str)> = doc
            .lines()
            .filter_map(|l| {
                let mut cells = l.strip_prefix("| ")?.split(" | ");
                let n = cells.next()?.parse().ok()?;
                let name = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
                name.bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_')
                    .then_some((n, name))
            })
            .collect();
        let core: Vec<(u16, &str)> = TransportError::ALL
            .iter()
            .map(|t| (t.number(), t.name()))
            .collect();
        assert_eq!(rows, core, "docs/protocol.md's transport error table");
    }

    #[test]
    fn a_good_header_of_another_system_is_unknown_system() {
        let mut frame = [0u8; 64];
        let mut h = Header::request(MsgType::Ping, [1; 16]);
        h.session_id = b"sid";
        let n = h.encode_into(&mut frame).unwrap();
        frame[1] = 9;
        let e = Header::decode(&frame[..n]).unwrap_err();
        assert_eq!(
            header_refusal(&frame[..n], e),
            TransportError::UnknownSystem
        );
        // Another fault besides the system: a bad header.
        let e = Header::decode(&frame[..n - 1]).unwrap_err();
        assert_eq!(
            header_refusal(&frame[..n - 1], e),
            TransportError::BadHeader
        );
        frame[0] = 2;
        let e = Header::decode(&frame[..n]).unwrap_err();
        assert_eq!(header_refusal(&frame[..n], e), TransportError::BadHeader);
    }
}

//! Raw exports of core's frame codec of `keyroute serve` ([`keyroute::frame`]): the header,
//! the message types and the transport errors, for `keyroute/serve` (its `Client` and
//! `LoaderWorker`, `js/serve.mjs`). The glue has no header layout or type table of its own.
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::error::ErrorCode;
use keyroute::frame::{
    Header, MsgType, TransportError, FLAG_DATA_ERROR, HEADER_FIXED_LEN, MAX_HEADER_LEN, REPLY_BIT,
    SYSTEM, VERSION,
};
use wasm_bindgen::prelude::*;

use crate::batch::RawBatch;
use crate::error::{decimal, text, JsError};

/// A header field as a caller gave it: `OUT_OF_RANGE` outside `0..=max`.
fn field(x: i128, what: &str, max: u32) -> Result<u32, JsError> {
    match u32::try_from(x) {
        Ok(n) if n <= max => Ok(n),
        _ => {
            let mut message = String::from(what);
            message.push_str(&text(format_args!(
                " {} is outside 0..={max}, the width of its header field",
                decimal(x)
            )));
            Err(JsError::new(ErrorCode::OutOfRange, message))
        }
    }
}

/// The header frame of these fields, as core writes it (big-endian). `request_id` is cut
/// or zero-padded to 16 bytes. `OUT_OF_RANGE` for a field outside its width, `TOO_LARGE`
/// for a session id over 255 bytes. Any version, system or type is written as given (a
/// test may send what the service must refuse).
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = rawFrameEncode)]
pub fn raw_frame_encode(
    version: i128,
    system: i128,
    msg_type: i128,
    transport_error: i128,
    flags: i128,
    priority: i128,
    deadline_ms: i128,
    request_id: &[u8],
    session_id: &[u8],
) -> Result<Vec<u8>, JsError> {
    let mut id = [0u8; 16];
    let n = request_id.len().min(16);
    id[..n].copy_from_slice(&request_id[..n]);
    let header = Header {
        version: field(version, "version", 255)? as u8,
        system: field(system, "system", 255)? as u8,
        msg_type: field(msg_type, "the message type", 65535)? as u16,
        transport_error: field(transport_error, "the transport error", 65535)? as u16,
        flags: field(flags, "flags", 255)? as u8,
        priority: field(priority, "priority", 255)? as u8,
        deadline_ms: field(deadline_ms, "deadlineMs", u32::MAX)?,
        request_id: id,
        session_id,
    };
    let mut out = alloc::vec![0u8; HEADER_FIXED_LEN + session_id.len().min(MAX_HEADER_LEN)];
    let written = header.encode_into(&mut out)?;
    out.truncate(written);
    Ok(out)
}

/// Every field of a header frame, as core reads it, in one crossing: the numbers `[version,
/// system, type, transport error, flags, priority, deadline ms, session id length]`, with
/// the request id and then the session id written at the start of `ids` (16 + 255 bytes:
/// the longest). `OUT_OF_RANGE` for a frame shorter than its 29 bytes plus the session id,
/// or of another version or system; `TOO_LARGE` above 512 bytes; `BUFFER_TOO_SMALL` when
/// `ids` cannot hold the ids.
#[wasm_bindgen(js_name = rawFrameDecode)]
pub fn raw_frame_decode(frame: &[u8], ids: &mut [u8]) -> Result<Vec<f64>, JsError> {
    let h = Header::decode(frame)?;
    let sid = h.session_id.len();
    let Some(out) = ids.get_mut(..16 + sid) else {
        return Err(JsError::new(
            ErrorCode::BufferTooSmall,
            "the buffer for the ids is too small",
        ));
    };
    out[..16].copy_from_slice(&h.request_id);
    out[16..].copy_from_slice(h.session_id);
    Ok(alloc::vec![
        f64::from(h.version),
        f64::from(h.system),
        f64::from(h.msg_type),
        f64::from(h.transport_error),
        f64::from(h.flags),
        f64::from(h.priority),
        f64::from(h.deadline_ms),
        sid as f64,
    ])
}

/// Core's tables of the protocol, in one batch: items the message types' names, then each
/// transport error's name and summary; `counts` = `[number of types, (type number, kind)
/// per type, number of transport errors, each one's number, VERSION, SYSTEM, REPLY_BIT,
/// FLAG_DATA_ERROR, HEADER_FIXED_LEN, MAX_HEADER_LEN]`, a type's kind being bit 0: a
/// client sends it, bit 1: it is answered.
#[wasm_bindgen(js_name = rawFrameTables)]
pub fn raw_frame_tables() -> RawBatch {
    let mut items: Vec<&[u8]> = MsgType::ALL.iter().map(|t| t.name().as_bytes()).collect();
    for e in TransportError::ALL {
        items.extend([e.name().as_bytes(), e.summary().as_bytes()]);
    }
    let mut b = RawBatch::of(&items);
    b.counts.push(MsgType::ALL.len() as f64);
    for t in MsgType::ALL {
        let kind = u8::from(t.is_client()) | u8::from(t.has_reply()) << 1;
        b.counts.extend([f64::from(t.number()), f64::from(kind)]);
    }
    b.counts.push(TransportError::ALL.len() as f64);
    b.counts
        .extend(TransportError::ALL.iter().map(|e| f64::from(e.number())));
    b.counts.extend([
        f64::from(VERSION),
        f64::from(SYSTEM),
        f64::from(REPLY_BIT),
        f64::from(FLAG_DATA_ERROR),
        HEADER_FIXED_LEN as f64,
        MAX_HEADER_LEN as f64,
    ]);
    b
}

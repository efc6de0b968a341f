//! A client's message to `keyroute serve` as the service reads it: the header
//! (`keyroute::frame::Header::decode`), the JSON body of every message type
//! (service/src/proto.rs `parse`, crate-private, so its source is included here as it is)
//! and the reply frames built for whatever the reading answered. Never panics; a refused
//! body is a data error with the BAD_TYPE code (or a transport error for an unknown type);
//! every reply header decodes, echoes the request id and session id, and has the reply
//! bit.
#![no_main]

#[allow(dead_code)]
#[path = "../../service/src/proto.rs"]
mod proto;

use keyroute::frame::Header;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((header, types, body, payload)) = keyroute_fuzz::service_message(data) else {
        return;
    };
    for t in types {
        let answer = match proto::parse(t, body, payload.clone()) {
            Ok(req) => {
                let _ = req.product_key();
                proto::Answer::json(serde_json::json!({ "ok": true }))
            }
            Err(answer) => {
                if let proto::Answer::Data { code, .. } = &answer {
                    assert_eq!(code, "BAD_TYPE", "{answer:?}");
                }
                answer
            }
        };
        let _ = answer.outcome();
        let frames = proto::reply_frames(&header, answer);
        assert!(frames.len() >= 2);
        let reply = Header::decode(&frames[0]).expect("a reply header decodes");
        assert!(reply.is_reply());
        assert_eq!(reply.request_id, header.request_id);
        assert_eq!(reply.session_id, header.session_id);
        if !frames[1].is_empty() {
            let _: serde_json::Value =
                serde_json::from_slice(&frames[1]).expect("a reply body is JSON");
        }
    }
});

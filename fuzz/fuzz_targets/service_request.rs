//! A client's message to `keyroute serve` as the service reads it: the header
//! (`keyroute::frame::Header::decode`), the JSON body of every message type
//! (every type's reader in service/src/cmd/, through keyroute_serve::fuzzing, a hidden
//! module for this target)
//! and the reply frames built for whatever the reading answered. Never panics; a refused
//! body is a data error with the BAD_TYPE code (or a transport error for an unknown type);
//! every reply header decodes, echoes the request id and session id, and has the reply
//! bit.
#![no_main]

use keyroute::frame::Header;
use keyroute_serve::fuzzing::read_request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((header, types, body, payload)) = keyroute_fuzz::service_message(data) else {
        return;
    };
    for t in types {
        let read = read_request(&header, t, body, payload.clone());
        if let Some(code) = &read.data_error {
            assert_eq!(code, "BAD_TYPE", "{read:?}");
        }
        let frames = read.frames;
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

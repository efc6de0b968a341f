//! A loader worker's message to `keyroute serve` as the broker reads it: the header
//! (`keyroute::frame::Header::decode`) and the body of every worker message type
//! (service/src/worker_msg.rs `parse_worker`, crate-private, so its source is included
//! here as it is, with proto.rs that it uses). Never panics; a refused body is a data
//! error with the BAD_TYPE code (or a transport error for a type the worker may not
//! send); an accepted `worker.ready` has 1-64 valid kinds and a capacity in 1..=1024; an
//! accepted `failed` code is 1-64 printable ASCII bytes not starting with `~`; `loaded`
//! is accepted only with its value; every reply header decodes with the reply bit.
#![no_main]

#[allow(dead_code)]
#[path = "../../service/src/proto.rs"]
mod proto;
#[allow(dead_code)]
#[path = "../../service/src/worker_msg.rs"]
mod worker_msg;

use keyroute::frame::{Header, MsgType};
use libfuzzer_sys::fuzz_target;
use worker_msg::WorkerMsg;

fuzz_target!(|data: &[u8]| {
    let Some((header, types, body, payload)) = keyroute_fuzz::service_message(data) else {
        return;
    };
    for t in types {
        let answer = match worker_msg::parse_worker(t, body, payload.clone()) {
            Ok(msg) => {
                match msg {
                    WorkerMsg::Ready { kinds, capacity } => {
                        assert_eq!(t, MsgType::WorkerReady);
                        assert!((1..=64).contains(&kinds.len()));
                        assert!((1..=1024).contains(&capacity));
                        for k in &kinds {
                            assert!(keyroute::cache::check_kind(k.as_bytes()).is_ok());
                        }
                    }
                    WorkerMsg::Loaded { value, .. } => {
                        assert_eq!(t, MsgType::Loaded);
                        assert_eq!(Some(&value), payload.as_ref());
                    }
                    WorkerMsg::Failed { code, .. } => {
                        assert_eq!(t, MsgType::Failed);
                        assert!(!code.is_empty() && code.len() <= 64 && !code.starts_with('~'));
                        assert!(code.bytes().all(|b| b.is_ascii_graphic()));
                    }
                }
                continue;
            }
            Err(answer) => {
                if let proto::Answer::Data { code, .. } = &answer {
                    assert_eq!(code, "BAD_TYPE", "{answer:?}");
                }
                answer
            }
        };
        let frames = proto::reply_frames(&header, answer);
        let reply = Header::decode(&frames[0]).expect("a reply header decodes");
        assert!(reply.is_reply());
        assert_eq!(reply.request_id, header.request_id);
    }
});

//! Every reply decoder of the smart-cache scripts (core/src/cache/reply.rs: `GetReply`,
//! `FillReply`, `decode_flag`, `decode_warm`, `CreateReply`, `Touch`, `decode_sessions`)
//! on arbitrary `keyroute::cache::Value` trees: never panics, a refusal names its script,
//! and what is accepted is exactly what the documented shape encodes (encoded back, it
//! decodes to the same answer).
#![no_main]

use arbitrary::Unstructured;
use keyroute::cache::{
    decode_flag, decode_sessions, decode_warm, CreateReply, FillReply, GetReply, Touch, Value,
};
use keyroute_fuzz::{cache_value, MAX_TREE};
use libfuzzer_sys::fuzz_target;

fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).expect("decoders give u64 from non-negative i64"))
}

fn bytes(b: &[u8]) -> Value {
    Value::Bytes(b.to_vec())
}

fn encode_get(r: &GetReply) -> Value {
    Value::Array(match r {
        GetReply::Hit { value, version } => vec![Value::Int(1), bytes(value), int(*version)],
        GetReply::Refresh {
            value,
            version,
            fence,
            takeover,
        } => vec![
            Value::Int(2),
            bytes(value),
            int(*version),
            int(*fence),
            Value::Int(i64::from(*takeover)),
        ],
        GetReply::Stale { value, version } => vec![Value::Int(3), bytes(value), int(*version)],
        GetReply::Lease { fence, takeover } => {
            vec![Value::Int(4), int(*fence), Value::Int(i64::from(*takeover))]
        }
        GetReply::Wait {
            remaining_ms,
            fence,
        } => vec![Value::Int(5), int(*remaining_ms), int(*fence)],
        GetReply::Error {
            code,
            message,
            remaining_ms,
        } => vec![
            Value::Int(6),
            bytes(code),
            bytes(message),
            int(*remaining_ms),
        ],
    })
}

fn encode_fill(r: &FillReply) -> Value {
    let (tag, x) = match *r {
        FillReply::Fenced { current } => (0, current),
        FillReply::Stored { version } => (1, version),
        FillReply::Duplicate { version } => (2, version),
    };
    Value::Array(vec![Value::Int(tag), int(x)])
}

fn encode_create(r: &CreateReply) -> Value {
    Value::Array(match *r {
        CreateReply::Created { expires_at } => vec![Value::Int(1), int(expires_at)],
        CreateReply::Taken => vec![Value::Int(0)],
    })
}

fn encode_touch(r: &Touch) -> Value {
    Value::Array(match r {
        Touch::Live {
            client,
            data,
            expires_at,
            version,
        } => vec![
            Value::Int(1),
            bytes(client),
            bytes(data),
            int(*expires_at),
            bytes(version),
        ],
        Touch::Expired => vec![Value::Int(0)],
        Touch::VersionMismatch { stored } => vec![Value::Int(2), bytes(stored)],
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut budget = MAX_TREE;
    let Ok(v) = cache_value(&mut u, 4, &mut budget) else {
        return;
    };

    match GetReply::decode(v.clone()) {
        Ok(r) => assert_eq!(GetReply::decode(encode_get(&r)), Ok(r)),
        Err(e) => assert!(e.to_string().contains("sc-get"), "{e}"),
    }
    match FillReply::decode(v.clone()) {
        Ok(r) => assert_eq!(FillReply::decode(encode_fill(&r)), Ok(r)),
        Err(e) => assert!(e.to_string().contains("sc-fill"), "{e}"),
    }
    match decode_flag(&v, "sc-extend") {
        Ok(f) => assert_eq!(v.as_int(), Some(i64::from(f))),
        Err(e) => assert!(e.to_string().contains("sc-extend"), "{e}"),
    }
    match decode_warm(v.clone()) {
        Ok(fences) => {
            let back = Value::Array(fences.iter().map(|f| int(f.unwrap_or(0))).collect());
            assert_eq!(decode_warm(back), Ok(fences));
        }
        Err(e) => assert!(e.to_string().contains("warm-begin"), "{e}"),
    }
    match CreateReply::decode(v.clone()) {
        Ok(r) => assert_eq!(CreateReply::decode(encode_create(&r)), Ok(r)),
        Err(e) => assert!(e.to_string().contains("sess-create"), "{e}"),
    }
    match Touch::decode(v.clone()) {
        Ok(r) => assert_eq!(Touch::decode(encode_touch(&r)), Ok(r)),
        Err(e) => assert!(e.to_string().contains("sess-touch"), "{e}"),
    }
    match decode_sessions(v) {
        Ok(pairs) => {
            let back = Value::Array(
                pairs
                    .iter()
                    .flat_map(|(sid, at)| [bytes(sid), int(*at)])
                    .collect(),
            );
            assert_eq!(decode_sessions(back), Ok(pairs));
        }
        Err(e) => assert!(e.to_string().contains("sess-list"), "{e}"),
    }
});

//! The service frame header (core/src/frame): `Header::decode` never panics on any bytes,
//! refuses exactly what its docs say, and round-trips: a decoded header encodes back to
//! the bytes it came from (reserved trailing bytes aside), and any header (session id up
//! to 255 bytes) encodes and decodes to itself; `encode_into` never writes past the
//! buffer and writes nothing when it refuses.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use keyroute::frame::{Header, HeaderError, HEADER_FIXED_LEN, MAX_HEADER_LEN, REPLY_BIT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The input as a frame.
    let _ = Header::salvage_request_id(data);
    match Header::decode(data) {
        Ok(h) => {
            assert!(data.len() >= HEADER_FIXED_LEN && data.len() <= MAX_HEADER_LEN);
            let n = h.encoded_len();
            assert!(n <= data.len());
            let mut buf = vec![0u8; n];
            assert_eq!(h.encode_into(&mut buf), Ok(n));
            assert_eq!(
                &buf[..],
                &data[..n],
                "decode then encode gives the bytes back"
            );
            assert_eq!(Header::salvage_request_id(data), h.request_id);
            let r = h.reply(7);
            assert!(r.is_reply() && r.msg_type & !REPLY_BIT == h.msg_type & !REPLY_BIT);
            let _ = (h.kind(), h.is_data_error());
        }
        Err(e) => {
            let _ = e.to_string();
            assert!(!e.code().as_str().is_empty());
            match e {
                HeaderError::TooShort(n) => assert_eq!(n, data.len()),
                HeaderError::TooLong(n) => assert!(n > MAX_HEADER_LEN),
                HeaderError::BadVersion(v) => assert_eq!(v, data[0]),
                HeaderError::BadSystem(s) => assert_eq!(s, data[1]),
                other => panic!("decode never answers {other:?}"),
            }
        }
    }

    // The input as the fields of a header.
    let mut u = Unstructured::new(data);
    let Ok(fields) = <(u16, u16, u8, u8, u32, [u8; 16], u16)>::arbitrary(&mut u) else {
        return;
    };
    let (msg_type, transport_error, flags, priority, deadline_ms, request_id, sid_len) = fields;
    let sid_len = usize::from(sid_len % 300);
    let session = u.bytes(sid_len.min(u.len())).unwrap_or(&[]);
    let h = Header {
        version: keyroute::frame::VERSION,
        system: keyroute::frame::SYSTEM,
        msg_type,
        transport_error,
        flags,
        priority,
        deadline_ms,
        request_id,
        session_id: session,
    };
    let room = u.int_in_range(0usize..=320).unwrap_or(0);
    let mut buf = vec![0xAAu8; room + 8];
    match h.encode_into(&mut buf[..room]) {
        Ok(n) => {
            assert_eq!(n, h.encoded_len());
            assert!(
                buf[room..].iter().all(|&b| b == 0xAA),
                "wrote past the buffer"
            );
            assert_eq!(Header::decode(&buf[..n]), Ok(h));
        }
        Err(HeaderError::SessionIdTooLong(n)) => {
            assert!(n > 255);
            assert!(buf.iter().all(|&b| b == 0xAA), "wrote on refusal");
        }
        Err(HeaderError::BufferTooSmall(n)) => {
            assert_eq!(n, room);
            assert!(room < h.encoded_len());
            assert!(buf.iter().all(|&b| b == 0xAA), "wrote on refusal");
        }
        Err(other) => panic!("encode never answers {other:?}"),
    }
});

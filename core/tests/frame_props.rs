//! The frame header: every header round-trips; any bytes decode to a header or a
//! refusal, never a panic; a decoded header re-encodes to the bytes it came from (up to
//! the reserved tail).

use keyroute::frame::{
    Header, HeaderError, MsgType, TransportError, HEADER_FIXED_LEN, MAX_HEADER_LEN,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn round_trip(msg_type: u16, te: u16, flags: u8, priority: u8, deadline: u32, rid: [u8; 16], sid in proptest::collection::vec(any::<u8>(), 0..256)) {
        let h = Header { version: 1, system: 0, msg_type, transport_error: te, flags, priority, deadline_ms: deadline, request_id: rid, session_id: &sid };
        let mut buf = vec![0u8; 400];
        let n = h.encode_into(&mut buf).unwrap();
        prop_assert_eq!(n, HEADER_FIXED_LEN + sid.len());
        prop_assert_eq!(Header::decode(&buf[..n]).unwrap(), h);
        // Reserved bytes after the session id are ignored.
        prop_assert_eq!(Header::decode(&buf[..n + 3]).unwrap(), h);
    }

    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        match Header::decode(&bytes) {
            Ok(h) => {
                prop_assert!(bytes.len() >= h.encoded_len() && bytes.len() <= MAX_HEADER_LEN);
                let mut buf = vec![0u8; h.encoded_len()];
                h.encode_into(&mut buf).unwrap();
                prop_assert_eq!(&buf[..], &bytes[..h.encoded_len()]);
            }
            Err(e) => prop_assert!(matches!(e.code().as_str(), "OUT_OF_RANGE" | "TOO_LARGE")),
        }
    }
}

#[test]
fn wire_layout_is_big_endian() {
    let mut h = Header::request(MsgType::SessionList, [0xAB; 16]);
    h.transport_error = TransportError::StoreUnavailable.number();
    h.flags = 1;
    h.priority = 7;
    h.deadline_ms = 0x0102_0304;
    h.session_id = b"xy";
    let mut buf = [0u8; 31];
    assert_eq!(h.encode_into(&mut buf), Ok(31));
    assert_eq!(&buf[..12], &[1, 0, 0, 13, 0, 7, 1, 7, 1, 2, 3, 4]);
    assert_eq!(&buf[12..28], &[0xAB; 16]);
    assert_eq!(&buf[28..], &[2, b'x', b'y']);
}

#[test]
fn refusals() {
    let long_sid = [b's'; 300];
    let mut h = Header::request(MsgType::Ping, [0; 16]);
    h.session_id = &long_sid;
    assert_eq!(
        h.encode_into(&mut [0u8; 400]),
        Err(HeaderError::SessionIdTooLong(300))
    );
    assert_eq!(
        Header::decode(&[0u8; MAX_HEADER_LEN + 1]),
        Err(HeaderError::TooLong(MAX_HEADER_LEN + 1))
    );
    let mut frame = [0u8; 29];
    frame[0] = 1;
    frame[1] = 3;
    assert_eq!(Header::decode(&frame), Err(HeaderError::BadSystem(3)));
}

#[test]
fn every_type_and_error_is_named_once() {
    for t in MsgType::ALL {
        assert_eq!(MsgType::from_number(t.number()), Some(*t));
        assert_eq!(MsgType::from_name(t.name()), Some(*t));
    }
    for (i, e) in TransportError::ALL.iter().enumerate() {
        assert_eq!(e.number() as usize, i + 1);
        assert_eq!(TransportError::from_number(e.number()), Some(*e));
    }
}

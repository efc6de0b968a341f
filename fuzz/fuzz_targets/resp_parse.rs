//! The RESP2 reader of the smart cache's subscriber connection
//! (redis/src/cache/resp.rs, crate-private, so its source is included here as it is): on
//! arbitrary bytes from the server it answers a frame, "need more bytes" or an error,
//! never panics; a frame takes no more bytes than there are; the bytes it took, given
//! again with anything after them, give the same frame; and a strict prefix of a complete frame
//! asks for more bytes.
#![no_main]

#[allow(dead_code)]
#[path = "../../redis/src/cache/resp.rs"]
mod resp;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match resp::parse(data) {
        Ok(Some((frame, used))) => {
            assert!(
                used > 0 && used <= data.len(),
                "used {used} of {}",
                data.len()
            );
            let mut longer = data[..used].to_vec();
            longer.extend_from_slice(b"+extra\r\n");
            let again = resp::parse(&longer)
                .expect("same bytes parse")
                .expect("complete");
            assert_eq!(again, (frame.clone(), used));
            for cut in [used / 2, used - 1] {
                // A frame's length is fixed by its headers: a strict prefix is incomplete.
                assert!(
                    matches!(resp::parse(&data[..cut]), Ok(None)),
                    "prefix of {cut} bytes"
                );
            }
            let _ = frame.strings();
        }
        Ok(None) => {}
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::InvalidData),
    }
});

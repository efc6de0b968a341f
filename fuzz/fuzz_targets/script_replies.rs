//! The pool and lease clients of keyroute-redis (`LeastUsed`, `Leases`) decoding their
//! scripts' replies: every call is made on a fake connection that answers with fuzzed
//! `redis::Value` trees (error replies such as NOSCRIPT, WRONGTYPE and MOVED included)
//! and with an I/O error once the input is used up. Expected: an answer or an error with
//! a code, never a panic and never a loop that does not end (each call sends a bounded
//! number of commands).
#![no_main]

use std::time::Duration;

use arbitrary::Unstructured;
use keyroute::select::Restore;
use keyroute_fuzz::FakeConnection;
use keyroute_redis::{Lease, Leases, LeastUsed, Now};
use libfuzzer_sys::fuzz_target;

/// The most commands one call may send: NOSCRIPT retries are bounded (16 rounds of
/// EVALSHA + SCRIPT LOAD), and so are the batched pick and reclaim loops on finite input.
const MAX_SENT: usize = 4096;

fn ok_or_code<T>(r: keyroute_redis::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(!e.code().as_str().is_empty());
            let _ = e.to_string();
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(mut con) = FakeConnection::new(&mut u) else {
        return;
    };
    let Ok(op) = u.int_in_range(0u8..=10) else {
        return;
    };
    let pool = LeastUsed::new("{pool}:fuzz").expect("a valid pool key");
    let leases = Leases::new("{lease}:fuzz").expect("a valid pool key");
    match op {
        0 => {
            if let Some(Some(member)) = ok_or_code(pool.pick(&mut con)) {
                let _ = member.len();
            }
        }
        1 => {
            let n = u.int_in_range(0usize..=300).unwrap_or(0);
            if let Some(picks) = ok_or_code(pool.pick_many(&mut con, n)) {
                assert!(picks.len() <= n, "{} picks for n = {n}", picks.len());
            }
        }
        2 => {
            let _ = ok_or_code(pool.seed(&mut con, ["a", "b"], 0, false));
        }
        3 => {
            let _ = ok_or_code(pool.remove(&mut con, b"a"));
        }
        4 => {
            let mode = if u.arbitrary().unwrap_or(false) {
                Restore::Keep
            } else {
                Restore::AtMinimum
            };
            let _ = ok_or_code(pool.restore(&mut con, b"a", mode));
        }
        5 => {
            let _ = ok_or_code(pool.counts(&mut con));
            let _ = ok_or_code(pool.removed(&mut con));
        }
        6 => {
            let ms = u.int_in_range(0u64..=1 << 54).unwrap_or(1);
            let r = leases.acquire(&mut con, Duration::from_millis(ms));
            if !(1..=1 << 53).contains(&ms) {
                assert!(r.is_err(), "a TTL of {ms} ms is refused");
                assert_eq!(con.sent, 0, "nothing is sent for a refused TTL");
            }
            let _ = ok_or_code(r);
        }
        7 => {
            let lease = Lease {
                member: b"a".to_vec(),
                id: 1,
                deadline_ms: 2,
            };
            let _ = ok_or_code(leases.release(&mut con, &lease));
        }
        8 => {
            let now = if u.arbitrary().unwrap_or(false) {
                Now::Server
            } else {
                Now::At(u.arbitrary().unwrap_or(0))
            };
            let _ = ok_or_code(leases.reclaim(&mut con, now));
        }
        9 => {
            let _ = ok_or_code(leases.in_flight(&mut con));
            let _ = ok_or_code(leases.outstanding(&mut con));
        }
        _ => {
            let _ = ok_or_code(leases.seed(&mut con, ["a"]));
            let _ = ok_or_code(leases.remove(&mut con, b"a"));
        }
    }
    assert!(con.sent <= MAX_SENT, "{} commands sent", con.sent);
});

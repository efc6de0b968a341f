//! The Rust calls that the C entry points wrap, counted in instructions (callgrind), for
//! `make bench-c-callgrind`: `abi OP PROFILE N` does what `abi.c` does (same keys, same
//! 100 servers, OP N times from one function `loop_<OP>`) with `Ring::get`,
//! `Ring::get_index` and `key_slot` called directly and inlined, as a Rust caller gets
//! them. The key length reaches the loops through `black_box`, as it reaches the C entry
//! points from C: a length the compiler could see would let it specialise the hashing to
//! 16 bytes and count less than any real caller runs. `callgrind.py` runs both programs
//! and reports the difference per call.
//!
//! `cargo bench -p keyroute-c --bench abi -- ring_get libketama 4096` runs it once.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::hint::black_box;
use std::process::ExitCode;

use keyroute_core::ring::{Profile, ProfileName, Ring};
use keyroute_core::slot::key_slot;

const NKEYS: usize = 4096;

fn keys16() -> Vec<[u8; 16]> {
    (0u64..NKEYS as u64)
        .map(|i| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
            k[8..].copy_from_slice(b"user:key");
            k
        })
        .collect()
}

#[no_mangle]
#[inline(never)]
fn loop_ring_get(ring: &Ring, keys: &[[u8; 16]], len: usize, n: usize) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc += ring
            .get(&keys[i & (NKEYS - 1)][..len])
            .map_or(0, |s| s.len() as u64);
    }
    acc
}

#[no_mangle]
#[inline(never)]
fn loop_ring_get_index(ring: &Ring, keys: &[[u8; 16]], len: usize, n: usize) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc += ring.get_index(&keys[i & (NKEYS - 1)][..len]).unwrap_or(0) as u64;
    }
    acc
}

#[no_mangle]
#[inline(never)]
fn loop_key_slot(keys: &[[u8; 16]], len: usize, n: usize) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc += u64::from(key_slot(&keys[i & (NKEYS - 1)][..len]));
    }
    acc
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; the three operands are the last three arguments.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [op, profile, n] = args.as_slice() else {
        eprintln!("usage: abi ring_get|ring_get_index|key_slot PROFILE N");
        return ExitCode::from(2);
    };
    let Some(n) = n
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=100_000_000).contains(n))
    else {
        eprintln!("N must be 1..=100000000");
        return ExitCode::from(2);
    };
    let keys = keys16();
    if op == "key_slot" {
        black_box(loop_key_slot(black_box(&keys), black_box(16), n));
        return ExitCode::SUCCESS;
    }
    let Some(name) = ProfileName::ALL.iter().find(|p| p.as_str() == profile) else {
        eprintln!("unknown profile {profile}");
        return ExitCode::from(2);
    };
    let nodes: Vec<(String, u32)> = (0..100)
        .map(|i| (format!("10.0.{}.{}:11211", i >> 8, i & 255), 1))
        .collect();
    let ring = Ring::with_nodes(Profile::from_name(*name), nodes).unwrap();
    let acc = match op.as_str() {
        "ring_get" => loop_ring_get(black_box(&ring), black_box(&keys), black_box(16), n),
        "ring_get_index" => {
            loop_ring_get_index(black_box(&ring), black_box(&keys), black_box(16), n)
        }
        _ => {
            eprintln!("unknown op {op}");
            return ExitCode::from(2);
        }
    };
    black_box(acc);
    ExitCode::SUCCESS
}

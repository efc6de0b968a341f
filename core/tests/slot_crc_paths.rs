//! Every CRC16 path (`Crc16Path`: tables, PCLMULQDQ, VPCLMULQDQ), forced one at a time,
//! agrees bit for bit with the textbook bitwise CRC-16/XMODEM: every length 0–300, random
//! longer inputs, continued registers, and key slots with and without hash tags, one key
//! at a time and in batches (whose short keys take a path of their own with VPCLMULQDQ).
//! A path this CPU lacks is reported as unavailable (and must be, off x86_64).
#![allow(clippy::unwrap_used)]

use keyroute::keys::PackedKeys;
use keyroute::slot::{
    crc16_xmodem, crc16_xmodem_with, hash_tag, key_slot, key_slot_with, key_slots, key_slots_from,
    key_slots_with, Crc16Path,
};
use proptest::prelude::*;

fn crc_bitwise(mut crc: u16, data: &[u8]) -> u16 {
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn paths() -> Vec<Crc16Path> {
    Crc16Path::ALL
        .into_iter()
        .filter(|p| p.available())
        .collect()
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn availability_is_consistent() {
    assert!(Crc16Path::Table.available());
    assert!(Crc16Path::selected().available());
    if !cfg!(target_arch = "x86_64") {
        assert_eq!(paths(), vec![Crc16Path::Table]);
    }
    // Unavailable paths answer None rather than a wrong checksum.
    for p in Crc16Path::ALL {
        assert_eq!(crc16_xmodem_with(p, 0, b"x").is_some(), p.available());
        assert_eq!(key_slot_with(p, b"x").is_some(), p.available());
        assert_eq!(
            key_slots_with(p, &[b"x"], &mut [0u16]).is_some(),
            p.available()
        );
    }
    // Report which paths this run covers (visible with --nocapture).
    println!(
        "available CRC16 paths: {:?}, selected {:?}",
        paths(),
        Crc16Path::selected()
    );
}

#[test]
fn every_length_0_to_300_every_path() {
    for seed in 0..4u64 {
        let data = match seed {
            0 => vec![0u8; 300],
            1 => vec![0xffu8; 300],
            _ => bytes(300, seed),
        };
        for len in 0..=300 {
            let d = &data[..len];
            let want = crc_bitwise(0, d);
            assert_eq!(crc16_xmodem(d), want, "default path, len {len}");
            for p in paths() {
                assert_eq!(
                    crc16_xmodem_with(p, 0, d),
                    Some(want),
                    "{p:?} len {len} seed {seed}"
                );
                let init = (len as u16).wrapping_mul(0x9e37) ^ 0x5a5a;
                assert_eq!(
                    crc16_xmodem_with(p, init, d),
                    Some(crc_bitwise(init, d)),
                    "{p:?} len {len} init"
                );
            }
        }
    }
}

#[test]
fn stride_boundaries_every_path() {
    // Lengths around each path's minimum and around its strides (64, 128, 256, 512 B).
    let data = bytes(5000, 9);
    let mut lens: Vec<usize> = Vec::new();
    for base in [256usize, 512, 768, 1024, 1536, 2048, 4096] {
        lens.extend(base.saturating_sub(20)..base + 20);
    }
    for len in lens {
        let d = &data[..len];
        let want = crc_bitwise(0, d);
        for p in paths() {
            assert_eq!(crc16_xmodem_with(p, 0, d), Some(want), "{p:?} len {len}");
        }
    }
}

#[test]
fn key_slot_braces_at_every_position_every_path() {
    // Long keys with `{` and `}` placed across blocks and strides: the fused brace scan of
    // each path must give up exactly when the hash tag rule applies.
    let base = bytes(700, 3)
        .into_iter()
        .map(|b| if b == b'{' || b == b'}' { b'x' } else { b })
        .collect::<Vec<u8>>();
    let reference = |k: &[u8]| crc_bitwise(0, hash_tag(k)) & 16383;
    for len in [
        64usize, 100, 127, 128, 129, 255, 256, 300, 511, 512, 513, 600, 700,
    ] {
        for open in (0..len).step_by(7).chain([len - 1]) {
            for close in [open + 1, open + 2, open + 40, len + 1] {
                let mut k = base[..len].to_vec();
                k[open] = b'{';
                if close < len {
                    k[close] = b'}';
                }
                let want = reference(&k);
                assert_eq!(key_slot(&k), want, "len {len} open {open} close {close}");
                for p in paths() {
                    assert_eq!(
                        key_slot_with(p, &k),
                        Some(want),
                        "{p:?} len {len} open {open} close {close}"
                    );
                }
            }
        }
        let k = &base[..len];
        for p in paths() {
            assert_eq!(
                key_slot_with(p, k),
                Some(reference(k)),
                "{p:?} len {len} no tag"
            );
        }
    }
}

/// `key_slots_with(path)`, `key_slots`, and one key at a time `key_slot` and
/// `key_slot_with(path)`, against the reference, key by key.
fn check_batch(keys: &[Vec<u8>], what: &str) {
    let want: Vec<u16> = keys
        .iter()
        .map(|k| crc_bitwise(0, hash_tag(k)) & 16383)
        .collect();
    for (k, &w) in keys.iter().zip(&want) {
        assert_eq!(key_slot(k), w, "key_slot, {what}, key {k:?}");
        for p in paths() {
            assert_eq!(
                key_slot_with(p, k),
                Some(w),
                "key_slot_with {p:?}, {what}, key {k:?}"
            );
        }
    }
    let mut got = vec![0u16; keys.len()];
    key_slots(keys, &mut got).unwrap();
    assert_eq!(got, want, "key_slots, {what}");
    let packed: PackedKeys = keys.iter().collect();
    let mut got = vec![0u16; keys.len()];
    key_slots_from(&packed, &mut got).unwrap();
    assert_eq!(got, want, "key_slots_from, {what}");
    for p in paths() {
        let mut got = vec![0u16; keys.len()];
        key_slots_with(p, keys, &mut got).unwrap().unwrap();
        assert_eq!(got, want, "{p:?}, {what}");
    }
}

#[test]
fn batch_every_short_length_and_brace_position_every_path() {
    // The register-only path (`key_slot` and the batch) takes keys of up to 32 bytes (two blocks): every
    // length around it, with bytes of every value, and `{`/`}` at every position.
    for seed in 0..6u64 {
        let data = match seed {
            0 => vec![0u8; 48],
            1 => vec![0xffu8; 48],
            2 => vec![b'{'; 48],
            _ => bytes(48, seed),
        };
        let keys: Vec<Vec<u8>> = (0..=48).map(|n| data[..n].to_vec()).collect();
        check_batch(&keys, &format!("seed {seed}"));
    }
    let base: Vec<u8> = (0..48).map(|i| b'a' + (i % 26) as u8).collect();
    let mut keys = Vec::new();
    for len in 0..=40usize {
        for open in 0..len {
            for close in (open + 1..=len).step_by(3).chain([len]) {
                let mut k = base[..len].to_vec();
                k[open] = b'{';
                if close < len {
                    k[close] = b'}';
                }
                keys.push(k);
            }
        }
    }
    check_batch(&keys, "braces");
    // Keys that end at the end of an allocation: a masked load must not read past them.
    let boxed: Vec<Vec<u8>> = (0..=32).map(|n| bytes(n, 77 + n as u64)).collect();
    check_batch(&boxed, "exact allocations");
}

proptest! {
    #[test]
    fn random_batches_every_path(keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..=70), 0..40)) {
        check_batch(&keys, "random");
    }

    #[test]
    fn random_inputs_every_path(data in proptest::collection::vec(any::<u8>(), 0..6000), init in any::<u16>()) {
        let want = crc_bitwise(init, &data);
        for p in paths() {
            prop_assert_eq!(crc16_xmodem_with(p, init, &data), Some(want), "{:?} len {}", p, data.len());
        }
    }

    #[test]
    fn random_short_inputs_every_path(data in proptest::collection::vec(any::<u8>(), 0..=300)) {
        let want = crc_bitwise(0, &data);
        for p in paths() {
            prop_assert_eq!(crc16_xmodem_with(p, 0, &data), Some(want));
            prop_assert_eq!(key_slot_with(p, &data), Some(crc_bitwise(0, hash_tag(&data)) & 16383));
        }
    }
}

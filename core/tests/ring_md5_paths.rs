//! Every MD5 batch path (`Md5Path`: scalar, AVX-512), forced one at a time, gives the
//! same key points as `md-5` one key at a time: every key length 0..=300 (one block up to
//! 55 bytes, longer keys fall back inside a batch), random batches mixing both, and ring
//! lookups in batches equal to one-by-one lookups on every MD5 profile.

use keyroute::ring::{
    key_hash, md5_key_hashes_with, Md5Path, PointHash, Profile, ProfileOptions, Ring,
};
use md5::{Digest, Md5};
use proptest::prelude::*;

fn reference(key: &[u8]) -> u32 {
    let d = Md5::digest(key);
    u32::from_le_bytes([d[0], d[1], d[2], d[3]])
}

fn paths() -> Vec<Md5Path> {
    Md5Path::ALL.into_iter().filter(|p| p.available()).collect()
}

#[test]
fn the_selected_path_is_available_and_scalar_always_is() {
    assert!(Md5Path::Scalar.available());
    assert!(Md5Path::selected().available());
    if std::env::var("KEYROUTE_MD5").as_deref() == Ok("scalar") {
        assert_eq!(Md5Path::selected(), Md5Path::Scalar);
    }
    eprintln!(
        "MD5 paths on this CPU: {:?}, selected {:?}",
        paths(),
        Md5Path::selected()
    );
}

#[test]
fn every_length_0_to_300_on_every_path() {
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut byte = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    for path in paths() {
        // 32 keys of each length (one full batch), then batches of mixed lengths.
        for len in 0..=300usize {
            let keys: Vec<Vec<u8>> = (0..32)
                .map(|_| (0..len).map(|_| byte()).collect())
                .collect();
            let mut out = [0u32; 32];
            assert!(md5_key_hashes_with(path, &keys, &mut out));
            for (k, h) in keys.iter().zip(out) {
                assert_eq!(h, reference(k), "{path:?} length {len}");
                assert_eq!(u64::from(h), key_hash(PointHash::Md5, k));
            }
        }
    }
}

proptest! {
    #[test]
    fn mixed_batches_agree(keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..120), 0..100)) {
        for path in paths() {
            let mut out = vec![0u32; keys.len()];
            prop_assert!(md5_key_hashes_with(path, &keys, &mut out));
            for (k, h) in keys.iter().zip(&out) {
                prop_assert_eq!(*h, reference(k), "{:?}", path);
            }
        }
    }
}

#[test]
fn batch_lookups_equal_single_lookups_on_every_md5_profile() {
    let names: Vec<String> = (0..37).map(|i| format!("10.0.0.{i}:11211")).collect();
    let keys: Vec<Vec<u8>> = (0..5000u32)
        .map(|i| {
            // Lengths 0..=80: both sides of the one-block limit, in every batch.
            let len = (i as usize * 7) % 81;
            (0..len)
                .map(|j| (i as u8).wrapping_mul(31).wrapping_add(j as u8))
                .collect()
        })
        .collect();
    for profile in [
        "libketama",
        "libmemcached",
        "twemproxy",
        "uhashring",
        "node-hashring",
        "hash_ring",
    ] {
        let p = Profile::from_options(profile, &ProfileOptions::default()).expect(profile);
        assert_eq!(p.hash(), PointHash::Md5, "{profile}");
        let ring = Ring::with_nodes(p, names.iter().map(|n| (n.as_str(), 1))).expect(profile);
        let mut many = Vec::new();
        ring.get_many_into(keys.iter(), &mut many);
        let one: Vec<Option<usize>> = keys.iter().map(|k| ring.get_index(k)).collect();
        assert_eq!(many, one, "{profile}");
        let mut slice = vec![0u32; keys.len()];
        assert_eq!(ring.get_many_to_slice(keys.iter(), &mut slice), keys.len());
        assert!(
            slice.iter().zip(&one).all(|(&s, o)| Some(s as usize) == *o),
            "{profile}"
        );
    }
}

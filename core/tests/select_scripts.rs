//! The script constants: SHA1s, texts, and the side key's slot.

use keyroute::script::SCRIPTS;
use keyroute::select::{SideKey, LEAST_USED_SCRIPT, LEAST_USED_SHA1};
use proptest::prelude::*;
use sha1::{Digest, Sha1};

fn sha1_hex(text: &str) -> String {
    Sha1::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn sha1_constants_match_the_texts() {
    for script in SCRIPTS {
        assert_eq!(script.sha1(), sha1_hex(script.text()), "{}", script.name());
    }
    assert_eq!(LEAST_USED_SHA1, sha1_hex(LEAST_USED_SCRIPT));
}

#[test]
fn key_counts_match_the_texts() {
    for script in SCRIPTS {
        let expected = script.num_keys();
        assert_eq!(script.num_keys(), expected, "{}", script.name());
        assert!(script.text().contains("KEYS[1]"));
        if script.variadic_keys() {
            // One key or more, each checked in a loop over #KEYS.
            assert!(script.text().contains("#KEYS < 1"), "{}", script.name());
            assert!(script.text().contains("KEYS[i]"), "{}", script.name());
            continue;
        }
        assert_eq!(
            script.text().contains("KEYS[2]") || script.text().contains("KEYS[i]"),
            expected >= 2,
            "{}",
            script.name()
        );
        if expected > 1 {
            // Every key the script declares is checked (by index or in the type loop).
            assert!(
                script.text().contains(&format!("#KEYS ~= {expected}")),
                "{}",
                script.name()
            );
        }
    }
}

/// Redis Cluster slot, written out from the spec independently of the crate.
fn slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(close) if close > 0 => &key[open + 1..open + 1 + close],
            _ => key,
        },
        None => key,
    };
    crc16::State::<crc16::XMODEM>::calculate(hashed) & 16383
}

#[test]
fn slot_helper_matches_the_design_examples() {
    assert_eq!(
        crc16::State::<crc16::XMODEM>::calculate(b"123456789"),
        0x31C3
    );
    assert_eq!(slot(b"{}{a}"), 13650);
    assert_eq!(slot(b"{{a}}"), 10276);
    assert_eq!(slot(b"foo{}{bar}"), 8363);
    assert_eq!(slot(b"foo{bar}{zap}"), 5061);
}

fn key_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(b'{'), Just(b'}'), Just(b':'), b'a'..=b'c', any::<u8>()],
        0..12,
    )
}

proptest! {
    #[test]
    fn side_key_shares_the_pool_keys_slot_or_is_refused(pool in key_bytes()) {
        match SideKey::new(&pool) {
            Ok(side) => {
                let side = side.parts().concat();
                prop_assert_eq!(slot(&side), slot(&pool));
                prop_assert_ne!(side, pool);
            }
            Err(_) => {
                let tagged = pool
                    .iter()
                    .position(|&b| b == b'{')
                    .and_then(|open| pool[open + 1..].iter().position(|&b| b == b'}'))
                    .is_some_and(|close| close > 0);
                let close = b'}';
                prop_assert!(pool.is_empty() || (!tagged && pool.contains(&close)), "refused {:?}", pool);
            }
        }
    }
}

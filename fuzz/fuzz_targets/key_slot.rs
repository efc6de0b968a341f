//! `key_slot`, `key_slots`, `single_slot`, `hash_tag`, `group_by_slot` and the CRC16
//! against a bitwise reference written here (CRC-16/XMODEM one bit at a time, the hash
//! tag rule the plain way).
#![no_main]

use keyroute::slot::{
    crc16_xmodem, crc16_xmodem_update, group_by_slot, hash_tag, key_slot, key_slots, key_slots_vec,
    single_slot,
};
use keyroute_fuzz::{crc16_bitwise, hash_tag_reference, key_slot_reference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // One key: the whole input.
    assert_eq!(crc16_xmodem(data), crc16_bitwise(data));
    assert_eq!(hash_tag(data), hash_tag_reference(data));
    let slot = key_slot(data);
    assert_eq!(slot, key_slot_reference(data), "{data:?}");
    assert!(slot < 16384);

    // The CRC in two parts, split anywhere.
    let cut = data
        .first()
        .map_or(0, |&b| usize::from(b) % (data.len() + 1));
    assert_eq!(
        crc16_xmodem_update(crc16_xmodem(&data[..cut]), &data[cut..]),
        crc16_xmodem(data)
    );

    // A batch: the input split at 0xFF bytes (so keys of every length and content).
    let keys: Vec<&[u8]> = data.split(|&b| b == 0xFF).collect();
    let mut out = vec![u16::MAX; keys.len() + 1];
    key_slots(&keys, &mut out).expect("long enough");
    assert_eq!(
        out[keys.len()],
        u16::MAX,
        "the extra entry is left untouched"
    );
    for (k, &s) in keys.iter().zip(&out) {
        assert_eq!(s, key_slot_reference(k));
    }
    assert_eq!(key_slots_vec(&keys), out[..keys.len()]);
    if !keys.is_empty() {
        let mut short = vec![7u16; keys.len() - 1];
        assert!(key_slots(&keys, &mut short).is_err());
        assert!(short.iter().all(|&s| s == 7), "nothing written on error");
    }
    let first = key_slot_reference(keys[0]);
    let same = keys.iter().all(|k| key_slot_reference(k) == first);
    assert_eq!(single_slot(&keys), same.then_some(first));

    // Groups: every index once, each group one slot, slots ascending, indexes in input
    // order.
    let groups = group_by_slot(&keys);
    let mut seen = vec![false; keys.len()];
    let mut last: Option<u16> = None;
    for (slot, idx) in groups.iter() {
        assert!(!idx.is_empty());
        assert!(last.is_none_or(|l| l < slot), "slots ascending");
        last = Some(slot);
        assert!(
            idx.windows(2).all(|w| w[0] < w[1]),
            "indexes in input order"
        );
        for &i in idx {
            assert!(!seen[i], "index {i} in two groups");
            seen[i] = true;
            assert_eq!(key_slot_reference(keys[i]), slot);
        }
    }
    assert!(seen.iter().all(|&s| s));
});

//! Raw Redis Cluster hash slot exports of the main module; `keySlot`, `keySlots` and
//! `hashTag` in `js/slot.mjs` wrap them. Slot maps and resharding plans are in the
//! cluster module ([`crate::cluster`]).
use alloc::vec::Vec;

use keyroute::slot::{hash_tag, key_slot};
use wasm_bindgen::prelude::*;

use crate::error::JsError;
use crate::keys::RawKeys;

/// [`key_slot`] in one place: inlined into every caller, its unrolled CRC would take
/// several KB of the .wasm.
#[inline(never)]
fn slot_of(key: &[u8]) -> u16 {
    key_slot(key)
}

/// The slot of the key in the first `len` bytes of `keys` (the glue writes a string key
/// there, with no allocation per call); `-1` when `len` passes the buffer.
#[wasm_bindgen(js_name = rawKeySlotKey)]
pub fn raw_key_slot_key(keys: &RawKeys, len: u32) -> i32 {
    keys.key(len).map_or(-1, |k| i32::from(slot_of(k)))
}

/// The slot of a byte key.
#[wasm_bindgen(js_name = rawKeySlotBytes)]
pub fn raw_key_slot_bytes(key: &[u8]) -> u16 {
    slot_of(key)
}

/// The slot of each of the first `n` keys of `keys` (of `len` bytes), written behind
/// their offsets.
#[wasm_bindgen(js_name = rawKeySlotsKeys)]
pub fn raw_key_slots_keys(keys: &mut RawKeys, n: u32, len: u32) -> Result<(), JsError> {
    let (keys, out) = keys.batch(n, len)?;
    for (o, k) in out.iter_mut().zip(keys) {
        *o = u32::from(slot_of(k));
    }
    Ok(())
}

/// The hashed part of a key.
#[wasm_bindgen(js_name = rawHashTag)]
pub fn raw_hash_tag(key: &[u8]) -> Vec<u8> {
    hash_tag(key).to_vec()
}

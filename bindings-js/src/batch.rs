//! [`RawBatch`]: byte strings packed in one buffer, the shape in which lists cross from
//! wasm to JavaScript (pool picks and counts, script calls, decoded replies, headers).
use alloc::vec::Vec;
use wasm_bindgen::prelude::*;

/// Byte strings packed in one buffer, with end offsets and optional counts.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct RawBatch {
    pub(crate) data: Vec<u8>,
    pub(crate) ends: Vec<u32>,
    pub(crate) counts: Vec<f64>,
}

impl RawBatch {
    /// Appends one item.
    #[cfg(feature = "cache")]
    pub(crate) fn push(&mut self, item: &[u8]) {
        self.data.extend_from_slice(item);
        self.ends.push(self.data.len() as u32);
    }

    /// A batch of these items.
    #[cfg(feature = "cache")]
    pub(crate) fn of(items: &[&[u8]]) -> Self {
        let mut b = RawBatch::default();
        for item in items {
            b.push(item);
        }
        b
    }

    /// A batch of `items`.
    #[cfg(any(feature = "routing", feature = "fleet"))]
    pub(crate) fn from_iter<'a>(items: impl Iterator<Item = &'a [u8]>) -> Self {
        let mut b = RawBatch::default();
        for m in items {
            b.data.extend_from_slice(m);
            b.ends.push(b.data.len() as u32);
        }
        b
    }
}

#[wasm_bindgen]
impl RawBatch {
    /// All bytes.
    #[wasm_bindgen(getter)]
    pub fn data(&self) -> Vec<u8> {
        self.data.clone()
    }
    /// End offset of each item.
    #[wasm_bindgen(getter)]
    pub fn ends(&self) -> Vec<u32> {
        self.ends.clone()
    }
    /// Count of each item (empty when not applicable).
    #[wasm_bindgen(getter)]
    pub fn counts(&self) -> Vec<f64> {
        self.counts.clone()
    }
}

//! Raw least-used exports: the script texts and the in-memory [`Pool`] model.
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::script::SCRIPTS;
use keyroute::select::{Pool, Restore};
use wasm_bindgen::prelude::*;

use crate::error::{unpack, JsError};

/// `[name, text, sha1, num_keys]` of every script, flattened.
#[wasm_bindgen(js_name = rawScripts)]
pub fn raw_scripts() -> Vec<String> {
    let mut out = Vec::with_capacity(4 * SCRIPTS.len());
    for s in SCRIPTS {
        out.extend([s.name(), s.text(), s.sha1()].map(String::from));
        out.push(alloc::format!("{}", s.num_keys()));
    }
    out
}

fn count(c: f64) -> Result<u64, JsError> {
    if !c.is_finite() || c < 0.0 || !crate::error::is_integer(c) {
        return Err(JsError {
            code: "BAD_COUNT",
            message: String::from("counts must be non-negative integers"),
        });
    }
    Ok(c as u64)
}

/// The in-memory pool model owned by Rust; members are bytes.
#[wasm_bindgen]
#[derive(Debug, Clone, Default)]
pub struct RawPool {
    pool: Pool,
}

#[wasm_bindgen]
impl RawPool {
    /// An empty pool.
    #[wasm_bindgen(constructor)]
    pub fn new() -> RawPool {
        RawPool::default()
    }

    /// Seeds the members of a packed batch; returns how many were new.
    #[wasm_bindgen(js_name = seedPacked)]
    pub fn seed_packed(
        &mut self,
        data: &[u8],
        ends: &[u32],
        initial: f64,
        overwrite: bool,
    ) -> Result<usize, JsError> {
        let members = unpack(data, ends)?;
        let initial = count(initial)?;
        self.pool
            .seed(members, initial, overwrite)
            .map_err(|e| JsError::new("POOL", e))
    }

    /// Picks the least-used member and increments it; `undefined` when empty.
    pub fn pick(&mut self) -> Option<Vec<u8>> {
        self.pool.pick()
    }

    /// `n` picks, packed as one buffer.
    #[wasm_bindgen(js_name = pickManyPacked)]
    pub fn pick_many_packed(&mut self, n: u32) -> RawBatch {
        RawBatch::from_iter(self.pool.pick_many(n as usize).iter().map(Vec::as_slice))
    }

    /// Removes a member; its count, or `-1` when it was not in the pool.
    pub fn remove(&mut self, member: &[u8]) -> f64 {
        self.pool.remove(member).map_or(-1.0, |c| c as f64)
    }

    /// Restores a member (`keep` or `at_minimum`); its count afterwards.
    pub fn restore(&mut self, member: &[u8], mode: &str) -> Result<f64, JsError> {
        let mode: Restore = mode
            .parse()
            .map_err(|e| JsError::new("BAD_RESTORE_MODE", e))?;
        let count = self
            .pool
            .restore(member, mode)
            .map_err(|e| JsError::new(e.code().as_str(), e))?;
        Ok(count as f64)
    }

    /// A member's count, `-1` when not in the pool.
    pub fn count(&self, member: &[u8]) -> f64 {
        self.pool.count(member).map_or(-1.0, |c| c as f64)
    }

    /// A removed member's remembered count, `-1` when none.
    #[wasm_bindgen(js_name = removedCount)]
    pub fn removed_count(&self, member: &[u8]) -> f64 {
        self.pool.removed_count(member).map_or(-1.0, |c| c as f64)
    }

    /// Whether a member is in the pool.
    pub fn contains(&self, member: &[u8]) -> bool {
        self.pool.contains(member)
    }

    /// The lowest count, `-1` when empty.
    #[wasm_bindgen(js_name = minCount)]
    pub fn min_count(&self) -> f64 {
        self.pool.min_count().map_or(-1.0, |c| c as f64)
    }

    /// Members and counts in pick order.
    pub fn counts(&self) -> RawBatch {
        let mut b = RawBatch::from_iter(self.pool.counts().map(|(m, _)| m));
        b.counts = self.pool.counts().map(|(_, c)| c as f64).collect();
        b
    }

    /// Removed members and their remembered counts, in byte order.
    pub fn removed(&self) -> RawBatch {
        let mut b = RawBatch::from_iter(self.pool.removed().map(|(m, _)| m));
        b.counts = self.pool.removed().map(|(_, c)| c as f64).collect();
        b
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// Whether the pool is empty.
    #[wasm_bindgen(js_name = isEmpty)]
    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }
}

/// Byte strings packed in one buffer, with end offsets and optional counts.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct RawBatch {
    data: Vec<u8>,
    ends: Vec<u32>,
    counts: Vec<f64>,
}

impl RawBatch {
    fn from_iter<'a>(items: impl Iterator<Item = &'a [u8]>) -> Self {
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

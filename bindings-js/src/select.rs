//! Raw least-used exports: the in-memory [`Pool`] model. (The script texts ship as
//! JavaScript: `core/examples/scripts.rs` writes core's `SCRIPTS` into the package.)
use alloc::vec::Vec;

use keyroute::error::ErrorCode;
use keyroute::select::{checked_initial, checked_picks, side_key, Pool, Restore};
use wasm_bindgen::prelude::*;

use crate::batch::RawBatch;
use crate::error::{unpack, JsError, Live};

/// The side key of a pool key (`keyroute::select::side_key`).
#[wasm_bindgen(js_name = rawSideKey)]
pub fn raw_side_key(pool_key: &[u8]) -> Result<Vec<u8>, JsError> {
    Ok(side_key(pool_key)?)
}

/// The in-memory pool model owned by Rust; members are bytes.
#[wasm_bindgen]
#[derive(Debug, Clone, Default)]
pub struct RawPool {
    pool: Pool,
    /// At least the length of the longest member (never lowered on remove): sizes the
    /// output of `pickMany` before it picks.
    longest: usize,
    /// Whether a member is not UTF-8: then the string picks (`pick()`, `pickMany()`) are
    /// refused before they pick, and the bytes picks serve.
    binary: bool,
    _live: Live,
}

fn is_text(member: &[u8]) -> bool {
    core::str::from_utf8(member).is_ok()
}

impl RawPool {
    /// Refuses a pick meant to return text when a member is not UTF-8 (nothing is picked).
    fn text_picks(&self, text: bool) -> Result<(), JsError> {
        if text && self.binary {
            return Err(JsError::new(
                ErrorCode::BadUtf8,
                "this pool holds a member that is not UTF-8 text, so a pick could not be \
                 returned as a string; nothing was picked: use pickBytes() / pickManyBytes()",
            ));
        }
        Ok(())
    }
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
        initial: i128,
        overwrite: bool,
    ) -> Result<usize, JsError> {
        let initial = checked_initial(initial)?;
        let members = unpack(data, ends)?;
        let longest = members.iter().map(|m| m.len()).max().unwrap_or(0);
        let binary = !members.iter().all(|m| is_text(m));
        let added = self.pool.seed(members, initial, overwrite)?;
        self.longest = self.longest.max(longest);
        self.binary |= binary;
        Ok(added)
    }

    /// Picks the least-used member and increments it; `undefined` when empty. With
    /// `text`, refuses (picking nothing) when a member is not UTF-8.
    pub fn pick(&mut self, text: bool) -> Result<Option<Vec<u8>>, JsError> {
        self.text_picks(text)?;
        Ok(self.pool.pick())
    }

    /// `n` picks, packed as one buffer. The count is checked (at most
    /// `MAX_PICKS_PER_CALL`), text picks refused when a member is not UTF-8, and the whole
    /// answer allocated before the first pick, so a refused call changes nothing.
    #[wasm_bindgen(js_name = pickManyPacked)]
    pub fn pick_many_packed(&mut self, n: i128, text: bool) -> Result<RawBatch, JsError> {
        let n = checked_picks(n)?;
        self.text_picks(text)?;
        let n = if self.pool.is_empty() { 0 } else { n };
        let mut b = RawBatch::default();
        let data = (n as u64).saturating_mul(self.longest as u64);
        let fits = u32::try_from(data).is_ok_and(|d| b.data.try_reserve_exact(d as usize).is_ok());
        if !fits || b.ends.try_reserve_exact(n).is_err() {
            return Err(JsError::new(
                ErrorCode::TooLarge,
                crate::error::text(format_args!(
                    "{n} picks of members up to {} bytes do not fit in the WebAssembly memory; \
                     pick fewer at a time",
                    self.longest
                )),
            ));
        }
        for _ in 0..n {
            if let Some(m) = self.pool.pick() {
                b.data.extend_from_slice(&m);
                b.ends.push(b.data.len() as u32);
            }
        }
        Ok(b)
    }

    /// Removes a member; its count, or `-1` when it was not in the pool.
    pub fn remove(&mut self, member: &[u8]) -> f64 {
        let count = self.pool.remove(member).map_or(-1.0, |c| c as f64);
        if self.binary && !is_text(member) {
            self.binary = self.pool.counts().any(|(m, _)| !is_text(m));
        }
        count
    }

    /// Restores a member (`keep` or `at_minimum`); its count afterwards.
    pub fn restore(&mut self, member: &[u8], mode: &str) -> Result<f64, JsError> {
        let mode: Restore = mode.parse()?;
        let count = self.pool.restore(member, mode)?;
        self.longest = self.longest.max(member.len());
        self.binary |= !is_text(member);
        Ok(count as f64)
    }

    /// `[count, remembered count]` of a member (`-1`: not in the pool, none remembered).
    pub fn status(&self, member: &[u8]) -> Vec<f64> {
        let f = |c: Option<u64>| c.map_or(-1.0, |c| c as f64);
        alloc::vec![
            f(self.pool.count(member)),
            f(self.pool.removed_count(member))
        ]
    }

    /// `[members, lowest count (-1 when empty)]`.
    pub fn stats(&self) -> Vec<f64> {
        let min = self.pool.min_count().map_or(-1.0, |c| c as f64);
        alloc::vec![self.pool.len() as f64, min]
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
}

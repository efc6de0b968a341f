//! [`RawKeys`]: the one buffer in wasm memory that the batch key calls (`getManyIndexes`,
//! `keySlots`, `ownersOfKeys`) read their keys from, and the single-key calls (`get`,
//! `keySlot`) their key. The JS glue writes the keys' bytes
//! and end offsets straight into it (`TextEncoder.encodeInto` on a view of the memory, or
//! a typed-array copy of keys given as bytes), the call writes one answer per key behind
//! the offsets, and the glue copies the answers out once: no allocation, copy in or copy
//! out per call as with `&[u8]`/`Vec` parameters. The buffer is reused across calls.
use alloc::vec::Vec;

use keyroute::error::ErrorCode;
use wasm_bindgen::prelude::*;

use crate::error::JsError;

/// Key bytes, then per key its end offset and its answer. Owned by the JS glue (one per
/// module; it replaces a large one by a new one after the call).
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct RawKeys {
    data: Vec<u8>,
    /// `words[..n]`: end offsets; `words[n..2n]`: answers.
    words: Vec<u32>,
}

/// Makes `v` hold at least `need` items, keeping them; `TOO_LARGE` when the memory cannot.
fn fit<T: Copy + Default>(v: &mut Vec<T>, need: usize) -> Result<(), JsError> {
    if v.len() < need {
        v.try_reserve(need - v.len()).map_err(|_| {
            JsError::new(
                ErrorCode::TooLarge,
                "these keys do not fit in the WebAssembly memory (4 GiB); split the batch",
            )
        })?;
        v.resize(need, T::default());
    }
    Ok(())
}

impl RawKeys {
    /// The first `n` keys of the first `len` bytes, their offsets checked, and the `n`
    /// answers to write.
    ///
    /// # Errors
    /// `OUT_OF_RANGE` when an offset decreases or runs past `len` (nothing is looked up).
    pub(crate) fn batch(
        &mut self,
        n: u32,
        len: u32,
    ) -> Result<(impl Iterator<Item = &[u8]>, &mut [u32]), JsError> {
        let (n, len) = (n as usize, len as usize);
        let bad = || {
            JsError::new(
                ErrorCode::OutOfRange,
                "end offsets must not decrease nor pass the end of the data",
            )
        };
        let (Some(data), Some(words)) = (self.data.get(..len), self.words.get_mut(..2 * n)) else {
            return Err(bad());
        };
        let (ends, out) = words.split_at_mut(n);
        let mut start = 0;
        for &end in ends.iter() {
            if end < start || end as usize > len {
                return Err(bad());
            }
            start = end;
        }
        let keys = Keys {
            data,
            ends: ends.iter(),
            start: 0,
        };
        Ok((keys, out))
    }
}

/// The keys of a checked batch, in order: a plain iterator whose `next` is inlined into
/// the lookup loop (the `Scan` adapter it replaces stayed a call per key in the
/// size-optimised .wasm: 8% of a native batch in a profile).
struct Keys<'a> {
    data: &'a [u8],
    ends: core::slice::Iter<'a, u32>,
    start: usize,
}

impl<'a> Iterator for Keys<'a> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let end = *self.ends.next()? as usize;
        let key = self.data.get(self.start..end).unwrap_or_default();
        self.start = end;
        Some(key)
    }
}

impl RawKeys {
    /// The first `len` bytes: the one key a single-key call's glue wrote; `None` when
    /// `len` passes the buffer.
    pub(crate) fn key(&self, len: u32) -> Option<&[u8]> {
        self.data.get(..len as usize)
    }
}

#[wasm_bindgen]
impl RawKeys {
    /// An empty buffer.
    #[wasm_bindgen(constructor)]
    pub fn new() -> RawKeys {
        RawKeys::default()
    }

    /// Makes room for `n` keys of `bytes` bytes in all, keeping what was written, and
    /// returns where the bytes go; [`RawKeys::words`] is where the end offsets go (then
    /// the answers). Both move when this grows the buffer.
    pub fn reserve(&mut self, n: u32, bytes: u32) -> Result<u32, JsError> {
        fit(&mut self.data, bytes as usize)?;
        fit(&mut self.words, 2 * n as usize)?;
        Ok(self.data.as_ptr() as u32)
    }

    /// Where the end offsets go: `n` of them, then `n` answers.
    pub fn words(&self) -> u32 {
        self.words.as_ptr() as u32
    }

    /// The WebAssembly memory the buffer is in.
    pub fn memory() -> JsValue {
        wasm_bindgen::memory()
    }
}

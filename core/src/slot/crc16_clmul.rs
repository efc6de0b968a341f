//! CRC-16/XMODEM by carry-less multiplication (x86_64: PCLMULQDQ, and VPCLMULQDQ with
//! AVX-512), for inputs long enough to pay for it; the table path of `crc16_table.rs` keeps short
//! inputs and finishes the last block and the tail.
//!
//! The method is the folding of Gopal et al., "Fast CRC computation for generic polynomials
//! using PCLMULQDQ" (Intel, 2009), in its non-reflected form: each 16-byte block, byte
//! swapped, is a polynomial of degree < 128 with its first bit at `x^127`. A block `X`
//! followed by `D` more bits of message is congruent (mod the CRC polynomial `P`) to
//! `X_hi * (x^(D+64) mod P) + X_lo * (x^D mod P)`, two carry-less products of at most 79
//! bits, so independent accumulators fold the input `D` bits ahead of themselves. What
//! is left is one 128-bit value congruent to the folded prefix: the table path hashes its
//! 16 bytes, then the tail, which gives the same CRC since only the residue mod `P`
//! matters. Every constant is computed at compile time from `P` (`xpow`).
//!
//! The instruction sets are detected at run time with `cpufeatures` (CPUID, no_std).

use core::arch::x86_64::{
    __m128i, __m512i, _mm512_broadcast_i32x4, _mm512_clmulepi64_epi128, _mm512_cmpeq_epi8_mask,
    _mm512_extracti32x4_epi32, _mm512_loadu_si512, _mm512_set1_epi8, _mm512_shuffle_epi8,
    _mm512_xor_si512, _mm512_zextsi128_si512, _mm_clmulepi64_si128, _mm_cmpeq_epi8,
    _mm_cvtsi128_si64, _mm_extract_epi64, _mm_loadu_si128, _mm_or_si128, _mm_set1_epi8,
    _mm_set_epi64x, _mm_set_epi8, _mm_setzero_si128, _mm_shuffle_epi8, _mm_testz_si128,
    _mm_xor_si128,
};

use super::crc16_table::{fold16, fold_tail};
use super::tag::find_byte;

cpufeatures::new!(pclmul_cpuid, "pclmulqdq", "ssse3", "sse4.1");
cpufeatures::new!(
    vpclmul_cpuid,
    "pclmulqdq",
    "ssse3",
    "sse4.1",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "vpclmulqdq"
);

/// Whether this CPU runs [`pclmul`].
pub(super) fn has_pclmul() -> bool {
    pclmul_cpuid::get()
}

/// Whether this CPU runs [`vpclmul`].
pub(super) fn has_vpclmul() -> bool {
    vpclmul_cpuid::get()
}

/// `x^n mod P` for the CRC polynomial `P = x^16 + x^12 + x^5 + 1`.
const fn xpow(n: u32) -> u64 {
    let mut r: u32 = 1;
    let mut i = 0;
    while i < n {
        r <<= 1;
        if r & 0x1_0000 != 0 {
            r ^= 0x1_1021;
        }
        i += 1;
    }
    r as u64
}

/// The folding constants for a distance of `D` bits: `x^(D+64) mod P` (high half) and
/// `x^D mod P` (low half).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
fn k<const D: u32>() -> __m128i {
    _mm_set_epi64x(const { xpow(D + 64) } as i64, const { xpow(D) } as i64)
}

/// `x` moved `D` bits further on (congruent mod `P`), by the constants `k`.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
fn shift(x: __m128i, k: __m128i) -> __m128i {
    _mm_xor_si128(
        _mm_clmulepi64_si128(x, k, 0x11),
        _mm_clmulepi64_si128(x, k, 0x00),
    )
}

/// The byte order swap of a 16-byte lane (first byte to the top).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
fn swap_mask() -> __m128i {
    _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
}

/// Loads 16 bytes at `p`, records whether one is `{` (when `SCAN`) and byte swaps them.
///
/// # Safety
/// `p..p + 16` is readable; the CPU has the target features.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
unsafe fn load<const SCAN: bool>(p: *const u8, seen: &mut __m128i) -> __m128i {
    // SAFETY: the caller's.
    let raw = unsafe { _mm_loadu_si128(p.cast()) };
    if SCAN {
        *seen = _mm_or_si128(*seen, _mm_cmpeq_epi8(raw, _mm_set1_epi8(b'{' as i8)));
    }
    _mm_shuffle_epi8(raw, swap_mask())
}

/// The register `crc` placed over the first two message bytes.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
fn initial(crc: u16) -> __m128i {
    _mm_set_epi64x((u64::from(crc) << 48) as i64, 0)
}

/// From `acc` (congruent to `data[..off]`): the remaining whole blocks one at a time, then
/// the table path for `acc`'s 16 bytes and the tail. `None` when `SCAN` and `seen` or the
/// rest holds a `{`.
///
/// # Safety
/// `off <= data.len()`; the CPU has the target features.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
#[inline]
unsafe fn finish<const SCAN: bool>(
    data: &[u8],
    mut off: usize,
    mut acc: __m128i,
    mut seen: __m128i,
) -> Option<u16> {
    let k128 = k::<128>();
    while data.len() - off >= 16 {
        // SAFETY: 16 bytes from `off` are in `data`.
        let b = unsafe { load::<SCAN>(data.as_ptr().add(off), &mut seen) };
        acc = _mm_xor_si128(shift(acc, k128), b);
        off += 16;
    }
    let tail = &data[off..];
    if SCAN && (_mm_testz_si128(seen, seen) == 0 || find_byte(tail, b'{').is_some()) {
        return None;
    }
    let hi = _mm_extract_epi64(acc, 1) as u64;
    let lo = _mm_cvtsi128_si64(acc) as u64;
    let block = ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes();
    Some(fold_tail(fold16(0, &block), tail))
}

/// CRC-16/XMODEM of `data` continuing from `crc`, by PCLMULQDQ: eight accumulators over
/// 128-byte strides. With `SCAN`, `None` as soon as a `{` is seen (the caller then applies
/// the hash tag rule).
///
/// # Safety
/// `data.len() >= 16`; the CPU has the target features ([`has_pclmul`]).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1")]
pub(super) unsafe fn pclmul<const SCAN: bool>(crc: u16, data: &[u8]) -> Option<u16> {
    debug_assert!(data.len() >= 16);
    let n = data.len();
    let p = data.as_ptr();
    let mut seen = _mm_setzero_si128();
    if n < 128 {
        // SAFETY: n >= 16.
        let first = unsafe { load::<SCAN>(p, &mut seen) };
        // SAFETY: 16 <= n.
        return unsafe { finish::<SCAN>(data, 16, _mm_xor_si128(first, initial(crc)), seen) };
    }
    let mut x = [_mm_setzero_si128(); 8];
    for (i, xi) in x.iter_mut().enumerate() {
        // SAFETY: n >= 128.
        *xi = unsafe { load::<SCAN>(p.add(16 * i), &mut seen) };
    }
    x[0] = _mm_xor_si128(x[0], initial(crc));
    let mut off = 128;
    let k1024 = k::<1024>();
    while n - off >= 128 {
        if SCAN && _mm_testz_si128(seen, seen) == 0 {
            return None;
        }
        for (i, xi) in x.iter_mut().enumerate() {
            // SAFETY: 128 bytes from `off` are in `data`.
            let b = unsafe { load::<SCAN>(p.add(off + 16 * i), &mut seen) };
            *xi = _mm_xor_si128(shift(*xi, k1024), b);
        }
        off += 128;
    }
    let mut acc = x[7];
    acc = _mm_xor_si128(acc, shift(x[0], k::<896>()));
    acc = _mm_xor_si128(acc, shift(x[1], k::<768>()));
    acc = _mm_xor_si128(acc, shift(x[2], k::<640>()));
    acc = _mm_xor_si128(acc, shift(x[3], k::<512>()));
    acc = _mm_xor_si128(acc, shift(x[4], k::<384>()));
    acc = _mm_xor_si128(acc, shift(x[5], k::<256>()));
    acc = _mm_xor_si128(acc, shift(x[6], k::<128>()));
    // SAFETY: off <= n.
    unsafe { finish::<SCAN>(data, off, acc, seen) }
}

/// The 64-byte counterpart of [`shift`]: four lanes at once.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,vpclmulqdq")]
#[inline]
fn shift512(x: __m512i, k: __m512i) -> __m512i {
    _mm512_xor_si512(
        _mm512_clmulepi64_epi128(x, k, 0x11),
        _mm512_clmulepi64_epi128(x, k, 0x00),
    )
}

/// [`k`] in each of the four lanes.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,vpclmulqdq")]
#[inline]
fn k512<const D: u32>() -> __m512i {
    _mm512_broadcast_i32x4(k::<D>())
}

/// Loads 64 bytes at `p`, records `{` (when `SCAN`), byte swaps each 16-byte lane.
///
/// # Safety
/// `p..p + 64` is readable; the CPU has the target features.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,vpclmulqdq")]
#[inline]
unsafe fn load512<const SCAN: bool>(p: *const u8, seen: &mut u64) -> __m512i {
    // SAFETY: the caller's.
    let raw = unsafe { _mm512_loadu_si512(p.cast()) };
    if SCAN {
        *seen |= _mm512_cmpeq_epi8_mask(raw, _mm512_set1_epi8(b'{' as i8));
    }
    _mm512_shuffle_epi8(raw, _mm512_broadcast_i32x4(swap_mask()))
}

/// CRC-16/XMODEM of `data` continuing from `crc`, by VPCLMULQDQ on 512-bit registers:
/// four accumulators of four lanes over 256-byte strides, then one register over 64-byte
/// strides, then [`finish`]. `SCAN` as for [`pclmul`].
///
/// # Safety
/// `data.len() >= 256`; the CPU has the target features ([`has_vpclmul`]).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,vpclmulqdq")]
pub(super) unsafe fn vpclmul<const SCAN: bool>(crc: u16, data: &[u8]) -> Option<u16> {
    debug_assert!(data.len() >= 256);
    let n = data.len();
    let p = data.as_ptr();
    let mut seen = 0u64;
    let mut z = [_mm512_zextsi128_si512(_mm_setzero_si128()); 4];
    for (i, zi) in z.iter_mut().enumerate() {
        // SAFETY: n >= 256.
        *zi = unsafe { load512::<SCAN>(p.add(64 * i), &mut seen) };
    }
    z[0] = _mm512_xor_si512(z[0], _mm512_zextsi128_si512(initial(crc)));
    let mut off = 256;
    let k2048 = k512::<2048>();
    while n - off >= 256 {
        if SCAN && seen != 0 {
            return None;
        }
        for (i, zi) in z.iter_mut().enumerate() {
            // SAFETY: 256 bytes from `off` are in `data`.
            let b = unsafe { load512::<SCAN>(p.add(off + 64 * i), &mut seen) };
            *zi = _mm512_xor_si512(shift512(*zi, k2048), b);
        }
        off += 256;
    }
    let mut acc = z[3];
    acc = _mm512_xor_si512(acc, shift512(z[0], k512::<1536>()));
    acc = _mm512_xor_si512(acc, shift512(z[1], k512::<1024>()));
    acc = _mm512_xor_si512(acc, shift512(z[2], k512::<512>()));
    let k512b = k512::<512>();
    while n - off >= 64 {
        // SAFETY: 64 bytes from `off` are in `data`.
        let b = unsafe { load512::<SCAN>(p.add(off), &mut seen) };
        acc = _mm512_xor_si512(shift512(acc, k512b), b);
        off += 64;
    }
    if SCAN && seen != 0 {
        return None;
    }
    let mut x = _mm512_extracti32x4_epi32(acc, 3);
    x = _mm_xor_si128(x, shift(_mm512_extracti32x4_epi32(acc, 0), k::<384>()));
    x = _mm_xor_si128(x, shift(_mm512_extracti32x4_epi32(acc, 1), k::<256>()));
    x = _mm_xor_si128(x, shift(_mm512_extracti32x4_epi32(acc, 2), k::<128>()));
    // SAFETY: off <= n.
    unsafe { finish::<SCAN>(data, off, x, _mm_setzero_si128()) }
}

/// `floor(x^80 / P)` without its top term `x^64`: the Barrett constant that reduces a
/// polynomial of degree < 80 mod `P` in two carry-less products.
const fn barrett_mu() -> u64 {
    // Long division of x^80 by P = x^16 + 0x1021, one quotient bit per step from x^64 down.
    let mut rem: u128 = 1 << 80;
    let mut q: u128 = 0;
    let mut bit = 64;
    loop {
        if rem & (1 << (bit + 16)) != 0 {
            rem ^= 0x1_1021 << bit;
            q |= 1 << bit;
        }
        if bit == 0 {
            break;
        }
        bit -= 1;
    }
    q as u64
}

/// Shuffle controls that place the first `a` bytes of a register right-aligned and byte
/// swapped (the key's first byte on top, its last at the bottom, zeros above): entry `a`
/// moves byte `i < a` to position `a - 1 - i`; the other positions get -1, which zeroes.
static RIGHT_ALIGN: [[i8; 16]; 17] = {
    let mut t = [[-1i8; 16]; 17];
    let mut a = 0;
    while a <= 16 {
        let mut j = 0;
        while j < a {
            t[a][j] = (a - 1 - j) as i8;
            j += 1;
        }
        a += 1;
    }
    t
};

/// The key's bytes in `head` (its first `a <= 16`, zeros above) as `X`, right-aligned and
/// byte swapped, then `X * x^16 mod P`: `X * x^16` folded below `x^80`, and a Barrett
/// reduction (`q = floor(r / P) = floor(floor(r / x^16) * mu / x^64)`, with mu's top term
/// `x^64` contributing `floor(r / x^16)` itself; `r mod P` is the low 16 bits of
/// `r + q * P`).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,avx512vl,vpclmulqdq")]
#[inline]
fn reduce(x: __m128i) -> u16 {
    use core::arch::x86_64::{_mm_cvtsi128_si32, _mm_srli_si128};
    let r = shift(x, k::<16>());
    let a16 = _mm_srli_si128(r, 2);
    let consts = _mm_set_epi64x(0x1021, const { barrett_mu() } as i64);
    let t = _mm_clmulepi64_si128(a16, consts, 0x00);
    let q = _mm_xor_si128(_mm_srli_si128(t, 8), a16);
    let qp = _mm_clmulepi64_si128(q, consts, 0x10);
    _mm_cvtsi128_si32(_mm_xor_si128(r, qp)) as u16
}

/// The first `a <= 16` bytes at `p` (a masked load: bytes past them are neither read nor
/// able to fault), right-aligned and byte swapped, and whether one is `{`.
///
/// # Safety
/// `a <= 16` and `p..p + a` is readable; the CPU has the target features.
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,avx512vl,vpclmulqdq")]
#[inline]
unsafe fn head(p: *const u8, a: usize) -> (__m128i, bool) {
    use core::arch::x86_64::{_mm_cmpeq_epi8_mask, _mm_maskz_loadu_epi8};
    // SAFETY: the mask selects the first `a` bytes, readable per the caller.
    let raw = unsafe { _mm_maskz_loadu_epi8(((1u32 << a) - 1) as u16, p.cast()) };
    let brace = _mm_cmpeq_epi8_mask(raw, _mm_set1_epi8(b'{' as i8)) != 0;
    // SAFETY: `a <= 16` indexes the table; 16 readable bytes per entry.
    let order = unsafe { _mm_loadu_si128(RIGHT_ALIGN.as_ptr().add(a).cast()) };
    (_mm_shuffle_epi8(raw, order), brace)
}

/// The longest key [`short_slot`] takes: two 16-byte blocks.
pub(super) const SHORT_MAX: usize = 32;

/// The slot of one key of at most [`SHORT_MAX`] bytes without a `{`, all in registers:
/// the key as one 128-bit value `X` (masked loads; two blocks fold into one first,
/// `X = first * x^128 + last`), then [`reduce`]. `None` when the key holds a `{` (the
/// caller applies the tag rule).
///
/// This is [`super::key_slots`]' path for short keys: about 30 instructions against the
/// table path's 70, with no dependency between keys, so a batch runs them side by side.
///
/// # Safety
/// `key.len() <= SHORT_MAX`; the CPU has the target features ([`has_vpclmul`]).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,avx512vl,vpclmulqdq")]
#[inline]
pub(super) unsafe fn short_slot(key: &[u8]) -> Option<u16> {
    use core::arch::x86_64::_mm_cmpeq_epi8_mask;
    debug_assert!(key.len() <= SHORT_MAX);
    let n = key.len();
    let p = key.as_ptr();
    if n <= 16 {
        // SAFETY: `n` bytes at `p`.
        let (x, brace) = unsafe { head(p, n) };
        return (!brace).then(|| reduce(x));
    }
    // SAFETY: the first `n - 16 < 16` bytes, then 16 bytes from `n - 16`, are in `key`.
    let ((first, brace), last) =
        unsafe { (head(p, n - 16), _mm_loadu_si128(p.add(n - 16).cast())) };
    if brace || _mm_cmpeq_epi8_mask(last, _mm_set1_epi8(b'{' as i8)) != 0 {
        return None;
    }
    let last = _mm_shuffle_epi8(last, swap_mask());
    Some(reduce(_mm_xor_si128(shift(first, k::<128>()), last)))
}

/// [`short_slot`] over a batch: `out[i]` = the slot of the `i`-th key (as far as both
/// go), the longer keys and those with a `{` by [`super::key_slot`].
///
/// # Safety
/// The CPU has the target features ([`has_vpclmul`]).
#[target_feature(enable = "pclmulqdq,ssse3,sse4.1,avx512f,avx512bw,avx512vl,vpclmulqdq")]
pub(super) unsafe fn short_slots<'a>(keys: impl Iterator<Item = &'a [u8]>, out: &mut [u16]) {
    for (o, k) in out.iter_mut().zip(keys) {
        let fast = if k.len() <= SHORT_MAX {
            // SAFETY: length checked; the features are the caller's promise.
            unsafe { short_slot(k) }
        } else {
            None
        };
        *o = match fast {
            Some(crc) => crc & (super::SLOT_COUNT - 1),
            None => super::key_slot(k),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrett_mu_times_p_is_x80_less_a_remainder() {
        // (x^64 + mu) * P = x^80 + (something of degree < 16).
        let mu = (1u128 << 64) | u128::from(barrett_mu());
        let mut prod: u128 = 0;
        for bit in 0..17 {
            if 0x1_1021u128 & (1 << bit) != 0 {
                prod ^= mu << bit;
            }
        }
        assert_eq!(prod >> 16, 1 << 64);
    }

    #[test]
    fn xpow_is_the_remainder() {
        assert_eq!(xpow(0), 1);
        assert_eq!(xpow(15), 0x8000);
        assert_eq!(xpow(16), 0x1021);
        // x^(a+b) = x^a * x^b mod P, checked through the bitwise CRC of a one-bit message:
        // the CRC of 0x80 followed by k zero bytes is x^(8k + 7 + 16) mod P.
        for k in 0..40u32 {
            let mut data = [0u8; 41];
            data[0] = 0x80;
            assert_eq!(
                u64::from(super::super::crc16_table::table_update(
                    0,
                    &data[..=k as usize]
                )),
                xpow(8 * k + 23)
            );
        }
    }
}

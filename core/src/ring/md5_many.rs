//! Many keys' MD5 at once, for the MD5 profiles' batch lookups ([`Ring::get_many_into`],
//! [`Ring::get_many_to_slice`]): 32 keys of up to 55 bytes (one MD5 block each) go
//! through AVX-512 together, 16 lanes per register and two registers interleaved, where
//! one MD5 is a chain of 64 dependent steps that leaves most of the core idle (AVX2: four
//! registers of 8 lanes). Longer keys, other CPUs and WebAssembly take the scalar path
//! (`md-5`).
//!
//! Only the first digest word is computed to the end: it is the key's point on the circle
//! (bytes 0..4 of the digest, little-endian, [`key_hash`](super::key_hash)).
//!
//! Why hand-written: the one multi-buffer MD5 crate (`md5-many`) is a 0.1 alpha; this is
//! the MD5 compression function over `core::arch` intrinsics, checked against `md-5` on
//! every key length 0..=300 (`core/tests/ring_md5_paths.rs`), and the ring vector suites
//! run once per path (`KEYROUTE_MD5=scalar|avx2`, mk/10-rust.mk).
//!
//! [`Ring::get_many_into`]: super::Ring::get_many_into
//! [`Ring::get_many_to_slice`]: super::Ring::get_many_to_slice

/// How the MD5 profiles hash keys in batches. With the `std` feature the environment
/// variable `KEYROUTE_MD5` (`scalar`, `avx2`, `avx512`) forces a path that this CPU runs, read
/// once on first use (tests run every suite once per path this way).
///
/// ```
/// use keyroute::ring::{md5_key_hashes_with, Md5Path, key_hash, PointHash};
///
/// let keys: Vec<Vec<u8>> = (0..40).map(|i| format!("user:{i}").into_bytes()).collect();
/// for path in Md5Path::ALL {
///     let mut out = [0u32; 40];
///     if md5_key_hashes_with(path, &keys, &mut out) {
///         for (k, h) in keys.iter().zip(out) {
///             assert_eq!(u64::from(h), key_hash(PointHash::Md5, k));
///         }
///     }
/// }
/// assert!(Md5Path::Scalar.available());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Md5Path {
    /// One key at a time (`md-5`); every target.
    Scalar,
    /// 32 keys at a time over AVX2 (x86_64: four registers of 8 lanes), keys up to 55
    /// bytes; longer ones scalar.
    Avx2,
    /// 32 keys at a time over AVX-512F (x86_64: two registers of 16 lanes), keys up to 55
    /// bytes; longer ones scalar.
    Avx512,
}

impl Md5Path {
    /// Every path, the scalar one first.
    pub const ALL: [Self; 3] = [Self::Scalar, Self::Avx2, Self::Avx512];

    /// Whether this CPU runs the path.
    #[must_use]
    pub fn available(self) -> bool {
        match self {
            Self::Scalar => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Self::Avx2 => simd::has_avx2(),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Self::Avx512 => simd::available(),
            #[cfg(not(all(target_arch = "x86_64", not(miri))))]
            Self::Avx2 | Self::Avx512 => false,
        }
    }

    /// The path batch lookups use: the fastest available, or the one `KEYROUTE_MD5`
    /// forces.
    #[must_use]
    pub fn selected() -> Self {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            simd::selected()
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        {
            Self::Scalar
        }
    }
}

/// The first four bytes of `MD5(key)` read little-endian (the MD5 profiles' key point),
/// for every key, by one given path; `false` (and `out` untouched) when this CPU lacks the
/// path. Writes `min(keys.len(), out.len())` hashes. For tests and benchmarks: batch
/// lookups pick the path themselves ([`Md5Path::selected`]).
pub fn md5_key_hashes_with<K: AsRef<[u8]>>(path: Md5Path, keys: &[K], out: &mut [u32]) -> bool {
    if !path.available() {
        return false;
    }
    match path {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Md5Path::Avx2 | Md5Path::Avx512 => {
            for (keys, out) in keys.chunks(LANES).zip(out.chunks_mut(LANES)) {
                let mut batch = Batch::new();
                for (i, (k, o)) in keys.iter().zip(out.iter_mut()).enumerate() {
                    if !batch.push(i, k.as_ref()) {
                        *o = scalar(k.as_ref());
                    }
                }
                batch.finish_by(path, |i, h| out[i] = h);
            }
        }
        _ => {
            for (k, o) in keys.iter().zip(out.iter_mut()) {
                *o = scalar(k.as_ref());
            }
        }
    }
    true
}

/// The key point of one key by `md-5`.
#[inline]
pub(crate) fn scalar(key: &[u8]) -> u32 {
    super::hash::ketama_point(&super::hash::md5(key), 0)
}

/// Keys per batch: two registers of 16 lanes.
pub(crate) const LANES: usize = 32;
/// The longest key that fits one MD5 block with its padding.
const MAX_ONE_BLOCK: usize = 55;

/// Up to [`LANES`] keys' padded blocks, stored word by word (`words[j][lane]`), so that
/// word `j` of 16 lanes is one load.
#[derive(Debug)]
pub(crate) struct Batch {
    words: [[u32; LANES]; 16],
    /// `at[lane]`: the caller's position of the key in that lane.
    at: [u8; LANES],
    len: usize,
}

impl Batch {
    #[inline]
    pub(crate) fn new() -> Self {
        Batch {
            words: [[0; LANES]; 16],
            at: [0; LANES],
            len: 0,
        }
    }

    /// Takes `key` (the caller's position `at < 256`) into the next lane; `false` when it
    /// does not fit one block (the caller hashes it by [`scalar`]) or the batch is full.
    #[inline]
    pub(crate) fn push(&mut self, at: usize, key: &[u8]) -> bool {
        if key.len() > MAX_ONE_BLOCK || self.len == LANES {
            return false;
        }
        let mut block = [0u8; 64];
        block[..key.len()].copy_from_slice(key);
        block[key.len()] = 0x80;
        block[56..].copy_from_slice(&((key.len() as u64) * 8).to_le_bytes());
        let lane = self.len;
        for (j, w) in block.chunks_exact(4).enumerate() {
            self.words[j][lane] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
        self.at[lane] = at as u8;
        self.len += 1;
        true
    }

    /// Hashes the batch by the [selected](Md5Path::selected) path and calls
    /// `put(position, hash)` for each key taken.
    #[inline]
    pub(crate) fn finish(&self, put: impl FnMut(usize, u32)) {
        self.finish_by(Md5Path::selected(), put);
    }

    /// As [`finish`](Self::finish) by `path` (available). Few keys are hashed one by one
    /// (the SIMD pass costs the same for 1 key as for 32).
    #[inline]
    pub(crate) fn finish_by(&self, path: Md5Path, mut put: impl FnMut(usize, u32)) {
        if self.len == 0 {
            return;
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        let _ = path; // only the scalar path here
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.len > 2 && path != Md5Path::Scalar && path.available() {
            let a = match path {
                // SAFETY: AVX2 is available (checked just above).
                Md5Path::Avx2 => unsafe { simd::first_words_avx2(&self.words) },
                // SAFETY: AVX-512F is available (checked just above).
                _ => unsafe { simd::first_words(&self.words) },
            };
            for (&at, &a) in self.at[..self.len].iter().zip(&a) {
                put(usize::from(at), a);
            }
            return;
        }
        for lane in 0..self.len {
            let mut block = [0u8; 64];
            for (j, w) in block.chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&self.words[j][lane].to_le_bytes());
            }
            let len = (u64::from_le_bytes([
                block[56], block[57], block[58], block[59], block[60], block[61], block[62],
                block[63],
            ]) / 8) as usize;
            put(usize::from(self.at[lane]), scalar(&block[..len]));
        }
    }
}

impl Batch {
    /// The whole MD5 of each key taken, as its four little-endian words (a digest's bytes
    /// `4w..4w + 4` are word `w`), by `put(position, words)`: over AVX-512 where the
    /// [selected](Md5Path::selected) path is it, else one key at a time (`md-5`). The
    /// MD5 profiles' builds hash their points this way: twemproxy ketama with 200k
    /// servers (8M digests), a build on 2 cores (`bench/benches/config.rs`, medians): 1.34 s
    /// by `md-5`, 0.99 s so.
    #[cfg(any(feature = "fleet", test))]
    pub(crate) fn finish_digests(&self, mut put: impl FnMut(usize, [u32; 4])) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.len > 2 && Md5Path::selected() == Md5Path::Avx512 {
            // SAFETY: AVX-512F is available (the selected path).
            let d = unsafe { simd::digest_words(&self.words) };
            for (lane, &at) in self.at[..self.len].iter().enumerate() {
                put(
                    usize::from(at),
                    [d[0][lane], d[1][lane], d[2][lane], d[3][lane]],
                );
            }
            return;
        }
        for lane in 0..self.len {
            let mut block = [0u8; 64];
            for (j, w) in block.chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&self.words[j][lane].to_le_bytes());
            }
            let len = (u64::from_le_bytes([
                block[56], block[57], block[58], block[59], block[60], block[61], block[62],
                block[63],
            ]) / 8) as usize;
            let d = super::hash::md5(&block[..len]);
            let w =
                |i: usize| u32::from_le_bytes([d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]]);
            put(usize::from(self.at[lane]), [w(0), w(1), w(2), w(3)]);
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) mod simd {
    use core::arch::x86_64::{
        __m512i, _mm512_add_epi32, _mm512_loadu_si512, _mm512_rolv_epi32, _mm512_set1_epi32,
        _mm512_storeu_si512, _mm512_ternarylogic_epi32,
    };
    use core::sync::atomic::{AtomicU8, Ordering};

    use super::{Md5Path, LANES};

    cpufeatures::new!(avx512f_cpuid, "avx512f");
    cpufeatures::new!(avx2_cpuid, "avx2");

    #[inline]
    pub(crate) fn available() -> bool {
        avx512f_cpuid::get()
    }

    #[inline]
    pub(crate) fn has_avx2() -> bool {
        avx2_cpuid::get()
    }

    /// 0: not yet decided; 1 scalar; 2 AVX-512.
    static SELECTED: AtomicU8 = AtomicU8::new(0);

    #[inline]
    pub(crate) fn selected() -> Md5Path {
        match SELECTED.load(Ordering::Relaxed) {
            0 => decide(),
            2 => Md5Path::Avx512,
            3 => Md5Path::Avx2,
            _ => Md5Path::Scalar,
        }
    }

    #[cold]
    #[inline(never)]
    fn decide() -> Md5Path {
        let detected = if available() {
            Md5Path::Avx512
        } else if has_avx2() {
            Md5Path::Avx2
        } else {
            Md5Path::Scalar
        };
        let path = forced().filter(|p| p.available()).unwrap_or(detected);
        SELECTED.store(
            match path {
                Md5Path::Avx512 => 2,
                Md5Path::Avx2 => 3,
                Md5Path::Scalar => 1,
            },
            Ordering::Relaxed,
        );
        path
    }

    /// The path `KEYROUTE_MD5` names, if any (`std` only).
    #[cfg(feature = "std")]
    fn forced() -> Option<Md5Path> {
        match std::env::var_os("KEYROUTE_MD5")?.to_str()? {
            "scalar" => Some(Md5Path::Scalar),
            "avx2" => Some(Md5Path::Avx2),
            "avx512" => Some(Md5Path::Avx512),
            _ => None,
        }
    }

    #[cfg(not(feature = "std"))]
    fn forced() -> Option<Md5Path> {
        None
    }

    /// MD5's sine table (RFC 1321, 3.4).
    const K: [u32; 64] = [
        0xd76a_a478,
        0xe8c7_b756,
        0x2420_70db,
        0xc1bd_ceee,
        0xf57c_0faf,
        0x4787_c62a,
        0xa830_4613,
        0xfd46_9501,
        0x6980_98d8,
        0x8b44_f7af,
        0xffff_5bb1,
        0x895c_d7be,
        0x6b90_1122,
        0xfd98_7193,
        0xa679_438e,
        0x49b4_0821,
        0xf61e_2562,
        0xc040_b340,
        0x265e_5a51,
        0xe9b6_c7aa,
        0xd62f_105d,
        0x0244_1453,
        0xd8a1_e681,
        0xe7d3_fbc8,
        0x21e1_cde6,
        0xc337_07d6,
        0xf4d5_0d87,
        0x455a_14ed,
        0xa9e3_e905,
        0xfcef_a3f8,
        0x676f_02d9,
        0x8d2a_4c8a,
        0xfffa_3942,
        0x8771_f681,
        0x6d9d_6122,
        0xfde5_380c,
        0xa4be_ea44,
        0x4bde_cfa9,
        0xf6bb_4b60,
        0xbebf_bc70,
        0x289b_7ec6,
        0xeaa1_27fa,
        0xd4ef_3085,
        0x0488_1d05,
        0xd9d4_d039,
        0xe6db_99e5,
        0x1fa2_7cf8,
        0xc4ac_5665,
        0xf429_2244,
        0x432a_ff97,
        0xab94_23a7,
        0xfc93_a039,
        0x655b_59c3,
        0x8f0c_cc92,
        0xffef_f47d,
        0x8584_5dd1,
        0x6fa8_7e4f,
        0xfe2c_e6e0,
        0xa301_4314,
        0x4e08_11a1,
        0xf753_7e82,
        0xbd3a_f235,
        0x2ad7_d2bb,
        0xeb86_d391,
    ];
    /// Rotation of each step.
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    /// Initial state A, B, C, D.
    const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

    /// The message word step `i` reads.
    const fn word(i: usize) -> usize {
        match i / 16 {
            0 => i,
            1 => (5 * i + 1) % 16,
            2 => (3 * i + 5) % 16,
            _ => (7 * i) % 16,
        }
    }

    /// The state (A, B, C, D) after the 64 steps, before the initial values are added
    /// back, of the [`LANES`] one-block messages in `words` (`words[j][lane]`: word `j`
    /// of that lane's padded block), as two registers of 16 lanes each.
    ///
    /// Round functions as `VPTERNLOGD` truth tables over (x, y, z): F = x ? y : z (0xCA),
    /// G = z ? x : y (0xCA over (z, x, y)), H = x ^ y ^ z (0x96), I = y ^ (x | !z) (0x39).
    #[target_feature(enable = "avx512f")]
    fn rounds(words: &[[u32; LANES]; 16]) -> [[__m512i; 4]; 2] {
        // SAFETY (every load below): `words[j]` is LANES = 32 u32s, read as two unaligned
        // 64-byte halves.
        let load = |j: usize, half: usize| unsafe {
            _mm512_loadu_si512(words[j].as_ptr().add(16 * half).cast())
        };
        let mut m = [[_mm512_set1_epi32(0); 16]; 2];
        for (half, m) in m.iter_mut().enumerate() {
            for (j, w) in m.iter_mut().enumerate() {
                *w = load(j, half);
            }
        }
        let init = INIT.map(|v| _mm512_set1_epi32(v as i32));
        let mut st = [init; 2];
        for i in 0..64 {
            let k = _mm512_set1_epi32(K[i] as i32);
            let s = _mm512_set1_epi32(S[i] as i32);
            let g = word(i);
            for (h, [a, b, c, d]) in st.iter_mut().enumerate() {
                let f: __m512i = match i / 16 {
                    0 => _mm512_ternarylogic_epi32::<0xCA>(*b, *c, *d),
                    1 => _mm512_ternarylogic_epi32::<0xCA>(*d, *b, *c),
                    2 => _mm512_ternarylogic_epi32::<0x96>(*b, *c, *d),
                    _ => _mm512_ternarylogic_epi32::<0x39>(*b, *c, *d),
                };
                let t = _mm512_add_epi32(_mm512_add_epi32(*a, f), _mm512_add_epi32(k, m[h][g]));
                let t = _mm512_add_epi32(*b, _mm512_rolv_epi32(t, s));
                // (a, b, c, d) <- (d, t, b, c)
                *a = *d;
                *d = *c;
                *c = *b;
                *b = t;
            }
        }
        st
    }

    /// The first digest word (A + its initial value) of the [`LANES`] one-block messages
    /// in `words` (see [`rounds`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) fn first_words(words: &[[u32; LANES]; 16]) -> [u32; LANES] {
        let st = rounds(words);
        let a0 = _mm512_set1_epi32(INIT[0] as i32);
        let mut out = [0u32; LANES];
        for (half, [a, ..]) in st.iter().enumerate() {
            let a = _mm512_add_epi32(*a, a0);
            // SAFETY: `out` is LANES = 32 u32s, written as two unaligned 64-byte halves.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(16 * half).cast(), a) };
        }
        out
    }

    /// The whole digest, as its four little-endian words (`out[w][lane]`), of the
    /// [`LANES`] one-block messages in `words` (see [`rounds`]). Only `finish_digests`
    /// (the fleet's builds) asks for it.
    #[cfg(any(feature = "fleet", test))]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn digest_words(words: &[[u32; LANES]; 16]) -> [[u32; LANES]; 4] {
        let st = rounds(words);
        let mut out = [[0u32; LANES]; 4];
        for (half, regs) in st.iter().enumerate() {
            for (w, reg) in regs.iter().enumerate() {
                let v = _mm512_add_epi32(*reg, _mm512_set1_epi32(INIT[w] as i32));
                // SAFETY: `out[w]` is LANES = 32 u32s, written as two unaligned 64-byte
                // halves.
                unsafe { _mm512_storeu_si512(out[w].as_mut_ptr().add(16 * half).cast(), v) };
            }
        }
        out
    }

    /// [`first_words`] over AVX2: four registers of 8 lanes, the round functions from
    /// and/or/xor (F = z ^ (x & (y ^ z)), G = y ^ (z & (x ^ y)), H = x ^ y ^ z,
    /// I = y ^ (x | !z)) and the rotations from two shifts.
    #[target_feature(enable = "avx2")]
    pub(crate) fn first_words_avx2(words: &[[u32; LANES]; 16]) -> [u32; LANES] {
        use core::arch::x86_64::{
            __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_loadu_si256, _mm256_or_si256,
            _mm256_set1_epi32, _mm256_sll_epi32, _mm256_srl_epi32, _mm256_storeu_si256,
            _mm256_xor_si256, _mm_cvtsi32_si128,
        };
        const Q: usize = LANES / 8;
        // SAFETY (every load/store below): `words[j]` and `out` are LANES = 32 u32s, read
        // or written as four unaligned 32-byte quarters.
        let load =
            |j: usize, q: usize| unsafe { _mm256_loadu_si256(words[j].as_ptr().add(8 * q).cast()) };
        let mut m = [[_mm256_set1_epi32(0); 16]; Q];
        for (q, m) in m.iter_mut().enumerate() {
            for (j, w) in m.iter_mut().enumerate() {
                *w = load(j, q);
            }
        }
        let ones = _mm256_set1_epi32(-1);
        let init = INIT.map(|v| _mm256_set1_epi32(v as i32));
        let mut st = [init; Q];
        for i in 0..64 {
            let k = _mm256_set1_epi32(K[i] as i32);
            let left = _mm_cvtsi32_si128(S[i] as i32);
            let right = _mm_cvtsi32_si128(32 - S[i] as i32);
            let g = word(i);
            for (q, [a, b, c, d]) in st.iter_mut().enumerate() {
                let f: __m256i = match i / 16 {
                    0 => _mm256_xor_si256(*d, _mm256_and_si256(*b, _mm256_xor_si256(*c, *d))),
                    1 => _mm256_xor_si256(*c, _mm256_and_si256(*d, _mm256_xor_si256(*b, *c))),
                    2 => _mm256_xor_si256(_mm256_xor_si256(*b, *c), *d),
                    _ => _mm256_xor_si256(*c, _mm256_or_si256(*b, _mm256_xor_si256(*d, ones))),
                };
                let t = _mm256_add_epi32(_mm256_add_epi32(*a, f), _mm256_add_epi32(k, m[q][g]));
                let t = _mm256_or_si256(_mm256_sll_epi32(t, left), _mm256_srl_epi32(t, right));
                let t = _mm256_add_epi32(*b, t);
                *a = *d;
                *d = *c;
                *c = *b;
                *b = t;
            }
        }
        let mut out = [0u32; LANES];
        for (q, [a, ..]) in st.iter().enumerate() {
            let a = _mm256_add_epi32(*a, init[0]);
            // SAFETY: see above.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(8 * q).cast(), a) };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Whole digests by a batch (SIMD where this CPU has AVX-512, and one by one for a
    /// batch of one or two) equal `md-5`'s, for every key length one block holds.
    #[test]
    fn batch_digests_equal_md5() {
        let keys: Vec<Vec<u8>> = (0..=MAX_ONE_BLOCK)
            .map(|len| (0..len).map(|i| (i * 7 + len) as u8).collect())
            .collect();
        for group in keys.chunks(LANES).chain(keys.chunks(2)) {
            let mut batch = Batch::new();
            for (i, k) in group.iter().enumerate() {
                assert!(batch.push(i, k));
            }
            let mut seen = 0;
            batch.finish_digests(|i, words| {
                let d = super::super::hash::md5(&group[i]);
                let want = [0, 1, 2, 3].map(|w| {
                    u32::from_le_bytes([d[4 * w], d[4 * w + 1], d[4 * w + 2], d[4 * w + 3]])
                });
                assert_eq!(words, want, "key of {} bytes", group[i].len());
                seen += 1;
            });
            assert_eq!(seen, group.len());
        }
    }
}

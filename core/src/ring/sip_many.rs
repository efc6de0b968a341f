//! A node's native points, many at once. The native profile's points of a node are the
//! SipHash-1-3 of `server-0`, `server-1`, … `server-(n-1)`: one prefix and a short
//! decimal suffix. [`Prefix`] absorbs the prefix's whole 8-byte blocks once; each point
//! then costs at most two compressions and the finalization, with its block words made
//! directly from the prefix's last bytes and the suffix's digits (no streaming hasher,
//! no byte buffer). On x86_64 with AVX-512F eight points go through one register (eight
//! lanes of 64 bits, a rotate one instruction); other CPUs, WebAssembly and Miri take
//! the scalar [`Prefix::point`], as does any build with `KEYROUTE_SIP=scalar` set.
//!
//! Why hand-written: the `siphasher` crate hashes one message at a time through its
//! streaming `Hasher`, whose byte-tail handling was half of a native 1000 x 160 build
//! (`perf`: `Ring::rebuild` 48 % of the build, almost all of it in the hasher's
//! `write`/`finish`). The scalar function here is the reference's algorithm word for
//! word, and both paths are checked against `siphasher` for every prefix length 0..=40
//! and suffixes across every digit-count boundary (tests below).

use super::hash::{sip_compress, sip_finish, sip_start};

/// The SipHash-1-3 state of a point prefix (`server-`) after its whole 8-byte blocks: the
/// last `ntail` (< 8) bytes are kept as a little-endian word, waiting for the suffix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prefix {
    v: [u64; 4],
    tail: u64,
    ntail: u32,
    len: u64,
}

/// The most digits a suffix word holds (a node has fewer than 10^8 digests: `MAX_POINTS`).
pub(crate) const MAX_DIGITS: u32 = 8;

impl Prefix {
    /// Absorbs `prefix`'s whole blocks.
    pub(crate) fn new(prefix: &[u8]) -> Prefix {
        let mut v = sip_start();
        let mut blocks = prefix.chunks_exact(8);
        for b in &mut blocks {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            sip_compress(&mut v, u64::from_le_bytes(w));
        }
        let rest = blocks.remainder();
        let mut t = [0u8; 8];
        t[..rest.len()].copy_from_slice(rest);
        Prefix {
            v,
            tail: u64::from_le_bytes(t),
            ntail: rest.len() as u32,
            len: prefix.len() as u64,
        }
    }

    /// The point of the prefix followed by `nd` (1..=[`MAX_DIGITS`]) suffix bytes given
    /// as the little-endian word `dw` (its first byte lowest).
    #[inline(always)]
    pub(crate) fn point(&self, dw: u64, nd: u32) -> u64 {
        debug_assert!((1..=MAX_DIGITS).contains(&nd));
        let mut v = self.v;
        let s = 8 * self.ntail;
        let mut w = self.tail | (dw << s);
        if self.ntail + nd >= 8 {
            // One whole block, then what the suffix has left past it.
            sip_compress(&mut v, w);
            w = if s == 0 { 0 } else { dw >> (64 - s) };
        }
        sip_finish(v, ((self.len + u64::from(nd)) << 56) | w)
    }
}

/// The decimal suffixes 0, 1, 2, … as words for [`Prefix::point`]: eight ASCII digits in
/// one little-endian word, the number right-aligned (its last digit in the top byte,
/// `'0'` to the left), counted up in place: nine times in ten one addition.
#[derive(Debug, Clone)]
pub(crate) struct Counter {
    full: u64,
    nd: u32,
}

impl Counter {
    /// The counter at 0.
    pub(crate) fn new() -> Counter {
        Counter {
            full: u64::from_le_bytes(*b"00000000"),
            nd: 1,
        }
    }

    /// The current number as (word, digit count).
    #[inline(always)]
    pub(crate) fn word(&self) -> (u64, u32) {
        (self.full >> (8 * (MAX_DIGITS - self.nd)), self.nd)
    }

    /// Counts one up; `false` past 99,999,999 (the counter then stays there).
    #[inline(always)]
    pub(crate) fn increment(&mut self) -> bool {
        if (self.full >> 56) as u8 != b'9' {
            self.full += 1 << 56;
            return true;
        }
        self.carry()
    }

    /// [`increment`](Self::increment) when the last digit is 9.
    #[cold]
    fn carry(&mut self) -> bool {
        let mut digits = self.full.to_le_bytes();
        let mut i = digits.len();
        loop {
            i -= 1;
            if digits[i] != b'9' {
                digits[i] += 1;
                self.nd = self.nd.max((digits.len() - i) as u32);
                self.full = u64::from_le_bytes(digits);
                return true;
            }
            if i == 0 {
                return false;
            }
            digits[i] = b'0';
        }
    }

    /// The next eight words into `words` (the counter moves on by eight), and their digit
    /// count when all eight share it (`None` where it grows among them).
    #[cfg(any(test, all(target_arch = "x86_64", not(miri))))]
    fn next8(&mut self, words: &mut [u64; 8]) -> Option<u32> {
        let (_, nd) = self.word();
        let mut same = true;
        for w in words.iter_mut() {
            let (dw, n) = self.word();
            *w = dw;
            same &= n == nd;
            self.increment();
        }
        same.then_some(nd)
    }

    /// A counter at `n` (at most 99,999,999).
    #[cfg(any(test, all(target_arch = "x86_64", not(miri))))]
    fn at(n: u64) -> Counter {
        let mut digits = *b"00000000";
        let mut v = n;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 || i == 0 {
                break;
            }
        }
        Counter {
            full: u64::from_le_bytes(digits),
            nd: (digits.len() - i) as u32,
        }
    }
}

/// Calls `push(point)` for the points `prefix ++ "0"` … `prefix ++ (count - 1)`, in order.
/// `count` must be at most 10^8.
pub(crate) fn points(prefix: &[u8], count: u64, mut push: impl FnMut(u64)) {
    debug_assert!(count <= 100_000_000);
    let p = Prefix::new(prefix);
    let mut c = Counter::new();
    let mut done = 0u64;
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if simd::available() {
        let mut words = [0u64; 8];
        let mut out = [0u64; 8];
        while count - done >= 8 {
            if let Some(nd) = c.next8(&mut words) {
                // SAFETY: AVX-512F is available (checked above).
                unsafe { simd::points8(&p, &words, nd, &mut out) };
            } else {
                // The digit count grows inside these eight: one at a time.
                let mut k = Counter::at(done);
                for o in out.iter_mut() {
                    let (dw, n) = k.word();
                    *o = p.point(dw, n);
                    k.increment();
                }
            }
            for &pt in &out {
                push(pt);
            }
            done += 8;
        }
    }
    while done < count {
        let (dw, nd) = c.word();
        push(p.point(dw, nd));
        c.increment();
        done += 1;
    }
}

/// Eight points per AVX-512 register (x86_64).
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) mod simd {
    use core::arch::x86_64::{
        __m512i, _mm512_add_epi64, _mm512_loadu_si512, _mm512_or_si512, _mm512_rol_epi64,
        _mm512_set1_epi64, _mm512_sllv_epi64, _mm512_srlv_epi64, _mm512_storeu_si512,
        _mm512_xor_si512,
    };

    use super::Prefix;

    use core::sync::atomic::{AtomicU8, Ordering};

    cpufeatures::new!(avx512f_cpuid, "avx512f");

    /// 0: not yet decided; 1 scalar; 2 AVX-512.
    static SELECTED: AtomicU8 = AtomicU8::new(0);

    /// Whether builds use [`points8`]: this CPU has AVX-512F and `KEYROUTE_SIP=scalar` does
    /// not force the scalar path (read once, on first use; `std` only: the ring suites run
    /// once more that way, mk/10-rust.mk).
    #[inline]
    pub(crate) fn available() -> bool {
        match SELECTED.load(Ordering::Relaxed) {
            0 => decide(),
            code => code == 2,
        }
    }

    #[cold]
    #[inline(never)]
    fn decide() -> bool {
        let simd = avx512f_cpuid::get() && !forced_scalar();
        SELECTED.store(if simd { 2 } else { 1 }, Ordering::Relaxed);
        simd
    }

    #[cfg(feature = "std")]
    fn forced_scalar() -> bool {
        std::env::var_os("KEYROUTE_SIP").is_some_and(|v| v == "scalar")
    }

    #[cfg(not(feature = "std"))]
    fn forced_scalar() -> bool {
        false
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn round(v: &mut [__m512i; 4]) {
        v[0] = _mm512_add_epi64(v[0], v[1]);
        v[1] = _mm512_xor_si512(_mm512_rol_epi64::<13>(v[1]), v[0]);
        v[0] = _mm512_rol_epi64::<32>(v[0]);
        v[2] = _mm512_add_epi64(v[2], v[3]);
        v[3] = _mm512_xor_si512(_mm512_rol_epi64::<16>(v[3]), v[2]);
        v[0] = _mm512_add_epi64(v[0], v[3]);
        v[3] = _mm512_xor_si512(_mm512_rol_epi64::<21>(v[3]), v[0]);
        v[2] = _mm512_add_epi64(v[2], v[1]);
        v[1] = _mm512_xor_si512(_mm512_rol_epi64::<17>(v[1]), v[2]);
        v[2] = _mm512_rol_epi64::<32>(v[2]);
    }

    /// [`Prefix::point`] for eight suffix words of `nd` digits each.
    ///
    /// # Safety
    /// The CPU has AVX-512F ([`available`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn points8(p: &Prefix, words: &[u64; 8], nd: u32, out: &mut [u64; 8]) {
        let set = |x: u64| _mm512_set1_epi64(x as i64);
        let mut v = [set(p.v[0]), set(p.v[1]), set(p.v[2]), set(p.v[3])];
        // SAFETY: 64 readable bytes.
        let dw = unsafe { _mm512_loadu_si512(words.as_ptr().cast()) };
        let s = u64::from(8 * p.ntail);
        let mut w = _mm512_or_si512(set(p.tail), _mm512_sllv_epi64(dw, set(s)));
        if p.ntail + nd >= 8 {
            v[3] = _mm512_xor_si512(v[3], w);
            round(&mut v);
            v[0] = _mm512_xor_si512(v[0], w);
            // A shift by 64 gives 0 here (the scalar path's `s == 0` case).
            w = _mm512_srlv_epi64(dw, set(64 - s));
        }
        let b = _mm512_or_si512(set((p.len + u64::from(nd)) << 56), w);
        v[3] = _mm512_xor_si512(v[3], b);
        round(&mut v);
        v[0] = _mm512_xor_si512(v[0], b);
        v[2] = _mm512_xor_si512(v[2], set(0xff));
        round(&mut v);
        round(&mut v);
        round(&mut v);
        let h = _mm512_xor_si512(_mm512_xor_si512(v[0], v[1]), _mm512_xor_si512(v[2], v[3]));
        // SAFETY: 64 writable bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
    }

    /// The native key hash (SipHash-1-3 under the native key: [`key_hash`]) of sixteen keys
    /// at once (two registers of eight lanes, whose rounds overlap), one per lane: `out[i]` = the hash of `keys[i]`. Each lane takes its key's
    /// 8-byte words by a masked gather (no byte past a key is read) and its last word
    /// (length and tail bytes) where its words end; a lane whose key has ended keeps its
    /// state (a masked blend) until the longest key of its eight is done. Batch lookups of native rings
    /// (`Ring::get_many*`) hash their keys here.
    ///
    /// [`key_hash`]: crate::ring::key_hash
    ///
    /// # Safety
    /// The CPU has AVX-512F ([`available`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn keys16(keys: &[&[u8]; 16], out: &mut [u64; 16]) {
        use core::arch::x86_64::{
            _mm512_cmpeq_epu64_mask, _mm512_cmplt_epu64_mask, _mm512_mask_blend_epi64,
            _mm512_mask_i64gather_epi64, _mm512_setzero_si512,
        };
        let set = |x: u64| _mm512_set1_epi64(x as i64);
        let s = crate::ring::hash::sip_start();
        let start = [set(s[0]), set(s[1]), set(s[2]), set(s[3])];
        let mut v = [start; 2];
        let mut full = [0u64; 16];
        let mut last = [0u64; 16];
        let mut addr = [0u64; 16];
        let mut most = 0;
        for (i, k) in keys.iter().enumerate() {
            full[i] = (k.len() / 8) as u64;
            last[i] = crate::ring::hash::sip_last_word(k);
            addr[i] = k.as_ptr() as u64;
            most = most.max(k.len() / 8);
        }
        // SAFETY: 64 readable bytes each (two halves of 16 words).
        let load =
            |w: &[u64; 16], g: usize| unsafe { _mm512_loadu_si512(w.as_ptr().add(8 * g).cast()) };
        let full = [load(&full, 0), load(&full, 1)];
        let last = [load(&last, 0), load(&last, 1)];
        let mut addr = [load(&addr, 0), load(&addr, 1)];
        let eight = set(8);
        for j in 0..=most as u64 {
            let at = set(j);
            for g in 0..2 {
                // Lanes with a whole word at 8j read it; the lanes at their last word take it.
                let whole = _mm512_cmplt_epu64_mask(at, full[g]);
                let ends = _mm512_cmpeq_epu64_mask(at, full[g]);
                // SAFETY: a lane is gathered only where its key has 8 bytes at `addr`
                // (absolute addresses, scale 1, base null); the others are not read.
                let words = unsafe {
                    _mm512_mask_i64gather_epi64::<1>(
                        _mm512_setzero_si512(),
                        whole,
                        addr[g],
                        core::ptr::null::<u8>().cast(),
                    )
                };
                let m = _mm512_mask_blend_epi64(ends, words, last[g]);
                let before = v[g];
                let v = &mut v[g];
                v[3] = _mm512_xor_si512(v[3], m);
                round(v);
                v[0] = _mm512_xor_si512(v[0], m);
                let live = whole | ends;
                if live != 0xff {
                    for (x, b) in v.iter_mut().zip(before) {
                        *x = _mm512_mask_blend_epi64(live, b, *x);
                    }
                }
                addr[g] = _mm512_add_epi64(addr[g], eight);
            }
        }
        for (g, v) in v.iter_mut().enumerate() {
            v[2] = _mm512_xor_si512(v[2], set(0xff));
            round(v);
            round(v);
            round(v);
            let h = _mm512_xor_si512(_mm512_xor_si512(v[0], v[1]), _mm512_xor_si512(v[2], v[3]));
            // SAFETY: 64 writable bytes from 8g.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(8 * g).cast(), h) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use core::hash::Hasher;

    fn reference(prefix: &[u8], k: u64) -> u64 {
        let mut h = super::super::hash::sip_hasher();
        h.write(prefix);
        h.write(alloc::format!("{k}").as_bytes());
        h.finish()
    }

    #[test]
    fn counter_counts_in_decimal() {
        let mut c = Counter::new();
        for k in 0..120_000u64 {
            let (dw, nd) = c.word();
            let s = alloc::format!("{k}");
            assert_eq!(nd as usize, s.len());
            let mut b = [0u8; 8];
            b[..s.len()].copy_from_slice(s.as_bytes());
            assert_eq!(dw, u64::from_le_bytes(b), "{k}");
            assert_eq!(Counter::at(k).word(), (dw, nd));
            assert!(c.increment());
        }
        let mut c = Counter::at(99_999_999);
        assert!(!c.increment());
        let mut c = Counter::at(9_999_999);
        assert!(c.increment());
        assert_eq!(c.word().1, 8);
    }

    #[test]
    fn every_prefix_length_and_digit_boundary_matches_siphasher() {
        let name: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=name.len() {
            let prefix = &name[..len];
            for count in [0u64, 1, 7, 8, 9, 10, 11, 17, 100, 161, 1005] {
                let mut got = Vec::new();
                points(prefix, count, |p| got.push(p));
                let want: Vec<u64> = (0..count).map(|k| reference(prefix, k)).collect();
                assert_eq!(got, want, "prefix length {len}, {count} points");
            }
            // Each digit count, scalar and (where the CPU has it) eight at a time.
            let p = Prefix::new(prefix);
            for start in [0u64, 3, 95, 9_995, 99_999_990, 12_345_678] {
                let mut c = Counter::at(start);
                for k in start..(start + 10).min(100_000_000) {
                    let (dw, nd) = c.word();
                    assert_eq!(p.point(dw, nd), reference(prefix, k), "{len} {k}");
                    c.increment();
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                if simd::available() && start + 8 <= 100_000_000 {
                    let mut words = [0u64; 8];
                    if let Some(nd) = Counter::at(start).next8(&mut words) {
                        let mut out = [0u64; 8];
                        // SAFETY: available (checked).
                        unsafe { simd::points8(&p, &words, nd, &mut out) };
                        for (j, o) in out.iter().enumerate() {
                            assert_eq!(*o, reference(prefix, start + j as u64), "{len}");
                        }
                    }
                }
            }
        }
    }

    /// Sixteen keys at once agree with siphasher for every key length 0..=300, with the
    /// lanes' lengths mixed (each lane ends at another word), and with every lane alike.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[test]
    fn sixteen_keys_at_once_match_siphasher_for_every_length() {
        if !simd::available() {
            return;
        }
        let data: Vec<u8> = (0..400u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let want = |k: &[u8]| {
            let mut h = super::super::hash::sip_hasher();
            h.write(k);
            h.finish()
        };
        for len in 0..=300usize {
            // Lane i: a key of length len + 3i (mod 301) from offset i, and all alike.
            let mixed: [&[u8]; 16] = core::array::from_fn(|i| &data[i..i + (len + 3 * i) % 301]);
            let same: [&[u8]; 16] = core::array::from_fn(|i| &data[i..i + len]);
            for keys in [mixed, same] {
                let mut out = [0u64; 16];
                // SAFETY: available (checked).
                unsafe { simd::keys16(&keys, &mut out) };
                for (k, o) in keys.iter().zip(out) {
                    assert_eq!(o, want(k), "key length {}", k.len());
                    assert_eq!(
                        o,
                        crate::ring::key_hash(crate::ring::PointHash::SipHash13, k)
                    );
                }
            }
        }
    }
}

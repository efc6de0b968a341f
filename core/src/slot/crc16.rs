//! CRC-16/XMODEM (poly `0x1021`, init `0`, no reflection, no final xor): the checksum
//! Redis Cluster hashes keys with.
//!
//! The implementation is table-driven "slice-by-16": sixteen 256-entry tables let one step
//! fold 16 input bytes with 16 independent table loads instead of a 16-long dependency
//! chain. Tails of 8 and 4 bytes use the same tables, so only the last 0–3 bytes go
//! through the classic one-byte step. The tables take 8 KiB.
//!
//! By default the tables are generated at compile time and stored in the binary, and the
//! folding steps are inlined into their callers. The `small-crc16` feature is for
//! size-minded builds such as the `.wasm` of the JavaScript package, where 8 KiB of
//! incompressible table data was a tenth of the download: the tables live in
//! zero-initialised memory instead and are filled on first use, once, in a few
//! microseconds (every later call pays one extra load and branch), and the folding steps
//! are kept out of line.

/// The CRC-16/XMODEM generator polynomial (x^16 + x^12 + x^5 + 1).
const POLY: u16 = 0x1021;

/// The classic byte-at-a-time table entry: the CRC of the byte `b` (from a zero register).
const fn byte_crc(b: u16) -> u16 {
    let mut crc = b << 8;
    let mut bit = 0;
    while bit < 8 {
        crc = if crc & 0x8000 != 0 {
            (crc << 1) ^ POLY
        } else {
            crc << 1
        };
        bit += 1;
    }
    crc
}

/// `TABLES[k][b]` is the CRC of the byte `b` followed by `k` zero bytes (from a zero
/// register). `TABLES[0]` is the classic byte-at-a-time table.
#[cfg(not(feature = "small-crc16"))]
mod tables {
    pub(super) type Tables = [[u16; 256]; 16];

    static TABLES: Tables = make_tables();

    const fn make_tables() -> Tables {
        let mut t = [[0u16; 256]; 16];
        let mut i = 0;
        while i < 256 {
            t[0][i] = super::byte_crc(i as u16);
            i += 1;
        }
        let mut k = 1;
        while k < 16 {
            let mut i = 0;
            while i < 256 {
                let prev = t[k - 1][i];
                t[k][i] = (prev << 8) ^ t[0][(prev >> 8) as usize];
                i += 1;
            }
            k += 1;
        }
        t
    }

    /// The tables.
    #[inline(always)]
    pub(super) fn get() -> &'static Tables {
        &TABLES
    }

    /// `TABLES[k][b]`.
    #[inline(always)]
    pub(super) fn at(t: &Tables, k: usize, b: u8) -> u16 {
        t[k][usize::from(b)]
    }
}

/// `TABLES[k][b]` as above, filled on first use (feature `small-crc16`): no table
/// bytes in the binary. Plain atomics keep this safe code; any number of threads may race
/// to fill them, since they all store the same values before publishing `READY`.
#[cfg(feature = "small-crc16")]
mod tables {
    use core::sync::atomic::{AtomicBool, AtomicU16, Ordering};

    pub(super) type Tables = [[AtomicU16; 256]; 16];

    static TABLES: Tables = [const { [const { AtomicU16::new(0) }; 256] }; 16];
    static READY: AtomicBool = AtomicBool::new(false);

    /// Fills the tables as `make_tables` does at compile time in the default build.
    #[cold]
    #[inline(never)]
    fn fill() {
        for (i, e) in TABLES[0].iter().enumerate() {
            e.store(super::byte_crc(i as u16), Ordering::Relaxed);
        }
        for pair in TABLES.windows(2) {
            for (prev, next) in pair[0].iter().zip(&pair[1]) {
                let p = prev.load(Ordering::Relaxed);
                let t0 = TABLES[0][usize::from(p >> 8)].load(Ordering::Relaxed);
                next.store((p << 8) ^ t0, Ordering::Relaxed);
            }
        }
        READY.store(true, Ordering::Release);
    }

    /// The tables, filled.
    #[inline(always)]
    pub(super) fn get() -> &'static Tables {
        if !READY.load(Ordering::Acquire) {
            fill();
        }
        &TABLES
    }

    /// `TABLES[k][b]`.
    #[inline(always)]
    pub(super) fn at(t: &Tables, k: usize, b: u8) -> u16 {
        t[k][usize::from(b)].load(Ordering::Relaxed)
    }
}

use tables::{at, Tables};

/// The CRC16 implementations: [`Crc16Path::selected`] is the one [`crc16_xmodem`] and
/// [`key_slot`](super::key_slot) use for inputs long enough
/// (`Crc16Path::min_len`); shorter inputs always take the table path.
///
/// On x86_64 the fastest path the CPU has is detected on first use (CPUID, also without
/// `std`). With the `std` feature the environment variable `KEYROUTE_CRC16` (`table`,
/// `pclmul` or `vpclmul`), read once on first use, forces one (a path the CPU lacks is
/// ignored): the test suites run once per path this way. Every path gives the same
/// checksum; [`crc16_xmodem_with`] runs one of them explicitly.
///
/// ```
/// use keyroute::slot::{crc16_xmodem, crc16_xmodem_with, Crc16Path};
///
/// let data = [7u8; 1024];
/// for path in Crc16Path::ALL {
///     if let Some(crc) = crc16_xmodem_with(path, 0, &data) {
///         assert!(path.available());
///         assert_eq!(crc, crc16_xmodem(&data));
///     }
/// }
/// assert!(Crc16Path::Table.available());
/// assert!(Crc16Path::selected().available());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Crc16Path {
    /// Slice-by-16 tables (every target; the only path off x86_64, e.g. in WebAssembly).
    Table,
    /// PCLMULQDQ folding over 128-bit registers (x86_64 with PCLMULQDQ, SSSE3, SSE4.1).
    Pclmul,
    /// VPCLMULQDQ folding over 512-bit registers (x86_64 with AVX-512F/BW and VPCLMULQDQ)
    /// from 256 bytes on (one 4 x 64-byte stride); shorter inputs from
    /// [`min_len`](Self::min_len) on fold as `Pclmul` does.
    Vpclmul,
}

impl Crc16Path {
    /// Every path, the table first.
    pub const ALL: [Self; 3] = [Self::Table, Self::Pclmul, Self::Vpclmul];

    /// Whether this CPU runs the path.
    #[must_use]
    pub fn available(self) -> bool {
        match self {
            Self::Table => true,
            #[cfg(target_arch = "x86_64")]
            Self::Pclmul => super::crc16_clmul::has_pclmul(),
            #[cfg(target_arch = "x86_64")]
            Self::Vpclmul => super::crc16_clmul::has_vpclmul(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The shortest input the path takes (shorter inputs take the table path).
    #[must_use]
    pub const fn min_len(self) -> usize {
        match self {
            Self::Table => 0,
            Self::Pclmul | Self::Vpclmul => clmul::PCLMUL_MIN,
        }
    }

    /// The path in use: the fastest available, or the one `KEYROUTE_CRC16` forces.
    #[must_use]
    pub fn selected() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            clmul::selected()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Self::Table
        }
    }
}

/// CRC-16/XMODEM of `data` continuing from `crc` by one given path (inputs shorter than
/// its [`min_len`](Crc16Path::min_len) by the table path, as in normal use); `None` when
/// this CPU lacks the path. For tests and benchmarks: [`crc16_xmodem_update`] picks the
/// path itself.
///
/// ```
/// use keyroute::slot::{crc16_xmodem_with, Crc16Path};
///
/// assert_eq!(crc16_xmodem_with(Crc16Path::Table, 0, b"123456789"), Some(0x31C3));
/// ```
#[must_use]
pub fn crc16_xmodem_with(path: Crc16Path, crc: u16, data: &[u8]) -> Option<u16> {
    if !path.available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if data.len() >= path.min_len() {
        if let Some(c) = clmul::run::<false>(path, crc, data) {
            return Some(c);
        }
    }
    Some(table_update(crc, data))
}

/// Dispatch to the carry-less paths (x86_64).
#[cfg(target_arch = "x86_64")]
pub(super) mod clmul {
    use core::sync::atomic::{AtomicU8, Ordering};

    use super::super::crc16_clmul::{has_pclmul, has_vpclmul, pclmul, vpclmul};
    use super::Crc16Path;

    /// The shortest input PCLMULQDQ folding is faster for (measured: `bench/benches/slot.rs`,
    /// `crc16_paths`).
    pub(crate) const PCLMUL_MIN: usize = 48;
    /// The shortest input VPCLMULQDQ folding is used for (one stride; measured faster than
    /// PCLMULQDQ from there).
    pub(crate) const VPCLMUL_MIN: usize = 256;

    /// 0: not yet decided; else 1 + the index of the path in `Crc16Path::ALL`.
    static SELECTED: AtomicU8 = AtomicU8::new(0);

    #[inline]
    pub(crate) fn selected() -> Crc16Path {
        match SELECTED.load(Ordering::Relaxed) {
            0 => decide(),
            2 => Crc16Path::Pclmul,
            3 => Crc16Path::Vpclmul,
            _ => Crc16Path::Table,
        }
    }

    #[cold]
    #[inline(never)]
    fn decide() -> Crc16Path {
        let detected = if has_vpclmul() {
            Crc16Path::Vpclmul
        } else if has_pclmul() {
            Crc16Path::Pclmul
        } else {
            Crc16Path::Table
        };
        let path = forced().filter(|f| f.available()).unwrap_or(detected);
        let code = match path {
            Crc16Path::Table => 1,
            Crc16Path::Pclmul => 2,
            Crc16Path::Vpclmul => 3,
        };
        SELECTED.store(code, Ordering::Relaxed);
        path
    }

    /// The path `KEYROUTE_CRC16` names, if any (read once, on first use; `std` only).
    #[cfg(feature = "std")]
    fn forced() -> Option<Crc16Path> {
        match std::env::var_os("KEYROUTE_CRC16")?.to_str()? {
            "table" => Some(Crc16Path::Table),
            "pclmul" => Some(Crc16Path::Pclmul),
            "vpclmul" => Some(Crc16Path::Vpclmul),
            _ => None,
        }
    }

    /// Without `std` there is no environment to read.
    #[cfg(not(feature = "std"))]
    fn forced() -> Option<Crc16Path> {
        None
    }

    /// `path` over `data` (`data.len() >= PCLMUL_MIN`, `path` available); `None` for the
    /// table path, or when `SCAN` and `data` holds a `{`.
    #[inline]
    pub(crate) fn run<const SCAN: bool>(path: Crc16Path, crc: u16, data: &[u8]) -> Option<u16> {
        match path {
            Crc16Path::Table => None,
            // SAFETY: VPCLMULQDQ and its companions are available (the caller checked or
            // `selected` detected them); the length is checked here.
            Crc16Path::Vpclmul if data.len() >= VPCLMUL_MIN => unsafe {
                vpclmul::<SCAN>(crc, data)
            },
            // SAFETY: PCLMULQDQ is available (implied by either SIMD path); length >= 16.
            Crc16Path::Pclmul | Crc16Path::Vpclmul => unsafe { pclmul::<SCAN>(crc, data) },
        }
    }

    /// The selected path over a long `data`; `None` for the table path.
    #[inline(never)]
    pub(crate) fn long(crc: u16, data: &[u8]) -> Option<u16> {
        run::<false>(selected(), crc, data)
    }

    /// The slot of a long key with no `{` by the selected path; `None` for the table path
    /// or when the key holds a `{`.
    #[inline(never)]
    pub(crate) fn long_slot(key: &[u8]) -> Option<u16> {
        run::<true>(selected(), 0, key)
    }
}

/// Off x86_64 only the table path exists.
#[cfg(not(target_arch = "x86_64"))]
mod clmul {
    pub(crate) const PCLMUL_MIN: usize = usize::MAX;
}

/// One classic table step: feed one byte.
#[inline(always)]
fn step(t: &Tables, crc: u16, byte: u8) -> u16 {
    (crc << 8) ^ at(t, 0, (crc >> 8) as u8 ^ byte)
}

/// CRC-16/XMODEM of `data` (poly `0x1021`, init `0`, MSB first, no final xor).
///
/// This is the checksum behind Redis Cluster slots: `slot = crc16_xmodem(tag) & 16383`
/// (see [`key_slot`](super::key_slot)).
///
/// ```
/// use keyroute::slot::crc16_xmodem;
///
/// assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
/// assert_eq!(crc16_xmodem(b""), 0);
/// ```
#[must_use]
pub fn crc16_xmodem(data: &[u8]) -> u16 {
    crc16_xmodem_update(0, data)
}

/// Continues a CRC-16/XMODEM computation: `crc16_xmodem_update(crc16_xmodem(a), b)`
/// equals `crc16_xmodem(a ++ b)`.
///
/// ```
/// use keyroute::slot::{crc16_xmodem, crc16_xmodem_update};
///
/// let whole = crc16_xmodem(b"123456789");
/// assert_eq!(crc16_xmodem_update(crc16_xmodem(b"1234"), b"56789"), whole);
/// ```
#[must_use]
pub fn crc16_xmodem_update(crc: u16, data: &[u8]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if data.len() >= clmul::PCLMUL_MIN {
        if let Some(c) = clmul::long(crc, data) {
            return c;
        }
    }
    table_update(crc, data)
}

/// The table path of [`crc16_xmodem_update`] (any length).
pub(super) fn table_update(crc: u16, data: &[u8]) -> u16 {
    let mut crc = crc;
    let mut chunks = data.chunks_exact(16);
    for c in &mut chunks {
        crc = fold16(crc, c);
    }
    fold_tail(crc, chunks.remainder())
}

/// Folds exactly 16 bytes (`c.len() == 16`) into the register.
///
/// Inlined into every caller by default; with `small-crc16` kept out of line, so that the
/// callers that inline [`key_slot`](super::key_slot) stay small.
#[cfg_attr(not(feature = "small-crc16"), inline(always))]
#[cfg_attr(feature = "small-crc16", inline(never))]
pub(super) fn fold16(crc: u16, c: &[u8]) -> u16 {
    fold::<16>(tables::get(), crc, c)
}

/// Folds the first `N` bytes of `c` (`N` = 4, 8 or 16; `c.len() >= N`) in one step.
///
/// The 16-bit register is, by linearity, the same as xoring it into the first two message
/// bytes and starting from zero; every byte then contributes `TABLES[N - 1 - position]
/// [byte]` independently, so the `N` table loads do not wait for each other.
#[inline(always)]
fn fold<const N: usize>(t: &Tables, crc: u16, c: &[u8]) -> u16 {
    let [hi, lo] = crc.to_be_bytes();
    let mut x = at(t, N - 1, c[0] ^ hi) ^ at(t, N - 2, c[1] ^ lo);
    for (k, &b) in c[2..N].iter().enumerate() {
        x ^= at(t, N - 3 - k, b);
    }
    x
}

/// Folds fewer than 16 bytes: one 8-byte step, one 4-byte step, then single bytes
/// (inlined as [`fold16`] is).
#[cfg_attr(not(feature = "small-crc16"), inline(always))]
#[cfg_attr(feature = "small-crc16", inline(never))]
pub(super) fn fold_tail(crc: u16, rest: &[u8]) -> u16 {
    let t = tables::get();
    let mut crc = crc;
    let mut rest = rest;
    if rest.len() >= 8 {
        crc = fold::<8>(t, crc, rest);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        crc = fold::<4>(t, crc, rest);
        rest = &rest[4..];
    }
    for &b in rest {
        crc = step(t, crc, b);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook bit-at-a-time definition, as the reference.
    fn crc_bitwise(data: &[u8]) -> u16 {
        let mut crc: u16 = 0;
        for &b in data {
            crc ^= u16::from(b) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ POLY
                } else {
                    crc << 1
                };
            }
        }
        crc
    }

    #[test]
    fn tables_are_crcs_of_a_byte_and_zeros() {
        let t = tables::get();
        for k in 0..16 {
            for b in 0..=255u8 {
                let mut data = [0u8; 16];
                data[0] = b;
                assert_eq!(at(t, k, b), crc_bitwise(&data[..=k]), "table {k} byte {b}");
            }
        }
    }

    #[test]
    fn check_value() {
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(crc16_xmodem(b""), 0);
    }

    #[test]
    fn every_length_matches_bitwise() {
        let data: [u8; 300] = core::array::from_fn(|i| (i as u8).wrapping_mul(151) ^ 0x5a);
        for start in 0..3 {
            for end in start..data.len() {
                let d = &data[start..end];
                assert_eq!(crc16_xmodem(d), crc_bitwise(d), "len {}", d.len());
            }
        }
    }

    #[test]
    fn update_is_concatenation() {
        let data = b"The quick brown fox jumps over the lazy dog, twice over.";
        for split in 0..data.len() {
            let (a, b) = data.split_at(split);
            assert_eq!(crc16_xmodem_update(crc16_xmodem(a), b), crc16_xmodem(data));
        }
    }
}

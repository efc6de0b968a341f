//! CRC-16/XMODEM (poly `0x1021`, init `0`, no reflection, no final xor): the checksum
//! Redis Cluster hashes keys with, by the fastest path this CPU has: the slice-by-16
//! tables (`crc16_table.rs`, every target) or carry-less multiplication
//! (`crc16_clmul.rs`, x86_64) for inputs long enough to pay for it.

use super::crc16_table::table_update;

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

#[cfg(test)]
mod tests {
    use super::super::crc16_table::tests::crc_bitwise;
    use super::*;

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

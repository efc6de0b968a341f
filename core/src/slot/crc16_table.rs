//! The table path of CRC-16/XMODEM (poly `0x1021`, init `0`, no reflection, no final
//! xor), which every build has and the carry-less paths (`crc16_clmul.rs`) finish with.
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

/// One classic table step: feed one byte.
#[inline(always)]
fn step(t: &Tables, crc: u16, byte: u8) -> u16 {
    (crc << 8) ^ at(t, 0, (crc >> 8) as u8 ^ byte)
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
pub(super) mod tests {
    use super::*;

    /// The textbook bit-at-a-time definition, as the reference.
    pub(in crate::slot) fn crc_bitwise(data: &[u8]) -> u16 {
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
}

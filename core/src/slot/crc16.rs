//! CRC-16/XMODEM (poly `0x1021`, init `0`, no reflection, no final xor): the checksum
//! Redis Cluster hashes keys with.
//!
//! The implementation is table-driven "slice-by-16": sixteen 256-entry tables, generated at
//! compile time, let one step fold 16 input bytes with 16 independent table loads instead
//! of a 16-long dependency chain. Tails of 8 and 4 bytes use the same tables, so only the
//! last 0–3 bytes go through the classic one-byte step. The tables take 8 KiB.

/// The CRC-16/XMODEM generator polynomial (x^16 + x^12 + x^5 + 1).
const POLY: u16 = 0x1021;

/// `TABLES[k][b]` is the CRC of the byte `b` followed by `k` zero bytes (from a zero
/// register). `TABLES[0]` is the classic byte-at-a-time table.
static TABLES: [[u16; 256]; 16] = make_tables();

const fn make_tables() -> [[u16; 256]; 16] {
    let mut t = [[0u16; 256]; 16];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ POLY
            } else {
                crc << 1
            };
            bit += 1;
        }
        t[0][i] = crc;
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

/// One classic table step: feed one byte.
#[inline(always)]
fn step(crc: u16, byte: u8) -> u16 {
    (crc << 8) ^ TABLES[0][usize::from((crc >> 8) as u8 ^ byte)]
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
    let mut crc = crc;
    let mut chunks = data.chunks_exact(16);
    for c in &mut chunks {
        crc = fold16(crc, c);
    }
    fold_tail(crc, chunks.remainder())
}

/// Folds exactly 16 bytes (`c.len() == 16`) into the register.
#[inline(always)]
pub(super) fn fold16(crc: u16, c: &[u8]) -> u16 {
    let t = &TABLES;
    // The 16-bit register is, by linearity, the same as xoring it into the first two
    // message bytes and starting from zero; every byte then contributes
    // TABLES[15 - position][byte] independently.
    let [hi, lo] = crc.to_be_bytes();
    t[15][usize::from(c[0] ^ hi)]
        ^ t[14][usize::from(c[1] ^ lo)]
        ^ t[13][usize::from(c[2])]
        ^ t[12][usize::from(c[3])]
        ^ t[11][usize::from(c[4])]
        ^ t[10][usize::from(c[5])]
        ^ t[9][usize::from(c[6])]
        ^ t[8][usize::from(c[7])]
        ^ t[7][usize::from(c[8])]
        ^ t[6][usize::from(c[9])]
        ^ t[5][usize::from(c[10])]
        ^ t[4][usize::from(c[11])]
        ^ t[3][usize::from(c[12])]
        ^ t[2][usize::from(c[13])]
        ^ t[1][usize::from(c[14])]
        ^ t[0][usize::from(c[15])]
}

/// Folds fewer than 16 bytes: one 8-byte step, one 4-byte step, then single bytes.
#[inline(always)]
pub(super) fn fold_tail(crc: u16, rest: &[u8]) -> u16 {
    let t = &TABLES;
    let mut crc = crc;
    let mut rest = rest;
    if rest.len() >= 8 {
        let [hi, lo] = crc.to_be_bytes();
        crc = t[7][usize::from(rest[0] ^ hi)]
            ^ t[6][usize::from(rest[1] ^ lo)]
            ^ t[5][usize::from(rest[2])]
            ^ t[4][usize::from(rest[3])]
            ^ t[3][usize::from(rest[4])]
            ^ t[2][usize::from(rest[5])]
            ^ t[1][usize::from(rest[6])]
            ^ t[0][usize::from(rest[7])];
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        let [hi, lo] = crc.to_be_bytes();
        crc = t[3][usize::from(rest[0] ^ hi)]
            ^ t[2][usize::from(rest[1] ^ lo)]
            ^ t[1][usize::from(rest[2])]
            ^ t[0][usize::from(rest[3])];
        rest = &rest[4..];
    }
    for &b in rest {
        crc = step(crc, b);
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

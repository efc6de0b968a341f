//! Lowercase base32 (RFC 4648 alphabet `a`–`z`, `2`–`7`, no padding) of 16-byte values:
//! the text form of [client tokens](super::ClientToken) and of the random part of
//! [session ids](super::SessionId). 128 bits give 26 characters; the last character
//! carries 3 bits and 2 zero bits, and only that canonical form is accepted back.

/// The alphabet, in digit order.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Characters of a 128-bit value.
pub(crate) const LEN: usize = 26;

/// Encodes 16 bytes (big-endian bit order) as 26 lowercase base32 characters.
pub(crate) fn encode(bytes: &[u8; 16]) -> [u8; LEN] {
    let n = u128::from_be_bytes(*bytes);
    let mut out = [0u8; LEN];
    for (i, c) in out.iter_mut().enumerate() {
        // 26 digits of 5 bits = 130 bits: the value followed by two zero bits.
        let shift = 123 - 5 * i as i32;
        let digit = if shift >= 0 {
            (n >> shift) & 31
        } else {
            (n << -shift) & 31
        };
        *c = ALPHABET[digit as usize];
    }
    out
}

/// Decodes what [`encode`] gives; `None` for anything else (wrong length, a character
/// outside the alphabet, uppercase, or non-zero padding bits).
pub(crate) fn decode(text: &[u8]) -> Option<[u8; 16]> {
    if text.len() != LEN {
        return None;
    }
    let mut n: u128 = 0;
    for (i, &c) in text.iter().enumerate() {
        let digit = match c {
            b'a'..=b'z' => c - b'a',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        } as u128;
        if i == LEN - 1 {
            if digit & 3 != 0 {
                return None;
            }
            n = (n << 3) | (digit >> 2);
        } else {
            n = (n << 5) | digit;
        }
    }
    Some(n.to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_is_canonical() {
        for seed in 0u8..=255 {
            let mut bytes = [0u8; 16];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = seed.wrapping_mul(31).wrapping_add(i as u8 * 17);
            }
            let text = encode(&bytes);
            assert_eq!(decode(&text), Some(bytes));
        }
        assert_eq!(&encode(&[0; 16]), b"aaaaaaaaaaaaaaaaaaaaaaaaaa");
        assert_eq!(&encode(&[0xff; 16]), b"77777777777777777777777774");
        assert_eq!(decode(b"77777777777777777777777775"), None);
        assert_eq!(decode(b"A7777777777777777777777774"), None);
        assert_eq!(decode(b"7777777777777777777777777"), None);
        // RFC 4648: "f" -> "MY" (first 8 bits); ours puts the 128 bits first too.
        let mut f = [0u8; 16];
        f[0] = b'f';
        assert!(encode(&f).starts_with(b"my"));
    }
}

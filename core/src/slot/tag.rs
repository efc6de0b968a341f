//! Redis Cluster hash tags: the part of a key that is hashed.

/// Position of the first `needle` in `hay`, eight bytes at a time (SWAR), so long keys
/// without braces are scanned at several bytes per cycle.
#[inline]
pub(super) fn find_byte(hay: &[u8], needle: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pattern = LO * u64::from(needle);
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let x = u64::from_le_bytes(word) ^ pattern;
        // Classic "has a zero byte": the lowest flagged byte is always a real zero
        // (borrows only create false flags above a real zero), so trailing_zeros is exact.
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(base + (found.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|p| base + p)
}

/// `true` if the 16 bytes `c` contain `needle` (SWAR on one `u128`, no branches).
#[inline(always)]
pub(super) fn has_byte16(c: &[u8], needle: u8) -> bool {
    const LO: u128 = 0x0101_0101_0101_0101_0101_0101_0101_0101;
    const HI: u128 = LO << 7;
    let mut word = [0u8; 16];
    word.copy_from_slice(c);
    let x = u128::from_le_bytes(word) ^ (LO * u128::from(needle));
    x.wrapping_sub(LO) & !x & HI != 0
}

/// The bytes of `key` that Redis Cluster hashes: the hash tag if there is one, else the
/// whole key.
///
/// The tag is the bytes between the first `{` and the first `}` after it, if that is
/// non-empty. The scan never moves on to a later `{...}`: an empty first tag (`{}`) or a
/// `{` without a later `}` means the whole key is hashed.
///
/// ```
/// use keyroute::slot::hash_tag;
///
/// assert_eq!(hash_tag(b"user:{42}:cart"), b"42");
/// assert_eq!(hash_tag(b"{{a}}"), b"{a");
/// assert_eq!(hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
/// assert_eq!(hash_tag(b"no-tag"), b"no-tag");
/// ```
#[must_use]
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = find_byte(key, b'{') {
        let after = &key[open + 1..];
        if let Some(len) = find_byte(after, b'}') {
            if len > 0 {
                return &after[..len];
            }
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(key: &[u8]) -> &[u8] {
        let Some(open) = key.iter().position(|&b| b == b'{') else {
            return key;
        };
        let Some(close) = key[open + 1..].iter().position(|&b| b == b'}') else {
            return key;
        };
        if close == 0 {
            key
        } else {
            &key[open + 1..open + 1 + close]
        }
    }

    #[test]
    fn edge_cases() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"", b""),
            (b"{", b"{"),
            (b"}", b"}"),
            (b"{}", b"{}"),
            (b"{}{a}", b"{}{a}"),
            (b"{{a}}", b"{a"),
            (b"a}{b}", b"b"),
            (b"foo{}{bar}", b"foo{}{bar}"),
            (b"foo{bar}{zap}", b"bar"),
            (b"{a", b"{a"),
            (b"}a{", b"}a{"),
            (b"{a}", b"a"),
            (b"x{\xff\x00}y", b"\xff\x00"),
        ];
        for (key, tag) in cases {
            assert_eq!(hash_tag(key), *tag, "key {key:?}");
        }
    }

    #[test]
    fn has_byte16_every_position() {
        for pos in 0..16 {
            for other in [0u8, b'{' - 1, b'{' + 1, b'{' | 0x80, 0xff] {
                let mut c = [other; 16];
                assert!(!has_byte16(&c, b'{'));
                c[pos] = b'{';
                assert!(has_byte16(&c, b'{'), "pos {pos} other {other}");
            }
        }
    }

    #[test]
    fn find_byte_every_position() {
        for len in 0..40 {
            for pos in 0..=len {
                let mut hay = [b'x'; 40];
                if pos < len {
                    hay[pos] = b'{';
                    // A later needle must not win, nor bytes one off from the needle.
                    if pos + 3 < len {
                        hay[pos + 3] = b'{';
                    }
                }
                if pos > 0 {
                    hay[pos - 1] = b'{' - 1;
                }
                let expect = (pos < len).then_some(pos);
                assert_eq!(find_byte(&hay[..len], b'{'), expect, "len {len} pos {pos}");
            }
        }
        assert_eq!(find_byte(&[0x7b | 0x80; 20], b'{'), None);
    }

    #[test]
    fn matches_naive_on_brace_soup() {
        let alphabet = [b'{', b'}', b'a', 0x00, 0xff, 0xfb];
        // Every string up to length 6 over a small alphabet.
        for len in 0..=6u32 {
            for n in 0..6usize.pow(len) {
                let mut key = [0u8; 6];
                let mut x = n;
                for b in key.iter_mut().take(len as usize) {
                    *b = alphabet[x % 6];
                    x /= 6;
                }
                let key = &key[..len as usize];
                assert_eq!(hash_tag(key), naive(key));
            }
        }
    }
}

//! Java's `String.hashCode` and `Math.abs(int)`.

/// Java's `String.hashCode()` of the string whose UTF-8 bytes are `text`: `s[0]*31^(n-1) +
/// … + s[n-1]` over UTF-16 code units (a character beyond U+FFFF counts as its two
/// surrogates), in wrapping 32-bit arithmetic. Bytes that are not UTF-8 count as U+FFFD,
/// as `new String(bytes, UTF_8)` decodes them.
///
/// ```
/// use keyroute::hashes::java_string_hash;
/// assert_eq!(java_string_hash(b"hello"), 99162322);
/// assert_eq!(java_string_hash(b"Aa"), java_string_hash(b"BB"));
/// assert_eq!(java_string_hash("🎉".as_bytes()), 0xd83c_u16 as i32 * 31 + 0xdf89);
/// ```
pub fn java_string_hash(text: &[u8]) -> i32 {
    let mut h: i32 = 0;
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                h = h.wrapping_mul(31).wrapping_add(i32::from(*u));
            }
        }
        if !chunk.invalid().is_empty() {
            h = h.wrapping_mul(31).wrapping_add(0xfffd);
        }
    }
    h
}

/// Java's `Math.abs(int)`: `Integer.MIN_VALUE` stays negative.
///
/// ```
/// use keyroute::hashes::java_abs;
/// assert_eq!(java_abs(-5), 5);
/// assert_eq!(java_abs(i32::MIN), i32::MIN);
/// ```
pub const fn java_abs(v: i32) -> i32 {
    v.wrapping_abs()
}

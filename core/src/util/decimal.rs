//! Decimal text without `core::fmt`.

use alloc::vec::Vec;

/// `v` as decimal text appended to `buf` (what `write!(buf, "{v}")` writes, without
/// linking the formatter: the rings hash such text for every point).
pub(crate) fn push_decimal(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::push_decimal;
    use alloc::vec::Vec;

    #[test]
    fn writes_what_format_writes() {
        for v in [0, 1, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            let mut buf = Vec::new();
            push_decimal(&mut buf, v);
            assert_eq!(buf, alloc::format!("{v}").into_bytes());
        }
    }
}

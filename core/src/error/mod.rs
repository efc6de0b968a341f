//! Error codes: one stable name (and number) per kind of failure, the same in every
//! language.
//!
//! Every public error type of keyroute has a `code()` method returning an [`ErrorCode`].
//! Its [`as_str`](ErrorCode::as_str) is what every binding shows: Python exceptions carry it
//! as `.code`, JavaScript errors as `.code`, the C library returns the status whose number
//! is [`number`](ErrorCode::number) (`KEYROUTE_` + the name) and keeps the message for
//! `keyroute_last_error_message()`. Names and numbers never change meaning; new codes are
//! only added.
//!
//! ```
//! use keyroute::error::ErrorCode;
//! use keyroute::ring::RingError;
//!
//! let err = RingError::ZeroWeight("cache-a".into());
//! assert_eq!(err.code(), ErrorCode::ZeroWeight);
//! assert_eq!(err.code().as_str(), "ZERO_WEIGHT");
//! assert_eq!(ErrorCode::from_name("ZERO_WEIGHT"), Some(ErrorCode::ZeroWeight));
//! ```

use core::fmt;

mod code;

pub use code::ErrorCode;

/// A text in double quotes, for error messages: `"cache-a"`. Quotes, backslashes and
/// control characters are escaped as Rust's `{:?}` escapes them (`\"`, `\\`, `\n`, `\t`,
/// `\r`, `\0`, `\u{7f}`: the same text as `{:?}` for every character below U+0300); every
/// other character is written as it is. Unlike `{:?}`, it needs no Unicode tables, which
/// keeps them out of small builds (the JavaScript .wasm).
///
/// ```
/// use keyroute::error::Quoted;
/// assert_eq!(Quoted("cache-a").to_string(), r#""cache-a""#);
/// assert_eq!(Quoted("a\"b\\c\n\u{1}").to_string(), r#""a\"b\\c\n\u{1}""#);
/// assert_eq!(Quoted("é").to_string(), format!("{:?}", "é"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char('"')?;
        for c in self.0.chars() {
            let short = match c {
                '"' => '"',
                '\\' => '\\',
                '\n' => 'n',
                '\r' => 'r',
                '\t' => 't',
                '\0' => '0',
                c if c < ' ' || ('\x7f'..='\u{a0}').contains(&c) || c == '\u{ad}' => {
                    // \u{hex}, lowercase, no leading zeros (two digits at most here)
                    let hex = |d: u32| char::from_digit(d, 16).unwrap_or('?');
                    let v = c as u32;
                    f.write_str("\\u{")?;
                    if v >= 16 {
                        f.write_char(hex(v >> 4))?;
                    }
                    f.write_char(hex(v & 15))?;
                    f.write_char('}')?;
                    continue;
                }
                c => {
                    f.write_char(c)?;
                    continue;
                }
            };
            f.write_char('\\')?;
            f.write_char(short)?;
        }
        f.write_char('"')
    }
}

/// Writes `parts` one after the other: messages write their texts (names, reasons) this
/// way rather than as `{}` arguments, whose padding code (`Formatter::pad`, which counts
/// characters) then stays out of small builds; a `{}` argument in a message has no width
/// or precision, so the text is the same.
pub(crate) fn write_all(f: &mut fmt::Formatter<'_>, parts: &[&str]) -> fmt::Result {
    for part in parts {
        f.write_str(part)?;
    }
    Ok(())
}

/// A 128-bit integer for error messages, written as `{}` writes an `i128` (sign, digits;
/// width and `+` flags too) but by long division in 32-bit pieces: no 128-bit division
/// code, which keeps it out of small builds (the JavaScript .wasm).
///
/// ```
/// use keyroute::error::Int;
/// assert_eq!(Int(-42).to_string(), "-42");
/// assert_eq!(Int(i128::MIN).to_string(), i128::MIN.to_string());
/// assert_eq!(format!("{:>5}", Int(7)), "    7");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int(pub i128);

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0.unsigned_abs();
        // Most significant 32 bits first.
        let mut limbs = [
            (m >> 96) as u32,
            (m >> 64) as u32,
            (m >> 32) as u32,
            m as u32,
        ];
        let mut buf = [0u8; 40];
        let mut i = buf.len();
        loop {
            let mut rem = 0u64;
            for limb in &mut limbs {
                let cur = (rem << 32) | u64::from(*limb);
                *limb = (cur / 10) as u32;
                rem = cur % 10;
            }
            i -= 1;
            buf[i] = b'0' + rem as u8;
            if limbs == [0; 4] {
                break;
            }
        }
        let digits = core::str::from_utf8(&buf[i..]).unwrap_or_default();
        f.pad_integral(self.0 >= 0, "", digits)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::{Int, Quoted};
    use alloc::format;

    #[test]
    fn int_writes_what_display_writes() {
        let mut v: alloc::vec::Vec<i128> =
            alloc::vec![0, 1, -1, 9, 10, 99, 100, i128::MAX, i128::MIN];
        for k in 0..128 {
            let p = 1i128.wrapping_shl(k);
            let q = p.wrapping_sub(1);
            v.extend([p, q, p.wrapping_add(1), p.wrapping_neg(), q.wrapping_neg()]);
        }
        let mut x = 1i128;
        while let Some(y) = x.checked_mul(10) {
            v.extend([y - 1, y, -y, -(y - 1)]);
            x = y;
        }
        for n in v {
            assert_eq!(format!("{}", Int(n)), format!("{n}"));
            assert_eq!(format!("{:+}", Int(n)), format!("{n:+}"));
            assert_eq!(format!("{:>45}", Int(n)), format!("{n:>45}"));
        }
    }

    #[test]
    fn quoted_escapes_as_debug_does_below_u0300() {
        let mut text = alloc::string::String::new();
        for c in (0u32..0x300).filter_map(char::from_u32) {
            text.push(c);
            let one = alloc::string::String::from(c);
            assert_eq!(
                format!("{}", Quoted(&one)),
                format!("{one:?}"),
                "U+{:04X}",
                c as u32
            );
        }
        assert_eq!(format!("{}", Quoted(&text)), format!("{text:?}"));
        for s in [
            "",
            "cache-a",
            "10.0.0.1:11211",
            "ключ",
            "键",
            "a'b",
            "{tag}",
        ] {
            assert_eq!(format!("{}", Quoted(s)), format!("{s:?}"));
        }
    }
}

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

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::Quoted;
    use alloc::format;

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

//! Keys as `route` and `slot` take them: bytes, from the arguments (any bytes the platform
//! passes, UTF-8 or not) or from stdin (one per line; empty lines are skipped).
use std::ffi::OsStr;
use std::io::{self, BufRead};

use keyroute::error::ErrorCode;

use super::CliError;

/// The bytes of an argument. On Unix every argument is bytes, and so is every key; on
/// other platforms an argument that is not Unicode is refused with BAD_UTF8.
pub fn arg_bytes(arg: &OsStr, position: usize) -> Result<Vec<u8>, CliError> {
    #[cfg(unix)]
    {
        let _ = position;
        use std::os::unix::ffi::OsStrExt;
        Ok(arg.as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    {
        arg.to_str().map(|s| s.as_bytes().to_vec()).ok_or_else(|| {
            CliError::new(
                ErrorCode::BadUtf8,
                format!("key #{position} is not Unicode on this platform; pass it hex-encoded with `keyroute slot --hex`"),
            )
        })
    }
}

/// Calls `f(key, line_number)` for each non-empty line of stdin, without its `\n` or
/// `\r\n`. Memory is one line at a time.
pub fn for_each_stdin_line(
    mut f: impl FnMut(&[u8], usize) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        number += 1;
        let key = strip_eol(&line);
        if !key.is_empty() {
            f(key, number)?;
        }
    }
}

/// A line without its trailing `\n` / `\r\n`.
pub fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A key in JSON output: `"key": "text"` when it is UTF-8, else `"key_hex": "ff00"`.
#[derive(Debug, serde::Serialize)]
pub struct KeyJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_hex: Option<String>,
}

impl<'a> KeyJson<'a> {
    /// How `key` is shown.
    pub fn of(key: &'a [u8]) -> Self {
        match std::str::from_utf8(key) {
            Ok(text) => KeyJson {
                key: Some(text),
                key_hex: None,
            },
            Err(_) => KeyJson {
                key: None,
                key_hex: Some(key.iter().map(|b| format!("{b:02x}")).collect()),
            },
        }
    }
}

/// Decodes hex text (`7b617d` → `{a}`).
pub fn decode_hex(text: &[u8]) -> Result<Vec<u8>, CliError> {
    let bad = |msg: String| CliError::new(ErrorCode::BadType, msg);
    if !text.len().is_multiple_of(2) {
        return Err(bad(format!(
            "hex key has an odd number of digits ({}); write two digits per byte",
            text.len()
        )));
    }
    let digit = |pos: usize| {
        let c = text[pos];
        (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
            bad(format!(
                "{:?} at position {} is not a hex digit (0-9, a-f)",
                char::from(c),
                pos + 1
            ))
        })
    };
    (0..text.len())
        .step_by(2)
        .map(|i| Ok(digit(i)? << 4 | digit(i + 1)?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(decode_hex(b"7b617D").ok(), Some(b"{a}".to_vec()));
        assert_eq!(decode_hex(b"").ok(), Some(Vec::new()));
        assert!(decode_hex(b"7").is_err());
        assert_eq!(
            decode_hex(b"zz").err().and_then(|e| e.code()),
            Some(ErrorCode::BadType)
        );
    }

    #[test]
    fn json_keys() {
        let text = serde_json::to_string(&KeyJson::of(b"user:1")).ok();
        assert_eq!(text.as_deref(), Some(r#"{"key":"user:1"}"#));
        let text = serde_json::to_string(&KeyJson::of(b"\xff\x00a")).ok();
        assert_eq!(text.as_deref(), Some(r#"{"key_hex":"ff0061"}"#));
    }
}

//! `keyroute slot`: print the Redis Cluster hash slot of each key, one per line.
//!
//! Keys come from the arguments, or from stdin (one key per line; the trailing `\n` and
//! a `\r` before it are not part of the key). With `--hex`, every key is hex-encoded
//! bytes, so any binary key can be given.
use std::ffi::OsString;
use std::io::{self, BufRead, BufWriter, Write};

use keyroute::slot::key_slot;

use super::CliError;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    keyroute slot foo '{user1000}.following'\n  \
    keyroute slot --hex 7b617d\n  \
    printf 'a\\nb\\n' | keyroute slot")]
pub struct Args {
    /// Keys to hash (bytes of the argument). Without any, keys are read from stdin, one
    /// per line.
    #[arg(value_name = "KEY")]
    pub keys: Vec<OsString>,
    /// Keys are hex-encoded bytes (e.g. `7b617d` for `{a}`), in arguments and on stdin.
    #[arg(long)]
    pub hex: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = if args.keys.is_empty() {
        from_stdin(args.hex, &mut out)
    } else {
        from_args(&args.keys, args.hex, &mut out)
    };
    match result.and_then(|()| out.flush().map_err(Into::into)) {
        // `keyroute slot ... | head` closing the pipe early is not an error.
        Err(e) if is_broken_pipe(e.as_ref()) => Ok(()),
        other => other,
    }
}

fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn from_args(keys: &[OsString], hex: bool, out: &mut impl Write) -> Result<(), CliError> {
    for (i, arg) in keys.iter().enumerate() {
        let raw = os_bytes(arg).ok_or_else(|| {
            format!(
                "key #{} is not valid UTF-8 on this platform; pass it with --hex",
                i + 1
            )
        })?;
        let key = if hex {
            decode_hex(&raw).map_err(|e| format!("key #{}: {e}", i + 1))?
        } else {
            raw
        };
        writeln!(out, "{}", key_slot(&key))?;
    }
    Ok(())
}

fn from_stdin(hex: bool, out: &mut impl Write) -> Result<(), CliError> {
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
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        if hex {
            let key = decode_hex(&line).map_err(|e| format!("stdin line {number}: {e}"))?;
            writeln!(out, "{}", key_slot(&key))?;
        } else {
            writeln!(out, "{}", key_slot(&line))?;
        }
    }
}

#[cfg(unix)]
fn os_bytes(s: &OsString) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    Some(s.as_bytes().to_vec())
}

#[cfg(not(unix))]
fn os_bytes(s: &OsString) -> Option<Vec<u8>> {
    s.to_str().map(|s| s.as_bytes().to_vec())
}

fn decode_hex(text: &[u8]) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!(
            "hex key has an odd number of digits ({}); write two digits per byte",
            text.len()
        ));
    }
    let digit = |pos: usize| {
        let c = text[pos];
        (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
            format!(
                "{:?} at position {} is not a hex digit (0-9, a-f)",
                char::from(c),
                pos + 1
            )
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
        assert_eq!(decode_hex(b"7b617D"), Ok(b"{a}".to_vec()));
        assert_eq!(decode_hex(b""), Ok(Vec::new()));
        assert!(decode_hex(b"7").is_err());
        assert!(decode_hex(b"zz").is_err());
    }
}

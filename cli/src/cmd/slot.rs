//! `keyroute slot`: print the Redis Cluster hash slot of each key, one per line.
//!
//! Keys come from the arguments (their bytes, UTF-8 or not), or from stdin (one key per
//! line; the trailing `\n` and a `\r` before it are not part of the key; empty lines are
//! skipped). With `--hex`, every key is hex-encoded bytes.
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use keyroute::slot::key_slot;

use super::keys::{arg_bytes, decode_hex, for_each_stdin_line, KeyJson};
use super::{json_line, note_reading_stdin, CliError, Format};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Keys are bytes: arguments are taken as given (UTF-8 or not); \
    from stdin, one key per line without its \\n or \\r\\n, and empty lines are skipped.\n\n\
    --format json prints one object per key: {\"key\":\"foo\",\"slot\":12182} \
    (\"key_hex\" instead of \"key\" for a key that is not UTF-8).\n\n\
    Examples:\n  \
    keyroute slot foo '{user1000}.following'\n  \
    keyroute slot --hex 7b617d\n  \
    printf 'a\\nb\\n' | keyroute slot --format json"
)]
pub struct Args {
    /// Keys to hash (bytes of the argument). Without any, keys are read from stdin, one
    /// per line.
    #[arg(value_name = "KEY")]
    pub keys: Vec<OsString>,
    /// Keys are hex-encoded bytes (e.g. `7b617d` for `{a}`), in arguments and on stdin.
    #[arg(long)]
    pub hex: bool,
    /// Output: text (the slot) or json (one object per line).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let json = args.format == Format::Json;
    let emit = |key: &[u8], out: &mut BufWriter<io::StdoutLock<'_>>| -> Result<(), CliError> {
        let slot = key_slot(key);
        if json {
            #[derive(serde::Serialize)]
            struct Line<'a> {
                #[serde(flatten)]
                key: KeyJson<'a>,
                slot: u16,
            }
            json_line(
                out,
                &Line {
                    key: KeyJson::of(key),
                    slot,
                },
            )
        } else {
            writeln!(out, "{slot}")?;
            Ok(())
        }
    };
    if args.keys.is_empty() {
        note_reading_stdin("keys");
        for_each_stdin_line(|line, number| {
            if args.hex {
                let key =
                    decode_hex(line).map_err(|e| e.context(format!("stdin line {number}")))?;
                emit(&key, &mut out)
            } else {
                emit(line, &mut out)
            }
        })?;
    } else {
        for (i, arg) in args.keys.iter().enumerate() {
            let raw = arg_bytes(arg, i + 1)?;
            if args.hex {
                let key = decode_hex(&raw).map_err(|e| e.context(format!("key #{}", i + 1)))?;
                emit(&key, &mut out)?;
            } else {
                emit(&raw, &mut out)?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

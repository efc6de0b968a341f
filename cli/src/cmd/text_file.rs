//! Files read as text (`--config`, `--nodes-file`, an nginx `include`): at most
//! [`MAX_CONFIG_BYTES`] of them, so that `/dev/zero`, a FIFO that never ends or a huge
//! file is refused instead of read until memory runs out.

use std::io::Read;
use std::path::Path;

use keyroute::config::MAX_CONFIG_BYTES;
use keyroute::error::ErrorCode;

use super::CliError;

/// The first `MAX_CONFIG_BYTES + 1` bytes of `path` at most (one more than allowed, so
/// that a caller can tell a file at the bound from one past it).
///
/// # Errors
/// The operating system's (no such file, a folder, no permission).
pub fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The text of `path`, which the messages call `what` (`configuration`, `nodes file`).
///
/// # Errors
/// `BAD_CONFIG` naming the file when it is over [`MAX_CONFIG_BYTES`]; `BAD_UTF8` when it
/// is not UTF-8; the operating system's error, with the file's name.
pub fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    let shown = path.display();
    let bytes = read_capped(path)
        .map_err(|e| CliError::from(e).context(format!("cannot read {what} {shown}")))?;
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(CliError::new(
            ErrorCode::BadConfig,
            format!(
                "{what} {shown} is over {} MiB, the most keyroute reads (is it a regular file?)",
                MAX_CONFIG_BYTES >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        CliError::new(
            ErrorCode::BadUtf8,
            format!("{what} {shown} is not UTF-8 text"),
        )
    })
}

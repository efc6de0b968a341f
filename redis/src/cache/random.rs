//! Randomness: session ids and lease owners from the OS generator (`getrandom`), XFetch
//! variates from a per-thread xorshift seeded by it.

use std::cell::Cell;

use crate::error::{Error, Result};

/// 16 bytes from the operating system's secure generator.
pub(crate) fn secure_bytes() -> Result<[u8; 16]> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Error::Busy(leak_reason(&e)))?;
    Ok(bytes)
}

fn leak_reason(_: &getrandom::Error) -> &'static str {
    "the operating system's random generator failed; no session id was made"
}

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        b = t.to_le_bytes();
    }
    u64::from_le_bytes(b) | 1
}

/// A uniform draw in (0, 1].
pub(crate) fn unit() -> f64 {
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    })
}

/// A lease owner name: `pid:<pid>:<8 hex digits>` (for operators reading entries).
pub(crate) fn owner() -> Vec<u8> {
    let tail = secure_bytes().map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    format!("pid:{}:{tail:08x}", std::process::id()).into_bytes()
}

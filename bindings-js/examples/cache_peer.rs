//! The Rust `SmartCache` (crate keyroute-redis) as a peer of the JavaScript one: the
//! tests of `keyroute/cache` fill entries here and read them there, and the other way
//! round (same keys, same token key, same scripts).
//!
//! ```text
//! cargo run -q -p keyroute-js --features peer --example cache_peer -- URL CLIENT KIND VALUE
//! ```
//!
//! Prints one JSON line: `{"value": "<what get_or_load returned>", "loaded": <whether the
//! loader (which returns VALUE) ran>}`.
use std::cell::Cell;
use std::time::{Duration, Instant};

use keyroute_redis::cache::{CacheConfig, LoadError, SmartCache, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, client, kind, value] = args.as_slice() else {
        return Err("usage: cache_peer URL CLIENT KIND VALUE".into());
    };
    let store = Store::standalone(url, Default::default())?;
    let cache = SmartCache::new(store, CacheConfig::default())?;
    let loaded = Cell::new(false);
    let deadline = Instant::now() + Duration::from_secs(10);
    let got = cache.get_or_load(client, kind, deadline, || {
        loaded.set(true);
        Ok::<_, LoadError>(value.clone().into_bytes())
    })?;
    let text = String::from_utf8(got)?;
    println!(
        "{{\"value\": \"{}\", \"loaded\": {}}}",
        text.replace('\\', "\\\\").replace('"', "\\\""),
        loaded.get()
    );
    Ok(())
}

//! A loader worker in Rust, for the tests, the demo and as an example:
//!
//! ```text
//! cargo run -p keyroute-serve --example worker -- tcp://127.0.0.1:5556 accounts,cards [delay_ms] [capacity]
//! ```
//! Each load answers `rust:<client>:<kind>` after `delay_ms` (0 by default); a kind named
//! `fail-*` answers `failed`. It prints `load <client> <kind>` on stdout as each load
//! starts, and stops on SIGTERM. With `KEYROUTE_CURVE_SERVER_KEY` (the service's Z85
//! public key) and `KEYROUTE_CURVE_KEY_FILE` (this worker's certificate, pyzmq's
//! `.key_secret`), it connects with CURVE.
use std::io::Write;
use std::time::Duration;

use keyroute_serve::loader_worker::LoadError;
use keyroute_serve::LoaderWorker;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: worker ENDPOINT KIND[,KIND...] [DELAY_MS] [CAPACITY]");
        std::process::exit(2);
    }
    let kinds: Vec<&str> = args[2].split(',').collect();
    let delay = Duration::from_millis(args.get(3).and_then(|d| d.parse().ok()).unwrap_or(0));
    let capacity = args.get(4).and_then(|c| c.parse().ok()).unwrap_or(1);
    let worker = LoaderWorker::new(&args[1], &kinds, move |client, kind| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "load {client} {kind}");
        let _ = out.flush();
        drop(out);
        std::thread::sleep(delay);
        if kind.starts_with("fail-") {
            return Err(LoadError::new(
                "UPSTREAM_500",
                format!("the backend failed for {kind}"),
            ));
        }
        Ok(format!("rust:{client}:{kind}").into_bytes())
    })
    .capacity(capacity);
    let worker = match (
        std::env::var("KEYROUTE_CURVE_SERVER_KEY"),
        std::env::var("KEYROUTE_CURVE_KEY_FILE"),
    ) {
        (Ok(server), Ok(file)) => {
            match keyroute_serve::curve::PeerKeys::from_file(&server, file.as_ref()) {
                Ok(keys) => worker.curve(keys),
                Err(e) => {
                    eprintln!("worker: {e}");
                    std::process::exit(2);
                }
            }
        }
        _ => worker,
    };
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        let _ = signal_hook::flag::register(sig, worker.stop_flag());
    }
    if let Err(e) = worker.run() {
        eprintln!("worker: {e}");
        std::process::exit(1);
    }
}

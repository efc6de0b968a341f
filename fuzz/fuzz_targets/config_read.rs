//! The proxy configuration readers (`keyroute::config`: twemproxy, nginx, HAProxy) on
//! arbitrary text: never panic, every refusal carries a code, and an accepted pool routes
//! every key to one of its servers, the same way when read again. The resolver answers
//! every `include` with the text itself, so an include cycle must be refused, not recursed
//! into until the stack runs out.
#![no_main]

use keyroute::config::{detect_format, read_config};
use keyroute::engine::Engine;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = detect_format(&text);
    let mut resolve = |_: &str| Some(text.to_string());
    let first = read_config(&text, "fuzz.conf", None, &mut resolve);
    let again = read_config(&text, "fuzz.conf", None, &mut resolve);
    match (&first, &again) {
        (Ok(cfg), Ok(cfg2)) => {
            for key in [&b""[..], b"a", b"/index.html", b"user:42", &[0xff, 0, 0xfe]] {
                let owner = cfg.router.get(key);
                assert_eq!(owner, cfg2.router.get(key), "read twice, answered twice");
                if let Some(name) = owner {
                    assert!(
                        cfg.servers.iter().any(|s| s.name == name),
                        "{name:?} is no server of the pool"
                    );
                }
            }
        }
        (Err(e), Err(e2)) => {
            assert!(!e.code().as_str().is_empty());
            assert_eq!(e.code(), e2.code(), "refused twice the same way");
        }
        _ => panic!("the same text read twice gave different results"),
    }
});

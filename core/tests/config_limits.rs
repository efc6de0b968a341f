//! The proxy-configuration readers under hostile input: a bounded total of text (the file
//! and every include, each time it is included) and a bounded count of includes. Reading
//! time (linear in the servers, at most 1 s for 200k) is measured by a benchmark, side by
//! side with `nginx -t`: `bench/benches/config.rs`.

use keyroute::config::{read_config, MAX_CONFIG_BYTES, MAX_INCLUDES};
use keyroute::engine::EngineError;

fn site(e: &EngineError) -> (String, String, usize, String) {
    let s = e.config_site().expect("a config error");
    (
        e.code().as_str().into(),
        s.file.clone(),
        s.line,
        s.reason.clone(),
    )
}

/// 8 files, each including the next 10 times (the finding: 35.7 s, then an abort at
/// 1.7 GB): refused with BAD_CONFIG after at most MAX_INCLUDES includes are followed.
#[test]
fn an_include_fan_out_is_refused_after_the_include_bound() {
    let main = "upstream u {\n hash $uri consistent;\n server 10.0.0.1:80;\n include f2.conf;\n}\n";
    let mut reads = 0usize;
    let mut resolve = |name: &str| -> Option<String> {
        reads += 1;
        let n: usize = name[1..name.len() - 5].parse().expect("fN.conf");
        Some(if n < 8 {
            format!("include f{}.conf;\n", n + 1).repeat(10)
        } else {
            "server 10.0.0.2:80;\n".repeat(10)
        })
    };
    let e = read_config(main, "main.conf", None, &mut resolve).expect_err("refused");
    let (code, file, line, reason) = site(&e);
    assert_eq!(code, "BAD_CONFIG");
    assert!(file.starts_with('f') && file.ends_with(".conf"), "{file}");
    assert!(line > 0);
    assert!(reason.contains("includes in all"), "{reason}");
    assert_eq!(reads, MAX_INCLUDES, "includes followed");
}

/// An included file (say /dev/zero read by a caller's resolver) that is over the total is
/// refused naming it, as is a configuration text over it.
#[test]
fn text_over_the_total_is_refused_naming_its_file() {
    let main =
        "upstream u {\n hash $uri consistent;\n server 10.0.0.1:80;\n include zero.conf;\n}\n";
    let big = "#".repeat(MAX_CONFIG_BYTES);
    let e = read_config(main, "main.conf", None, &mut |_| Some(big.clone())).expect_err("refused");
    let (code, file, _, reason) = site(&e);
    assert_eq!((code.as_str(), file.as_str()), ("BAD_CONFIG", "zero.conf"));
    assert!(reason.contains("64 MiB"), "{reason}");

    // The same text, included ten times, each within the bound alone.
    let part = "#".repeat(MAX_CONFIG_BYTES / 8);
    let main = format!(
        "upstream u {{\n hash $uri consistent;\n server 10.0.0.1:80;\n{}}}\n",
        " include part.conf;\n".repeat(10)
    );
    let e =
        read_config(&main, "main.conf", None, &mut |_| Some(part.clone())).expect_err("refused");
    assert_eq!(site(&e).1, "part.conf");

    let text = format!(
        "backend b\n balance uri\n server s 10.0.0.1:80\n{}",
        "#".repeat(MAX_CONFIG_BYTES)
    );
    let e = read_config(&text, "big.cfg", None, &mut |_| None).expect_err("refused");
    assert_eq!(site(&e).0, "BAD_CONFIG");
    assert_eq!(site(&e).1, "big.cfg");
}

/// `balance uri` options HAProxy refuses are refused (they were accepted); the ones it
/// takes still read.
#[test]
fn haproxy_balance_uri_options_are_checked() {
    let cfg = |opts: &str| format!("backend b\n balance uri {opts}\n server s1 10.0.0.1:80\n");
    for opts in [
        "len abc", "len -5", "depth -1", "bogus 3", "len", "depth 0", "len +3",
    ] {
        let e = read_config(&cfg(opts), "h.cfg", None, &mut |_| None).expect_err(opts);
        let (code, _, line, reason) = site(&e);
        assert_eq!((code.as_str(), line), ("BAD_CONFIG", 2), "{opts}: {reason}");
    }
    for opts in [
        "len 5",
        "depth 2",
        "whole",
        "path-only",
        "whole len 10 depth 3",
        "",
    ] {
        read_config(&cfg(opts), "h.cfg", None, &mut |_| None).expect(opts);
    }
}

/// Server names with NUL or terminal escape bytes are refused in every reader and in the
/// node-list grammar, and the error shows them escaped (they were taken and printed raw).
#[test]
fn control_characters_in_names_are_refused() {
    let texts = [
        "upstream u {\n hash $uri consistent;\n server \"a\u{1b}[2J:80\";\n}\n",
        "upstream u {\n hash $uri consistent;\n server a\u{0}b:80;\n}\n",
        "alpha:\n  servers:\n   - 10.0.0.1:11211:1 cache\u{1b}]0;x\u{7}\n",
        "alpha:\n  servers:\n   - 10.0.0\u{0}.1:11211:1\n",
        "backend b\n balance uri\n server s\u{1b}1 10.0.0.1:80\n",
    ];
    for t in texts {
        let e = read_config(t, "c.conf", None, &mut |_| None).expect_err(t);
        let (code, _, _, reason) = site(&e);
        assert_eq!(code, "BAD_CONFIG", "{t:?}: {reason}");
        assert!(reason.contains("control characters"), "{reason}");
        let shown = e.to_string();
        assert!(!shown.contains(['\u{0}', '\u{1b}', '\u{7}']), "{shown:?}");
    }
    for list in ["a\u{0}b", "cache\u{1b}[31m=2", "10.0.0.1:11211:1 x\u{9b}y"] {
        let e = keyroute::ring::parse_nodes(list).expect_err(list);
        assert_eq!(e.code().as_str(), "BAD_NODE_SPEC");
        assert!(
            !e.to_string().contains(['\u{0}', '\u{1b}', '\u{9b}']),
            "{e}"
        );
    }
    // Tabs still separate a ketama.servers line.
    assert_eq!(
        keyroute::ring::parse_nodes("10.0.1.1:11211\t600").expect("tab")[0].weight,
        600
    );
}

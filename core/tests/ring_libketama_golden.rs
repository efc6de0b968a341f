//! libketama's own golden test (`libketama/test.sh`): keys "0".."999999" routed over the
//! server list `ketama.servers`, one line `"<key hash> <point> <server>"` per key after
//! an empty first line; the md5 of that output must be 5672b131391f5aa2b280936aec1eea74.
//!
//! The server list is libketama's data file; it is not shipped by any registry package, and
//! only the project's `shared/` folder may hold data from a fetched repository, so the test
//! reads it from `KETAMA_SERVERS` or `../shared/ketama.servers` and says so when it is
//! absent.

use std::fmt::Write as _;
use std::path::PathBuf;

use keyroute::ring::{parse_nodes_file, Profile, Ring};
use md5::{Digest, Md5};

const GOLDEN_MD5: &str = "5672b131391f5aa2b280936aec1eea74";

fn server_list() -> Option<(PathBuf, String)> {
    let candidates = [
        std::env::var_os("KETAMA_SERVERS").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/ketama.servers")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
}

#[test]
fn libketama_test_sh_checksum() {
    let Some((path, text)) = server_list() else {
        eprintln!("SKIPPED: no ketama.servers (set KETAMA_SERVERS or add shared/ketama.servers)");
        return;
    };
    // libketama's file: "addr<TAB>memory" per line, '#' comments.
    let nodes = parse_nodes_file(&text).expect("server list");
    let ring = Ring::with_nodes(Profile::libketama(), nodes).expect("ring");
    let mut out = String::with_capacity(40 << 20);
    out.push('\n');
    for i in 0..1_000_000u32 {
        let key = i.to_string();
        let h = ring.hash_key(key.as_bytes());
        let p = ring.point_for_hash(h).expect("non-empty");
        let node = ring.nodes()[ring.owners()[p] as usize].name();
        let _ = writeln!(out, "{h} {} {node}", ring.positions()[p]);
    }
    let got: String = Md5::digest(out.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        got,
        GOLDEN_MD5,
        "libketama golden output over {}",
        path.display()
    );
    eprintln!(
        "libketama test.sh checksum reproduced over {}",
        path.display()
    );
}

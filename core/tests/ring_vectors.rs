//! Every ring vector generated from a real peer (tests/vectors/ring/*.json) must agree
//! with keyroute, key for key, one by one and in batches.

use std::path::PathBuf;

use keyroute::ring::{Profile, ProfileOptions, Ring};
use serde::Deserialize;

#[derive(Deserialize)]
struct Replicas {
    n: usize,
    expect: Vec<Vec<String>>,
}

#[derive(Deserialize, Default)]
struct Options {
    default_port: Option<u16>,
    points_per_digest: Option<u8>,
    vnodes: Option<u32>,
}

#[derive(Deserialize)]
struct Vector {
    peer: String,
    profile: String,
    #[serde(default)]
    options: Options,
    nodes: Vec<(String, u32)>,
    point_count: Option<usize>,
    keys: Vec<String>,
    expect: Vec<String>,
    replicas: Option<Replicas>,
}

fn vector_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/ring");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("golden"))
        })
        .collect();
    files.sort();
    files
}

fn build(v: &Vector) -> Ring {
    let options = ProfileOptions {
        vnodes: v.options.vnodes.map(i128::from),
        points_per_digest: v.options.points_per_digest.map(i128::from),
        default_port: v.options.default_port.map(i128::from),
    };
    let profile = Profile::from_options(&v.profile, &options).expect("profile");
    Ring::with_nodes(profile, v.nodes.iter().map(|(n, w)| (n.as_str(), *w))).expect("ring")
}

#[test]
fn every_ring_vector_agrees_with_its_peer() {
    let files = vector_files();
    assert!(
        !files.is_empty(),
        "no ring vectors found: run `make vectors`"
    );
    let mut checked = 0usize;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read vector");
        let v: Vector =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ring = build(&v);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(pc) = v.point_count {
            assert_eq!(ring.point_count(), pc, "{name}: point count ({})", v.peer);
        }
        assert_eq!(v.keys.len(), v.expect.len(), "{name}: malformed");
        let mismatches: Vec<_> = v
            .keys
            .iter()
            .zip(&v.expect)
            .filter(|(k, e)| ring.get(k.as_bytes()) != Some(e.as_str()))
            .take(5)
            .collect();
        assert!(
            mismatches.is_empty(),
            "{name} ({}): first mismatches {mismatches:?}",
            v.peer
        );
        // The batch path too (MD5 profiles hash 32 keys at a time there: md5_many.rs;
        // the suite runs again with KEYROUTE_MD5=scalar, mk/10-rust.mk).
        let mut owners = Vec::new();
        ring.get_many_into(v.keys.iter().map(String::as_bytes), &mut owners);
        let batch: Vec<Option<&str>> = owners
            .iter()
            .map(|o| o.map(|i| ring.nodes()[i].name()))
            .collect();
        let want: Vec<Option<&str>> = v.expect.iter().map(|e| Some(e.as_str())).collect();
        assert!(
            batch == want,
            "{name} ({}): get_many differs from the peer",
            v.peer
        );
        if let Some(r) = &v.replicas {
            for (k, want) in v.keys.iter().zip(&r.expect) {
                assert_eq!(
                    &ring.get_n(k.as_bytes(), r.n),
                    want,
                    "{name}: replicas of {k:?}"
                );
            }
        }
        checked += v.keys.len();
    }
    eprintln!("{} ring vector files, {checked} keys agree", files.len());
}

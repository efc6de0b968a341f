//! Engines and fleet profiles (issue 16): lookups side by side with pingora-ketama (nginx's
//! ring) in the same run, and the figures the issue sets targets for: Maglev after hashing,
//! jump at 1000 nodes, rendezvous top-1 at 100 nodes, the non-MD5 profiles at 100 nodes.
//!
//! `make bench-rust` (or `cargo bench -p keyroute-bench --bench engines`); with
//! `KEYROUTE_BENCH_CLOCK=cpu` the figures are this thread's CPU time. After the run the
//! medians are written to `build/bench/rust-engines.json` for `make bench-report`.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::SystemTime;

use criterion::{criterion_group, Criterion, Throughput};
use keyroute::engine::{Engine, Kind, Router};
use keyroute::ring::NodeSpec;
use keyroute_bench::report::{crate_version, CriterionRun, Row, Suite};

#[path = "common/clock.rs"]
mod clock;
use clock::Clock;

fn keys16() -> Vec<[u8; 16]> {
    (0u64..4096)
        .map(|i| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
            k[8..].copy_from_slice(b"user:key");
            k
        })
        .collect()
}

fn nodes(names: impl Iterator<Item = String>) -> Vec<NodeSpec> {
    names
        .map(|name| NodeSpec {
            name,
            weight: 1,
            address: None,
        })
        .collect()
}

/// `10.0.x.y:11211` for n in 0..count: the servers pingora-ketama can express.
fn ip_port(n: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, (n >> 8) as u8, n as u8], 11211))
}

const NGINX: &str = "fleet/nginx 100 servers, 16 B keys";
const PROFILES: &str = "fleet/profiles 100 nodes, 16 B keys";
const ENGINES: &str = "engines, 16 B keys";

/// The profiles with non-MD5 hashes the issue targets (≤ 40 ns per lookup with hashing).
const NON_MD5: [&str; 6] = [
    "nginx",
    "haproxy",
    "envoy-ring",
    "envoy-maglev",
    "go-redis",
    "redis-rb",
];

fn lookups(c: &mut Criterion<Clock>) {
    let keys = keys16();
    let mut i = 0usize;

    let mut g = c.benchmark_group(NGINX);
    g.throughput(Throughput::Elements(1));
    let servers = nodes((0..100).map(|n| ip_port(n).to_string()));
    let nginx = Router::build("nginx", &servers, &[]).expect("nginx");
    g.bench_function("keyroute nginx get", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(nginx.get_index(black_box(&keys[i])))
        })
    });
    let buckets: Vec<pingora_ketama::Bucket> = (0..100u16)
        .map(|n| pingora_ketama::Bucket::new(ip_port(n), 1))
        .collect();
    let cont = pingora_ketama::Continuum::new(&buckets);
    g.bench_function("pingora-ketama node", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(cont.node(black_box(&keys[i])))
        })
    });
    g.finish();

    let mut g = c.benchmark_group(PROFILES);
    g.throughput(Throughput::Elements(1));
    for name in NON_MD5 {
        let r =
            Router::build(name, &nodes((0..100).map(|n| ip_port(n).to_string())), &[]).expect(name);
        g.bench_function(format!("keyroute {name} get"), |b| {
            b.iter(|| {
                i = (i + 1) & 4095;
                black_box(r.get_index(black_box(&keys[i])))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group(ENGINES);
    g.throughput(Throughput::Elements(1));
    let jump =
        Router::build("jump", &nodes((0..1000).map(|n| format!("node-{n}"))), &[]).expect("jump");
    g.bench_function("jump 1000 nodes get (xxh64 key hash included)", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(jump.get_index(black_box(&keys[i])))
        })
    });
    let guava = Router::build(
        "guava-jump",
        &nodes((0..1000).map(|n| format!("node-{n}"))),
        &[],
    )
    .expect("guava");
    g.bench_function("guava-jump 1000 nodes get (murmur3_128 included)", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(guava.get_index(black_box(&keys[i])))
        })
    });
    let hrw = Router::build(
        "rendezvous",
        &nodes((0..100).map(|n| format!("node-{n}"))),
        &[],
    )
    .expect("rendezvous");
    g.bench_function("rendezvous 100 nodes top-1", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(hrw.get_index(black_box(&keys[i])))
        })
    });
    let maglev = Router::build("maglev", &nodes((0..100).map(|n| format!("node-{n}"))), &[])
        .expect("maglev");
    g.bench_function("maglev 100 nodes get (hash included)", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(maglev.get_index(black_box(&keys[i])))
        })
    });
    let Kind::Table(table) = maglev.kind() else {
        panic!("maglev is a table")
    };
    let hashes: Vec<u64> = keys.iter().map(|k| table.hash_key(k)).collect();
    g.bench_function("maglev 100 nodes lookup after hashing", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(table.owner_of_hash(black_box(hashes[i])))
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = lookups
}

fn main() {
    let started = SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    report(&CriterionRun::since(started));
}

/// Whether keyroute's nginx profile and pingora-ketama pick the same server for every
/// benchmark key (they should for `ip:port` servers: issue 16).
fn nginx_same_answers() -> bool {
    let servers = nodes((0..100).map(|n| ip_port(n).to_string()));
    let nginx = Router::build("nginx", &servers, &[]).expect("nginx");
    let buckets: Vec<pingora_ketama::Bucket> = (0..100u16)
        .map(|n| pingora_ketama::Bucket::new(ip_port(n), 1))
        .collect();
    let cont = pingora_ketama::Continuum::new(&buckets);
    keys16()
        .iter()
        .all(|k| nginx.get(k).map(str::to_string) == cont.node(k).map(|a| a.to_string()))
}

/// This run's figures as report rows (`build/bench/rust-engines.json`).
fn report(run: &CriterionRun) {
    if run.is_empty() {
        println!("bench report: no criterion figures from this run (filtered or --test); nothing written");
        return;
    }
    let measure = Clock::from_env().measure();
    let mut suite = Suite::new(
        "rust-engines",
        "bench/benches/engines.rs",
        "criterion: median time per call over its samples; each benchmark after the other (not interleaved)",
    );
    let per_call = |id: &str| run.median(id);
    if let (Some(ns), Some(peer)) = (
        per_call(&format!("{NGINX}/keyroute nginx get")),
        per_call(&format!("{NGINX}/pingora-ketama node")),
    ) {
        suite.push(
            Row::new(
                "engines/nginx-vs-pingora",
                "Fleet profiles",
                "Rust Router::get_index, nginx profile (hash $key consistent), 100 ip:port servers, 16 B keys, vs pingora-ketama Continuum::node",
                measure,
                "ns/call",
                ns,
            )
            .peer("pingora-ketama node", crate_version("pingora-ketama"), peer)
            .same_answers(nginx_same_answers())
            .like_for_like(true)
            .headline(),
        );
    }
    for name in NON_MD5 {
        if let Some(ns) = per_call(&format!("{PROFILES}/keyroute {name} get")) {
            suite.push(
                Row::new(
                    format!("engines/{name}-get"),
                    "Fleet profiles",
                    format!("Rust Router::get_index, {name} profile, 100 nodes, 16 B keys, key hashing included"),
                    measure,
                    "ns/call",
                    ns,
                )
                .note("issue 16's target: at most 40 ns"),
            );
        }
    }
    for (id, label, what, target) in [
        (
            "engines/jump-1000",
            "jump 1000 nodes get (xxh64 key hash included)",
            "Rust jump (paper), 1000 nodes, 16 B keys, XXH64 key hash included",
            "at most 30 ns",
        ),
        (
            "engines/guava-jump-1000",
            "guava-jump 1000 nodes get (murmur3_128 included)",
            "Rust Guava's jump, 1000 nodes, 16 B keys, murmur3_128 key hash included",
            "none (the paper's jump: at most 30 ns)",
        ),
        (
            "engines/rendezvous-100",
            "rendezvous 100 nodes top-1",
            "Rust weighted rendezvous top-1, 100 nodes, 16 B keys",
            "at most 150 ns",
        ),
        (
            "engines/maglev-100",
            "maglev 100 nodes get (hash included)",
            "Rust Maglev, 100 nodes, table 65537, 16 B keys, XXH64 key hash included",
            "none with hashing (after hashing: at most 10 ns)",
        ),
        (
            "engines/maglev-after-hash",
            "maglev 100 nodes lookup after hashing",
            "Rust Maglev table lookup of a hashed key, 100 nodes, table 65537",
            "at most 10 ns",
        ),
    ] {
        if let Some(ns) = per_call(&format!("{ENGINES}/{label}")) {
            let mut row = Row::new(id, "Engines", what, measure, "ns/call", ns)
                .note(format!("issue 16's target: {target}"));
            if id == "engines/jump-1000" {
                row = row.headline();
            }
            suite.push(row);
        }
    }
    if let Err(e) = suite.write() {
        eprintln!("bench report: could not write rust-engines.json: {e}");
        std::process::exit(1);
    }
}

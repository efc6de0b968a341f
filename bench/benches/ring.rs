//! Ring lookups and builds, side by side with peer crates in the same run.
//!
//! `make bench-rust` (or `cargo bench -p keyroute-bench --bench ring`); with
//! `KEYROUTE_BENCH_CLOCK=cpu` the figures are this thread's CPU time (see
//! `common/clock.rs`). After the run the figures (criterion's medians) are written to
//! `build/bench/rust-ring.json` for `make bench-report` (`bench/README.md`).

use std::hash::{Hash, Hasher};
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::SystemTime;

use criterion::measurement::Measurement;
use criterion::{criterion_group, Criterion, Throughput};
use keyroute::ring::{md5_key_hashes_with, Md5Path, Profile, Ring};
use keyroute_bench::report::{crate_version, CriterionRun, Row, Suite};

#[path = "common/clock.rs"]
mod clock;
use clock::Clock;

fn keys16() -> Vec<[u8; 16]> {
    // 16-byte keys, deterministic, spread over the circle.
    (0u64..4096)
        .map(|i| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
            k[8..].copy_from_slice(b"user:key");
            k
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VNode {
    node: u32,
    vnode: u32,
}

impl Hash for VNode {
    fn hash<H: Hasher>(&self, s: &mut H) {
        format!("node-{}-{}", self.node, self.vnode).hash(s);
    }
}

fn lookups(c: &mut Criterion<Clock>) {
    let keys = keys16();
    let nodes: Vec<(String, u32)> = (0..100).map(|i| (format!("node-{i}"), 1)).collect();

    let mut g = c.benchmark_group("lookup/native 100x160, 16 B keys");
    g.throughput(Throughput::Elements(1));
    let native = Ring::with_nodes(Profile::native(), nodes.clone()).expect("ring");
    let mut i = 0usize;
    g.bench_function("keyroute native get", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(native.get_index(black_box(&keys[i])))
        })
    });
    let mut peer = hashring::HashRing::new();
    for n in 0..100u32 {
        for v in 0..160u32 {
            peer.add(VNode { node: n, vnode: v });
        }
    }
    g.bench_function("hashring crate get", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(peer.get(black_box(&keys[i])).map(|v| v.node))
        })
    });
    g.bench_function("keyroute native key hash only", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(keyroute::ring::key_hash(
                keyroute::ring::PointHash::SipHash13,
                black_box(&keys[i]),
            ))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("lookup/ketama 100 nodes, 16 B keys");
    g.throughput(Throughput::Elements(1));
    g.bench_function("keyroute md5 key hash only", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(keyroute::ring::key_hash(
                keyroute::ring::PointHash::Md5,
                black_box(&keys[i]),
            ))
        })
    });
    g.throughput(Throughput::Elements(1));
    for (label, profile) in [
        ("keyroute libketama get", Profile::libketama()),
        ("keyroute libmemcached get", Profile::libmemcached()),
        ("keyroute uhashring get", Profile::uhashring()),
    ] {
        let ring = Ring::with_nodes(profile, nodes.clone()).expect("ring");
        g.bench_function(label, |b| {
            b.iter(|| {
                i = (i + 1) & 4095;
                black_box(ring.get_index(black_box(&keys[i])))
            })
        });
    }
    let buckets: Vec<pingora_ketama::Bucket> = (0..100u16)
        .map(|n| {
            pingora_ketama::Bucket::new(
                SocketAddr::from(([10, 0, (n >> 8) as u8, n as u8], 11211)),
                1,
            )
        })
        .collect();
    let cont = pingora_ketama::Continuum::new(&buckets);
    g.bench_function("pingora-ketama node_idx", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            black_box(cont.node_idx(black_box(&keys[i])))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("lookup/batch native 100x160");
    g.throughput(Throughput::Elements(keys.len() as u64));
    let mut out = Vec::with_capacity(keys.len());
    g.bench_function("keyroute get_many_into 4096 keys", |b| {
        b.iter(|| {
            out.clear();
            native.get_many_into(black_box(&keys), &mut out);
            black_box(out.len())
        })
    });
    g.finish();

    // The MD5 profiles in batches: 32 keys hashed at once where the CPU has AVX-512
    // (md5_many.rs), against the same keys one by one, and the key hashing alone by each
    // path.
    let mut g = c.benchmark_group(KETAMA_BATCH);
    g.throughput(Throughput::Elements(keys.len() as u64));
    let ketama = Ring::with_nodes(Profile::libketama(), nodes.clone()).expect("ring");
    g.bench_function("keyroute get_many_into 4096 keys", |b| {
        b.iter(|| {
            out.clear();
            ketama.get_many_into(black_box(&keys), &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("keyroute get_index one by one 4096 keys", |b| {
        b.iter(|| {
            out.clear();
            out.extend(black_box(&keys).iter().map(|k| ketama.get_index(k)));
            black_box(out.len())
        })
    });
    let mut hashes = vec![0u32; keys.len()];
    for path in Md5Path::ALL.into_iter().filter(|p| p.available()) {
        g.bench_function(format!("md5 key hashes 4096 keys, {path:?} path"), |b| {
            b.iter(|| black_box(md5_key_hashes_with(path, black_box(&keys), &mut hashes)))
        });
    }
    g.finish();
}

const KETAMA_BATCH: &str = "lookup/batch libketama 100x160";

fn builds(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10);
    let nodes: Vec<(String, u32)> = (0..1000)
        .map(|i| (format!("10.0.{}.{}:6379", i / 256, i % 256), 1))
        .collect();
    g.bench_function("keyroute native 1000x160", |b| {
        b.iter(|| {
            black_box(
                Ring::with_nodes(Profile::native(), nodes.clone())
                    .expect("ring")
                    .point_count(),
            )
        })
    });
    g.bench_function("keyroute libketama 1000 nodes", |b| {
        b.iter(|| {
            black_box(
                Ring::with_nodes(Profile::libketama(), nodes.clone())
                    .expect("ring")
                    .point_count(),
            )
        })
    });
    let many: Vec<(String, u32)> = (0..100_000).map(|i| (format!("node-{i}"), 1)).collect();
    let one_vnode = Profile::native().with_vnodes(1).expect("profile");
    g.bench_function("keyroute native 100000x1", |b| {
        b.iter(|| {
            black_box(
                Ring::with_nodes(one_vnode, many.clone())
                    .expect("ring")
                    .point_count(),
            )
        })
    });
    let too_many: Vec<(String, u32)> = (0..300_000).map(|i| (format!("node-{i}"), 1)).collect();
    g.bench_function("keyroute libketama 300000 nodes to the point limit", |b| {
        b.iter(|| black_box(Ring::with_nodes(Profile::libketama(), too_many.clone()).is_err()))
    });
    g.bench_function("keyroute native 1000 adds from empty", |b| {
        b.iter(|| {
            let mut ring = Ring::new(Profile::native());
            for (name, w) in &nodes {
                ring.add(name, *w).expect("add");
            }
            black_box(ring.point_count())
        })
    });
    g.finish();
}

/// One change to a built ring, as a long-lived ring takes it: each iteration makes the
/// change on the same ring and then undoes it, untimed (Python's bench measures the same
/// way). A fresh clone per iteration would time the clone's exact-capacity vectors
/// growing on their first push, which a ring in use has long paid: 1.2 ms instead of 0.6
/// for one add to the 30,000 x 160 ring, side by side.
fn changes(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("change");
    g.sample_size(20);
    let names = |n: usize| -> Vec<(String, u32)> {
        (0..n)
            .map(|i| (format!("10.1.{}.{}:6379", i / 256, i % 256), 1))
            .collect()
    };
    let cases = [
        ("native 1000x160", Profile::native(), 1000usize),
        (
            "native 30000x1",
            Profile::native().with_vnodes(1).expect("profile"),
            30_000,
        ),
        ("native 30000x160", Profile::native(), 30_000),
        ("libketama 1000", Profile::libketama(), 1000),
    ];
    for (label, profile, n) in cases {
        let mut ring = Ring::with_nodes(profile, names(n)).expect("ring");
        // Node 7 (of the first thousand): its removal renumbers almost every owner.
        let seventh = String::from(ring.nodes()[7].name());
        let clock = Clock::from_env();
        let timed =
            |ring: &mut Ring, iters: u64, change: &dyn Fn(&mut Ring), undo: &dyn Fn(&mut Ring)| {
                let mut total = 0;
                for _ in 0..iters {
                    let t = clock.start();
                    change(ring);
                    total += clock.end(t);
                    undo(ring);
                }
                total
            };
        g.bench_function(format!("add one to {label}"), |b| {
            // A new name each time: its points land in other leaves, as a real add's do
            // (the same name again would find them in cache).
            let k = std::cell::Cell::new(0u64);
            let name = |k: u64| format!("new-node-{k}:6379");
            b.iter_custom(|iters| {
                timed(
                    &mut ring,
                    iters,
                    &|r| {
                        k.set(k.get() + 1);
                        r.add(&name(k.get()), 1).expect("add")
                    },
                    &|r| drop(r.remove(&name(k.get())).expect("undo")),
                )
            })
        });
        g.bench_function(format!("remove one from {label}"), |b| {
            b.iter_custom(|iters| {
                let mut total = 0;
                for _ in 0..iters {
                    // The node now at index 7: each removal renumbers the nodes after it.
                    let name = String::from(ring.nodes()[7].name());
                    let t = clock.start();
                    let node = ring.remove(&name).expect("remove");
                    total += clock.end(t);
                    ring.add(node.name(), node.weight()).expect("undo");
                }
                total
            })
        });
        g.bench_function(format!("set_weight one in {label}"), |b| {
            b.iter_custom(|iters| {
                timed(
                    &mut ring,
                    iters,
                    &|r| r.set_weight(&seventh, 2).expect("set_weight"),
                    &|r| r.set_weight(&seventh, 1).expect("undo"),
                )
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = lookups, builds, changes
}

fn main() {
    let started = SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    report(&CriterionRun::since(started));
}

const LOOKUP: &str = "lookup/native 100x160, 16 B keys";
const KETAMA: &str = "lookup/ketama 100 nodes, 16 B keys";

/// This run's figures as report rows (`build/bench/rust-ring.json`).
fn report(run: &CriterionRun) {
    if run.is_empty() {
        println!("bench report: no criterion figures from this run (filtered or --test); nothing written");
        return;
    }
    let measure = Clock::from_env().measure();
    let mut suite = Suite::new(
        "rust-ring",
        "bench/benches/ring.rs",
        "criterion: median time per call over its samples; each benchmark after the other (not interleaved)",
    );
    let per_call = |id: &str| run.median(id);
    let md5 = per_call(&format!("{KETAMA}/keyroute md5 key hash only"));
    if let Some(ns) = per_call(&format!("{LOOKUP}/keyroute native get")) {
        let mut row = Row::new(
            "ring/native-get",
            "Ring lookup",
            "Rust Ring::get_index, native profile, 100 nodes x 160 points, 16 B keys",
            measure,
            "ns/call",
            ns,
        )
        .like_for_like(false)
        .headline()
        .note(
            "not like for like: SipHash-1-3 over the 16 B key vs the hashring crate's \
             SipHash-2-4 over 24 B (Hash of a [u8; 16] writes its length first); different rings",
        );
        if let Some(peer) = per_call(&format!("{LOOKUP}/hashring crate get")) {
            row = row.peer("hashring crate get", crate_version("hashring"), peer);
        }
        suite.push(row);
    }
    if let Some(ns) = per_call(&format!("{LOOKUP}/keyroute native key hash only")) {
        suite.push(Row::new(
            "ring/native-key-hash",
            "Ring lookup",
            "Rust SipHash-1-3 of a 16 B key alone (the native profile's key hash)",
            measure,
            "ns/call",
            ns,
        ));
    }
    if let Some(ns) = per_call("lookup/batch native 100x160/keyroute get_many_into 4096 keys") {
        suite.push(
            Row::new(
                "ring/native-get-many",
                "Ring lookup",
                "Rust Ring::get_many_into, native profile, 4096 keys of 16 B per call",
                measure,
                "ns/key",
                ns / 4096.0,
            )
            .headline(),
        );
    }
    if let (Some(many), Some(one)) = (
        per_call(&format!("{KETAMA_BATCH}/keyroute get_many_into 4096 keys")),
        per_call(&format!(
            "{KETAMA_BATCH}/keyroute get_index one by one 4096 keys"
        )),
    ) {
        suite.push(
            Row::new(
                "ring/libketama-get-many",
                "Ring lookup",
                "Rust Ring::get_many_into, libketama profile, 4096 keys of 16 B per call",
                measure,
                "ns/key",
                many / 4096.0,
            )
            .note(format!(
                "MD5 path {:?}; the same keys one by one: {:.1} ns/key in this run",
                Md5Path::selected(),
                one / 4096.0
            ))
            .headline(),
        );
    }
    for (id, label, profile, headline) in [
        (
            "ring/libketama-get",
            "keyroute libketama get",
            "libketama",
            true,
        ),
        (
            "ring/libmemcached-get",
            "keyroute libmemcached get",
            "libmemcached",
            false,
        ),
        (
            "ring/uhashring-get",
            "keyroute uhashring get",
            "uhashring",
            false,
        ),
    ] {
        if let Some(ns) = per_call(&format!("{KETAMA}/{label}")) {
            let mut row = Row::new(
                id,
                "Ring lookup",
                format!("Rust Ring::get_index, {profile} profile, 100 nodes, 16 B keys"),
                measure,
                "ns/call",
                ns,
            );
            if let Some(md5) = md5 {
                row = row.note(format!("MD5 of the key alone: {md5:.0} ns in this run"));
            }
            if headline {
                row = row.headline();
            }
            suite.push(row);
        }
    }
    if let (Some(ns), Some(peer)) = (
        per_call(&format!("{KETAMA}/keyroute libketama get")),
        per_call(&format!("{KETAMA}/pingora-ketama node_idx")),
    ) {
        suite.push(
            Row::new(
                "ring/libketama-vs-pingora",
                "Ring lookup",
                "Rust Ring::get_index, libketama profile vs pingora-ketama Continuum::node_idx, 100 nodes, 16 B keys",
                measure,
                "ns/call",
                ns,
            )
            .peer("pingora-ketama node_idx", crate_version("pingora-ketama"), peer)
            .like_for_like(false)
            .note("not like for like: pingora-ketama is nginx's ring (CRC32 points), keyroute's libketama profile hashes with MD5"),
        );
    }
    for (id, label, what) in [
        (
            "build/native-1000x160",
            "keyroute native 1000x160",
            "Rust ring build, native profile, 1000 nodes x 160 points",
        ),
        (
            "build/libketama-1000",
            "keyroute libketama 1000 nodes",
            "Rust ring build, libketama profile, 1000 nodes",
        ),
        (
            "build/native-100000x1",
            "keyroute native 100000x1",
            "Rust ring build, native profile, 100,000 nodes x 1 point (route --vnodes 1)",
        ),
        (
            "build/libketama-300000-limit",
            "keyroute libketama 300000 nodes to the point limit",
            "Rust ring build, libketama profile, 300,000 nodes: time to the TooManyPoints error",
        ),
        (
            "build/native-1000-adds",
            "keyroute native 1000 adds from empty",
            "Rust Ring::add 1000 times from an empty native ring (160 points per node)",
        ),
    ] {
        if let Some(ns) = per_call(&format!("build/{label}")) {
            let mut row = Row::new(id, "Ring build", what, measure, "ms/build", ns / 1e6);
            if id.starts_with("build/native") {
                row = row.headline();
            }
            suite.push(row);
        }
    }
    for label in [
        "native 1000x160",
        "native 30000x1",
        "native 30000x160",
        "libketama 1000",
    ] {
        for (op, verb) in [
            ("add", "add one to"),
            ("remove", "remove one from"),
            ("set_weight", "set_weight one in"),
        ] {
            if let Some(ns) = per_call(&format!("change/{verb} {label}")) {
                suite.push(Row::new(
                    format!("change/{op}/{}", label.replace(' ', "-")),
                    "Ring change",
                    format!("Rust Ring::{op} of one node, {label} ring"),
                    measure,
                    "ms/change",
                    ns / 1e6,
                ));
            }
        }
    }
    let nodes: Vec<(String, u32)> = (0..1000)
        .map(|i| (format!("10.0.{}.{}:6379", i / 256, i % 256), 1))
        .collect();
    for (id, profile, what) in [
        (
            "memory/native-1000x160",
            Profile::native(),
            "native profile, 1000 nodes x 160 points",
        ),
        (
            "memory/libketama-1000",
            Profile::libketama(),
            "libketama profile, 1000 nodes",
        ),
    ] {
        let ring = Ring::with_nodes(profile, nodes.clone()).expect("ring");
        suite.push(
            Row::new(
                id,
                "Ring memory",
                format!(
                    "Rust ring circle bytes per point ({what}): positions, owners, lookup index"
                ),
                keyroute_bench::report::Measure::Size,
                "bytes/point",
                ring.circle_bytes() as f64 / ring.point_count() as f64,
            )
            .note("Ring::circle_bytes() / point_count(); node names not counted"),
        );
    }
    if let Err(e) = suite.write() {
        eprintln!("bench report: could not write rust-ring.json: {e}");
        std::process::exit(1);
    }
}

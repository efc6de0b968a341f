//! Ring lookups and builds, side by side with peer crates in the same run.
//!
//! `make bench` (or `cargo bench -p keyroute --bench ring`).

use std::hash::{Hash, Hasher};
use std::hint::black_box;
use std::net::SocketAddr;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use keyroute::ring::{Profile, Ring};

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

fn lookups(c: &mut Criterion) {
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
}

fn builds(c: &mut Criterion) {
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
    g.finish();
}

criterion_group!(benches, lookups, builds);
criterion_main!(benches);

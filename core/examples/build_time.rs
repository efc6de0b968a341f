//! Times ring builds of 1000 nodes: `cargo run --release -p keyroute --example build_time`.
use std::hint::black_box;
use std::time::Instant;

use keyroute::ring::{Profile, Ring};

fn main() {
    let nodes: Vec<(String, u32)> = (0..1000)
        .map(|i| (format!("10.0.{}.{}:6379", i / 256, i % 256), 1))
        .collect();
    for (label, p) in [
        ("native 1000x160", Profile::native()),
        ("libketama 1000", Profile::libketama()),
    ] {
        let mut best = f64::MAX;
        for _ in 0..15 {
            let t = Instant::now();
            let r = Ring::with_nodes(p, nodes.clone()).expect("ring");
            black_box(r.point_count());
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
        }
        println!("build {label}: best of 15 {best:.2} ms");
    }
}

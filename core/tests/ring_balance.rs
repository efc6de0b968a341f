//! Native profile balance: the exact shares of `node-1..node-n` rings at 160 vnodes.

use keyroute::ring::{diff, Profile, Ring};

fn ring(n: usize) -> Ring {
    Ring::with_nodes(
        Profile::native(),
        (1..=n).map(|i| (format!("node-{i}"), 1u32)),
    )
    .expect("ring")
}

#[test]
fn adding_one_node_moves_close_to_the_ideal() {
    for n in [10usize, 100, 1000] {
        let old = ring(n);
        let new = ring(n + 1);
        let d = diff(&old, &new).expect("same hash");
        let ideal = 1.0 / (n + 1) as f64;
        let peak = old.shares().into_iter().fold(0.0, f64::max) * n as f64;
        eprintln!(
            "n={n}: moved {:.5} = {:.3}x the ideal 1/(n+1); peak-to-mean {peak:.3}",
            d.moved_fraction,
            d.moved_fraction / ideal
        );
        assert!(
            d.moved_fraction <= 1.15 * ideal,
            "n={n}: moved {}",
            d.moved_fraction
        );
        assert!(d
            .moved
            .iter()
            .all(|m| m.to.as_deref() == Some(format!("node-{}", n + 1).as_str())));
        assert!(peak < 1.5, "n={n}: peak-to-mean {peak}");
    }
}

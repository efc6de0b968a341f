//! `keyroute simulate`: what adding or removing nodes does to load and keys.

use keyroute::ring::diff;

use super::ring_args::ProfileArgs;
use super::CliError;

/// Simulate a change of N equal nodes and show per-node load before and after.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  keyroute simulate --profile native --nodes 10 --keys 100000 --add 1"
)]
pub struct Args {
    #[command(flatten)]
    pub ring: ProfileArgs,
    /// Number of nodes before the change (named node-1, node-2, …).
    #[arg(long)]
    pub nodes: usize,
    /// Number of keys to route (key-0, key-1, …).
    #[arg(long, default_value_t = 100_000)]
    pub keys: usize,
    /// Add this many nodes.
    #[arg(long, conflicts_with = "remove", required_unless_present = "remove")]
    pub add: Option<usize>,
    /// Remove this many nodes (the last ones).
    #[arg(long)]
    pub remove: Option<usize>,
    /// Bar width in characters.
    #[arg(long, default_value_t = 40)]
    pub width: usize,
}

const MAX_NODES: usize = 100_000;

pub fn run(args: Args) -> Result<(), CliError> {
    if args.nodes == 0 {
        return Err("--nodes must be at least 1".into());
    }
    if args.keys == 0 {
        return Err("--keys must be at least 1".into());
    }
    let after_n = match (args.add, args.remove) {
        (Some(m), _) => args.nodes.checked_add(m).filter(|&n| n <= MAX_NODES),
        (None, Some(m)) if m < args.nodes => Some(args.nodes - m),
        (None, Some(m)) => {
            return Err(format!(
                "cannot remove {m} of {} nodes: at least one must stay",
                args.nodes
            )
            .into())
        }
        (None, None) => return Err("give --add M or --remove M".into()),
    }
    .ok_or_else(|| format!("at most {MAX_NODES} nodes"))?;
    if args.nodes > MAX_NODES {
        return Err(format!("at most {MAX_NODES} nodes").into());
    }
    let names = |n: usize| {
        (1..=n)
            .map(|i| (format!("node-{i}"), 1u32))
            .collect::<Vec<_>>()
    };
    let old = args.ring.ring(names(args.nodes))?;
    let new = args.ring.ring(names(after_n))?;
    let all = old.len().max(new.len());
    let mut before = vec![0usize; all];
    let mut after = vec![0usize; all];
    let mut moved = 0usize;
    let mut key = String::new();
    for k in 0..args.keys {
        key.clear();
        use std::fmt::Write;
        let _ = write!(key, "key-{k}");
        let a = old.get_index(key.as_bytes());
        let b = new.get_index(key.as_bytes());
        // Node i is node-(i+1) in both rings: names are added in the same order.
        if let Some(a) = a {
            before[a] += 1;
        }
        if let Some(b) = b {
            after[b] += 1;
        }
        if a != b {
            moved += 1;
        }
    }
    let d = diff(&old, &new)?;
    let peak = |loads: &[usize], n: usize| -> f64 {
        let max = loads.iter().copied().max().unwrap_or(0) as f64;
        max / (args.keys as f64 / n as f64)
    };
    let top = before
        .iter()
        .chain(&after)
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    println!(
        "profile {}, {} -> {} nodes, {} keys ({} points before, {} after)",
        old.profile().name(),
        args.nodes,
        after_n,
        args.keys,
        old.point_count(),
        new.point_count()
    );
    println!(
        "{:<12} {:>9} {:>9}  load (█ before, ▒ after)",
        "node", "before", "after"
    );
    for i in 0..all {
        let bar = |v: usize, c: char| {
            c.to_string()
                .repeat((v * args.width).div_ceil(top).min(args.width))
        };
        println!(
            "{:<12} {:>9} {:>9}  {}\n{:<12} {:>9} {:>9}  {}",
            format!("node-{}", i + 1),
            if i < old.len() {
                before[i].to_string()
            } else {
                "-".into()
            },
            if i < new.len() {
                after[i].to_string()
            } else {
                "-".into()
            },
            bar(before[i], '█'),
            "",
            "",
            "",
            bar(after[i], '▒'),
        );
    }
    let frac = moved as f64 / args.keys as f64;
    // With equal weights a perfect ring moves |Δn| / max(n_before, n_after) of the keys.
    let ideal = args.nodes.abs_diff(after_n) as f64 / args.nodes.max(after_n) as f64;
    println!();
    println!(
        "keys moved: {moved} of {} = {:.2}%, ideal {:.2}% ({:.2}x the ideal)",
        args.keys,
        frac * 100.0,
        ideal * 100.0,
        frac / ideal
    );
    println!(
        "ring diff:  {:.2}% of the key space moves, in {} arcs; the least any ring could move for \
         these shares is {:.2}%",
        d.moved_fraction * 100.0,
        d.moved.len(),
        d.ideal_fraction * 100.0
    );
    let share_peak = |r: &keyroute::ring::Ring| -> f64 {
        r.shares().into_iter().fold(0.0, f64::max) * r.len() as f64
    };
    println!(
        "peak-to-mean load: keys before {:.3}, after {:.3}; exact ring shares before {:.3}, after {:.3}",
        peak(&before, old.len()),
        peak(&after, new.len()),
        share_peak(&old),
        share_peak(&new)
    );
    Ok(())
}

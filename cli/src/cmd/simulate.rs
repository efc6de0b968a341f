//! `keyroute simulate`: what adding or removing nodes does to load and keys.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use keyroute::engine::{Engine, Kind, Router};
use keyroute::error::ErrorCode;
use keyroute::ring::{diff, NodeSpec, Ring};

use super::ring_args::ProfileArgs;
use super::CliError;

/// Simulate a change of N equal nodes and show per-node load before and after.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Limits: at most 100000 nodes, 1000000000 keys and a bar width of 1000 \
    (TOO_LARGE above). With --keys of a million or more, a progress bar shows on stderr when \
    it is a terminal.\n\n\
    Several engines or profiles (--profile jump,maglev,rendezvous,native, or any engine that \
    is not a ketama ring) print one line each, side by side: the peak-to-mean load before and \
    after, the keys moved against the ideal, and the lookup time per key (ns, this machine, \
    this run: a rough guide; the benchmarks measure it properly).\n\n\
    Examples:\n  keyroute simulate --profile native --nodes 10 --keys 100000 --add 1\n  \
    keyroute simulate --engine jump,rendezvous,maglev,nginx,native --nodes 100 --remove 1"
)]
pub struct Args {
    #[command(flatten)]
    pub ring: ProfileArgs,
    /// Number of nodes before the change (named node-1, node-2, …).
    #[arg(long)]
    pub nodes: usize,
    /// Number of keys to route (key-0, key-1, …).
    #[arg(long, default_value_t = 100_000)]
    pub keys: u64,
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

/// The most nodes a simulated ring has, before or after the change.
pub const MAX_NODES: usize = 100_000;
/// The most keys routed (each routed on both rings: minutes at this size).
pub const MAX_KEYS: u64 = 1_000_000_000;
/// The widest bar.
pub const MAX_WIDTH: usize = 1000;
/// From this many keys on, a progress bar shows on a terminal.
const PROGRESS_FROM: u64 = 1_000_000;

fn too_large(what: &str, given: impl std::fmt::Display, limit: impl std::fmt::Display) -> CliError {
    CliError::new(
        ErrorCode::TooLarge,
        format!("{what} is {given}; the limit is {limit}"),
    )
}

pub fn run(args: Args) -> Result<(), CliError> {
    let out_of_range = |msg: &str| CliError::new(ErrorCode::OutOfRange, msg);
    if args.nodes == 0 {
        return Err(out_of_range("--nodes must be at least 1"));
    }
    if args.keys == 0 {
        return Err(out_of_range("--keys must be at least 1"));
    }
    if args.nodes > MAX_NODES {
        return Err(too_large("--nodes", args.nodes, MAX_NODES));
    }
    if args.keys > MAX_KEYS {
        return Err(too_large("--keys", args.keys, MAX_KEYS));
    }
    if args.width > MAX_WIDTH {
        return Err(too_large("--width", args.width, MAX_WIDTH));
    }
    let after_n = match (args.add, args.remove) {
        (Some(m), _) => args
            .nodes
            .checked_add(m)
            .filter(|&n| n <= MAX_NODES)
            .ok_or_else(|| {
                too_large(
                    "the number of nodes after --add",
                    format!("{} + {m}", args.nodes),
                    MAX_NODES,
                )
            })?,
        (None, Some(m)) if m < args.nodes => args.nodes - m,
        (None, Some(m)) => {
            return Err(out_of_range(&format!(
                "cannot remove {m} of {} nodes: at least one must stay",
                args.nodes
            )))
        }
        (None, None) => return Err(out_of_range("give --add M or --remove M")),
    };
    let engines: Vec<&str> = args
        .ring
        .profile
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    if args.ring.profile.contains(',') {
        return compare(&args, after_n, &engines, None);
    }
    let old = args.ring.router(&specs(args.nodes))?;
    let new = args.ring.router(&specs(after_n))?;
    // A ring profile builds a `Ring`, which also tells the exact arcs that move.
    match (old.kind(), new.kind()) {
        (Kind::Ring(old), Kind::Ring(new)) => ring_report(&args, after_n, old, new),
        _ => compare(&args, after_n, &engines, Some((old, new))),
    }
}

/// Nodes `node-1` .. `node-n`, weight 1.
fn specs(n: usize) -> Vec<NodeSpec> {
    (1..=n)
        .map(|i| NodeSpec {
            name: format!("node-{i}"),
            weight: 1,
            address: None,
        })
        .collect()
}

/// One ring before and after: per-node load bars, keys moved, the exact ring diff.
fn ring_report(args: &Args, after_n: usize, old: &Ring, new: &Ring) -> Result<(), CliError> {
    let all = old.len().max(new.len());
    let mut before = vec![0u64; all];
    let mut after = vec![0u64; all];
    let mut moved = 0u64;
    let mut key = String::new();
    let progress = progress_bar(args.keys);
    for k in 0..args.keys {
        if k % 4096 == 0 {
            progress.set_position(k);
        }
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
    progress.finish_and_clear();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let d = diff(old, new)?;
    let peak = |loads: &[u64], n: usize| -> f64 {
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
    writeln!(
        out,
        "profile {}, {} -> {} nodes, {} keys ({} points before, {} after)",
        old.profile().name(),
        args.nodes,
        after_n,
        args.keys,
        old.point_count(),
        new.point_count()
    )?;
    writeln!(
        out,
        "{:<12} {:>9} {:>9}  load (█ before, ▒ after)",
        "node", "before", "after"
    )?;
    for i in 0..all {
        let bar = |v: u64, c: char| {
            // v <= top <= 10^9 and width <= 1000: no overflow.
            let cells = (v * args.width as u64).div_ceil(top).min(args.width as u64);
            c.to_string().repeat(cells as usize)
        };
        writeln!(
            out,
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
        )?;
    }
    let frac = moved as f64 / args.keys as f64;
    // With equal weights a perfect ring moves |Δn| / max(n_before, n_after) of the keys.
    let ideal = args.nodes.abs_diff(after_n) as f64 / args.nodes.max(after_n) as f64;
    writeln!(out)?;
    writeln!(
        out,
        "keys moved: {moved} of {} = {:.2}%, ideal {:.2}% ({:.2}x the ideal)",
        args.keys,
        frac * 100.0,
        ideal * 100.0,
        frac / ideal
    )?;
    writeln!(
        out,
        "ring diff:  {:.2}% of the key space moves, in {} arcs; the least any ring could move for \
         these shares is {:.2}%",
        d.moved_fraction * 100.0,
        d.moved.len(),
        d.ideal_fraction * 100.0
    )?;
    let share_peak = |r: &keyroute::ring::Ring| -> f64 {
        r.shares().into_iter().fold(0.0, f64::max) * r.len() as f64
    };
    writeln!(
        out,
        "peak-to-mean load: keys before {:.3}, after {:.3}; exact ring shares before {:.3}, after {:.3}",
        peak(&before, old.len()),
        peak(&after, new.len()),
        share_peak(old),
        share_peak(new)
    )?;
    out.flush()?;
    Ok(())
}

/// Several engines side by side: balance, movement and lookup time. `built`: the first
/// engine's routers before and after, when already built.
fn compare(
    args: &Args,
    after_n: usize,
    engines: &[&str],
    mut built: Option<(Router, Router)>,
) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(
        out,
        "{} -> {} nodes, {} keys; peak-to-mean = the busiest node's keys over the mean",
        args.nodes, after_n, args.keys
    )?;
    writeln!(
        out,
        "{:<22} {:>11} {:>11} {:>9} {:>9} {:>8} {:>11}",
        "engine", "peak before", "peak after", "moved %", "ideal %", "x ideal", "ns/lookup"
    )?;
    let ideal = args.nodes.abs_diff(after_n) as f64 / args.nodes.max(after_n) as f64;
    let progress = progress_bar(args.keys.saturating_mul(engines.len() as u64));
    let mut done = 0u64;
    for &name in engines {
        let (old, new) = match built.take() {
            Some(pair) => pair,
            None => (
                args.ring
                    .router_named(name, &specs(args.nodes))
                    .map_err(|e| e.context(name))?,
                args.ring
                    .router_named(name, &specs(after_n))
                    .map_err(|e| e.context(name))?,
            ),
        };
        let all = old.len().max(new.len());
        let (mut before, mut after) = (vec![0u64; all], vec![0u64; all]);
        let mut moved = 0u64;
        let mut key = String::new();
        for k in 0..args.keys {
            if k % 4096 == 0 {
                progress.set_position(done + k);
            }
            key.clear();
            use std::fmt::Write;
            let _ = write!(key, "key-{k}");
            let a = old.get_index(key.as_bytes());
            let b = new.get_index(key.as_bytes());
            // Both lists are node-1, node-2, …: an index names the same node in both.
            if let Some(a) = a {
                before[a] += 1;
            }
            if let Some(b) = b {
                after[b] += 1;
            }
            moved += u64::from(a != b);
        }
        done += args.keys;
        // Lookup time: the new engine alone, over the same keys.
        let start = std::time::Instant::now();
        let mut sink = 0usize;
        for k in 0..args.keys {
            key.clear();
            use std::fmt::Write;
            let _ = write!(key, "key-{k}");
            sink = sink.wrapping_add(
                new.get_index(std::hint::black_box(key.as_bytes()))
                    .unwrap_or(0),
            );
        }
        std::hint::black_box(sink);
        let ns = start.elapsed().as_nanos() as f64 / args.keys as f64;
        let peak = |loads: &[u64], n: usize| {
            loads.iter().copied().max().unwrap_or(0) as f64 / (args.keys as f64 / n as f64)
        };
        let frac = moved as f64 / args.keys as f64;
        writeln!(
            out,
            "{:<22} {:>11.3} {:>11.3} {:>9.2} {:>9.2} {:>8.2} {:>11.0}",
            name,
            peak(&before, old.len()),
            peak(&after, new.len()),
            frac * 100.0,
            ideal * 100.0,
            frac / ideal,
            ns
        )?;
    }
    progress.finish_and_clear();
    out.flush()?;
    Ok(())
}

/// A bar on stderr for long runs when stderr is a terminal; hidden otherwise.
fn progress_bar(keys: u64) -> ProgressBar {
    if keys < PROGRESS_FROM || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(keys), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "keyroute: routing keys {bar:30} {human_pos}/{human_len} ({percent}%, {eta} left)",
    ) {
        bar.set_style(style);
    }
    bar
}

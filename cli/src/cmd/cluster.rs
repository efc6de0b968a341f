//! `keyroute cluster`: a live Redis Cluster's slot map, and live rebalancing with the
//! core planner.
//!
//! * `keyroute cluster slots --redis URL`: one row per node (address, id, role, slot
//!   count, ranges), from `CLUSTER SHARDS` (or `CLUSTER SLOTS` before Redis 7).
//! * `keyroute cluster rebalance --redis URL [--weights NODE=W,...] [--dry-run]`: plans
//!   the fewest slot moves to the weights (default: every master weight 1, so new empty
//!   masters fill up) and executes them live (`SETSLOT IMPORTING/MIGRATING`,
//!   `GETKEYSINSLOT` + `MIGRATE`, `SETSLOT NODE`), unless `--dry-run`.
use std::fmt::Write as _;
use std::io::Write as _;

use keyroute::error::ErrorCode;
use keyroute::ring::parse_weights;
use keyroute::slot::{NodeIndex, Plan, Role, SlotMap};
use keyroute_redis::cluster::reshard::{execute_plan, ReshardOptions};
use keyroute_redis::cluster::topology::{fetch_topology_from, TopologySource};
use keyroute_redis::cluster::ClusterConfig;
use keyroute_redis::{redact, Endpoint};

use super::{CliError, Format};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Print the slot ranges of every node, as a table (or JSON).
    #[command(
        after_help = "--format json prints {\"source\": \"CLUSTER SHARDS\" or \
        \"CLUSTER SLOTS\", \"unassigned\": N, \"map\": {\"nodes\": [{\"id\", \"addr\", \
        \"role\", \"master\" (a replica's master, by index), \"health\", \"slots\": \
        [[start, end], ...]}]}}; \"map\" reads back as keyroute::slot::SlotMap (feature serde)."
    )]
    Slots {
        /// Any node of the cluster: `redis://host:port` or `host:port`.
        #[arg(long, value_name = "URL")]
        redis: String,
        /// Output: a table, or json.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Move slots so masters hold shares proportional to their weights, live.
    #[command(
        after_help = "WEIGHTS is a node list in the core grammar: NODE=WEIGHT (or \
        host:port:WEIGHT), comma-separated; a NODE alone has weight 1. NODE is a master's \
        host:port or its node id (a unique prefix of at least 6 characters is enough). \
        With --weights, every master that owns slots must be listed; weight 0 drains a \
        master, an empty master listed fills up.\n\nExample:\n  \
        keyroute cluster rebalance --redis 127.0.0.1:7000 --weights 127.0.0.1:7000=2,127.0.0.1:7001=1,127.0.0.1:7002=1 --dry-run"
    )]
    Rebalance {
        /// Any node of the cluster: `redis://host:port` or `host:port`.
        #[arg(long, value_name = "URL")]
        redis: String,
        /// Target weights `NODE=WEIGHT,...` (default: every master 1).
        #[arg(long, value_name = "NODE=WEIGHT,...")]
        weights: Option<String>,
        /// Print the plan without moving anything.
        #[arg(long)]
        dry_run: bool,
        /// Keys per GETKEYSINSLOT/MIGRATE batch.
        #[arg(long, default_value_t = 100)]
        batch: usize,
    },
}

pub fn run(args: Args) -> Result<(), CliError> {
    match args.command {
        Sub::Slots { redis, format } => {
            let (map, source) = fetch(&redis)?;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            match format {
                Format::Text => out.write_all(render_slots(&map, source).as_bytes())?,
                Format::Json => {
                    #[derive(serde::Serialize)]
                    struct Output<'a> {
                        source: &'static str,
                        unassigned: usize,
                        map: &'a SlotMap,
                    }
                    let output = Output {
                        source: source_name(source),
                        unassigned: map.unassigned_count(),
                        map: &map,
                    };
                    super::json_line(&mut out, &output)?;
                }
            }
            out.flush()?;
            Ok(())
        }
        Sub::Rebalance {
            redis,
            weights,
            dry_run,
            batch,
        } => rebalance(&redis, weights.as_deref(), dry_run, batch),
    }
}

fn fetch(url: &str) -> Result<(SlotMap, TopologySource), CliError> {
    let config = ClusterConfig::default();
    fetch_topology_from(url, config.timeouts()).map_err(|e| CliError::from(e).context(redact(url)))
}

fn source_name(source: TopologySource) -> &'static str {
    match source {
        TopologySource::Shards => "CLUSTER SHARDS",
        TopologySource::Slots => "CLUSTER SLOTS",
    }
}

fn ranges_text(map: &SlotMap, node: NodeIndex) -> String {
    let parts: Vec<String> = map
        .node_ranges(node)
        .map(|r| {
            if r.start() == r.end() {
                r.start().to_string()
            } else {
                format!("{}-{}", r.start(), r.end())
            }
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(",")
    }
}

fn render_slots(map: &SlotMap, source: TopologySource) -> String {
    let mut rows = vec![[
        "NODE".to_string(),
        "ID".to_string(),
        "ROLE".to_string(),
        "HEALTH".to_string(),
        "SLOTS".to_string(),
        "RANGES".to_string(),
    ]];
    let mut order: Vec<(NodeIndex, &keyroute::slot::Node)> = map.iter().collect();
    // Masters by address, each followed by its replicas.
    order.sort_by(|(_, a), (_, b)| {
        let key = |n: &keyroute::slot::Node| match n.master() {
            Some(m) => (map[m].addr().clone(), 1, n.addr().clone()),
            None => (n.addr().clone(), 0, n.addr().clone()),
        };
        key(a).cmp(&key(b))
    });
    for (i, n) in order {
        let (slots, ranges) = match n.role() {
            Role::Master => (map.slot_count(i).to_string(), ranges_text(map, i)),
            Role::Replica => (
                "-".into(),
                format!(
                    "replica of {}",
                    n.master()
                        .map(|m| map[m].addr().to_string())
                        .unwrap_or_default()
                ),
            ),
        };
        rows.push([
            n.addr().to_string(),
            n.id().chars().take(8).collect(),
            n.role().to_string(),
            n.health().to_string(),
            slots,
            ranges,
        ]);
    }
    let mut widths = [0usize; 6];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, (w, c)) in widths.iter().zip(r).enumerate() {
            if i == 5 {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let unassigned = map.unassigned_count();
    let from = source_name(source);
    let _ = writeln!(out, "({from}; {unassigned} slots unassigned)");
    out
}

fn find_master(map: &SlotMap, name: &str) -> Result<NodeIndex, CliError> {
    if let Some((i, _)) = map.masters().find(|(_, n)| n.addr().to_string() == name) {
        return Ok(i);
    }
    let by_id: Vec<NodeIndex> = map
        .masters()
        .filter(|(_, n)| name.len() >= 6 && n.id().starts_with(name))
        .map(|(i, _)| i)
        .collect();
    match by_id.as_slice() {
        [one] => Ok(*one),
        [] => Err(CliError::new(
            ErrorCode::UnknownNode,
            format!("{name:?} is not a master of this cluster (use host:port or a node id)"),
        )),
        _ => Err(CliError::new(
            ErrorCode::AmbiguousNodeSpec,
            format!("node id prefix {name:?} is ambiguous: give more of the id"),
        )),
    }
}

/// `--weights` through the core grammar, each name a master of `map`.
fn weights_of(map: &SlotMap, spec: &str) -> Result<Vec<(NodeIndex, u64)>, CliError> {
    let parsed = parse_weights(spec).map_err(|e| CliError::from(e).context("--weights"))?;
    parsed
        .into_iter()
        .map(|(name, w)| Ok((find_master(map, &name)?, u64::from(w))))
        .collect()
}

fn rebalance(
    url: &str,
    weights: Option<&str>,
    dry_run: bool,
    batch: usize,
) -> Result<(), CliError> {
    let (map, source) = fetch(url)?;
    if source == TopologySource::Slots {
        eprintln!("keyroute: note: CLUSTER SLOTS lists no empty masters; new masters need Redis 7 (CLUSTER SHARDS)");
    }
    let weights = match weights {
        Some(spec) => weights_of(&map, spec)?,
        None => map.masters().map(|(i, _)| (i, 1)).collect(),
    };
    let plan = Plan::new(&map, &weights)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let name = |n: Option<NodeIndex>| {
        n.map_or_else(|| "(unassigned)".to_string(), |n| map[n].addr().to_string())
    };
    for t in plan.targets() {
        writeln!(
            out,
            "{:<22} weight {:>4}  slots {:>5} -> {:>5}",
            map[t.node].addr().to_string(),
            t.weight,
            t.before,
            t.after
        )?;
    }
    for m in plan.moves() {
        writeln!(
            out,
            "move {:>5}-{:<5} ({:>5} slots) {} -> {}",
            m.start,
            m.end,
            m.len(),
            name(m.from),
            name(Some(m.to))
        )?;
    }
    writeln!(
        out,
        "{} slots to move in {} moves",
        plan.slots_moved(),
        plan.moves().len()
    )?;
    out.flush()?;
    if dry_run || plan.is_empty() {
        return Ok(());
    }
    let options = ReshardOptions {
        batch: batch.max(1),
        // The seed's credentials and TLS open every master and log MIGRATE in.
        credentials: Some(
            Endpoint::parse(url).map_err(|e| CliError::from(e).context(redact(url)))?,
        ),
        ..ReshardOptions::default()
    };
    let report = execute_plan(&map, &plan, &options, |p| {
        if p.slots_done.is_multiple_of(256) || p.slots_done == p.slots_total {
            eprintln!(
                "keyroute: {}/{} slots, {} keys moved",
                p.slots_done, p.slots_total, p.keys_moved
            );
        }
    })?;
    writeln!(
        out,
        "moved {} slots and {} keys",
        report.slots_moved, report.keys_moved
    )?;
    Ok(())
}

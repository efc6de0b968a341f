//! `keyroute affinity`: affinity with a cap on Redis (bounded-load consistent hashing
//! shared by every worker): take, release, show. On a standalone server, or with
//! `--cluster` on a Redis Cluster.
//!
//! ```text
//! keyroute affinity take    --redis 127.0.0.1:6379 --pool '{jobs}:owner' --cap 10 job-42 w1 w2 w3
//! keyroute affinity take    --redis 127.0.0.1:6379 --pool '{jobs}:owner' --c 1.25 \
//!                           --engine rendezvous --nodes w1,w2,w3 job-42
//! keyroute affinity release --redis 127.0.0.1:6379 --pool '{jobs}:owner' job-42
//! keyroute affinity show    --redis 127.0.0.1:6379 --pool '{jobs}:owner'
//! ```
use std::io::Write;

use keyroute::engine::{Engine, Router};
use keyroute::error::ErrorCode;
use keyroute::ring::parse_nodes;
use keyroute_redis::affinity::{Affinity, Cap};
use keyroute_redis::Link;

use super::pool::RedisArgs;
use super::CliError;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "take prints `NODE LOAD CAP new|held`, and exits 1 when every candidate \
    is at the cap (nothing taken). The candidates are the item's nodes in preference \
    order: give them after the item, or give --engine and --nodes and keyroute ranks every \
    node for the item (Router::get_n).\n\n\
    Examples:\n  \
    keyroute affinity take --redis 127.0.0.1:6379 --pool '{jobs}:owner' --cap 10 job-42 w1 w2 w3\n  \
    keyroute affinity take --redis 127.0.0.1:6379 --pool '{jobs}:owner' --c 1.25 --engine rendezvous --nodes w1,w2,w3 job-42\n  \
    keyroute affinity release --redis 127.0.0.1:6379 --pool '{jobs}:owner' job-42"
)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Give an item to its holder, or to the first candidate under the cap.
    Take {
        #[command(flatten)]
        at: RedisArgs,
        /// At most this many items per node (1 to 2^53).
        #[arg(
            long,
            value_name = "N",
            conflicts_with = "c",
            required_unless_present = "c"
        )]
        cap: Option<u64>,
        /// The bounded-loads factor: at most ceil(C * (items held + 1) / candidates).
        #[arg(long, value_name = "C")]
        c: Option<f64>,
        /// Rank the nodes of --nodes for the item with this engine or profile.
        #[arg(long, value_name = "NAME", requires = "nodes")]
        engine: Option<String>,
        /// The nodes the engine ranks (the node-list grammar: a,b=2,...).
        #[arg(long, value_name = "LIST", requires = "engine")]
        nodes: Option<String>,
        /// The item.
        item: String,
        /// The candidate nodes, in preference order (without --engine).
        #[arg(value_name = "CANDIDATE")]
        candidates: Vec<String>,
    },
    /// Free items; print the node each was on (or that it was not held).
    Release {
        #[command(flatten)]
        at: RedisArgs,
        /// The items.
        #[arg(required = true, value_name = "ITEM")]
        items: Vec<String>,
    },
    /// Print every node with the items it holds, then the total.
    Show {
        #[command(flatten)]
        at: RedisArgs,
    },
}

/// The handle and a connection: the key is checked before connecting.
fn open(at: &RedisArgs) -> Result<(Affinity, Link), CliError> {
    let a = Affinity::new(&at.pool).map_err(|e| CliError::from(e).context("--pool"))?;
    Ok((a, at.connect()?))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.action {
        Action::Take {
            at,
            cap,
            c,
            engine,
            nodes,
            item,
            candidates,
        } => {
            let cap = match (cap, c) {
                (Some(n), _) => Cap::Fixed(n),
                (None, Some(c)) => Cap::Factor(c),
                (None, None) => Cap::Fixed(0), // clap requires one; refused by the check
            };
            let ranked: Vec<String> = match (engine, nodes) {
                (Some(engine), Some(nodes)) => {
                    if !candidates.is_empty() {
                        return Err(CliError::new(
                            ErrorCode::BadOption,
                            "give the candidates after the item, or --engine and --nodes, not both",
                        ));
                    }
                    let specs =
                        parse_nodes(&nodes).map_err(|e| CliError::from(e).context("--nodes"))?;
                    let router = Router::build(&engine, &specs, &[])
                        .map_err(|e| CliError::from(e).context("--engine"))?;
                    router
                        .get_n(item.as_bytes(), specs.len())
                        .into_iter()
                        .map(str::to_string)
                        .collect()
                }
                _ => candidates,
            };
            let (a, mut con) = open(&at)?;
            let taken = a
                .take(&mut con, item.as_bytes(), &ranked, cap)
                .map_err(|e| CliError::from(con.explain(e)).context(format!("item {item}")))?;
            let Some(t) = taken else {
                return Err(CliError::empty(format!(
                    "every candidate of {item} is at the cap in {} on {}: nothing taken \
                     (release items, raise the cap, or add nodes)",
                    at.pool,
                    at.place()
                )));
            };
            out.write_all(&t.node)?;
            writeln!(
                out,
                " {} {} {}",
                t.load,
                t.cap,
                if t.new { "new" } else { "held" }
            )?;
        }
        Action::Release { at, items } => {
            let (a, mut con) = open(&at)?;
            for item in items {
                let was = a
                    .release(&mut con, item.as_bytes())
                    .map_err(|e| CliError::from(con.explain(e)).context(format!("item {item}")))?;
                match was {
                    Some(node) => writeln!(
                        out,
                        "{item} released from {}",
                        String::from_utf8_lossy(&node)
                    )?,
                    None => writeln!(out, "{item} was not held; nothing changed")?,
                }
            }
        }
        Action::Show { at } => {
            let (a, mut con) = open(&at)?;
            let rows = a.loads(&mut con).map_err(|e| con.explain(e))?;
            writeln!(
                out,
                "affinity {} ({} nodes holding items):",
                at.pool,
                rows.len()
            )?;
            if rows.is_empty() {
                writeln!(out, "  (none)")?;
            }
            let names: Vec<String> = rows
                .iter()
                .map(|(m, _)| String::from_utf8_lossy(m).into_owned())
                .collect();
            let width = names.iter().map(|m| m.chars().count()).max().unwrap_or(0);
            for (name, (_, n)) in names.iter().zip(&rows) {
                writeln!(out, "  {name:<width$}  {n}")?;
            }
            let held = a.held(&mut con).map_err(|e| con.explain(e))?;
            writeln!(out, "held: {held}")?;
        }
    }
    out.flush()?;
    Ok(())
}

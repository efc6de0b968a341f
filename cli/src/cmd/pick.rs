//! `keyroute pick`: pick the least-used member of a pool on Redis (atomic, shared by every
//! worker), print it, and count the assignment.
//!
//! ```text
//! keyroute pick --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool'
//! keyroute pick --redis 127.0.0.1:6379 --pool '{proxies}:pool' --count 5
//! keyroute pick --cluster --redis 127.0.0.1:7000 --redis 127.0.0.1:7001 --pool '{proxies}:pool'
//! ```
//! Picks are printed as they are made (pipelined in rounds of
//! [`PICK_BATCH`](keyroute_redis::PICK_BATCH)), so a failure mid-run keeps what was
//! printed and says how many were made. An empty or missing pool prints nothing and exits
//! with status 1: make no request.
use std::io::Write;

use keyroute_redis::PICK_BATCH;

use super::pool::RedisArgs;
use super::CliError;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Picks are printed one per line as they are made (pipelined, up to \
    512 per round trip); if Redis fails mid-run, what was printed stands and the error \
    says how many picks were made.\n\n\
    Exit status 1 with a message on stderr when the pool is empty or missing (nothing \
    was picked: make no request); 2 on an error.\n\n\
    With --cluster, --redis names seeds of a Redis Cluster (repeat it for more): picks \
    follow MOVED/ASK and survive a failover (a pick whose reply was lost may or may not \
    have been counted; it is never resent).\n\n\
    Examples:\n  \
    keyroute pick --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool' --count 3\n  \
    keyroute pick --cluster --redis 127.0.0.1:7000 --pool '{proxies}:pool' --count 3"
)]
pub struct Args {
    #[command(flatten)]
    pub at: RedisArgs,
    /// How many picks, one member per line.
    #[arg(long, short = 'n', default_value_t = 1)]
    pub count: u64,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let (pool, mut con) = args.at.open()?;
    let (url, place) = (args.at.shown(), args.at.place());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut done: u64 = 0;
    while done < args.count {
        let batch = usize::try_from(args.count - done).map_or(PICK_BATCH, |n| n.min(PICK_BATCH));
        let result = if batch == 1 {
            pool.pick(&mut con).map(|p| p.into_iter().collect())
        } else {
            pool.pick_many(&mut con, batch)
        };
        let picks: Vec<Vec<u8>> = result.map_err(|e| {
            let counted = if batch == 1 {
                "Redis may have counted it".to_string()
            } else {
                format!("Redis may have counted up to {batch} more")
            };
            CliError::from(con.explain(e)).context(format!(
                "{done} of {} picks made and printed; the next failed ({counted})",
                args.count
            ))
        })?;
        for member in &picks {
            out.write_all(member)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        done += picks.len() as u64;
        if picks.len() < batch {
            let seed = format!(
                "seed it: keyroute pool seed --redis {url} --pool '{}' MEMBER...",
                args.at.pool
            );
            return Err(CliError::empty(if done == 0 {
                format!(
                    "pool {} on {place} is empty or missing: nothing picked ({seed})",
                    args.at.pool
                )
            } else {
                format!(
                    "pool {} on {place} became empty after {done} of {} picks ({seed})",
                    args.at.pool, args.count
                )
            }));
        }
    }
    Ok(())
}

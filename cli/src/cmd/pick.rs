//! `keyroute pick`: pick the least-used member of a pool on Redis (atomic, shared by every
//! worker), print it, and count the assignment.
//!
//! ```text
//! keyroute pick --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool'
//! keyroute pick --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool' --count 5
//! ```
//! An empty or missing pool prints nothing and exits with status 2: make no request.
use std::io::Write;

use super::pool::RedisArgs;
use super::CliError;

#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  \
    keyroute pick --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool'\n\n\
    Exit status 2 with a message on stderr when the pool is empty or missing.")]
pub struct Args {
    #[command(flatten)]
    pub at: RedisArgs,
    /// How many picks (pipelined), one member per line.
    #[arg(long, short = 'n', default_value_t = 1)]
    pub count: usize,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let (pool, mut con) = args.at.open()?;
    let picks = if args.count == 1 {
        pool.pick(&mut con)?.into_iter().collect()
    } else {
        pool.pick_many(&mut con, args.count)?
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for member in &picks {
        out.write_all(member)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    if picks.is_empty() && args.count > 0 {
        return Err(format!(
            "pool {} is empty or missing on {}: no member to pick (seed it: keyroute pool seed --redis {} --pool '{}' MEMBER...)",
            args.at.pool, args.at.redis, args.at.redis, args.at.pool
        )
        .into());
    }
    Ok(())
}

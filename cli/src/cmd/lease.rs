//! `keyroute lease`: least-concurrency selection on Redis (leases with deadlines): seed,
//! remove, acquire, release, reclaim, show. On a standalone server, or with `--cluster` on
//! a Redis Cluster.
//!
//! ```text
//! keyroute lease seed    --redis 127.0.0.1:6379 --pool '{jobs}:busy' w1 w2
//! keyroute lease acquire --redis 127.0.0.1:6379 --pool '{jobs}:busy' --ttl-ms 30000
//! keyroute lease release --redis 127.0.0.1:6379 --pool '{jobs}:busy' 17
//! keyroute lease show    --cluster --redis 127.0.0.1:7000 --pool '{jobs}:busy'
//! ```
use std::io::Write;
use std::time::Duration;

use keyroute_redis::{Lease, Leases, Link, Now, Release};

use super::pool::RedisArgs;
use super::CliError;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "A lease is printed as `MEMBER ID DEADLINE_MS` (the deadline in \
    milliseconds since the Unix epoch, on the server's clock); release it by its ID when \
    the work is done. acquire exits 1 when the pool is empty or missing (nothing leased: \
    make no request).\n\n\
    Examples:\n  \
    keyroute lease seed --redis 127.0.0.1:6379 --pool '{jobs}:busy' w1 w2\n  \
    keyroute lease acquire --redis 127.0.0.1:6379 --pool '{jobs}:busy' --ttl-ms 30000\n  \
    keyroute lease release --cluster --redis 127.0.0.1:7000 --pool '{jobs}:busy' 17"
)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Add members (members already in the pool keep their leases).
    Seed {
        #[command(flatten)]
        at: RedisArgs,
        /// The members to add.
        #[arg(required = true, value_name = "MEMBER")]
        members: Vec<String>,
    },
    /// Take a member out (its leases in flight end when released or reclaimed).
    Remove {
        #[command(flatten)]
        at: RedisArgs,
        /// The member to take out.
        member: String,
    },
    /// Lease the member with the fewest leases in flight; print `MEMBER ID DEADLINE_MS`.
    Acquire {
        #[command(flatten)]
        at: RedisArgs,
        /// How long the lease lasts, in milliseconds (1 to 2^53).
        #[arg(long, value_name = "MS")]
        ttl_ms: u64,
        /// How many leases, one per line.
        #[arg(long, short = 'n', default_value_t = 1)]
        count: u64,
    },
    /// End leases by id; print what each release did.
    Release {
        #[command(flatten)]
        at: RedisArgs,
        /// The lease ids (as `acquire` printed them).
        #[arg(required = true, value_name = "ID")]
        ids: Vec<u64>,
    },
    /// End every lease past its deadline (server clock); print them.
    Reclaim {
        #[command(flatten)]
        at: RedisArgs,
    },
    /// Print every member with its leases in flight, then the total.
    Show {
        #[command(flatten)]
        at: RedisArgs,
    },
}

/// The lease handle and a connection: the pool key is checked before connecting.
fn open(at: &RedisArgs) -> Result<(Leases, Link), CliError> {
    let leases = Leases::new(&at.pool).map_err(|e| CliError::from(e).context("--pool"))?;
    Ok((leases, at.connect()?))
}

fn print_lease(out: &mut impl Write, lease: &Lease) -> std::io::Result<()> {
    out.write_all(&lease.member)?;
    writeln!(out, " {} {}", lease.id, lease.deadline_ms)
}

pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.action {
        Action::Seed { at, members } => {
            let (leases, mut con) = open(&at)?;
            let added = leases
                .seed(&mut con, &members)
                .map_err(|e| con.explain(e))?;
            writeln!(
                out,
                "{added} new member(s) added to {} ({} given)",
                at.pool,
                members.len()
            )?;
        }
        Action::Remove { at, member } => {
            let (leases, mut con) = open(&at)?;
            if leases
                .remove(&mut con, member.as_bytes())
                .map_err(|e| con.explain(e))?
            {
                writeln!(out, "removed {member} from {}", at.pool)?;
            } else {
                writeln!(out, "{member} is not in {}; nothing changed", at.pool)?;
            }
        }
        Action::Acquire { at, ttl_ms, count } => {
            let (leases, mut con) = open(&at)?;
            let ttl = Duration::from_millis(ttl_ms);
            for done in 0..count {
                let lease = leases.acquire(&mut con, ttl).map_err(|e| {
                    CliError::from(con.explain(e)).context(format!(
                        "{done} of {count} leases acquired and printed; the next failed \
                         (Redis may have granted it: it ends at its deadline)"
                    ))
                })?;
                let Some(lease) = lease else {
                    return Err(CliError::empty(format!(
                        "lease pool {} on {} is empty or missing: {done} of {count} leases \
                         acquired (seed it: keyroute lease seed --redis {} --pool '{}' \
                         MEMBER...)",
                        at.pool,
                        at.place(),
                        at.shown(),
                        at.pool
                    )));
                };
                print_lease(&mut out, &lease)?;
                out.flush()?;
            }
        }
        Action::Release { at, ids } => {
            let (leases, mut con) = open(&at)?;
            for id in ids {
                let lease = Lease {
                    member: Vec::new(),
                    id,
                    deadline_ms: 0,
                };
                let what = leases
                    .release(&mut con, &lease)
                    .map_err(|e| CliError::from(con.explain(e)).context(format!("lease {id}")))?;
                let what = match what {
                    Release::Released => "released",
                    Release::Expired => "expired (released past its deadline)",
                    _ => "already_released_or_expired (nothing changed)",
                };
                writeln!(out, "{id} {what}")?;
            }
        }
        Action::Reclaim { at } => {
            let (leases, mut con) = open(&at)?;
            let reclaimed = leases
                .reclaim(&mut con, Now::Server)
                .map_err(|e| con.explain(e))?;
            for lease in &reclaimed {
                print_lease(&mut out, lease)?;
            }
            writeln!(out, "{} lease(s) reclaimed", reclaimed.len())?;
        }
        Action::Show { at } => {
            let (leases, mut con) = open(&at)?;
            let rows = leases.in_flight(&mut con).map_err(|e| con.explain(e))?;
            writeln!(
                out,
                "lease pool {} ({} members, leases in flight):",
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
            let total = leases.outstanding(&mut con).map_err(|e| con.explain(e))?;
            writeln!(out, "outstanding: {total}")?;
        }
    }
    out.flush()?;
    Ok(())
}

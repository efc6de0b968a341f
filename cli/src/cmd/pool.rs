//! `keyroute pool`: manage a least-used pool on Redis (seed, remove, restore, show), or
//! run the same operations on the in-memory model (`simulate`, no Redis needed).
//!
//! ```text
//! keyroute pool seed    --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool' p1 p2 p3
//! keyroute pool remove  --redis URL --pool KEY p2
//! keyroute pool restore --redis URL --pool KEY p2 --mode at_minimum
//! keyroute pool show    --redis URL --pool KEY
//! keyroute pool show    --redis 127.0.0.1:7000 --redis 127.0.0.1:7001 --cluster --pool KEY
//! keyroute pool simulate --picks 7 p1 p2 p3
//! ```
use std::io::Write;
use std::time::Duration;

use keyroute::error::ErrorCode;
use keyroute::select::{checked_picks, Pool, Restore};
use keyroute_redis::{redact, LeastUsed, Link, Timeouts};

use super::CliError;

/// Where the pool lives: shared by `pick` and `pool`.
#[derive(Debug, clap::Args)]
pub struct RedisArgs {
    /// Redis server: redis://[user:password@]host:port[/db], rediss://... (TLS),
    /// redis+unix:///path, redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE, or host:port
    /// (a cluster node works for a hash-tagged pool on that node). With --cluster, a node
    /// of the cluster (repeat --redis to give more seeds). Secrets are never printed.
    #[arg(long, value_name = "URL", required = true)]
    pub redis: Vec<String>,
    /// The pool key, a sorted set; hash-tag it for Redis Cluster: '{proxies}:pool'.
    #[arg(long, value_name = "KEY")]
    pub pool: String,
    /// Connect, read and write timeout in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub timeout_ms: u64,
    /// --redis names seeds of a Redis Cluster: follow MOVED/ASK, retry TRYAGAIN and
    /// CLUSTERDOWN, find the new master after a failover.
    #[arg(long)]
    pub cluster: bool,
    /// TLS: the CA certificate (PEM) that signed Redis's certificate; turns TLS on.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<String>,
    /// TLS: a client certificate (PEM), for servers with tls-auth-clients yes.
    #[arg(long, value_name = "PEM")]
    pub tls_cert: Option<String>,
    /// TLS: the client certificate's key (PEM).
    #[arg(long, value_name = "PEM")]
    pub tls_key: Option<String>,
}

impl RedisArgs {
    /// Where the pool is, passwords redacted, as the user would give it again
    /// (`--redis A [--redis B] [--cluster]`).
    pub fn shown(&self) -> String {
        let mut out = self
            .redis
            .iter()
            .map(|u| redact(u))
            .collect::<Vec<_>>()
            .join(" --redis ");
        if self.cluster {
            out.push_str(" --cluster");
        }
        out
    }

    /// Where the pool is, for a message: the server, or `the Redis Cluster at A, B`.
    pub fn place(&self) -> String {
        let urls: Vec<String> = self.redis.iter().map(|u| redact(u)).collect();
        if self.cluster {
            format!("the Redis Cluster at {}", urls.join(", "))
        } else {
            urls.join(", ")
        }
    }

    /// The pool handle and a connection (or a cluster client with its topology read),
    /// with errors a user can act on.
    pub fn open(&self) -> Result<(LeastUsed, Link), CliError> {
        let pool = LeastUsed::new(&self.pool).map_err(|e| CliError::from(e).context("--pool"))?;
        Ok((pool, self.connect()?))
    }

    /// A connection to the server, or a cluster client with its topology read.
    pub fn connect(&self) -> Result<Link, CliError> {
        let timeouts = Timeouts::uniform(Duration::from_millis(self.timeout_ms.max(1)));
        let urls: Vec<String> = self
            .redis
            .iter()
            .map(|u| {
                keyroute_redis::with_tls_files(
                    u,
                    self.tls_ca.as_deref(),
                    self.tls_cert.as_deref(),
                    self.tls_key.as_deref(),
                )
            })
            .collect();
        let mut con = if self.cluster {
            let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
            Link::cluster(&seeds, timeouts, false)
        } else if let [url] = urls.as_slice() {
            Link::single(url, timeouts)
        } else {
            return Err(CliError::new(
                ErrorCode::BadOption,
                format!(
                    "--redis given {} times: more than one server needs --cluster (they are \
                     then seeds of one Redis Cluster)",
                    self.redis.len()
                ),
            ));
        }
        .map_err(|e| CliError::from(e).context("--redis"))?;
        con.ensure_connected().map_err(|e| {
            let what = if self.cluster {
                "cannot read the topology of"
            } else {
                "cannot reach Redis at"
            };
            CliError::from(e).context(format!("{what} {}", self.place()))
        })?;
        Ok(con)
    }
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    keyroute pool seed --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool' p1 p2 p3\n  \
    keyroute pool show --redis redis://127.0.0.1:6379/ --pool '{proxies}:pool'\n  \
    keyroute pool show --cluster --redis 127.0.0.1:7000 --pool '{proxies}:pool'\n  \
    keyroute pool simulate --picks 7 p1 p2 p3\n\n\
    pool simulate makes at most 16777216 picks (TOO_LARGE above), printed as they are made.")]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Add members at an initial count (existing members keep theirs unless --overwrite).
    Seed {
        #[command(flatten)]
        at: RedisArgs,
        /// The count new members start at.
        #[arg(long, default_value_t = 0)]
        initial: u64,
        /// Also reset members already in the pool to --initial.
        #[arg(long)]
        overwrite: bool,
        /// The members to add.
        #[arg(required = true, value_name = "MEMBER")]
        members: Vec<String>,
    },
    /// Take a member out of the pool, remembering its count.
    Remove {
        #[command(flatten)]
        at: RedisArgs,
        /// The member to take out.
        member: String,
    },
    /// Put a member back: keep its remembered count, or start at the pool's minimum.
    Restore {
        #[command(flatten)]
        at: RedisArgs,
        /// The member to put back.
        member: String,
        /// keep (the count it had when removed) or at_minimum (the lowest count now).
        #[arg(long, default_value = "keep")]
        mode: Restore,
    },
    /// Print every member with its count, in pick order, then the removed members.
    Show {
        #[command(flatten)]
        at: RedisArgs,
    },
    /// Seed the in-memory pool model and pick from it (no Redis): the same semantics as
    /// the scripts on Redis.
    Simulate {
        /// The count members start at.
        #[arg(long, default_value_t = 0)]
        initial: u64,
        /// How many picks (at most 16777216).
        #[arg(long, default_value_t = 10)]
        picks: u64,
        /// Remove this member after half of the picks, and restore it at the minimum
        /// after three quarters.
        #[arg(long, value_name = "MEMBER")]
        churn: Option<String>,
        /// The members.
        #[arg(required = true, value_name = "MEMBER")]
        members: Vec<String>,
    },
}

fn print_counts<'a>(
    out: &mut impl Write,
    title: &str,
    rows: impl IntoIterator<Item = (&'a [u8], u64)>,
) -> std::io::Result<()> {
    let rows: Vec<(String, u64)> = rows
        .into_iter()
        .map(|(m, c)| (String::from_utf8_lossy(m).into_owned(), c))
        .collect();
    writeln!(out, "{title}")?;
    if rows.is_empty() {
        writeln!(out, "  (none)")?;
    }
    let width = rows
        .iter()
        .map(|(m, _)| m.chars().count())
        .max()
        .unwrap_or(0);
    for (member, count) in rows {
        writeln!(out, "  {member:<width$}  {count}")?;
    }
    Ok(())
}

pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.action {
        Action::Seed {
            at,
            initial,
            overwrite,
            members,
        } => {
            let (pool, mut con) = at.open()?;
            let added = pool.seed(&mut con, &members, initial, overwrite)?;
            writeln!(
                out,
                "{added} new member(s) added to {} ({} given, initial count {initial})",
                at.pool,
                members.len()
            )?;
        }
        Action::Remove { at, member } => {
            let (pool, mut con) = at.open()?;
            match pool.remove(&mut con, member.as_bytes())? {
                Some(count) => writeln!(
                    out,
                    "removed {member} from {} (count {count} remembered)",
                    at.pool
                )?,
                None => writeln!(out, "{member} is not in {}; nothing changed", at.pool)?,
            }
        }
        Action::Restore { at, member, mode } => {
            let (pool, mut con) = at.open()?;
            let count = pool.restore(&mut con, member.as_bytes(), mode)?;
            writeln!(
                out,
                "restored {member} to {} at count {count} ({mode})",
                at.pool
            )?;
        }
        Action::Show { at } => {
            let (pool, mut con) = at.open()?;
            let counts = pool.counts(&mut con)?;
            let removed = pool.removed(&mut con)?;
            let title = format!("pool {} ({} members, pick order):", at.pool, counts.len());
            print_counts(
                &mut out,
                &title,
                counts.iter().map(|(m, c)| (m.as_slice(), *c)),
            )?;
            print_counts(
                &mut out,
                "removed (count remembered):",
                removed.iter().map(|(m, c)| (m.as_slice(), *c)),
            )?;
        }
        Action::Simulate {
            initial,
            picks,
            churn,
            members,
        } => {
            let picks =
                checked_picks(picks.into()).map_err(|e| CliError::from(e).context("--picks"))?;
            let mut pool = Pool::new();
            pool.seed(&members, initial, false)?;
            writeln!(
                out,
                "in-memory pool model (no Redis): {} members at count {initial}, {picks} picks",
                pool.len()
            )?;
            // Streamed: nothing is kept per pick.
            let mut out = std::io::BufWriter::new(&mut out);
            out.write_all(b"picks:")?;
            for i in 0..picks {
                if let Some(member) = &churn {
                    if i == picks / 2 {
                        if let Some(count) = pool.remove(member.as_bytes()) {
                            write!(out, " [remove {member} at {count}]")?;
                        }
                    } else if i == picks * 3 / 4 {
                        let count = pool.restore(member.as_bytes(), Restore::AtMinimum)?;
                        write!(out, " [restore {member} at minimum {count}]")?;
                    }
                }
                match pool.pick() {
                    Some(member) => {
                        out.write_all(b" ")?;
                        out.write_all(&member)?;
                    }
                    None => {
                        out.write_all(b" (empty pool: no pick)")?;
                        break;
                    }
                }
            }
            out.write_all(b"\n")?;
            print_counts(&mut out, "counts (pick order):", pool.counts())?;
        }
    }
    out.flush()?;
    Ok(())
}

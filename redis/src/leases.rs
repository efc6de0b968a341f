//! [`Leases`]: least-concurrency selection on Redis. `acquire` gives the member with the
//! fewest leases in flight a lease with a deadline, `release` ends it, `reclaim` ends the
//! leases abandoned past their deadline; each one atomic script
//! ([`lease_script`](keyroute::select::lease_script) has the texts and the key layout).
//!
//! Time is the Redis server's `TIME` (milliseconds since the Unix epoch), one clock for
//! every worker; [`reclaim`](Leases::reclaim) also takes an explicit time ([`Now::At`]).
//! This is not the cumulative least-used counter: a lease counts while it is in flight.

use std::time::Duration;

use ::redis::{ConnectionLike, FromRedisValue, Value};

use crate::error::{Error, Result};
use crate::least_used::score;
use crate::script::{fail, invoke, script, show};
use keyroute::select::lease_script::{lease_keys, LEASE_ACQUIRE, LEASE_RECLAIM, LEASE_RELEASE};
use keyroute::select::{PoolError, SEED};

/// How many leases one reclaim script call ends at most (the call is repeated until
/// none is left), keeping each script short.
pub const RECLAIM_BATCH: usize = 256;

/// A lease on a member: in flight until released or reclaimed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The member leased.
    pub member: Vec<u8>,
    /// The lease id, unique within the pool.
    pub id: u64,
    /// When it expires, milliseconds since the Unix epoch on the server's clock.
    pub deadline_ms: u64,
}

/// What [`Leases::release`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Release {
    /// The lease was in flight and within its deadline; its member's count went down.
    Released,
    /// The lease was past its deadline but not yet reclaimed; it is ended now and its
    /// member's count went down (once). The work overran its lease.
    Expired,
    /// No such lease in flight: released before, or reclaimed. Nothing changed.
    AlreadyReleasedOrExpired,
}

/// The time a script uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Now {
    /// The server's `TIME`.
    #[default]
    Server,
    /// This time, milliseconds since the Unix epoch.
    At(u64),
}

impl Now {
    fn arg(self) -> String {
        match self {
            Now::Server => String::new(),
            Now::At(ms) => ms.to_string(),
        }
    }
}

/// A lease pool on Redis: the in-flight sorted set at the pool key and three companion
/// keys in its slot. Like [`LeastUsed`](crate::LeastUsed), the handle holds keys and
/// scripts only; every call takes the connection (standalone or cluster).
///
/// ```
/// use keyroute_redis::Leases;
/// let leases = Leases::new("{jobs}:busy")?;
/// assert_eq!(leases.keys()[1], b"{jobs}:busy:leases");
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Leases {
    keys: [Vec<u8>; 4],
    seed_side: Vec<u8>,
    acquire: ::redis::Script,
    release: ::redis::Script,
    reclaim: ::redis::Script,
    seed: ::redis::Script,
}

impl Leases {
    /// A handle on the lease pool at `pool_key`. Sends nothing.
    ///
    /// # Errors
    /// [`Error::Key`] for an empty pool key or one that needs a hash tag.
    pub fn new(pool_key: impl AsRef<[u8]>) -> Result<Self> {
        let keys = lease_keys(pool_key.as_ref())?;
        let seed_side = keyroute::select::side_key(&keys[0])?;
        Ok(Leases {
            keys,
            seed_side,
            acquire: script(&LEASE_ACQUIRE),
            release: script(&LEASE_RELEASE),
            reclaim: script(&LEASE_RECLAIM),
            seed: script(&SEED),
        })
    }

    /// The pool key and its three companions, `KEYS[1..=4]` of the lease scripts.
    pub fn keys(&self) -> &[Vec<u8>; 4] {
        &self.keys
    }

    fn context(&self, what: &str) -> String {
        format!("{what} (lease pool {})", show(&self.keys[0]))
    }

    fn invocation<'a>(&self, script: &'a ::redis::Script) -> ::redis::ScriptInvocation<'a> {
        let mut call = script.prepare_invoke();
        for key in &self.keys {
            call.key(key);
        }
        call
    }

    /// Adds `members` with no lease in flight; members already there keep their counts.
    /// Returns how many were new.
    ///
    /// # Errors
    /// [`Error::Pool`] for an empty member (nothing is sent); a connection or server
    /// error.
    pub fn seed<I>(&self, con: &mut dyn ConnectionLike, members: I) -> Result<usize>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut call = self.seed.key(&self.keys[0]);
        call.key(&self.seed_side).arg(0).arg("0");
        for member in members {
            if member.as_ref().is_empty() {
                return Err(PoolError::EmptyMember.into());
            }
            call.arg(member.as_ref());
        }
        invoke(&call, con).map_err(fail(&self.context("seed")))
    }

    /// Takes `member` out of the pool (no new lease goes to it). Its leases in flight
    /// stay valid; releasing them changes no count. Returns whether it was there.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn remove(&self, con: &mut dyn ConnectionLike, member: &[u8]) -> Result<bool> {
        let removed: i64 = ::redis::cmd("ZREM")
            .arg(&self.keys[0])
            .arg(member)
            .query(con)
            .map_err(fail(&self.context("remove")))?;
        Ok(removed > 0)
    }

    /// A lease of `ttl` (rounded down to ms; 1 ms to 2^53 ms) on the member with the
    /// fewest leases in flight (ties: byte-wise smallest); `None` when the pool is empty
    /// or missing.
    ///
    /// # Errors
    /// [`Error::BadTtl`] for a TTL under 1 ms or over 2^53 ms (nothing is sent); a
    /// connection or server error.
    pub fn acquire(&self, con: &mut dyn ConnectionLike, ttl: Duration) -> Result<Option<Lease>> {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        if !(1..=1 << 53).contains(&ttl_ms) {
            return Err(Error::BadTtl(ttl));
        }
        let mut call = self.invocation(&self.acquire);
        call.arg(ttl_ms).arg(Now::Server.arg());
        let reply: Option<(Vec<u8>, u64, u64)> =
            invoke(&call, con).map_err(fail(&self.context("acquire")))?;
        Ok(reply.map(|(member, id, deadline_ms)| Lease {
            member,
            id,
            deadline_ms,
        }))
    }

    /// Ends `lease`, at most once (see [`Release`]).
    ///
    /// # Errors
    /// A connection or server error.
    pub fn release(&self, con: &mut dyn ConnectionLike, lease: &Lease) -> Result<Release> {
        let mut call = self.invocation(&self.release);
        call.arg(lease.id).arg(Now::Server.arg());
        let code: i64 = invoke(&call, con).map_err(fail(&self.context("release")))?;
        match code {
            1 => Ok(Release::Released),
            2 => Ok(Release::Expired),
            0 => Ok(Release::AlreadyReleasedOrExpired),
            other => Err(Error::protocol(self.context("release"), other.to_string())),
        }
    }

    /// Ends every lease whose deadline is at or before `now` and returns them (each lease
    /// is returned by exactly one reclaim, and never after its release). Runs the
    /// reclaim script until it finds none (each call atomic, [`RECLAIM_BATCH`] at most).
    ///
    /// # Errors
    /// A connection or server error (leases reclaimed by earlier
    /// calls are then ended but not returned).
    pub fn reclaim(&self, con: &mut dyn ConnectionLike, now: Now) -> Result<Vec<Lease>> {
        let mut reclaimed = Vec::new();
        loop {
            let mut call = self.invocation(&self.reclaim);
            call.arg(now.arg()).arg(RECLAIM_BATCH);
            let flat: Vec<Value> = invoke(&call, con).map_err(fail(&self.context("reclaim")))?;
            let n = flat.len() / 3;
            let mut values = flat.into_iter();
            while let (Some(member), Some(id), Some(deadline)) =
                (values.next(), values.next(), values.next())
            {
                let parse = |e: ::redis::ParsingError| {
                    Error::protocol(self.context("reclaim"), e.to_string())
                };
                reclaimed.push(Lease {
                    member: Vec::<u8>::from_redis_value(member).map_err(parse)?,
                    id: u64::from_redis_value(id).map_err(parse)?,
                    deadline_ms: u64::from_redis_value(deadline).map_err(parse)?,
                });
            }
            if n < RECLAIM_BATCH {
                return Ok(reclaimed);
            }
        }
    }

    /// `(member, leases in flight)` in acquire order.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn in_flight(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let pairs: Vec<(Vec<u8>, f64)> = ::redis::cmd("ZRANGE")
            .arg(&self.keys[0])
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(con)
            .map_err(fail(&self.context("in_flight")))?;
        Ok(pairs.into_iter().map(|(m, s)| (m, score(s))).collect())
    }

    /// How many leases are in flight (released and reclaimed ones excluded).
    ///
    /// # Errors
    /// A connection or server error.
    pub fn outstanding(&self, con: &mut dyn ConnectionLike) -> Result<u64> {
        ::redis::cmd("ZCARD")
            .arg(&self.keys[1])
            .query(con)
            .map_err(fail(&self.context("outstanding")))
    }
}

//! [`Leases`]: least-concurrency selection on Redis. `acquire` gives the member with the
//! fewest leases in flight a lease with a deadline, `release` ends it, `reclaim` ends the
//! leases abandoned past their deadline; each one atomic script
//! ([`lease_script`](keyroute::select::lease_script) has the texts and the key layout).
//!
//! Time is the Redis server's `TIME` (milliseconds since the Unix epoch), one clock for
//! every worker; [`reclaim`](Leases::reclaim) also takes an explicit time ([`Now::At`]).
//! This is not the cumulative least-used counter: a lease counts while it is in flight.

use std::time::Duration;

use ::redis::ConnectionLike;

use crate::cache::exec::eval_in;
use crate::error::{Error, Result};
use crate::least_used::score;
use crate::script::{fail, show};
use keyroute::select::{decode_count, LeaseCalls, SEED};
/// A lease, what [`Leases::release`] did, and the most leases one reclaim script call ends
/// (the call is repeated until none is left), keeping each script short: core's.
pub use keyroute::select::{Lease, Release, RECLAIM_BATCH};

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
    fn ms(self) -> Option<u64> {
        match self {
            Now::Server => None,
            Now::At(ms) => Some(ms),
        }
    }
}

/// A lease pool on Redis: the in-flight sorted set at the pool key and three companion
/// keys in its slot, driven by core's calls ([`LeaseCalls`](keyroute::select::LeaseCalls))
/// and reply decoders. Like [`LeastUsed`](crate::LeastUsed), the handle holds keys and
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
    calls: LeaseCalls,
}

impl Leases {
    /// A handle on the lease pool at `pool_key`. Sends nothing.
    ///
    /// # Errors
    /// [`Error::Key`] for an empty pool key or one that needs a hash tag.
    pub fn new(pool_key: impl AsRef<[u8]>) -> Result<Self> {
        Ok(Leases {
            calls: LeaseCalls::new(pool_key.as_ref())?,
        })
    }

    /// The pool key and its three companions, `KEYS[1..=4]` of the lease scripts.
    pub fn keys(&self) -> &[Vec<u8>; 4] {
        self.calls.keys()
    }

    fn context(&self, what: &str) -> String {
        format!("{what} (lease pool {})", show(&self.keys()[0]))
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
        let call = self.calls.seed(members)?;
        let added = decode_count(eval_in(con, &call, &self.context("seed"))?, &SEED)?;
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }

    /// Takes `member` out of the pool (no new lease goes to it). Its leases in flight
    /// stay valid; releasing them changes no count. Returns whether it was there.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn remove(&self, con: &mut dyn ConnectionLike, member: &[u8]) -> Result<bool> {
        let removed: i64 = ::redis::cmd("ZREM")
            .arg(&self.keys()[0])
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
        let call = self.calls.acquire(ttl_ms, Now::Server.ms())?;
        Ok(Lease::decode(eval_in(
            con,
            &call,
            &self.context("acquire"),
        )?)?)
    }

    /// Ends `lease`, at most once (see [`Release`]).
    ///
    /// # Errors
    /// A connection or server error.
    pub fn release(&self, con: &mut dyn ConnectionLike, lease: &Lease) -> Result<Release> {
        let call = self.calls.release(lease.id, Now::Server.ms());
        Ok(Release::decode(eval_in(
            con,
            &call,
            &self.context("release"),
        )?)?)
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
            let call = self.calls.reclaim(now.ms());
            let batch = Lease::decode_reclaimed(eval_in(con, &call, &self.context("reclaim"))?)?;
            let n = batch.len();
            reclaimed.extend(batch);
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
            .arg(&self.keys()[0])
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
            .arg(&self.keys()[1])
            .query(con)
            .map_err(fail(&self.context("outstanding")))
    }
}

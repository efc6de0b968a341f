//! [`LeastUsed`]: the least-used pool of [`keyroute::select`] on a Redis server or a
//! Redis Cluster, run with `EVALSHA`.

use ::redis::{ConnectionLike, ServerErrorKind, Value};

use crate::cache::exec::eval_in;
use crate::error::{Error, Result};
use crate::script::{fail, script, show, NOSCRIPT_ROUNDS};
use keyroute::select::{
    decode_count, decode_member, decode_removed, PoolCalls, Restore, LEAST_USED, RESTORE, SEED,
};

/// How many picks [`LeastUsed::pick_many`] sends in one pipeline.
pub const PICK_BATCH: usize = 512;

/// A least-used pool on Redis: a sorted set (member = proxy id, score = assignments)
/// and its side hash, driven by the [scripts of `select`](keyroute::select::SCRIPTS) with
/// `EVALSHA` (loading them on `NOSCRIPT`): core's calls
/// ([`PoolCalls`](keyroute::select::PoolCalls)) and reply decoders, as every binding runs
/// them.
///
/// The handle holds only the keys and the scripts; every call takes the connection: a
/// standalone [`Connection`](::redis::Connection), a [`Reconnecting`](crate::Reconnecting)
/// one, keyroute's Redis Cluster client [`ClusterClient`](crate::cluster::ClusterClient)
/// (redirects, failovers, pipelines split per pick), or the `redis` crate's
/// [`ClusterConnection`](::redis::cluster::ClusterConnection) (both keys share the pool
/// key's hash slot). It is `Send + Sync` and cheap to clone.
///
/// Semantics are those of the in-memory [`Pool`](keyroute::select::Pool): ties go to the
/// byte-wise smallest member, an empty or missing pool picks `None`.
///
/// ```
/// use keyroute_redis::LeastUsed;
/// let pool = LeastUsed::new("{proxies}:pool")?;
/// assert_eq!(pool.side_key(), b"{proxies}:pool:removed");
/// assert!(LeastUsed::new("").is_err());
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LeastUsed {
    calls: PoolCalls,
    least_used: ::redis::Script,
    /// `EVALSHA <least-used> 1 <pool>`, packed once.
    packed_pick: Vec<u8>,
    /// `EVAL <least-used text> 1 <pool>`, packed once (pipelines on a cluster).
    packed_eval: Vec<u8>,
}

impl LeastUsed {
    /// A handle on the pool at `pool_key`; the side key is derived by
    /// [`side_key`](keyroute::select::side_key). Sends nothing.
    ///
    /// # Errors
    /// [`Error::Key`] for an empty pool key or one that needs a hash tag.
    pub fn new(pool_key: impl AsRef<[u8]>) -> Result<Self> {
        let calls = PoolCalls::new(pool_key.as_ref())?;
        let pool_key = calls.pool_key();
        let packed_pick = ::redis::cmd("EVALSHA")
            .arg(LEAST_USED.sha1())
            .arg(1)
            .arg(pool_key)
            .get_packed_command();
        let packed_eval = ::redis::cmd("EVAL")
            .arg(LEAST_USED.text())
            .arg(1)
            .arg(pool_key)
            .get_packed_command();
        Ok(LeastUsed {
            calls,
            least_used: script(&LEAST_USED),
            packed_pick,
            packed_eval,
        })
    }

    /// The pool key (a sorted set).
    pub fn pool_key(&self) -> &[u8] {
        self.calls.pool_key()
    }

    /// The side key (a hash of removed members' counts).
    pub fn side_key(&self) -> &[u8] {
        self.calls.side_key()
    }

    fn context(&self, what: &str) -> String {
        format!("{what} (pool {})", show(self.pool_key()))
    }

    /// Adds `members` at count `initial` (see [`SEED_SCRIPT`](keyroute::select::SEED_SCRIPT)):
    /// members already in the pool keep their counts unless `overwrite`. Returns how many
    /// members were new.
    ///
    /// # Errors
    /// [`Error::Pool`] when `initial` is above [`MAX_EXACT_COUNT`](keyroute::select::MAX_EXACT_COUNT) or a member is empty
    /// (nothing is sent); a connection or server error ([`Error::WrongType`] when a key
    /// holds another type: the script then changes nothing).
    pub fn seed<I>(
        &self,
        con: &mut dyn ConnectionLike,
        members: I,
        initial: u64,
        overwrite: bool,
    ) -> Result<usize>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let call = self.calls.seed(members, initial, overwrite)?;
        let added = decode_count(eval_in(con, &call, &self.context("seed"))?, &SEED)?;
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }

    /// Picks the least-used member and counts the assignment, in one atomic script call
    /// (`EVALSHA`, loading the script on `NOSCRIPT`). `Ok(None)` when the pool is empty or
    /// missing: then exactly one `EVALSHA` was sent, and the caller must make no request.
    ///
    /// # Errors
    /// A connection error or timeout (the pick may or may not have been counted) or a
    /// server error.
    pub fn pick(&self, con: &mut dyn ConnectionLike) -> Result<Option<Vec<u8>>> {
        let reply = eval_in(con, &self.calls.pick(), &self.context("pick"))?;
        Ok(decode_member(reply, &LEAST_USED)?)
    }

    /// Up to `n` picks, pipelined ([`PICK_BATCH`] per round trip); fewer only when the
    /// pool is (or becomes) empty. Each pick is atomic, the sequence is not: other
    /// clients' picks may interleave.
    ///
    /// On a standalone connection the pipeline is `EVALSHA`s; picks answered `NOSCRIPT`
    /// (the script cache was flushed, even in the middle of the pipeline) are neither lost
    /// nor doubled: the script is loaded with `SCRIPT LOAD` and only those picks are sent
    /// again.
    ///
    /// On keyroute's [`ClusterClient`](crate::cluster::ClusterClient) the pipeline is
    /// split per pick by the client: picks answered stay answered, and only the picks
    /// answered `MOVED`/`ASK`/`TRYAGAIN`/`CLUSTERDOWN` (which did not run) are resent, so
    /// a pool whose slot migrates in the middle of a pipeline counts every pick exactly
    /// once.
    ///
    /// On the `redis` crate's [`ClusterConnection`](::redis::cluster::ClusterConnection)
    /// (any connection whose `supports_pipelining()` is false) the pipeline goes to the
    /// node of the pool's slot, but that crate turns an error reply anywhere in it into
    /// an error for the whole pipeline, hiding which picks ran; so there the pipeline is
    /// `EVAL`s of the same script text, which cannot meet `NOSCRIPT`. Known limit of that
    /// connection type: if the pool key migrates (resharding) in the middle of a
    /// pipeline, the `redis` crate may resend the whole pipeline after `ASK`, counting
    /// the picks before the move twice. Use [`ClusterClient`](crate::cluster::ClusterClient).
    ///
    /// # Errors
    /// As [`pick`](Self::pick); on an error the picks of earlier batches were counted
    /// but are not returned.
    pub fn pick_many(&self, con: &mut dyn ConnectionLike, n: usize) -> Result<Vec<Vec<u8>>> {
        let per_pick = if con.supports_pipelining() {
            &self.packed_pick
        } else {
            &self.packed_eval
        };
        let mut picks = Vec::with_capacity(n.min(PICK_BATCH * 8));
        let mut packed = Vec::new();
        let mut left = n;
        let mut rounds = 0;
        while left > 0 {
            let batch = left.min(PICK_BATCH);
            packed.clear();
            for _ in 0..batch {
                packed.extend_from_slice(per_pick);
            }
            let replies = con
                .req_packed_commands(&packed, 0, batch)
                .map_err(fail(&self.context("pick_many")))?;
            let mut noscript = 0;
            let mut empty = false;
            for reply in replies {
                match reply {
                    Value::BulkString(member) => {
                        picks.push(member);
                        left -= 1;
                    }
                    Value::Nil => empty = true,
                    Value::ServerError(err) if err.kind() == Some(ServerErrorKind::NoScript) => {
                        noscript += 1;
                    }
                    Value::ServerError(err) => {
                        return Err(fail(&self.context("pick_many"))(err.into()));
                    }
                    other => {
                        return Err(Error::protocol(
                            self.context("pick_many"),
                            format!("{other:?}"),
                        ))
                    }
                }
            }
            if empty {
                break;
            }
            if noscript < batch {
                rounds = 0;
            }
            if noscript > 0 {
                rounds += 1;
                if rounds > NOSCRIPT_ROUNDS {
                    return Err(Error::protocol(
                        self.context("pick_many"),
                        format!("NOSCRIPT after {NOSCRIPT_ROUNDS} SCRIPT LOADs"),
                    ));
                }
                self.least_used
                    .load(con)
                    .map_err(fail(&self.context("load the least-used script")))?;
            }
        }
        Ok(picks)
    }

    /// Takes `member` out of the pool, remembering its count in the side hash. Returns the
    /// count remembered, `None` (changing nothing) when it was not in the pool.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn remove(&self, con: &mut dyn ConnectionLike, member: &[u8]) -> Result<Option<u64>> {
        let call = self.calls.remove(member);
        Ok(decode_removed(eval_in(
            con,
            &call,
            &self.context("remove"),
        )?)?)
    }

    /// Puts `member` back: [`Restore::Keep`] its remembered count, or
    /// [`Restore::AtMinimum`] the pool's current minimum (0 when empty). A member already
    /// in the pool keeps its count. Returns the count afterwards.
    ///
    /// # Errors
    /// [`Error::Pool`] for an empty member (nothing is sent); a connection or server
    /// error.
    pub fn restore(
        &self,
        con: &mut dyn ConnectionLike,
        member: &[u8],
        mode: Restore,
    ) -> Result<u64> {
        let call = self.calls.restore(member, mode)?;
        Ok(decode_count(
            eval_in(con, &call, &self.context("restore"))?,
            &RESTORE,
        )?)
    }

    /// `(member, count)` in pick order (`ZRANGE pool 0 -1 WITHSCORES`).
    ///
    /// # Errors
    /// A connection or server error.
    pub fn counts(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let pairs: Vec<(Vec<u8>, f64)> = ::redis::cmd("ZRANGE")
            .arg(self.pool_key())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(con)
            .map_err(fail(&self.context("counts")))?;
        Ok(pairs.into_iter().map(|(m, s)| (m, score(s))).collect())
    }

    /// `(member, count)` remembered for removed members, in member byte order
    /// (`HGETALL side`).
    ///
    /// # Errors
    /// A connection or server error.
    pub fn removed(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let mut pairs: Vec<(Vec<u8>, u64)> = ::redis::cmd("HGETALL")
            .arg(self.side_key())
            .query(con)
            .map_err(fail(&self.context("removed")))?;
        pairs.sort();
        Ok(pairs)
    }
}

/// A sorted-set score as a count (scores are integers in `0..=2^53`).
pub(crate) fn score(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        s as u64
    } else {
        0
    }
}

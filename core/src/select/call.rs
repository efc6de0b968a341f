//! The pool scripts as calls and replies, for every client that runs them on Redis: each
//! handle derives its keys from one key and builds the [`Call`] of each script (checked
//! as every binding must check it, before anything is sent), and the decoders read what
//! the scripts answer (any other shape is a [`ReplyError`]).
//!
//! | handle | script | call | reply decoder |
//! |---|---|---|---|
//! | [`PoolCalls`] | [`LEAST_USED`] | [`pick`](PoolCalls::pick) | [`decode_member`]: the member, or `None` (empty pool) |
//! | | [`SEED`] | [`seed`](PoolCalls::seed) | [`decode_count`]: members newly added |
//! | | [`REMOVE`] | [`remove`](PoolCalls::remove) | [`decode_removed`]: the count remembered, or `None` |
//! | | [`RESTORE`] | [`restore`](PoolCalls::restore) | [`decode_count`]: the count afterwards |
//! | [`LeaseCalls`] | [`SEED`] | [`seed`](LeaseCalls::seed) | [`decode_count`] |
//! | | [`LEASE_ACQUIRE`] | [`acquire`](LeaseCalls::acquire) | [`Lease::decode`]: the lease, or `None` (empty pool) |
//! | | [`LEASE_RELEASE`] | [`release`](LeaseCalls::release) | [`Release::decode`] |
//! | | [`LEASE_RECLAIM`] | [`reclaim`](LeaseCalls::reclaim) | [`Lease::decode_reclaimed`]: at most [`RECLAIM_BATCH`] leases (call again while a batch is full) |
//! | [`AffinityCalls`] | [`AFFINITY_TAKE`] | [`take`](AffinityCalls::take) | [`Taken::decode`]: the holder, or `None` (every candidate at the cap) |
//! | | [`AFFINITY_RELEASE`] | [`release`](AffinityCalls::release) | [`decode_member`]: the node that held the item, or `None` |
//!
//! `now` arguments (`None`: the server's `TIME`, what production calls use) are for tests
//! and replays.
//!
//! ```
//! use keyroute::script::Value;
//! use keyroute::select::{decode_member, PoolCalls, LEAST_USED};
//! let pool = PoolCalls::new(b"{proxies}:pool")?;
//! let call = pool.pick();
//! assert_eq!(call.script, &LEAST_USED);
//! assert_eq!(call.keys, [&b"{proxies}:pool"[..]]);
//! // What Redis answered:
//! assert_eq!(decode_member(Value::Bytes(b"proxy-1".to_vec()), &LEAST_USED)?, Some(b"proxy-1".to_vec()));
//! assert_eq!(decode_member(Value::Nil, &LEAST_USED)?, None); // empty pool: make no request
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::borrow::Cow;
use alloc::vec;
use alloc::vec::Vec;

use super::affinity_script::{
    affinity_keys, cap_args, check_take, AffinityError, Cap, AFFINITY_RELEASE, AFFINITY_TAKE,
};
use super::lease_script::{lease_keys, LEASE_ACQUIRE, LEASE_RECLAIM, LEASE_RELEASE};
use super::{
    seed_overwrite_arg, side_key, KeyError, PoolError, Restore, LEAST_USED, MAX_EXACT_COUNT,
    REMOVE, RESTORE, SEED,
};
use crate::script::{int_arg, Call, ReplyError, Script, Value};

/// How many leases one [`LEASE_RECLAIM`] call ends at most: a reclaim is the call repeated
/// while a batch comes back full, keeping each script short.
///
/// ```
/// assert_eq!(keyroute::select::RECLAIM_BATCH, 256);
/// ```
pub const RECLAIM_BATCH: usize = 256;

/// The `now_ms` argument of the lease scripts: digits, or empty for the server's `TIME`.
fn now_arg(now: Option<u64>) -> Cow<'static, [u8]> {
    match now {
        Some(ms) => int_arg(ms),
        None => Cow::Borrowed(b""),
    }
}

fn borrowed(key: &[u8]) -> Cow<'_, [u8]> {
    Cow::Borrowed(key)
}

/// Members as script arguments: every one checked not empty.
fn members<I>(members: I) -> Result<Vec<Cow<'static, [u8]>>, PoolError>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    members
        .into_iter()
        .map(|m| match m.as_ref() {
            [] => Err(PoolError::EmptyMember),
            m => Ok(Cow::Owned(m.to_vec())),
        })
        .collect()
}

/// The calls of a least-used pool: the pool key (a sorted set) and its side key (a hash of
/// removed members' counts, [`side_key`]).
///
/// ```
/// use keyroute::select::{PoolCalls, Restore};
/// let pool = PoolCalls::new(b"proxies")?;
/// assert_eq!(pool.side_key(), b"{proxies}:removed");
/// let seed = pool.seed(["proxy-1", "proxy-2"], 0, false)?;
/// assert_eq!(seed.args, [&b"0"[..], b"0", b"proxy-1", b"proxy-2"]);
/// assert_eq!(pool.restore(b"proxy-1", Restore::Keep)?.args, [&b"proxy-1"[..], b"keep"]);
/// assert_eq!(pool.seed([""], 0, false).unwrap_err().code().as_str(), "EMPTY_MEMBER");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PoolCalls {
    pool: Vec<u8>,
    side: Vec<u8>,
}

impl PoolCalls {
    /// The calls of the pool at `pool_key`.
    ///
    /// # Errors
    /// [`KeyError`]: an empty pool key, or one that needs a hash tag.
    ///
    /// ```
    /// assert_eq!(keyroute::select::PoolCalls::new(b"").unwrap_err().code().as_str(), "BAD_POOL_KEY");
    /// ```
    pub fn new(pool_key: &[u8]) -> Result<Self, KeyError> {
        Ok(PoolCalls {
            side: side_key(pool_key)?,
            pool: pool_key.to_vec(),
        })
    }

    /// The pool key.
    ///
    /// ```
    /// assert_eq!(keyroute::select::PoolCalls::new(b"p")?.pool_key(), b"p");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn pool_key(&self) -> &[u8] {
        &self.pool
    }

    /// The side key.
    ///
    /// ```
    /// assert_eq!(keyroute::select::PoolCalls::new(b"{p}")?.side_key(), b"{p}:removed");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn side_key(&self) -> &[u8] {
        &self.side
    }

    fn keys(&self) -> Vec<Cow<'_, [u8]>> {
        vec![borrowed(&self.pool), borrowed(&self.side)]
    }

    /// [`LEAST_USED`]: pick the least-used member and count the assignment
    /// ([`decode_member`]).
    ///
    /// ```
    /// let pool = keyroute::select::PoolCalls::new(b"{p}")?;
    /// assert!(pool.pick().args.is_empty());
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn pick(&self) -> Call<'_> {
        Call::new(&LEAST_USED, vec![borrowed(&self.pool)], Vec::new())
    }

    /// [`SEED`]: add `members` at count `initial`; members already in the pool keep their
    /// count unless `overwrite` ([`decode_count`]: how many were new).
    ///
    /// # Errors
    /// [`PoolError::BadInitialCount`] above [`MAX_EXACT_COUNT`], [`PoolError::EmptyMember`].
    ///
    /// ```
    /// use keyroute::select::{PoolCalls, MAX_EXACT_COUNT};
    /// let pool = PoolCalls::new(b"{p}")?;
    /// assert_eq!(pool.seed(["a"], 3, true)?.args, [&b"3"[..], b"1", b"a"]);
    /// assert!(pool.seed(["a"], MAX_EXACT_COUNT + 1, false).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn seed<I>(&self, members: I, initial: u64, overwrite: bool) -> Result<Call<'_>, PoolError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        seed_call(self.keys(), members, initial, overwrite)
    }

    /// [`REMOVE`]: take `member` out, remembering its count ([`decode_removed`]).
    ///
    /// ```
    /// let pool = keyroute::select::PoolCalls::new(b"{p}")?;
    /// assert_eq!(pool.remove(b"a").args, [&b"a"[..]]);
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn remove<'a>(&'a self, member: &'a [u8]) -> Call<'a> {
        Call::new(&REMOVE, self.keys(), vec![borrowed(member)])
    }

    /// [`RESTORE`]: put `member` back, at its remembered count ([`Restore::Keep`]) or at
    /// the pool's minimum ([`Restore::AtMinimum`]) ([`decode_count`]: its count).
    ///
    /// # Errors
    /// [`PoolError::EmptyMember`].
    ///
    /// ```
    /// use keyroute::select::{PoolCalls, Restore};
    /// let pool = PoolCalls::new(b"{p}")?;
    /// assert_eq!(pool.restore(b"a", Restore::AtMinimum)?.args[1], &b"at_minimum"[..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn restore<'a>(&'a self, member: &'a [u8], mode: Restore) -> Result<Call<'a>, PoolError> {
        if member.is_empty() {
            return Err(PoolError::EmptyMember);
        }
        let args = vec![borrowed(member), Cow::Borrowed(mode.as_arg().as_bytes())];
        Ok(Call::new(&RESTORE, self.keys(), args))
    }
}

fn seed_call<I>(
    keys: Vec<Cow<'_, [u8]>>,
    list: I,
    initial: u64,
    overwrite: bool,
) -> Result<Call<'_>, PoolError>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    if initial > MAX_EXACT_COUNT {
        return Err(PoolError::BadInitialCount(initial.into()));
    }
    let mut args = vec![
        int_arg(initial),
        Cow::Borrowed(seed_overwrite_arg(overwrite).as_bytes()),
    ];
    args.extend(members(list)?);
    Ok(Call::new(&SEED, keys, args))
}

/// The largest lease TTL the scripts take: 2^53 ms.
const MAX_LEASE_TTL_MS: u64 = 1 << 53;

/// The calls of a lease pool (least concurrency): the four keys of
/// [`lease_keys`](super::lease_script::lease_keys), and the side key [`SEED`] takes with
/// the pool key.
///
/// ```
/// use keyroute::select::LeaseCalls;
/// let leases = LeaseCalls::new(b"{jobs}:busy")?;
/// assert_eq!(leases.keys()[1], b"{jobs}:busy:leases");
/// let call = leases.acquire(30_000, None)?;
/// assert_eq!(call.args, [&b"30000"[..], b""]); // empty: the server's TIME
/// assert_eq!(leases.acquire(0, None).unwrap_err().code().as_str(), "BAD_TTL");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeaseCalls {
    keys: [Vec<u8>; 4],
    seed_side: Vec<u8>,
}

impl LeaseCalls {
    /// The calls of the lease pool at `pool_key`.
    ///
    /// # Errors
    /// [`KeyError`]: an empty pool key, or one that needs a hash tag.
    ///
    /// ```
    /// assert!(keyroute::select::LeaseCalls::new(b"a}").is_err());
    /// ```
    pub fn new(pool_key: &[u8]) -> Result<Self, KeyError> {
        let keys = lease_keys(pool_key)?;
        Ok(LeaseCalls {
            seed_side: side_key(pool_key)?,
            keys,
        })
    }

    /// The pool key and its three companions, `KEYS[1..=4]` of the lease scripts.
    ///
    /// ```
    /// assert_eq!(keyroute::select::LeaseCalls::new(b"jobs")?.keys()[3], b"{jobs}:lease-seq");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn keys(&self) -> &[Vec<u8>; 4] {
        &self.keys
    }

    fn all_keys(&self) -> Vec<Cow<'_, [u8]>> {
        self.keys.iter().map(|k| borrowed(k)).collect()
    }

    /// [`SEED`] of the in-flight set: `members` with no lease in flight; members already
    /// there keep their counts ([`decode_count`]: how many were new).
    ///
    /// # Errors
    /// [`PoolError::EmptyMember`].
    ///
    /// ```
    /// let leases = keyroute::select::LeaseCalls::new(b"{j}")?;
    /// let call = leases.seed(["w1"])?;
    /// assert_eq!(call.keys, [&b"{j}"[..], b"{j}:removed"]);
    /// assert_eq!(call.args, [&b"0"[..], b"0", b"w1"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn seed<I>(&self, members: I) -> Result<Call<'_>, PoolError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let keys = vec![borrowed(&self.keys[0]), borrowed(&self.seed_side)];
        seed_call(keys, members, 0, false)
    }

    /// [`LEASE_ACQUIRE`]: a lease of `ttl_ms` on the member with the fewest leases in
    /// flight ([`Lease::decode`]).
    ///
    /// # Errors
    /// [`PoolError::BadLeaseTtl`] outside 1 ms to 2^53 ms.
    ///
    /// ```
    /// let leases = keyroute::select::LeaseCalls::new(b"{j}")?;
    /// assert_eq!(leases.acquire(5, Some(1000))?.args, [&b"5"[..], b"1000"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire(&self, ttl_ms: u64, now: Option<u64>) -> Result<Call<'_>, PoolError> {
        if !(1..=MAX_LEASE_TTL_MS).contains(&ttl_ms) {
            return Err(PoolError::BadLeaseTtl(ttl_ms));
        }
        let args = vec![int_arg(ttl_ms), now_arg(now)];
        Ok(Call::new(&LEASE_ACQUIRE, self.all_keys(), args))
    }

    /// [`LEASE_RELEASE`]: end the lease `id`, at most once ([`Release::decode`]).
    ///
    /// ```
    /// let leases = keyroute::select::LeaseCalls::new(b"{j}")?;
    /// assert_eq!(leases.release(7, None).args, [&b"7"[..], b""]);
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn release(&self, id: u64, now: Option<u64>) -> Call<'_> {
        Call::new(
            &LEASE_RELEASE,
            self.all_keys(),
            vec![int_arg(id), now_arg(now)],
        )
    }

    /// [`LEASE_RECLAIM`]: end at most [`RECLAIM_BATCH`] leases past their deadline
    /// ([`Lease::decode_reclaimed`]); call again while a batch comes back full.
    ///
    /// ```
    /// let leases = keyroute::select::LeaseCalls::new(b"{j}")?;
    /// assert_eq!(leases.reclaim(Some(9)).args, [&b"9"[..], b"256"]);
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn reclaim(&self, now: Option<u64>) -> Call<'_> {
        let limit = int_arg(RECLAIM_BATCH as u64);
        Call::new(&LEASE_RECLAIM, self.all_keys(), vec![now_arg(now), limit])
    }
}

/// The calls of an affinity map with a cap: the affinity key and its loads key
/// ([`affinity_keys`]).
///
/// ```
/// use keyroute::select::{AffinityCalls, Cap};
/// let owners = AffinityCalls::new(b"{jobs}:owner")?;
/// let call = owners.take(b"job-1", &["n1", "n2"], Cap::Factor(1.25))?;
/// assert_eq!(call.args, [&b"job-1"[..], b"c", b"1.25", b"n1", b"n2"]);
/// let none: [&str; 0] = [];
/// assert_eq!(owners.take(b"job-1", &none, Cap::Fixed(2)).unwrap_err().code().as_str(), "OUT_OF_RANGE");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffinityCalls {
    keys: [Vec<u8>; 2],
}

impl AffinityCalls {
    /// The calls of the affinity map at `key`.
    ///
    /// # Errors
    /// [`KeyError`]: an empty key, or one that needs a hash tag.
    ///
    /// ```
    /// assert!(keyroute::select::AffinityCalls::new(b"").is_err());
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, KeyError> {
        Ok(AffinityCalls {
            keys: affinity_keys(key)?,
        })
    }

    /// The affinity key and its loads key, `KEYS[1..=2]` of the scripts.
    ///
    /// ```
    /// assert_eq!(keyroute::select::AffinityCalls::new(b"o")?.keys()[1], b"{o}:loads");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub fn keys(&self) -> &[Vec<u8>; 2] {
        &self.keys
    }

    fn both(&self) -> Vec<Cow<'_, [u8]>> {
        vec![borrowed(&self.keys[0]), borrowed(&self.keys[1])]
    }

    /// [`AFFINITY_TAKE`]: give `item` to its holder, else to the first of `candidates`
    /// (in the item's preference order) under the cap ([`Taken::decode`]).
    ///
    /// # Errors
    /// [`AffinityError`] from [`check_take`]: an empty item or candidate, no or too many
    /// candidates, a cap or factor out of range.
    ///
    /// ```
    /// use keyroute::select::{AffinityCalls, Cap};
    /// let owners = AffinityCalls::new(b"{o}")?;
    /// assert_eq!(owners.take(b"i", &["a"], Cap::Fixed(3))?.args, [&b"i"[..], b"cap", b"3", b"a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take<'a, C: AsRef<[u8]>>(
        &'a self,
        item: &'a [u8],
        candidates: &'a [C],
        cap: Cap,
    ) -> Result<Call<'a>, AffinityError> {
        check_take(item, candidates.len(), cap, |i| candidates[i].as_ref())?;
        let (mode, value) = cap_args(cap);
        let mut args = Vec::with_capacity(3 + candidates.len());
        args.push(borrowed(item));
        args.push(Cow::Borrowed(mode.as_bytes()));
        args.push(Cow::Owned(value.into_bytes()));
        args.extend(candidates.iter().map(|c| borrowed(c.as_ref())));
        Ok(Call::new(&AFFINITY_TAKE, self.both(), args))
    }

    /// [`AFFINITY_RELEASE`]: free `item` once ([`decode_member`]: the node that held it).
    ///
    /// # Errors
    /// [`AffinityError::EmptyItem`].
    ///
    /// ```
    /// let owners = keyroute::select::AffinityCalls::new(b"{o}")?;
    /// assert_eq!(owners.release(b"i")?.args, [&b"i"[..]]);
    /// assert!(owners.release(b"").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release<'a>(&'a self, item: &'a [u8]) -> Result<Call<'a>, AffinityError> {
        if item.is_empty() {
            return Err(AffinityError::EmptyItem);
        }
        Ok(Call::new(
            &AFFINITY_RELEASE,
            self.both(),
            vec![borrowed(item)],
        ))
    }
}

// ------------------------------------------------------------------ replies

/// A member (or node) or nil: the reply of [`LEAST_USED`] and [`AFFINITY_RELEASE`].
///
/// # Errors
/// [`ReplyError`] for anything but a string or nil.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::{decode_member, AFFINITY_RELEASE};
/// assert_eq!(decode_member(Value::Nil, &AFFINITY_RELEASE)?, None);
/// assert!(decode_member(Value::Int(1), &AFFINITY_RELEASE).is_err());
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
pub fn decode_member(value: Value, script: &'static Script) -> Result<Option<Vec<u8>>, ReplyError> {
    match value {
        Value::Nil => Ok(None),
        Value::Bytes(b) => Ok(Some(b)),
        _ => Err(ReplyError::new(script.name(), "a string or nil")),
    }
}

/// A count: the reply of [`SEED`] (members newly added) and [`RESTORE`] (the member's
/// count afterwards).
///
/// # Errors
/// [`ReplyError`] for anything but an integer `>= 0`.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::{decode_count, SEED};
/// assert_eq!(decode_count(Value::Int(2), &SEED)?, 2);
/// assert!(decode_count(Value::Int(-1), &SEED).is_err());
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
pub fn decode_count(value: Value, script: &'static Script) -> Result<u64, ReplyError> {
    value
        .as_u64()
        .ok_or(ReplyError::new(script.name(), "an integer >= 0"))
}

/// The reply of [`REMOVE`]: the count remembered, or `None` when the member was not in the
/// pool (nothing changed).
///
/// # Errors
/// [`ReplyError`] for anything but an integer `>= 0` or nil.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::decode_removed;
/// assert_eq!(decode_removed(Value::Int(4))?, Some(4));
/// assert_eq!(decode_removed(Value::Nil)?, None);
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
pub fn decode_removed(value: Value) -> Result<Option<u64>, ReplyError> {
    match value {
        Value::Nil => Ok(None),
        v => v
            .as_u64()
            .map(Some)
            .ok_or(ReplyError::new(REMOVE.name(), "an integer >= 0 or nil")),
    }
}

/// A lease on a member: in flight until released or reclaimed.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::Lease;
/// let reply = Value::Array(vec![Value::Bytes(b"w1".to_vec()), Value::Int(1), Value::Int(31_000)]);
/// let lease = Lease::decode(reply)?.expect("a lease");
/// assert_eq!((lease.member.as_slice(), lease.id, lease.deadline_ms), (&b"w1"[..], 1, 31_000));
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The member leased.
    pub member: Vec<u8>,
    /// The lease id, unique within the pool.
    pub id: u64,
    /// When it expires, milliseconds since the Unix epoch on the server's clock.
    pub deadline_ms: u64,
}

impl Lease {
    /// A `[member, id, deadline]` triple.
    fn of(triple: &mut [Value]) -> Option<Lease> {
        let [member, id, deadline] = triple else {
            return None;
        };
        Some(Lease {
            id: id.as_u64()?,
            deadline_ms: deadline.as_u64()?,
            member: core::mem::replace(member, Value::Nil).into_bytes()?,
        })
    }

    /// The reply of [`LEASE_ACQUIRE`]: the lease, or `None` when the pool is empty or
    /// missing.
    ///
    /// # Errors
    /// [`ReplyError`] for anything but `[member, id, deadline]` or nil.
    ///
    /// ```
    /// use keyroute::script::Value;
    /// assert_eq!(keyroute::select::Lease::decode(Value::Nil)?, None);
    /// # Ok::<(), keyroute::script::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<Option<Lease>, ReplyError> {
        let bad = || ReplyError::new(LEASE_ACQUIRE.name(), "[member, id, deadline] or nil");
        match value {
            Value::Nil => Ok(None),
            Value::Array(mut a) => Lease::of(&mut a).map(Some).ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    /// The reply of [`LEASE_RECLAIM`]: the leases it ended (a flat `[member, id, deadline,
    /// ...]`), at most [`RECLAIM_BATCH`].
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::script::Value;
    /// use keyroute::select::Lease;
    /// let flat = Value::Array(vec![Value::Bytes(b"w".to_vec()), Value::Int(3), Value::Int(9)]);
    /// assert_eq!(Lease::decode_reclaimed(flat)?.len(), 1);
    /// assert!(Lease::decode_reclaimed(Value::Array(vec![Value::Int(3)])).is_err());
    /// # Ok::<(), keyroute::script::ReplyError>(())
    /// ```
    pub fn decode_reclaimed(value: Value) -> Result<Vec<Lease>, ReplyError> {
        let bad = || {
            ReplyError::new(
                LEASE_RECLAIM.name(),
                "a flat array of [member, id, deadline] triples",
            )
        };
        let mut flat = value.into_array().ok_or_else(bad)?;
        if flat.len() % 3 != 0 || flat.len() / 3 > RECLAIM_BATCH {
            return Err(bad());
        }
        flat.chunks_exact_mut(3)
            .map(|t| Lease::of(t).ok_or_else(bad))
            .collect()
    }
}

/// What [`LEASE_RELEASE`] did.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::Release;
/// assert_eq!(Release::decode(Value::Int(2))?, Release::Expired);
/// assert!(Release::decode(Value::Int(3)).is_err());
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
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

impl Release {
    /// The reply of [`LEASE_RELEASE`]: 1 released, 2 expired, 0 already released or
    /// reclaimed.
    ///
    /// # Errors
    /// [`ReplyError`] for anything else.
    ///
    /// ```
    /// use keyroute::script::Value;
    /// use keyroute::select::Release;
    /// assert_eq!(Release::decode(Value::Int(0))?, Release::AlreadyReleasedOrExpired);
    /// # Ok::<(), keyroute::script::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<Release, ReplyError> {
        match value.as_int() {
            Some(1) => Ok(Release::Released),
            Some(2) => Ok(Release::Expired),
            Some(0) => Ok(Release::AlreadyReleasedOrExpired),
            _ => Err(ReplyError::new(LEASE_RELEASE.name(), "0, 1 or 2")),
        }
    }
}

/// What [`AFFINITY_TAKE`] gave.
///
/// ```
/// use keyroute::script::Value;
/// use keyroute::select::Taken;
/// let reply = Value::Array(vec![Value::Bytes(b"n1".to_vec()), Value::Int(1), Value::Int(2), Value::Int(1)]);
/// let taken = Taken::decode(reply)?.expect("taken");
/// assert_eq!((taken.node.as_slice(), taken.load, taken.cap, taken.new), (&b"n1"[..], 1, 2, true));
/// # Ok::<(), keyroute::script::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taken {
    /// The node holding the item.
    pub node: Vec<u8>,
    /// How many items that node holds now.
    pub load: u64,
    /// The cap of this take.
    pub cap: u64,
    /// Whether this call placed the item (`false`: it was held already, nothing changed).
    pub new: bool,
}

impl Taken {
    /// The reply of [`AFFINITY_TAKE`]: `[node, load, cap, new]`, or `None` when every
    /// candidate is at the cap (nothing changed).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::script::Value;
    /// assert_eq!(keyroute::select::Taken::decode(Value::Nil)?, None);
    /// # Ok::<(), keyroute::script::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<Option<Taken>, ReplyError> {
        let bad = || ReplyError::new(AFFINITY_TAKE.name(), "[node, load, cap, 0 or 1] or nil");
        let mut a = match value {
            Value::Nil => return Ok(None),
            v => v.into_array().ok_or_else(bad)?,
        };
        let [node, load, cap, new] = a.as_mut_slice() else {
            return Err(bad());
        };
        let new = match new.as_int() {
            Some(0) => false,
            Some(1) => true,
            _ => return Err(bad()),
        };
        Ok(Some(Taken {
            load: load.as_u64().ok_or_else(bad)?,
            cap: cap.as_u64().ok_or_else(bad)?,
            new,
            node: core::mem::replace(node, Value::Nil)
                .into_bytes()
                .ok_or_else(bad)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_names_its_script_and_keys() {
        let pool = PoolCalls::new(b"p").expect("keys");
        assert_eq!(pool.remove(b"m").keys.len(), REMOVE.num_keys());
        let leases = LeaseCalls::new(b"{l}").expect("keys");
        for call in [
            leases.acquire(1, None).expect("ttl"),
            leases.release(1, None),
            leases.reclaim(None),
        ] {
            assert_eq!(call.keys.len(), call.script.num_keys());
        }
        assert!(leases.acquire(MAX_LEASE_TTL_MS, None).is_ok());
        assert_eq!(
            leases.acquire(MAX_LEASE_TTL_MS + 1, None),
            Err(PoolError::BadLeaseTtl(MAX_LEASE_TTL_MS + 1))
        );
    }

    #[test]
    fn replies_of_another_shape_are_refused() {
        assert!(decode_removed(Value::Bytes(b"x".to_vec())).is_err());
        assert!(Lease::decode(Value::Array(vec![Value::Nil; 3])).is_err());
        assert!(Taken::decode(Value::Array(vec![
            Value::Bytes(b"n".to_vec()),
            Value::Int(1),
            Value::Int(1),
            Value::Int(2)
        ]))
        .is_err());
        let many = vec![Value::Int(1); 3 * (RECLAIM_BATCH + 1)];
        assert!(Lease::decode_reclaimed(Value::Array(many)).is_err());
        assert_eq!(
            Lease::decode_reclaimed(Value::Array(Vec::new())),
            Ok(Vec::new())
        );
    }
}

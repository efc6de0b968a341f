//! Raw exports of the pools on Redis (`keyroute/redis`: `LeastUsed`, `Leases`, `Affinity`
//! over a node-redis client): core's calls ([`PoolCalls`], [`LeaseCalls`],
//! [`AffinityCalls`]) and reply decoders. The JavaScript glue (`js/redis.mjs`) sends each
//! call with `EVALSHA` and hands the reply back here: no script logic is written in it.
//!
//! A call comes back as [`RawBatch`] (the script's name, its keys, its arguments; `counts
//! = [number of keys]`), as the smart cache's do. A reply goes in as the preorder walk of
//! [`crate::cache`] and a decoded answer comes back as a [`RawBatch`] whose `counts` are
//! `[variant, numbers...]` and whose items are its byte fields (see [`raw_pool_decode`]).
use alloc::vec::Vec;

use keyroute::error::ErrorCode;
use keyroute::select::{
    checked_picks, decode_count, decode_member, decode_removed, AffinityCalls, Cap, Lease,
    LeaseCalls, PoolCalls, Release, Restore, Taken, AFFINITY_RELEASE, AFFINITY_TAKE, LEASE_ACQUIRE,
    LEASE_RECLAIM, LEASE_RELEASE, LEAST_USED, REMOVE, RESTORE, SEED,
};
use wasm_bindgen::prelude::*;

use crate::batch::RawBatch;
use crate::cache::{batch, walked};
use crate::error::{given, saturate, unpack, JsError};

/// A count a caller gave (`initial`, a lease TTL, a lease id), clamped into `u64`: core
/// refuses what is out of its range (a negative count shows as 0).
fn count(x: i128) -> u64 {
    saturate(x)
}

/// The optional `now_ms` of the lease scripts (tests and replays).
fn now(x: i128) -> Option<u64> {
    given(x).map(saturate)
}

/// The keys of a pool of `kind` (0 least-used: `[pool, side]`; 1 leases: the four lease
/// keys; 2 affinity: `[affinity, loads]`) at `key`: `BAD_POOL_KEY` for an empty key or
/// one that needs a hash tag.
#[wasm_bindgen(js_name = rawPoolKeys)]
pub fn raw_pool_keys(kind: u8, key: &[u8]) -> Result<RawBatch, JsError> {
    Ok(match kind {
        0 => {
            let p = PoolCalls::new(key)?;
            RawBatch::of(&[p.pool_key(), p.side_key()])
        }
        1 => {
            let [a, b, c, d] = LeaseCalls::new(key)?.keys().clone();
            RawBatch::of(&[&a, &b, &c, &d])
        }
        _ => {
            let [a, b] = AffinityCalls::new(key)?.keys().clone();
            RawBatch::of(&[&a, &b])
        }
    })
}

/// One call of core's pool handles ([`PoolCalls`], [`LeaseCalls`], [`AffinityCalls`]) at
/// `key`, packed as the smart cache's calls are (one export for every call keeps the
/// module small). `op`:
///
/// | op | call | arguments used |
/// |---|---|---|
/// | 0 | [`PoolCalls::pick`] | |
/// | 1 | [`PoolCalls::seed`] | members in `data`/`ends`, `x` initial, `flag` overwrite |
/// | 2 | [`PoolCalls::remove`] | `member` |
/// | 3 | [`PoolCalls::restore`] | `member`, `mode` |
/// | 4 | [`LeaseCalls::seed`] | members in `data`/`ends` |
/// | 5 | [`LeaseCalls::acquire`] | `x` ttl ms, `y` now ms (or none) |
/// | 6 | [`LeaseCalls::release`] | `x` lease id, `y` now ms (or none) |
/// | 7 | [`LeaseCalls::reclaim`] | `y` now ms (or none) |
/// | 8 | [`AffinityCalls::take`] | `member` the item, candidates in `data`/`ends`, `x` a fixed cap (or none: the factor `c`) |
/// | 9 | [`AffinityCalls::release`] | `member` the item |
///
/// and op 10 checks a number of picks `x` ([`checked_picks`]; counts `[n]`).
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = rawPoolCall)]
pub fn raw_pool_call(
    op: u8,
    key: &[u8],
    member: &[u8],
    mode: &str,
    data: &[u8],
    ends: &[u32],
    x: i128,
    y: i128,
    c: f64,
    flag: bool,
) -> Result<RawBatch, JsError> {
    let list = unpack(data, ends)?;
    Ok(match op {
        0..=3 => {
            let p = PoolCalls::new(key)?;
            match op {
                0 => batch(p.pick()),
                1 => batch(p.seed(list, count(x), flag)?),
                2 => batch(p.remove(member)),
                _ => batch(p.restore(member, mode.parse::<Restore>()?)?),
            }
        }
        4..=7 => {
            let l = LeaseCalls::new(key)?;
            match op {
                4 => batch(l.seed(list)?),
                5 => batch(l.acquire(count(x), now(y))?),
                6 => batch(l.release(count(x), now(y))),
                _ => batch(l.reclaim(now(y))),
            }
        }
        8 | 9 => {
            let a = AffinityCalls::new(key)?;
            if op == 9 {
                batch(a.release(member)?)
            } else {
                let cap = match given(x) {
                    Some(n) => Cap::Fixed(count(n)),
                    None => Cap::Factor(c),
                };
                batch(a.take(member, &list, cap)?)
            }
        }
        _ => {
            let mut b = RawBatch::default();
            b.counts.push(checked_picks(x)? as f64);
            b
        }
    })
}

/// Decodes the reply of the pool script `name` (walked as for the cache's `rawDecode`):
///
/// | script | counts | items |
/// |---|---|---|
/// | least-used, affinity-release | `[0]` nil, `[1]` | the member (node) |
/// | seed, restore | `[count]` | |
/// | remove | `[0]` nil, `[1, count]` | |
/// | lease-acquire | `[0]` nil, `[1, id, deadline]` | the member |
/// | lease-release | `[1]` released, `[2]` expired, `[0]` already released or reclaimed | |
/// | lease-reclaim | `[n, id₁, deadline₁, ...]` | the members |
/// | affinity-take | `[0]` nil, `[1, load, cap, new]` | the node |
///
/// `REDIS_PROTOCOL` for a reply of another shape.
#[wasm_bindgen(js_name = rawPoolDecode)]
pub fn raw_pool_decode(
    name: &str,
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
) -> Result<RawBatch, JsError> {
    let script = [
        &LEAST_USED,
        &SEED,
        &REMOVE,
        &RESTORE,
        &LEASE_ACQUIRE,
        &LEASE_RELEASE,
        &LEASE_RECLAIM,
        &AFFINITY_TAKE,
        &AFFINITY_RELEASE,
    ]
    .into_iter()
    .find(|s| s.name() == name)
    .ok_or_else(|| JsError::new(ErrorCode::BadType, "not the name of a pool script"))?;
    let value = walked(tags, nums, data, ends)?.ok_or_else(|| {
        JsError::from(keyroute::script::ReplyError {
            script: script.name(),
            expected: "a reply of the documented shape",
        })
    })?;
    let mut b = RawBatch::default();
    let mut put = |nums: &[u64], items: &[&[u8]]| {
        b.counts.extend(nums.iter().map(|&n| n as f64));
        for item in items {
            b.push(item);
        }
    };
    match script.name() {
        "least-used" | "affinity-release" => match decode_member(value, script)? {
            Some(m) => put(&[1], &[&m]),
            None => put(&[0], &[]),
        },
        "seed" | "restore" => put(&[decode_count(value, script)?], &[]),
        "remove" => match decode_removed(value)? {
            Some(c) => put(&[1, c], &[]),
            None => put(&[0], &[]),
        },
        "lease-acquire" => match Lease::decode(value)? {
            Some(l) => put(&[1, l.id, l.deadline_ms], &[&l.member]),
            None => put(&[0], &[]),
        },
        "lease-release" => put(
            &[match Release::decode(value)? {
                Release::Released => 1,
                Release::Expired => 2,
                _ => 0,
            }],
            &[],
        ),
        "lease-reclaim" => {
            let leases = Lease::decode_reclaimed(value)?;
            let mut nums = Vec::with_capacity(1 + 2 * leases.len());
            nums.push(leases.len() as u64);
            for l in &leases {
                nums.extend([l.id, l.deadline_ms]);
            }
            let members: Vec<&[u8]> = leases.iter().map(|l| &l.member[..]).collect();
            put(&nums, &members);
        }
        _ => match Taken::decode(value)? {
            Some(t) => put(&[1, t.load, t.cap, t.new.into()], &[&t.node]),
            None => put(&[0], &[]),
        },
    }
    Ok(b)
}

//! Raw smart-cache exports: key names, session ids, input checks, script calls, reply
//! decoders, XFetch and the poll schedule of [`keyroute::cache`]. The JavaScript glue
//! (`js/cache.mjs`) runs them on a node-redis client: every decision is core's, the glue
//! only does the I/O.
//!
//! Conventions (besides those of the crate):
//! * a token key is 16 bytes, or empty for [`TokenKey::DEFAULT`];
//! * durations and times cross as `i128` (core's [`checked_ms`] checks them); fences,
//!   versions and times that come back are `f64` (all below 2^53: times are below
//!   [`MAX_MS`]);
//! * a script call comes back as a [`RawBatch`]: the script's name, its keys, then its
//!   arguments, with `counts = [number of keys]`;
//! * a reply goes in as a preorder walk: `tags` (0 nil, 1 integer, 2 string, 3 array),
//!   `nums` (each integer's value and each array's length, in order) and the strings packed
//!   in `data` at the end offsets `ends`; a decoded answer comes back as a [`RawBatch`]
//!   whose `counts` are `[variant, numbers...]` and whose items are its byte fields.
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::cache::{
    check_client_id, check_device_id, check_kind, check_value_len, check_version, check_warm_count,
    checked_max_value_len, checked_ms, decode_flag, decode_sessions, decode_warm, device_key,
    session_keys, xfetch, xfetch_arg, Call, ClientKeys, ClientToken, CreateReply, FillReply,
    GetReply, LoadFailure, Notify, Peek, PollSchedule, PutReply, ReplyError, SessionId, TokenKey,
    Touch, Value, DEFAULT_MAX_VALUE_LEN, MAX_CLIENT_ID_LEN, MAX_DEVICE_ID_LEN, MAX_ERROR_CODE_LEN,
    MAX_ERROR_MESSAGE_LEN, MAX_FENCED_LOADS, MAX_KIND_LEN, MAX_MS, MAX_OWNER_LEN,
    MAX_VALUE_LEN_LIMIT, MAX_VERSION_LEN, MAX_WARM_KINDS, PEEK_FIELDS,
};
use keyroute::error::ErrorCode;
use wasm_bindgen::prelude::*;

use crate::batch::RawBatch;
use crate::error::{given, unpack, JsError};

fn token_key(key: &[u8]) -> Result<TokenKey, JsError> {
    if key.is_empty() {
        return Ok(TokenKey::DEFAULT);
    }
    match <[u8; 16]>::try_from(key) {
        Ok(k) => Ok(TokenKey::new(k)),
        Err(_) => Err(JsError::new(
            ErrorCode::BadType,
            "tokenKey must be 16 bytes (a Uint8Array, or a string of 16 bytes in UTF-8)",
        )),
    }
}

fn keys_of(client: &[u8], key: &[u8]) -> Result<ClientKeys, JsError> {
    Ok(ClientKeys::new(client, &token_key(key)?)?)
}

/// Every `what` the glue names a duration with (core keeps it as `&'static str`).
fn static_what(what: &str) -> &'static str {
    const NAMES: [&str; 11] = [
        "ioTimeoutMs",
        "leaseMs",
        "softTtlMs",
        "hardTtlMs",
        "negTtlMs",
        "ttlMs",
        "maxAgeMs",
        "timeoutMs",
        "tombstoneMs",
        "loadMs",
        "nowMs",
    ];
    NAMES
        .iter()
        .find(|n| **n == what)
        .copied()
        .unwrap_or("a duration")
}

/// Core's limits, in the order of `CACHE_LIMITS` in the glue.
#[wasm_bindgen(js_name = rawCacheLimits)]
pub fn raw_cache_limits() -> Vec<f64> {
    [
        MAX_CLIENT_ID_LEN,
        MAX_KIND_LEN,
        MAX_DEVICE_ID_LEN,
        MAX_VERSION_LEN,
        MAX_WARM_KINDS,
        DEFAULT_MAX_VALUE_LEN,
        MAX_VALUE_LEN_LIMIT,
        MAX_OWNER_LEN,
        MAX_ERROR_CODE_LEN,
        MAX_ERROR_MESSAGE_LEN,
        ClientToken::LEN,
        SessionId::LEN,
    ]
    .iter()
    .map(|&n| n as f64)
    .chain([
        MAX_MS as f64,
        PollSchedule::FIRST_MS as f64,
        PollSchedule::MAX_MS as f64,
        f64::from(MAX_FENCED_LOADS),
    ])
    .collect()
}

/// `[token, tag, session index, channel]` of a client.
#[wasm_bindgen(js_name = rawClientKeys)]
pub fn raw_client_keys(client: &[u8], key: &[u8]) -> Result<Vec<String>, JsError> {
    let keys = keys_of(client, key)?;
    let s = |b: Vec<u8>| String::from_utf8(b).unwrap_or_default();
    Ok(alloc::vec![
        String::from(keys.token().as_str()),
        s(keys.tag()),
        s(keys.session_index()),
        s(keys.channel()),
    ])
}

/// The entry key of `kind` for a client.
#[wasm_bindgen(js_name = rawEntryKey)]
pub fn raw_entry_key(client: &[u8], key: &[u8], kind: &[u8]) -> Result<Vec<u8>, JsError> {
    Ok(keys_of(client, key)?.entry(kind)?)
}

/// The device key.
#[wasm_bindgen(js_name = rawDeviceKey)]
pub fn raw_device_key(device: &[u8]) -> Result<Vec<u8>, JsError> {
    Ok(device_key(device)?)
}

/// A new session id of a client from 16 random bytes.
#[wasm_bindgen(js_name = rawSessionId)]
pub fn raw_session_id(client: &[u8], key: &[u8], random: &[u8]) -> Result<String, JsError> {
    let random = <[u8; 16]>::try_from(random).map_err(|_| {
        JsError::new(
            ErrorCode::BadType,
            "a session id needs 16 random bytes (a Uint8Array)",
        )
    })?;
    let token = ClientToken::of(client, &token_key(key)?)?;
    Ok(String::from(SessionId::new(token, random).as_str()))
}

/// `[session id, token, session key, index key]` of a session id.
#[wasm_bindgen(js_name = rawParseSessionId)]
pub fn raw_parse_session_id(text: &[u8]) -> Result<Vec<String>, JsError> {
    let sid = SessionId::parse(text)?;
    let [session, index] = session_keys(&sid);
    let s = |b: Vec<u8>| String::from_utf8(b).unwrap_or_default();
    Ok(alloc::vec![
        String::from(sid.as_str()),
        String::from(sid.token().as_str()),
        s(session),
        s(index),
    ])
}

/// One of core's checks of a name: 0 client id, 1 kind, 2 device id, 3 version.
#[wasm_bindgen(js_name = rawCheck)]
pub fn raw_check(which: u8, name: &[u8]) -> Result<(), JsError> {
    Ok(match which {
        0 => check_client_id(name),
        1 => check_kind(name),
        2 => check_device_id(name),
        _ => check_version(name),
    }?)
}

/// [`check_value_len`]; `max` is a checked maximum.
#[wasm_bindgen(js_name = rawCheckValueLen)]
pub fn raw_check_value_len(len: f64, max: f64) -> Result<(), JsError> {
    Ok(check_value_len(len as usize, max as usize)?)
}

/// [`checked_max_value_len`].
#[wasm_bindgen(js_name = rawCheckedMaxValueLen)]
pub fn raw_checked_max_value_len(max: i128) -> Result<f64, JsError> {
    let n = usize::try_from(max.max(0)).unwrap_or(usize::MAX);
    let n = if max > MAX_VALUE_LEN_LIMIT as i128 {
        usize::MAX
    } else {
        n
    };
    Ok(checked_max_value_len(n)? as f64)
}

/// [`check_warm_count`].
#[wasm_bindgen(js_name = rawCheckWarmCount)]
pub fn raw_check_warm_count(count: f64) -> Result<(), JsError> {
    Ok(check_warm_count(count as usize)?)
}

/// [`checked_ms`]: `what` names the setting.
#[wasm_bindgen(js_name = rawCheckedMs)]
pub fn raw_checked_ms(what: &str, value: i128, min: u8) -> Result<f64, JsError> {
    Ok(checked_ms(static_what(what), value, min.into())? as f64)
}

/// A loader's failure as the scripts cache it: `[code, message]`, the code 1 to
/// [`MAX_ERROR_CODE_LEN`] bytes (empty: `BACKEND_ERROR`), the message cut by
/// [`truncate_message`], both at a character boundary.
#[wasm_bindgen(js_name = rawLoadError)]
pub fn raw_load_error(code: &str, message: &str) -> Vec<String> {
    let failure = LoadFailure::new(code, message);
    alloc::vec![failure.code, failure.message]
}

/// [`xfetch::should_refresh`].
#[wasm_bindgen(js_name = rawShouldRefresh)]
pub fn raw_should_refresh(now: f64, soft: f64, delta: f64, e: f64) -> bool {
    xfetch::should_refresh(saturating(now), saturating(soft), saturating(delta), e)
}

/// [`xfetch_arg`].
#[wasm_bindgen(js_name = rawXfetchArg)]
pub fn raw_xfetch_arg(e: f64) -> String {
    xfetch_arg(e)
}

/// A non-negative double as `u64`, saturating (NaN and negatives are 0).
fn saturating(x: f64) -> u64 {
    if x >= 18_446_744_073_709_551_615.0 {
        u64::MAX
    } else if x > 0.0 {
        x as u64
    } else {
        0
    }
}

/// [`PollSchedule`].
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct RawPollSchedule(PollSchedule);

#[wasm_bindgen]
impl RawPollSchedule {
    /// At its first step.
    #[wasm_bindgen(constructor)]
    pub fn new() -> RawPollSchedule {
        RawPollSchedule::default()
    }
    /// [`PollSchedule::next_wait`] (negative and NaN remaining times count as 0).
    #[wasm_bindgen(js_name = nextWait)]
    pub fn next_wait(&mut self, lease_remaining: f64, deadline_remaining: f64) -> f64 {
        self.0
            .next_wait(saturating(lease_remaining), saturating(deadline_remaining)) as f64
    }
    /// [`PollSchedule::reset`].
    pub fn reset(&mut self) {
        self.0.reset();
    }
}

// ------------------------------------------------------------------ script calls

/// A duration (checked by core: `BAD_TTL`).
fn dur(what: &'static str, value: i128, min: u64) -> Result<u64, JsError> {
    Ok(checked_ms(what, value, min)?)
}

/// A fence or version (`OUT_OF_RANGE` unless 0..=2^48, the scripts' range).
fn whole(what: &str, value: i128) -> Result<u64, JsError> {
    match u64::try_from(value) {
        Ok(n) if n <= MAX_MS => Ok(n),
        _ => Err(JsError::new(
            ErrorCode::OutOfRange,
            crate::error::text(format_args!(
                "{what} {} is outside 0..=2^48, the range the scripts take",
                crate::error::decimal(value)
            )),
        )),
    }
}

/// The optional `now_ms` of the test-only argument.
fn now(value: i128) -> Result<Option<u64>, JsError> {
    given(value).map(|v| whole("nowMs", v)).transpose()
}

pub(crate) fn notify(n: u8) -> Notify {
    match n {
        0 => Notify::Publish,
        1 => Notify::ShardPublish,
        _ => Notify::Nothing,
    }
}

fn owner_of(owner: &[u8]) -> Result<&[u8], JsError> {
    if owner.len() > MAX_OWNER_LEN {
        return Err(JsError::new(
            ErrorCode::TooLarge,
            "a lease owner is at most 256 bytes",
        ));
    }
    Ok(owner)
}

pub(crate) fn batch(call: Call<'_>) -> RawBatch {
    let mut b = RawBatch::default();
    b.push(call.script.name().as_bytes());
    for k in &call.keys {
        b.push(k);
    }
    for a in &call.args {
        b.push(a);
    }
    b.counts.push(call.keys.len() as f64);
    b
}

/// [`Call::get`].
#[wasm_bindgen(js_name = rawCallGet)]
pub fn raw_call_get(
    entry: &[u8],
    lease_ms: i128,
    owner: &[u8],
    xfetch_e: f64,
    allow_stale: bool,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let lease = dur("leaseMs", lease_ms, 1)?;
    let call = Call::get(
        entry,
        lease,
        owner_of(owner)?,
        xfetch_e,
        allow_stale,
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::fill`].
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = rawCallFill)]
pub fn raw_call_fill(
    entry: &[u8],
    fence: i128,
    value: &[u8],
    soft_ms: i128,
    hard_ms: i128,
    load_ms: i128,
    notify_how: u8,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let call = Call::fill(
        entry,
        whole("fence", fence)?,
        value,
        dur("softTtlMs", soft_ms, 1)?,
        dur("hardTtlMs", hard_ms, 1)?,
        dur("loadMs", load_ms, 0)?,
        notify(notify_how),
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::extend`].
#[wasm_bindgen(js_name = rawCallExtend)]
pub fn raw_call_extend(
    entry: &[u8],
    fence: i128,
    lease_ms: i128,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let call = Call::extend(
        entry,
        whole("fence", fence)?,
        dur("leaseMs", lease_ms, 1)?,
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::abandon`].
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = rawCallAbandon)]
pub fn raw_call_abandon(
    entry: &[u8],
    fence: i128,
    code: &[u8],
    message: &[u8],
    neg_ttl_ms: i128,
    notify_how: u8,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let call = Call::abandon(
        entry,
        whole("fence", fence)?,
        code,
        message,
        dur("negTtlMs", neg_ttl_ms, 0)?,
        notify(notify_how),
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::invalidate`].
#[wasm_bindgen(js_name = rawCallInvalidate)]
pub fn raw_call_invalidate(
    entry: &[u8],
    tombstone_ms: i128,
    notify_how: u8,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let call = Call::invalidate(
        entry,
        dur("tombstoneMs", tombstone_ms, 1)?,
        notify(notify_how),
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::put`]: a direct write that bumps the entry's fence.
#[wasm_bindgen(js_name = rawCallPut)]
pub fn raw_call_put(
    entry: &[u8],
    value: &[u8],
    soft_ttl_ms: i128,
    hard_ttl_ms: i128,
    notify_how: u8,
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let call = Call::put(
        entry,
        value,
        dur("softTtlMs", soft_ttl_ms, 1)?,
        dur("hardTtlMs", hard_ttl_ms, 1)?,
        notify(notify_how),
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::warm_begin`] over the entries of a packed batch (at most
/// [`MAX_WARM_KINDS`](keyroute::cache::MAX_WARM_KINDS)).
#[wasm_bindgen(js_name = rawCallWarmBegin)]
pub fn raw_call_warm_begin(
    data: &[u8],
    ends: &[u32],
    lease_ms: i128,
    owner: &[u8],
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    check_warm_count(ends.len())?;
    let entries: Vec<Vec<u8>> = unpack(data, ends)?
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect();
    let call = Call::warm_begin(
        &entries,
        dur("leaseMs", lease_ms, 1)?,
        owner_of(owner)?,
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::sess_create`]; `max_age_ms` 0 means none.
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = rawCallSessCreate)]
pub fn raw_call_sess_create(
    sid: &[u8],
    client: &[u8],
    version: &[u8],
    ttl_ms: i128,
    max_age_ms: i128,
    data: &[u8],
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let sid = SessionId::parse(sid)?;
    check_client_id(client)?;
    check_version(version)?;
    let call = Call::sess_create(
        &sid,
        client,
        version,
        dur("ttlMs", ttl_ms, 1)?,
        dur("maxAgeMs", max_age_ms, 0)?,
        data,
        now(now_ms)?,
    );
    Ok(batch(call))
}

/// [`Call::sess_touch`]; `check` says whether `version` is given.
#[wasm_bindgen(js_name = rawCallSessTouch)]
pub fn raw_call_sess_touch(
    sid: &[u8],
    check: bool,
    version: &[u8],
    now_ms: i128,
) -> Result<RawBatch, JsError> {
    let sid = SessionId::parse(sid)?;
    check_version(version)?;
    let call = Call::sess_touch(&sid, check.then_some(version), now(now_ms)?);
    Ok(batch(call))
}

/// [`Call::sess_destroy`].
#[wasm_bindgen(js_name = rawCallSessDestroy)]
pub fn raw_call_sess_destroy(sid: &[u8], now_ms: i128) -> Result<RawBatch, JsError> {
    let sid = SessionId::parse(sid)?;
    Ok(batch(Call::sess_destroy(&sid, now(now_ms)?)))
}

/// [`Call::sess_list`] of a client.
#[wasm_bindgen(js_name = rawCallSessList)]
pub fn raw_call_sess_list(client: &[u8], key: &[u8], now_ms: i128) -> Result<RawBatch, JsError> {
    let token = keys_of(client, key)?.token();
    Ok(batch(Call::sess_list(token, now(now_ms)?)))
}

/// [`Call::device_bind`] of a device (its key is built here) and a client.
#[wasm_bindgen(js_name = rawCallDeviceBind)]
pub fn raw_call_device_bind(
    device: &[u8],
    client: &[u8],
    ttl_ms: i128,
) -> Result<RawBatch, JsError> {
    let key = device_key(device)?;
    check_client_id(client)?;
    let call = Call::device_bind(&key, client, dur("ttlMs", ttl_ms, 1)?);
    Ok(batch(call))
}

// ------------------------------------------------------------------ replies

/// Rebuilds a reply from its preorder walk (see the module docs).
struct Walk<'a> {
    tags: &'a [u8],
    nums: &'a [f64],
    items: Vec<&'a [u8]>,
    t: usize,
    n: usize,
    i: usize,
}

impl Walk<'_> {
    fn next(&mut self, depth: u32) -> Option<Value> {
        let tag = *self.tags.get(self.t)?;
        self.t += 1;
        Some(match tag {
            0 => Value::Nil,
            1 => {
                let x = *self.nums.get(self.n)?;
                self.n += 1;
                if !crate::error::is_integer(x) || x.abs() > 9_007_199_254_740_992.0 {
                    return None;
                }
                Value::Int(x as i64)
            }
            2 => {
                let b = self.items.get(self.i)?;
                self.i += 1;
                Value::Bytes(b.to_vec())
            }
            3 if depth < 8 => {
                let len = *self.nums.get(self.n)?;
                self.n += 1;
                // Never trust the length: items are pushed as they are read.
                let mut out = Vec::new();
                let mut k = 0.0;
                while k < len {
                    out.push(self.next(depth + 1)?);
                    k += 1.0;
                }
                Value::Array(out)
            }
            _ => return None,
        })
    }
}

/// A reply walked as for [`raw_decode`], as core's [`Value`] (`None` for a walk that is
/// not one).
pub(crate) fn walked(
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
) -> Result<Option<Value>, JsError> {
    let mut walk = Walk {
        tags,
        nums,
        items: unpack(data, ends)?,
        t: 0,
        n: 0,
        i: 0,
    };
    Ok(walk.next(0))
}

fn protocol(script: &'static str) -> JsError {
    ReplyError {
        script,
        expected: "a reply of the documented shape",
    }
    .into()
}

/// Decodes the reply of the script `name` (see the module docs for the encoding). The
/// variant numbers: sc-get 1 hit, 2 refresh, 3 stale, 4 lease, 5 wait, 6 error (as the
/// script's own tags); sc-fill 0 fenced, 1 stored, 2 duplicate; sess-create 0 taken, 1
/// created; sess-touch 0 expired, 1 live, 2 version mismatch; 0/1 scripts 0 or 1;
/// warm-begin the fences (0: skipped); sess-list the expiries, with the ids as items;
/// sc-put the version and fence.
/// The smart-cache scripts whose replies [`raw_decode`] reads, by name: those the
/// JavaScript `SmartCache`, `Sessions` and `Devices` run (not `sc-read`, `sess-update` or
/// `sess-guard`, which only `keyroute serve` runs). Names only: a scan of
/// `CACHE_SCRIPTS` would link every script's text into this .wasm, `sess-guard`'s 20 KB
/// (it inlines the scripts it runs) among them; the JavaScript takes the texts from the
/// package's scripts.
const DECODED: [&str; 12] = [
    "sc-get",
    "sc-fill",
    "sc-extend",
    "sc-abandon",
    "sc-invalidate",
    "warm-begin",
    "sess-create",
    "sess-touch",
    "sess-destroy",
    "sess-list",
    "device-bind",
    "sc-put",
];

#[wasm_bindgen(js_name = rawDecode)]
pub fn raw_decode(
    name: &str,
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
) -> Result<RawBatch, JsError> {
    let script: &'static str = DECODED
        .iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| {
            JsError::new(
                ErrorCode::BadType,
                "not the name of a smart-cache script whose reply is decoded here",
            )
        })?;
    let mut walk = Walk {
        tags,
        nums,
        items: unpack(data, ends)?,
        t: 0,
        n: 0,
        i: 0,
    };
    let value = walk.next(0).ok_or_else(|| protocol(script))?;
    let mut b = RawBatch::default();
    let mut put = |tag: u64, nums: &[u64], items: &[&[u8]]| {
        b.counts.push(tag as f64);
        b.counts.extend(nums.iter().map(|&n| n as f64));
        for item in items {
            b.push(item);
        }
    };
    match script {
        "sc-get" => match GetReply::decode(value)? {
            GetReply::Hit { value, version } => put(1, &[version], &[&value]),
            GetReply::Refresh {
                value,
                version,
                fence,
                takeover,
            } => put(2, &[version, fence, takeover.into()], &[&value]),
            GetReply::Stale { value, version } => put(3, &[version], &[&value]),
            GetReply::Lease { fence, takeover } => put(4, &[fence, takeover.into()], &[]),
            GetReply::Wait {
                remaining_ms,
                fence,
            } => put(5, &[remaining_ms, fence], &[]),
            GetReply::Error {
                code,
                message,
                remaining_ms,
            } => put(6, &[remaining_ms], &[&code, &message]),
        },
        "sc-fill" => match FillReply::decode(value)? {
            FillReply::Fenced { current } => put(0, &[current], &[]),
            FillReply::Stored { version } => put(1, &[version], &[]),
            FillReply::Duplicate { version } => put(2, &[version], &[]),
        },
        "sess-create" => match CreateReply::decode(value)? {
            CreateReply::Taken => put(0, &[], &[]),
            CreateReply::Created { expires_at } => put(1, &[expires_at], &[]),
        },
        "sess-touch" => match Touch::decode(value)? {
            Touch::Expired => put(0, &[], &[]),
            Touch::Live {
                client,
                data,
                expires_at,
                version,
            } => put(1, &[expires_at], &[&client, &data, &version]),
            Touch::VersionMismatch { stored } => put(2, &[], &[&stored]),
        },
        "warm-begin" => {
            let fences: Vec<u64> = decode_warm(value)?
                .into_iter()
                .map(|f| f.unwrap_or(0))
                .collect();
            put(0, &fences, &[]);
        }
        "sess-list" => {
            let pairs = decode_sessions(value)?;
            let at: Vec<u64> = pairs.iter().map(|p| p.1).collect();
            let ids: Vec<&[u8]> = pairs.iter().map(|p| &p.0[..]).collect();
            put(0, &at, &ids);
        }
        "sc-put" => {
            let p = PutReply::decode(value)?;
            put(0, &[p.version, p.fence], &[]);
        }
        _ => put(decode_flag(&value, script)?.into(), &[], &[]),
    }
    Ok(b)
}

/// The fields the warm-hit fast path reads (`HMGET entry v sx d hx`).
#[wasm_bindgen(js_name = rawPeekFields)]
pub fn raw_peek_fields() -> Vec<String> {
    PEEK_FIELDS.iter().map(|f| String::from(*f)).collect()
}

/// The warm-hit fast path: the value when the `HMGET` reply (walked as for
/// [`raw_decode`]) is a fresh hit at `now_ms` (this host's clock) with the XFetch draw
/// `xfetch_e`, else `undefined` (ask sc-get). `REDIS_PROTOCOL` for another shape.
#[wasm_bindgen(js_name = rawPeek)]
pub fn raw_peek(
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
    now_ms: f64,
    xfetch_e: f64,
) -> Result<Option<Vec<u8>>, JsError> {
    const WHAT: &str = "HMGET (fast hit)";
    let mut walk = Walk {
        tags,
        nums,
        items: unpack(data, ends)?,
        t: 0,
        n: 0,
        i: 0,
    };
    let value = walk.next(0).ok_or_else(|| protocol(WHAT))?;
    if !(crate::error::is_integer(now_ms) && (0.0..=9_007_199_254_740_992.0).contains(&now_ms)) {
        return Err(JsError::new(
            ErrorCode::BadType,
            "nowMs must be a safe integer >= 0",
        ));
    }
    Ok(match Peek::decode(value, now_ms as u64, xfetch_e)? {
        Peek::Hit { value, .. } => Some(value),
        Peek::Ask => None,
    })
}

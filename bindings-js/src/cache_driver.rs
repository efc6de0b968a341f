//! Core's sans-I/O cache drivers ([`GetOrLoad`], [`Fill`], [`Warm`]) for the JavaScript
//! executor (`js/cache.mjs`): the glue carries out each step on node-redis and reports
//! back; every decision is core's.
//!
//! Conventions (besides those of `cache.rs`):
//! * settings cross as the array of [`raw_cache_defaults`]: `[leaseMs, softTtlMs,
//!   hardTtlMs, negTtlMs, serveStale, fastHits, xfetchBeta, maxValueBytes]` (then, in the
//!   defaults only, `ioTimeoutMs, timeoutMs`);
//! * a step comes back as a [`RawBatch`] whose `counts[0]` is its kind (0 peek, 1 run, 2
//!   subscribe, 3 wait, 4 sleep, 5 load, 6 done): peek `[0]` with the key as its item; run
//!   `[1, number of keys]` with the call's name, keys and arguments as items; wait and
//!   sleep `[3 or 4, ms]`; load `[5, every ms, number of keys, stale given]` with the
//!   heartbeat's call, then the stale value when given; subscribe `[2]`; done `[6]`;
//! * a fault is 0 (none: the reply is given), 1 timeout, 2 connection, 3 other;
//! * a load result is 0 a value, 1 a failure, 2 a failure not cached, 3 refused (the
//!   glue's own error);
//! * an outcome comes back as a [`RawBatch`] whose `counts[0]` is 0 a value (its item),
//!   1 timeout, 2 the glue's last I/O error, 3 a backend error (`counts[1]` 1 if it came
//!   from the cache; code and message as items), 4 the glue's own refusal; a reply or
//!   input error is thrown with its code.
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::cache::{
    CacheSettings, Failure, Fault, Fill, FillStep, GetOrLoad, GetOrLoadStep as Step, Heartbeat,
    LoadFailure, LoadResult, SessionSettings, Stored, Warm,
};
use keyroute::error::ErrorCode;
use wasm_bindgen::prelude::*;

use crate::batch::RawBatch;
use crate::cache::{batch, notify, walked};
use crate::error::JsError;

/// Core's defaults ([`CacheSettings::DEFAULT`]), then the default I/O timeout and read
/// timeout, in the settings order of the module docs.
#[wasm_bindgen(js_name = rawCacheDefaults)]
pub fn raw_cache_defaults() -> Vec<f64> {
    let d = CacheSettings::DEFAULT;
    let mut out = settings_array(&d);
    out.push(CacheSettings::DEFAULT_IO_TIMEOUT_MS as f64);
    out.push(CacheSettings::DEFAULT_TIMEOUT_MS as f64);
    out
}

fn settings_array(s: &CacheSettings) -> Vec<f64> {
    alloc::vec![
        s.lease_ms as f64,
        s.soft_ttl_ms as f64,
        s.hard_ttl_ms as f64,
        s.neg_ttl_ms as f64,
        f64::from(u8::from(s.serve_stale)),
        f64::from(u8::from(s.fast_hits)),
        s.xfetch_beta,
        s.max_value_len as f64,
    ]
}

fn whole(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x as u64
    } else {
        0
    }
}

/// The settings of an array (see the module docs), checked by core's rule.
fn settings_of(a: &[f64]) -> Result<CacheSettings, JsError> {
    if a.len() < 8 {
        return Err(JsError::new(
            ErrorCode::BadType,
            "the cache settings must be an array of 8 numbers",
        ));
    }
    let s = CacheSettings {
        lease_ms: whole(a[0]),
        soft_ttl_ms: whole(a[1]),
        hard_ttl_ms: whole(a[2]),
        neg_ttl_ms: whole(a[3]),
        serve_stale: a[4] != 0.0,
        fast_hits: a[5] != 0.0,
        xfetch_beta: a[6],
        max_value_len: whole(a[7]).try_into().unwrap_or(usize::MAX),
    };
    s.check()?;
    Ok(s)
}

/// Checks settings by core's rule (`BAD_TTL`, `TOO_LARGE`), and gives them back followed
/// by the tombstone an invalidation keeps (ms).
#[wasm_bindgen(js_name = rawCheckSettings)]
pub fn raw_check_settings(settings: &[f64]) -> Result<Vec<f64>, JsError> {
    let s = settings_of(settings)?;
    let mut out = settings_array(&s);
    out.push(s.tombstone_ms() as f64);
    Ok(out)
}

/// The message of `SESSION_EXPIRED` (core's summary of the code, the same in every
/// binding).
#[wasm_bindgen(js_name = rawSessionExpiredMessage)]
pub fn raw_session_expired_message() -> String {
    String::from(ErrorCode::SessionExpired.summary())
}

/// Core's session defaults ([`SessionSettings::DEFAULT`]): `[ttlMs, maxDataBytes]`.
#[wasm_bindgen(js_name = rawSessionDefaults)]
pub fn raw_session_defaults() -> Vec<f64> {
    let d = SessionSettings::DEFAULT;
    alloc::vec![d.ttl_ms as f64, d.max_data_len as f64]
}

/// Whether a lease's heartbeat goes on after a beat's reply (`fault` 0) or fault
/// ([`Heartbeat::keep_beating`]).
#[wasm_bindgen(js_name = rawKeepBeating)]
pub fn raw_keep_beating(
    fault_kind: u8,
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
) -> bool {
    let beat = Heartbeat::new(Vec::new(), 0, &CacheSettings::DEFAULT);
    match reply(fault_kind, tags, nums, data, ends) {
        Ok(Ok(value)) => beat.keep_beating(Ok(&value)),
        Ok(Err(f)) => beat.keep_beating(Err(f)),
        Err(_) => false,
    }
}

fn fault(kind: u8) -> Fault {
    match kind {
        1 => Fault::Timeout,
        2 => Fault::Connection,
        _ => Fault::Other,
    }
}

/// A reply (`fault` 0) walked as in `cache.rs`, or the fault.
fn reply(
    kind: u8,
    tags: &[u8],
    nums: &[f64],
    data: &[u8],
    ends: &[u32],
) -> Result<Result<keyroute::cache::Value, Fault>, JsError> {
    if kind != 0 {
        return Ok(Err(fault(kind)));
    }
    // A walk that is not one is a reply of the wrong shape: the decoder says so.
    Ok(Ok(
        walked(tags, nums, data, ends)?.unwrap_or(keyroute::cache::Value::Array(Vec::new()))
    ))
}

fn load_result(kind: u8, value: &[u8], code: &str, message: &str) -> LoadResult {
    match kind {
        0 => LoadResult::Value(value.to_vec()),
        1 => LoadResult::Failed(LoadFailure::new(code, message)),
        2 => LoadResult::Failed(LoadFailure::new(code, message).uncached()),
        _ => LoadResult::Refused {
            code: String::from(code),
            message: String::from(message),
        },
    }
}

fn run_step(call: keyroute::cache::Call<'_>) -> RawBatch {
    let mut b = batch(call);
    b.counts.insert(0, 1.0);
    b
}

fn load_step(heartbeat: &Heartbeat, stale: Option<&[u8]>) -> RawBatch {
    let call = heartbeat.call();
    let keys = call.keys.len() as f64;
    let mut b = batch(call);
    b.counts = alloc::vec![
        5.0,
        heartbeat.every_ms() as f64,
        keys,
        f64::from(u8::from(stale.is_some())),
    ];
    if let Some(stale) = stale {
        b.push(stale);
    }
    b
}

fn kind_only(kind: f64, n: Option<u64>) -> RawBatch {
    let mut b = RawBatch::default();
    b.counts.push(kind);
    if let Some(n) = n {
        b.counts.push(n as f64);
    }
    b
}

/// An outcome as a batch (see the module docs); reply and input errors are thrown.
fn outcome_batch(outcome: Option<Result<Vec<u8>, Failure>>) -> Result<RawBatch, JsError> {
    let mut b = RawBatch::default();
    match outcome {
        Some(Ok(value)) => {
            b.counts.push(0.0);
            b.push(&value);
        }
        Some(Err(Failure::Timeout)) => b.counts.push(1.0),
        Some(Err(Failure::Io)) => b.counts.push(2.0),
        Some(Err(Failure::Backend {
            code,
            message,
            cached,
        })) => {
            b.counts.push(3.0);
            b.counts.push(f64::from(u8::from(cached)));
            b.push(&code);
            b.push(&message);
        }
        Some(Err(Failure::Refused | Failure::Panicked)) => b.counts.push(4.0),
        Some(Err(Failure::Reply(e))) => return Err(e.into()),
        Some(Err(Failure::Input(e))) => return Err(e.into()),
        Some(Err(Failure::SessionExpired)) => {
            return Err(JsError::new(
                ErrorCode::SessionExpired,
                ErrorCode::SessionExpired.summary(),
            ))
        }
        None => {
            return Err(JsError::new(
                ErrorCode::Internal,
                "the cache driver has no outcome yet (or it was taken)",
            ))
        }
    }
    Ok(b)
}

enum Driver {
    Read(GetOrLoad),
    Fill(Fill),
}

/// Core's [`GetOrLoad`] (one smart-cache read) or [`Fill`] (a warm-up's load under a
/// lease): the glue asks [`step`](Self::step), carries it out, and reports with
/// [`report`](Self::report).
#[wasm_bindgen]
pub struct RawDriver {
    driver: Driver,
}

#[wasm_bindgen]
impl RawDriver {
    /// A read of `entry` by `owner`, ending `timeout_ms` from now (the glue's clock).
    pub fn read(
        entry: &[u8],
        owner: &[u8],
        settings: &[f64],
        notify_kind: u8,
        timeout_ms: f64,
    ) -> Result<RawDriver, JsError> {
        let settings = settings_of(settings)?;
        Ok(RawDriver {
            driver: Driver::Read(GetOrLoad::new(
                entry.to_vec(),
                owner,
                &settings,
                notify(notify_kind),
                0,
                whole(timeout_ms),
            )),
        })
    }

    /// The next step at `now_ms` (ms since the read began), with a uniform draw `u` in
    /// `(0, 1]` (a fill's steps need neither).
    pub fn step(&mut self, now_ms: f64, u: f64) -> RawBatch {
        match &mut self.driver {
            Driver::Read(read) => match read.step(whole(now_ms), u) {
                Step::Peek { key } => {
                    let mut b = kind_only(0.0, None);
                    b.push(key);
                    b
                }
                Step::Run(call) => run_step(call),
                Step::Subscribe => kind_only(2.0, None),
                Step::Wait { ms } => kind_only(3.0, Some(ms)),
                Step::Sleep { ms } => kind_only(4.0, Some(ms)),
                Step::Load { heartbeat, stale } => load_step(&heartbeat, stale),
                Step::Done => kind_only(6.0, None),
            },
            Driver::Fill(fill) => match fill.step() {
                FillStep::Load => load_step(&fill.heartbeat(), None),
                FillStep::Run(call) => run_step(call),
                FillStep::Done => kind_only(6.0, None),
            },
        }
    }

    /// Reports what the last step asked for. `what`: 0 the peek's reply (`flag` 1) or its
    /// failure (`flag` 0), with the Unix time `n`; 1 a call's reply (`flag` 0) or its fault
    /// (`flag`); 2 the subscription made; 3 a wait's end (`flag` 1: woken); 4 a sleep's end;
    /// 5 the loader's result (`flag` its kind, `value`, `code`, `message`), having run `n`
    /// ms.
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        what: u8,
        flag: u8,
        tags: &[u8],
        nums: &[f64],
        data: &[u8],
        ends: &[u32],
        value: &[u8],
        code: &str,
        message: &str,
        n: f64,
    ) -> Result<(), JsError> {
        match (&mut self.driver, what) {
            (Driver::Read(read), 0) => {
                let value = if flag == 1 {
                    walked(tags, nums, data, ends)?
                } else {
                    None
                };
                read.peeked(value, whole(n));
            }
            (Driver::Read(read), 1) => read.replied(reply(flag, tags, nums, data, ends)?),
            (Driver::Fill(fill), 1) => fill.replied(reply(flag, tags, nums, data, ends)?),
            (Driver::Read(read), 2) => read.subscribed(),
            (Driver::Read(read), 3) => read.woken(flag == 1),
            (Driver::Read(read), 4) => read.slept(),
            (Driver::Read(read), 5) => {
                read.loaded(load_result(flag, value, code, message), whole(n))
            }
            (Driver::Fill(fill), 5) => {
                fill.loaded(load_result(flag, value, code, message), whole(n))
            }
            _ => {}
        }
        Ok(())
    }

    /// The outcome (see the module docs): a fill's stored, unstored or fenced value as a
    /// value.
    pub fn outcome(&mut self) -> Result<RawBatch, JsError> {
        outcome_batch(match &mut self.driver {
            Driver::Read(read) => read.outcome(),
            Driver::Fill(fill) => fill.take_outcome().map(|stored| match stored {
                Stored::Stored(v) | Stored::Unstored(v) | Stored::Fenced(v) => Ok(v),
                Stored::Failed(f) => Err(f),
            }),
        })
    }

    /// What the driver did: core's `Counts` in field order.
    pub fn counts(&self) -> Vec<f64> {
        let counts = match &self.driver {
            Driver::Read(read) => read.counts(),
            Driver::Fill(fill) => fill.counts(),
        };
        counts.to_array().iter().map(|&n| n as f64).collect()
    }
}

/// Core's [`Warm`]: `warm-begin`, then a fill per lease.
#[wasm_bindgen]
pub struct RawWarm {
    warm: Warm,
    fills: Vec<Option<Fill>>,
}

#[wasm_bindgen]
impl RawWarm {
    /// A warm-up of the entries packed in `data` at `ends`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        data: &[u8],
        ends: &[u32],
        owner: &[u8],
        settings: &[f64],
        notify_kind: u8,
    ) -> Result<RawWarm, JsError> {
        let settings = settings_of(settings)?;
        let entries = crate::error::unpack(data, ends)?
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect();
        Ok(RawWarm {
            warm: Warm::new(entries, owner, &settings, notify(notify_kind)),
            fills: Vec::new(),
        })
    }

    /// The `warm-begin` call (`[keys]` with the call, as `rawCallWarmBegin`).
    pub fn call(&self) -> RawBatch {
        batch(self.warm.call())
    }

    /// The plan from `warm-begin`'s reply: per entry 1 granted (take its fill with
    /// [`fill`](Self::fill)) or 0 skipped; a reply of the wrong shape is thrown.
    pub fn plan(
        &mut self,
        tags: &[u8],
        nums: &[f64],
        data: &[u8],
        ends: &[u32],
    ) -> Result<Vec<u8>, JsError> {
        let value =
            walked(tags, nums, data, ends)?.unwrap_or(keyroute::cache::Value::Array(Vec::new()));
        let plan = self.warm.plan(value).map_err(|f| match f {
            Failure::Reply(e) => e.into(),
            _ => JsError::new(ErrorCode::Internal, "warm-begin failed"),
        })?;
        let n = self.warm.entries().len();
        self.fills = (0..n).map(|_| None).collect();
        let mut granted = alloc::vec![0u8; n];
        for (i, fill) in plan.fills {
            granted[i] = 1;
            self.fills[i] = Some(fill);
        }
        Ok(granted)
    }

    /// The fill of entry `i` (once).
    pub fn fill(&mut self, i: usize) -> Result<RawDriver, JsError> {
        self.fills
            .get_mut(i)
            .and_then(Option::take)
            .map(|fill| RawDriver {
                driver: Driver::Fill(fill),
            })
            .ok_or_else(|| JsError::new(ErrorCode::BadType, "no lease was granted for that entry"))
    }
}

// Debug without the drivers' fields: a derived one would bring their formatting (floats
// among them) into the size-budgeted .wasm.
macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    )*};
}
opaque_debug!(RawDriver, RawWarm);

//! The recorded traces of core's smart-cache drivers (`tests/vectors/cache/driver_trace.json`):
//! their JSON shapes, shared by the recorder (redis/tests/cache_driver_trace.rs, on a real
//! Redis) and the replays (core/tests/cache_driver.rs here; the JavaScript one in
//! bindings-js/test/cache_driver.test.mjs reads the same shapes).
//!
//! A trace is a list of reads; each read has its settings, entry, owner and deadline, and
//! its events in order: `{"step": STEP, "now": ms, "u": draw}` for each call of `step`,
//! and one input after each step that asks for one: `{"peeked": VALUE|null, "wall": ms}`,
//! `{"replied": {"value": VALUE}|{"fault": "timeout"|"connection"|"other"}}`,
//! `{"subscribed": true}`, `{"woken": bool}`, `{"slept": true}`,
//! `{"loaded": {"value": HEX}|{"failed": [code, message, cached]}, "ms": n}`; the read
//! ends with `{"outcome": ...}` and `{"counts": [9 numbers]}`.
#![allow(dead_code)]

use keyroute::cache::{
    CacheSettings, Counts, Failure, Fault, GetOrLoadStep as Step, LoadFailure, LoadResult, Value,
};
use serde_json::{json, Value as Json};

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

pub fn value_json(v: &Value) -> Json {
    match v {
        Value::Nil => json!({ "nil": true }),
        Value::Int(n) => json!({ "int": n }),
        Value::Bytes(b) => json!({ "bytes": hex(b) }),
        Value::Array(items) => json!({ "array": items.iter().map(value_json).collect::<Vec<_>>() }),
    }
}

pub fn json_value(j: &Json) -> Value {
    if let Some(n) = j.get("int") {
        Value::Int(n.as_i64().expect("int"))
    } else if let Some(b) = j.get("bytes") {
        Value::Bytes(unhex(b.as_str().expect("hex")))
    } else if let Some(a) = j.get("array") {
        Value::Array(
            a.as_array()
                .expect("array")
                .iter()
                .map(json_value)
                .collect(),
        )
    } else {
        Value::Nil
    }
}

pub fn step_json(step: &Step<'_>) -> Json {
    match step {
        Step::Peek { key } => json!({ "kind": "peek", "key": hex(key) }),
        Step::Run(call) => json!({
            "kind": "run",
            "script": call.script.name(),
            "keys": call.keys.iter().map(|k| hex(k)).collect::<Vec<_>>(),
            "args": call.args.iter().map(|a| hex(a)).collect::<Vec<_>>(),
        }),
        Step::Subscribe => json!({ "kind": "subscribe" }),
        Step::Wait { ms } => json!({ "kind": "wait", "ms": ms }),
        Step::Sleep { ms } => json!({ "kind": "sleep", "ms": ms }),
        Step::Load { heartbeat, stale } => {
            let beat = heartbeat.call();
            json!({
                "kind": "load",
                "every_ms": heartbeat.every_ms(),
                "beat": beat.args.iter().map(|a| hex(a)).collect::<Vec<_>>(),
                "stale": stale.map(hex),
            })
        }
        Step::Done => json!({ "kind": "done" }),
    }
}

pub fn fault_name(f: Fault) -> &'static str {
    match f {
        Fault::Timeout => "timeout",
        Fault::Connection => "connection",
        Fault::Other => "other",
    }
}

pub fn fault_of(name: &str) -> Fault {
    match name {
        "timeout" => Fault::Timeout,
        "connection" => Fault::Connection,
        _ => Fault::Other,
    }
}

pub fn loaded_json(r: &LoadResult) -> Json {
    match r {
        LoadResult::Value(v) => json!({ "value": hex(v) }),
        LoadResult::Failed(f) => json!({ "failed": [f.code, f.message, f.cached] }),
        LoadResult::Refused { code, message } => json!({ "refused": [code, message] }),
        LoadResult::Panicked => json!({ "panicked": true }),
    }
}

pub fn json_loaded(j: &Json) -> LoadResult {
    if let Some(v) = j.get("value") {
        LoadResult::Value(unhex(v.as_str().expect("hex")))
    } else if let Some(f) = j.get("failed") {
        let mut failure = LoadFailure::new(
            f[0].as_str().expect("code"),
            f[1].as_str().expect("message"),
        );
        failure.cached = f[2].as_bool().expect("cached");
        LoadResult::Failed(failure)
    } else {
        LoadResult::Panicked
    }
}

pub fn outcome_json(o: &Result<Vec<u8>, Failure>) -> Json {
    match o {
        Ok(v) => json!({ "value": hex(v) }),
        Err(Failure::Timeout) => json!({ "failure": "timeout" }),
        Err(Failure::Io) => json!({ "failure": "io" }),
        Err(Failure::Backend {
            code,
            message,
            cached,
        }) => {
            json!({ "failure": "backend", "code": hex(code), "message": hex(message), "cached": cached })
        }
        Err(Failure::Refused) => json!({ "failure": "refused" }),
        Err(Failure::Panicked) => json!({ "failure": "panicked" }),
        Err(Failure::Reply(_)) => json!({ "failure": "reply" }),
        Err(Failure::Input(_)) => json!({ "failure": "input" }),
        Err(Failure::SessionExpired) => json!({ "failure": "session_expired" }),
    }
}

pub fn counts_json(c: &Counts) -> Json {
    json!(c.to_array())
}

pub fn settings_json(s: &CacheSettings) -> Json {
    json!([
        s.lease_ms,
        s.soft_ttl_ms,
        s.hard_ttl_ms,
        s.neg_ttl_ms,
        s.serve_stale,
        s.fast_hits,
        s.xfetch_beta,
        s.max_value_len
    ])
}

pub fn json_settings(j: &Json) -> CacheSettings {
    let n = |i: usize| j[i].as_u64().expect("number");
    CacheSettings {
        lease_ms: n(0),
        soft_ttl_ms: n(1),
        hard_ttl_ms: n(2),
        neg_ttl_ms: n(3),
        serve_stale: j[4].as_bool().expect("bool"),
        fast_hits: j[5].as_bool().expect("bool"),
        xfetch_beta: j[6].as_f64().expect("beta"),
        max_value_len: usize::try_from(n(7)).expect("usize"),
    }
}

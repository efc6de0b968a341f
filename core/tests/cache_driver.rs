//! Core's smart-cache drivers: the trace recorded on a real Redis
//! (`tests/vectors/cache/driver_trace.json`, redis/tests/cache_driver_trace.rs) replays
//! step for step (JavaScript replays the same file through the .wasm:
//! bindings-js/test/cache_driver.test.mjs), and the rules that need no server.

#[path = "common/driver_trace.rs"]
mod trace;

use keyroute::cache::{
    CacheSettings, Failure, Fault, GetOrLoad, GetOrLoadStep as Step, LoadFailure, LoadResult,
    Notify, Value,
};
use serde_json::Value as Json;
use trace::*;

fn recorded() -> Json {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/cache/driver_trace.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the recorded trace")).expect("JSON")
}

#[test]
fn the_recorded_trace_replays_step_for_step() {
    let doc = recorded();
    let reads = doc["reads"].as_array().expect("reads");
    assert!(reads.len() >= 10, "every scenario is recorded");
    for r in reads {
        let name = r["name"].as_str().expect("name");
        let settings = json_settings(&r["settings"]);
        let mut read = GetOrLoad::new(
            unhex(r["entry"].as_str().expect("entry")),
            &unhex(r["owner"].as_str().expect("owner")),
            &settings,
            Notify::Publish,
            0,
            r["deadline_ms"].as_u64().expect("deadline"),
        );
        let mut steps = 0;
        for (i, e) in r["events"].as_array().expect("events").iter().enumerate() {
            if let Some(want) = e.get("step") {
                steps += 1;
                let now = e["now"].as_u64().expect("now");
                let u = e["u"].as_f64().expect("u");
                let got = step_json(&read.step(now, u));
                assert_eq!(&got, want, "{name}, event {i}");
            } else if let Some(p) = e.get("peeked") {
                let value = if p.is_null() {
                    None
                } else {
                    Some(json_value(p))
                };
                read.peeked(value, e["wall"].as_u64().expect("wall"));
            } else if let Some(r) = e.get("replied") {
                read.replied(match r.get("fault") {
                    Some(f) => Err(fault_of(f.as_str().expect("fault"))),
                    None => Ok(json_value(&r["value"])),
                });
            } else if e.get("subscribed").is_some() {
                read.subscribed();
            } else if let Some(w) = e.get("woken") {
                read.woken(w.as_bool().expect("woken"));
            } else if e.get("slept").is_some() {
                read.slept();
            } else if let Some(l) = e.get("loaded") {
                read.loaded(json_loaded(l), e["ms"].as_u64().expect("ms"));
            } else if let Some(o) = e.get("outcome") {
                let got = outcome_json(&read.outcome().expect("an outcome"));
                assert_eq!(&got, o, "{name}: outcome");
            } else if let Some(c) = e.get("counts") {
                assert_eq!(&counts_json(&read.counts()), c, "{name}: counts");
            }
        }
        assert!(steps >= 2, "{name}");
    }
}

const ENTRY: &[u8] = b"kr:{c:t}:e:k";

fn lease(fence: i64) -> Value {
    Value::Array(vec![Value::Int(4), Value::Int(fence), Value::Int(0)])
}
fn wait(remaining: i64) -> Value {
    Value::Array(vec![Value::Int(5), Value::Int(remaining), Value::Int(7)])
}
fn fenced() -> Value {
    Value::Array(vec![Value::Int(0), Value::Int(9)])
}
fn slow() -> CacheSettings {
    CacheSettings {
        fast_hits: false,
        ..CacheSettings::DEFAULT
    }
}

fn script(step: &Step<'_>) -> Option<&'static str> {
    match step {
        Step::Run(call) => Some(call.script.name()),
        _ => None,
    }
}

#[test]
fn a_connection_error_while_waiting_is_retried_until_the_deadline_then_reported() {
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &slow(), Notify::Publish, 0, 100);
    assert_eq!(script(&read.step(0, 1.0)), Some("sc-get"));
    read.replied(Ok(wait(1000)));
    assert_eq!(read.step(1, 1.0), Step::Subscribe);
    read.subscribed();
    assert_eq!(script(&read.step(2, 1.0)), Some("sc-get"));
    read.replied(Err(Fault::Connection));
    // Redis may come back: a sleep of the poll schedule, then ask again.
    assert_eq!(read.step(3, 1.0), Step::Sleep { ms: 10 });
    read.slept();
    assert_eq!(script(&read.step(14, 1.0)), Some("sc-get"));
    read.replied(Err(Fault::Connection));
    assert_eq!(read.step(15, 1.0), Step::Sleep { ms: 20 });
    read.slept();
    // The deadline passes: the last I/O error is the answer, not a timeout.
    assert_eq!(read.step(100, 1.0), Step::Done);
    assert_eq!(read.outcome(), Some(Err(Failure::Io)));
}

#[test]
fn a_connection_error_before_waiting_is_reported_at_once() {
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &slow(), Notify::Publish, 0, 100);
    read.step(0, 1.0);
    read.replied(Err(Fault::Connection));
    assert_eq!(read.step(1, 1.0), Step::Done);
    assert_eq!(read.outcome(), Some(Err(Failure::Io)));
}

#[test]
fn a_timeout_at_the_deadline_is_the_callers_timeout() {
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &slow(), Notify::Publish, 0, 100);
    read.step(0, 1.0);
    read.replied(Err(Fault::Timeout));
    assert_eq!(read.step(100, 1.0), Step::Done);
    assert_eq!(read.outcome(), Some(Err(Failure::Timeout)));
}

#[test]
fn fills_fenced_three_times_back_off_then_return_the_last_value_unstored() {
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &slow(), Notify::Publish, 0, 5000);
    let mut sleeps = Vec::new();
    let mut loads = 0;
    let mut now = 0;
    loop {
        now += 1;
        match read.step(now, 1.0) {
            Step::Run(call) if call.script.name() == "sc-get" => {
                read.replied(Ok(lease(now as i64)))
            }
            Step::Run(call) => {
                assert_eq!(call.script.name(), "sc-fill");
                read.replied(Ok(fenced()));
            }
            Step::Load { stale, .. } => {
                assert_eq!(stale, None);
                loads += 1;
                read.loaded(LoadResult::Value(format!("v{loads}").into_bytes()), 1);
            }
            Step::Sleep { ms } => {
                sleeps.push(ms);
                read.slept();
            }
            Step::Done => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(loads, keyroute::cache::MAX_FENCED_LOADS);
    assert_eq!(sleeps, [10, 20]);
    assert_eq!(read.outcome(), Some(Ok(b"v3".to_vec())));
    assert_eq!(read.counts().fenced_fills, 3);
}

#[test]
fn a_refresh_that_fails_serves_the_stale_value_and_a_panic_goes_on() {
    let refresh = Value::Array(vec![
        Value::Int(2),
        Value::Bytes(b"old".to_vec()),
        Value::Int(1),
        Value::Int(7),
        Value::Int(0),
    ]);
    for (result, want) in [
        (
            LoadResult::Failed(LoadFailure::new("E", "down")),
            Ok(b"old".to_vec()),
        ),
        (LoadResult::Panicked, Err(Failure::Panicked)),
    ] {
        let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &slow(), Notify::Publish, 0, 5000);
        read.step(0, 1.0);
        read.replied(Ok(refresh.clone()));
        match read.step(1, 1.0) {
            Step::Load { stale, .. } => assert_eq!(stale, Some(&b"old"[..])),
            other => panic!("{other:?}"),
        }
        read.loaded(result, 3);
        assert_eq!(script(&read.step(2, 1.0)), Some("sc-abandon"));
        read.replied(Ok(Value::Int(1)));
        assert_eq!(read.step(3, 1.0), Step::Done);
        assert_eq!(read.outcome(), Some(want));
    }
}

#[test]
fn a_value_over_the_maximum_is_abandoned_as_value_too_large() {
    let settings = CacheSettings {
        max_value_len: 4,
        ..slow()
    };
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &settings, Notify::Publish, 0, 5000);
    read.step(0, 1.0);
    read.replied(Ok(lease(7)));
    read.step(1, 1.0);
    read.loaded(LoadResult::Value(b"12345".to_vec()), 3);
    match read.step(2, 1.0) {
        Step::Run(call) => {
            assert_eq!(call.script.name(), "sc-abandon");
            assert_eq!(call.args[1], &b"VALUE_TOO_LARGE"[..]);
        }
        other => panic!("{other:?}"),
    }
    read.replied(Ok(Value::Int(1)));
    read.step(3, 1.0);
    let failure = read.outcome().expect("done").expect_err("refused");
    assert_eq!(failure.code().as_str(), "VALUE_TOO_LARGE");
}

#[test]
fn the_xfetch_draw_is_beta_times_minus_ln_u() {
    let settings = CacheSettings {
        xfetch_beta: 2.0,
        ..slow()
    };
    let mut read = GetOrLoad::new(ENTRY.to_vec(), b"me", &settings, Notify::Publish, 0, 5000);
    match read.step(0, 0.5) {
        Step::Run(call) => {
            let e: f64 = std::str::from_utf8(&call.args[2])
                .expect("utf8")
                .parse()
                .expect("f64");
            assert!((e - 2.0 * std::f64::consts::LN_2).abs() < 1e-12, "{e}");
        }
        other => panic!("{other:?}"),
    }
}

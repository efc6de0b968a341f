//! `EntryModel` and `SessionModel` against the real scripts on a real `redis-server`:
//! 10,000 random operation sequences (deterministic `now_ms`, seeds printed on failure)
//! must give identical replies and leave identical hashes, indexes and index expiries.
//!
//! Test time runs ~115 days ahead of the server clock, so keys never expire in real time
//! during the test: every expiry path is the scripts' own (`hx`, `x` ≤ now).

#[path = "common/standalone.rs"]
mod standalone;

use std::collections::BTreeMap;

use keyroute::cache::{
    decode_flag, decode_read, decode_sessions, decode_warm, Call, ClientKeys, CreateReply,
    EntryModel, FillReply, GetReply, Guarded, Notify, Peek, PutReply, SessionId, SessionModel,
    TokenKey, Touch, UpdateReply, Value, PEEK_FIELDS,
};
use keyroute_redis::cache::{eval, evalsha};
use standalone::Server;

const SEQUENCES: u64 = 10_000;
const KINDS: [&[u8]; 3] = [b"accounts", b"cards", b"loans"];

/// SplitMix64: small, seeded, good enough to draw operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

type Hash = BTreeMap<String, Vec<u8>>;
/// The stored state read with each call: 3 entries, 3 sessions, the index and its expiry.
type State = (Hash, Hash, Hash, Hash, Hash, Hash, Vec<(Vec<u8>, f64)>, i64);

struct Harness {
    con: redis::Connection,
    /// Entry keys, session keys and the index key of the current sequence.
    state_keys: Vec<Vec<u8>>,
    /// The state read right after the last call.
    state: Option<State>,
    checked_ops: u64,
    /// How often each sc-get reply (1..=6), fill reply (0..=2) and touch reply came up.
    seen: BTreeMap<String, u64>,
}

impl Harness {
    /// Runs `call` and reads the state after it, in one round trip (the scripts are
    /// loaded beforehand).
    fn run(&mut self, call: &Call<'_>) -> Value {
        let mut pipe = redis::pipe();
        pipe.add_command(evalsha(call));
        let (hashes, index) = self.state_keys.split_at(6);
        for key in hashes {
            pipe.cmd("HGETALL").arg(key);
        }
        pipe.cmd("ZRANGE")
            .arg(&index[0])
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES");
        pipe.cmd("PEXPIRETIME").arg(&index[0]);
        let mut values: Vec<redis::Value> = pipe
            .query(&mut self.con)
            .unwrap_or_else(|e| panic!("{}: {e}", call.script.name()));
        let state = redis::Value::Array(values.split_off(1));
        self.state = Some(redis::from_redis_value(state).expect("state"));
        to_value(values.remove(0))
    }
}

/// The script's reply as a core value (the harness pipelines the call itself).
fn to_value(value: redis::Value) -> Value {
    match value {
        redis::Value::Nil => Value::Nil,
        redis::Value::Int(n) => Value::Int(n),
        redis::Value::BulkString(b) => Value::Bytes(b),
        redis::Value::Array(items) => Value::Array(items.into_iter().map(to_value).collect()),
        other => panic!("unexpected reply {other:?}"),
    }
}

fn fields(model: &[(&'static str, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    model
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// One random sequence on a fresh client; panics with the seed on the first difference.
fn sequence(h: &mut Harness, seed: u64, base: u64) {
    let mut rng = Rng(seed);
    let client = format!("client-{seed}");
    let keys = ClientKeys::new(client.as_bytes(), &TokenKey::DEFAULT).expect("client");
    let entries: Vec<Vec<u8>> = KINDS.iter().map(|k| keys.entry(k).expect("kind")).collect();
    let sids: Vec<SessionId> = (0..3u8)
        .map(|i| SessionId::new(keys.token(), [i; 16]))
        .collect();
    let mut models = [EntryModel::new(), EntryModel::new(), EntryModel::new()];
    h.state_keys = entries.clone();
    h.state_keys.extend(
        sids.iter()
            .map(|sid| keyroute::cache::session_keys(sid)[0].clone()),
    );
    h.state_keys.push(keys.session_index());
    let mut sessions = SessionModel::new();
    let mut granted = [1u64; 3];
    let mut now = base;
    let ops = 4 + rng.below(8);
    let mut log: Vec<String> = Vec::new();
    for _ in 0..ops {
        now += rng.below(200);
        let at = Some(now);
        let i = rng.below(3) as usize;
        let entry = &entries[i];
        let op = rng.below(19);
        log.push(format!("t+{} op {op} on {i}", now - base));
        let context = || format!("seed {seed}: {}", log.join("; "));
        match op {
            0..=4 => {
                let lease = 1 + rng.below(600);
                let owner = *rng.pick(&[&b"front-1"[..], b"front-2", b""]);
                let xe = if rng.chance(30) {
                    rng.below(3000) as f64 / 1000.0
                } else {
                    0.0
                };
                let stale = rng.chance(50);
                // The fast path, read first on the same clock, agrees with the script: when
                // it serves, sc-get answers a hit with the same value (it may
                // ask where sc-get still serves: an XFetch draw while a lease is out).
                let fields: redis::Value = redis::cmd("HMGET")
                    .arg(entry)
                    .arg(&PEEK_FIELDS[..])
                    .query(&mut h.con)
                    .expect("HMGET");
                let peek = Peek::decode(to_value(fields), now, xe).expect("peek");
                let got = GetReply::decode(h.run(&Call::get(entry, lease, owner, xe, stale, at)))
                    .expect("decode");
                match (&peek, &got) {
                    (Peek::Hit { value }, GetReply::Hit { value: v, .. }) => {
                        assert_eq!(value, v, "{}", context());
                        *h.seen.entry("Peek::Hit".into()).or_default() += 1;
                    }
                    (Peek::Hit { .. }, _) => {
                        panic!("{}: fast path {peek:?}, sc-get {got:?}", context())
                    }
                    (Peek::Ask, _) => {}
                }
                let want = models[i].get(now, lease, owner, xe, stale);
                assert_eq!(got, want, "{}", context());
                let name = format!("{got:?}");
                *h.seen
                    .entry(name.split([' ', '{']).next().unwrap_or("").to_string())
                    .or_default() += 1;
                if let GetReply::Lease { fence, .. } | GetReply::Refresh { fence, .. } = got {
                    granted[i] = fence;
                }
            }
            5..=7 => {
                let fence = pick_fence(&mut rng, &models[i], granted[i]);
                let value = format!("value-{}", rng.below(1000)).into_bytes();
                let (soft, hard, load) = (1 + rng.below(400), 1 + rng.below(2000), rng.below(300));
                let call = Call::fill(entry, fence, &value, soft, hard, load, Notify::Publish, at);
                let got = FillReply::decode(h.run(&call)).expect("decode");
                assert_eq!(
                    got,
                    models[i].fill(now, fence, &value, soft, hard, load),
                    "{}",
                    context()
                );
                let name = format!("Fill{got:?}");
                *h.seen
                    .entry(name.split([' ', '{']).next().unwrap_or("").to_string())
                    .or_default() += 1;
            }
            8 => {
                let fence = pick_fence(&mut rng, &models[i], granted[i]);
                let lease = 1 + rng.below(600);
                let got = decode_flag(&h.run(&Call::extend(entry, fence, lease, at)), "sc-extend")
                    .expect("decode");
                assert_eq!(got, models[i].extend(now, fence, lease), "{}", context());
            }
            9 => {
                let fence = pick_fence(&mut rng, &models[i], granted[i]);
                let neg = rng.below(500);
                let call = Call::abandon(
                    entry,
                    fence,
                    b"E_DOWN",
                    b"backend down",
                    neg,
                    Notify::Nothing,
                    at,
                );
                let got = decode_flag(&h.run(&call), "sc-abandon").expect("decode");
                assert_eq!(
                    got,
                    models[i].abandon(now, fence, b"E_DOWN", b"backend down", neg),
                    "{}",
                    context()
                );
            }
            10 => {
                let tomb = 1 + rng.below(1000);
                let call = Call::invalidate(entry, tomb, Notify::ShardPublish, at);
                let got = decode_flag(&h.run(&call), "sc-invalidate").expect("decode");
                assert_eq!(got, models[i].invalidate(now, tomb), "{}", context());
            }
            11 => {
                let lease = 1 + rng.below(600);
                let chosen: Vec<usize> = (0..3).filter(|_| rng.chance(60)).collect();
                if chosen.is_empty() {
                    continue;
                }
                let keys: Vec<Vec<u8>> = chosen.iter().map(|&j| entries[j].clone()).collect();
                let got = decode_warm(h.run(&Call::warm_begin(&keys, lease, b"warm", at)))
                    .expect("decode");
                let want: Vec<Option<u64>> = chosen
                    .iter()
                    .map(|&j| models[j].warm_begin(now, lease, b"warm"))
                    .collect();
                assert_eq!(got, want, "{}", context());
                for (&j, fence) in chosen.iter().zip(&got) {
                    if let Some(f) = fence {
                        granted[j] = *f;
                    }
                }
            }
            12 => {
                let got = decode_read(h.run(&Call::read(entry, at))).expect("decode");
                assert_eq!(got, models[i].read(now), "{}", context());
            }
            13 => {
                let value = format!("put-{}", rng.below(1000)).into_bytes();
                let (soft, hard) = (1 + rng.below(400), 1 + rng.below(2000));
                let call = Call::put(entry, &value, soft, hard, Notify::Publish, at);
                let got = PutReply::decode(h.run(&call)).expect("decode");
                assert_eq!(got, models[i].put(now, &value, soft, hard), "{}", context());
                granted[i] = got.fence;
            }
            14 | 15 => guarded_op(
                h,
                &mut rng,
                &sids,
                &mut sessions,
                &mut models[i],
                entry,
                now,
                &context,
            ),
            _ => session_op(h, &mut rng, &sids, &mut sessions, &client, now, &context),
        }
        let Some((e0, e1, e2, s0, s1, s2, zrange, expiry)) = h.state.take() else {
            continue;
        };
        for (j, got) in [e0, e1, e2].into_iter().enumerate() {
            let want = models[j]
                .entry()
                .map(|e| fields(&e.fields()))
                .unwrap_or_default();
            assert_eq!(
                got.into_iter().collect::<Vec<_>>(),
                want,
                "entry {j} state, {}",
                context()
            );
        }
        for (sid, got) in sids.iter().zip([s0, s1, s2]) {
            let want = sessions
                .session(sid.as_bytes())
                .map(|s| fields(&s.fields()))
                .unwrap_or_default();
            assert_eq!(
                got.into_iter().collect::<Vec<_>>(),
                want,
                "session state, {}",
                context()
            );
        }
        let zrange: Vec<(Vec<u8>, u64)> = zrange.into_iter().map(|(m, s)| (m, s as u64)).collect();
        assert_eq!(zrange, sessions.index(), "index, {}", context());
        assert_eq!(
            expiry,
            sessions.index_expiry().map_or(-2, |x| x as i64),
            "index expiry, {}",
            context()
        );
        h.checked_ops += 1;
    }
}

/// The fence a fill, extend or abandon uses: mostly the current one, sometimes a stale
/// or a made-up one.
fn pick_fence(rng: &mut Rng, model: &EntryModel, granted: u64) -> u64 {
    let current = model.entry().and_then(|e| e.f).unwrap_or(1);
    match rng.below(10) {
        0..=6 => current,
        7 => granted,
        8 => current.saturating_sub(1).max(1),
        _ => 1 + rng.below(1 << 40),
    }
}

/// A call under a session (`sess-guard`): an entry read, put or invalidation, a session
/// update or list; the model checks the session, runs the call, then slides the session.
#[allow(clippy::too_many_arguments)]
fn guarded_op(
    h: &mut Harness,
    rng: &mut Rng,
    sids: &[SessionId],
    sessions: &mut SessionModel,
    entry_model: &mut EntryModel,
    entry: &[u8],
    now: u64,
    context: &dyn Fn() -> String,
) {
    let sid = rng.pick(sids);
    let other = rng.pick(sids);
    let at = Some(now);
    let value = format!("g-{}", rng.below(1000)).into_bytes();
    let (soft, hard, tomb) = (1 + rng.below(400), 1 + rng.below(2000), 1 + rng.below(1000));
    let version: &[u8] = if rng.chance(50) { b"v1" } else { b"v2" };
    let which = rng.below(5);
    let inner = match which {
        0 => Call::read(entry, at),
        1 => Call::put(entry, &value, soft, hard, Notify::Publish, at),
        2 => Call::invalidate(entry, tomb, Notify::Publish, at),
        3 => Call::sess_update(other, version, &value, at),
        _ => Call::sess_list(sid.token(), at),
    };
    let call = Call::in_session(sid, inner, at).expect("the session's own keys");
    let got = Guarded::decode(h.run(&call)).expect("decode");
    let before = sessions.session(sid.as_bytes()).map_or(0, |s| s.expires_at);
    if !sessions.guard(now, sid.as_bytes()) {
        assert_eq!(got, Guarded::Expired, "guarded {which}, {}", context());
        *h.seen.entry("GuardedExpired".into()).or_default() += 1;
        return;
    }
    let Guarded::Live { expires_at, reply } = got else {
        panic!("guarded {which}: {got:?}, {}", context())
    };
    match which {
        0 => assert_eq!(
            decode_read(reply),
            Ok(entry_model.read(now)),
            "{}",
            context()
        ),
        1 => assert_eq!(
            PutReply::decode(reply),
            Ok(entry_model.put(now, &value, soft, hard)),
            "{}",
            context()
        ),
        2 => assert_eq!(
            decode_flag(&reply, "sc-invalidate"),
            Ok(entry_model.invalidate(now, tomb)),
            "{}",
            context()
        ),
        3 => {
            let want = sessions.update(now, other.as_bytes(), version, &value);
            let name = format!("Update{want:?}");
            *h.seen
                .entry(name.split([' ', '{']).next().unwrap_or("").to_string())
                .or_default() += 1;
            assert_eq!(UpdateReply::decode(reply), Ok(want), "{}", context());
        }
        _ => assert_eq!(
            decode_sessions(reply),
            Ok(sessions.list(now)),
            "{}",
            context()
        ),
    }
    let want = sessions.slide(now, sid.as_bytes(), before);
    assert_eq!(
        expires_at,
        want,
        "guarded {which}: the slide, {}",
        context()
    );
    *h.seen.entry("GuardedLive".into()).or_default() += 1;
}

fn session_op(
    h: &mut Harness,
    rng: &mut Rng,
    sids: &[SessionId],
    model: &mut SessionModel,
    client: &str,
    now: u64,
    context: &dyn Fn() -> String,
) {
    let sid = rng.pick(sids);
    let at = Some(now);
    match rng.below(4) {
        0 => {
            let ttl = 1 + rng.below(1200);
            let max_age = if rng.chance(40) {
                1 + rng.below(1500)
            } else {
                0
            };
            let version: &[u8] = if rng.chance(50) { b"v1" } else { b"v2" };
            let data = format!("data-{}", rng.below(100)).into_bytes();
            let call = Call::sess_create(sid, client.as_bytes(), version, ttl, max_age, &data, at);
            let got = CreateReply::decode(h.run(&call)).expect("decode");
            let want = model.create(
                now,
                sid.as_bytes(),
                client.as_bytes(),
                version,
                ttl,
                max_age,
                &data,
            );
            assert_eq!(got, want, "{}", context());
        }
        1 => {
            let version: Option<&[u8]> = *rng.pick(&[None, Some(&b"v1"[..]), Some(b"v2")]);
            let got = Touch::decode(h.run(&Call::sess_touch(sid, version, at))).expect("decode");
            assert_eq!(
                got,
                model.touch(now, sid.as_bytes(), version),
                "{}",
                context()
            );
            let name = format!("Touch{got:?}");
            *h.seen
                .entry(name.split([' ', '{']).next().unwrap_or("").to_string())
                .or_default() += 1;
        }
        2 => {
            let got =
                decode_flag(&h.run(&Call::sess_destroy(sid, at)), "sess-destroy").expect("decode");
            assert_eq!(got, model.destroy(now, sid.as_bytes()), "{}", context());
        }
        _ => {
            let got = decode_sessions(h.run(&Call::sess_list(sid.token(), at))).expect("decode");
            assert_eq!(got, model.list(now), "{}", context());
        }
    }
}

#[test]
fn models_match_the_scripts_on_random_sequences() {
    let server = Server::start();
    let mut h = Harness {
        con: server.connection(),
        state_keys: Vec::new(),
        state: None,
        checked_ops: 0,
        seen: BTreeMap::new(),
    };
    for script in keyroute::cache::CACHE_SCRIPTS {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(script.text())
            .query(&mut h.con)
            .expect("SCRIPT LOAD");
        assert_eq!(sha, script.sha1(), "the server's SHA1 of {}", script.name());
    }
    let time: Vec<u64> = redis::cmd("TIME").query(&mut h.con).expect("TIME");
    let base = time[0] * 1000 + 10_000_000_000;
    let first = std::env::var("KEYROUTE_MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    match first {
        Some(seed) => sequence(&mut h, seed, base),
        None => {
            for seed in 0..SEQUENCES {
                sequence(&mut h, seed, base);
            }
        }
    }
    eprintln!(
        "{} operations checked; replies seen: {:?}",
        h.checked_ops, h.seen
    );
    if first.is_none() {
        assert!(h.checked_ops > SEQUENCES * 5);
        // Every kind of reply came up, each many times: the sequences reach every branch.
        for name in [
            "Hit",
            "Peek::Hit",
            "Refresh",
            "Stale",
            "Lease",
            "Wait",
            "Error",
            "FillStored",
            "FillFenced",
            "FillDuplicate",
            "TouchLive",
            "TouchExpired",
            "TouchVersionMismatch",
            "GuardedLive",
            "GuardedExpired",
            "UpdateUpdated",
            "UpdateExpired",
            "UpdateVersionMismatch",
        ] {
            let n = h.seen.get(name).copied().unwrap_or(0);
            assert!(n >= 10, "{name} came up {n} times: {:?}", h.seen);
        }
    }
}

/// A reply a script gives for refused arguments changes nothing, and the raw command
/// form is what `eval` sends.
#[test]
fn refused_calls_change_nothing() {
    let server = Server::start();
    let mut con = server.connection();
    let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT).expect("client");
    let entry = keys.entry(b"accounts").expect("kind");
    // lease 0 is refused before anything is written.
    let err = eval(&mut con, &Call::get(&entry, 0, b"o", 0.0, true, None)).expect_err("lease 0");
    assert!(err.to_string().contains("sc-get"), "{err}");
    let _: () = redis::cmd("SET")
        .arg(&entry)
        .arg("x")
        .query(&mut con)
        .expect("SET");
    let err =
        eval(&mut con, &Call::get(&entry, 10, b"o", 0.0, true, None)).expect_err("wrong type");
    assert_eq!(err.code().as_str(), "REDIS_WRONGTYPE");
    let left: String = redis::cmd("GET").arg(&entry).query(&mut con).expect("GET");
    assert_eq!(left, "x");
    let cmd = evalsha(&Call::get(&entry, 10, b"o", 0.0, true, None));
    assert_eq!(cmd.args_iter().count(), 3 + 1 + 4);
}

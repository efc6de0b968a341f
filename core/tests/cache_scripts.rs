//! The smart cache's scripts, names and ids: every script is registered, checks come
//! before writes, and the name builders keep a client in one slot. (Their texts are the
//! recorded ones: `script_vectors.rs`.)

use keyroute::cache::{
    device_key, session_keys, ClientKeys, ClientToken, SessionId, TokenKey, CACHE_SCRIPTS,
};
use keyroute::script::{Script, SCRIPTS};
use keyroute::slot::key_slot;
use proptest::prelude::*;

#[test]
fn every_cache_script_is_registered() {
    for script in CACHE_SCRIPTS {
        assert!(
            SCRIPTS.contains(&script),
            "{} is not in SCRIPTS",
            script.name()
        );
        assert_eq!(
            Script::by_name(&script.name().replace('-', "_")),
            Some(&script)
        );
    }
}

/// Each script refuses bad arguments and wrong key types before its first write: the
/// first `redis.call` that writes comes after the last `error_reply`.
#[test]
fn checks_come_before_the_first_write() {
    let writes = [
        "'HSET'",
        "'DEL'",
        "'PEXPIREAT'",
        "'ZADD'",
        "'ZREM'",
        "'SET'",
        "'HDEL'",
        "'ZREMRANGEBYSCORE'",
    ];
    for script in CACHE_SCRIPTS {
        let full = script.text();
        // sess-guard inlines the scripts it runs (each checked here on its own): its own
        // checks and writes are those after the functions.
        let text = match script.name() {
            "sess-guard" => {
                &full[full
                    .find("if not ok or not ops[op]")
                    .expect("the guard's check")..]
            }
            _ => full,
        };
        let last_check = text.rfind("error_reply").expect("a check");
        let first_write = writes
            .iter()
            .filter_map(|w| text.find(&format!("redis.call({w}")))
            .min();
        match first_write {
            Some(first_write) => assert!(last_check < first_write, "{}", script.name()),
            None => assert!(
                ["sess-list", "sc-read"].contains(&script.name()),
                "only sess-list and sc-read write nothing: {}",
                script.name()
            ),
        }
        // Time from TIME, or the optional test-only now_ms.
        if script.name() != "device-bind" {
            assert!(full.contains("redis.call('TIME')"), "{}", script.name());
        }
    }
}

#[test]
fn a_client_keeps_one_slot() {
    let keys = ClientKeys::new(b"client-42", &TokenKey::DEFAULT).expect("keys");
    let slot = key_slot(&keys.session_index());
    for kind in ["accounts", "cards", "deposits", "loans"] {
        assert_eq!(key_slot(&keys.entry(kind.as_bytes()).expect("kind")), slot);
    }
    assert_eq!(key_slot(&keys.channel()), slot);
    let sid = SessionId::new(keys.token(), [7; 16]);
    for key in session_keys(&sid) {
        assert_eq!(key_slot(&key), slot);
    }
    assert!(device_key(b"dev-1").is_ok());
}

proptest! {
    #[test]
    fn session_ids_round_trip(client in proptest::collection::vec(any::<u8>(), 1..64), random in any::<[u8; 16]>()) {
        let token = ClientToken::of(&client, &TokenKey::DEFAULT).expect("token");
        let sid = SessionId::new(token, random);
        prop_assert_eq!(SessionId::parse(sid.as_bytes()), Ok(sid));
        prop_assert_eq!(sid.token(), token);
        let shown = format!("{sid:?}");
        let secret = std::str::from_utf8(sid.random_part()).expect("ascii");
        prop_assert!(!shown.contains(secret), "Debug shows the secret part: {}", shown);
    }

    #[test]
    fn garbage_is_not_a_session_id(text in proptest::collection::vec(any::<u8>(), 0..80)) {
        if let Ok(sid) = SessionId::parse(&text) {
            prop_assert_eq!(&sid.as_bytes()[..], &text[..]);
        }
    }

    #[test]
    fn kinds_with_braces_are_refused(prefix in "[a-z]{0,5}", brace in "[{}]", suffix in "[a-z]{0,5}") {
        let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT).expect("keys");
        let kind = format!("{prefix}{brace}{suffix}");
        prop_assert_eq!(keys.entry(kind.as_bytes()).map_err(|e| e.code().as_str()), Err("BAD_KIND"));
    }
}

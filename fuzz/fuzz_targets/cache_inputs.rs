//! What a caller hands the smart cache and the Redis clients as text: session ids, client
//! tokens, client ids, kinds, device ids, versions, key names, error messages, Redis seeds
//! and URLs. Never panics; a refusal has a code; accepted ids round-trip; key names of
//! one client share one slot; `redact` never shows the password of a URL.
#![no_main]

use keyroute::cache::{
    check_client_id, check_device_id, check_kind, check_version, device_key, session_keys,
    truncate_message, ClientKeys, ClientToken, SessionId, TokenKey, MAX_ERROR_MESSAGE_LEN,
};
use keyroute::slot::key_slot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(sid) = SessionId::parse(data) {
        assert_eq!(&sid.as_bytes()[..], data);
        assert_eq!(sid.as_str().as_bytes(), data);
        let [a, b] = session_keys(&sid);
        assert_eq!(key_slot(&a), key_slot(&b), "a session's keys share a slot");
        let _ = (sid.token(), sid.random_part());
    }
    if let Some(t) = ClientToken::parse(data) {
        assert_eq!(t.as_str().as_bytes(), data);
    }

    // The input split in two: a client id and a kind.
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (client, kind) = (&data[..cut], data.get(cut + 1..).unwrap_or(&[]));
    let checks = [
        check_client_id(client).err(),
        check_kind(kind).err(),
        check_device_id(kind).err(),
        check_version(kind).err(),
    ];
    for e in checks.into_iter().flatten() {
        assert!(!e.code().as_str().is_empty());
        let _ = e.to_string();
    }
    match ClientKeys::new(client, &TokenKey::DEFAULT) {
        Ok(keys) => {
            assert!(check_client_id(client).is_ok());
            let slot = key_slot(&keys.session_index());
            assert_eq!(key_slot(&keys.channel()), slot);
            match keys.entry(kind) {
                Ok(entry) => {
                    assert!(check_kind(kind).is_ok());
                    assert_eq!(key_slot(&entry), slot, "a client's keys share a slot");
                }
                Err(e) => assert!(check_kind(kind).is_err(), "{e}"),
            }
        }
        Err(e) => assert!(check_client_id(client).is_err(), "{e}"),
    }
    match device_key(kind) {
        Ok(_) => assert!(check_device_id(kind).is_ok()),
        Err(_) => assert!(check_device_id(kind).is_err()),
    }

    let text = String::from_utf8_lossy(data);
    let cut_msg = truncate_message(&text);
    assert!(cut_msg.len() <= MAX_ERROR_MESSAGE_LEN && text.starts_with(cut_msg));

    // Seeds and URLs.
    match keyroute_redis::parse_seed(&text) {
        Ok(addr) => assert!(!addr.to_string().is_empty()),
        Err(e) => {
            assert_eq!(e.code().as_str(), "REDIS_BAD_URL");
            let _ = e.to_string();
        }
    }
    // A password of the input's characters (no '@', so it is the whole password; no ':',
    // which in userinfo without a password would end the user name, shown by design):
    // the redacted URL and every error about it must not show it.
    let secret: String = text.chars().filter(|&c| c != '@' && c != ':').collect();
    if secret.len() >= 6 {
        let marked = format!("S3CR3T{secret}");
        for url in [
            format!("redis://user:{marked}@127.0.0.1:6379/0"),
            format!("redis://:{marked}@127.0.0.1:6379"),
            format!("redis://{marked}@h:1"),
        ] {
            let shown = keyroute_redis::redact(&url);
            assert!(!shown.contains(&marked), "redact({url:?}) = {shown:?}");
            if let Err(e) = keyroute_redis::parse_seed(&url) {
                assert!(
                    !e.to_string().contains(&marked),
                    "parse_seed error shows the password: {e}"
                );
            }
        }
    }
});

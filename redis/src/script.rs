//! Core [`Script`]s as the `redis` crate's script objects (pipelined picks), and the error
//! helpers of the calls.

use crate::error::Error;
use keyroute::script::Script;

/// How many times in a row a call loads the script and is answered `NOSCRIPT` again
/// (someone flushing the script cache between the load and the retry) before giving up.
pub(crate) const NOSCRIPT_ROUNDS: usize = 16;

/// The `redis` crate's script object for a core script (same text, so same SHA1).
pub(crate) fn script(script: &Script) -> redis::Script {
    let loaded = redis::Script::new(script.text());
    debug_assert_eq!(loaded.get_hash(), script.sha1(), "{}", script.name());
    loaded
}

/// Maps an error of the `redis` crate met while doing `context`.
pub(crate) fn fail(context: &str) -> impl Fn(redis::RedisError) -> Error + '_ {
    move |e| Error::from_redis(context, &e, None)
}

/// A key, for messages.
pub(crate) fn show(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

//! Running core [`Script`]s: `EVALSHA`, loading the text on `NOSCRIPT`.

use keyroute::script::Script;
use redis::{ConnectionLike, FromRedisValue, RedisResult, ServerErrorKind};

use crate::error::{server_kind, Error};

/// How many times in a row a call loads the script and is answered `NOSCRIPT` again
/// (someone flushing the script cache between the load and the retry) before giving up.
pub(crate) const NOSCRIPT_ROUNDS: usize = 16;

/// The `redis` crate's script object for a core script (same text, so same SHA1).
pub(crate) fn script(script: &Script) -> redis::Script {
    let loaded = redis::Script::new(script.text());
    debug_assert_eq!(loaded.get_hash(), script.sha1(), "{}", script.name());
    loaded
}

/// [`ScriptInvocation::invoke`](redis::ScriptInvocation::invoke) (EVALSHA, on NOSCRIPT
/// load and retry once), retried while the script cache keeps being flushed between the
/// load and the retry. A NOSCRIPT reply means the script did not run, so nothing is
/// counted twice.
pub(crate) fn invoke<T: FromRedisValue>(
    call: &redis::ScriptInvocation<'_>,
    con: &mut dyn ConnectionLike,
) -> RedisResult<T> {
    let mut rounds = 0;
    loop {
        match call.invoke(con) {
            Err(err)
                if rounds < NOSCRIPT_ROUNDS
                    && server_kind(&err) == Some(ServerErrorKind::NoScript) =>
            {
                rounds += 1;
            }
            result => return result,
        }
    }
}

/// Maps an error of the `redis` crate met while doing `context`.
pub(crate) fn fail(context: &str) -> impl Fn(redis::RedisError) -> Error + '_ {
    move |e| Error::from_redis(context, &e, None)
}

/// A key, for messages.
pub(crate) fn show(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

//! Running a core [`Call`] on a connection: `EVALSHA`, loading the text on `NOSCRIPT`;
//! replies converted to the core [`Value`] the decoders take.

use keyroute::cache::{Call, Value};
use redis::{Cmd, ConnectionLike, ServerErrorKind};

use crate::error::{server_kind, Error, Result};
use crate::script::NOSCRIPT_ROUNDS;

/// `EVALSHA sha1 numkeys keys... args...` of `call`.
///
/// ```
/// use keyroute::cache::Call;
/// let cmd = keyroute_redis::cache::evalsha(&Call::extend(b"kr:{c:t}:e:k", 7, 2000, None));
/// assert_eq!(cmd.args_iter().count(), 6);
/// ```
pub fn evalsha(call: &Call<'_>) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(call.script.sha1());
    with_keys_and_args(cmd, call)
}

/// `EVAL text numkeys keys... args...` of `call`: runs on whichever node it reaches and
/// caches the script there.
pub(crate) fn eval_text(call: &Call<'_>) -> Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(call.script.text());
    with_keys_and_args(cmd, call)
}

/// `cmd` with `numkeys keys... args...` of `call`.
fn with_keys_and_args(mut cmd: Cmd, call: &Call<'_>) -> Cmd {
    cmd.arg(call.keys.len());
    for key in &call.keys {
        cmd.arg(&key[..]);
    }
    for arg in &call.args {
        cmd.arg(&arg[..]);
    }
    cmd
}

/// A reply of the `redis` crate as a core [`Value`]; `None` for a server error reply.
pub(crate) fn to_value(value: redis::Value) -> std::result::Result<Value, redis::ServerError> {
    Ok(match value {
        redis::Value::Nil => Value::Nil,
        redis::Value::Int(n) => Value::Int(n),
        redis::Value::BulkString(b) => Value::Bytes(b),
        redis::Value::SimpleString(s) => Value::Bytes(s.into_bytes()),
        redis::Value::Okay => Value::Bytes(b"OK".to_vec()),
        redis::Value::Boolean(b) => Value::Int(i64::from(b)),
        redis::Value::Array(items) | redis::Value::Set(items) => Value::Array(
            items
                .into_iter()
                .map(to_value)
                .collect::<std::result::Result<_, _>>()?,
        ),
        redis::Value::ServerError(e) => return Err(e),
        other => Value::Bytes(format!("{other:?}").into_bytes()),
    })
}

/// What a server error reply means here.
pub(crate) fn server_error(context: &str, err: redis::ServerError) -> Error {
    Error::from_redis(context, &err.into(), None)
}

/// Runs `call` with `EVALSHA`, loading the script on `NOSCRIPT` (retried while the script
/// cache keeps being flushed in between). Script errors (`ERR keyroute ...`, `WRONGTYPE
/// keyroute ...`) come back as [`Error::Server`] / [`Error::WrongType`]: the script changed
/// nothing.
///
/// # Errors
/// A connection error or timeout, or a server error.
///
/// ```no_run
/// use keyroute::cache::{decode_flag, Call};
/// let mut con = keyroute_redis::connect("redis://127.0.0.1:6379", Default::default())?;
/// let reply = keyroute_redis::cache::eval(&mut con, &Call::extend(b"kr:{c:t}:e:k", 7, 2000, None))?;
/// assert!(!decode_flag(&reply, "sc-extend").map_err(keyroute_redis::Error::from)?);
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
pub fn eval(con: &mut dyn ConnectionLike, call: &Call<'_>) -> Result<Value> {
    eval_in(con, call, call.script.name())
}

/// [`eval`], with `context` naming the call in errors (e.g. the pool key).
pub(crate) fn eval_in(
    con: &mut dyn ConnectionLike,
    call: &Call<'_>,
    context: &str,
) -> Result<Value> {
    let fail = |e: redis::RedisError| Error::from_redis(context, &e, None);
    let cmd = evalsha(call);
    for _ in 0..NOSCRIPT_ROUNDS {
        // A NOSCRIPT answer arrives as a reply (standalone) or as an error (some cluster
        // connections): either way the script did not run, so it is loaded and sent again.
        match con.req_command(&cmd) {
            Ok(reply) => match to_value(reply) {
                Ok(value) => return Ok(value),
                Err(e) if e.kind() == Some(ServerErrorKind::NoScript) => {}
                Err(e) => return Err(server_error(context, e)),
            },
            Err(e) if server_kind(&e) == Some(ServerErrorKind::NoScript) => {}
            Err(e) => return Err(fail(e)),
        }
        let loaded = con
            .req_command(redis::cmd("SCRIPT").arg("LOAD").arg(call.script.text()))
            .map_err(fail)?;
        if let redis::Value::ServerError(e) = loaded {
            return Err(server_error(context, e));
        }
    }
    Err(Error::protocol(
        context,
        "NOSCRIPT after every SCRIPT LOAD (is something flushing the script cache?)",
    ))
}

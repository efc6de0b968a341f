//! The client message types, one file each (the style of mini-redis, "a command is one
//! file"): how its body is read, how it runs against the [`Store`] and what it answers.
//! [`COMMANDS`] registers them; the broker only reads headers, queues, and runs what
//! [`parse`] gives it on a thread.
//!
//! A command runs the store through [`Ctx`]: [`Ctx::run`] sends one call of core's cache
//! scripts ([`Call`]) and, when the request's header carries a session id, runs it under
//! that session (`sess-guard`: the session is checked and slid in the same atomic call,
//! and the call does not run when the session is not live). The memory store runs the same
//! calls on core's state models, so a command is written once for both stores.
//!
//! Adding a message type: docs/design.md, "Adding a serve message type".

mod app_start;
mod cache_get;
mod cache_invalidate;
mod cache_put;
mod device_bind;
mod product_get;
mod session_create;
mod session_destroy;
mod session_list;
mod session_touch;
mod session_update;

use std::fmt::Debug;
use std::time::Instant;

use keyroute::cache::{
    CacheSettings, Call, Guarded, InputError, Notify, ReplyError, SessionId, Touch, Value,
};
use keyroute::error::ErrorCode;
use keyroute::frame::{MsgType, TransportError};
use serde::de::DeserializeOwned;

use crate::config::Config;
use crate::proto::{bad_body, body, no_payload, Answer};
use crate::store::{LoadFailure, Store};

/// Every client message type but `ping` (which the broker answers itself), by number.
const COMMANDS: [Command; 11] = [
    session_create::COMMAND,
    session_touch::COMMAND,
    session_destroy::COMMAND,
    session_list::COMMAND,
    session_update::COMMAND,
    cache_get::COMMAND,
    cache_put::COMMAND,
    cache_invalidate::COMMAND,
    product_get::COMMAND,
    app_start::COMMAND,
    device_bind::COMMAND,
];

/// A message type: its number and how its body (and payload) is read.
pub(crate) struct Command {
    ty: MsgType,
    read: Read,
}

/// Reads a request of a type from its body and payload (`None`: no third frame).
type Read = fn(MsgType, &[u8], Option<Vec<u8>>) -> Result<Box<dyn Request>, Answer>;

impl Command {
    /// A type whose body is the JSON object `T` (exactly its fields) and that takes no
    /// payload.
    const fn json<T: DeserializeOwned + Request + 'static>(ty: MsgType) -> Command {
        Command {
            ty,
            read: read_json::<T>,
        }
    }

    /// A type read by `read` (one that takes a payload).
    const fn new(ty: MsgType, read: Read) -> Command {
        Command { ty, read }
    }
}

fn read_json<T: DeserializeOwned + Request + 'static>(
    ty: MsgType,
    b: &[u8],
    payload: Option<Vec<u8>>,
) -> Result<Box<dyn Request>, Answer> {
    no_payload(ty, &payload)?;
    Ok(Box::new(body::<T>(b)?))
}

/// The payload a type requires: `BAD_TYPE` when the third frame is absent.
pub(crate) fn required(ty: MsgType, payload: Option<Vec<u8>>) -> Result<Vec<u8>, Answer> {
    payload.ok_or_else(|| bad_body(format!("{} needs its payload frame", ty.name())))
}

/// Reads a client request of type `t`; `UNKNOWN_TYPE` for a type no command has.
pub(crate) fn parse(
    t: MsgType,
    b: &[u8],
    payload: Option<Vec<u8>>,
) -> Result<Box<dyn Request>, Answer> {
    match COMMANDS.iter().find(|c| c.ty == t) {
        Some(c) => (c.read)(t, b, payload),
        None => Err(Answer::Transport(TransportError::UnknownType)),
    }
}

/// A client request, its body read; it runs on one of the broker's threads.
pub(crate) trait Request: Send + Debug {
    /// Runs it: the answer (`Err` for an error answer, which is an answer too).
    fn run(self: Box<Self>, ctx: &Ctx<'_>) -> Result<Answer, Answer>;

    /// `(client, kind)` when it loads through loader workers (`product.get`): its kind's
    /// `--cap`, and the single flight that parks the requests for the same key (and
    /// session) behind the first.
    fn loads(&self) -> Option<(&str, &str)> {
        None
    }
}

/// Loads through the broker's loader workers.
pub(crate) trait Loads: Sync {
    /// Asks a worker for `(client, kind)`; waits at most until `deadline`.
    fn load(&self, client: &str, kind: &str, deadline: Instant) -> Result<Vec<u8>, LoadFailure>;
    /// The kinds the connected workers declared.
    fn kinds(&self) -> Vec<String>;
}

/// The settings the commands build their calls with (from [`Config`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// Lease, TTLs, the largest value.
    pub(crate) cache: CacheSettings,
    /// Sessions' sliding lifetime.
    pub(crate) session_ttl_ms: u64,
}

impl Settings {
    pub(crate) fn of(config: &Config) -> Settings {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Settings {
            cache: CacheSettings {
                lease_ms: ms(config.lease),
                soft_ttl_ms: ms(config.soft_ttl),
                hard_ttl_ms: ms(config.hard_ttl),
                ..CacheSettings::DEFAULT
            },
            session_ttl_ms: ms(config.session_ttl),
        }
    }
}

/// What a running request may use.
pub(crate) struct Ctx<'a> {
    pub(crate) store: &'a dyn Store,
    pub(crate) loads: &'a dyn Loads,
    pub(crate) settings: &'a Settings,
    /// When the client stops waiting.
    pub(crate) deadline: Instant,
    /// The session of the request's header, if it carries one.
    pub(crate) session: Option<SessionId>,
}

impl Ctx<'_> {
    /// How the store wakes waiters (the `notify` argument of calls that change an entry).
    pub(crate) fn notify(&self) -> Notify {
        self.store.notify()
    }

    /// Runs `call` in the store, under the request's session when its header carries one:
    /// then the session is checked and slid in the same atomic call, and `call` runs only
    /// when it is live (`SESSION_EXPIRED` otherwise); a call about another client than the
    /// session's is refused `SESSION_CLIENT_MISMATCH` before anything is sent.
    pub(crate) fn run(&self, call: Call<'_>) -> Result<Value, Answer> {
        match &self.session {
            Some(sid) => self.guarded(sid, call),
            None => self.store.run(&call),
        }
    }

    /// [`run`](Self::run) for a call about the session `sid` itself (touch, update,
    /// destroy): it checks and slides `sid` on its own, so the header's session guards it
    /// only when it is another session.
    pub(crate) fn run_about(&self, sid: &SessionId, call: Call<'_>) -> Result<Value, Answer> {
        match &self.session {
            Some(own) if own != sid => self.guarded(own, call),
            _ => self.store.run(&call),
        }
    }

    fn guarded(&self, sid: &SessionId, call: Call<'_>) -> Result<Value, Answer> {
        let call = Call::in_session(sid, call, None).map_err(input)?;
        match Guarded::decode(self.store.run(&call)?).map_err(reply)? {
            Guarded::Live { reply, .. } => Ok(reply),
            Guarded::Expired => Err(expired()),
        }
    }

    /// For a request whose data is not its client's keys (a device's binding lives in a
    /// slot of its own, so no script can take it with the session's keys): checks and
    /// slides the header's session in a call of its own, first. The session's client
    /// (`None` without a session); `SESSION_EXPIRED` when it is not live.
    pub(crate) fn session_first(&self) -> Result<Option<Vec<u8>>, Answer> {
        let Some(sid) = &self.session else {
            return Ok(None);
        };
        let touched = self.store.run(&Call::sess_touch(sid, None, None))?;
        match Touch::decode(touched).map_err(reply)? {
            Touch::Live { client, .. } => Ok(Some(client)),
            Touch::Expired | Touch::VersionMismatch { .. } => Err(expired()),
        }
    }
}

/// The answer for a refused input (the core's code and message).
pub(crate) fn input(e: InputError) -> Answer {
    Answer::data(e.code(), e.to_string())
}

/// The answer for a store reply of the wrong shape.
pub(crate) fn reply(e: ReplyError) -> Answer {
    Answer::data(e.code(), e.to_string())
}

/// `SESSION_EXPIRED`.
pub(crate) fn expired() -> Answer {
    Answer::data(
        ErrorCode::SessionExpired,
        ErrorCode::SessionExpired.summary(),
    )
}

/// `VERSION_MISMATCH`, naming the service version the session was made by.
pub(crate) fn mismatch(stored: &[u8]) -> Answer {
    Answer::data(
        ErrorCode::VersionMismatch,
        format!(
            "the session was made by service version {:?}",
            String::from_utf8_lossy(stored)
        ),
    )
}

/// The session of a request's header: none when it carries no session id (then
/// `SESSION_EXPIRED` for a type `required` lists), else the parsed id (`BAD_SESSION_ID`
/// for one keyroute did not make). `ping` never looks at it.
pub(crate) fn session_of(
    ty: MsgType,
    session_id: &[u8],
    required: &[MsgType],
) -> Result<Option<SessionId>, Answer> {
    if session_id.is_empty() {
        if required.contains(&ty) {
            return Err(Answer::data(
                ErrorCode::SessionExpired,
                format!(
                    "{} requires a session (--require-session): the header carries no session id; log in",
                    ty.name()
                ),
            ));
        }
        return Ok(None);
    }
    SessionId::parse(session_id).map(Some).map_err(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_type_but_ping_has_one_command() {
        for t in MsgType::ALL.iter().filter(|t| t.is_client()) {
            let n = COMMANDS.iter().filter(|c| c.ty == *t).count();
            assert_eq!(n, usize::from(*t != MsgType::Ping), "{}", t.name());
        }
        assert!(COMMANDS.iter().all(|c| c.ty.is_client()));
    }

    #[test]
    fn bodies() {
        assert!(parse(MsgType::CacheGet, br#"{"client":"c","kind":"k"}"#, None).is_ok());
        for bad in [
            &b"not json"[..],
            b"[1]",
            br#"{"client":1,"kind":"k"}"#,
            br#"{"client":"c"}"#,
            br#"{"client":"c","kind":"k","x":1}"#,
        ] {
            match parse(MsgType::CacheGet, bad, None) {
                Err(Answer::Data { code, .. }) => assert_eq!(code, "BAD_TYPE"),
                other => panic!("{other:?}"),
            }
        }
        assert!(parse(MsgType::CachePut, br#"{"client":"c","kind":"k"}"#, None).is_err());
        assert!(parse(
            MsgType::CacheGet,
            br#"{"client":"c","kind":"k"}"#,
            Some(vec![])
        )
        .is_err());
        assert!(parse(
            MsgType::SessionUpdate,
            br#"{"sid":"a.b","version":"1"}"#,
            Some(vec![])
        )
        .is_ok());
        assert!(parse(
            MsgType::SessionUpdate,
            br#"{"sid":"a.b","version":"1"}"#,
            None
        )
        .is_err());
        assert!(matches!(
            parse(MsgType::Load, b"", None),
            Err(Answer::Transport(TransportError::UnknownType))
        ));
    }

    #[test]
    fn the_header_session() {
        let required = [MsgType::CacheGet];
        assert!(matches!(
            session_of(MsgType::CacheGet, b"", &required),
            Err(Answer::Data { code, .. }) if code == "SESSION_EXPIRED"
        ));
        assert!(matches!(
            session_of(MsgType::CachePut, b"", &required),
            Ok(None)
        ));
        assert!(matches!(
            session_of(MsgType::CachePut, b"not-a-sid", &required),
            Err(Answer::Data { code, .. }) if code == "BAD_SESSION_ID"
        ));
        let token = keyroute::cache::ClientToken::of(b"c", &keyroute::cache::TokenKey::DEFAULT)
            .expect("token");
        let sid = SessionId::new(token, [1; 16]);
        assert!(matches!(
            session_of(MsgType::CacheGet, sid.as_bytes(), &required),
            Ok(Some(s)) if s == sid
        ));
    }
}

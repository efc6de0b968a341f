//! Where the service keeps state: [`MemoryStore`] (one instance, the core state models)
//! or [`RedisStore`] (shared by every instance, through keyroute-redis's smart cache).
//! Both implement [`Store`]; the broker's threads call it (calls may block).

mod memory;
mod redis;

use std::time::Instant;

use keyroute::cache::{Call, Notify, SessionId, Value};
use keyroute::frame::TransportError;

pub use self::memory::{MemoryConfig, MemoryStore};
pub use self::redis::{RedisConfig, RedisStore};
use crate::proto::Answer;
use crate::worker_msg::RESERVED_CODE_PREFIX;

/// Why a load (a loader worker's work) did not give a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadFailure {
    /// The worker answered `failed {code, message}`.
    Backend {
        /// The worker's code.
        code: String,
        /// The worker's message.
        message: String,
    },
    /// The service could not get it loaded (no loader, timed out, at cap, stopping).
    Transport(TransportError),
}

impl LoadFailure {
    /// The code a store records for it: a worker's code as it is, a transport error
    /// by name after `~` (which a worker's code may not start with, so that a worker
    /// cannot make its failure pass for one of the service's own).
    pub(crate) fn code(&self) -> String {
        match self {
            LoadFailure::Backend { code, .. } => code.clone(),
            LoadFailure::Transport(t) => format!("{RESERVED_CODE_PREFIX}{}", t.name()),
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            LoadFailure::Backend { message, .. } => message,
            LoadFailure::Transport(t) => t.summary(),
        }
    }

    /// The answer for a recorded failure with `code`/`message`: the service's own
    /// transport errors (`~NAME`) as themselves, anything else as `BACKEND_ERROR`
    /// carrying the worker's code.
    pub(crate) fn answer(code: &str, message: &str) -> Answer {
        let own = code
            .strip_prefix(RESERVED_CODE_PREFIX)
            .and_then(|name| TransportError::ALL.iter().find(|t| t.name() == name));
        match own {
            Some(t) => Answer::Transport(*t),
            None => Answer::Data {
                code: "BACKEND_ERROR".into(),
                message: format!("{code}: {message}"),
            },
        }
    }
}

/// A loader: asks a loader worker for a value (blocking the calling thread).
pub type Loader<'a> = &'a mut dyn FnMut() -> Result<Vec<u8>, LoadFailure>;
/// A warm-up loader: `(client, kind)` → value.
pub type WarmLoader<'a> = &'a (dyn Fn(&str, &str) -> Result<Vec<u8>, LoadFailure> + Sync);

/// What the store did so far (for metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Values served from the store.
    pub hits: u64,
    /// Leases granted (a miss that this instance loads).
    pub misses: u64,
    /// Loads that ran (backend calls).
    pub backend_loads: u64,
    /// Leases taken over from a loader that stopped heartbeating.
    pub takeovers: u64,
    /// Loads whose result was discarded by the fence (invalidated or taken over).
    pub fenced_fills: u64,
}

/// Where the store is, for metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreInfo {
    /// `memory`, or the Redis address(es), passwords redacted.
    pub address: String,
    /// `memory`, `master`, `replica`, `cluster`, or `unreachable`.
    pub role: String,
}

/// The service's state: sessions, cache entries, devices. Every method may block (Redis
/// round trips, a loader); errors come back as the answer the client gets.
///
/// A store runs core's cache scripts: [`run`](Self::run) takes one [`Call`] (built by
/// `keyroute::cache::Call`, decoded by core's reply decoders), which Redis runs with
/// `EVALSHA` and the memory store on core's state models, with the same replies. The
/// message types are written once, over `run`, for every store; only the reads that wait
/// and load ([`get_or_load`](Self::get_or_load), [`warm`](Self::warm)) are the store's
/// own.
pub trait Store: Send + Sync {
    /// Where it is and in which role.
    fn info(&self) -> StoreInfo;
    /// Counters.
    fn stats(&self) -> StoreStats;
    /// Whether the store answers now (for `/readyz`): `Err` says why not, without
    /// secrets. A store in this process always answers (the default); Redis answers a
    /// `PING` within its timeouts.
    ///
    /// ```
    /// use keyroute_serve::store::{MemoryStore, Store};
    /// assert_eq!(MemoryStore::new(Default::default()).ping(), Ok(()));
    /// ```
    fn ping(&self) -> Result<(), String> {
        Ok(())
    }
    /// How the store's scripts wake waiters: the `notify` argument of the calls that
    /// change an entry (`PUBLISH` on one server, `SPUBLISH` on Cluster; the memory store
    /// wakes its own waiters and takes none).
    ///
    /// ```
    /// use keyroute_serve::store::{MemoryStore, Store};
    /// assert_eq!(MemoryStore::new(Default::default()).notify(), keyroute::cache::Notify::Nothing);
    /// ```
    fn notify(&self) -> Notify {
        Notify::Nothing
    }
    /// Runs one call of core's cache scripts, atomically; its reply as Redis gives it.
    /// Every call a message type makes runs here: `sc-read`, `sc-put`, `sc-invalidate`,
    /// the session scripts, `device-bind`, and any of them under `sess-guard`
    /// ([`Call::in_session`]).
    ///
    /// ```
    /// use keyroute::cache::{decode_read, Call, ClientKeys, TokenKey};
    /// use keyroute_serve::store::{MemoryStore, Store};
    /// let store = MemoryStore::new(Default::default());
    /// let entry = ClientKeys::new(b"c-42", &TokenKey::DEFAULT)?.entry(b"cards")?;
    /// let reply = store.run(&Call::read(&entry, None)).expect("memory answers");
    /// assert_eq!(decode_read(reply), Ok(None));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    fn run(&self, call: &Call<'_>) -> Result<Value, Answer>;
    /// `product.get`: the value, loaded through `loader` by one caller across every
    /// instance sharing the store. Under `session` the first read of the entry checks and
    /// slides the session in the same atomic step (`SESSION_EXPIRED`: nothing was read
    /// or loaded; a session of another client: `SESSION_CLIENT_MISMATCH`).
    fn get_or_load(
        &self,
        session: Option<&SessionId>,
        client: &str,
        kind: &str,
        deadline: Instant,
        loader: Loader<'_>,
    ) -> Result<Vec<u8>, Answer>;
    /// `app.start`: warms every cold kind of `kinds` for the device's client; how many
    /// kinds were loaded.
    fn warm(&self, device: &str, kinds: &[String], loader: WarmLoader<'_>)
        -> Result<usize, Answer>;
}

/// The current time in ms since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_code_never_passes_for_a_transport_error() {
        for t in TransportError::ALL {
            let worker = LoadFailure::Backend {
                code: t.name().into(),
                message: "m".into(),
            };
            match LoadFailure::answer(&worker.code(), worker.message()) {
                Answer::Data { code, message } => {
                    assert_eq!(code, "BACKEND_ERROR");
                    assert_eq!(message, format!("{}: m", t.name()));
                }
                other => panic!("{other:?}"),
            }
            let own = LoadFailure::Transport(*t);
            assert!(matches!(
                LoadFailure::answer(&own.code(), own.message()),
                Answer::Transport(x) if x == *t
            ));
        }
    }
}

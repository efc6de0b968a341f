//! The smart cache on Redis, pure parts: the storage model, the Lua scripts, the reply
//! decoders and state models, shared by every language. Running them on Redis is the
//! `keyroute-redis` crate's `cache` module.
//!
//! What it is for: front servers that share, through Redis (standalone or Cluster),
//!
//! * cache entries loaded from a slow backend **once across every instance** (a lease with
//!   a fence: one caller loads, the others wait for a wake-up, and a late or invalidated
//!   load cannot overwrite newer data),
//! * client sessions any server can read, with a sliding TTL, an optional maximum age and
//!   a service-version check,
//! * a device → client binding to warm a client's entries before login.
//!
//! # Storage model
//!
//! Every key of one client carries the hash tag `{c:T}`, `T` an opaque
//! [`ClientToken`] of the client id (keyed SipHash, so ids do not leak into key names):
//! every script touches one slot, and a client's data moves as a unit when slots move.
//! See [`ClientKeys`] for the key names, [`SessionId`] for session ids (they embed `T`),
//! [`EntryModel`] for the entry hash and [`SessionModel`] for sessions. Time comes from
//! Redis `TIME` only; cleanup is by TTL only (`PEXPIREAT` on every key), no background job.
//!
//! # Scripts
//!
//! | script | reply |
//! |---|---|
//! | [`SC_GET`] | [`GetReply`]: hit, refresh, stale, lease (fence, takeover), wait, cached error |
//! | [`SC_FILL`] | [`FillReply`]: stored (version), fenced, duplicate |
//! | [`SC_EXTEND`] | 1 extended, 0 lost ([`decode_flag`]) |
//! | [`SC_ABANDON`] | 1 released with the error cached, 0 lost |
//! | [`SC_INVALIDATE`] | 1 dropped (fence bumped), 0 absent |
//! | [`WARM_BEGIN`] | per key a fence or 0 ([`decode_warm`]) |
//! | [`SESS_CREATE`] | [`CreateReply`] |
//! | [`SESS_TOUCH`] | [`Touch`]: live, expired, version mismatch |
//! | [`SESS_DESTROY`] | 1 was live, 0 not |
//! | [`SESS_LIST`] | `(sid, expires_at)` pairs ([`decode_sessions`]) |
//! | [`DEVICE_BIND`] | 1 |
//! | [`SC_READ`] | the value, or nil ([`decode_read`]) |
//! | [`SC_PUT`] | [`PutReply`]: version and fence of a direct write |
//! | [`SESS_UPDATE`] | [`UpdateReply`]: updated, expired, version mismatch |
//! | [`SESS_GUARD`] | [`Guarded`]: the guarded script's reply, or the session expired |
//!
//! [`Call`] builds each call's keys and arguments. A warm hit needs no script: a plain
//! `HMGET` of [`PEEK_FIELDS`], decided by [`Peek::decode`], serves it at the rate of a
//! plain read (see [`Peek`] for the clock it uses).
//!
//! # The fence, and what it guarantees
//!
//! Each lease gets a fence `max(f + 1, now_ms)`: larger than every fence before it, even
//! when a failover to a replica lost the last increments (the new master's clock is used,
//! so this holds unless that clock is behind the old one by more than the failover took).
//! A fill is stored only under the entry's current fence, so **a late, paused or
//! invalidated loader never overwrites newer data**. It is not mutual exclusion: during a
//! partition or right after a failover two loaders may both load (the backend sees a
//! duplicate call), and only one of them is stored. For fewer duplicates after a failover,
//! run Redis with `min-replicas-to-write 1` (a master cut off from its replicas refuses
//! the grant with `NOREPLICAS`) and, optionally, send `WAIT 1 <ms>` on the same connection
//! right after a grant (`sc-get` answering refresh or lease, `warm-begin`): the lease then
//! survives a failover to that replica, so the new master makes the others wait instead of
//! granting a second lease.
//!
//! ```
//! use keyroute::cache::{Call, ClientKeys, EntryModel, GetReply, TokenKey};
//! let keys = ClientKeys::new(b"client-42", &TokenKey::DEFAULT)?;
//! let entry = keys.entry(b"accounts")?;
//! let call = Call::get(&entry, 2000, b"front-1", 0.0, true, None);
//! assert_eq!(call.script.name(), "sc-get");
//! // The same semantics in memory:
//! let mut m = EntryModel::new();
//! assert!(matches!(m.get(1_000, 2000, b"front-1", 0.0, true), GetReply::Lease { .. }));
//! # Ok::<(), keyroute::cache::InputError>(())
//! ```

mod base32;
#[cfg(feature = "alloc")]
mod call;
mod check;
#[cfg(feature = "alloc")]
mod driver;
#[cfg(feature = "alloc")]
mod entry_model;
mod error;
#[cfg(feature = "alloc")]
mod keys;
mod limits;
#[cfg(feature = "alloc")]
mod peek;
mod poll;
#[cfg(feature = "alloc")]
mod reply;
mod script;
mod session_id;
#[cfg(feature = "alloc")]
mod session_model;
mod session_settings;
mod token;
pub mod xfetch;

pub use crate::script::ReplyError;
#[cfg(feature = "alloc")]
pub use crate::script::{Call, Value};
#[cfg(feature = "alloc")]
pub use call::{xfetch_arg, Notify};
pub use check::{
    check_client_id, check_device_id, check_kind, check_value_len, check_version, check_warm_count,
    checked_max_value_len, checked_ms, truncate_message,
};
#[cfg(feature = "alloc")]
pub use driver::{
    CacheSettings, Counts, Failure, Fault, Fill, FillStep, GetOrLoad, GetOrLoadStep, Heartbeat,
    LoadFailure, LoadResult, Stored, Warm, WarmPlan,
};
#[cfg(feature = "alloc")]
pub use entry_model::{Entry, EntryModel, LeaseState};
pub use error::InputError;
#[cfg(feature = "alloc")]
pub use keys::{device_key, session_keys, ClientKeys, KEY_PREFIX};
pub use limits::{
    DEFAULT_MAX_VALUE_LEN, MAX_CLIENT_ID_LEN, MAX_DEVICE_ID_LEN, MAX_ERROR_CODE_LEN,
    MAX_ERROR_MESSAGE_LEN, MAX_KIND_LEN, MAX_MS, MAX_OWNER_LEN, MAX_VALUE_LEN_LIMIT,
    MAX_VERSION_LEN, MAX_WARM_KINDS,
};
#[cfg(feature = "alloc")]
pub use peek::{Peek, PEEK_FIELDS};
pub use poll::{PollSchedule, MAX_FENCED_LOADS};
#[cfg(feature = "alloc")]
pub use reply::{
    decode_flag, decode_read, decode_sessions, decode_warm, CreateReply, FillReply, GetReply,
    Guarded, PutReply, Touch, UpdateReply,
};
pub use script::{
    CACHE_SCRIPTS, DEVICE_BIND, SC_ABANDON, SC_EXTEND, SC_FILL, SC_GET, SC_INVALIDATE, SC_PUT,
    SC_READ, SESS_CREATE, SESS_DESTROY, SESS_GUARD, SESS_LIST, SESS_TOUCH, SESS_UPDATE, WARM_BEGIN,
};
pub use session_id::SessionId;
#[cfg(feature = "alloc")]
pub use session_model::{Session, SessionModel};
pub use session_settings::SessionSettings;
pub use token::{ClientToken, TokenKey};

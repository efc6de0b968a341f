//! The smart cache's Lua scripts (all also in [`crate::script::SCRIPTS`]), registered in
//! core's one table of scripts ([`crate::script`]): texts in `core/src/script/lua/`,
//! SHA1s computed by the build. `core/tests/cache_scripts.rs` checks that checks come
//! before writes, and the model tests run them on a real `redis-server`.
//!
//! Every script checks its arguments and the types of all its keys before its first write
//! (a refused call changes nothing), reads the time from Redis `TIME` (or from the
//! optional last argument `now_ms`, which only tests pass), and treats an entry or session
//! whose stored expiry has passed as absent.

pub use crate::script::table::{
    CACHE_SCRIPTS, DEVICE_BIND, SC_ABANDON, SC_EXTEND, SC_FILL, SC_GET, SC_INVALIDATE, SC_PUT,
    SC_READ, SESS_CREATE, SESS_DESTROY, SESS_GUARD, SESS_LIST, SESS_TOUCH, SESS_UPDATE, WARM_BEGIN,
};

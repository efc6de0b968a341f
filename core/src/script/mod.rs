//! Every Lua script keyroute runs on Redis, as [`Script`] values: name, text, SHA1 and key
//! count. Clients run a script with `EVALSHA sha1 numkeys keys... args...` and, on
//! `NOSCRIPT`, `SCRIPT LOAD` the text and retry (scripts are cached per node, so this is
//! needed after a failover or a `SCRIPT FLUSH`).
//!
//! Each script checks its arguments and the types of all its keys before its first
//! write, so a refused call (`ERR keyroute ...`, or `WRONGTYPE keyroute ...` when a key
//! holds another type) changes nothing. Every text ends with exactly one `\n`.
//!
//! ```
//! use keyroute::script::{Script, SCRIPTS};
//! let names: Vec<&str> = SCRIPTS.iter().map(|s| s.name()).collect();
//! assert!(names.contains(&"least-used") && names.contains(&"lease-acquire"));
//! assert_eq!(Script::by_name("lease_release").map(Script::num_keys), Some(4));
//! ```

use crate::cache::{
    DEVICE_BIND, SC_ABANDON, SC_EXTEND, SC_FILL, SC_GET, SC_INVALIDATE, SESS_CREATE, SESS_DESTROY,
    SESS_LIST, SESS_TOUCH, WARM_BEGIN,
};
use crate::select::affinity_script::{AFFINITY_RELEASE, AFFINITY_TAKE};
use crate::select::lease_script::{LEASE_ACQUIRE, LEASE_RECLAIM, LEASE_RELEASE};
use crate::select::{LEAST_USED, REMOVE, RESTORE, SEED};

/// A Lua script: its name, text, SHA1 and key count, for clients that run it
/// (`EVALSHA sha1 numkeys ...`, loading `text` on `NOSCRIPT`).
///
/// ```
/// use keyroute::{script::Script, select::LEAST_USED};
/// let script: &Script = Script::by_name("least-used").expect("a known script");
/// assert_eq!(script, &LEAST_USED);
/// assert_eq!(script.num_keys(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Script {
    name: &'static str,
    summary: &'static str,
    text: &'static str,
    sha1: &'static str,
    num_keys: usize,
    variadic: bool,
}

impl Script {
    /// A script; `sha1` must be the SHA1 of `text` (the registry's test checks every one).
    pub(crate) const fn new(
        name: &'static str,
        summary: &'static str,
        text: &'static str,
        sha1: &'static str,
        num_keys: usize,
    ) -> Self {
        Script {
            name,
            summary,
            text,
            sha1,
            num_keys,
            variadic: false,
        }
    }

    /// A script taking `num_keys` or more keys (see [`variadic_keys`](Self::variadic_keys)).
    pub(crate) const fn new_variadic(
        name: &'static str,
        summary: &'static str,
        text: &'static str,
        sha1: &'static str,
        num_keys: usize,
    ) -> Self {
        Script {
            name,
            summary,
            text,
            sha1,
            num_keys,
            variadic: true,
        }
    }

    /// Whether the script takes a variable number of keys, [`num_keys`](Self::num_keys)
    /// being the least (e.g. `warm-begin`, one key per kind): `EVALSHA`'s `numkeys` is then
    /// the number of keys passed.
    ///
    /// ```
    /// use keyroute::script::Script;
    /// assert_eq!(Script::by_name("warm-begin").map(Script::variadic_keys), Some(true));
    /// assert_eq!(Script::by_name("least-used").map(Script::variadic_keys), Some(false));
    /// ```
    pub const fn variadic_keys(&self) -> bool {
        self.variadic
    }

    /// The script's name as the command line spells it, e.g. `least-used`.
    ///
    /// ```
    /// assert_eq!(keyroute::select::RESTORE.name(), "restore");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// One line saying what the script does and what it takes.
    ///
    /// ```
    /// assert!(!keyroute::select::SEED.summary().is_empty());
    /// ```
    pub const fn summary(&self) -> &'static str {
        self.summary
    }

    /// The Lua text, ending with one `\n`.
    ///
    /// ```
    /// use keyroute::select::{LEAST_USED, LEAST_USED_SCRIPT};
    /// assert_eq!(LEAST_USED.text(), LEAST_USED_SCRIPT);
    /// ```
    pub const fn text(&self) -> &'static str {
        self.text
    }

    /// The SHA1 of [`text`](Self::text), lowercase hex, as `EVALSHA` takes it.
    ///
    /// ```
    /// use keyroute::select::{LEAST_USED, LEAST_USED_SHA1};
    /// assert_eq!(LEAST_USED.sha1(), LEAST_USED_SHA1);
    /// ```
    pub const fn sha1(&self) -> &'static str {
        self.sha1
    }

    /// How many keys the script takes (`numkeys` of `EVALSHA`), e.g. 1 for the
    /// least-used pick (the pool), 2 for seed (the pool, then its side key); the least it
    /// takes when [`variadic_keys`](Self::variadic_keys).
    ///
    /// ```
    /// assert_eq!(keyroute::select::REMOVE.num_keys(), 2);
    /// ```
    pub const fn num_keys(&self) -> usize {
        self.num_keys
    }

    /// Finds a script of [`SCRIPTS`] by name; `_` and `-` are interchangeable.
    ///
    /// ```
    /// use keyroute::{script::Script, select::LEAST_USED};
    /// assert_eq!(Script::by_name("least_used"), Some(&LEAST_USED));
    /// assert_eq!(Script::by_name("most-used"), None);
    /// ```
    pub fn by_name(name: &str) -> Option<&'static Script> {
        SCRIPTS.iter().find(|script| {
            script.name.len() == name.len()
                && script
                    .name
                    .bytes()
                    .zip(name.bytes())
                    .all(|(a, b)| a == b || (a == b'-' && b == b'_'))
        })
    }
}

/// Every script, in the order `keyroute script --list` shows them.
pub const SCRIPTS: &[Script] = &[
    LEAST_USED,
    SEED,
    REMOVE,
    RESTORE,
    LEASE_ACQUIRE,
    LEASE_RELEASE,
    LEASE_RECLAIM,
    AFFINITY_TAKE,
    AFFINITY_RELEASE,
    SC_GET,
    SC_FILL,
    SC_EXTEND,
    SC_ABANDON,
    SC_INVALIDATE,
    WARM_BEGIN,
    SESS_CREATE,
    SESS_TOUCH,
    SESS_DESTROY,
    SESS_LIST,
    DEVICE_BIND,
];

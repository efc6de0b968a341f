//! Every Lua script keyroute runs on Redis, as [`Script`] values: name, text, SHA1 and key
//! count. Clients run a script with `EVALSHA sha1 numkeys keys... args...` and, on
//! `NOSCRIPT`, `SCRIPT LOAD` the text and retry (scripts are cached per node, so this is
//! needed after a failover or a `SCRIPT FLUSH`).
//!
//! Each script checks its arguments and the types of all its keys before its first
//! write, so a refused call (`ERR keyroute ...`, or `WRONGTYPE keyroute ...` when a key
//! holds another type) changes nothing. Every text ends with exactly one `\n`.
//!
//! # One table
//!
//! The scripts are written in `core/src/script/lua/NAME.lua` (one file per script, named
//! after it) and registered once, in `table.rs`: summary, key count, docs, and their place
//! in [`SCRIPTS`] and in the groups [`select::POOL_SCRIPTS`](crate::select::POOL_SCRIPTS)
//! and [`cache::CACHE_SCRIPTS`](crate::cache::CACHE_SCRIPTS). `select` and `cache`
//! re-export their scripts from there. The build (`core/build.rs`) assembles each text and
//! computes its SHA1: nothing is typed by hand. The opening most scripts share is written
//! once, in `core/src/script/lua/include/`, and taken in by a line `--#include PIECE` or
//! `--#include PIECE(ARG, ...)` (`${name}` in a piece is the script's name, `${1}`, ... its
//! arguments, `${types}` all of them quoted):
//!
//! | piece | what it does |
//! |---|---|
//! | `key_types(T1, T2, ...)` | refuses (`WRONGTYPE keyroute NAME: ...; nothing was changed`) a `KEYS[i]` that exists with a type other than `Ti` |
//! | `key_type(VAR, T)` | the same for the one key in the Lua variable `VAR` |
//! | `ms` | `local function ms(s)`: a time or duration argument in ms, digits up to 2^48, else nil |
//! | `now_optional` | `now` from the optional last argument `now_ms` (through `ms`), else the server's `TIME` |
//! | `now_or_empty` | `now` from an argument that is digits, or empty for the server's `TIME` |
//! | `digits` | `local function s(n)`: an integer as decimal digits |
//! | `end_lease(ID)` | ends the lease `ID` once: out of the leases set and map, one less in flight for its member |
//! | `session_tidy` | `local function tidy()`: prunes the session index `ik` of expired ids and sets its expiry to its latest session's |
//! | `session_gone(COND)` | when `COND`, removes the session `sk`/`sid` (and its index entry) and answers `{0}` |
//! | `session_slide(TTL, MA, CA)` | `local x`: the session's new expiry, `now + TTL`, never past `CA + MA` |
//!
//! A line `--#inline SCRIPT` takes in the whole assembled text of another script (what
//! `sess-guard` does with each script it runs under a session).
//!
//! A directive may be indented (inside a loop): every line of the piece is indented alike.
//!
//! The texts that reach Redis are recorded in `tests/vectors/scripts/scripts.json`, which a
//! test compares with [`SCRIPTS`].
//!
//! ```
//! use keyroute::script::{Script, SCRIPTS};
//! let names: Vec<&str> = SCRIPTS.iter().map(|s| s.name()).collect();
//! assert!(names.contains(&"least-used") && names.contains(&"lease-acquire"));
//! assert_eq!(Script::by_name("lease_release").map(Script::num_keys), Some(4));
//! ```

#[cfg(feature = "alloc")]
mod call;
mod reply_error;
pub(crate) mod table;
#[cfg(feature = "alloc")]
mod value;

#[cfg(feature = "alloc")]
pub(crate) use call::int_arg;
#[cfg(feature = "alloc")]
pub use call::Call;
pub use reply_error::ReplyError;
pub use table::SCRIPTS;
#[cfg(feature = "alloc")]
pub use value::Value;

/// The scripts as the build assembled them (`core/build.rs`).
mod lua {
    use super::Lua;
    include!(concat!(env!("OUT_DIR"), "/lua.rs"));
}

/// One script file as the build assembled it: its name (the file's), text and SHA1.
#[derive(Clone, Copy, Debug)]
struct Lua {
    name: &'static str,
    text: &'static str,
    sha1: &'static str,
}

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
    /// The script of `lua` (see the [module docs](self)).
    const fn new(lua: Lua, summary: &'static str, num_keys: usize) -> Self {
        Script {
            name: lua.name,
            summary,
            text: lua.text,
            sha1: lua.sha1,
            num_keys,
            variadic: false,
        }
    }

    /// A script taking `num_keys` or more keys (see [`variadic_keys`](Self::variadic_keys)).
    const fn new_variadic(lua: Lua, summary: &'static str, num_keys: usize) -> Self {
        Script {
            variadic: true,
            ..Script::new(lua, summary, num_keys)
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

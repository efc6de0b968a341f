//! [`Call`]: a script call ready to send (`EVALSHA sha1 numkeys keys... args...`). Each
//! concept builds its own from typed arguments (the smart cache's in
//! [`cache`](crate::cache), the pools', leases' and affinity's in
//! [`select`](crate::select)), so every client passes the same arguments in the same form.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use super::Script;

/// A script call: the script, its keys and its arguments. Send it as `EVALSHA
/// script.sha1() keys.len() keys... args...` (loading `script.text()` on `NOSCRIPT`).
///
/// `now` arguments are for tests only: `None` lets the script read the server's `TIME`
/// (what every production call does).
///
/// ```
/// use keyroute::cache::{Call, ClientKeys, TokenKey};
/// let keys = ClientKeys::new(b"client-42", &TokenKey::DEFAULT)?;
/// let entry = keys.entry(b"accounts")?;
/// let call = Call::get(&entry, 2000, b"host-1", 0.0, true, None);
/// assert_eq!(call.script.name(), "sc-get");
/// assert_eq!(call.keys, [&entry[..]]);
/// assert_eq!(call.args, [&b"2000"[..], b"host-1", b"0", b"1"]);
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// The script.
    pub script: &'static Script,
    /// `KEYS`.
    pub keys: Vec<Cow<'a, [u8]>>,
    /// `ARGV`.
    pub args: Vec<Cow<'a, [u8]>>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(
        script: &'static Script,
        keys: Vec<Cow<'a, [u8]>>,
        args: Vec<Cow<'a, [u8]>>,
    ) -> Self {
        Call { script, keys, args }
    }
}

/// An integer argument in decimal digits.
pub(crate) fn int_arg(n: u64) -> Cow<'static, [u8]> {
    Cow::Owned(alloc::format!("{n}").into_bytes())
}

//! [`Affinity`]: affinity with a cap on Redis, consistent hashing with bounded loads
//! shared by every worker. `take` gives an item to its holder, or to the first of its
//! candidate nodes holding fewer items than the cap, `release` frees it; each one atomic
//! script ([`affinity_script`](keyroute::select::affinity_script) has the texts, the key
//! layout and how its cap rule relates to the in-memory
//! [`Bounded`](keyroute::engine::Bounded)).

use ::redis::ConnectionLike;

use crate::cache::exec::eval_in;
use crate::error::Result;
use crate::script::{fail, show};
pub use keyroute::select::affinity_script::{Cap, MAX_AFFINITY_CANDIDATES};
/// What [`Affinity::take`] gave (core's).
pub use keyroute::select::Taken;
use keyroute::select::{decode_member, AffinityCalls, AFFINITY_RELEASE};

/// An affinity map on Redis: item → node at the affinity key, node → load beside it, in
/// its slot, driven by core's calls ([`AffinityCalls`](keyroute::select::AffinityCalls))
/// and reply decoders. The handle holds keys and scripts only; every call takes the connection
/// (standalone or cluster).
///
/// ```
/// use keyroute_redis::affinity::Affinity;
/// let a = Affinity::new("{jobs}:owner")?;
/// assert_eq!(a.keys()[1], b"{jobs}:owner:loads");
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Affinity {
    calls: AffinityCalls,
}

impl Affinity {
    /// A handle on the affinity map at `key`. Sends nothing.
    ///
    /// # Errors
    /// [`Error::Key`] for an empty key or one that needs a hash tag.
    pub fn new(key: impl AsRef<[u8]>) -> Result<Self> {
        Ok(Affinity {
            calls: AffinityCalls::new(key.as_ref())?,
        })
    }

    /// The affinity key and its loads key, `KEYS[1..=2]` of the scripts.
    pub fn keys(&self) -> &[Vec<u8>; 2] {
        self.calls.keys()
    }

    fn context(&self, what: &str) -> String {
        format!("{what} (affinity {})", show(&self.keys()[0]))
    }

    /// Gives `item` to the node holding it, else to the first of `candidates` (in the
    /// item's preference order, e.g. `Router::get_n(item, n)`) holding fewer items than
    /// the cap, atomically; `None` when every candidate is at the cap (nothing changed).
    ///
    /// # Errors
    /// [`Error::Affinity`](crate::Error::Affinity) for an empty item or candidate, no or too many candidates, a
    /// cap or factor out of range (nothing is sent); a connection or server error
    /// (`REDIS_WRONGTYPE` when a key holds another type: nothing changed).
    pub fn take<C: AsRef<[u8]>>(
        &self,
        con: &mut dyn ConnectionLike,
        item: &[u8],
        candidates: &[C],
        cap: Cap,
    ) -> Result<Option<Taken>> {
        let call = self.calls.take(item, candidates, cap)?;
        Ok(Taken::decode(eval_in(con, &call, &self.context("take"))?)?)
    }

    /// Frees `item` once; returns the node that held it (its load went down by one), or
    /// `None` when the item was not held (nothing changed).
    ///
    /// # Errors
    /// [`Error::Affinity`](crate::Error::Affinity) for an empty item (nothing is sent); a connection or server
    /// error.
    pub fn release(&self, con: &mut dyn ConnectionLike, item: &[u8]) -> Result<Option<Vec<u8>>> {
        let call = self.calls.release(item)?;
        let reply = eval_in(con, &call, &self.context("release"))?;
        Ok(decode_member(reply, &AFFINITY_RELEASE)?)
    }

    /// The node holding `item`, if any.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn holder(&self, con: &mut dyn ConnectionLike, item: &[u8]) -> Result<Option<Vec<u8>>> {
        ::redis::cmd("HGET")
            .arg(&self.keys()[0])
            .arg(item)
            .query(con)
            .map_err(fail(&self.context("holder")))
    }

    /// `(node, items held)` of every node holding at least one item, by node name.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn loads(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let mut pairs: Vec<(Vec<u8>, u64)> = ::redis::cmd("HGETALL")
            .arg(&self.keys()[1])
            .query(con)
            .map_err(fail(&self.context("loads")))?;
        pairs.sort();
        Ok(pairs)
    }

    /// How many items are held.
    ///
    /// # Errors
    /// A connection or server error.
    pub fn held(&self, con: &mut dyn ConnectionLike) -> Result<u64> {
        ::redis::cmd("HLEN")
            .arg(&self.keys()[0])
            .query(con)
            .map_err(fail(&self.context("held")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_before_sending() {
        // A connection that must never be used: every check fails first.
        let a = Affinity::new("{t}:a").expect("handle");
        let t = crate::Timeouts::uniform(std::time::Duration::from_millis(50));
        let mut con = crate::Link::single("redis://127.0.0.1:1", t).expect("lazy link");
        let none: [&str; 0] = [];
        for (err, code) in [
            (a.take(&mut con, b"", &["n"], Cap::Fixed(1)), "EMPTY_MEMBER"),
            (a.take(&mut con, b"i", &none, Cap::Fixed(1)), "OUT_OF_RANGE"),
            (
                a.take(&mut con, b"i", &["n", ""], Cap::Fixed(1)),
                "EMPTY_MEMBER",
            ),
            (
                a.take(&mut con, b"i", &["n"], Cap::Fixed(0)),
                "OUT_OF_RANGE",
            ),
            (
                a.take(&mut con, b"i", &["n"], Cap::Factor(0.5)),
                "OUT_OF_RANGE",
            ),
        ] {
            assert_eq!(err.expect_err("refused").code().as_str(), code);
        }
        assert_eq!(
            a.release(&mut con, b"")
                .expect_err("refused")
                .code()
                .as_str(),
            "EMPTY_MEMBER"
        );
    }
}

//! The in-memory pool model: the same semantics as the scripts on a Redis sorted set.

use alloc::vec::Vec;
use core::fmt;

use crate::error::{ErrorCode, Int};
use crate::util::{heap_sort, heapify, sift_down};

use super::{Restore, MAX_EXACT_COUNT};

/// Why a pool operation was refused. Nothing was changed.
///
/// ```
/// use keyroute::select::{Pool, PoolError, MAX_EXACT_COUNT};
/// let mut pool = Pool::new();
/// let err = pool.seed(["a"], MAX_EXACT_COUNT + 1, false).unwrap_err();
/// assert_eq!(err, PoolError::BadInitialCount((MAX_EXACT_COUNT + 1).into()));
/// assert!(pool.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PoolError {
    /// The initial count is negative or above [`MAX_EXACT_COUNT`].
    BadInitialCount(i128),
    /// More picks asked of one call than [`MAX_PICKS_PER_CALL`] (or a negative number).
    TooManyPicks(i128),
    /// A member is empty: a worker handed `""` could not reach anything.
    EmptyMember,
    /// A lease TTL (ms) outside `1..=2^53`.
    BadLeaseTtl(u64),
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolError::BadInitialCount(initial) => write!(
                f,
                "initial count {} is outside 0..=2^53 = {MAX_EXACT_COUNT} (2^53 is the \
                 largest count a Redis sorted-set score, a double, holds exactly); seed with a \
                 count in that range",
                Int(*initial)
            ),
            PoolError::TooManyPicks(n) => write!(
                f,
                "{} picks asked of one call; one call makes 0 to {MAX_PICKS_PER_CALL} picks \
                 (call again for more)",
                Int(*n)
            ),
            PoolError::EmptyMember => {
                f.write_str("pool members must not be empty; name each member, e.g. \"proxy-1\"")
            }
            PoolError::BadLeaseTtl(ms) => write!(
                f,
                "a lease TTL of {ms} ms is outside 1 ms to 2^53 ms; give the work a deadline \
                 it can meet"
            ),
        }
    }
}

impl PoolError {
    /// The stable code of the error.
    ///
    /// ```
    /// use keyroute::select::PoolError;
    /// assert_eq!(PoolError::EmptyMember.code().as_str(), "EMPTY_MEMBER");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            PoolError::BadInitialCount(_) => ErrorCode::BadCount,
            PoolError::TooManyPicks(_) => ErrorCode::TooLarge,
            PoolError::EmptyMember => ErrorCode::EmptyMember,
            PoolError::BadLeaseTtl(_) => ErrorCode::BadTtl,
        }
    }
}

impl core::error::Error for PoolError {}

/// The most picks one `pick_many` call makes, in every binding: 2^24 = 16,777,216. A
/// larger count is refused before anything is allocated ([`PoolError::TooManyPicks`]).
pub const MAX_PICKS_PER_CALL: usize = 1 << 24;

/// Checks an initial count as a caller gave it (bindings pass wide integers).
///
/// ```
/// use keyroute::select::{checked_initial, MAX_EXACT_COUNT};
/// assert_eq!(checked_initial(5), Ok(5));
/// assert_eq!(checked_initial(-1).unwrap_err().code().as_str(), "BAD_COUNT");
/// assert!(checked_initial(MAX_EXACT_COUNT as i128 + 1).is_err());
/// ```
///
/// # Errors
/// [`PoolError::BadInitialCount`] outside `0..=MAX_EXACT_COUNT`.
pub fn checked_initial(initial: i128) -> Result<u64, PoolError> {
    u64::try_from(initial)
        .ok()
        .filter(|&n| n <= MAX_EXACT_COUNT)
        .ok_or(PoolError::BadInitialCount(initial))
}

/// Checks a number of picks as a caller gave it.
///
/// ```
/// use keyroute::select::checked_picks;
/// assert_eq!(checked_picks(3), Ok(3));
/// assert_eq!(checked_picks(1 << 32).unwrap_err().code().as_str(), "TOO_LARGE");
/// ```
///
/// # Errors
/// [`PoolError::TooManyPicks`] outside `0..=MAX_PICKS_PER_CALL`.
pub fn checked_picks(n: i128) -> Result<usize, PoolError> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_PICKS_PER_CALL)
        .ok_or(PoolError::TooManyPicks(n))
}

/// A least-used pool in memory, answering exactly as the [scripts](super::SCRIPTS) on a
/// Redis server do (checked against a real server by the vectors in
/// `tests/vectors/pool/`).
///
/// Members are byte strings; counts are integers in `0..=`[`MAX_EXACT_COUNT`].
/// [`pick`](Self::pick) takes the lowest count, ties going to the byte-wise smallest
/// member (memcmp order: a prefix comes before the longer member), and increments it.
/// Removed members' counts are remembered so that [`restore`](Self::restore) can keep
/// them. `pick` is O(log n); lookups are O(log n); `seed` of m members is
/// O(n + m log m); `remove` and `restore` are O(n).
///
/// ```
/// use keyroute::select::{Pool, Restore};
/// let mut pool = Pool::new();
/// pool.seed(["proxy-b", "proxy-a"], 0, false)?;
/// assert_eq!(pool.pick().as_deref(), Some(&b"proxy-a"[..]));
/// assert_eq!(pool.pick().as_deref(), Some(&b"proxy-b"[..]));
/// assert_eq!(pool.remove(b"proxy-a"), Some(1));
/// assert_eq!(pool.pick().as_deref(), Some(&b"proxy-b"[..]));
/// assert_eq!(pool.restore(b"proxy-a", Restore::AtMinimum)?, 2);
/// # Ok::<(), keyroute::select::PoolError>(())
/// ```
// Sorted vectors and a binary heap rather than B-trees: the same answers with a fraction
// of the code (B-trees of two key types cost ~5 KB of the JavaScript package's gzipped
// .wasm), and a faster `pick`.
#[derive(Clone, Default)]
pub struct Pool {
    /// (member, count) for the members in the pool, sorted by member.
    members: Vec<(Vec<u8>, u64)>,
    /// Indexes into `members` as a binary min-heap in pick order ([`Pool::before`]): the
    /// next pick is `heap[0]`. Rebuilt (O(n)) whenever `members` gains or loses an entry
    /// or `seed` overwrites counts.
    heap: Vec<usize>,
    /// (member, count when it was removed), sorted by member (the side hash); disjoint
    /// from `members`.
    removed: Vec<(Vec<u8>, u64)>,
}

/// Where `member` is in a list sorted by member: `Ok(index)`, or `Err(insertion point)`.
fn find(list: &[(Vec<u8>, u64)], member: &[u8]) -> Result<usize, usize> {
    list.binary_search_by(|(m, _)| m.as_slice().cmp(member))
}

impl Pool {
    /// An empty pool.
    ///
    /// ```
    /// assert!(keyroute::select::Pool::new().is_empty());
    /// ```
    pub const fn new() -> Self {
        Pool {
            members: Vec::new(),
            heap: Vec::new(),
            removed: Vec::new(),
        }
    }

    /// Pick order of two indexes into `members`: count, then member bytes, which is index
    /// order since `members` is sorted by member (integer comparisons only).
    fn before(members: &[(Vec<u8>, u64)]) -> impl Fn(usize, usize) -> bool + '_ {
        move |a, b| (members[a].1, a) < (members[b].1, b)
    }

    /// Rebuilds the heap over all members (O(n)).
    fn reorder(&mut self) {
        self.heap.clear();
        self.heap.extend(0..self.members.len());
        heapify(&mut self.heap, &Self::before(&self.members));
    }

    /// Forgets the count remembered for `member`, returning it.
    fn forget(&mut self, member: &[u8]) -> Option<u64> {
        let i = find(&self.removed, member).ok()?;
        Some(self.removed.remove(i).1)
    }

    /// Adds `members` at count `initial`, as [`SEED_SCRIPT`](super::SEED_SCRIPT) does.
    ///
    /// A member already in the pool keeps its count unless `overwrite` is true. Every
    /// member placed in the pool forgets the count remembered by [`remove`](Self::remove).
    /// Returns how many members were not in the pool before (a member listed twice counts
    /// once).
    ///
    /// # Errors
    /// [`PoolError::BadInitialCount`] when `initial > MAX_EXACT_COUNT`,
    /// [`PoolError::EmptyMember`] when a member is empty; the pool is unchanged.
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// assert_eq!(pool.seed(["a", "b"], 5, false)?, 2);
    /// assert_eq!(pool.seed(["b", "c"], 0, false)?, 1);
    /// assert_eq!(pool.count(b"b"), Some(5));
    /// assert_eq!(pool.seed(["b"], 0, true)?, 0);
    /// assert_eq!(pool.count(b"b"), Some(0));
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn seed<I>(&mut self, members: I, initial: u64, overwrite: bool) -> Result<usize, PoolError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        if initial > MAX_EXACT_COUNT {
            return Err(PoolError::BadInitialCount(initial.into()));
        }
        // Checked before the first change: a refused seed changes nothing.
        let members: Vec<I::Item> = members.into_iter().collect();
        if members.iter().any(|m| m.as_ref().is_empty()) {
            return Err(PoolError::EmptyMember);
        }
        let mut fresh: Vec<Vec<u8>> = Vec::new();
        let mut changed = false;
        for member in &members {
            let member = member.as_ref();
            match find(&self.members, member) {
                Ok(i) => {
                    let count = &mut self.members[i].1;
                    if overwrite && *count != initial {
                        *count = initial;
                        changed = true;
                    }
                }
                // Listed twice: both copies land here, and one is dropped below.
                Err(_) => fresh.push(member.to_vec()),
            }
            self.forget(member);
        }
        // Merge the new members, sorted, into the sorted list; drop repeats.
        let mut order: Vec<usize> = (0..fresh.len()).collect();
        heap_sort(&mut order, &|a, b| fresh[a] < fresh[b]);
        let mut added = 0;
        if !order.is_empty() {
            let old = core::mem::take(&mut self.members);
            self.members.reserve(old.len() + order.len());
            let mut old = old.into_iter().peekable();
            for i in order {
                let m = core::mem::take(&mut fresh[i]);
                while let Some(entry) = old.next_if(|(o, _)| *o < m) {
                    self.members.push(entry);
                }
                if self.members.last().is_none_or(|(last, _)| *last != m) {
                    self.members.push((m, initial));
                    added += 1;
                }
            }
            self.members.extend(old);
        }
        if changed || added > 0 {
            self.reorder();
        }
        Ok(added)
    }

    /// Picks the member with the lowest count (ties: the byte-wise smallest member),
    /// increments its count and returns it, as
    /// [`LEAST_USED_SCRIPT`](super::LEAST_USED_SCRIPT) does. `None` when the pool is
    /// empty: make no request then. O(log n).
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// assert_eq!(pool.pick(), None);
    /// pool.seed(["ab", "a"], 0, false)?;
    /// assert_eq!(pool.pick(), Some(b"a".to_vec()));
    /// assert_eq!(pool.pick(), Some(b"ab".to_vec()));
    /// assert_eq!(pool.pick(), Some(b"a".to_vec()));
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn pick(&mut self) -> Option<Vec<u8>> {
        let &top = self.heap.first()?;
        let (member, count) = &mut self.members[top];
        if *count < MAX_EXACT_COUNT {
            *count += 1;
        }
        let chosen = member.clone();
        sift_down(&mut self.heap, 0, &Self::before(&self.members));
        Some(chosen)
    }

    /// `n` picks in a row, as `n` calls of the least-used script; fewer (none) only when
    /// the pool is empty.
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// pool.seed(["a", "b"], 0, false)?;
    /// assert_eq!(pool.pick_many(3), [b"a".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    /// assert!(Pool::new().pick_many(3).is_empty());
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn pick_many(&mut self, n: usize) -> Vec<Vec<u8>> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut picks = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            match self.pick() {
                Some(member) => picks.push(member),
                None => break,
            }
        }
        picks
    }

    /// Takes `member` out of the pool and remembers its count, as
    /// [`REMOVE_SCRIPT`](super::REMOVE_SCRIPT) does. Returns the count remembered, or
    /// `None` (changing nothing) when `member` is not in the pool.
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// pool.seed(["a"], 7, false)?;
    /// assert_eq!(pool.remove(b"a"), Some(7));
    /// assert_eq!(pool.remove(b"a"), None);
    /// assert_eq!(pool.removed_count(b"a"), Some(7));
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn remove(&mut self, member: &[u8]) -> Option<u64> {
        let i = find(&self.members, member).ok()?;
        let (key, count) = self.members.remove(i);
        self.reorder();
        match find(&self.removed, &key) {
            Ok(j) => self.removed[j].1 = count,
            Err(j) => self.removed.insert(j, (key, count)),
        }
        Some(count)
    }

    /// Puts `member` into the pool, as [`RESTORE_SCRIPT`](super::RESTORE_SCRIPT) does,
    /// and returns its count afterwards.
    ///
    /// [`Restore::Keep`] gives it the count remembered by [`remove`](Self::remove) (or, if
    /// none, acts as `AtMinimum`); [`Restore::AtMinimum`] gives it the lowest count in
    /// the pool now, 0 when the pool is empty. A member already in the pool keeps its
    /// count. The remembered count is forgotten either way.
    ///
    /// # Errors
    /// [`PoolError::EmptyMember`] for an empty member; the pool is unchanged.
    ///
    /// ```
    /// use keyroute::select::{Pool, Restore};
    /// let mut pool = Pool::new();
    /// pool.seed(["a", "b"], 0, false)?;
    /// pool.pick_many(6);
    /// assert_eq!(pool.remove(b"a"), Some(3));
    /// pool.pick_many(4);
    /// assert_eq!(pool.restore(b"a", Restore::Keep)?, 3);
    /// assert_eq!(pool.restore(b"c", Restore::Keep)?, 3);
    /// assert!(pool.restore(b"", Restore::Keep).is_err());
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn restore(&mut self, member: &[u8], mode: Restore) -> Result<u64, PoolError> {
        if member.is_empty() {
            return Err(PoolError::EmptyMember);
        }
        let at = find(&self.members, member);
        let remembered = self.forget(member);
        let i = match at {
            Ok(i) => return Ok(self.members[i].1),
            Err(i) => i,
        };
        let remembered = match mode {
            Restore::Keep => remembered,
            Restore::AtMinimum => None,
        };
        let count = remembered.unwrap_or_else(|| self.min_count().unwrap_or(0));
        self.members.insert(i, (member.to_vec(), count));
        self.reorder();
        Ok(count)
    }

    /// The count of `member`, `None` when it is not in the pool.
    ///
    /// ```
    /// assert_eq!(keyroute::select::Pool::new().count(b"a"), None);
    /// ```
    pub fn count(&self, member: &[u8]) -> Option<u64> {
        find(&self.members, member).ok().map(|i| self.members[i].1)
    }

    /// The count remembered for a removed `member`, `None` when nothing is remembered.
    ///
    /// ```
    /// assert_eq!(keyroute::select::Pool::new().removed_count(b"a"), None);
    /// ```
    pub fn removed_count(&self, member: &[u8]) -> Option<u64> {
        find(&self.removed, member).ok().map(|i| self.removed[i].1)
    }

    /// Whether `member` is in the pool.
    ///
    /// ```
    /// assert!(!keyroute::select::Pool::new().contains(b"a"));
    /// ```
    pub fn contains(&self, member: &[u8]) -> bool {
        find(&self.members, member).is_ok()
    }

    /// The lowest count in the pool, `None` when it is empty.
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// pool.seed(["a"], 4, false)?;
    /// assert_eq!(pool.min_count(), Some(4));
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn min_count(&self) -> Option<u64> {
        self.heap.first().map(|&i| self.members[i].1)
    }

    /// `(member, count)` for every member in pick order (count, then member bytes), like
    /// `ZRANGE pool 0 -1 WITHSCORES`. O(n log n).
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// pool.seed(["b", "a"], 0, false)?;
    /// pool.pick();
    /// let counts: Vec<(&[u8], u64)> = pool.counts().collect();
    /// assert_eq!(counts, [(&b"b"[..], 0), (&b"a"[..], 1)]);
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn counts(&self) -> impl ExactSizeIterator<Item = (&[u8], u64)> + '_ {
        let mut order = self.heap.clone();
        heap_sort(&mut order, &Self::before(&self.members));
        order.into_iter().map(|i| {
            let (member, count) = &self.members[i];
            (member.as_slice(), *count)
        })
    }

    /// `(member, count)` remembered for removed members, in member byte order, like
    /// `HGETALL side` sorted.
    ///
    /// ```
    /// use keyroute::select::Pool;
    /// let mut pool = Pool::new();
    /// pool.seed(["a"], 2, false)?;
    /// pool.remove(b"a");
    /// assert_eq!(pool.removed().collect::<Vec<_>>(), [(&b"a"[..], 2)]);
    /// # Ok::<(), keyroute::select::PoolError>(())
    /// ```
    pub fn removed(&self) -> impl ExactSizeIterator<Item = (&[u8], u64)> + '_ {
        self.removed
            .iter()
            .map(|(member, count)| (member.as_slice(), *count))
    }

    /// The number of members in the pool (removed members not included).
    ///
    /// ```
    /// assert_eq!(keyroute::select::Pool::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the pool has no member: [`pick`](Self::pick) returns `None`.
    ///
    /// ```
    /// assert!(keyroute::select::Pool::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// Pools are equal when they hold the same members with the same counts and remember the
/// same removed counts (however their heaps happen to be laid out).
impl PartialEq for Pool {
    fn eq(&self, other: &Self) -> bool {
        self.members == other.members && self.removed == other.removed
    }
}

impl Eq for Pool {}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("counts", &self.members)
            .field("removed", &self.removed)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pool: &Pool) -> Vec<(Vec<u8>, u64)> {
        pool.counts().map(|(m, c)| (m.to_vec(), c)).collect()
    }

    #[test]
    fn ties_go_to_memcmp_order() {
        let mut pool = Pool::new();
        let members: [&[u8]; 5] = [b"b", b"a\xff", b"a", b"\x00", b"A"];
        pool.seed(members, 0, false).expect("seed");
        let picks = pool.pick_many(5);
        let expected: [&[u8]; 5] = [b"\x00", b"A", b"a", b"a\xff", b"b"];
        assert_eq!(picks, expected.map(<[u8]>::to_vec));
    }

    #[test]
    fn empty_members_are_refused_and_change_nothing() {
        let mut pool = Pool::new();
        pool.seed(["a"], 3, false).expect("seed");
        let before = pool.clone();
        assert_eq!(pool.seed(["b", ""], 0, false), Err(PoolError::EmptyMember));
        assert_eq!(
            pool.restore(b"", Restore::Keep),
            Err(PoolError::EmptyMember)
        );
        assert_eq!(counts(&pool), counts(&before));
    }

    #[test]
    fn saturates_at_max_exact_count() {
        let mut pool = Pool::new();
        pool.seed(["a"], MAX_EXACT_COUNT - 1, false).expect("seed");
        pool.pick_many(3);
        assert_eq!(pool.count(b"a"), Some(MAX_EXACT_COUNT));
        assert!(pool.seed(["b"], MAX_EXACT_COUNT + 1, true).is_err());
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn seed_forgets_removed_counts_and_overwrites_in_order() {
        let mut pool = Pool::new();
        pool.seed(["a", "b"], 3, false).expect("seed");
        assert_eq!(pool.remove(b"a"), Some(3));
        assert_eq!(pool.seed(["a"], 0, false), Ok(1));
        assert_eq!(pool.removed_count(b"a"), None);
        assert_eq!(pool.seed(["b", "b"], 1, true), Ok(0));
        assert_eq!(counts(&pool), [(b"a".to_vec(), 0), (b"b".to_vec(), 1)]);
    }

    #[test]
    fn restore_modes() {
        let mut pool = Pool::new();
        assert_eq!(pool.restore(b"x", Restore::Keep), Ok(0));
        assert_eq!(pool.remove(b"x"), Some(0));
        assert!(pool.is_empty());
        assert_eq!(pool.restore(b"x", Restore::AtMinimum), Ok(0));
        pool.seed(["y"], 10, false).expect("seed");
        pool.pick_many(3);
        assert_eq!(pool.counts().len(), 2);
        assert_eq!(pool.remove(b"x"), Some(3));
        assert_eq!(pool.restore(b"x", Restore::AtMinimum), Ok(10));
        assert_eq!(pool.removed().len(), 0);
        assert_eq!(pool.restore(b"x", Restore::Keep), Ok(10));
    }
}

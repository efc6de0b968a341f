//! Grouping keys by slot or by node, for pipelines and multi-key commands.
use alloc::vec::Vec;

use super::{key_slot, NodeIndex, SlotMap, SLOT_COUNT};

/// Keys grouped by slot ([`group_by_slot`]) or by owning node
/// ([`SlotMap::group_by_node`]), as indexes into the caller's key list.
///
/// Groups come in ascending order of their key (slot number, or node index with the
/// unowned group `None` last); inside a group, indexes keep input order, so a pipeline
/// split per node keeps each node's commands in the order the caller issued them.
///
/// Building one allocates a few buffers for the whole batch, never per key; the
/// `regroup_*` methods reuse them.
///
/// ```
/// use keyroute::slot::{group_by_slot, key_slot};
///
/// let keys = ["{u1}:a", "x", "{u1}:b"];
/// let groups = group_by_slot(&keys);
/// let mut seen = Vec::new();
/// for (slot, idx) in groups.iter() {
///     seen.push((slot, idx.to_vec()));
/// }
/// let (u1, x) = (key_slot(b"u1"), key_slot(b"x"));
/// let mut expect = vec![(u1, vec![0, 2]), (x, vec![1])];
/// expect.sort();
/// assert_eq!(seen, expect);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGroups<G> {
    /// Key indexes, grouped.
    indexes: Vec<usize>,
    /// (group key, end of the group in `indexes`).
    groups: Vec<(G, usize)>,
    /// Scratch: the group code of every key.
    codes: Vec<u32>,
    /// Scratch: counting-sort buckets.
    counts: Vec<usize>,
}

impl<G> Default for KeyGroups<G> {
    fn default() -> Self {
        Self {
            indexes: Vec::new(),
            groups: Vec::new(),
            codes: Vec::new(),
            counts: Vec::new(),
        }
    }
}

impl<G: Copy> KeyGroups<G> {
    /// Number of groups.
    #[must_use]
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// `true` if there are no groups (no keys).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Group `i`: its key and the indexes of its keys.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<(G, &[usize])> {
        let &(g, end) = self.groups.get(i)?;
        let start = match i {
            0 => 0,
            _ => self.groups[i - 1].1,
        };
        Some((g, &self.indexes[start..end]))
    }

    /// The groups in order, each with the indexes of its keys.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (G, &[usize])> + '_ {
        let mut start = 0;
        self.groups.iter().map(move |&(g, end)| {
            let idx = &self.indexes[start..end];
            start = end;
            (g, idx)
        })
    }

    /// All key indexes, group after group.
    #[must_use]
    pub fn indexes(&self) -> &[usize] {
        &self.indexes
    }

    /// Groups `n` keys whose group code (< `buckets`) is `code(i)`; `decode` maps a code
    /// back to the group key. Counting sort when buckets are few relative to keys, else
    /// a stable sort: both keep input order inside a group.
    fn fill(
        &mut self,
        n: usize,
        buckets: usize,
        mut code: impl FnMut(usize) -> u32,
        decode: impl Fn(u32) -> G,
    ) {
        self.codes.clear();
        self.codes.extend((0..n).map(&mut code));
        self.indexes.clear();
        self.groups.clear();
        if buckets <= n.saturating_mul(4) {
            self.counts.clear();
            self.counts.resize(buckets, 0);
            for &c in &self.codes {
                self.counts[c as usize] += 1;
            }
            let mut offset = 0;
            for (b, count) in self.counts.iter_mut().enumerate() {
                if *count > 0 {
                    let start = offset;
                    offset += *count;
                    self.groups.push((decode(b as u32), offset));
                    *count = start;
                }
            }
            self.indexes.resize(n, 0);
            for (i, &c) in self.codes.iter().enumerate() {
                let at = &mut self.counts[c as usize];
                self.indexes[*at] = i;
                *at += 1;
            }
        } else {
            self.indexes.extend(0..n);
            let codes = &self.codes;
            self.indexes.sort_by_key(|&i| codes[i]);
            for (pos, &i) in self.indexes.iter().enumerate() {
                let c = codes[i];
                match self.groups.last_mut() {
                    Some((_, end)) if codes[self.indexes[pos - 1]] == c => *end = pos + 1,
                    _ => self.groups.push((decode(c), pos + 1)),
                }
            }
        }
    }
}

impl KeyGroups<u16> {
    /// Regroups `keys` by slot, reusing this value's buffers.
    ///
    /// ```
    /// use keyroute::slot::KeyGroups;
    ///
    /// let mut groups = KeyGroups::default();
    /// for batch in [["a", "b"], ["{a}1", "{a}2"]] {
    ///     groups.regroup_by_slot(&batch);
    ///     assert!(groups.len() <= 2);
    /// }
    /// assert_eq!(groups.len(), 1);
    /// ```
    pub fn regroup_by_slot<K: AsRef<[u8]>>(&mut self, keys: &[K]) {
        self.fill(
            keys.len(),
            usize::from(SLOT_COUNT),
            |i| u32::from(key_slot(keys[i].as_ref())),
            |c| c as u16,
        );
    }
}

impl KeyGroups<Option<NodeIndex>> {
    /// Regroups `keys` by the master owning their slot in `map`, reusing this value's
    /// buffers. Keys of unowned slots form the `None` group, last.
    pub fn regroup_by_node<K: AsRef<[u8]>>(&mut self, map: &SlotMap, keys: &[K]) {
        let none = map.nodes.len() as u32;
        self.fill(
            keys.len(),
            map.nodes.len() + 1,
            |i| {
                map.owner_of_key(keys[i].as_ref())
                    .map_or(none, |n| u32::from(n.0))
            },
            |c| (c != none).then_some(NodeIndex(c as u16)),
        );
    }
}

/// Groups `keys` by slot: one group per distinct slot, ascending, each with the indexes
/// of its keys in input order. A multi-key command (`MGET`, `MSET`, `DEL`) must be split
/// along these groups.
///
/// ```
/// use keyroute::slot::group_by_slot;
///
/// let groups = group_by_slot(&["{a}1", "{b}", "{a}2"]);
/// assert_eq!(groups.len(), 2);
/// assert!(groups.iter().any(|(_, idx)| idx == [0, 2]));
/// ```
#[must_use]
pub fn group_by_slot<K: AsRef<[u8]>>(keys: &[K]) -> KeyGroups<u16> {
    let mut g = KeyGroups::default();
    g.regroup_by_slot(keys);
    g
}

impl SlotMap {
    /// Groups `keys` by the master owning their slot: one group per node, ascending by
    /// index, each with the indexes of its keys in input order; keys of unowned slots
    /// form a last group with `None`. Use it to split a pipeline per connection.
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// let b = map.add_master("b", Address::new("h", 2))?;
    /// map.assign(0..=8191, a)?;
    /// map.assign(8192..=16383, b)?;
    /// // slots: foo 12182, bar 5061, baz 4813
    /// let groups = map.group_by_node(&["foo", "bar", "baz"]);
    /// let got: Vec<_> = groups.iter().map(|(n, idx)| (n, idx.to_vec())).collect();
    /// assert_eq!(got, [(Some(a), vec![1, 2]), (Some(b), vec![0])]);
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    #[must_use]
    pub fn group_by_node<K: AsRef<[u8]>>(&self, keys: &[K]) -> KeyGroups<Option<NodeIndex>> {
        let mut g = KeyGroups::default();
        g.regroup_by_node(self, keys);
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::Address;
    use alloc::{format, string::String, vec};

    fn check_slot_groups(keys: &[String]) {
        let g = group_by_slot(keys);
        let mut seen = vec![false; keys.len()];
        let mut last = None;
        for (slot, idx) in g.iter() {
            assert!(last < Some(slot), "groups ascending");
            last = Some(slot);
            assert!(!idx.is_empty());
            assert!(idx.windows(2).all(|w| w[0] < w[1]), "input order kept");
            for &i in idx {
                assert_eq!(key_slot(keys[i].as_bytes()), slot);
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(g.indexes().len(), keys.len());
        for i in 0..g.len() {
            assert_eq!(g.get(i), g.iter().nth(i));
        }
        assert_eq!(g.get(g.len()), None);
    }

    #[test]
    fn slot_groups_both_strategies() {
        // Few keys: sort path; many keys: counting-sort path.
        for n in [0, 1, 5, 100, 5000, 20000] {
            let keys: Vec<String> = (0..n).map(|i| format!("{{k{}}}:{i}", i % 37)).collect();
            check_slot_groups(&keys);
        }
    }

    #[test]
    fn node_groups() {
        let mut map = SlotMap::new();
        let a = map.add_master("a", Address::new("h", 1)).expect("add");
        map.assign(0..=8191, a).expect("assign");
        let keys: Vec<String> = (0..50).map(|i| format!("key{i}")).collect();
        let g = map.group_by_node(&keys);
        assert!(g.len() <= 2);
        let mut total = 0;
        for (node, idx) in g.iter() {
            total += idx.len();
            for &i in idx {
                assert_eq!(map.owner_of_key(keys[i].as_bytes()), node);
            }
        }
        assert_eq!(total, 50);
        assert_eq!(g.iter().last().map(|(n, _)| n), Some(None));
    }
}

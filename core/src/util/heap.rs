//! A binary min-heap of indexes, ordered by a caller's comparison given as a trait object,
//! so that one copy of the code serves every order: the in-memory pool keeps its pick
//! order with it (`select/pool.rs`), and it sorts the pool's and the slot plan's lists.

/// "`a` comes before `b`" for two indexes, given to the heap helpers below as a trait
/// object so that one copy of them serves every order.
pub(crate) type Before<'a> = &'a dyn Fn(usize, usize) -> bool;

/// Moves `v[i]` down until no child comes `before` it: restores a min-heap whose only
/// fault is at `i`.
pub(crate) fn sift_down(v: &mut [usize], mut i: usize, before: Before<'_>) {
    loop {
        let mut child = 2 * i + 1;
        if child >= v.len() {
            return;
        }
        if child + 1 < v.len() && before(v[child + 1], v[child]) {
            child += 1;
        }
        if !before(v[child], v[i]) {
            return;
        }
        v.swap(i, child);
        i = child;
    }
}

/// Makes `v` a min-heap by `before` (O(n)).
pub(crate) fn heapify(v: &mut [usize], before: Before<'_>) {
    for i in (0..v.len() / 2).rev() {
        sift_down(v, i, before);
    }
}

/// Sorts `v` by `before` (heapsort: no sort code beyond the heap's own; the pool model and
/// the slot plan sort with it).
pub(crate) fn heap_sort(v: &mut [usize], before: Before<'_>) {
    heapify(v, before);
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift_down(&mut v[..end], 0, before);
    }
    // A min-heap pops the smallest to the back: the order is now descending.
    v.reverse();
}

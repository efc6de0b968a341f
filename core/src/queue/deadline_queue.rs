//! [`DeadlineQueue`]: fixed capacity, ordered by priority, deadline, arrival; per-class
//! heaps so that capped classes can be skipped.

use alloc::vec::Vec;
use core::fmt;

use super::full::Full;
use super::popped::Popped;

struct Slot<T> {
    item: T,
    priority: u8,
    deadline: u64,
    seq: u64,
}

/// A fixed-capacity queue of items with a priority, a deadline (ms, the caller's clock)
/// and a class. See the [module docs](super).
///
/// Memory: `capacity` slots of `T` plus `(classes + 1) × capacity` 32-bit indexes, all
/// taken by [`new`](Self::new); no call allocates afterwards.
///
/// ```
/// use keyroute::queue::{DeadlineQueue, Popped};
/// // Two classes: 0 (uncapped) and 1 (a capped kind).
/// let mut q = DeadlineQueue::new(8, 2);
/// q.push("capped", 5, 100, 1, 0, |_, _| {}).unwrap();
/// q.push("free", 1, 100, 0, 0, |_, _| {}).unwrap();
/// // Class 1 is at its cap: the lower-priority item of class 0 runs first.
/// assert_eq!(q.pop(0, |class| class != 1), Some(Popped::Run { item: "free", class: 0 }));
/// assert_eq!(q.pop(0, |class| class != 1), None);
/// assert_eq!(q.pop(0, |_| true), Some(Popped::Run { item: "capped", class: 1 }));
/// ```
pub struct DeadlineQueue<T> {
    slots: Vec<Option<Slot<T>>>,
    free: Vec<u32>,
    heaps: Vec<Vec<u32>>,
    seq: u64,
    len: usize,
}

impl<T> fmt::Debug for DeadlineQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadlineQueue")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .field("classes", &self.heaps.len())
            .finish()
    }
}

impl<T> DeadlineQueue<T> {
    /// A queue of `capacity` items (at most `u32::MAX`) in `classes` classes (at least 1),
    /// allocated now.
    ///
    /// ```
    /// let q = keyroute::queue::DeadlineQueue::<u8>::new(3000, 4);
    /// assert_eq!((q.capacity(), q.classes(), q.len()), (3000, 4, 0));
    /// ```
    pub fn new(capacity: usize, classes: usize) -> DeadlineQueue<T> {
        let capacity = capacity.min(u32::MAX as usize);
        let classes = classes.max(1);
        let mut slots = Vec::with_capacity(capacity);
        slots.resize_with(capacity, || None);
        // Popped from the end: slot 0 is used first.
        let free = (0..capacity as u32).rev().collect();
        let heaps = (0..classes).map(|_| Vec::with_capacity(capacity)).collect();
        DeadlineQueue {
            slots,
            free,
            heaps,
            seq: 0,
            len: 0,
        }
    }

    /// How many items it holds at most.
    ///
    /// ```
    /// assert_eq!(keyroute::queue::DeadlineQueue::<()>::new(5, 1).capacity(), 5);
    /// ```
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many classes it has.
    ///
    /// ```
    /// assert_eq!(keyroute::queue::DeadlineQueue::<()>::new(5, 0).classes(), 1);
    /// ```
    pub fn classes(&self) -> usize {
        self.heaps.len()
    }

    /// How many items it holds.
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(5, 1);
    /// q.push((), 0, 9, 0, 0, |_, _| {}).unwrap();
    /// assert_eq!(q.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    ///
    /// ```
    /// assert!(keyroute::queue::DeadlineQueue::<()>::new(5, 1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every slot is taken (expired items included).
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(1, 1);
    /// q.push((), 0, 9, 0, 0, |_, _| {}).unwrap();
    /// assert!(q.is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// How many items of `class` it holds (0 for a class out of range).
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(4, 2);
    /// q.push((), 0, 9, 1, 0, |_, _| {}).unwrap();
    /// assert_eq!((q.class_len(0), q.class_len(1), q.class_len(7)), (0, 1, 0));
    /// ```
    pub fn class_len(&self, class: usize) -> usize {
        self.heaps.get(class).map_or(0, Vec::len)
    }

    /// Adds `item` with its `priority` (higher first), `deadline` (ms; the item expires
    /// once `now >= deadline`) and `class` (a class out of range counts as the last one).
    /// When the queue is full, the expired items are purged first (each handed to
    /// `on_expired` with its class).
    ///
    /// # Errors
    /// [`Full`] with the item when there is still no room.
    ///
    /// ```
    /// use keyroute::queue::{DeadlineQueue, Full};
    /// let mut q = DeadlineQueue::new(1, 1);
    /// q.push("old", 0, 50, 0, 0, |_, _| {}).unwrap();
    /// let mut expired = Vec::new();
    /// // At t=60 "old" has expired: it is purged to make room.
    /// q.push("new", 0, 500, 0, 60, |item, _| expired.push(item)).unwrap();
    /// assert_eq!(expired, ["old"]);
    /// assert_eq!(q.push("more", 0, 500, 0, 60, |_, _| {}), Err(Full("more")));
    /// ```
    pub fn push(
        &mut self,
        item: T,
        priority: u8,
        deadline: u64,
        class: usize,
        now: u64,
        on_expired: impl FnMut(T, usize),
    ) -> Result<(), Full<T>> {
        if self.free.is_empty() {
            self.purge_expired(now, on_expired);
        }
        let Some(index) = self.free.pop() else {
            return Err(Full(item));
        };
        let class = class.min(self.heaps.len() - 1);
        self.seq += 1;
        self.slots[index as usize] = Some(Slot {
            item,
            priority,
            deadline,
            seq: self.seq,
        });
        let heap = &mut self.heaps[class];
        heap.push(index);
        let at = heap.len() - 1;
        sift_up(&self.slots, heap, at);
        self.len += 1;
        Ok(())
    }

    /// Takes the next item out:
    /// * an expired item at the head of any class first, as [`Popped::Expired`];
    /// * else the best item (priority, deadline, arrival) among the classes for which
    ///   `allowed(class)` is true, as [`Popped::Run`];
    /// * `None` when nothing may run now.
    ///
    /// An expired item deeper in a class comes out when it reaches the head, or through
    /// [`purge_expired`](Self::purge_expired); it is never handed out as `Run`.
    ///
    /// ```
    /// use keyroute::queue::{DeadlineQueue, Popped};
    /// let mut q = DeadlineQueue::new(4, 1);
    /// q.push('a', 1, 100, 0, 0, |_, _| {}).unwrap();
    /// q.push('b', 1, 50, 0, 0, |_, _| {}).unwrap();
    /// q.push('c', 1, 50, 0, 0, |_, _| {}).unwrap();
    /// let order: Vec<char> = std::iter::from_fn(|| q.pop(0, |_| true)).map(Popped::into_item).collect();
    /// assert_eq!(order, ['b', 'c', 'a']);
    /// ```
    pub fn pop(&mut self, now: u64, mut allowed: impl FnMut(usize) -> bool) -> Option<Popped<T>> {
        let mut best: Option<usize> = None;
        for class in 0..self.heaps.len() {
            let Some(&top) = self.heaps[class].first() else {
                continue;
            };
            let slot = self.slots[top as usize].as_ref()?;
            if slot.deadline <= now {
                let item = self.remove_top(class);
                return Some(Popped::Expired { item, class });
            }
            if !allowed(class) {
                continue;
            }
            best = match best {
                Some(b) if !self.better(top, self.heaps[b][0]) => Some(b),
                _ => Some(class),
            };
        }
        let class = best?;
        let item = self.remove_top(class);
        Some(Popped::Run { item, class })
    }

    /// Removes every expired item (`now >= deadline`), handing each to `on_expired` with
    /// its class; how many there were.
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(4, 1);
    /// q.push(1, 9, 10, 0, 0, |_, _| {}).unwrap();
    /// q.push(2, 0, 99, 0, 0, |_, _| {}).unwrap();
    /// let mut gone = Vec::new();
    /// assert_eq!(q.purge_expired(20, |item, _| gone.push(item)), 1);
    /// assert_eq!((gone, q.len()), (vec![1], 1));
    /// ```
    pub fn purge_expired(&mut self, now: u64, mut on_expired: impl FnMut(T, usize)) -> usize {
        let mut count = 0;
        for class in 0..self.heaps.len() {
            let mut heap = core::mem::take(&mut self.heaps[class]);
            let mut i = 0;
            let before = heap.len();
            while i < heap.len() {
                let index = heap[i];
                let expired = self.slots[index as usize]
                    .as_ref()
                    .is_some_and(|s| s.deadline <= now);
                if expired {
                    heap.swap_remove(i);
                    if let Some(slot) = self.take(index) {
                        on_expired(slot.item, class);
                        count += 1;
                    }
                } else {
                    i += 1;
                }
            }
            if heap.len() != before {
                heapify(&self.slots, &mut heap);
            }
            self.heaps[class] = heap;
        }
        count
    }

    /// The earliest deadline of any item (to know when to purge next).
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(4, 2);
    /// assert_eq!(q.next_deadline(), None);
    /// q.push((), 0, 70, 0, 0, |_, _| {}).unwrap();
    /// q.push((), 9, 30, 1, 0, |_, _| {}).unwrap();
    /// assert_eq!(q.next_deadline(), Some(30));
    /// ```
    pub fn next_deadline(&self) -> Option<u64> {
        self.heaps
            .iter()
            .flatten()
            .filter_map(|&i| self.slots[i as usize].as_ref().map(|s| s.deadline))
            .min()
    }

    /// Takes every item out, best first within each class (to answer them at shutdown).
    ///
    /// ```
    /// let mut q = keyroute::queue::DeadlineQueue::new(4, 1);
    /// q.push('x', 0, 70, 0, 0, |_, _| {}).unwrap();
    /// let mut left = Vec::new();
    /// q.drain(|item, _| left.push(item));
    /// assert_eq!((left, q.len()), (vec!['x'], 0));
    /// ```
    pub fn drain(&mut self, mut f: impl FnMut(T, usize)) {
        for class in 0..self.heaps.len() {
            while !self.heaps[class].is_empty() {
                let item = self.remove_top(class);
                f(item, class);
            }
        }
    }

    fn better(&self, a: u32, b: u32) -> bool {
        better(&self.slots, a, b)
    }

    fn take(&mut self, index: u32) -> Option<Slot<T>> {
        let slot = self.slots[index as usize].take()?;
        self.free.push(index);
        self.len -= 1;
        Some(slot)
    }

    /// Removes the head of a non-empty class.
    fn remove_top(&mut self, class: usize) -> T {
        let heap = &mut self.heaps[class];
        let top = heap.swap_remove(0);
        if !heap.is_empty() {
            sift_down(&self.slots, heap, 0);
        }
        match self.take(top) {
            Some(slot) => slot.item,
            // Every index in a heap names a full slot.
            None => unreachable!("queue heap names an empty slot"),
        }
    }
}

/// Whether slot `a` goes before slot `b`: priority desc, deadline asc, arrival asc.
fn better<T>(slots: &[Option<Slot<T>>], a: u32, b: u32) -> bool {
    match (&slots[a as usize], &slots[b as usize]) {
        (Some(a), Some(b)) => {
            a.priority > b.priority
                || (a.priority == b.priority && (a.deadline, a.seq) < (b.deadline, b.seq))
        }
        _ => false,
    }
}

fn sift_up<T>(slots: &[Option<Slot<T>>], heap: &mut [u32], mut at: usize) {
    while at > 0 {
        let parent = (at - 1) / 2;
        if better(slots, heap[at], heap[parent]) {
            heap.swap(at, parent);
            at = parent;
        } else {
            break;
        }
    }
}

fn sift_down<T>(slots: &[Option<Slot<T>>], heap: &mut [u32], mut at: usize) {
    loop {
        let left = 2 * at + 1;
        let right = left + 1;
        let mut best = at;
        if left < heap.len() && better(slots, heap[left], heap[best]) {
            best = left;
        }
        if right < heap.len() && better(slots, heap[right], heap[best]) {
            best = right;
        }
        if best == at {
            return;
        }
        heap.swap(at, best);
        at = best;
    }
}

fn heapify<T>(slots: &[Option<Slot<T>>], heap: &mut [u32]) {
    for at in (0..heap.len() / 2).rev() {
        sift_down(slots, heap, at);
    }
}

//! [`Popped`]: what [`DeadlineQueue::pop`](super::DeadlineQueue::pop) hands back.

/// An item taken out of the queue.
///
/// ```
/// use keyroute::queue::Popped;
/// let p = Popped::Expired { item: 1, class: 0 };
/// assert_eq!(p.into_item(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Popped<T> {
    /// Run it: its deadline has not passed and its class is under its cap.
    Run {
        /// The item.
        item: T,
        /// Its class.
        class: usize,
    },
    /// Its deadline passed while it waited: answer it, never run it.
    Expired {
        /// The item.
        item: T,
        /// Its class.
        class: usize,
    },
}

impl<T> Popped<T> {
    /// The item, whichever way it came out.
    ///
    /// ```
    /// use keyroute::queue::Popped;
    /// assert_eq!(Popped::Run { item: "a", class: 2 }.into_item(), "a");
    /// ```
    pub fn into_item(self) -> T {
        match self {
            Popped::Run { item, .. } | Popped::Expired { item, .. } => item,
        }
    }
}

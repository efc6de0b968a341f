//! [`Full`]: a push refused because the queue has no room.

use core::fmt;

/// The queue was full (after purging expired items); the item is handed back.
///
/// ```
/// use keyroute::queue::{DeadlineQueue, Full};
/// let mut q = DeadlineQueue::new(0, 1);
/// assert_eq!(q.push(7, 0, 10, 0, 0, |_, _| {}), Err(Full(7)));
/// assert_eq!(Full(7).to_string(), "the queue is full");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full<T>(pub T);

impl<T> fmt::Display for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the queue is full")
    }
}

impl<T: fmt::Debug> core::error::Error for Full<T> {}

//! [`DeadlineQueue`]: a fixed-capacity priority queue of requests with deadlines, the
//! queue of `keyroute serve` (pure: it keeps no clock; the caller passes `now` in ms).
//!
//! * All memory is taken when it is made; nothing grows afterwards.
//! * Order: priority (higher first), then deadline (earlier first), then arrival.
//! * An item whose deadline has passed is handed back as [`Popped::Expired`], never as
//!   [`Popped::Run`]: it must be answered "expired", not run.
//! * A push into a full queue first purges the expired items (handing each back), then
//!   refuses with [`Full`] if there is still no room.
//! * Items belong to classes (for per-kind caps): [`pop`](DeadlineQueue::pop) skips the
//!   classes the caller says are at their cap.
//! * Every item pushed comes out exactly once: run, expired, or drained.
//!
//! ```
//! use keyroute::queue::{DeadlineQueue, Popped};
//! let mut q = DeadlineQueue::new(2, 1);
//! q.push("low", 0, 1_000, 0, 0, |_, _| {})?;
//! q.push("high", 9, 5_000, 0, 0, |_, _| {})?;
//! assert!(q.push("no room", 0, 1_000, 0, 0, |_, _| {}).is_err());
//! assert_eq!(q.pop(10, |_| true), Some(Popped::Run { item: "high", class: 0 }));
//! assert_eq!(q.pop(2_000, |_| true), Some(Popped::Expired { item: "low", class: 0 }));
//! assert_eq!(q.pop(2_000, |_| true), None);
//! # Ok::<(), keyroute::queue::Full<&str>>(())
//! ```

mod deadline_queue;
mod full;
mod popped;

pub use deadline_queue::DeadlineQueue;
pub use full::Full;
pub use popped::Popped;

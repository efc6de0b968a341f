//! Helpers several of core's modules share; `util` sits below all of them and uses none.

#[cfg(feature = "alloc")]
mod heap;

#[cfg(feature = "alloc")]
pub(crate) use heap::{heap_sort, heapify, sift_down};

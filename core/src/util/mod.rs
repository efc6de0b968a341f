//! Helpers several of core's modules share, without `std`; `util` sits below all of them
//! and uses none.

#[cfg(all(feature = "alloc", any(feature = "fleet", test)))]
mod decimal;
#[cfg(feature = "alloc")]
mod heap;
#[cfg(feature = "alloc")]
mod ln;
#[cfg(feature = "alloc")]
mod names;

#[cfg(all(feature = "alloc", any(feature = "fleet", test)))]
pub(crate) use decimal::push_decimal;
#[cfg(feature = "alloc")]
pub(crate) use heap::{heap_sort, heapify, sift_down};
#[cfg(feature = "alloc")]
pub(crate) use ln::ln;
#[cfg(feature = "alloc")]
pub(crate) use names::{join, joined_len, same_name, utf8};

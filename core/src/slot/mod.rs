//! Redis Cluster hash slots: the hash tag, CRC16, the slot map, redirects and resharding
//! plans.
//!
//! One file per concept:
//!
//! | file | concept |
//! |---|---|
//! | `crc16.rs` | [`crc16_xmodem`]: CRC-16/XMODEM by the fastest path this CPU has; [`Crc16Path`] |
//! | `crc16_table.rs` | the slice-by-16 table path (tables built at compile time, or on first use with `small-crc16`) |
//! | `crc16_clmul.rs` | the same by PCLMULQDQ / VPCLMULQDQ folding for long inputs (x86_64, detected at run time) |
//! | `tag.rs` | [`hash_tag`]: the part of a key that is hashed |
//! | `keyslot.rs` | [`key_slot`], [`key_slots`] / [`key_slots_from`] (batch; short keys in registers with VPCLMULQDQ), [`single_slot`] |
//! | `address.rs` | [`split_host_port`], [`Address`] (IPv6 splits on the last `:`) |
//! | `redirect.rs` | [`Redirect`]: `MOVED`/`ASK` parsing; [`SlotMap::apply_redirect`] |
//! | `node.rs` | [`Node`], [`NodeIndex`], [`Role`], [`Health`] |
//! | `map.rs` | [`SlotMap`]: 16384 slots → master |
//! | `cluster_shards.rs` | [`SlotMap::from_shards`] from a parsed `CLUSTER SHARDS` reply |
//! | `cluster_slots.rs` | [`SlotMap::from_slots`] from a parsed `CLUSTER SLOTS` reply |
//! | `group.rs` | [`group_by_slot`], [`SlotMap::group_by_node`] for pipelines |
//! | `plan.rs` | [`Plan`]: the fewest slot moves to reach target weights |
//!
//! Hashing, tags, batch slots and redirect parsing need no allocator; everything from the
//! slot map on needs the `alloc` feature.
//!
//! ```
//! use keyroute::slot::{key_slot, hash_tag};
//!
//! assert_eq!(hash_tag(b"{user:1}:cart"), b"user:1");
//! assert_eq!(key_slot(b"{user:1}:cart"), key_slot(b"user:1"));
//! ```

/// Number of hash slots in a Redis Cluster.
pub const SLOT_COUNT: u16 = 16384;

mod address;
mod crc16;
#[cfg(target_arch = "x86_64")]
mod crc16_clmul;
mod crc16_table;
mod keyslot;
mod redirect;
mod tag;

pub use address::{split_host_port, AddressError};
pub use crc16::{crc16_xmodem, crc16_xmodem_update, crc16_xmodem_with, Crc16Path};
pub use keyslot::{
    key_slot, key_slot_with, key_slots, key_slots_from, key_slots_with, single_slot, BatchError,
};
pub use redirect::{Redirect, RedirectError, RedirectKind};
pub use tag::hash_tag;

#[cfg(feature = "alloc")]
mod cluster_shards;
#[cfg(feature = "alloc")]
mod cluster_slots;
#[cfg(feature = "alloc")]
mod group;
#[cfg(feature = "alloc")]
mod map;
#[cfg(feature = "alloc")]
mod node;
#[cfg(feature = "alloc")]
mod plan;

#[cfg(feature = "alloc")]
pub use {
    address::Address,
    cluster_shards::{Shard, ShardNode},
    cluster_slots::{SlotsEntry, SlotsNode},
    group::{group_by_slot, KeyGroups},
    keyslot::key_slots_vec,
    map::{MapError, SlotMap, SlotRange},
    node::{Health, Node, NodeIndex, Role},
    plan::{Move, Plan, PlanError, Target},
    redirect::RedirectAction,
};

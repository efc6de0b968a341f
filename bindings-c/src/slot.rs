//! Redis Cluster slots (`keyroute::slot`): key slots and hash tags, slot maps, and
//! `MOVED`/`ASK` redirections.

use std::ffi::{c_char, CString};

use keyroute_core::error::ErrorCode;
use keyroute_core::slot::{
    self, Address, NodeIndex, Redirect, RedirectAction, RedirectKind, Role, SlotMap,
};

use crate::ffi::{
    array_mut, bytes, free, get, get_mut, guard, guard_or, hand_out, out_of_range, put, required,
    tag, text, ByteList, Fail, Handle, Packed, Res,
};
use crate::status::keyroute_status;

/// Number of Redis Cluster hash slots.
pub const KEYROUTE_SLOT_COUNT: u16 = 16384;
/// Returned by `keyroute_key_slot()` for a NULL key with a non-zero length (never a slot).
pub const KEYROUTE_NO_SLOT: u16 = 0xFFFF;

/// The Redis Cluster hash slot of `key` (0..=16383): CRC16/XMODEM of its hash tag (the
/// bytes between the first `{` and the next `}`, if non-empty) or of the whole key.
/// Returns `KEYROUTE_NO_SLOT` if `key` is NULL and `len` is not 0 (the message is
/// recorded). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_key_slot(key: *const u8, len: usize) -> u16 {
    guard_or(KEYROUTE_NO_SLOT, || {
        // SAFETY: `len` readable bytes at `key` (documented contract).
        Ok(slot::key_slot(unsafe { bytes(key, len, "key") }?))
    })
}

/// The slots of `count` keys: `slots_out[i]` = slot of `(keys[i], lens[i])`.
/// `keys`, `lens` and `slots_out` may be NULL only when `count` is 0; `keys[i]` may be
/// NULL only when `lens[i]` is 0 (else `KEYROUTE_NULL_ARGUMENT`, nothing written); a
/// `count` above `KEYROUTE_MAX_BATCH` is `KEYROUTE_TOO_LARGE`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_key_slots(
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
    slots_out: *mut u16,
) -> keyroute_status {
    guard(|| {
        // SAFETY: arrays of `count` entries (documented contract).
        let (keys, out) = unsafe {
            (
                ByteList::new(keys, lens, count, "keys")?,
                array_mut(slots_out, count, "slots_out")?,
            )
        };
        // `out` holds exactly `count` entries: this cannot fail.
        let _ = slot::key_slots_from(keys.iter(), out);
        Ok(())
    })
}

/// The slots of `count` keys stored back to back in `data` (`data_len` bytes, at most
/// 2^30): key `i` is `data[ends[i - 1]..ends[i]]` (key 0 starts at 0), and
/// `slots_out[i]` gets its slot. One contiguous buffer instead of a pointer per key: what
/// a binding that copies its keys once hands over (Java's `Slots.keySlots`).
/// `KEYROUTE_OUT_OF_RANGE` when an end goes down or past `data_len`; otherwise as
/// `keyroute_key_slots()`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_key_slots_packed(
    data: *const u8,
    data_len: usize,
    ends: *const u32,
    count: usize,
    slots_out: *mut u16,
) -> keyroute_status {
    guard(|| {
        // SAFETY: `data_len` bytes and `count` entries (documented contract).
        let (keys, out) = unsafe {
            (
                Packed::new(data, data_len, ends, count, "keys")?,
                array_mut(slots_out, count, "slots_out")?,
            )
        };
        // `out` holds exactly `count` entries: this cannot fail.
        let _ = slot::key_slots_from(keys.iter(), out);
        Ok(())
    })
}

/// The hash tag of `key`: the part that is hashed for its slot, as an offset and length
/// into `key` (the whole key when it has no non-empty `{...}` tag). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_hash_tag(
    key: *const u8,
    len: usize,
    offset_out: *mut usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: `len` readable bytes at `key` (documented contract).
        let k = unsafe { bytes(key, len, "key") }?;
        let offset_out = required(offset_out, "offset_out")?;
        let len_out = required(len_out, "len_out")?;
        let tag = slot::hash_tag(k);
        let offset = if tag.is_empty() {
            0
        } else {
            tag.as_ptr() as usize - k.as_ptr() as usize
        };
        // SAFETY: non-NULL out-pointers.
        unsafe {
            offset_out.write(offset);
            len_out.write(tag.len());
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Slot maps

/// A Redis Cluster slot map (opaque): 16384 slots -> master, and the known nodes (id,
/// address, role). Nodes are numbered 0..len in the order they are added.
///
/// Thread safety: as `keyroute_ring`: concurrent reads (`_owner*`, `_node`, `_len`,
/// `_slot_count`, `_is_complete`, `keyroute_plan_new`) are safe; modifying calls
/// (`_add_*`, `_assign`, `_unassign`, `_apply_redirect`, `keyroute_plan_apply`) and `_free`
/// need exclusive access.
#[derive(Debug)]
pub struct keyroute_slot_map {
    _opaque: [u8; 0],
}

/// What a `keyroute_slot_map` holds.
#[derive(Debug)]
pub(crate) struct MapState {
    pub(crate) map: SlotMap,
    /// NUL-terminated (id, host) of every node, in index order.
    names: Vec<(CString, CString)>,
}

impl Handle for keyroute_slot_map {
    type State = MapState;
    const TAG: u64 = tag(b"kr-slots");
    const NAME: &'static str = "keyroute_slot_map";
}

impl MapState {
    fn sync_names(&mut self) {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        self.names = self
            .map
            .nodes()
            .iter()
            .map(|n| (c(n.id()), c(&n.addr().host)))
            .collect();
    }

    /// Node `i` of the map, or `KEYROUTE_UNKNOWN_NODE`.
    pub(crate) fn index(&self, i: usize) -> Res<NodeIndex> {
        self.map.node_index(i).ok_or_else(|| {
            Fail::new(
                ErrorCode::UnknownNode,
                format!(
                    "node {i} is not in this slot map (it has {} nodes); use an index this map returned",
                    self.map.nodes().len()
                ),
            )
        })
    }
}

/// `SIZE_MAX` for no node.
fn index_or_max(n: Option<NodeIndex>) -> usize {
    n.map_or(usize::MAX, NodeIndex::get)
}

/// Makes an empty slot map (no nodes, every slot unowned) and writes it to `*out`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_new(
    out: *mut *mut keyroute_slot_map,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let state = MapState {
            map: SlotMap::new(),
            names: Vec::new(),
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, state) };
        Ok(())
    })
}

/// Frees a slot map (as `keyroute_ring_free()`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_free(map: *mut keyroute_slot_map) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(map, "map") }
}

/// Adds a master (`master` = None) or a replica.
///
/// # Safety
/// As the exports that call it.
unsafe fn add_node(
    map: *mut keyroute_slot_map,
    master: Option<usize>,
    id: *const c_char,
    host: *const c_char,
    port: i64,
    index_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a map used exclusively; NUL-terminated strings (documented).
        let (m, id, host) = unsafe { (get_mut(map, "map")?, text(id, "id")?, text(host, "host")?) };
        let addr = Address::checked(host, port.into())?;
        let res = match master {
            None => m.map.add_master(id, addr),
            Some(i) => {
                let ix = m.index(i)?;
                m.map.add_replica(ix, id, addr)
            }
        };
        m.sync_names();
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(index_out, res?.get()) };
        Ok(())
    })
}

/// Adds a master with cluster node id `id` (`""` if unknown; non-empty ids are unique)
/// at `host:port` (`host` non-empty, IPv6 with or without brackets; `port` 1..=65535),
/// owning no slots yet; its index is written to `*index_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_UTF8`,
/// `KEYROUTE_BAD_ADDRESS` (empty host, unbalanced brackets), `KEYROUTE_BAD_PORT`,
/// `KEYROUTE_DUPLICATE_NODE` (the id), `KEYROUTE_TOO_MANY_NODES` (65535).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_add_master(
    map: *mut keyroute_slot_map,
    id: *const c_char,
    host: *const c_char,
    port: i64,
    index_out: *mut usize,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { add_node(map, None, id, host, port, index_out) }
}

/// Adds a replica of master `master` (an index). Errors as
/// `keyroute_slot_map_add_master()`, plus `KEYROUTE_UNKNOWN_NODE` and
/// `KEYROUTE_NOT_A_MASTER`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_add_replica(
    map: *mut keyroute_slot_map,
    master: usize,
    id: *const c_char,
    host: *const c_char,
    port: i64,
    index_out: *mut usize,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { add_node(map, Some(master), id, host, port, index_out) }
}

/// Gives slots `first..=last` to master `node`. Errors: `KEYROUTE_BAD_RANGE`,
/// `KEYROUTE_UNKNOWN_NODE`, `KEYROUTE_NOT_A_MASTER` (nothing changes).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_assign(
    map: *mut keyroute_slot_map,
    first: u16,
    last: u16,
    node: usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a map used exclusively.
        let m = unsafe { get_mut(map, "map") }?;
        let ix = m.index(node)?;
        Ok(m.map.assign(first..=last, ix)?)
    })
}

/// Makes slots `first..=last` unowned. Errors: `KEYROUTE_BAD_RANGE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_unassign(
    map: *mut keyroute_slot_map,
    first: u16,
    last: u16,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a map used exclusively.
        let m = unsafe { get_mut(map, "map") }?;
        Ok(m.map.unassign(first..=last)?)
    })
}

/// The index of the master owning `slot`, written to `*index_out`. Returns
/// `KEYROUTE_EMPTY` when the slot is unowned, `KEYROUTE_BAD_SLOT` for `slot >= 16384`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_owner(
    map: *const keyroute_slot_map,
    slot: u16,
    index_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live map.
        let m = unsafe { get(map, "map") }?;
        let index_out = required(index_out, "index_out")?;
        if slot >= KEYROUTE_SLOT_COUNT {
            return Err(Fail::new(
                ErrorCode::BadSlot,
                format!("slot {slot} is above 16383; slots are 0..=16383"),
            ));
        }
        let owner = m.map.owner(slot).ok_or(Fail::EMPTY)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { index_out.write(owner.get()) };
        Ok(())
    })
}

/// The index of the master owning `key`'s slot, written to `*index_out`; the slot to
/// `*slot_out` if not NULL. Returns `KEYROUTE_EMPTY` when that slot is unowned.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_owner_of_key(
    map: *const keyroute_slot_map,
    key: *const u8,
    len: usize,
    index_out: *mut usize,
    slot_out: *mut u16,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live map; `len` bytes at `key`.
        let (m, k) = unsafe { (get(map, "map")?, bytes(key, len, "key")?) };
        let index_out = required(index_out, "index_out")?;
        let slot = slot::key_slot(k);
        let owner = m.map.owner(slot).ok_or(Fail::EMPTY)?;
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            index_out.write(owner.get());
            put(slot_out, slot);
        }
        Ok(())
    })
}

/// Node `index`: its NUL-terminated id (`""` if unknown) and host, port, whether it is a
/// master (1) or replica (0), and its master's index (`SIZE_MAX` for a master). Every
/// out-pointer may be NULL. Strings stay valid until the map is next modified or freed.
/// Returns `KEYROUTE_OUT_OF_RANGE` for an index >= len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_node(
    map: *const keyroute_slot_map,
    index: usize,
    id_out: *mut *const c_char,
    host_out: *mut *const c_char,
    port_out: *mut u16,
    is_master_out: *mut i32,
    master_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live map.
        let m = unsafe { get(map, "map") }?;
        let (Some(node), Some((id, host))) = (m.map.nodes().get(index), m.names.get(index)) else {
            return Err(out_of_range("node index", index, m.map.nodes().len()));
        };
        // SAFETY: optional out-pointers.
        unsafe {
            put(id_out, id.as_ptr());
            put(host_out, host.as_ptr());
            put(port_out, node.addr().port);
            put(is_master_out, i32::from(node.role() == Role::Master));
            put(master_out, index_or_max(node.master()));
        }
        Ok(())
    })
}

/// The number of nodes (masters and replicas; 0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_len(map: *const keyroute_slot_map) -> usize {
    // SAFETY: NULL or a live map.
    guard_or(0, || Ok(unsafe { get(map, "map") }?.map.nodes().len()))
}

/// The number of slots master `node` owns (0 for NULL, an invalid handle or an unknown
/// index).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_slot_count(
    map: *const keyroute_slot_map,
    node: usize,
) -> usize {
    guard_or(0, || {
        // SAFETY: NULL or a live map.
        let m = unsafe { get(map, "map") }?;
        Ok(m.map.slot_count(m.index(node)?))
    })
}

/// 1 when every slot has an owner, else 0 (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_is_complete(map: *const keyroute_slot_map) -> i32 {
    // SAFETY: NULL or a live map.
    guard_or(0, || {
        Ok(i32::from(unsafe { get(map, "map") }?.map.is_complete()))
    })
}

// ---------------------------------------------------------------------------------------
// Redirections

/// What a `MOVED` or `ASK` error says, and (after `keyroute_slot_map_apply_redirect`)
/// what to do about it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_redirect {
    /// 1 for `MOVED` (the map changed for that slot; send the command to `node` and
    /// refresh the whole map soon), 0 for `ASK` (send `ASKING` then the command to
    /// `host:port`, once; the map is unchanged).
    pub moved: i32,
    /// The slot, 0..=16383.
    pub slot: u16,
    /// Target port.
    pub port: u16,
    /// Target host (not NUL-terminated; `host_len` bytes, IPv6 without brackets). It
    /// points into the message given, or into `current_host` when the message's host is
    /// empty: it lives as long as those buffers.
    pub host: *const c_char,
    /// Length of `host` in bytes.
    pub host_len: usize,
    /// The target's node index in the map, or `SIZE_MAX` when the map does not know it
    /// (always `SIZE_MAX` from `keyroute_redirect_parse`).
    pub node: usize,
    /// 1 when `MOVED` added a new master (unknown id) for an address the map did not
    /// know, else 0.
    pub added: i32,
}

/// The redirect in `(message, len)` and the current host.
///
/// # Safety
/// `message` NULL or `len` readable bytes; `current_host` NULL or NUL-terminated.
unsafe fn redirect_of<'a>(
    message: *const u8,
    len: usize,
    current_host: *const c_char,
) -> Res<(Redirect<'a>, &'a str)> {
    // SAFETY: as the caller promises.
    let msg = unsafe { bytes(message, len, "message") }?;
    let current = if current_host.is_null() {
        ""
    } else {
        // SAFETY: NUL-terminated per the caller.
        unsafe { text(current_host, "current_host") }?
    };
    Ok((Redirect::parse_bytes(msg)?, current))
}

fn fill_redirect(
    r: &Redirect<'_>,
    current: &str,
    node: Option<NodeIndex>,
    added: bool,
) -> keyroute_redirect {
    let host = r.host_or(current);
    keyroute_redirect {
        moved: i32::from(r.kind == RedirectKind::Moved),
        slot: r.slot,
        port: r.port,
        host: host.as_ptr().cast(),
        host_len: host.len(),
        node: index_or_max(node),
        added: i32::from(added),
    }
}

/// Parses a redirection error (`MOVED 3999 127.0.0.1:6381`, `-ASK 1 [::1]:7000\r\n`,
/// empty host allowed) without a map. `current_host` (NUL-terminated, may be NULL = "")
/// replaces an empty host. Errors: `KEYROUTE_NOT_A_REDIRECT` for any other error text,
/// `KEYROUTE_BAD_REDIRECT`, `KEYROUTE_BAD_UTF8`, `KEYROUTE_NULL_ARGUMENT`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_redirect_parse(
    message: *const u8,
    len: usize,
    current_host: *const c_char,
    out: *mut keyroute_redirect,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        // SAFETY: as documented.
        let (r, current) = unsafe { redirect_of(message, len, current_host) }?;
        // SAFETY: non-NULL out-pointer.
        unsafe { out.write(fill_redirect(&r, current, None, false)) };
        Ok(())
    })
}

/// Follows a redirection error `message` (bytes, as in `keyroute_redirect_parse()`)
/// received from `current_host` (NUL-terminated; fills an empty host; may be NULL = "").
/// `MOVED` gives that one slot to the node at the target address (adding a master with an
/// empty id if the address is new; promoting it if it was a replica); `ASK` never changes
/// the map. The result, with the node index, is written to `*out`.
/// Errors as `keyroute_redirect_parse()`, plus `KEYROUTE_TOO_MANY_NODES`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_apply_redirect(
    map: *mut keyroute_slot_map,
    message: *const u8,
    len: usize,
    current_host: *const c_char,
    out: *mut keyroute_redirect,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a map used exclusively.
        let m = unsafe { get_mut(map, "map") }?;
        let out = required(out, "out")?;
        // SAFETY: as documented.
        let (r, current) = unsafe { redirect_of(message, len, current_host) }?;
        let res = m.map.apply_redirect(&r, current);
        m.sync_names();
        let filled = match res? {
            RedirectAction::Moved { node, added } => fill_redirect(&r, current, Some(node), added),
            RedirectAction::Ask { node, .. } => fill_redirect(&r, current, node, false),
            other => {
                return Err(Fail::new(
                    ErrorCode::Internal,
                    format!("redirect action {other:?} is not known to the C library"),
                ))
            }
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { out.write(filled) };
        Ok(())
    })
}

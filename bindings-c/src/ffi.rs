//! The boundary, written once: the guard every export runs in ([`guard`], [`guard_or`]),
//! the failure type ([`Fail`]) that carries a status and its message, the checks of
//! arguments (NULL, UTF-8, sizes) and the handles with their type tags.
//!
//! Every export is `guard(|| { ... })` (or `guard_or(fallback, || ...)` for the calls that
//! return a value rather than a status): a panic becomes `KEYROUTE_INTERNAL`, and every
//! failure records its message for `keyroute_last_error_message()` in the same place.

use std::any::Any;
use std::borrow::Cow;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use keyroute_core::error::ErrorCode;

use crate::status::{keyroute_status, set_last_error, status_of};

/// The largest `count` of a batch call (`keyroute_key_slots`, `keyroute_ring_get_many`,
/// the seed calls, `keyroute_plan_new`): 2^24 = 16,777,216, the same limit in every
/// language (core's `keys::MAX_KEYS_PER_CALL`). A larger count is refused with
/// `KEYROUTE_TOO_LARGE` before anything is read or allocated.
pub const KEYROUTE_MAX_BATCH: u64 = 16_777_216;

/// Why a call did not return `KEYROUTE_OK`: its status and, for an error, the message
/// `keyroute_last_error_message()` will show.
#[derive(Debug)]
pub(crate) struct Fail {
    status: keyroute_status,
    message: Cow<'static, str>,
}

/// What the body of an export returns.
pub(crate) type Res<T = ()> = Result<T, Fail>;

impl Fail {
    /// An error with `code` and a message.
    pub(crate) fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Fail {
            status: status_of(code),
            message: message.into(),
        }
    }

    /// The status (for tests).
    #[cfg(test)]
    pub(crate) fn status(&self) -> keyroute_status {
        self.status
    }

    /// `KEYROUTE_EMPTY`: an answer of nothing (no message is recorded).
    pub(crate) const EMPTY: Fail = Fail {
        status: keyroute_status::KEYROUTE_EMPTY,
        message: Cow::Borrowed(""),
    };

    /// `KEYROUTE_NULL_ARGUMENT` for the argument `arg`.
    #[cold]
    #[inline(never)]
    pub(crate) fn null(arg: &str) -> Self {
        Fail::new(ErrorCode::NullArgument, format!("`{arg}` is NULL"))
    }

    /// The status, recording the message unless it is `KEYROUTE_EMPTY`.
    #[inline]
    fn record(self) -> keyroute_status {
        if self.status != keyroute_status::KEYROUTE_EMPTY {
            set_last_error(&self.message);
        }
        self.status
    }

    /// `KEYROUTE_INTERNAL` for a caught panic.
    fn panic(payload: &(dyn Any + Send)) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        Fail::new(
            ErrorCode::Internal,
            format!("internal error in keyroute (a panic was caught: {what}); please report it"),
        )
    }
}

/// Every core and Redis error becomes the status of its `code()` with its own text.
macro_rules! from_errors {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for Fail {
            fn from(e: $ty) -> Self {
                Fail::new(e.code(), e.to_string())
            }
        }
    )*};
}

from_errors!(
    keyroute_core::ring::RingError,
    keyroute_core::engine::EngineError,
    keyroute_core::slot::MapError,
    keyroute_core::slot::PlanError,
    keyroute_core::slot::RedirectError,
    keyroute_core::slot::AddressError,
    keyroute_core::select::PoolError,
    keyroute_core::select::KeyError,
    keyroute_core::select::UnknownRestoreMode,
    keyroute_core::cache::InputError,
    keyroute_redis::Error,
);

/// Runs the body of an export: its value, or the status of its failure (whose message is
/// recorded); a panic is `KEYROUTE_INTERNAL`.
#[inline(always)]
fn run<T>(f: impl FnOnce() -> Res<T>) -> Result<T, keyroute_status> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(fail)) => Err(fail.record()),
        Err(payload) => Err(panicked(payload)),
    }
}

/// `KEYROUTE_INTERNAL` for a caught panic, its message recorded.
#[cold]
#[inline(never)]
fn panicked(payload: Box<dyn Any + Send>) -> keyroute_status {
    let status = Fail::panic(payload.as_ref()).record();
    // Dropping the payload runs foreign code (its destructor): keep that inside.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    status
}

/// The guard of every export that returns a status.
#[inline(always)]
pub(crate) fn guard(f: impl FnOnce() -> Res) -> keyroute_status {
    match run(f) {
        Ok(()) => keyroute_status::KEYROUTE_OK,
        Err(status) => status,
    }
}

/// The guard of an export that returns a value: `fallback` on failure (whose message is
/// recorded all the same).
#[inline(always)]
pub(crate) fn guard_or<T>(fallback: T, f: impl FnOnce() -> Res<T>) -> T {
    run(f).unwrap_or(fallback)
}

// ---------------------------------------------------------------------------------------
// Arguments

/// Writes through an optional out-pointer: nothing when `out` is NULL.
///
/// # Safety
/// `out` is NULL or valid for writing a `T`.
#[inline(always)]
pub(crate) unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, and valid per the caller.
        unsafe { out.write(value) };
    }
}

/// Checks that a required out-pointer is not NULL.
#[inline(always)]
pub(crate) fn required<T>(out: *mut T, arg: &str) -> Res<*mut T> {
    if out.is_null() {
        Err(Fail::null(arg))
    } else {
        Ok(out)
    }
}

/// Refuses a size above `limit`, or one no object can have (`count` items of `T`).
#[inline(always)]
fn sized<T>(count: usize, arg: &str, limit: u64, unit: &str) -> Res<()> {
    let most = (isize::MAX as usize / std::mem::size_of::<T>().max(1)) as u64;
    if count as u64 > limit.min(most) {
        return Err(too_large(arg, count, limit.min(most), unit));
    }
    Ok(())
}

/// `KEYROUTE_TOO_LARGE` for a size above `limit`.
#[cold]
#[inline(never)]
fn too_large(arg: &str, count: usize, limit: u64, unit: &str) -> Fail {
    Fail::new(
        ErrorCode::TooLarge,
        format!("`{arg}` is given as {count} {unit}, above the limit of {limit}; nothing was read"),
    )
}

/// `KEYROUTE_NULL_ARGUMENT` for a NULL pointer with a length.
#[cold]
#[inline(never)]
fn null_with_len(arg: &str, len: usize) -> Fail {
    Fail::new(
        ErrorCode::NullArgument,
        format!("`{arg}` is NULL with a length of {len}"),
    )
}

/// `len` bytes at `ptr`: a key, member or message. `ptr` may be NULL when `len` is 0.
///
/// # Safety
/// `ptr` is NULL or valid for reading `len` bytes for `'a`.
#[inline(always)]
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, arg: &str) -> Res<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null_with_len(arg, len));
    }
    sized::<u8>(len, arg, isize::MAX as u64, "bytes")?;
    // SAFETY: non-NULL, at most isize::MAX bytes, readable per the caller.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A NUL-terminated UTF-8 string.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, arg: &str) -> Res<&'a str> {
    if ptr.is_null() {
        return Err(Fail::null(arg));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str().map_err(|e| {
        Fail::new(
            ErrorCode::BadUtf8,
            format!(
                "`{arg}` is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// `count` entries at `ptr` (an input array of a batch call). `ptr` may be NULL when
/// `count` is 0; `count` is at most [`KEYROUTE_MAX_BATCH`].
///
/// # Safety
/// `ptr` is NULL or valid for reading `count` entries for `'a`.
#[inline(always)]
pub(crate) unsafe fn array<'a, T>(ptr: *const T, count: usize, arg: &str) -> Res<&'a [T]> {
    if count == 0 {
        return Ok(&[]);
    }
    sized::<T>(count, arg, KEYROUTE_MAX_BATCH, "entries")?;
    if ptr.is_null() {
        return Err(Fail::null(arg));
    }
    // SAFETY: non-NULL, size checked, readable per the caller.
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// `count` writable entries at `ptr` (an output array).
///
/// # Safety
/// `ptr` is NULL or valid for writing `count` entries for `'a`, aliasing nothing else.
#[inline(always)]
pub(crate) unsafe fn array_mut<'a, T>(ptr: *mut T, count: usize, arg: &str) -> Res<&'a mut [T]> {
    if count == 0 {
        return Ok(&mut []);
    }
    sized::<T>(count, arg, KEYROUTE_MAX_BATCH, "entries")?;
    if ptr.is_null() {
        return Err(Fail::null(arg));
    }
    // SAFETY: non-NULL, size checked, writable per the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, count) })
}

/// A list of byte strings `(ptrs[i], lens[i])`, `i < count`, all checked (NULL pointers,
/// sizes) before the first is used; nothing is allocated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ByteList<'a> {
    ptrs: &'a [*const u8],
    lens: &'a [usize],
}

impl<'a> ByteList<'a> {
    /// # Safety
    /// `ptrs` and `lens` are NULL or hold `count` entries; each `ptrs[i]` is NULL or
    /// valid for `lens[i]` bytes, for `'a`.
    pub(crate) unsafe fn new(
        ptrs: *const *const u8,
        lens: *const usize,
        count: usize,
        arg: &str,
    ) -> Res<Self> {
        // SAFETY: as the caller promises.
        let (ptrs, lens) = unsafe {
            (
                array(ptrs, count, arg)?,
                array(lens, count, &format!("{arg} lengths"))?,
            )
        };
        for (i, (&p, &l)) in ptrs.iter().zip(lens).enumerate() {
            // SAFETY: as the caller promises; checked only.
            unsafe { bytes(p, l, &format!("{arg}[{i}]")) }?;
        }
        Ok(ByteList { ptrs, lens })
    }

    /// The byte strings, in order.
    pub(crate) fn iter(self) -> impl ExactSizeIterator<Item = &'a [u8]> {
        self.ptrs.iter().zip(self.lens).map(|(&p, &l)| {
            // SAFETY: every entry was checked by `new`.
            unsafe { bytes(p, l, "") }.unwrap_or_default()
        })
    }
}

/// Keys stored back to back, as a binding that copies its keys into one buffer hands
/// them over (`keyroute_ring_get_many_packed()` and the other `_packed` calls): key `i`
/// is `data[ends[i - 1]..ends[i]]` (key 0 starts at 0). Everything is checked before the
/// first key is used; nothing is allocated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packed<'a> {
    data: &'a [u8],
    ends: &'a [u32],
}

impl<'a> Packed<'a> {
    /// # Safety
    /// `data` is NULL or holds `data_len` readable bytes, `ends` NULL or `count` entries,
    /// for `'a`.
    pub(crate) unsafe fn new(
        data: *const u8,
        data_len: usize,
        ends: *const u32,
        count: usize,
        arg: &str,
    ) -> Res<Self> {
        sized::<u8>(
            data_len,
            arg,
            keyroute_core::keys::MAX_BATCH_BYTES as u64,
            "bytes",
        )?;
        // SAFETY: as the caller promises.
        let (data, ends) = unsafe {
            (
                bytes(data, data_len, arg)?,
                array(ends, count, &format!("{arg} ends"))?,
            )
        };
        let mut start = 0u32;
        for (i, &end) in ends.iter().enumerate() {
            if end < start || end as usize > data.len() {
                return Err(Fail::new(
                    ErrorCode::OutOfRange,
                    format!(
                        "`{arg} ends`[{i}] is {end}: the ends must not go down and stay within \
                         the {} bytes given",
                        data.len()
                    ),
                ));
            }
            start = end;
        }
        Ok(Packed { data, ends })
    }

    /// The keys, in order.
    pub(crate) fn iter(self) -> impl ExactSizeIterator<Item = &'a [u8]> {
        let data = self.data;
        let mut start = 0usize;
        self.ends.iter().map(move |&end| {
            let key = data.get(start..end as usize).unwrap_or_default();
            start = end as usize;
            key
        })
    }
}

/// `KEYROUTE_OUT_OF_RANGE` for an index past the end of `len` items.
pub(crate) fn out_of_range(what: &str, index: usize, len: usize) -> Fail {
    Fail::new(
        ErrorCode::OutOfRange,
        format!("{what} {index} is out of range; there are {len}"),
    )
}

/// `KEYROUTE_BUFFER_TOO_SMALL`.
pub(crate) fn too_small() -> Fail {
    Fail::new(
        ErrorCode::BufferTooSmall,
        "the buffer is too small; *len_out holds the length needed",
    )
}

/// Copies `value` into `(buf, cap)` and writes its length to `*len_out`; when it does
/// not fit, writes the length needed and gives the value back.
///
/// # Safety
/// `len_out` is non-NULL and writable; `buf` is NULL with `cap` 0, or holds `cap`
/// writable bytes.
pub(crate) unsafe fn deliver(
    value: Vec<u8>,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> Result<(), Vec<u8>> {
    // SAFETY: as the caller promises.
    unsafe {
        len_out.write(value.len());
        if value.len() > cap {
            return Err(value);
        }
        if !value.is_empty() {
            ptr::copy_nonoverlapping(value.as_ptr(), buf, value.len());
        }
    }
    Ok(())
}

/// Checks a caller's output buffer: `buf` may be NULL only when `cap` is 0.
pub(crate) fn buffer(buf: *mut u8, cap: usize) -> Res<()> {
    if buf.is_null() && cap != 0 {
        return Err(Fail::new(
            ErrorCode::NullArgument,
            format!("`buf` is NULL with a capacity of {cap}"),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Handles

/// An opaque handle type of the C API and the state behind it.
///
/// A handle is a box of `Tagged<State>`: its first 8 bytes are the kind's tag, checked on
/// every call, and cleared when the handle is freed. So a handle of another kind, or one
/// freed whose memory has not been reused yet, is refused with `KEYROUTE_INVALID_HANDLE`.
pub(crate) trait Handle: Sized {
    /// What the handle holds.
    type State;
    /// The kind's tag (the ASCII of a short name).
    const TAG: u64;
    /// The C type name, for messages.
    const NAME: &'static str;
}

/// The tag of freed handles.
const FREED: u64 = 0;

/// The tag and name of a kind of handle, as [`crate::KINDS`] lists them.
pub(crate) const fn kind<H: Handle>() -> (u64, &'static str) {
    (H::TAG, H::NAME)
}

/// A tag from a short ASCII name (at most 8 bytes).
pub(crate) const fn tag(name: &[u8]) -> u64 {
    let mut t = [0u8; 8];
    let mut i = 0;
    while i < name.len() && i < 8 {
        t[i] = name[i];
        i += 1;
    }
    u64::from_le_bytes(t)
}

#[repr(C)]
struct Tagged<S> {
    tag: u64,
    state: S,
}

/// The live state behind `p`, or why there is none.
///
/// # Safety
/// `p` is NULL or was returned by this library (as a handle of some kind), possibly freed
/// since, and its memory still mapped (always true of heap blocks of this size); no other
/// thread frees it during the call.
#[inline(always)]
unsafe fn tagged<H: Handle>(p: *const H, arg: &str) -> Res<*mut Tagged<H::State>> {
    if p.is_null() {
        return Err(Fail::null(arg));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<u64>()) {
        return Err(not_live(arg, H::NAME, None));
    }
    // SAFETY: every handle starts with its tag; see the function's contract. Volatile: a
    // freed block may have been rewritten by the allocator.
    let tag = unsafe { (p as *const u64).read_volatile() };
    if tag == H::TAG {
        return Ok(p as *mut Tagged<H::State>);
    }
    Err(not_live(arg, H::NAME, Some(tag)))
}

/// `KEYROUTE_INVALID_HANDLE`: what the handle is instead (`tag` None: misaligned).
#[cold]
#[inline(never)]
fn not_live(arg: &str, name: &str, tag: Option<u64>) -> Fail {
    let what = match tag {
        None => "it is not a handle (misaligned)",
        Some(FREED) => "it was freed",
        Some(t) => match crate::KINDS.iter().find(|(k, _)| *k == t) {
            Some((_, other)) => {
                return Fail::new(
                    ErrorCode::InvalidHandle,
                    format!("`{arg}` is not a live {name}: it is a {other}"),
                )
            }
            None => "it was freed, or is not a keyroute handle",
        },
    };
    Fail::new(
        ErrorCode::InvalidHandle,
        format!("`{arg}` is not a live {name}: {what}"),
    )
}

/// The state behind a handle for reading.
///
/// # Safety
/// As [`tagged`]; no call modifies the handle concurrently.
#[inline(always)]
pub(crate) unsafe fn get<'a, H: Handle>(p: *const H, arg: &str) -> Res<&'a H::State> {
    // SAFETY: a live handle of kind H (tag checked).
    Ok(unsafe { &(*tagged(p, arg)?).state })
}

/// The state behind a handle for changing.
///
/// # Safety
/// As [`tagged`]; the caller has exclusive access to the handle.
#[inline(always)]
pub(crate) unsafe fn get_mut<'a, H: Handle>(p: *mut H, arg: &str) -> Res<&'a mut H::State> {
    // SAFETY: a live handle of kind H (tag checked), used exclusively.
    Ok(unsafe { &mut (*tagged(p, arg)?).state })
}

/// A new handle holding `state`, written to `*out`.
///
/// # Safety
/// `out` is valid for writing a pointer.
pub(crate) unsafe fn hand_out<H: Handle>(out: *mut *mut H, state: H::State) {
    let p = Box::into_raw(Box::new(Tagged { tag: H::TAG, state }));
    // SAFETY: as the caller promises.
    unsafe { out.write(p.cast()) };
}

/// Frees a handle: NULL is ignored; a handle of another kind or already freed is refused
/// (nothing is freed); the tag is cleared before the memory is released.
///
/// # Safety
/// As [`tagged`]; no other call uses the handle during or after this one.
pub(crate) unsafe fn free<H: Handle>(p: *mut H, arg: &str) -> keyroute_status {
    guard(|| {
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: as the caller promises.
        let t = unsafe { tagged(p, arg) }?;
        // SAFETY: a live handle made by `hand_out`, freed once (its tag is cleared first,
        // so a second free is refused while the memory is not reused).
        unsafe {
            (*t).tag = FREED;
            drop(Box::from_raw(t));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::keyroute_status::*;

    #[test]
    fn the_batch_limit_is_the_cores() {
        assert_eq!(
            KEYROUTE_MAX_BATCH,
            keyroute_core::keys::MAX_KEYS_PER_CALL as u64
        );
    }

    #[test]
    fn panics_become_internal() {
        let st = guard(|| panic!("boom"));
        assert_eq!(st, KEYROUTE_INTERNAL);
        let msg = unsafe { CStr::from_ptr(crate::status::keyroute_last_error_message()) };
        assert!(msg.to_string_lossy().contains("boom"), "{msg:?}");
        assert_eq!(guard_or(7, || panic!("x")), 7);
    }

    #[test]
    fn packed_keys_are_checked_then_read_in_order() {
        let data = b"abcdef";
        let ends = [1u32, 1, 4, 6];
        let p = unsafe { Packed::new(data.as_ptr(), 6, ends.as_ptr(), 4, "keys") }
            .expect("well-formed packed keys are accepted");
        let keys: Vec<&[u8]> = p.iter().collect();
        assert_eq!(keys, [&b"a"[..], b"", b"bcd", b"ef"]);
        let down = [2u32, 1];
        let e = unsafe { Packed::new(data.as_ptr(), 6, down.as_ptr(), 2, "keys") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_OUT_OF_RANGE);
        let past = [7u32];
        let e = unsafe { Packed::new(data.as_ptr(), 6, past.as_ptr(), 1, "keys") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_OUT_OF_RANGE);
        let e =
            unsafe { Packed::new(data.as_ptr(), 1 << 31, ends.as_ptr(), 4, "keys") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_TOO_LARGE);
        let e =
            unsafe { Packed::new(std::ptr::null(), 0, std::ptr::null(), 1, "keys") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_NULL_ARGUMENT);
        let none = unsafe { Packed::new(std::ptr::null(), 0, std::ptr::null(), 0, "keys") };
        assert_eq!(none.expect("no keys are accepted").iter().count(), 0);
    }

    #[test]
    fn sizes_are_checked_before_reading() {
        let e = unsafe { array(std::ptr::null::<usize>(), usize::MAX, "keys") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_TOO_LARGE);
        let e = unsafe { bytes(std::ptr::dangling(), usize::MAX, "key") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_TOO_LARGE);
        let e = unsafe { bytes(std::ptr::null(), 1, "key") }.unwrap_err();
        assert_eq!(e.status, KEYROUTE_NULL_ARGUMENT);
    }
}

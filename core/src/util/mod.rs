//! Small pieces of arithmetic more than one module needs, without `std`.

#[cfg(feature = "alloc")]
mod ln;

#[cfg(feature = "alloc")]
pub(crate) use ln::ln;

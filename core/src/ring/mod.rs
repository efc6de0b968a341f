//! Consistent-hash rings.

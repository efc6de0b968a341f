//! XFetch (Vattani, Chierichetti, Lowenstein, PVLDB 8(8), 2015): refresh a value early,
//! with a probability that grows as its soft expiry nears, so that one caller refreshes
//! it before it goes stale.
//!
//! A caller draws u uniform in (0, 1] and passes `e = β · (−ln u)` (β = 1 by default;
//! larger refreshes earlier). The value is refreshed when `now + δ·e ≥ soft expiry`, δ
//! being how long its last load took. The caller computes `e` because the logarithm needs
//! `std` (this crate has no libm). [`SC_GET`](super::SC_GET) applies the same test and
//! grants one lease for it, so at most one caller refreshes.

/// Whether to refresh a fresh value early: `now_ms < soft_expiry_ms` and
/// `now_ms + delta_ms · e ≥ soft_expiry_ms` (in `f64`, as the script computes it), with
/// `e > 0` and `delta_ms > 0`.
///
/// ```
/// use keyroute::cache::xfetch::should_refresh;
/// // Last load took 200 ms; 100 ms before the soft expiry.
/// assert!(!should_refresh(900, 1000, 200, 0.1));   // 900 + 20 < 1000
/// assert!(should_refresh(900, 1000, 200, 0.5));    // 900 + 100 >= 1000
/// assert!(!should_refresh(900, 1000, 0, 9.0));     // never loaded: no estimate
/// assert!(!should_refresh(1000, 1000, 200, 9.0));  // already stale: not an early refresh
/// ```
pub fn should_refresh(now_ms: u64, soft_expiry_ms: u64, delta_ms: u64, e: f64) -> bool {
    e > 0.0
        && delta_ms > 0
        && now_ms < soft_expiry_ms
        && (now_ms as f64) + (delta_ms as f64) * e >= soft_expiry_ms as f64
}

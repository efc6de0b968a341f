//! The natural logarithm without `std` (weighted rendezvous and the smart cache's XFetch draw
//! need it in `no_std` builds): the same bits on every platform, wasm included.

/// `ln(x)` for `x` in `(0, 1]`, within a few ulps.
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    // x = m · 2^e with m in [1/√2, √2).
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if e == -1023 {
        // Subnormal: scale up first.
        return ln(x * 4_503_599_627_370_496.0) - 52.0 * core::f64::consts::LN_2;
    }
    if m > core::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    // ln(m) = 2·atanh(s), s = (m-1)/(m+1), |s| < 0.172.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    while k < 40.0 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    2.0 * sum + e as f64 * core::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    // Tests link std even when the crate is built without it (test-rust-nostd).
    extern crate std;

    #[test]
    fn close_to_std() {
        for i in 1..2000u32 {
            let x = f64::from(i) / 2000.0;
            let want = std::primitive::f64::ln(x);
            assert!(
                (super::ln(x) - want).abs() <= 4.0 * f64::EPSILON * want.abs().max(1.0),
                "{x}"
            );
        }
        assert!((super::ln(1e-300) - std::primitive::f64::ln(1e-300)).abs() < 1e-12);
        assert_eq!(super::ln(1.0), 0.0);
    }
}

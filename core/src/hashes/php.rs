//! PHP's `round()` as PHP 8.0–8.3 computes it (Predis sizes its ring with it).

/// PHP 8.0–8.3's `round($value)` (no precision argument) for a non-negative value below
/// 2⁵²: the value is first rounded to 15 significant digits ("pre-rounding"), then half
/// away from zero. So `round(0.49999999999999994)` is 1 in PHP, and 0 in C.
///
/// ```
/// use keyroute::hashes::php_round;
/// assert_eq!(php_round(2.5), 3.0);
/// assert_eq!(php_round(2.4999999999999996), 3.0); // PHP 8.2 prints 3
/// assert_eq!(php_round(2.49), 2.0);
/// assert_eq!(php_round(0.0), 0.0);
/// ```
pub fn php_round(value: f64) -> f64 {
    if value.is_nan() || value <= 0.0 || value >= 4_503_599_627_370_496.0 {
        return if value.is_nan() || value < 0.0 {
            0.0
        } else {
            value
        };
    }
    // precision_places = 14 - floor(log10(value)), as php_intlog10abs computes it.
    let mut log = 0i32;
    let mut p = 1.0f64;
    if value >= 1.0 {
        while p * 10.0 <= value {
            p *= 10.0;
            log += 1;
        }
    } else {
        while p > value {
            p /= 10.0;
            log -= 1;
        }
    }
    let places = 14 - log;
    if !(1..=22).contains(&places) {
        // Below 1e-8 the value rounds to 0; 1e14 and above have no fraction to round.
        return if places > 22 {
            0.0
        } else {
            round_half_up(value)
        };
    }
    let scale = POW10[places as usize];
    let pre = round_half_up(value * scale) / scale;
    round_half_up(pre)
}

/// PHP's `php_round_helper` for `PHP_ROUND_HALF_UP` on a non-negative value:
/// `floor(value + 0.5)`.
fn round_half_up(v: f64) -> f64 {
    let t = v + 0.5;
    // floor of a non-negative double below 2^53: truncation through u64 is exact.
    (t as u64) as f64
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_php_8_2_prints() {
        // php -r 'echo round(V);' with PHP 8.2.36 (Debian bookworm).
        for (v, want) in [
            (0.49999999999999994, 1.0),
            (2.4999999999999996, 3.0),
            (2.5, 3.0),
            (1.4999999999999998, 2.0),
            (127.49999999999997, 128.0),
            (127.49999999999999, 128.0),
            (0.5, 1.0),
            (42.49999999999999, 43.0),
            (42.4, 42.0),
            (127.99999999999999, 128.0),
            (1e-9, 0.0),
        ] {
            assert_eq!(php_round(v), want, "{v:?}");
        }
    }
}

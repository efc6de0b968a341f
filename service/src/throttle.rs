//! Bounded log volume for events a client can repeat at will.
//!
//! A refused CURVE key or an unreachable store can happen thousands of times a
//! second; each is counted in a metric, and logged at most once a second so that
//! a hostile or broken peer cannot flood the log ([`LogThrottle`]). Failed and slow
//! requests get a line each, up to [`REQUEST_LINES`] a second ([`RequestLog`]).

use std::time::{Duration, Instant};

/// The shortest time between two lines of one throttle.
pub(crate) const EVERY: Duration = Duration::from_secs(1);

/// When a throttled line was last written.
#[derive(Debug, Default)]
pub(crate) struct LogThrottle {
    last: Option<Instant>,
}

impl LogThrottle {
    /// A throttle that lets its first line through.
    pub(crate) const fn new() -> Self {
        LogThrottle { last: None }
    }

    /// Whether a line may be written at `now`; if so, the next one waits [`EVERY`].
    pub(crate) fn ready(&mut self, now: Instant) -> bool {
        if self.last.is_none_or(|t| now.duration_since(t) >= EVERY) {
            self.last = Some(now);
            true
        } else {
            false
        }
    }
}

/// The most lines a second about failed or slow requests.
pub(crate) const REQUEST_LINES: u32 = 100;

/// At most [`REQUEST_LINES`] lines in each second; the lines left out are counted and
/// reported with the next line let through.
#[derive(Debug, Default)]
pub(crate) struct RequestLog {
    window: Option<Instant>,
    lines: u32,
    left_out: u64,
}

impl RequestLog {
    /// Whether a line may be written at `now`; `Some(n)`: yes, and `n` lines were left
    /// out since the last one written.
    pub(crate) fn ready(&mut self, now: Instant) -> Option<u64> {
        if self.window.is_none_or(|t| now.duration_since(t) >= EVERY) {
            self.window = Some(now);
            self.lines = 0;
        }
        if self.lines < REQUEST_LINES {
            self.lines += 1;
            Some(std::mem::take(&mut self.left_out))
        } else {
            self.left_out += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hundred_request_lines_a_second() {
        let mut log = RequestLog::default();
        let start = Instant::now();
        for _ in 0..REQUEST_LINES {
            assert_eq!(log.ready(start), Some(0));
        }
        assert_eq!(log.ready(start), None);
        assert_eq!(log.ready(start + EVERY / 2), None);
        assert_eq!(log.ready(start + EVERY), Some(2));
        assert_eq!(log.ready(start + EVERY), Some(0));
    }

    #[test]
    fn one_line_a_second() {
        let mut t = LogThrottle::new();
        let start = Instant::now();
        assert!(t.ready(start));
        assert!(!t.ready(start));
        assert!(!t.ready(start + EVERY / 2));
        assert!(t.ready(start + EVERY));
        assert!(!t.ready(start + EVERY + EVERY / 2));
        assert!(t.ready(start + EVERY * 3));
    }
}

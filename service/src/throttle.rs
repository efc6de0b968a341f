//! At most one log line a second for an event a client can repeat at will.
//!
//! A refused CURVE key or an unreachable store can happen thousands of times a
//! second; each is counted in a metric, and logged at most once a second so that
//! a hostile or broken peer cannot flood the log.

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

#[cfg(test)]
mod tests {
    use super::*;

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

//! The loader workers: who declared which kinds, their capacity, how busy they are, and
//! the least-used choice among the idle ones ([`keyroute::select::Pool`], the project's
//! own selection: the lowest count, ties to the smallest identity).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use keyroute::select::{Pool, Restore};

/// One loader worker.
#[derive(Debug)]
pub(crate) struct Worker {
    pub(crate) kinds: Vec<String>,
    pub(crate) capacity: usize,
    /// Loads sent and not answered (abandoned ones included: the worker is still busy).
    pub(crate) inflight: HashSet<u64>,
    pub(crate) last_seen: Instant,
}

/// The registry.
#[derive(Debug, Default)]
pub(crate) struct Workers {
    pub(crate) all: HashMap<Vec<u8>, Worker>,
    /// Per kind: the workers with a free slot, by uses.
    idle: HashMap<String, Pool>,
}

impl Workers {
    /// `worker.ready`: registers or refreshes a worker; whether it is new.
    pub(crate) fn ready(
        &mut self,
        id: &[u8],
        kinds: Vec<String>,
        capacity: usize,
        now: Instant,
    ) -> bool {
        let fresh = !self.all.contains_key(id);
        if let Some(w) = self.all.get_mut(id) {
            w.last_seen = now;
            if w.kinds == kinds && w.capacity == capacity {
                return false;
            }
        }
        // New, or its declaration changed: re-place it in the pools.
        let inflight = self.remove(id).unwrap_or_default();
        let w = Worker {
            kinds,
            capacity,
            inflight,
            last_seen: now,
        };
        let free = w.inflight.len() < w.capacity;
        for k in &w.kinds {
            let pool = self.idle.entry(k.clone()).or_default();
            if free {
                let _ = pool.restore(id, Restore::Keep);
            }
        }
        self.all.insert(id.to_vec(), w);
        fresh
    }

    /// Drops a worker; its in-flight loads.
    pub(crate) fn remove(&mut self, id: &[u8]) -> Option<HashSet<u64>> {
        let w = self.all.remove(id)?;
        for k in &w.kinds {
            if let Some(pool) = self.idle.get_mut(k) {
                pool.remove(id);
            }
        }
        Some(w.inflight)
    }

    /// Whether any worker declared `kind`.
    pub(crate) fn serves(&self, kind: &str) -> bool {
        self.all.values().any(|w| w.kinds.iter().any(|k| k == kind))
    }

    /// Picks the least-used idle worker of `kind` for load `fence`.
    pub(crate) fn pick(&mut self, kind: &str, fence: u64) -> Option<Vec<u8>> {
        let id = self.idle.get_mut(kind)?.pick()?;
        let w = self.all.get_mut(&id)?;
        w.inflight.insert(fence);
        if w.inflight.len() >= w.capacity {
            for k in &w.kinds {
                if let Some(pool) = self.idle.get_mut(k) {
                    pool.remove(&id);
                }
            }
        }
        Some(id)
    }

    /// A load answered (or given up): frees its slot; whether the worker had it.
    pub(crate) fn finish(&mut self, id: &[u8], fence: u64) -> bool {
        let Some(w) = self.all.get_mut(id) else {
            return false;
        };
        let was_full = w.inflight.len() >= w.capacity;
        if !w.inflight.remove(&fence) {
            return false;
        }
        if was_full && w.inflight.len() < w.capacity {
            for k in &w.kinds {
                let _ = self
                    .idle
                    .entry(k.clone())
                    .or_default()
                    .restore(id, Restore::Keep);
            }
        }
        true
    }

    /// Workers silent for longer than `timeout`.
    pub(crate) fn silent(&self, now: Instant, timeout: Duration) -> Vec<Vec<u8>> {
        self.all
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) > timeout)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Every declared kind.
    pub(crate) fn kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = self
            .all
            .values()
            .flat_map(|w| w.kinds.iter().cloned())
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// (kind, busy, idle) capacity per kind.
    pub(crate) fn load_by_kind(&self) -> Vec<(String, usize, usize)> {
        let mut out: HashMap<&str, (usize, usize)> = HashMap::new();
        for w in self.all.values() {
            let busy = w.inflight.len().min(w.capacity);
            for k in &w.kinds {
                let e = out.entry(k).or_default();
                e.0 += busy;
                e.1 += w.capacity - busy;
            }
        }
        out.into_iter()
            .map(|(k, (b, i))| (k.to_string(), b, i))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_used_among_idle() {
        let now = Instant::now();
        let mut w = Workers::default();
        assert!(w.ready(b"a", vec!["cards".into()], 1, now));
        assert!(w.ready(b"b", vec!["cards".into(), "loans".into()], 2, now));
        assert_eq!(w.pick("cards", 1).as_deref(), Some(&b"a"[..]));
        assert_eq!(w.pick("cards", 2).as_deref(), Some(&b"b"[..]));
        // a is full; b has one slot left.
        assert_eq!(w.pick("cards", 3).as_deref(), Some(&b"b"[..]));
        assert_eq!(w.pick("loans", 4), None);
        assert!(w.finish(b"a", 1));
        assert!(!w.finish(b"a", 1));
        assert_eq!(w.pick("loans", 5), None);
        assert_eq!(w.pick("cards", 6).as_deref(), Some(&b"a"[..]));
        assert_eq!(w.remove(b"b").map(|s| s.len()), Some(2));
        assert!(!w.serves("loans"));
    }
}

//! [`Bounded`]: consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam,
//! 2018) over any [`Engine`].

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use super::error::EngineError;
use super::Engine;

/// A key that [`Bounded::release`] moved to keep every node under the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// The key.
    pub key: Vec<u8>,
    /// The node it left.
    pub from: usize,
    /// The node it went to.
    pub to: usize,
}

/// An engine whose nodes each hold at most `⌈c·m/n⌉` of the `m` assigned keys (`n`
/// nodes, `c >= 1`). [`assign`](Self::assign) walks a key's candidates (the engine's
/// [`get_n_into`](Engine::get_n_into) order: the ring walk, the rendezvous ranking) from
/// the preferred node to the first one under the cap. [`release`](Self::release) frees a
/// key; when the lower `m` lowers the cap below a node's load, that node's keys move on
/// along their candidates until none is above it, and the moves are returned.
///
/// ```
/// use keyroute::engine::{Bounded, Router};
/// use keyroute::ring::parse_nodes;
/// let ring = Router::build("native", &parse_nodes("a,b,c")?, &[])?;
/// let mut b = Bounded::new(ring, 1.25)?;
/// for i in 0..30 {
///     b.assign(format!("job-{i}").as_bytes());
/// }
/// assert!(b.loads().iter().all(|&l| l <= b.cap()));
/// let moved = b.release(b"job-3");
/// assert!(moved.is_some());
/// assert!(b.loads().iter().all(|&l| l <= b.cap()));
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Bounded<E> {
    engine: E,
    c: f64,
    loads: Vec<u64>,
    owner: BTreeMap<Vec<u8>, usize>,
    keys_of: Vec<BTreeSet<Vec<u8>>>,
    scratch: Vec<usize>,
}

impl<E: Engine> Bounded<E> {
    /// The overlay over `engine` with balance factor `c` (1.25 means no node above 125% of
    /// the mean, rounded up).
    ///
    /// # Errors
    /// [`EngineError::BadOption`] when `c` is below 1 or not finite.
    pub fn new(engine: E, c: f64) -> Result<Self, EngineError> {
        if !(c.is_finite() && c >= 1.0) {
            return Err(EngineError::BadOption {
                engine: "bounded",
                option: "c".into(),
                // No {c}: formatting an f64 would cost the fleet .wasm ~10 KB.
                reason: "the balance factor c must be a finite number at least 1".into(),
            });
        }
        let n = engine.len();
        Ok(Bounded {
            engine,
            c,
            loads: alloc::vec![0; n],
            owner: BTreeMap::new(),
            keys_of: alloc::vec![BTreeSet::new(); n],
            scratch: Vec::new(),
        })
    }

    /// The engine underneath.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The balance factor.
    pub fn factor(&self) -> f64 {
        self.c
    }

    /// The number of assigned keys (`m`).
    pub fn assigned(&self) -> u64 {
        self.owner.len() as u64
    }

    /// Each node's load, indexed like the engine's nodes.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }

    /// The cap for `m` keys: `⌈c·m/n⌉` (0 without nodes).
    pub fn cap_for(&self, m: u64) -> u64 {
        let n = self.loads.len() as u64;
        if n == 0 {
            return 0;
        }
        let x = self.c * m as f64 / n as f64;
        let t = x as u64;
        if (t as f64) < x {
            t + 1
        } else {
            t
        }
    }

    /// The cap now.
    pub fn cap(&self) -> u64 {
        self.cap_for(self.assigned())
    }

    /// The node holding `key`, if it is assigned.
    pub fn owner_of(&self, key: &[u8]) -> Option<usize> {
        self.owner.get(key).copied()
    }

    /// Assigns `key` (or returns where it already is): the first of its candidates whose
    /// load is under the cap for one more key. `None` only without nodes.
    pub fn assign(&mut self, key: &[u8]) -> Option<usize> {
        if let Some(&o) = self.owner.get(key) {
            return Some(o);
        }
        let cap = self.cap_for(self.assigned() + 1);
        let n = self.loads.len();
        let mut cands = core::mem::take(&mut self.scratch);
        self.engine.get_n_into(key, n, &mut cands);
        let pick = cands.iter().copied().find(|&i| self.loads[i] < cap);
        self.scratch = cands;
        let to = pick?;
        self.place(key.into(), to);
        Some(to)
    }

    fn place(&mut self, key: Vec<u8>, to: usize) {
        self.loads[to] += 1;
        self.keys_of[to].insert(key.clone());
        self.owner.insert(key, to);
    }

    /// Frees `key`; `None` when it was not assigned. Returns the keys moved to keep every
    /// node at or under the new cap (usually none).
    pub fn release(&mut self, key: &[u8]) -> Option<Vec<Load>> {
        let from = self.owner.remove(key)?;
        self.loads[from] -= 1;
        self.keys_of[from].remove(key);
        let cap = self.cap();
        let mut moved = Vec::new();
        let n = self.loads.len();
        for node in 0..n {
            while self.loads[node] > cap {
                // The smallest key of the node moves to its first candidate under the cap.
                let Some(k) = self.keys_of[node].iter().next().cloned() else {
                    break;
                };
                let mut cands = core::mem::take(&mut self.scratch);
                self.engine.get_n_into(&k, n, &mut cands);
                let to = cands
                    .iter()
                    .copied()
                    .find(|&i| i != node && self.loads[i] < cap);
                self.scratch = cands;
                let Some(to) = to else { break };
                self.loads[node] -= 1;
                self.keys_of[node].remove(&k);
                self.owner.remove(&k);
                self.place(k.clone(), to);
                moved.push(Load {
                    key: k,
                    from: node,
                    to,
                });
            }
        }
        Some(moved)
    }
}

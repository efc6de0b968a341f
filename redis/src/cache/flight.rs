//! In-process single flight: one caller per key (the leader) talks to Redis; the others
//! (followers) wait for its outcome, so a key costs one Redis round trip per process
//! however many threads ask at once.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crate::error::{Error, Result};

type Outcome = Result<Vec<u8>>;

#[derive(Debug, Default)]
struct Flight {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

/// The flights in progress, by key.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    map: Mutex<HashMap<Vec<u8>, Arc<Flight>>>,
}

/// What a caller is for a key: the leader, or a follower of the leader's flight.
pub(crate) enum Role<'a> {
    Leader(Leader<'a>),
    Follower(Follower),
}

/// The leader of a flight. Completing it (or dropping it, e.g. when the loader panics)
/// hands the outcome to every follower.
pub(crate) struct Leader<'a> {
    flights: &'a Flights,
    key: Vec<u8>,
    flight: Option<Arc<Flight>>,
}

/// A follower of a flight.
pub(crate) struct Follower {
    flight: Arc<Flight>,
}

impl Flights {
    /// Joins the flight of `key`, or starts one.
    pub(crate) fn join(&self, key: &[u8]) -> Role<'_> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(flight) = map.get(key) {
            return Role::Follower(Follower {
                flight: Arc::clone(flight),
            });
        }
        let flight = Arc::new(Flight::default());
        map.insert(key.to_vec(), Arc::clone(&flight));
        Role::Leader(Leader {
            flights: self,
            key: key.to_vec(),
            flight: Some(flight),
        })
    }
}

impl Leader<'_> {
    /// Hands `outcome` to the followers and ends the flight (later callers start a new
    /// one). Calling it again does nothing.
    pub(crate) fn complete(&mut self, outcome: &Outcome) {
        let Some(flight) = self.flight.take() else {
            return;
        };
        self.flights
            .map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
        *flight.outcome.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome.clone());
        flight.done.notify_all();
    }
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        if self.flight.is_some() {
            self.complete(&Err(Error::Busy(
                "the caller loading this key stopped (its loader panicked)",
            )));
        }
    }
}

impl Follower {
    /// The leader's outcome, or `None` if `deadline` came first.
    pub(crate) fn wait(&self, deadline: Instant) -> Option<Outcome> {
        let mut outcome = self
            .flight
            .outcome
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(done) = outcome.as_ref() {
                return Some(done.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            outcome = self
                .flight
                .done
                .wait_timeout(outcome, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

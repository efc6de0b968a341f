//! Warm-up by device: at app start the device names the client, and every cold kind of
//! that client is leased in one call and loaded in parallel, so a login right after finds
//! the values (or waits on the warm-up's leases instead of calling the backend again).

use std::thread;

use std::time::Instant;

use keyroute::cache::{
    check_device_id, check_kind, check_warm_count, device_key, ClientKeys, Stored, Warm,
};

use super::load_error::LoadError;
use super::smart::SmartCache;
use crate::error::{Error, Result};

/// What a warm-up did.
///
/// ```
/// let report = keyroute_redis::cache::WarmReport::default();
/// assert!(report.client.is_none() && report.granted.is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct WarmReport {
    /// The client the device names (`None`: unknown device, nothing was loaded).
    pub client: Option<Vec<u8>>,
    /// Kinds that were cold, leased and loaded (stored unless fenced meanwhile).
    pub granted: Vec<Vec<u8>>,
    /// Kinds skipped: fresh, being loaded by someone else, or with a cached error.
    pub skipped: Vec<Vec<u8>>,
    /// Kinds whose load failed, with the error (cached for the negative TTL).
    pub failed: Vec<(Vec<u8>, Error)>,
}

impl SmartCache {
    /// Warms the kinds of the client bound to `device` (see
    /// [`Devices::bind`](super::Devices::bind)): one script call leases every cold kind,
    /// then `loader(client, kind)` runs for each, in parallel, each under its lease.
    /// An unknown device warms nothing. The device id is not authenticated: never serve
    /// data before login; rate-limit app starts.
    ///
    /// # Errors
    /// A bad device id (`BAD_DEVICE_ID`), kind (`BAD_KIND`), more than
    /// [`MAX_WARM_KINDS`](keyroute::cache::MAX_WARM_KINDS) kinds (`TOO_LARGE`), a Redis
    /// error. Loader failures are reported in [`WarmReport::failed`].
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// // At app start, before login:
    /// let report = cache.warm("ios-7F3A", &["accounts", "cards", "deposits", "loans"], |client, kind| {
    ///     Ok(format!("{} of {}", String::from_utf8_lossy(kind), String::from_utf8_lossy(client)).into_bytes())
    /// })?;
    /// println!("loaded {:?}, skipped {:?}", report.granted, report.skipped);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn warm<K, F>(&self, device: impl AsRef<[u8]>, kinds: &[K], loader: F) -> Result<WarmReport>
    where
        K: AsRef<[u8]>,
        F: Fn(&[u8], &[u8]) -> std::result::Result<Vec<u8>, LoadError> + Sync,
    {
        check_warm_count(kinds.len())?;
        check_device_id(device.as_ref())?;
        // Checked here too, not only when the client is known: an unknown device refuses
        // the same kinds.
        for kind in kinds {
            check_kind(kind.as_ref())?;
        }
        let key = device_key(device.as_ref())?;
        let client: Option<Vec<u8>> = self.store.query(&key, redis::cmd("GET").arg(&key))?;
        match client {
            Some(client) => self.warm_client(&client, kinds, loader),
            None => Ok(WarmReport {
                client: None,
                skipped: kinds.iter().map(|k| k.as_ref().to_vec()).collect(),
                ..WarmReport::default()
            }),
        }
    }

    /// [`warm`](Self::warm) for a client id.
    ///
    /// # Errors
    /// As [`warm`](Self::warm), with `BAD_CLIENT_ID` for a bad client id.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// let report = cache.warm_client(b"client-42", &["accounts"], |_, _| Ok(b"[]".to_vec()))?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn warm_client<K, F>(&self, client: &[u8], kinds: &[K], loader: F) -> Result<WarmReport>
    where
        K: AsRef<[u8]>,
        F: Fn(&[u8], &[u8]) -> std::result::Result<Vec<u8>, LoadError> + Sync,
    {
        check_warm_count(kinds.len())?;
        let keys = ClientKeys::new(client, &self.config.token_key)?;
        let entries = kinds
            .iter()
            .map(|k| keys.entry(k.as_ref()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut report = WarmReport {
            client: Some(client.to_vec()),
            ..WarmReport::default()
        };
        if entries.is_empty() {
            return Ok(report);
        }
        let started = Instant::now();
        let warm = Warm::new(entries, &self.owner, &self.settings, self.store.notify());
        let reply = self.store.eval(&warm.call(), None)?;
        let plan = warm
            .plan(reply)
            .map_err(|f| self.error_of(f, None, None, b"warm-begin", started))?;
        self.counters.add(&plan.counts);
        let loader = &loader;
        let outcomes: Vec<(usize, Stored)> = thread::scope(|scope| {
            let handles: Vec<_> = plan
                .fills
                .into_iter()
                .map(|(i, mut fill)| {
                    let kind = kinds[i].as_ref();
                    scope.spawn(move || {
                        let mut load = || loader(client, kind);
                        (i, self.run_fill(&mut fill, &mut load))
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for i in plan.skipped {
            report.skipped.push(kinds[i].as_ref().to_vec());
        }
        for (i, stored) in outcomes {
            let kind = kinds[i].as_ref().to_vec();
            match stored {
                Stored::Failed(f) => {
                    let entry = warm.entries()[i].clone();
                    report
                        .failed
                        .push((kind, self.error_of(f, None, None, &entry, started)));
                }
                _ => report.granted.push(kind),
            }
        }
        Ok(report)
    }
}

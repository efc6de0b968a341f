//! Warm-up by device: at app start the device names the client, and every cold kind of
//! that client is leased in one call and loaded in parallel, so a login right after finds
//! the values (or waits on the warm-up's leases instead of calling the backend again).

use std::thread;

use keyroute::cache::{
    check_device_id, check_kind, check_warm_count, decode_warm, device_key, Call, ClientKeys,
};

use super::load_error::LoadError;
use super::smart::{Loaded, SmartCache};
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
        let call = Call::warm_begin(&entries, self.checked.lease_ms, &self.owner, None);
        let fences = decode_warm(self.store.eval(&call, None)?)?;
        let loader = &loader;
        let outcomes: Vec<(usize, Loaded)> = thread::scope(|scope| {
            let handles: Vec<_> = fences
                .iter()
                .enumerate()
                .filter_map(|(i, fence)| fence.map(|f| (i, f)))
                .map(|(i, fence)| {
                    self.count_lease(false);
                    let entry = &entries[i];
                    let kind = kinds[i].as_ref();
                    scope.spawn(move || {
                        let mut load = || loader(client, kind);
                        (i, self.load_and_fill(entry, fence, &mut load))
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for (i, fence) in fences.iter().enumerate() {
            if fence.is_none() {
                report.skipped.push(kinds[i].as_ref().to_vec());
            }
        }
        for (i, loaded) in outcomes {
            let kind = kinds[i].as_ref().to_vec();
            match loaded {
                Loaded::Failed(e) => report.failed.push((kind, e)),
                _ => report.granted.push(kind),
            }
        }
        Ok(report)
    }
}

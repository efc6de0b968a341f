//! [`Devices`]: which client a device belongs to, for warm-up before login.

use std::time::Duration;

use keyroute::cache::{check_client_id, decode_flag, device_key, Call};

use super::config::ms;
use super::store::Store;
use crate::error::Result;

/// Device → client bindings on a [`Store`] (`kr:{d:<device>}`, expiring by TTL).
///
/// ```no_run
/// use std::time::Duration;
/// use keyroute_redis::cache::{Devices, Store};
/// let devices = Devices::new(Store::standalone("redis://127.0.0.1:6379", Default::default())?);
/// devices.bind("ios-7F3A", "client-42", Duration::from_secs(90 * 86400))?; // at login
/// assert_eq!(devices.client_of("ios-7F3A")?.as_deref(), Some(&b"client-42"[..]));
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Devices {
    store: Store,
}

impl Devices {
    /// Bindings on `store`.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let devices = keyroute_redis::cache::Devices::new(store);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn new(store: Store) -> Devices {
        Devices { store }
    }

    /// Binds `device` to `client` for `ttl` (replacing any binding).
    ///
    /// # Errors
    /// A bad device id (`BAD_DEVICE_ID`) or client id (`BAD_CLIENT_ID`), a TTL out of
    /// range (`BAD_TTL`); a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let devices = keyroute_redis::cache::Devices::new(store);
    /// devices.bind("ios-7F3A", "client-42", std::time::Duration::from_secs(7776000))?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn bind(
        &self,
        device: impl AsRef<[u8]>,
        client: impl AsRef<[u8]>,
        ttl: Duration,
    ) -> Result<()> {
        let key = device_key(device.as_ref())?;
        check_client_id(client.as_ref())?;
        let ttl_ms = ms("ttl", ttl, 1)?;
        let reply = self
            .store
            .eval(&Call::device_bind(&key, client.as_ref(), ttl_ms), None)?;
        decode_flag(&reply, "device-bind")?;
        Ok(())
    }

    /// The client `device` is bound to, `None` if none (unknown or expired).
    ///
    /// # Errors
    /// A bad device id (`BAD_DEVICE_ID`); a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let devices = keyroute_redis::cache::Devices::new(store);
    /// if let Some(client) = devices.client_of("ios-7F3A")? { /* warm its kinds */ }
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn client_of(&self, device: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = device_key(device.as_ref())?;
        self.store.query(&key, redis::cmd("GET").arg(&key))
    }
}

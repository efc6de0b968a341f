//! [`Store`]: where the smart cache, sessions and devices live — a standalone Redis or a
//! Redis Cluster — with a pool of connections shared by every thread, opened (and the
//! scripts loaded) when the store is made.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keyroute::cache::{Call, Notify, Value, CACHE_SCRIPTS};
use keyroute::slot::{key_slot, Address};
use redis::FromRedisValue;

use super::exec::{eval, eval_text, evalsha, to_value};
use super::wakeup::Wakeups;
use crate::cluster::{ClusterClient, ClusterConfig};
use crate::conn::{ask_one, Endpoint, MasterCheck, Place, Timeouts};
use crate::error::{Error, Result};

/// How many idle connections a store keeps (more are opened while more threads call at
/// once, and closed when they come back).
const MAX_IDLE: usize = 64;

enum Target {
    Standalone {
        endpoint: Endpoint,
    },
    Cluster {
        seeds: Vec<String>,
        config: ClusterConfig,
    },
}

enum Conn {
    Single {
        con: redis::Connection,
        io: Duration,
        /// The address it leads to (none for a Unix socket).
        at: Option<Address>,
    },
    Cluster(Box<ClusterClient>),
}

struct Inner {
    target: Target,
    shown: String,
    timeouts: Timeouts,
    idle: Mutex<Vec<Conn>>,
    wakeups: Wakeups,
    /// Behind Sentinel: the master the Sentinels named last (asked at most once a second,
    /// by whichever call comes first), so that connections to a master they no longer
    /// name are closed.
    master: Mutex<MasterCheck>,
}

/// A standalone Redis or a Redis Cluster holding smart-cache entries, sessions and
/// devices, with a pool of connections (cheap to clone, `Send + Sync`: share one per
/// process). Making it opens a connection (one per master on Cluster) and loads every
/// [cache script](keyroute::cache::CACHE_SCRIPTS), so the first call pays no set-up;
/// nothing runs in the background.
///
/// ```no_run
/// use keyroute_redis::cache::Store;
/// use keyroute_redis::Timeouts;
/// let store = Store::standalone("redis://127.0.0.1:6379", Timeouts::default())?;
/// assert!(!store.is_cluster());
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("redis", &self.inner.shown)
            .field("cluster", &self.is_cluster())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// A standalone server (`redis://[user:password@]host:port[/db]` or `host:port`).
    /// Every reply is awaited at most `timeouts.io` (and never past a call's deadline).
    ///
    /// # Errors
    /// A bad URL, or a server that cannot be reached or refuses the credentials.
    ///
    /// ```no_run
    /// let store = keyroute_redis::cache::Store::standalone("redis://:secret@10.0.0.5:6379/0", Default::default())?;
    /// assert!(!store.describe().contains("secret"));
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn standalone(url: &str, timeouts: Timeouts) -> Result<Store> {
        shared(format!("standalone\0{url}\0{timeouts:?}"), || {
            Self::open_standalone(url, timeouts)
        })
    }

    fn open_standalone(url: &str, timeouts: Timeouts) -> Result<Store> {
        let endpoint = Endpoint::parse(url)?;
        let (addr, mut con) = endpoint.open_located(timeouts)?;
        load_scripts(&mut con, endpoint.shown())?;
        let wakeups = Wakeups::new(&endpoint, addr.clone(), timeouts.connect);
        let mut master = MasterCheck::default();
        master.connected(addr.clone());
        let store = Store {
            inner: Arc::new(Inner {
                shown: endpoint.shown().to_string(),
                target: Target::Standalone { endpoint },
                timeouts,
                idle: Mutex::new(vec![Conn::Single {
                    con,
                    io: timeouts.io,
                    at: addr,
                }]),
                wakeups,
                master: Mutex::new(master),
            }),
        };
        if let Some(addr) = store.inner.wakeups.standalone_addr() {
            store.inner.wakeups.preopen(&addr);
        }
        Ok(store)
    }

    /// A Redis Cluster, from seed nodes (`redis://host:port` or `host:port`); commands are
    /// routed by slot with keyroute's [`ClusterClient`] (every key of one client is in one
    /// slot), wake-ups are shard channels (`SSUBSCRIBE` on the node owning the slot).
    ///
    /// # Errors
    /// A bad seed, or no seed answering with a topology.
    ///
    /// ```no_run
    /// use keyroute_redis::cluster::ClusterConfig;
    /// let store = keyroute_redis::cache::Store::cluster(&["redis://10.0.0.5:7000", "10.0.0.6:7000"], ClusterConfig::default())?;
    /// assert!(store.is_cluster());
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn cluster(seeds: &[&str], config: ClusterConfig) -> Result<Store> {
        shared(format!("cluster\0{}\0{config:?}", seeds.join("\0")), || {
            Self::open_cluster(seeds, config.clone())
        })
    }

    fn open_cluster(seeds: &[&str], config: ClusterConfig) -> Result<Store> {
        let client = ClusterClient::connect(seeds, config.clone())?;
        load_everywhere(&client, config.timeouts())?;
        let wakeups = Wakeups::new(client.endpoint(), None, config.connect_timeout);
        let masters: Vec<Address> = client
            .map()
            .masters()
            .map(|(_, n)| n.addr().clone())
            .collect();
        let store = Store {
            inner: Arc::new(Inner {
                target: Target::Cluster {
                    seeds: seeds.iter().map(|s| s.to_string()).collect(),
                    config: config.clone(),
                },
                shown: seeds
                    .iter()
                    .map(|s| crate::redact(s))
                    .collect::<Vec<_>>()
                    .join(","),
                timeouts: config.timeouts(),
                idle: Mutex::new(vec![Conn::Cluster(Box::new(client))]),
                wakeups,
                master: Mutex::new(MasterCheck::default()),
            }),
        };
        for addr in masters {
            store.inner.wakeups.preopen(&addr);
        }
        Ok(store)
    }

    /// Whether `self` and `other` are one store (one set of connections): every store
    /// opened on the same URL (or seeds) and timeouts in a process is.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let a = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let b = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// assert!(a.same_as(&b));
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    #[must_use]
    pub fn same_as(&self, other: &Store) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether it is a Redis Cluster.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// assert!(!store.is_cluster());
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn is_cluster(&self) -> bool {
        matches!(self.inner.target, Target::Cluster { .. })
    }

    /// The servers, passwords redacted.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// assert_eq!(store.describe(), "redis://127.0.0.1:6379");
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn describe(&self) -> &str {
        &self.inner.shown
    }

    /// How the scripts wake waiters here: `PUBLISH` standalone, `SPUBLISH` on Cluster.
    pub(crate) fn notify(&self) -> Notify {
        if self.is_cluster() {
            Notify::ShardPublish
        } else {
            Notify::Publish
        }
    }

    pub(crate) fn wakeups(&self) -> &Wakeups {
        &self.inner.wakeups
    }

    fn open(&self) -> Result<Conn> {
        match &self.inner.target {
            Target::Standalone { endpoint } => {
                let (addr, con) = endpoint.open_located(self.inner.timeouts)?;
                // Behind Sentinel the master may have changed: wake-ups follow it.
                self.inner.wakeups.set_standalone_addr(addr.clone());
                self.lock_master().connected(addr.clone());
                Ok(Conn::Single {
                    con,
                    io: self.inner.timeouts.io,
                    at: addr,
                })
            }
            Target::Cluster { seeds, config } => {
                let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
                Ok(Conn::Cluster(Box::new(ClusterClient::connect(
                    &seeds,
                    config.clone(),
                )?)))
            }
        }
    }

    /// Runs `f` on a pooled connection (opening one if none is idle); a connection that
    /// failed is closed, the others go back to the pool.
    fn with<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let pooled = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut conn = match pooled {
            // Behind Sentinel: not to a master the Sentinels no longer name.
            Some(Conn::Single { at, .. }) if self.left_master(at.as_ref()) => self.open()?,
            Some(conn) => conn,
            None => self.open()?,
        };
        let result = f(&mut conn);
        // A connection to a demoted master (READONLY) is closed too: the next one asks
        // the Sentinels again.
        if !matches!(&result, Err(e) if e.is_connection_error()
            || e.code() == keyroute::error::ErrorCode::RedisReadonly)
        {
            let mut idle = self.inner.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
        result
    }

    fn lock_master(&self) -> std::sync::MutexGuard<'_, MasterCheck> {
        self.inner.master.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Behind Sentinel, whether a connection to `at` leads to a master the Sentinels no
    /// longer name: asked at most once a second (without the lock held: a Sentinel that
    /// does not answer holds only the caller that asked), else the last answer.
    fn left_master(&self, at: Option<&Address>) -> bool {
        let endpoint = match &self.inner.target {
            Target::Standalone { endpoint }
                if matches!(endpoint.place(), Place::Sentinel { .. }) =>
            {
                endpoint
            }
            _ => return false,
        };
        let due = self.lock_master().due();
        if let Some(i) = due {
            let now = ask_one(endpoint, i, self.inner.timeouts);
            self.lock_master().answered(i, now);
        }
        self.lock_master().stale(at)
    }

    /// Runs a script call, waiting for the reply at most until `deadline` (and at most the
    /// I/O timeout).
    pub(crate) fn eval(&self, call: &Call<'_>, deadline: Option<Instant>) -> Result<Value> {
        let timeouts = self.inner.timeouts;
        self.with(|conn| match conn {
            Conn::Single { con, io, .. } => {
                let want = bounded(timeouts.io, deadline);
                if want != *io {
                    con.set_read_timeout(Some(want))
                        .and_then(|()| con.set_write_timeout(Some(want)))
                        .map_err(|e| Error::from_redis("set timeout", &e, None))?;
                    *io = want;
                }
                eval(con, call)
            }
            Conn::Cluster(client) => eval_cluster(client, call, timeouts),
        })
    }

    /// Runs a single-key command (routed by `key` on Cluster).
    pub(crate) fn query<T: FromRedisValue>(&self, key: &[u8], cmd: &redis::Cmd) -> Result<T> {
        self.with(|conn| match conn {
            Conn::Single { con, .. } => cmd
                .query(con)
                .map_err(|e| Error::from_redis(&cmd_name(cmd), &e, None)),
            Conn::Cluster(client) => client.query_key(key, cmd),
        })
    }

    /// The node serving `slot` (the server itself when standalone).
    pub(crate) fn node_for_slot(&self, slot: u16) -> Option<Address> {
        if let Some(addr) = self.inner.wakeups.standalone_addr() {
            return Some(addr);
        }
        self.with(|conn| match conn {
            Conn::Cluster(client) => Ok(client.map().node_for_slot(slot).map(|n| n.addr().clone())),
            Conn::Single { .. } => Ok(None),
        })
        .ok()
        .flatten()
    }
}

/// The stores open in this process, by what they were opened with (the URLs as given,
/// never printed, and the timeouts): `SmartCache`, `Sessions` and `Devices` opened on one
/// URL in one process, from any binding, share one store and its connections. Entries
/// whose store was dropped are pruned at each open, so the list holds at most the live
/// stores.
static SHARED: Mutex<Vec<(String, std::sync::Weak<Inner>)>> = Mutex::new(Vec::new());

fn shared(key: String, open: impl FnOnce() -> Result<Store>) -> Result<Store> {
    {
        let mut open_now = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        open_now.retain(|(_, w)| w.strong_count() > 0);
        if let Some(inner) = open_now
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(Store { inner });
        }
    }
    // Opened without the lock held: connecting may take the whole connect timeout.
    let store = open()?;
    SHARED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, Arc::downgrade(&store.inner)));
    Ok(store)
}

fn cmd_name(cmd: &redis::Cmd) -> String {
    match cmd.args_iter().next() {
        Some(redis::Arg::Simple(name)) => String::from_utf8_lossy(name).into_owned(),
        _ => String::new(),
    }
}

/// The I/O bound of one call: `io`, cut to the deadline, at least 1 ms, whole ms (so that
/// it rarely changes between calls).
fn bounded(io: Duration, deadline: Option<Instant>) -> Duration {
    let left = deadline.map_or(io, |d| d.saturating_duration_since(Instant::now()));
    let ms = io.min(left).as_millis().max(1);
    Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

fn load_scripts(con: &mut dyn redis::ConnectionLike, place: &str) -> Result<()> {
    for script in CACHE_SCRIPTS {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(script.text())
            .query(con)
            .map_err(|e| {
                Error::from_redis(
                    &format!("SCRIPT LOAD {} on {place}", script.name()),
                    &e,
                    None,
                )
            })?;
        if sha != script.sha1() {
            return Err(Error::protocol(
                format!("SCRIPT LOAD {} on {place}", script.name()),
                format!("the server's SHA1 is {sha}, not {}", script.sha1()),
            ));
        }
    }
    Ok(())
}

/// Loads every cache script on every master of the cluster (scripts are cached per node).
fn load_everywhere(client: &ClusterClient, timeouts: Timeouts) -> Result<()> {
    for (_, node) in client.map().masters() {
        let mut con = client.endpoint().open_node_raw(node.addr(), timeouts)?;
        load_scripts(&mut con, &node.addr().to_string())?;
    }
    Ok(())
}

/// Runs a script call on the Cluster master serving its first key's slot with `EVALSHA`.
/// On `NOSCRIPT` (a node that joined or restarted, or a replica promoted by a failover, whose
/// script cache is empty) it refreshes the slot map, loads every cache script on every
/// master and retries with the script's text, up to three times.
///
/// # Errors
/// A connection error or timeout, a server error (script errors included: the script
/// changed nothing), or a failed `SCRIPT LOAD`.
///
/// ```no_run
/// use keyroute::cache::{decode_flag, Call};
/// use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
/// let mut client = ClusterClient::connect(&["redis://127.0.0.1:7000"], ClusterConfig::default())?;
/// let call = Call::extend(b"kr:{c:t}:e:k", 7, 2000, None);
/// let reply = keyroute_redis::cache::eval_cluster(&mut client, &call, Default::default())?;
/// assert!(!decode_flag(&reply, "sc-extend").map_err(keyroute_redis::Error::from)?);
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
pub fn eval_cluster(
    client: &mut ClusterClient,
    call: &Call<'_>,
    timeouts: Timeouts,
) -> Result<Value> {
    let slot = call.keys.first().map_or(0, |k| key_slot(k));
    let mut cmd = evalsha(call);
    let mut rounds = 0;
    loop {
        match client.query_slot::<redis::Value>(slot, &cmd) {
            Ok(v) => {
                return to_value(v).map_err(|e| super::exec::server_error(call.script.name(), e))
            }
            Err(Error::Server { code, .. }) if code == "NOSCRIPT" && rounds < 3 => {
                // A node that joined or restarted: load on every master and retry. Right
                // after a failover the refreshed map may still name the old master, and
                // the load miss the promoted replica that answered: the retry carries the
                // script's text (EVAL runs and caches it on whichever node answers).
                rounds += 1;
                let _ = client.refresh();
                load_everywhere(client, timeouts)?;
                cmd = eval_text(call);
            }
            Err(e) => return Err(e),
        }
    }
}

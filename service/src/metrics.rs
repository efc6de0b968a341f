//! Prometheus metrics (OpenMetrics text) with the `prometheus-client` crate; served on
//! `GET /metrics` by [`crate::metrics_http`].

use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::store::{Store, StoreStats};

type Labels = Vec<(String, String)>;

fn hist() -> Histogram {
    // 100 µs to ~3.3 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

/// Every metric of the service. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<Labels, Counter>,
    pub(crate) errors: Family<Labels, Counter>,
    pub(crate) latency: Family<Labels, Histogram, fn() -> Histogram>,
    pub(crate) queue_depth: Gauge,
    pub(crate) queue_capacity: Gauge,
    pub(crate) parked: Gauge,
    pub(crate) threads_busy: Gauge,
    pub(crate) workers: Family<Labels, Gauge>,
    pub(crate) loads: Family<Labels, Counter>,
    pub(crate) worker_drops: Counter,
    replies_dropped: Family<Labels, Counter>,
    auth: Family<Labels, Counter>,
    panics: Family<Labels, Counter>,
    client_buffer_bytes: Gauge,
    client_buffer_peers: Gauge,
    cache_hits: Counter,
    cache_misses: Counter,
    backend_loads: Counter,
    takeovers: Counter,
    fenced_fills: Counter,
    store_info: Family<Labels, Gauge>,
    last: Mutex<StoreStats>,
}

impl Metrics {
    /// Every metric at zero.
    ///
    /// ```
    /// let m = keyroute_serve::Metrics::new();
    /// assert!(m.render(None).contains("keyroute_serve_queue_depth"));
    /// ```
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("keyroute_serve");
        let m = Metrics {
            requests: Family::default(),
            errors: Family::default(),
            latency: Family::new_with_constructor(hist as fn() -> Histogram),
            queue_depth: Gauge::default(),
            queue_capacity: Gauge::default(),
            parked: Gauge::default(),
            threads_busy: Gauge::default(),
            workers: Family::default(),
            loads: Family::default(),
            worker_drops: Counter::default(),
            replies_dropped: Family::default(),
            auth: Family::default(),
            panics: Family::default(),
            client_buffer_bytes: Gauge::default(),
            client_buffer_peers: Gauge::default(),
            cache_hits: Counter::default(),
            cache_misses: Counter::default(),
            backend_loads: Counter::default(),
            takeovers: Counter::default(),
            fenced_fills: Counter::default(),
            store_info: Family::default(),
            last: Mutex::new(StoreStats::default()),
            registry: Registry::default(),
        };
        let r = &mut registry;
        r.register(
            "requests",
            "Requests received, by message type",
            m.requests.clone(),
        );
        r.register("errors", "Answers that were errors, by message type and code (transport error name or data error code)", m.errors.clone());
        r.register(
            "request_duration_seconds",
            "Time from receipt to answer, by message type",
            m.latency.clone(),
        );
        r.register(
            "queue_depth",
            "Requests waiting in the queue",
            m.queue_depth.clone(),
        );
        r.register(
            "queue_capacity",
            "Capacity of the queue",
            m.queue_capacity.clone(),
        );
        r.register(
            "parked_waiters",
            "product.get requests waiting for another request's load (no thread, no queue slot)",
            m.parked.clone(),
        );
        r.register(
            "threads_busy",
            "Threads running a request",
            m.threads_busy.clone(),
        );
        r.register(
            "workers",
            "Loader worker capacity per kind, busy or idle",
            m.workers.clone(),
        );
        r.register(
            "worker_loads",
            "Loads sent to loader workers, by kind and outcome",
            m.loads.clone(),
        );
        r.register(
            "worker_drops",
            "Loader workers dropped after missing their heartbeat",
            m.worker_drops.clone(),
        );
        r.register(
            "replies_dropped",
            "Replies dropped, by reason: client_buffer_full (a client that does not read, past --client-buffer-bytes or --client-buffers-total-bytes) or client_gone",
            m.replies_dropped.clone(),
        );
        r.register(
            "auth",
            "CURVE peers the ZAP handler admitted or refused, by socket (clients, workers) and outcome (allowed, refused)",
            m.auth.clone(),
        );
        r.register(
            "panics",
            "Panics (bugs) caught, by where: request (a store call, answered INTERNAL), reply (encoding a reply, answered INTERNAL) or broker (the broker loop, which goes on)",
            m.panics.clone(),
        );
        r.register(
            "client_buffer_bytes",
            "Bytes of replies waiting for clients that do not read fast enough",
            m.client_buffer_bytes.clone(),
        );
        r.register(
            "client_buffer_clients",
            "Clients with replies waiting",
            m.client_buffer_peers.clone(),
        );
        r.register(
            "cache_hits",
            "Values served from the store",
            m.cache_hits.clone(),
        );
        r.register(
            "cache_misses",
            "Misses this instance leased and loaded",
            m.cache_misses.clone(),
        );
        r.register(
            "backend_loads",
            "Loads run (backend calls)",
            m.backend_loads.clone(),
        );
        r.register(
            "takeovers",
            "Leases taken over from a loader that stopped heartbeating",
            m.takeovers.clone(),
        );
        r.register(
            "fenced_fills",
            "Loaded values discarded by the fence (invalidated or taken over)",
            m.fenced_fills.clone(),
        );
        r.register(
            "store",
            "The store in use: address and role (1)",
            m.store_info.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Counts a request of `ty` answered with `outcome` after `seconds`.
    pub(crate) fn answered(&self, ty: &str, outcome: &str, seconds: f64) {
        let t = vec![("type".to_string(), ty.to_string())];
        self.latency.get_or_create(&t).observe(seconds);
        if outcome != "ok" {
            let l = vec![
                ("type".to_string(), ty.to_string()),
                ("code".to_string(), outcome.to_string()),
            ];
            self.errors.get_or_create(&l).inc();
        }
    }

    /// A CURVE peer admitted or refused by the ZAP handler.
    pub(crate) fn auth(&self, socket: &'static str, outcome: &'static str) {
        self.auth
            .get_or_create(&vec![
                ("socket".to_string(), socket.to_string()),
                ("outcome".to_string(), outcome.to_string()),
            ])
            .inc();
    }

    /// Counts a panic caught (`place`: `request`, `reply` or `broker`).
    pub(crate) fn panicked(&self, place: &'static str) {
        self.panics
            .get_or_create(&vec![("where".to_string(), place.to_string())])
            .inc();
    }

    /// Counts replies dropped (`reason`: `client_buffer_full` or `client_gone`).
    pub(crate) fn reply_dropped(&self, reason: &'static str, n: u64) {
        self.replies_dropped
            .get_or_create(&vec![("reason".to_string(), reason.to_string())])
            .inc_by(n);
    }

    /// The replies waiting for clients.
    pub(crate) fn client_buffers(&self, outbox: &crate::outbox::Outbox) {
        self.client_buffer_bytes
            .set(i64::try_from(outbox.bytes()).unwrap_or(i64::MAX));
        self.client_buffer_peers
            .set(i64::try_from(outbox.peers()).unwrap_or(i64::MAX));
    }

    /// Counts a request received.
    pub(crate) fn received(&self, ty: &str) {
        self.requests
            .get_or_create(&vec![("type".to_string(), ty.to_string())])
            .inc();
    }

    /// The OpenMetrics text, with the store's counters and info brought up to date.
    pub fn render(&self, store: Option<&dyn Store>) -> String {
        if let Some(store) = store {
            let now = store.stats();
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            let d = |a: u64, b: u64| a.saturating_sub(b);
            self.cache_hits.inc_by(d(now.hits, last.hits));
            self.cache_misses.inc_by(d(now.misses, last.misses));
            self.backend_loads
                .inc_by(d(now.backend_loads, last.backend_loads));
            self.takeovers.inc_by(d(now.takeovers, last.takeovers));
            self.fenced_fills
                .inc_by(d(now.fenced_fills, last.fenced_fills));
            *last = now;
            let info = store.info();
            self.store_info.clear();
            self.store_info
                .get_or_create(&vec![
                    ("address".to_string(), info.address),
                    ("role".to_string(), info.role),
                ])
                .set(1);
        }
        let mut out = String::new();
        let _ = encode(&mut out, &self.registry);
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

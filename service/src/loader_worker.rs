//! [`LoaderWorker`]: a loader worker in Rust. It connects to the broker's worker endpoint,
//! declares its kinds and capacity (`worker.ready`, repeated as the heartbeat), runs each
//! `load` through your function on one of `capacity` threads, and answers `loaded` (the
//! value as the payload) or `failed`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keyroute::frame::{Header, MsgType, HEADER_FIXED_LEN};
pub use keyroute_redis::cache::LoadError;
use serde::Deserialize;
use serde_json::json;

use crate::error::ServeError;

/// How often `worker.ready` is repeated (the broker drops a worker silent for
/// `--worker-timeout-ms`, 3 s by default).
pub const HEARTBEAT: Duration = Duration::from_millis(500);

type LoadFn = dyn Fn(&str, &str) -> Result<Vec<u8>, LoadError> + Send + Sync;

/// A loader worker.
///
/// ```no_run
/// use keyroute_serve::{loader_worker::LoadError, LoaderWorker};
/// let worker = LoaderWorker::new("tcp://127.0.0.1:5556", &["accounts", "cards"], |client, kind| {
///     // call the slow backend
///     Ok::<_, LoadError>(format!("[{client}:{kind}]").into_bytes())
/// });
/// worker.run()?; // until worker.stop_flag() is set
/// # Ok::<(), keyroute_serve::ServeError>(())
/// ```
pub struct LoaderWorker {
    endpoint: String,
    kinds: Vec<String>,
    capacity: usize,
    load: Arc<LoadFn>,
    stop: Arc<AtomicBool>,
    curve: Option<crate::curve::PeerKeys>,
}

impl std::fmt::Debug for LoaderWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoaderWorker")
            .field("endpoint", &self.endpoint)
            .field("kinds", &self.kinds)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Load {
    client: String,
    kind: String,
    fence: u64,
}

impl LoaderWorker {
    /// A worker for `kinds` at `endpoint` (capacity 1: one load at a time).
    ///
    /// ```
    /// let w = keyroute_serve::LoaderWorker::new("tcp://127.0.0.1:1", &["cards"], |_, _| Ok(Vec::new()));
    /// assert_eq!(format!("{w:?}"), r#"LoaderWorker { endpoint: "tcp://127.0.0.1:1", kinds: ["cards"], capacity: 1, .. }"#);
    /// ```
    pub fn new<F>(endpoint: &str, kinds: &[&str], load: F) -> LoaderWorker
    where
        F: Fn(&str, &str) -> Result<Vec<u8>, LoadError> + Send + Sync + 'static,
    {
        LoaderWorker {
            endpoint: endpoint.to_string(),
            kinds: kinds.iter().map(|k| k.to_string()).collect(),
            capacity: 1,
            load: Arc::new(load),
            stop: Arc::new(AtomicBool::new(false)),
            curve: None,
        }
    }

    /// How many loads it runs at once (each on its own thread); at least 1.
    ///
    /// ```
    /// let w = keyroute_serve::LoaderWorker::new("tcp://127.0.0.1:1", &["cards"], |_, _| Ok(Vec::new())).capacity(4);
    /// assert!(format!("{w:?}").contains("capacity: 4"));
    /// ```
    #[must_use]
    pub fn capacity(mut self, n: usize) -> LoaderWorker {
        self.capacity = n.max(1);
        self
    }

    /// Connects with CURVE, to a service started with `--curve-secret-key` whose
    /// `--curve-worker-keys` lists `keys.public`.
    ///
    /// ```
    /// use keyroute_serve::curve::PeerKeys;
    /// let keys = PeerKeys { server: [1; 32], public: [2; 32], secret: [3; 32] };
    /// let w = keyroute_serve::LoaderWorker::new("tcp://127.0.0.1:1", &["cards"], |_, _| Ok(Vec::new())).curve(keys);
    /// assert!(!format!("{w:?}").contains("secret"));
    /// ```
    #[must_use]
    pub fn curve(mut self, keys: crate::curve::PeerKeys) -> LoaderWorker {
        self.curve = Some(keys);
        self
    }

    /// Set it to make [`run`](Self::run) return (within ~50 ms, after the loads running).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Serves loads until the stop flag is set.
    ///
    /// # Errors
    /// [`ServeError::Zmq`] when the socket cannot be made or connected.
    pub fn run(&self) -> Result<(), ServeError> {
        let zerr = |what: &'static str| move |e| ServeError::Zmq(what.to_string(), e);
        let ctx = zmq::Context::new();
        let sock = ctx.socket(zmq::DEALER).map_err(zerr("socket"))?;
        sock.set_linger(500).map_err(zerr("ZMQ_LINGER"))?;
        if let Some(keys) = &self.curve {
            keys.apply(&sock).map_err(zerr("ZMQ_CURVE"))?;
        }
        sock.connect(&self.endpoint).map_err(zerr("connect"))?;
        let (jobs_tx, jobs_rx) = mpsc::channel::<Load>();
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let (done_tx, done_rx) = mpsc::channel::<(u64, Result<Vec<u8>, LoadError>)>();
        let mut threads = Vec::new();
        for _ in 0..self.capacity {
            let rx = Arc::clone(&jobs_rx);
            let tx = done_tx.clone();
            let load = Arc::clone(&self.load);
            threads.push(std::thread::spawn(move || loop {
                let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                let Ok(job) = job else { return };
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    load(&job.client, &job.kind)
                }))
                .unwrap_or_else(|_| Err(LoadError::new("PANIC", "the load function panicked")));
                if tx.send((job.fence, out)).is_err() {
                    return;
                }
            }));
        }
        drop(done_tx);
        let ready = json!({ "kinds": self.kinds, "capacity": self.capacity }).to_string();
        let mut last_ready = Instant::now() - HEARTBEAT;
        let mut seq = 0u64;
        while !self.stop.load(Ordering::Relaxed) {
            if last_ready.elapsed() >= HEARTBEAT {
                seq += 1;
                send(&sock, MsgType::WorkerReady, seq, ready.as_bytes(), None)?;
                last_ready = Instant::now();
            }
            while let Ok((fence, out)) = done_rx.try_recv() {
                seq += 1;
                match out {
                    Ok(value) => {
                        let body = json!({ "fence": fence }).to_string();
                        send(&sock, MsgType::Loaded, seq, body.as_bytes(), Some(&value))?;
                    }
                    Err(e) => {
                        let body =
                            json!({ "fence": fence, "code": e.code(), "message": e.message() })
                                .to_string();
                        send(&sock, MsgType::Failed, seq, body.as_bytes(), None)?;
                    }
                }
            }
            match sock.poll(zmq::POLLIN, 20) {
                Ok(0) | Err(zmq::Error::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(zerr("poll")(e)),
            }
            while let Ok(frames) = sock.recv_multipart(zmq::DONTWAIT) {
                let Some(head) = frames.first() else { continue };
                let Ok(h) = Header::decode(head) else {
                    continue;
                };
                if h.kind() == Some(MsgType::Load) && !h.is_reply() {
                    if let Some(Ok(load)) = frames.get(1).map(|b| serde_json::from_slice::<Load>(b))
                    {
                        if self.kinds.contains(&load.kind) {
                            let _ = jobs_tx.send(load);
                        } else {
                            // Never run the load function for a kind this worker did not
                            // declare: answer at once, which also frees the broker's slot.
                            tracing::warn!(kind = %load.kind, "a load for a kind this worker did not declare: refused");
                            seq += 1;
                            let body = undeclared(&load).to_string();
                            send(&sock, MsgType::Failed, seq, body.as_bytes(), None)?;
                        }
                    }
                } else if h.transport_error != 0 || h.is_data_error() {
                    tracing::warn!(
                        error = h.transport_error,
                        body = %String::from_utf8_lossy(frames.get(1).map_or(&[][..], Vec::as_slice)),
                        "the broker refused a message of this worker"
                    );
                }
            }
        }
        drop(jobs_tx);
        for t in threads {
            let _ = t.join();
        }
        Ok(())
    }
}

/// The `failed` body for a load of a kind the worker did not declare.
fn undeclared(load: &Load) -> serde_json::Value {
    json!({
        "fence": load.fence,
        "code": UNDECLARED_KIND,
        "message": format!("this worker did not declare the kind {:?}", load.kind),
    })
}

/// The code of a worker's `failed` answer to a load of a kind it did not declare.
pub const UNDECLARED_KIND: &str = "UNDECLARED_KIND";

fn send(
    sock: &zmq::Socket,
    ty: MsgType,
    seq: u64,
    body: &[u8],
    payload: Option<&[u8]>,
) -> Result<(), ServeError> {
    let mut id = [0u8; 16];
    id[8..].copy_from_slice(&seq.to_be_bytes());
    let h = Header::request(ty, id);
    let mut head = [0u8; HEADER_FIXED_LEN];
    let _ = h.encode_into(&mut head);
    let flags = if payload.is_some() { zmq::SNDMORE } else { 0 };
    let r = sock
        .send(&head[..], zmq::SNDMORE)
        .and_then(|()| sock.send(body, flags))
        .and_then(|()| payload.map_or(Ok(()), |p| sock.send(p, 0)));
    r.map_err(|e| ServeError::Zmq("send".into(), e))
}

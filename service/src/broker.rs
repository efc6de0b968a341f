//! The broker: one thread owns the ZeroMQ sockets, reads headers, queues requests,
//! hands them to the threads, sends loads to the workers and answers every accepted
//! request exactly once.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keyroute::cache::SessionId;
use keyroute::error::ErrorCode;
use keyroute::frame::{Header, MsgType, TransportError, HEADER_FIXED_LEN};
use keyroute::queue::{DeadlineQueue, Popped};
use serde_json::json;
use tracing::{debug, error, info, warn};

use crate::cmd::{self, Ctx, Loads, Request, Settings};
use crate::config::Config;
use crate::error::ServeError;
use crate::metrics::Metrics;
use crate::outbox::{Outbox, Sent, CLIENT_SNDHWM};
use crate::proto::{header_refusal, internal, reply_frames, reply_frames_guarded, Answer};
use crate::store::{LoadFailure, Store};
use crate::throttle::{LogThrottle, RequestLog, REQUEST_LINES};
use crate::worker_msg::{parse_worker, WorkerMsg};
use crate::workers::Workers;

/// The most kinds that get a label of their own in the loads metric.
const MAX_KIND_LABELS: usize = 1024;
/// Messages read from one socket before looking at the others.
const BATCH: usize = 512;
/// How often timers are looked at.
const TICK: Duration = Duration::from_millis(5);
/// The ZAP handler's endpoint (RFC 27), and the domains of the two sockets.
const ZAP_ENDPOINT: &str = "inproc://zeromq.zap.01";
const CLIENTS_DOMAIN: &str = "keyroute.clients";
const WORKERS_DOMAIN: &str = "keyroute.workers";
/// After the grace deadline, how long replies waiting for slow readers are still offered.
const FINAL_FLUSH: Duration = Duration::from_secs(1);

/// What a thread or a loader tells the broker.
pub(crate) enum Event {
    /// A request ran.
    Done {
        token: u64,
        answer: Answer,
        timing: Timing,
    },
    /// A loader needs a value from a worker.
    NeedLoad {
        client: String,
        kind: String,
        deadline: Instant,
        reply: SyncSender<Result<Vec<u8>, LoadFailure>>,
    },
}

/// The way back to the broker from other threads: a channel plus a doorbell (a Unix
/// socket pair, not a ZeroMQ socket: the threads hold no ZeroMQ socket, so when the broker
/// returns it owns the last ones and terminating the context flushes every reply).
#[derive(Clone)]
pub(crate) struct Mailbox {
    tx: Sender<Event>,
    bell: Arc<UnixStream>,
    /// The kinds the workers declared (for app.start and /readyz), kept by the broker.
    kinds: Arc<Mutex<Vec<String>>>,
    /// The time this thread's request spent waiting for loads (each thread's mailbox has
    /// its own).
    clock: Arc<LoadClock>,
}

/// Where a request's time went on its thread (for the request log).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Timing {
    /// In the store (its calls, minus the time waiting for loads).
    store: Duration,
    /// Waiting for loader workers (the time at least one load was in flight).
    load: Duration,
}

/// The wall time during which at least one load of a request was in flight (the loads
/// of an `app.start` run in parallel).
#[derive(Debug, Default)]
struct LoadClock {
    state: Mutex<(usize, Option<Instant>, Duration)>,
}

impl LoadClock {
    fn begin(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.0 == 0 {
            s.1 = Some(Instant::now());
        }
        s.0 += 1;
    }

    fn end(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 = s.0.saturating_sub(1);
        if s.0 == 0 {
            if let Some(since) = s.1.take() {
                s.2 += since.elapsed();
            }
        }
    }

    /// The time counted since the last call, and a fresh start.
    fn take(&self) -> Duration {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::replace(&mut *s, (0, None, Duration::ZERO)).2
    }
}

impl Loads for Mailbox {
    fn load(&self, client: &str, kind: &str, deadline: Instant) -> Result<Vec<u8>, LoadFailure> {
        Mailbox::load(self, client, kind, deadline)
    }

    fn kinds(&self) -> Vec<String> {
        self.kinds.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Mailbox {
    fn set_kinds(&self, kinds: Vec<String>) {
        *self.kinds.lock().unwrap_or_else(|e| e.into_inner()) = kinds;
    }

    pub(crate) fn send(&self, e: Event) {
        if self.tx.send(e).is_ok() {
            // Non-blocking: a full pipe has rung already.
            let _ = (&*self.bell).write(&[1]);
        }
    }

    /// Asks a worker for `(client, kind)`; waits at most until `deadline`.
    pub(crate) fn load(
        &self,
        client: &str,
        kind: &str,
        deadline: Instant,
    ) -> Result<Vec<u8>, LoadFailure> {
        struct Timed<'a>(&'a LoadClock);
        impl Drop for Timed<'_> {
            fn drop(&mut self) {
                self.0.end();
            }
        }
        self.clock.begin();
        let _timed = Timed(&self.clock);
        let (reply, rx) = mpsc::sync_channel(1);
        self.send(Event::NeedLoad {
            client: client.to_string(),
            kind: kind.to_string(),
            deadline,
            reply,
        });
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(r) => r,
            Err(_) => Err(LoadFailure::Transport(TransportError::LoadTimeout)),
        }
    }
}

struct Job {
    token: u64,
    req: Box<dyn Request>,
    /// The session of its header.
    session: Option<SessionId>,
    deadline: Instant,
    /// For the request's span.
    id: [u8; 16],
    ty: MsgType,
}

/// An accepted request, until it is answered.
struct Pending {
    identity: Vec<Vec<u8>>,
    header: Vec<u8>,
    ty: MsgType,
    received: Instant,
    deadline: Instant,
    class: usize,
    req: Option<Box<dyn Request>>,
    session: Option<SessionId>,
    running: bool,
    flight: Option<FlightKey>,
    /// It was parked behind another request's load (then promoted to lead its own).
    parked: bool,
    /// When a thread took it, and where its time went there (for the request log).
    started: Option<Instant>,
    timing: Timing,
}

struct Load {
    client: String,
    kind: String,
    deadline: Instant,
    reply: SyncSender<Result<Vec<u8>, LoadFailure>>,
    worker: Option<Vec<u8>>,
}

/// The key of a single flight: `(client, kind)` and the session it runs under (each
/// session is checked by a request of its own).
type FlightKey = (String, String, Option<SessionId>);

/// The broker's state (owned by its thread).
pub(crate) struct Broker {
    config: Config,
    metrics: Arc<Metrics>,
    clients: zmq::Socket,
    workers_sock: zmq::Socket,
    bell: UnixStream,
    events: Receiver<Event>,
    mailbox: Mailbox,
    jobs: Sender<Job>,
    idle_threads: usize,
    queue: DeadlineQueue<u64>,
    pending: HashMap<u64, Pending>,
    /// product.get in flight per (client, kind, session): the leader's token and the
    /// parked waiters (tokens grow with arrival, so the set is in arrival order).
    flights: HashMap<FlightKey, (u64, BTreeSet<u64>)>,
    /// Every parked waiter by deadline: the timer answers the due ones without looking
    /// at the others.
    parked: BTreeSet<(Instant, u64)>,
    /// The kinds the connected workers declared, and those that got a metrics label.
    declared: HashSet<String>,
    labelled: HashSet<String>,
    running: Vec<usize>,
    caps: Vec<usize>,
    class_of: HashMap<String, usize>,
    workers: Workers,
    loads: HashMap<u64, Load>,
    waiting_loads: VecDeque<u64>,
    next_token: u64,
    next_fence: u64,
    epoch: Instant,
    stopping: Option<Instant>,
    /// The grace deadline passed and what was left was answered `SHUTTING_DOWN`.
    abandoned: bool,
    stop: Arc<AtomicBool>,
    last_gauges: Instant,
    /// Replies waiting for clients whose ZeroMQ queue is full.
    outbox: Outbox,
    /// The ZAP handler's socket, with CURVE on (`--curve-secret-key`).
    zap: Option<zmq::Socket>,
    /// When a refused key was last logged (at most one line a second).
    last_refusal_log: LogThrottle,
    /// The lines about failed and slow requests (at most [`REQUEST_LINES`] a second).
    request_log: RequestLog,
}

fn zerr(what: &str) -> impl FnOnce(zmq::Error) -> ServeError + '_ {
    move |e| ServeError::Zmq(what.to_string(), e)
}

impl Broker {
    pub(crate) fn new(
        config: Config,
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        stop: Arc<AtomicBool>,
        declared: Arc<Mutex<Vec<String>>>,
        ctx: &zmq::Context,
    ) -> Result<Broker, ServeError> {
        config.check()?;
        let hard_max =
            i64::try_from((config.max_frame.saturating_mul(4)).max(128 << 20)).unwrap_or(i64::MAX);
        // `mandatory`: a send to a full peer fails (EAGAIN) and one to a gone peer too
        // (EHOSTUNREACH), instead of queueing without bound or dropping silently; the
        // client socket's replies then wait in the byte-bounded [`Outbox`].
        // CURVE: the ZAP handler must be bound before a socket that consults it.
        let zap = match &config.curve {
            Some(_) => {
                let z = ctx.socket(zmq::REP).map_err(zerr("socket"))?;
                z.set_linger(0).map_err(zerr("ZMQ_LINGER"))?;
                z.bind(ZAP_ENDPOINT).map_err(zerr(ZAP_ENDPOINT))?;
                Some(z)
            }
            None => None,
        };
        let curve = config.curve.as_ref();
        let router = |endpoint: &str, sndhwm: i32, mandatory: bool, domain: &str| {
            let s = ctx.socket(zmq::ROUTER).map_err(zerr("socket"))?;
            if let Some(c) = curve {
                s.set_curve_server(true).map_err(zerr("ZMQ_CURVE_SERVER"))?;
                s.set_curve_secretkey(&c.secret)
                    .map_err(zerr("ZMQ_CURVE_SECRETKEY"))?;
                s.set_zap_domain(domain).map_err(zerr("ZMQ_ZAP_DOMAIN"))?;
            }
            s.set_maxmsgsize(hard_max).map_err(zerr("ZMQ_MAXMSGSIZE"))?;
            s.set_linger(5000).map_err(zerr("ZMQ_LINGER"))?;
            s.set_sndhwm(sndhwm).map_err(zerr("ZMQ_SNDHWM"))?;
            s.set_rcvhwm(100_000).map_err(zerr("ZMQ_RCVHWM"))?;
            s.set_router_mandatory(mandatory)
                .map_err(zerr("ZMQ_ROUTER_MANDATORY"))?;
            s.bind(endpoint).map_err(zerr(endpoint))?;
            if curve.is_none() && !crate::curve::is_loopback(endpoint) {
                warn!(
                    endpoint,
                    "this socket binds beyond loopback without CURVE: any host that reaches it is trusted (see --curve-secret-key and docs/protocol.md#trust)"
                );
            }
            Ok::<zmq::Socket, ServeError>(s)
        };
        let clients = router(&config.bind, CLIENT_SNDHWM, true, CLIENTS_DOMAIN)?;
        // Loads are small (a kind and a key) and bounded by the loads in flight.
        let workers_sock = router(&config.workers_bind, 100_000, false, WORKERS_DOMAIN)?;
        let (bell, push) = UnixStream::pair().map_err(|e| ServeError::Io("doorbell".into(), e))?;
        for end in [&bell, &push] {
            end.set_nonblocking(true)
                .map_err(|e| ServeError::Io("doorbell".into(), e))?;
        }
        let (tx, events) = mpsc::channel();
        let mailbox = Mailbox {
            tx,
            bell: Arc::new(push),
            kinds: declared,
            clock: Arc::default(),
        };
        let mut caps = vec![usize::MAX];
        let mut class_of = HashMap::new();
        for (kind, n) in &config.caps {
            class_of.insert(kind.clone(), caps.len());
            caps.push(*n);
        }
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let settings = Settings::of(&config);
        for i in 0..config.threads {
            let rx = Arc::clone(&job_rx);
            let store = Arc::clone(&store);
            let mailbox = Mailbox {
                clock: Arc::default(),
                ..mailbox.clone()
            };
            let metrics = Arc::clone(&metrics);
            std::thread::Builder::new()
                .name(format!("serve-{i}"))
                .stack_size(256 << 10)
                .spawn(move || run_jobs(&rx, store.as_ref(), &mailbox, &metrics, &settings))
                .map_err(|e| ServeError::Io("thread".into(), e))?;
        }
        metrics
            .queue_capacity
            .set(i64::try_from(config.queue).unwrap_or(i64::MAX));
        if let Some(c) = &config.curve {
            info!(
                public_key = c.public.as_deref().unwrap_or("(not in the key file)"),
                workers = c.workers.len(),
                clients = c
                    .clients
                    .as_ref()
                    .map_or("any".to_string(), |k| k.len().to_string()),
                "CURVE on both sockets: workers and clients must know this public key"
            );
        }
        Ok(Broker {
            zap,
            last_refusal_log: LogThrottle::new(),
            request_log: RequestLog::default(),
            outbox: Outbox::new(
                config.client_buffer_bytes,
                config.client_buffers_total_bytes,
            ),
            queue: DeadlineQueue::new(config.queue, caps.len()),
            pending: HashMap::with_capacity(config.queue + config.threads),
            idle_threads: config.threads,
            running: vec![0; caps.len()],
            caps,
            class_of,
            config,
            metrics,
            clients,
            workers_sock,
            bell,
            events,
            mailbox,
            jobs,
            flights: HashMap::new(),
            parked: BTreeSet::new(),
            declared: HashSet::new(),
            labelled: HashSet::new(),
            workers: Workers::default(),
            loads: HashMap::new(),
            waiting_loads: VecDeque::new(),
            next_token: 0,
            next_fence: 0,
            epoch: Instant::now(),
            stopping: None,
            abandoned: false,
            stop,
            last_gauges: Instant::now(),
        })
    }

    /// Runs until stopped (the stop flag) and drained.
    pub(crate) fn run(mut self) -> Result<(), ServeError> {
        let mut next_tick = Instant::now();
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            // Replies waiting for a client that is due: look again at once.
            let ms = match self.outbox.next_due() {
                Some(due) if due <= Instant::now() => 0,
                Some(due) => i64::try_from(wait.min(due - Instant::now()).as_millis())
                    .unwrap_or(5)
                    .max(1),
                None => i64::try_from(wait.as_millis()).unwrap_or(5).max(1),
            };
            let [c, w, b] = [
                self.clients.as_poll_item(zmq::POLLIN),
                self.workers_sock.as_poll_item(zmq::POLLIN),
                zmq::PollItem::from_fd(self.bell.as_raw_fd(), zmq::POLLIN),
            ];
            // No allocation per turn: the ZAP socket is a fourth item only with CURVE.
            let polled = match &self.zap {
                Some(z) => zmq::poll(&mut [c, w, b, z.as_poll_item(zmq::POLLIN)], ms),
                None => zmq::poll(&mut [c, w, b], ms),
            };
            match polled {
                Ok(_) | Err(zmq::Error::EINTR) => {}
                Err(e) => return Err(zerr("poll")(e)),
            }
            self.guarded(|b| {
                b.flush_outbox();
                b.answer_zap();
                b.read_workers();
                b.read_events();
                b.read_clients();
                b.read_events();
                b.dispatch();
            });
            let now = Instant::now();
            if now >= next_tick {
                next_tick = now + TICK;
                self.guarded(|b| {
                    b.tick(now);
                    b.dispatch();
                });
                if self.stop.load(Ordering::Relaxed) && self.stopping.is_none() {
                    let grace = now + self.config.grace;
                    info!(
                        grace_ms = self.config.grace.as_millis() as u64,
                        pending = self.pending.len(),
                        "stopping: new requests are refused, draining"
                    );
                    self.stopping = Some(grace);
                }
                if let Some(grace) = self.stopping {
                    // Answered means handed to ZeroMQ (whose linger sends it on): replies
                    // still in the outbox wait for their slow reader, up to the deadline.
                    if self.pending.is_empty() && self.outbox.peers() == 0 {
                        if self.abandoned {
                            info!("stopped at the grace deadline: what was left was answered SHUTTING_DOWN");
                        } else {
                            info!("stopped: every accepted request was answered");
                        }
                        return Ok(());
                    }
                    if now >= grace && !self.pending.is_empty() {
                        self.abandon_all();
                        self.abandoned = true;
                    }
                    if now >= grace + FINAL_FLUSH {
                        let lost = self.outbox.drop_all();
                        self.metrics.reply_dropped("client_gone", lost);
                        warn!(
                            replies = lost,
                            "stopped at the grace deadline: replies for clients that did not read them were dropped"
                        );
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Runs a step of the loop; a panic in it (a bug) is logged and counted, and the loop
    /// goes on (the message being handled may go unanswered; a stop answers it).
    fn guarded(&mut self, step: impl FnOnce(&mut Self)) {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(self))).is_err() {
            self.metrics.panicked("broker");
            error!("a bug in the broker loop (a caught panic): the message it was handling may go unanswered; the broker goes on");
        }
    }

    /// The frames of a reply; a panic while encoding them is answered `INTERNAL`.
    fn frames(&self, header: &Header<'_>, answer: Answer) -> Vec<Vec<u8>> {
        let (frames, panicked) = reply_frames_guarded(header, answer);
        if panicked {
            self.metrics.panicked("reply");
            error!(id = %hex(&header.request_id), "a bug while encoding a reply (a caught panic): answered INTERNAL");
        }
        frames
    }

    /// One `info` line for a request that failed or was slow (at most [`REQUEST_LINES`]
    /// a second): its type, id, outcome and where its time went. Never a key, a value or
    /// a session id.
    fn log_request(&mut self, ty: &str, id: &[u8; 16], answer: &Answer, times: RequestTimes) {
        let failed = !matches!(answer, Answer::Ok { .. });
        if !failed && times.total < self.config.slow {
            return;
        }
        let Some(left_out) = self.request_log.ready(Instant::now()) else {
            return;
        };
        if left_out > 0 {
            info!(
                left_out,
                "failed or slow requests not logged (at most {REQUEST_LINES} lines a second; keyroute_serve_errors_total and the latency histogram count them all)"
            );
        }
        let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1000.0);
        let what = if failed {
            "request failed"
        } else {
            "slow request"
        };
        info!(
            r#type = %ty,
            id = %hex(id),
            outcome = %answer.outcome(),
            total_ms = %ms(times.total),
            queue_ms = %ms(times.queue),
            store_ms = %ms(times.timing.store),
            load_ms = %ms(times.timing.load),
            "{what}"
        );
    }

    fn ms(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX)
    }

    // ---- clients ----

    fn read_clients(&mut self) {
        for _ in 0..BATCH {
            match self.clients.recv_multipart(zmq::DONTWAIT) {
                Ok(frames) => self.on_client(frames),
                Err(_) => return,
            }
        }
    }

    /// Sends a reply, or queues it behind the others of its client (see [`Outbox`]).
    fn send_client(&mut self, identity: &[Vec<u8>], frames: Vec<Vec<u8>>) {
        if !self.outbox.holds(identity) {
            match send_to(&self.clients, identity, &frames) {
                Sent::Taken => return,
                Sent::Gone => {
                    self.metrics.reply_dropped("client_gone", 1);
                    return;
                }
                Sent::Full => {}
            }
        }
        if !self.outbox.queue(identity, frames, Instant::now()) {
            debug!("reply dropped: its client does not read and its buffer is full");
            self.metrics.reply_dropped("client_buffer_full", 1);
        }
        self.metrics.client_buffers(&self.outbox);
    }

    /// Answers the ZAP requests waiting (RFC 27): a CURVE peer is admitted when its public
    /// key is on its socket's allow-list.
    fn answer_zap(&mut self) {
        let Some(zap) = &self.zap else { return };
        let Some(curve) = &self.config.curve else {
            return;
        };
        for _ in 0..BATCH {
            let Ok(req) = zap.recv_multipart(zmq::DONTWAIT) else {
                return;
            };
            // version, request id, domain, address, identity, mechanism, credentials...
            let frame = |i: usize| req.get(i).map_or(&[][..], Vec::as_slice);
            let domain = frame(2);
            let key: Option<crate::curve::Key> = if frame(5) == b"CURVE" {
                frame(6).try_into().ok()
            } else {
                None
            };
            let (socket, allowed) = match (domain, key) {
                (d, Some(k)) if d == WORKERS_DOMAIN.as_bytes() => {
                    ("workers", curve.workers.contains(&k))
                }
                (d, Some(k)) if d == CLIENTS_DOMAIN.as_bytes() => (
                    "clients",
                    curve.clients.as_ref().is_none_or(|c| c.contains(&k)),
                ),
                _ => ("other", false),
            };
            self.metrics
                .auth(socket, if allowed { "allowed" } else { "refused" });
            if !allowed && self.last_refusal_log.ready(Instant::now()) {
                let shown = key
                    .and_then(|k| zmq::z85_encode(&k).ok())
                    .unwrap_or_default();
                warn!(
                    socket,
                    public_key = shown,
                    address = %String::from_utf8_lossy(frame(3)),
                    "a CURVE key not on the allow-list was refused (at most one such line a second; keyroute_serve_auth_total counts them all)"
                );
            }
            let (code, text): (&[u8], &[u8]) = if allowed {
                (b"200", b"OK")
            } else {
                (b"400", b"key not allowed")
            };
            let reply: [&[u8]; 6] = [b"1.0", frame(1), code, text, b"", b""];
            if let Err(e) = zap.send_multipart(reply, 0) {
                warn!(error = %e, "ZAP reply not sent");
            }
        }
    }

    /// Retries the clients whose replies wait.
    fn flush_outbox(&mut self) {
        if self.outbox.peers() == 0 {
            return;
        }
        // ZMQ_EVENTS makes the socket take in its pending commands, among them "the
        // peer read some" (a send only looks at them about once a millisecond).
        let _ = self.clients.get_events();
        let clients = &self.clients;
        let done = self
            .outbox
            .flush(Instant::now(), |id, frames| send_to(clients, id, frames));
        if done.gone > 0 {
            self.metrics.reply_dropped("client_gone", done.gone);
        }
        self.metrics.client_buffers(&self.outbox);
    }

    /// Answers a message that was never accepted.
    fn refuse(
        &mut self,
        identity: &[Vec<u8>],
        header: &Header<'_>,
        answer: Answer,
        ty: &str,
        received: Instant,
    ) {
        let total = received.elapsed();
        self.metrics
            .answered(ty, answer.outcome(), total.as_secs_f64());
        let times = RequestTimes {
            total,
            queue: Duration::ZERO,
            timing: Timing::default(),
        };
        self.log_request(ty, &header.request_id, &answer, times);
        let frames = self.frames(header, answer);
        self.send_client(identity, frames);
    }

    fn on_client(&mut self, mut frames: Vec<Vec<u8>>) {
        let received = Instant::now();
        // [identity, (empty delimiter from REQ sockets)?, header, body, payload?]
        let mut envelope = vec![frames.remove(0)];
        if frames.len() > 2 && frames[0].is_empty() {
            envelope.push(frames.remove(0));
        }
        let head = frames.first().map(Vec::as_slice).unwrap_or(&[]);
        let header = match Header::decode(head) {
            Ok(h) if (2..=3).contains(&frames.len()) => h,
            result => {
                // Answer with whatever request id and type it carried.
                let mut h = Header::request(MsgType::Ping, Header::salvage_request_id(head));
                h.msg_type = match head.get(2..4) {
                    Some(t) => u16::from_be_bytes([t[0], t[1]]) & 0x7fff,
                    None => 0,
                };
                let refusal = match result {
                    Err(e) => {
                        debug!(error = %e, len = head.len(), "bad header");
                        if (2..=3).contains(&frames.len()) {
                            header_refusal(head, e)
                        } else {
                            TransportError::BadHeader
                        }
                    }
                    Ok(_) => {
                        debug!(frames = frames.len(), "bad frame count");
                        TransportError::BadHeader
                    }
                };
                self.metrics.received("bad");
                self.refuse(&envelope, &h, Answer::Transport(refusal), "bad", received);
                return;
            }
        };
        // Cheap when debug logs are off (the fields are then never formatted).
        let _span = tracing::debug_span!(
            "request",
            id = %hex(&header.request_id),
            r#type = header.msg_type
        )
        .entered();
        let ty = match header.kind() {
            Some(t) if t.is_client() && !header.is_reply() => t,
            _ => {
                self.metrics.received("unknown");
                self.refuse(
                    &envelope,
                    &header,
                    Answer::Transport(TransportError::UnknownType),
                    "unknown",
                    received,
                );
                return;
            }
        };
        let name = ty.name();
        self.metrics.received(name);
        let oversize = frames
            .iter()
            .skip(1)
            .any(|f| f.len() > self.config.max_frame);
        if oversize {
            let answer = Answer::data(
                ErrorCode::ValueTooLarge,
                format!(
                    "a frame is larger than the service's maximum of {} bytes",
                    self.config.max_frame
                ),
            );
            if ty.has_reply() {
                self.refuse(&envelope, &header, answer, name, received);
            }
            return;
        }
        if ty == MsgType::Ping {
            self.refuse(&envelope, &header, Answer::json(json!({})), name, received);
            return;
        }
        if self.stopping.is_some() {
            if ty.has_reply() {
                self.refuse(
                    &envelope,
                    &header,
                    Answer::Transport(TransportError::ShuttingDown),
                    name,
                    received,
                );
            }
            return;
        }
        let payload = frames.get(2).cloned();
        let read = cmd::parse(ty, &frames[1], payload).and_then(|r| {
            let session = cmd::session_of(ty, header.session_id, &self.config.require_sessions)?;
            Ok((r, session))
        });
        let (req, session) = match read {
            Ok(r) => r,
            Err(answer) => {
                if ty.has_reply() {
                    self.refuse(&envelope, &header, answer, name, received);
                }
                return;
            }
        };
        let deadline_ms = match header.deadline_ms {
            0 => self.config.default_deadline,
            ms => Duration::from_millis(u64::from(ms)).min(self.config.max_deadline),
        };
        let deadline = received + deadline_ms;
        let priority = header.priority;
        let class = req
            .loads()
            .and_then(|(_, kind)| self.class_of.get(kind).copied())
            .unwrap_or(0);
        let flight = req
            .loads()
            .map(|(c, k)| (c.to_string(), k.to_string(), session));
        if let Some((_, waiters)) = flight.as_ref().and_then(|k| self.flights.get(k)) {
            if waiters.len() >= self.config.max_waiters_per_key
                || self.parked.len() >= self.config.max_waiters
            {
                let answer = Answer::Transport(TransportError::TooManyWaiters);
                self.refuse(&envelope, &header, answer, name, received);
                return;
            }
        }
        let token = self.next_token;
        self.next_token += 1;
        let pending = Pending {
            identity: envelope,
            header: head.to_vec(),
            ty,
            received,
            deadline,
            class,
            req: Some(req),
            session,
            running: false,
            flight: flight.clone(),
            parked: false,
            started: None,
            timing: Timing::default(),
        };
        // A product.get whose key is loading already parks: no thread, no queue slot.
        if let Some(key) = &flight {
            if let Some((_, waiters)) = self.flights.get_mut(key) {
                let mut pending = pending;
                pending.parked = true;
                waiters.insert(token);
                self.parked.insert((deadline, token));
                self.pending.insert(token, pending);
                self.metrics.parked.set(self.parked.len() as i64);
                return;
            }
        }
        self.pending.insert(token, pending);
        if self.enqueue(token, priority, deadline, class) && flight.is_some() {
            if let Some(key) = flight {
                self.flights.insert(key, (token, BTreeSet::new()));
            }
        }
    }

    /// Puts an accepted request in the queue; false (and answered) when full.
    fn enqueue(&mut self, token: u64, priority: u8, deadline: Instant, class: usize) -> bool {
        let now = self.ms(Instant::now());
        let mut expired = Vec::new();
        let r = self
            .queue
            .push(token, priority, self.ms(deadline), class, now, |t, c| {
                expired.push((t, c))
            });
        for (t, c) in expired {
            self.expire(t, c);
        }
        self.metrics.queue_depth.set(self.queue.len() as i64);
        match r {
            Ok(()) => true,
            Err(_) => {
                self.answer(token, Answer::Transport(TransportError::QueueFull));
                false
            }
        }
    }

    /// A queued request whose deadline passed: EXPIRED, or AT_CAP when its kind's cap held
    /// it back, or LOAD_TIMEOUT when it waited parked for a load before.
    fn expire(&mut self, token: u64, class: usize) {
        let at_cap = class > 0 && self.running[class] >= self.caps[class];
        let was_parked = self.pending.get(&token).is_some_and(|p| p.parked);
        let e = if was_parked {
            // Promoted after waiting for another request's load: its wait was a load's.
            TransportError::LoadTimeout
        } else if at_cap {
            TransportError::AtCap
        } else {
            TransportError::Expired
        };
        self.answer(token, Answer::Transport(e));
    }

    /// Answers an accepted request (once: later answers for it are dropped), and settles
    /// its flight.
    fn answer(&mut self, token: u64, answer: Answer) {
        let Some(p) = self.pending.remove(&token) else {
            return;
        };
        let total = p.received.elapsed();
        self.metrics
            .answered(p.ty.name(), answer.outcome(), total.as_secs_f64());
        let times = RequestTimes {
            total,
            queue: p.started.map_or(total, |s| s - p.received),
            timing: p.timing,
        };
        self.log_request(
            p.ty.name(),
            &Header::salvage_request_id(&p.header),
            &answer,
            times,
        );
        if p.ty.has_reply() {
            if let Ok(h) = Header::decode(&p.header) {
                let frames = self.frames(&h, answer.clone());
                self.send_client(&p.identity, frames);
            }
        }
        if let Some(key) = p.flight {
            self.parked.remove(&(p.deadline, token));
            self.metrics.parked.set(self.parked.len() as i64);
            self.settle_flight(token, key, &answer);
        }
    }

    /// The leader of a flight was answered: share its answer with the waiters, or (when
    /// the answer was about the leader's own deadline) promote a waiter.
    fn settle_flight(&mut self, token: u64, key: FlightKey, answer: &Answer) {
        let Some((leader, _)) = self.flights.get(&key) else {
            return;
        };
        if *leader != token {
            // A waiter answered on its own (deadline): leave the flight alone.
            if let Some((_, w)) = self.flights.get_mut(&key) {
                w.remove(&token);
            }
            return;
        }
        let Some((_, waiters)) = self.flights.remove(&key) else {
            return;
        };
        let own = matches!(
            answer,
            Answer::Transport(
                TransportError::Expired
                    | TransportError::LoadTimeout
                    | TransportError::AtCap
                    | TransportError::QueueFull
            )
        );
        if !own {
            for w in waiters {
                self.answer(w, answer.clone());
            }
            return;
        }
        // Promote the first waiter still in time; the others park behind it.
        let mut rest = waiters.into_iter();
        for next in rest.by_ref() {
            let Some(p) = self.pending.get(&next) else {
                continue;
            };
            let (prio, deadline, class) = (
                Header::decode(&p.header).map_or(0, |h| h.priority),
                p.deadline,
                p.class,
            );
            if self.stopping.is_some() {
                self.answer(next, Answer::Transport(TransportError::ShuttingDown));
                continue;
            }
            if deadline <= Instant::now() {
                // It waited for a load to its end: not a queue expiry.
                self.answer(next, Answer::Transport(TransportError::LoadTimeout));
                continue;
            }
            self.parked.remove(&(deadline, next));
            self.metrics.parked.set(self.parked.len() as i64);
            if self.enqueue(next, prio, deadline, class) {
                self.flights.insert(key, (next, rest.collect()));
                return;
            }
        }
    }

    // ---- threads ----

    fn dispatch(&mut self) {
        while self.idle_threads > 0 {
            let now = self.ms(Instant::now());
            let (running, caps) = (&self.running, &self.caps);
            let Some(popped) = self.queue.pop(now, |c| running[c] < caps[c]) else {
                break;
            };
            match popped {
                Popped::Expired { item, class } => self.expire(item, class),
                Popped::Run { item, class } => {
                    let Some(p) = self.pending.get_mut(&item) else {
                        continue;
                    };
                    let Some(req) = p.req.take() else { continue };
                    p.running = true;
                    p.started = Some(Instant::now());
                    let job = Job {
                        token: item,
                        req,
                        session: p.session,
                        deadline: p.deadline,
                        id: Header::salvage_request_id(&p.header),
                        ty: p.ty,
                    };
                    self.running[class] += 1;
                    self.idle_threads -= 1;
                    if self.jobs.send(job).is_err() {
                        warn!("no thread to run a request");
                    }
                }
            }
        }
        self.metrics.queue_depth.set(self.queue.len() as i64);
        self.metrics
            .threads_busy
            .set((self.config.threads - self.idle_threads) as i64);
    }

    fn read_events(&mut self) {
        let mut buf = [0u8; 512];
        while matches!((&self.bell).read(&mut buf), Ok(n) if n > 0) {}
        while let Ok(e) = self.events.try_recv() {
            match e {
                Event::Done {
                    token,
                    answer,
                    timing,
                } => {
                    self.idle_threads += 1;
                    if let Some(p) = self.pending.get_mut(&token) {
                        p.timing = timing;
                        let class = p.class;
                        self.running[class] = self.running[class].saturating_sub(1);
                    } else {
                        // Answered already (shutdown): its class count was reset then.
                    }
                    self.answer(token, answer);
                }
                Event::NeedLoad {
                    client,
                    kind,
                    deadline,
                    reply,
                } => {
                    let fence = self.next_fence;
                    self.next_fence += 1;
                    if !self.workers.serves(&kind) {
                        self.count_load(&kind, "no_loader");
                        let _ =
                            reply.try_send(Err(LoadFailure::Transport(TransportError::NoLoader)));
                        continue;
                    }
                    self.loads.insert(
                        fence,
                        Load {
                            client,
                            kind,
                            deadline,
                            reply,
                            worker: None,
                        },
                    );
                    self.waiting_loads.push_back(fence);
                    self.assign_loads();
                }
            }
        }
    }

    // ---- workers ----

    /// Counts a load under its kind's label: only kinds a worker declared get one (at
    /// most [`MAX_KIND_LABELS`] over the process's life); every other kind is `other`,
    /// so that requests for made-up kinds cannot grow `/metrics`.
    fn count_load(&mut self, kind: &str, outcome: &str) {
        let labelled = self.labelled.contains(kind)
            || (self.declared.contains(kind) && self.labelled.len() < MAX_KIND_LABELS && {
                self.labelled.insert(kind.to_string());
                true
            });
        let label = if labelled { kind } else { "other" };
        self.metrics
            .loads
            .get_or_create(&vec![
                ("kind".to_string(), label.to_string()),
                ("outcome".to_string(), outcome.to_string()),
            ])
            .inc();
    }

    /// The workers' declarations changed: app.start's kinds and the labelled kinds.
    fn kinds_changed(&mut self) {
        let kinds = self.workers.kinds();
        self.declared = kinds.iter().cloned().collect();
        self.mailbox.set_kinds(kinds);
    }

    /// Sends waiting loads to idle workers, oldest first.
    fn assign_loads(&mut self) {
        let mut still = VecDeque::with_capacity(self.waiting_loads.len());
        while let Some(fence) = self.waiting_loads.pop_front() {
            let Some(load) = self.loads.get(&fence) else {
                continue;
            };
            let kind = load.kind.clone();
            match self.workers.pick(&kind, fence) {
                Some(id) => {
                    let load = &self.loads[&fence];
                    let left = load.deadline.saturating_duration_since(Instant::now());
                    let mut h = Header::request(MsgType::Load, fence_id(fence));
                    h.deadline_ms = u32::try_from(left.as_millis()).unwrap_or(u32::MAX).max(1);
                    let body = json!({ "client": load.client, "kind": load.kind, "fence": fence });
                    let mut head = vec![0u8; HEADER_FIXED_LEN];
                    let _ = h.encode_into(&mut head);
                    let frames = vec![
                        id.clone(),
                        head,
                        serde_json::to_vec(&body).unwrap_or_default(),
                    ];
                    if let Err(e) = self.workers_sock.send_multipart(frames, zmq::DONTWAIT) {
                        warn!(error = %e, "load not sent to worker");
                    }
                    if let Some(l) = self.loads.get_mut(&fence) {
                        l.worker = Some(id);
                    }
                    self.count_load(&kind, "sent");
                }
                None => still.push_back(fence),
            }
        }
        self.waiting_loads = still;
    }

    fn read_workers(&mut self) {
        for _ in 0..BATCH {
            match self.workers_sock.recv_multipart(zmq::DONTWAIT) {
                Ok(frames) => self.on_worker(frames),
                Err(_) => return,
            }
        }
    }

    fn reply_worker(&self, id: &[u8], header: &Header<'_>, answer: Answer) {
        let frames: Vec<Vec<u8>> = std::iter::once(id.to_vec())
            .chain(reply_frames(header, answer))
            .collect();
        let _ = self.workers_sock.send_multipart(frames, zmq::DONTWAIT);
    }

    fn on_worker(&mut self, mut frames: Vec<Vec<u8>>) {
        let id = frames.remove(0);
        let head = frames.first().map(Vec::as_slice).unwrap_or(&[]);
        let header = match Header::decode(head) {
            Ok(h) if (2..=3).contains(&frames.len()) => h,
            result => {
                let refusal = match result {
                    Err(e) if (2..=3).contains(&frames.len()) => header_refusal(head, e),
                    _ => TransportError::BadHeader,
                };
                let h = Header::request(MsgType::Ping, Header::salvage_request_id(head));
                self.reply_worker(&id, &h, Answer::Transport(refusal));
                return;
            }
        };
        let ty = match header.kind() {
            Some(t) if !header.is_reply() => t,
            _ => {
                return self.reply_worker(
                    &id,
                    &header,
                    Answer::Transport(TransportError::UnknownType),
                )
            }
        };
        let msg = match parse_worker(ty, &frames[1], frames.get(2).cloned()) {
            Ok(m) => m,
            Err(answer) => return self.reply_worker(&id, &header, answer),
        };
        let now = Instant::now();
        let (fence, result) = match msg {
            WorkerMsg::Ready { kinds, capacity } => {
                let shown = kinds.clone();
                if self.workers.ready(&id, kinds, capacity, now) {
                    info!(worker = %hex(&id), kinds = ?shown, capacity, "worker joined");
                    self.kinds_changed();
                }
                self.assign_loads();
                return;
            }
            WorkerMsg::Loaded { fence, value } => (fence, Ok(value)),
            WorkerMsg::Failed {
                fence,
                code,
                message,
            } => (fence, Err(LoadFailure::Backend { code, message })),
        };
        if let Some(w) = self.workers.all.get_mut(&id) {
            w.last_seen = now;
        }
        self.workers.finish(&id, fence);
        let mine = self
            .loads
            .get(&fence)
            .is_some_and(|l| l.worker.as_deref() == Some(&id[..]));
        if !mine {
            debug!(fence, "late or unknown load answer dropped");
            self.count_load("?", "late");
            self.assign_loads();
            return;
        }
        let Some(load) = self.loads.remove(&fence) else {
            return;
        };
        let outcome = if result.is_ok() { "loaded" } else { "failed" };
        self.count_load(&load.kind, outcome);
        let _ = load.reply.try_send(result);
        self.assign_loads();
    }

    // ---- timers ----

    fn tick(&mut self, now: Instant) {
        // Expired queue items: answered at once, never run.
        let now_ms = self.ms(now);
        let mut expired = Vec::new();
        self.queue
            .purge_expired(now_ms, |t, c| expired.push((t, c)));
        for (t, c) in expired {
            self.expire(t, c);
        }
        // Parked waiters past their deadline (only those: the index is by deadline).
        while let Some(&(deadline, t)) = self.parked.first() {
            if deadline > now {
                break;
            }
            self.parked.pop_first();
            self.answer(t, Answer::Transport(TransportError::LoadTimeout));
        }
        // Loads waiting for a worker past their deadline.
        let (late_loads, keep): (Vec<u64>, Vec<u64>) = self
            .waiting_loads
            .iter()
            .partition(|f| self.loads.get(f).is_none_or(|l| l.deadline <= now));
        if !late_loads.is_empty() {
            self.waiting_loads = keep.into();
            for f in late_loads {
                if let Some(l) = self.loads.remove(&f) {
                    self.count_load(&l.kind, "timeout");
                    let _ = l
                        .reply
                        .try_send(Err(LoadFailure::Transport(TransportError::LoadTimeout)));
                }
            }
        }
        // Loads sent whose deadline passed: the waiting thread gave up already.
        self.loads
            .retain(|_, l| l.deadline > now || l.worker.is_none());
        // Silent workers: dropped, their loads failed over.
        for id in self.workers.silent(now, self.config.worker_timeout) {
            let inflight = self.workers.remove(&id).unwrap_or_default();
            self.metrics.worker_drops.inc();
            warn!(worker = %hex(&id), loads = inflight.len(), "worker silent past the timeout: dropped, its loads failed over");
            self.kinds_changed();
            for f in inflight {
                if let Some(l) = self.loads.get_mut(&f) {
                    l.worker = None;
                    self.waiting_loads.push_front(f);
                }
            }
        }
        for f in self.waiting_loads.clone() {
            let serves = self
                .loads
                .get(&f)
                .is_some_and(|l| self.workers.serves(&l.kind));
            if !serves {
                if let Some(l) = self.loads.remove(&f) {
                    self.count_load(&l.kind, "no_loader");
                    let _ = l
                        .reply
                        .try_send(Err(LoadFailure::Transport(TransportError::NoLoader)));
                }
            }
        }
        self.waiting_loads.retain(|f| self.loads.contains_key(f));
        self.assign_loads();
        if now.duration_since(self.last_gauges) >= Duration::from_millis(100) {
            self.last_gauges = now;
            debug!(
                pending = self.pending.len(),
                pending_cap = self.pending.capacity(),
                flights = self.flights.len(),
                flights_cap = self.flights.capacity(),
                loads = self.loads.len(),
                loads_cap = self.loads.capacity(),
                waiting = self.waiting_loads.len(),
                "sizes"
            );
            self.metrics.workers.clear();
            for (kind, busy, idle) in self.workers.load_by_kind() {
                for (state, n) in [("busy", busy), ("idle", idle)] {
                    self.metrics
                        .workers
                        .get_or_create(&vec![
                            ("kind".to_string(), kind.clone()),
                            ("state".to_string(), state.to_string()),
                        ])
                        .set(n as i64);
                }
            }
        }
    }

    /// At the grace deadline: answers everything left SHUTTING_DOWN.
    fn abandon_all(&mut self) {
        let mut left = Vec::new();
        self.queue.drain(|t, _| left.push(t));
        for (_, l) in self.loads.drain() {
            let _ = l
                .reply
                .try_send(Err(LoadFailure::Transport(TransportError::ShuttingDown)));
        }
        let rest: Vec<u64> = self.pending.keys().copied().collect();
        left.extend(rest);
        for t in left {
            self.answer(t, Answer::Transport(TransportError::ShuttingDown));
        }
    }
}

/// One reply to one peer, without waiting.
fn send_to(socket: &zmq::Socket, identity: &[Vec<u8>], frames: &[Vec<u8>]) -> Sent {
    let parts = identity.iter().chain(frames).map(Vec::as_slice);
    match socket.send_multipart(parts, zmq::DONTWAIT) {
        Ok(()) => Sent::Taken,
        Err(zmq::Error::EAGAIN) => Sent::Full,
        Err(e) => {
            debug!(error = %e, "reply not sent: the client is gone");
            Sent::Gone
        }
    }
}

/// The request id of a load: the fence, big-endian, in the last 8 bytes.
fn fence_id(fence: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[8..].copy_from_slice(&fence.to_be_bytes());
    id
}

/// Lowercase hex (request ids and worker identities in logs).
fn hex(id: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(id.len() * 2);
    for b in id {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// Where a request's time went, for the request log.
#[derive(Clone, Copy, Debug)]
struct RequestTimes {
    /// Receipt to answer.
    total: Duration,
    /// Receipt to a thread taking it (the whole time, when none did).
    queue: Duration,
    /// On the thread.
    timing: Timing,
}

/// A thread: runs requests until the broker goes away. Each runs in a `request` span
/// carrying its id and type, so whatever is logged while it runs names the request.
fn run_jobs(
    rx: &Mutex<Receiver<Job>>,
    store: &dyn Store,
    mailbox: &Mailbox,
    metrics: &Metrics,
    settings: &Settings,
) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            rx.recv()
        };
        let Ok(job) = job else { return };
        let token = job.token;
        let span = tracing::info_span!("request", id = %hex(&job.id), r#type = %job.ty.name());
        let _entered = span.enter();
        let started = Instant::now();
        mailbox.clock.take();
        let answer =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let ctx = Ctx {
                    store,
                    loads: mailbox,
                    settings,
                    deadline: job.deadline,
                    session: job.session,
                };
                job.req.run(&ctx).unwrap_or_else(|a| a)
            }))
                .unwrap_or_else(|_| {
                    metrics.panicked("request");
                    error!("a bug in keyroute serve while running a request (a caught panic): answered INTERNAL");
                    internal("running the request")
                });
        let load = mailbox.clock.take();
        let timing = Timing {
            store: started.elapsed().saturating_sub(load),
            load,
        };
        mailbox.send(Event::Done {
            token,
            answer,
            timing,
        });
    }
}

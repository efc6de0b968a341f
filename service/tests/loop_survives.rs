//! The broker survives a panic in a store call: the request is answered `INTERNAL`, the
//! panic is counted, and every later request is served as usual.
//!
//! The fault is injected through a store that exists only in this test (a [`Store`]
//! passed to [`Service::start_with_store`]): nothing in the `keyroute serve` binary can
//! panic on purpose, so no client can trigger it in production. The real broker, its
//! threads and its ZeroMQ sockets run; the client is a plain DEALER socket.
//! (A panic while encoding a reply is injected in `proto.rs`'s unit tests.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use keyroute::cache::{Call, SessionId, Value};
use keyroute::frame::{Header, MsgType, FLAG_DATA_ERROR};
use keyroute_serve::store::{Loader, MemoryStore, Store, StoreInfo, StoreStats, WarmLoader};
use keyroute_serve::{Answer, Config, Service};

/// The in-memory store, except that anything about the kind or client `panic` panics.
struct PanicStore(MemoryStore);

const BOOM: &str = "panic";

fn boom(what: &str) -> ! {
    panic!("injected panic in {what}")
}

impl Store for PanicStore {
    fn info(&self) -> StoreInfo {
        self.0.info()
    }
    fn stats(&self) -> StoreStats {
        self.0.stats()
    }
    fn run(&self, call: &Call<'_>) -> Result<Value, Answer> {
        // An entry of the kind `panic`, or a session of the client `panic`.
        let about_boom = call.keys.iter().any(|k| k.ends_with(b":e:panic"))
            || call.args.iter().any(|a| &a[..] == BOOM.as_bytes());
        if about_boom {
            boom(call.script.name());
        }
        self.0.run(call)
    }
    fn get_or_load(
        &self,
        session: Option<&SessionId>,
        client: &str,
        kind: &str,
        deadline: Instant,
        loader: Loader<'_>,
    ) -> Result<Vec<u8>, Answer> {
        if kind == BOOM {
            // Hold the key a little, so that the other requests for it park behind this
            // one and share its answer.
            std::thread::sleep(Duration::from_millis(100));
            boom("get_or_load");
        }
        self.0.get_or_load(session, client, kind, deadline, loader)
    }
    fn warm(
        &self,
        device: &str,
        kinds: &[String],
        loader: WarmLoader<'_>,
    ) -> Result<usize, Answer> {
        self.0.warm(device, kinds, loader)
    }
}

struct Client {
    socket: zmq::Socket,
    next: u64,
}

struct Reply {
    header: Vec<u8>,
    body: serde_json::Value,
    payload: Option<Vec<u8>>,
}

impl Reply {
    fn code(&self) -> Option<&str> {
        let h = Header::decode(&self.header).unwrap();
        (h.flags & FLAG_DATA_ERROR != 0).then(|| self.body["code"].as_str().unwrap())
    }
}

impl Client {
    fn new(ctx: &zmq::Context, endpoint: &str) -> Client {
        let socket = ctx.socket(zmq::DEALER).unwrap();
        socket.set_linger(0).unwrap();
        socket.set_rcvtimeo(10_000).unwrap();
        socket.connect(endpoint).unwrap();
        Client { socket, next: 0 }
    }

    fn send(&mut self, ty: MsgType, body: serde_json::Value, payload: Option<&[u8]>) -> [u8; 16] {
        self.next += 1;
        let mut id = [0u8; 16];
        id[8..].copy_from_slice(&self.next.to_be_bytes());
        let mut head = [0u8; 29];
        Header::request(ty, id).encode_into(&mut head).unwrap();
        let mut frames = vec![head.to_vec(), serde_json::to_vec(&body).unwrap()];
        frames.extend(payload.map(<[u8]>::to_vec));
        self.socket.send_multipart(frames, 0).unwrap();
        id
    }

    fn recv(&self) -> Reply {
        let frames = self
            .socket
            .recv_multipart(0)
            .expect("a reply within 10 s (a request was left unanswered)");
        let body = if frames[1].is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_slice(&frames[1]).unwrap()
        };
        Reply {
            header: frames[0].clone(),
            body,
            payload: frames.get(2).cloned(),
        }
    }

    fn request(&mut self, ty: MsgType, body: serde_json::Value, payload: Option<&[u8]>) -> Reply {
        let id = self.send(ty, body, payload);
        let r = self.recv();
        assert_eq!(Header::decode(&r.header).unwrap().request_id, id);
        r
    }
}

fn metric(addr: std::net::SocketAddr, name: &str) -> f64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0.0)
}

#[test]
fn a_panic_in_a_store_call_is_answered_internal_and_the_broker_goes_on() {
    let dir = std::env::temp_dir().join(format!("keyroute-loop-survives-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = Config {
        bind: format!("ipc://{}/clients", dir.display()),
        workers_bind: format!("ipc://{}/workers", dir.display()),
        threads: 2,
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        ..Config::default()
    };
    let store = Arc::new(PanicStore(MemoryStore::new(Default::default())));
    let service = Service::start_with_store(config.clone(), store).unwrap();
    let metrics = service.metrics_addr().unwrap();
    let ctx = zmq::Context::new();
    let mut c = Client::new(&ctx, &config.bind);

    // More panics than threads: each is answered, and no thread is lost.
    let ids: Vec<[u8; 16]> = (0..10)
        .map(|_| {
            c.send(
                MsgType::CacheGet,
                serde_json::json!({"client": "c", "kind": BOOM}),
                None,
            )
        })
        .collect();
    let mut got = Vec::new();
    for _ in &ids {
        let r = c.recv();
        assert_eq!(r.code(), Some("INTERNAL"), "{}", r.body);
        assert!(r.body["message"].as_str().unwrap().contains("caught panic"));
        got.push(Header::decode(&r.header).unwrap().request_id);
    }
    got.sort_unstable();
    assert_eq!(got, ids);
    let r = c.request(
        MsgType::SessionCreate,
        serde_json::json!({"client": BOOM, "version": "1"}),
        None,
    );
    assert_eq!(r.code(), Some("INTERNAL"));

    // product.get: the leader panics; the requests parked behind it share its answer.
    let ids: Vec<[u8; 16]> = (0..5)
        .map(|_| {
            c.send(
                MsgType::ProductGet,
                serde_json::json!({"client": "c", "kind": BOOM}),
                None,
            )
        })
        .collect();
    for _ in &ids {
        assert_eq!(c.recv().code(), Some("INTERNAL"));
    }

    // The broker and both threads go on.
    for i in 0..4 {
        let v = format!("v{i}");
        let r = c.request(
            MsgType::CachePut,
            serde_json::json!({"client": "c", "kind": "k"}),
            Some(v.as_bytes()),
        );
        assert_eq!(r.code(), None, "{}", r.body);
        let r = c.request(
            MsgType::CacheGet,
            serde_json::json!({"client": "c", "kind": "k"}),
            None,
        );
        assert_eq!(r.payload.as_deref(), Some(v.as_bytes()));
    }
    assert_eq!(
        c.request(MsgType::Ping, serde_json::json!({}), None).code(),
        None
    );
    let panics = metric(metrics, "keyroute_serve_panics_total{where=\"request\"}");
    assert!(panics >= 12.0, "{panics}");

    service.stop();
    service.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

//! A local Redis Cluster (3 masters by default) and plain standalone nodes for the
//! cluster and sharded-client suites: real `redis-server` processes on free 127.0.0.1
//! ports (cluster nodes need `p` and `p + 10000` free), in a temp dir, killed on drop.
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// How long to wait for a node to answer PING or for `cluster_state:ok`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

fn port_free(p: u32) -> bool {
    p <= 65535 && TcpListener::bind(("127.0.0.1", p as u16)).is_ok()
}

/// A port `p` such that `p` (and `p + 10000` if `bus`) can be bound now. Candidates
/// are spread by pid and a counter so parallel test binaries rarely try the same one.
pub fn free_port(bus: bool) -> u16 {
    let base = 20000 + (std::process::id() * 7919 % 9000);
    for _ in 0..20000 {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let p = 20000 + (base + n * 13) % 25000;
        if port_free(p) && (!bus || port_free(p + 10000)) {
            return p as u16;
        }
    }
    panic!("no free port pair found");
}

fn temp_dir(kind: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "keyroute-{kind}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}")
}

/// A synchronous connection with short timeouts.
pub fn connect(port: u16) -> redis::Connection {
    let client = redis::Client::open(url(port)).expect("client");
    let con = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .expect("connect");
    con.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    con.set_write_timeout(Some(Duration::from_secs(10)))
        .expect("write timeout");
    con
}

fn wait_ping(port: u16, child: &mut Child) {
    let start = Instant::now();
    loop {
        if let Ok(client) = redis::Client::open(url(port)) {
            if let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200)) {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return;
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("redis-server on port {port} exited: {status}");
        }
        assert!(
            start.elapsed() < STARTUP_TIMEOUT,
            "redis-server on port {port} did not answer PING"
        );
        sleep(Duration::from_millis(20));
    }
}

fn spawn_server(dir: &std::path::Path, port: u16, cluster: bool) -> Child {
    let mut cmd = Command::new("redis-server");
    cmd.arg("--port")
        .arg(port.to_string())
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--protected-mode", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir)
        .arg("--logfile")
        .arg(dir.join(format!("{port}.log")));
    if cluster {
        cmd.args(["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"])
            .arg("--cluster-config-file")
            .arg(dir.join(format!("nodes-{port}.conf")));
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server (apt-get install redis-server)");
    wait_ping(port, &mut child);
    child
}

/// Kills and reaps every child, then removes the dir.
fn stop_all(children: &mut Vec<Child>, dir: &std::path::Path) {
    for c in children.iter_mut() {
        let _ = c.kill();
    }
    for c in children.iter_mut() {
        let _ = c.wait();
    }
    children.clear();
    let _ = std::fs::remove_dir_all(dir);
}

/// A local Redis Cluster. Dropping it kills every node it started.
pub struct Cluster {
    /// Ports of the nodes, in start order (the first `masters` were in `--cluster create`).
    pub ports: Vec<u16>,
    children: Vec<Child>,
    dir: PathBuf,
}

impl Cluster {
    /// Starts `masters` nodes, joins them with `redis-cli --cluster create`, and waits
    /// until every node reports `cluster_state:ok` and knows every other node.
    pub fn start(masters: usize) -> Cluster {
        let dir = temp_dir("cluster");
        let mut c = Cluster {
            ports: Vec::new(),
            children: Vec::new(),
            dir,
        };
        for _ in 0..masters {
            c.spawn_node();
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for p in &c.ports {
            create.arg(format!("127.0.0.1:{p}"));
        }
        let out = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        c.wait_ok();
        c
    }

    /// Seed URL of the first node.
    pub fn url(&self) -> String {
        url(self.ports[0])
    }

    /// Seed URLs of every node.
    pub fn urls(&self) -> Vec<String> {
        self.ports.iter().map(|&p| url(p)).collect()
    }

    /// Starts one more cluster-enabled node (not yet part of the cluster); its port.
    pub fn spawn_node(&mut self) -> u16 {
        let port = free_port(true);
        let child = spawn_server(&self.dir, port, true);
        self.ports.push(port);
        self.children.push(child);
        port
    }

    /// Starts a node, `CLUSTER MEET`s it and waits until every node knows it; its port.
    pub fn add_master(&mut self) -> u16 {
        let port = self.spawn_node();
        let mut con = connect(self.ports[0]);
        let _: () = redis::cmd("CLUSTER")
            .arg("MEET")
            .arg("127.0.0.1")
            .arg(port)
            .query(&mut con)
            .expect("CLUSTER MEET");
        self.wait_ok();
        port
    }

    /// Waits until every node says `cluster_state:ok`, knows all the nodes, and has a
    /// node id; then until every node agrees about the slots.
    pub fn wait_ok(&self) {
        let start = Instant::now();
        let n = self.ports.len();
        loop {
            let ok = self.ports.iter().all(|&p| {
                let mut con = connect(p);
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut con)
                    .unwrap_or_default();
                let nodes: String = redis::cmd("CLUSTER")
                    .arg("NODES")
                    .query(&mut con)
                    .unwrap_or_default();
                let known = nodes
                    .lines()
                    .filter(|l| !l.contains("handshake") && !l.contains("noaddr"))
                    .count();
                info.contains("cluster_state:ok") && known == n
            }) && self.slots_agree();
            if ok {
                return;
            }
            assert!(
                start.elapsed() < STARTUP_TIMEOUT,
                "cluster did not reach cluster_state:ok"
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Whether every node reports the same `CLUSTER SLOTS`.
    pub fn slots_agree(&self) -> bool {
        let mut first: Option<redis::Value> = None;
        for &p in &self.ports {
            let mut con = connect(p);
            let Ok(v) = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query::<redis::Value>(&mut con)
            else {
                return false;
            };
            let v = normalize(v);
            match &first {
                None => first = Some(v),
                Some(f) if *f != v => return false,
                Some(_) => {}
            }
        }
        true
    }

    /// Kills the node on `port` (SIGKILL) and reaps it.
    pub fn kill(&mut self, port: u16) {
        let i = self
            .ports
            .iter()
            .position(|&p| p == port)
            .expect("our node");
        let _ = self.children[i].kill();
        let _ = self.children[i].wait();
    }

    /// The node id of the node on `port` (`CLUSTER MYID`).
    pub fn id(&self, port: u16) -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut connect(port))
            .expect("MYID")
    }
}

/// `CLUSTER SLOTS` entries sorted (nodes list them in different orders).
fn normalize(v: redis::Value) -> redis::Value {
    match v {
        redis::Value::Array(mut a) => {
            a.sort_by_key(|e| format!("{e:?}"));
            redis::Value::Array(a)
        }
        v => v,
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        stop_all(&mut self.children, &self.dir);
    }
}

/// Standalone `redis-server` nodes (no cluster), for the ring-sharded client. Dropping
/// it kills every node it started.
pub struct Nodes {
    /// Ports of the nodes, in start order.
    pub ports: Vec<u16>,
    children: Vec<Child>,
    dir: PathBuf,
}

impl Nodes {
    /// Starts `n` standalone nodes.
    pub fn start(n: usize) -> Nodes {
        let mut nodes = Nodes {
            ports: Vec::new(),
            children: Vec::new(),
            dir: temp_dir("nodes"),
        };
        for _ in 0..n {
            nodes.spawn();
        }
        nodes
    }

    /// Starts one more node; its port.
    pub fn spawn(&mut self) -> u16 {
        let port = free_port(false);
        let child = spawn_server(&self.dir, port, false);
        self.ports.push(port);
        self.children.push(child);
        port
    }

    /// `127.0.0.1:port` of node `i`, used as its ring name.
    pub fn name(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.ports[i])
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        stop_all(&mut self.children, &self.dir);
    }
}

//! A local Redis Cluster (3 masters by default; [`Cluster::start_with_replicas`] adds a
//! replica per master and a short node timeout for failover tests) and plain standalone
//! nodes for the cluster and sharded-client suites: real `redis-server` processes on free
//! 127.0.0.1 ports (cluster nodes need `p` and `p + 10000` free), in a temp dir, killed on
//! drop. Test servers have `enable-debug-command yes` (for `DEBUG SLEEP`).
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

/// Waits until the node answers PING; `Err` (with the end of its log) if it exited first,
/// for instance because another process took its port after [`free_port`] saw it free.
fn wait_ping(port: u16, child: &mut Child, log: &std::path::Path) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if let Ok(client) = redis::Client::open(url(port)) {
            if let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200)) {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return Ok(());
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            return Err(format!(
                "redis-server on port {port} exited: {status}; its log ends: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        assert!(
            start.elapsed() < STARTUP_TIMEOUT,
            "redis-server on port {port} did not answer PING"
        );
        sleep(Duration::from_millis(20));
    }
}

/// How a node is started.
#[derive(Debug, Clone, Copy)]
pub struct NodeOptions {
    /// `cluster-enabled yes` with this `cluster-node-timeout` (ms); `None`: standalone.
    pub cluster_node_timeout_ms: Option<u32>,
    /// `appendonly yes` + `appendfsync always` (a SIGKILLed node restarts with every
    /// acknowledged write); else no persistence at all.
    pub persist: bool,
}

/// Starts a node on `port` (a restart: the port is the node's own), panicking if it exits.
fn spawn_with(dir: &std::path::Path, port: u16, options: NodeOptions) -> Child {
    try_spawn_with(dir, port, options).unwrap_or_else(|err| panic!("{err}"))
}

/// Starts a new node on a free port (a pair with the bus port for cluster nodes). The
/// port is only free when [`free_port`] looks, so a node that loses it to another process
/// (a client's ephemeral port, a parallel test) is started again on another one.
fn spawn_fresh(dir: &std::path::Path, options: NodeOptions) -> (u16, Child) {
    let mut last = String::new();
    for _ in 0..8 {
        let port = free_port(options.cluster_node_timeout_ms.is_some());
        match try_spawn_with(dir, port, options) {
            Ok(child) => return (port, child),
            Err(err) => last = err,
        }
    }
    panic!("could not start redis-server after 8 ports: {last}");
}

fn try_spawn_with(dir: &std::path::Path, port: u16, options: NodeOptions) -> Result<Child, String> {
    let log = dir.join(format!("{port}.log"));
    let mut cmd = Command::new("redis-server");
    cmd.arg("--port")
        .arg(port.to_string())
        .args(["--bind", "127.0.0.1", "--save", ""]);
    if options.persist {
        cmd.args(["--appendonly", "yes", "--appendfsync", "always"])
            .arg("--appendfilename")
            .arg(format!("aof-{port}.aof"))
            .arg("--appenddirname")
            .arg(format!("aof-{port}"));
    } else {
        cmd.args(["--appendonly", "no"]);
    }
    cmd.args(["--protected-mode", "no", "--daemonize", "no"])
        .args(["--enable-debug-command", "yes"])
        .arg("--dir")
        .arg(dir)
        .arg("--logfile")
        .arg(&log);
    if let Some(timeout) = options.cluster_node_timeout_ms {
        cmd.args(["--cluster-enabled", "yes", "--cluster-node-timeout"])
            .arg(timeout.to_string())
            .arg("--cluster-config-file")
            .arg(dir.join(format!("nodes-{port}.conf")));
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server (apt-get install redis-server)");
    match wait_ping(port, &mut child, &log) {
        Ok(()) => Ok(child),
        Err(err) => {
            let _ = child.wait();
            Err(err)
        }
    }
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
    /// Whether node `i` was killed (and not restarted).
    dead: Vec<bool>,
    dir: PathBuf,
    node_timeout_ms: u32,
}

impl Cluster {
    /// Starts `masters` nodes, joins them with `redis-cli --cluster create`, and waits
    /// until every node reports `cluster_state:ok` and knows every other node.
    pub fn start(masters: usize) -> Cluster {
        Self::create(masters, 0, 5000)
    }

    /// Starts `masters` masters with `replicas` replicas each and a 1 s
    /// `cluster-node-timeout` (a killed master fails over in about 2-3 s), waits until
    /// every replica is in sync.
    pub fn start_with_replicas(masters: usize, replicas: usize) -> Cluster {
        let c = Self::create(masters, replicas, 1000);
        c.wait_replicas_synced();
        c
    }

    fn create(masters: usize, replicas: usize, node_timeout_ms: u32) -> Cluster {
        let dir = temp_dir("cluster");
        let mut c = Cluster {
            ports: Vec::new(),
            children: Vec::new(),
            dead: Vec::new(),
            dir,
            node_timeout_ms,
        };
        for _ in 0..masters * (1 + replicas) {
            c.spawn_node();
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for p in &c.ports {
            create.arg(format!("127.0.0.1:{p}"));
        }
        let out = create
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
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
        let (port, child) = spawn_fresh(&self.dir, self.node_options());
        self.ports.push(port);
        self.children.push(child);
        self.dead.push(false);
        port
    }

    fn node_options(&self) -> NodeOptions {
        NodeOptions {
            cluster_node_timeout_ms: Some(self.node_timeout_ms),
            persist: false,
        }
    }

    /// Ports of the nodes not killed.
    pub fn alive(&self) -> Vec<u16> {
        self.ports
            .iter()
            .zip(&self.dead)
            .filter(|(_, d)| !**d)
            .map(|(p, _)| *p)
            .collect()
    }

    /// Starts a killed node again on its port with its `nodes.conf` (it rejoins; its data
    /// is gone: nothing is persisted, so a former master comes back empty and becomes a
    /// replica of the master that replaced it, or, if its slots have no other owner,
    /// serves them empty).
    pub fn restart(&mut self, port: u16) {
        let i = self.index(port);
        let _ = self.children[i].kill();
        let _ = self.children[i].wait();
        self.children[i] = spawn_with(&self.dir, port, self.node_options());
        self.dead[i] = false;
    }

    fn index(&self, port: u16) -> usize {
        self.ports
            .iter()
            .position(|&p| p == port)
            .expect("our node")
    }

    /// `(master port, replica ports)` of every master, as the live nodes see them.
    pub fn masters(&self) -> Vec<(u16, Vec<u16>)> {
        let port = self.alive()[0];
        let nodes: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut connect(port))
            .expect("CLUSTER NODES");
        let mut ids = std::collections::HashMap::new();
        let mut rows = Vec::new();
        for line in nodes.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() < 8 {
                continue;
            }
            let p: u16 = f[1]
                .split(['@', ','])
                .next()
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            ids.insert(f[0].to_string(), p);
            rows.push((p, f[2].to_string(), f[3].to_string()));
        }
        let mut out: Vec<(u16, Vec<u16>)> = rows
            .iter()
            .filter(|(_, flags, _)| flags.contains("master") && !flags.contains("fail"))
            .map(|(p, _, _)| (*p, Vec::new()))
            .collect();
        for (p, flags, master) in &rows {
            if flags.contains("slave") && !flags.contains("fail") {
                if let Some(mp) = ids.get(master) {
                    if let Some(e) = out.iter_mut().find(|(m, _)| m == mp) {
                        e.1.push(*p);
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// The port of the master serving `slot`, as node `ask` says.
    pub fn owner_of(&self, slot: u16) -> u16 {
        let port = self.alive()[0];
        let v: redis::Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut connect(port))
            .expect("CLUSTER SLOTS");
        let redis::Value::Array(ranges) = v else {
            panic!("CLUSTER SLOTS: {v:?}")
        };
        for r in ranges {
            let redis::Value::Array(f) = r else { continue };
            let (Some(redis::Value::Int(lo)), Some(redis::Value::Int(hi))) = (f.first(), f.get(1))
            else {
                continue;
            };
            if (*lo..=*hi).contains(&i64::from(slot)) {
                if let Some(redis::Value::Array(m)) = f.get(2) {
                    if let Some(redis::Value::Int(p)) = m.get(1) {
                        return *p as u16;
                    }
                }
            }
        }
        panic!("slot {slot} has no owner")
    }

    /// Waits until every replica reports `master_link_status:up`.
    pub fn wait_replicas_synced(&self) {
        let start = Instant::now();
        loop {
            let synced = self.alive().iter().all(|&p| {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut connect(p))
                    .unwrap_or_default();
                info.contains("role:master") || info.contains("master_link_status:up")
            });
            if synced {
                return;
            }
            assert!(
                start.elapsed() < STARTUP_TIMEOUT,
                "replicas did not sync with their masters"
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits until a node other than `old` serves `slot` and every live node says
    /// `cluster_state:ok`; how long it took.
    pub fn wait_failover(&self, slot: u16, old: u16) -> Duration {
        let start = Instant::now();
        loop {
            let ok = self.alive().iter().all(|&p| {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut connect(p))
                    .unwrap_or_default();
                info.contains("cluster_state:ok")
            });
            if ok && self.owner_of(slot) != old {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < STARTUP_TIMEOUT,
                "no failover of slot {slot} away from {old}"
            );
            sleep(Duration::from_millis(20));
        }
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
            let ok = self.alive().iter().all(|&p| {
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
        for p in self.alive() {
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
        let i = self.index(port);
        let _ = self.children[i].kill();
        let _ = self.children[i].wait();
        self.dead[i] = true;
    }

    /// The process id of the node on `port`.
    pub fn pid(&self, port: u16) -> u32 {
        self.children[self.index(port)].id()
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
    persist: bool,
}

impl Nodes {
    /// Starts `n` standalone nodes.
    pub fn start(n: usize) -> Nodes {
        Self::start_with(n, false)
    }

    /// Starts `n` standalone nodes with `appendonly yes` and `appendfsync always`: a node
    /// killed with SIGKILL and [`restart`](Self::restart)ed keeps every acknowledged write.
    pub fn start_persistent(n: usize) -> Nodes {
        Self::start_with(n, true)
    }

    fn start_with(n: usize, persist: bool) -> Nodes {
        let mut nodes = Nodes {
            ports: Vec::new(),
            children: Vec::new(),
            dir: temp_dir("nodes"),
            persist,
        };
        for _ in 0..n {
            nodes.spawn();
        }
        nodes
    }

    /// Starts one more node; its port.
    pub fn spawn(&mut self) -> u16 {
        let (port, child) = spawn_fresh(&self.dir, self.options());
        self.ports.push(port);
        self.children.push(child);
        port
    }

    fn options(&self) -> NodeOptions {
        NodeOptions {
            cluster_node_timeout_ms: None,
            persist: self.persist,
        }
    }

    /// SIGKILLs node `i` and reaps it.
    pub fn kill(&mut self, i: usize) {
        let _ = self.children[i].kill();
        let _ = self.children[i].wait();
    }

    /// Starts node `i` again on its port (with its AOF when persistent).
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.children[i] = spawn_with(&self.dir, self.ports[i], self.options());
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

//! A standalone `redis-server` for tests: started on a free 127.0.0.1 port with a private
//! temporary directory and no persistence (`--save '' --appendonly no`), ready once PING
//! answers; killed and waited for on drop. [`Server::restart`] brings it back on the same
//! port (empty: nothing is persisted), for fault tests.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer PING after it is started.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// A running `redis-server` (Debian's `redis-server` package; `make test` installs it).
#[derive(Debug)]
pub struct Server {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// A port nobody listens on right now (bound then released: the server may still lose a
/// race for it, and [`Server::start`] then tries another).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("binding 127.0.0.1:0 for a free port")
}

impl Server {
    /// Starts a server on a free port. Panics (with the log) if none can be started.
    pub fn start() -> Server {
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "keyroute-redis-{}-{port}-{serial}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).expect("creating the server's temporary directory");
            let mut server = Server {
                port,
                dir,
                child: None,
            };
            match server.spawn() {
                Ok(()) => return server,
                Err(err) => last = err,
            }
        }
        panic!("could not start redis-server: {last}");
    }

    fn spawn(&mut self) -> Result<(), String> {
        let log = self.dir.join("redis.log");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| {
                format!("spawning redis-server ({err}); install it: scripts/apt-install.sh redis-server redis-tools")
            })?;
        self.child = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if self.ping() {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|child| child.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                self.stop();
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!("port {}: {exited:?}\n{text}", self.port));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn ping(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut con).is_ok()
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Makes this server a replica of `master` (`REPLICAOF 127.0.0.1 <port>`) and waits
    /// (at most 10 s) for `master_link_status:up`.
    pub fn replicate(&self, master: &Server) {
        let mut con = self.connection();
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(master.port())
            .query(&mut con)
            .expect("REPLICAOF");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut con)
                .expect("INFO replication");
            if info.contains("master_link_status:up") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replica never linked: {info}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// A new connection with 5 s timeouts.
    pub fn connection(&self) -> redis::Connection {
        let client = redis::Client::open(self.url()).expect("a valid URL");
        let con = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .expect("connecting to the test server");
        con.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("read timeout");
        con.set_write_timeout(Some(Duration::from_secs(5)))
            .expect("write timeout");
        con
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGKILL, then wait for the process: clients see their connections reset.
    pub fn kill(&mut self) {
        self.resume();
        self.stop();
    }

    /// Starts it again on the same port (with an empty dataset). Panics if it cannot.
    pub fn restart(&mut self) {
        self.kill();
        let mut last = String::new();
        for _ in 0..20 {
            match self.spawn() {
                Ok(()) => return,
                Err(err) => last = err,
            }
            thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "could not restart redis-server on port {}: {last}",
            self.port
        );
    }

    fn signal(&self, signal: &str) {
        if let Some(pid) = self.pid() {
            let status = Command::new("kill")
                .args([signal, &pid.to_string()])
                .status()
                .expect("running kill");
            assert!(status.success(), "kill {signal} {pid}");
        }
    }

    /// SIGSTOP: the server keeps its connections open but answers nothing (a hang).
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`pause`](Self::pause).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    /// `INFO commandstats` as (command, calls), e.g. ("evalsha", 1).
    pub fn command_calls(&self) -> Vec<(String, u64)> {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connection())
            .expect("INFO commandstats");
        info.lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("cmdstat_")?;
                let (name, stats) = rest.split_once(':')?;
                let calls = stats.split(',').find_map(|kv| kv.strip_prefix("calls="))?;
                Some((name.to_string(), calls.parse().ok()?))
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
